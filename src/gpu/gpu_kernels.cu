/*
 * gpu_kernels.cu - the kernels behind host-initiated operations on device
 * windows: a signal slot update and a 64-bit atomic, each one thread, and
 * those of the stream-ordered operations (put_signal, put_value, wait,
 * barrier, fence). They use the device API (or the same code), so host and
 * device operations agree on memory order and atomicity.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cstdio>


#include "gpurma_device.h"
#include "gpu_runtime.h"
extern "C" { /* the core's headers are C */
#include "gpu.h"
#include "gpurma_internal.h"
}
#include "gpu_launch.h"

__global__ void gpurma_k_signal(gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                                uint64_t value)
{
    /* The data this signal announces was copied by an earlier, completed
     * operation of the same stream; the fence orders it for every observer. */
    gpurma_sh_fence_system();
    gpurma_dev__signal_slot(slot, origin, (gpurma_signal_op_t)op, value);
}

__global__ void gpurma_k_atomic(uint64_t *p, int kind, uint64_t value, uint64_t compare,
                                uint64_t *old_out)
{
    *(volatile uint64_t *)old_out = gpurma_dev__atomic_at(p, kind, value, compare);
    gpurma_sh_fence_system();
}

/* ------------------------------------------- stream-ordered operations */

/* A stream-ordered wait that times out: leaves its reason where the host
 * reads it (gpu.c appends it to the CUDA error that follows), says it
 * on the device's printf channel, and stops the kernel. Returning would let
 * the stream run on as if the data had arrived. */
__device__ void gpurma_k_timeout(gpurma_gpu_fault_t *f, int kind, int rank, int peer,
                                 uint32_t sig, int cmp, uint64_t value, uint64_t observed,
                                 uint64_t timeout_ns)
{
    /* Plain stores: the record is host memory, where atomics need PCIe
     * atomics. Two faults at once may mix their fields; either explains. */
    volatile gpurma_gpu_fault_t *vf = f;
    if (vf && !vf->set) {
        vf->kind = kind;
        vf->rank = rank;
        vf->peer = peer;
        vf->sig = sig;
        vf->cmp = cmp;
        vf->value = value;
        vf->observed = observed;
        vf->timeout_ns = timeout_ns;
        gpurma_sh_fence_system();
        vf->set = 1;
        gpurma_sh_fence_system();
    }
    if (kind == GPURMA_GPU_FAULT_BARRIER)
        printf("gpurma: team rank %d: barrier_on_stream timed out waiting for team rank %d "
               "(round %u); stopping the kernel\n",
               rank, peer, sig);
    else
        printf("gpurma: team rank %d: wait_until_on_stream(signal %u, cmp %d, %llu) timed out "
               "(value %llu); stopping the kernel\n",
               rank, sig, cmp, (unsigned long long)value, (unsigned long long)observed);
    __trap();
}

/* put_signal in one launch into the peer's mapping (stream operations go
 * straight to mapped memory, whatever engine serves the window's other
 * calls): the block copies, then one thread fences and signals. */
__global__ void gpurma_k_put_signal(char *dst, const void *src, size_t n,
                                    gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                                    uint64_t value)
{
    gpurma_sh_copy(dst, src, n, gpurma_sh_block_tid(), gpurma_sh_block_threads());
    gpurma_sh_sync_block();
    if (gpurma_sh_block_tid() == 0) {
        gpurma_sh_fence_release_system();
        gpurma_dev__signal_slot(slot, origin, (gpurma_signal_op_t)op, value);
    }
}

/* height rows of width bytes between pitched buffers, in the widest words
 * that the addresses, pitches and width allow: one word per thread and
 * round over the whole grid, so that a column's rows are in flight
 * together rather than one after another. */
__global__ void gpurma_k_copy_2d(char *dst, size_t dpitch, const char *src, size_t spitch,
                                 size_t width, size_t height, unsigned word)
{
    const size_t per_row = width / word, total = per_row * height;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        const size_t row = i / per_row, at = (i - row * per_row) * word;
        char *d = dst + row * dpitch + at;
        const char *s = src + row * spitch + at;
        switch (word) {
        case 16: *(uint4 *)d = *(const uint4 *)s; break;
        case 8: *(uint64_t *)d = *(const uint64_t *)s; break;
        case 4: *(uint32_t *)d = *(const uint32_t *)s; break;
        case 2: *(uint16_t *)d = *(const uint16_t *)s; break;
        default: *d = *s; break;
        }
    }
}

