/*
 * port_ce.c - the port engine's copy-engine transport for windows in GPU
 * memory on one node: the proxy turns descriptors into cudaMemcpyAsync on
 * its own stream between IPC-mapped buffers. A signal is a one-thread kernel
 * queued on the same stream, so it lands after the data it follows. A batch
 * is published as done by a store queued behind its copies (the driver's
 * stream write where it can; the FIFO is in mapped host memory): the
 * proxy does not wait for the stream, so it queues the next batch while
 * this one is copied, and a flush sees done without the proxy polling the
 * stream for it. Batches with host counters, quiet or fence still
 * synchronize the stream (port_proxy.c). A subarray is one 2-D or 3-D
 * copy.
 *
 * The proxy thread that starts it is pinned to the CPUs nearest its GPU.
 * Every CUDA call goes through src/gpu/gpu.h. Built only with CUDA (no GPU
 * window exists without it): its port_xports.c line comes with this file.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h" /* HAVE_CUDA: gpu.h's kernel launchers */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "port.h"

/* Pins the calling (proxy) thread to the CPUs nearest the GPU, as the
 * kernel lists them for its PCI device; quietly does nothing when unknown. */
static void pin_near_gpu(int device)
{
    char bus[32], path[128], list[1024];
    if (gpurma_gpu_pci_bus_id(device, bus, sizeof(bus)))
        return;
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

/* The state is the proxy's own stream; none on the host backend. */
static int ce_start(gpurma_port_t *port, void **state)
{
    if (port->ctx->device < 0)
        return GPURMA_SUCCESS;
    pin_near_gpu(port->ctx->device);
    void *stream = NULL;
    int rc = gpurma_gpu_stream_create(port->ctx->device, &stream);
    if (!rc)
        __atomic_store_n(state, stream, __ATOMIC_RELEASE);
    return rc;
}

/* The stream's stores into the FIFOs land before those are freed. */
static void ce_stop(gpurma_port_t *port, void *stream)
{
    (void)port;
    gpurma_gpu_stream_sync(stream);
    gpurma_gpu_stream_destroy(stream);
}

static int ce_complete(gpurma_port_t *port, void *stream)
{
    (void)port;
    return gpurma_gpu_stream_sync(stream);
}

static int ce_complete_async(gpurma_port_t *port, void *stream, uint64_t *done, uint64_t value)
{
    (void)port;
    return gpurma_gpu_stream_store_u64(stream, done, value);
}

static int ce_count(gpurma_port_t *port, void *stream, uint64_t *counter)
{
    (void)port;
    return gpurma_gpu_launch_add_u64(stream, counter, 1);
}

static int ce_reach(const struct gpurma_win_s *w, int peer)
{
    return w->gpu && w->peers[peer].path == GPURMA_DEV_PATH_LOADSTORE;
}

/* A subarray: one 2-D or 3-D copy on the stream (gpu.h). */
static int copy_shape(void *stream, const gpurma_port_decoded_t *op, int is_put)
{
    const size_t remote_pitch[2] = {op->remote_pitch[0], op->remote_pitch[1]};
    const size_t local_pitch[2] = {op->local_pitch[0], op->local_pitch[1]};
    if (is_put)
        return gpurma_gpu_stream_copy_3d(stream, op->mapped, remote_pitch, op->src, local_pitch,
                                         op->size, op->rows, op->planes);
    return gpurma_gpu_stream_copy_3d(stream, op->dst, local_pitch, op->mapped, remote_pitch,
                                     op->size, op->rows, op->planes);
}

static int ce_exec(gpurma_port_t *port, void *stream, void *wstate,
                   const gpurma_port_decoded_t *op)
{
    (void)wstate;
    if (!stream)
        return gpurma_set_error(GPURMA_ERR_GPU, "rank %d: the copy engine has no stream",
                                port->ctx->rank);
    struct gpurma_win_s *w = op->win;
    const gpurma_dev_peer_t *p = &w->peers[op->peer];
    int shaped = gpurma_port_decoded_shaped(op);
    int rc = GPURMA_SUCCESS;
    switch (op->op) {
    case GPURMA_PORT_OP_PUT:
        /* LL packets: a kernel packs and stores them whole (a copy engine
         * promises no store width). */
        if (op->packet_size)
            return gpurma_gpu_launch_packets(stream, (uint64_t *)op->mapped, op->src, op->size,
                                             op->packet_flag, op->packet_size);
        return shaped ? copy_shape(stream, op, 1)
                      : gpurma_gpu_stream_copy_peer(stream, op->mapped, op->src, op->size);
    case GPURMA_PORT_OP_PUT_SIGNAL:
        rc = shaped ? copy_shape(stream, op, 1)
                    : gpurma_gpu_stream_copy_peer(stream, op->mapped, op->src, op->size);
        __attribute__((fallthrough)); /* queued behind every row */
    case GPURMA_PORT_OP_SIGNAL:
        return rc ? rc
                  : gpurma_gpu_stream_signal(stream, &p->signals[op->signal], (uint32_t)w->rank,
                                             op->signal_op, op->value);
    case GPURMA_PORT_OP_GET:
        return shaped ? copy_shape(stream, op, 0)
                      : gpurma_gpu_stream_copy_peer(stream, op->dst, op->mapped, op->size);
    case GPURMA_PORT_OP_PUT_VALUE:
        /* The value is in the proxy's batch (pageable): the copy reads it
         * before the call returns. */
        return gpurma_gpu_stream_copy_peer(stream, op->mapped, &op->value, op->size);
    case GPURMA_PORT_OP_FETCH_ADD:
    case GPURMA_PORT_OP_SWAP:
    case GPURMA_PORT_OP_CAS:
        /* A one-thread kernel on the stream, after the copies queued before
         * it; it writes the old value into the FIFO's (mapped) result slot. */
        return gpurma_gpu_launch_atomic(stream, (uint64_t *)op->mapped,
                                        op->op - GPURMA_PORT_OP_FETCH_ADD, op->value, op->compare,
                                        op->result);
    }
    return GPURMA_ERR_INTERNAL;
}

const gpurma_port_xport_t gpurma_port_xport_ce = {
    .name     = "copy engine",
    .reach    = ce_reach,
    .start    = ce_start,
    .stop     = ce_stop,
    .exec     = ce_exec,
    .count    = ce_count,
    .complete = ce_complete,
    .complete_async = ce_complete_async,
};
