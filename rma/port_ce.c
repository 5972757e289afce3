/*
 * port_ce.c - the port engine's copy-engine transport for windows in GPU
 * memory on one node: the proxy turns descriptors into cudaMemcpyAsync on
 * its own stream between IPC-mapped buffers. A signal is a one-thread kernel
 * queued on the same stream, so it lands after the data it follows; the
 * proxy synchronizes the stream before it publishes a batch as done.
 *
 * Also the FIFO's memory: when GPUs push descriptors it must be pinned host
 * memory mapped into their address space.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "port.h"

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

static int cuda_error(cudaError_t e, const char *what)
{
    return gpurma_set_error(GPURMA_ERR_GPU, "port copy engine: %s: %s", what,
                            cudaGetErrorString(e));
}

void *gpurma_port_ce_alloc(struct gpurma_ctx_s *ctx, size_t len)
{
    void *p = NULL;
    if (ctx->device < 0)
        return posix_memalign(&p, 64, len) ? NULL : p;
    if (cudaHostAlloc(&p, len, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess)
        return NULL;
    return p;
}

void gpurma_port_ce_free(struct gpurma_ctx_s *ctx, void *p)
{
    if (!p)
        return;
    if (ctx->device < 0)
        free(p);
    else
        cudaFreeHost(p);
}

uint64_t *gpurma_port_ce_alloc_counter(void)
{
    uint64_t *p = NULL;
    if (cudaMalloc((void **)&p, sizeof(*p)) != cudaSuccess)
        return NULL;
    if (cudaMemset(p, 0, sizeof(*p)) != cudaSuccess) {
        cudaFree(p);
        return NULL;
    }
    return p;
}

void gpurma_port_ce_free_counter(uint64_t *p) { cudaFree(p); }

/* Pins the calling (proxy) thread to the CPUs nearest the GPU, as the
 * kernel lists them for its PCI device; quietly does nothing when unknown. */
static void pin_near_gpu(int device)
{
    char bus[32], path[128], list[1024];
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess)
        return;
    for (char *c = bus; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", bus);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(list, 1, sizeof(list) - 1, f);
    fclose(f);
    list[n] = '\0';
    cpu_set_t set;
    CPU_ZERO(&set);
    for (char *tok = strtok(list, ",\n"); tok; tok = strtok(NULL, ",\n")) {
        int lo, hi;
        int k = sscanf(tok, "%d-%d", &lo, &hi);
        if (k == 1)
            hi = lo;
        for (int cpu = lo; k >= 1 && cpu <= hi && cpu < CPU_SETSIZE; cpu++)
            CPU_SET(cpu, &set);
    }
    if (CPU_COUNT(&set) && !pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
        GPURMA_INFO(GPURMA_SUB_PORT, "port proxy pinned to the %d CPUs near GPU %d (%s)",
                    CPU_COUNT(&set), device, bus);
}

int gpurma_port_ce_start(gpurma_port_t *port)
{
    if (port->ctx->device < 0)
        return GPURMA_SUCCESS;
    pin_near_gpu(port->ctx->device);
    cudaError_t e = cudaSetDevice(port->ctx->device);
    if (e == cudaSuccess && !port->ce_stream) {
        cudaStream_t s;
        e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            port->ce_stream = s;
    }
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "stream");
}

void gpurma_port_ce_stop(gpurma_port_t *port)
{
    if (port->ce_stream)
        cudaStreamDestroy((cudaStream_t)port->ce_stream);
    port->ce_stream = NULL;
}

int gpurma_port_ce_sync(gpurma_port_t *port)
{
    if (!port->ce_stream)
        return GPURMA_SUCCESS;
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)port->ce_stream);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "stream synchronize");
}

/* GPU memory of which device, or -1 for host memory. */
static int device_of(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return a.type == cudaMemoryTypeDevice ? a.device : -1;
}

/* Between two GPUs the copy is a peer copy, which takes the copy engines'
 * direct path; anything else lets CUDA choose. */
static int copy(gpurma_port_t *port, void *dst, const void *src, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    cudaStream_t s = (cudaStream_t)port->ce_stream;
    int ddev = device_of(dst), sdev = device_of(src);
    cudaError_t e = ddev >= 0 && sdev >= 0 && ddev != sdev
                        ? cudaMemcpyPeerAsync(dst, ddev, src, sdev, n, s)
                        : cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "copy");
}