__global__ void gpurma_k_put_value(char *dst, uint64_t value, size_t bytes)
{
    gpurma_dev__store_value(dst, value, bytes);
}

__global__ void gpurma_k_wait(gpurma_dev_win_t w, uint32_t sig, int cmp, uint64_t value,
                              gpurma_gpu_fault_t *fault)
{
    /* Acquire at system scope: the kernels after this one on the stream
     * start after it completes, and see what the signal announced. */
    if (gpurma_dev_wait_until(w, sig, (gpurma_cmp_t)cmp, value) == GPURMA_SUCCESS)
        return;
    gpurma_k_timeout(fault, GPURMA_GPU_FAULT_WAIT, w.rank, -1, sig, cmp, value,
                     gpurma_dev_signal_read(w, sig), w.timeout_ns);
}

__global__ void gpurma_k_store_u64(uint64_t *p, uint64_t value)
{
    gpurma_sh_store_release_u64(p, value);
}

__global__ void gpurma_k_fence(void) { gpurma_sh_fence_system(); }

__global__ void gpurma_k_add_u64(uint64_t *p, uint64_t value)
{
    gpurma_sh_red_add_release_u64(p, value);
}

__global__ void gpurma_k_packets(uint64_t *dst, const void *src, size_t bytes, uint32_t flag,
                                 int psize)
{
    gpurma_dev__store_packets(dst, src, bytes, flag, psize,
                              blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}

/* Dissemination barrier: in round k this rank adds 1 to slot k of rank
 * me + 2^k and waits until its own slot k has counted this barrier's
 * epoch. Slots only grow, so a member already in the next barrier cannot
 * confuse this one. The epoch is kept on the device (counter 0 of the
 * barrier window), so a replayed graph counts on by itself. */
__global__ void gpurma_k_barrier(gpurma_dev_win_t w, gpurma_gpu_fault_t *fault)
{
    int n = w.size, me = w.rank;
    /* The stream's earlier writes (kernels, copies) before our arrival. */
    gpurma_sh_fence_system();
    volatile uint64_t *epoch_p = (volatile uint64_t *)&w.counters[0];
    uint64_t epoch = *epoch_p + 1;
    *epoch_p = epoch;
    uint32_t round = 0;
    for (int d = 1; d < n; d <<= 1, round++) {
        (void)gpurma_dev_signal(w, (me + d) % n, round, GPURMA_SIGNAL_ADD, 1);
        if (gpurma_dev_wait_until(w, round, GPURMA_CMP_GE, epoch) != GPURMA_SUCCESS)
            gpurma_k_timeout(fault, GPURMA_GPU_FAULT_BARRIER, me, (me - d + n) % n, round,
                             GPURMA_CMP_GE, epoch, gpurma_dev_signal_read(w, round),
                             w.timeout_ns);
    }
}

extern "C" int gpurma_gpu_launch_failed(const char *what, int err)
{
    return gpurma_set_error(GPURMA_ERR_GPU, "%s: %s", what,
                            gpurma_gpu_rt_error_string((gpurma_gpu_error_t)err));
}

/* With lazy module loading (the CUDA default), the first launch of a kernel
 * loads it, and loading waits for the kernels running on the device: a
 * first host signal to a user kernel spinning in wait_until would wait for
 * that kernel, forever. Load ours when the GPU is selected instead. */
extern "C" int gpurma_gpu_preload_kernels(void)
{
    return gpurma_gpu_load("loading the library's kernels", gpurma_k_signal, gpurma_k_atomic,
                           gpurma_k_put_signal, gpurma_k_copy_2d, gpurma_k_put_value, gpurma_k_wait,
                           gpurma_k_store_u64, gpurma_k_fence, gpurma_k_add_u64, gpurma_k_packets,
                           gpurma_k_barrier);
}

extern "C" int gpurma_gpu_launch_signal(void *stream, gpurma_dev_signal_slot_t *slot,
                                        uint32_t origin, int op, uint64_t value)
{
    return gpurma_gpu_launch("signal kernel launch", gpurma_k_signal, 1, 1, stream, slot, origin, op, value);
}

extern "C" int gpurma_gpu_launch_atomic(void *stream, uint64_t *p, int kind, uint64_t value,
                                        uint64_t compare, uint64_t *old_out)
{
    uint64_t *dev_out = NULL;
    /* old_out is mapped pinned memory: the kernel writes it directly. */
    if (cudaHostGetDevicePointer((void **)&dev_out, old_out, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        dev_out = old_out; /* unified addressing: the host address works too */
    }
    return gpurma_gpu_launch("atomic kernel launch", gpurma_k_atomic, 1, 1, stream, p, kind, value, compare, dev_out);
}

extern "C" int gpurma_gpu_launch_put_signal(void *stream, char *dst, const void *src, size_t n,
                                            gpurma_dev_signal_slot_t *slot, uint32_t origin,
                                            int op, uint64_t value)
{
    /* One 16-byte move per thread and round, at most 512 threads: small
     * messages do not pay for a wide block. */
    size_t want = (n + 15) / 16;
    unsigned threads = want >= 512 ? 512 : (unsigned)((want + 31) / 32 * 32);
    if (threads < 32)
        threads = 32;
    return gpurma_gpu_launch("put_signal kernel launch", gpurma_k_put_signal, 1, threads, stream, dst, src, n, slot, origin, op, value);
}

extern "C" int gpurma_gpu_launch_copy_2d(void *stream, char *dst, size_t dpitch, const char *src,
                                         size_t spitch, size_t width, size_t height)
{
    const uintptr_t al = (uintptr_t)dst | (uintptr_t)src | dpitch | spitch | width;
    const unsigned word = !(al & 15) ? 16 : !(al & 7) ? 8 : !(al & 3) ? 4 : !(al & 1) ? 2 : 1;
    /* the caller's rows are narrow: width / word < 512 words a row */
    size_t words = width / word * height, blocks = (words + 255) / 256;
    if (blocks > 1024)
        blocks = 1024;
    return gpurma_gpu_launch("2-D copy kernel launch", gpurma_k_copy_2d, (unsigned)blocks, 256,
                             stream, dst, dpitch, src, spitch, width, height, word);
}

extern "C" int gpurma_gpu_launch_put_value(void *stream, char *dst, uint64_t value, size_t bytes)
{
    return gpurma_gpu_launch("put_value kernel launch", gpurma_k_put_value, 1, 1, stream, dst, value, bytes);
}

extern "C" int gpurma_gpu_launch_wait(void *stream, const gpurma_dev_win_t *w, uint32_t sig,
                                      int cmp, uint64_t value, gpurma_gpu_fault_t *fault)
{
    return gpurma_gpu_launch("wait_until kernel launch", gpurma_k_wait, 1, 1, stream, *w, sig, cmp, value, fault);
}

extern "C" int gpurma_gpu_launch_store_u64(void *stream, uint64_t *p, uint64_t value)
{
    return gpurma_gpu_launch("store kernel launch", gpurma_k_store_u64, 1, 1, stream, p, value);
}

extern "C" int gpurma_gpu_launch_fence(void *stream)
{
    return gpurma_gpu_launch("fence kernel launch", gpurma_k_fence, 1, 1, stream);
}

extern "C" int gpurma_gpu_launch_add_u64(void *stream, uint64_t *p, uint64_t value)
{
    return gpurma_gpu_launch("counter kernel launch", gpurma_k_add_u64, 1, 1, stream, p, value);
}

extern "C" int gpurma_gpu_launch_packets(void *stream, uint64_t *dst, const void *src,
                                         size_t bytes, uint32_t flag, int psize)
{
    size_t npk = gpurma_dev__packet_bytes(bytes, psize) / (size_t)psize;
    unsigned blocks = npk > 256 * 256 ? 256 : (unsigned)((npk + 255) / 256);
    return gpurma_gpu_launch("LL packets kernel launch", gpurma_k_packets, blocks ? blocks : 1, 256, stream, dst, src, bytes, flag, psize);
}

extern "C" int gpurma_gpu_launch_barrier(void *stream, const gpurma_dev_win_t *w,
                                         gpurma_gpu_fault_t *fault)
{
    return gpurma_gpu_launch("barrier kernel launch", gpurma_k_barrier, 1, 1, stream, *w, fault);
}