int gpurma_port_ce_count(gpurma_port_t *port, uint64_t *counter)
{
    return gpurma_gpu_launch_add_u64(port->ce_stream, counter, 1);
}

int gpurma_port_ce_exec(gpurma_port_t *port, struct gpurma_win_s *w, const gpurma_port_desc_t *d,
                        uint64_t *result)
{
    const gpurma_dev_peer_t *p = &w->peers[d->peer];
    const void *src = (d->flags & GPURMA_PORT_F_SRC_RAW) ? (const void *)(uintptr_t)d->src
                                                         : (const char *)w->base + d->src;
    int rc = GPURMA_SUCCESS;
    switch (d->op) {
    case GPURMA_PORT_OP_PUT:
        /* LL packets: a kernel packs and stores them whole (a copy engine
         * promises no store width). */
        if (d->flags & GPURMA_PORT_F_PACKETS)
            return gpurma_gpu_launch_packets(port->ce_stream, (uint64_t *)(p->base + d->dst), src,
                                             d->size, (uint32_t)d->value,
                                             d->flags & GPURMA_PORT_F_PACKET16 ? 16 : 8);
        return copy(port, p->base + d->dst, src, d->size);
    case GPURMA_PORT_OP_PUT_SIGNAL:
        rc = copy(port, p->base + d->dst, src, d->size);
        __attribute__((fallthrough));
    case GPURMA_PORT_OP_SIGNAL:
        return rc ? rc
                  : gpurma_gpu_stream_signal(port->ce_stream, &p->signals[d->signal],
                                             (uint32_t)w->rank, d->signal_op, d->value);
    case GPURMA_PORT_OP_GET: {
        void *dst = (d->flags & GPURMA_PORT_F_SRC_RAW) ? (void *)(uintptr_t)d->dst
                                                       : (char *)w->base + d->dst;
        return copy(port, dst, p->base + d->src, d->size);
    }
    case GPURMA_PORT_OP_PUT_VALUE:
        /* The value is in the proxy's batch (pageable): the copy reads it
         * before cudaMemcpyAsync returns. */
        return copy(port, p->base + d->dst, &d->value, d->size);
    case GPURMA_PORT_OP_FETCH_ADD:
    case GPURMA_PORT_OP_SWAP:
    case GPURMA_PORT_OP_CAS:
        /* A one-thread kernel on the stream, after the copies queued before
         * it; it writes the old value into the FIFO's (mapped) result slot. */
        return gpurma_gpu_launch_atomic(port->ce_stream, (uint64_t *)(p->base + d->dst),
                                        d->op - GPURMA_PORT_OP_FETCH_ADD, d->value, d->compare,
                                        result);
    }
    return GPURMA_ERR_INTERNAL;
}

#else /* !HAVE_CUDA */

void *gpurma_port_ce_alloc(struct gpurma_ctx_s *ctx, size_t len)
{
    (void)ctx;
    void *p = NULL;
    return posix_memalign(&p, 64, len) ? NULL : p;
}
void gpurma_port_ce_free(struct gpurma_ctx_s *ctx, void *p) { (void)ctx, free(p); }
uint64_t *gpurma_port_ce_alloc_counter(void) { return NULL; }
void gpurma_port_ce_free_counter(uint64_t *p) { (void)p; }
int gpurma_port_ce_start(gpurma_port_t *port) { (void)port; return GPURMA_SUCCESS; }
void gpurma_port_ce_stop(gpurma_port_t *port) { (void)port; }
int gpurma_port_ce_sync(gpurma_port_t *port) { (void)port; return GPURMA_SUCCESS; }
int gpurma_port_ce_count(gpurma_port_t *port, uint64_t *counter)
{
    (void)port, (void)counter;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "copy engine: built without CUDA");
}
int gpurma_port_ce_exec(gpurma_port_t *port, struct gpurma_win_s *w, const gpurma_port_desc_t *d,
                        uint64_t *result)
{
    (void)port, (void)w, (void)d, (void)result;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "copy engine: built without CUDA");
}

#endif
