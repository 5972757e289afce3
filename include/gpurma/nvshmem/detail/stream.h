/*
 * stream.h - host calls ordered on a CUDA stream, and collective launch
 * (CUDA builds only). Data movement and barriers go through the library
 * (gpurma's stream-ordered calls); signals and waits on arbitrary symmetric
 * words are one-thread kernels of this unit, launched here with the
 * program's own CUDA runtime.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_STREAM_H
#define GPURMA_NVSHMEM_DETAIL_STREAM_H

#include "gpurma/nvshmem/detail/sync.h"

#if GPURMA_NVSHMEMI_STREAMS
static inline void gpurma_nvshmemi__launched(const char *call)
{
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_GPU, cudaGetErrorString(err));
}

#endif

#if GPURMA_NVSHMEMI_CUDA

static __global__ void gpurma_nvshmemi_signal_kernel(uint64_t *sig_addr, uint64_t signal,
                                                     int sig_op, int pe)
{
    gpurma_nvshmemi__signal("nvshmemx_signal_op_on_stream", sig_addr, signal, sig_op, pe);
}
static __global__ void gpurma_nvshmemi_wait_kernel(uint64_t *sig_addr, int cmp, uint64_t value)
{
    nvshmem_signal_wait_until(sig_addr, cmp, value);
}

static inline void nvshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op,
                                                int pe, cudaStream_t stream)
{
    gpurma_nvshmemi_signal_kernel<<<1, 1, 0, stream>>>(sig_addr, signal, sig_op, pe);
    gpurma_nvshmemi__launched("nvshmemx_signal_op_on_stream");
}
static inline void nvshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp,
                                                        uint64_t cmp_value, cudaStream_t stream)
{
    gpurma_nvshmemi_wait_kernel<<<1, 1, 0, stream>>>(sig_addr, cmp, cmp_value);
    gpurma_nvshmemi__launched("nvshmemx_signal_wait_until_on_stream");
}

/* put_signal on a stream in one launch: a block copies (to a mapped PE,
 * stores; else the port engine's put, complete before the signal) and one
 * thread's release store or add signals. For sources a kernel reads (this
 * GPU's memory, managed memory) up to 256 KiB; larger ones go to the copy
 * engine through the library, then the signal kernel, which keeps SMs free
 * and matches their bandwidth. */
#define GPURMA_NVSHMEMI_STREAM_FUSED_MAX ((size_t)256 << 10)
static __global__ void gpurma_nvshmemi_put_signal_kernel(void *dest, const void *source,
                                                         size_t bytes, uint64_t *sig_addr,
                                                         uint64_t signal, int sig_op, int pe)
{
    gpurma_nvshmemi__put_signal_group("nvshmemx_putmem_signal_on_stream (or a typed form)", dest,
                                      source, bytes, sig_addr, signal, sig_op, pe, 0,
                                      GPURMA_NVSHMEMI_BLOCK);
}
/* Whether a kernel on the current GPU can read src directly. The query is
 * made in relaxed capture mode: under a global-mode capture (a program
 * capturing this call into a graph) it would otherwise invalidate the
 * capture. */
static inline int gpurma_nvshmemi__kernel_reads(const void *src)
{
    struct cudaPointerAttributes a;
    int dev = -1;
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    int swapped = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
    cudaError_t e = cudaPointerGetAttributes(&a, src);
    if (e == cudaSuccess)
        e = cudaGetDevice(&dev);
    if (swapped)
        (void)cudaThreadExchangeStreamCaptureMode(&mode);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* a pageable pointer's answer is not the program's error */
        return 0;
    }
    return a.type == cudaMemoryTypeManaged || (a.type == cudaMemoryTypeDevice && a.device == dev);
}
static inline void gpurma_nvshmemi__put_signal_on_stream(const char *call, void *dest,
                                                         const void *source, size_t bytes,
                                                         uint64_t *sig_addr, uint64_t signal,
                                                         int sig_op, int pe, cudaStream_t stream)
{
    if (bytes <= GPURMA_NVSHMEMI_STREAM_FUSED_MAX &&
        (!bytes || gpurma_nvshmemi__kernel_reads(source))) {
        gpurma_nvshmemi_put_signal_kernel<<<1, bytes > 4096 ? 512 : 128, 0, stream>>>(
            dest, source, bytes, sig_addr, signal, sig_op, pe);
        gpurma_nvshmemi__launched(call);
        return;
    }
    gpurma_nvshmemi_put_on_stream(call, dest, source, bytes, pe, (void *)stream);
    nvshmemx_signal_op_on_stream(sig_addr, signal, sig_op, pe, stream);
}

#define GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM(XPUT, TYPE, ESIZE)                                \
    static inline void XPUT##_signal_on_stream(TYPE *dest, const TYPE *source, size_t nelems, \
                                               uint64_t *sig_addr, uint64_t signal,         \
                                               int sig_op, int pe, cudaStream_t stream)     \
    {                                                                                       \
        gpurma_nvshmemi__put_signal_on_stream(#XPUT "_signal_on_stream", dest, source,      \
                                              gpurma_nvshmemi__bytes(#XPUT, nelems, ESIZE), \
                                              sig_addr, signal, sig_op, pe, stream);        \
    }                                                                                       \
    static inline void XPUT##_signal_nbi_on_stream(TYPE *dest, const TYPE *source,          \
                                                   size_t nelems, uint64_t *sig_addr,       \
                                                   uint64_t signal, int sig_op, int pe,     \
                                                   cudaStream_t stream)                     \
    {                                                                                       \
        XPUT##_signal_on_stream(dest, source, nelems, sig_addr, signal, sig_op, pe, stream); \
    }
#define GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM_TYPED(NAME, TYPE)                                 \
    GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM(nvshmemx_##NAME##_put, TYPE, sizeof(TYPE))
#define GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM_SIZED(BITS, TYPE)                                 \
    GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM(nvshmemx_put##BITS, void, BITS / 8)
GPURMA_NVSHMEMI_RMA_TYPES(GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM_TYPED)
GPURMA_NVSHMEMI_SIZED_TYPES(GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM_SIZED)
GPURMA_NVSHMEMI_PUT_SIGNAL_STREAM(nvshmemx_putmem, void, 1)

#endif /* GPURMA_NVSHMEMI_CUDA */

#if GPURMA_NVSHMEMI_STREAMS
/* Through the library only: these need no kernel of this unit. */
static inline void nvshmemx_quiet_on_stream(cudaStream_t stream)
{
    gpurma_nvshmemi_quiet_on_stream("nvshmemx_quiet_on_stream", (void *)stream);
}
static inline void nvshmemx_barrier_all_on_stream(cudaStream_t stream)
{
    gpurma_nvshmemi_quiet_on_stream("nvshmemx_barrier_all_on_stream", (void *)stream);
    gpurma_nvshmemi_barrier_on_stream("nvshmemx_barrier_all_on_stream", NVSHMEM_TEAM_WORLD,
                                      (void *)stream);
}
static inline void nvshmemx_sync_all_on_stream(cudaStream_t stream)
{
    gpurma_nvshmemi_barrier_on_stream("nvshmemx_sync_all_on_stream", NVSHMEM_TEAM_WORLD,
                                      (void *)stream);
}
static inline int nvshmemx_barrier_on_stream(nvshmem_team_t team, cudaStream_t stream)
{
    gpurma_nvshmemi_quiet_on_stream("nvshmemx_barrier_on_stream", (void *)stream);
    gpurma_nvshmemi_barrier_on_stream("nvshmemx_barrier_on_stream", team, (void *)stream);
    return 0;
}
static inline int nvshmemx_team_sync_on_stream(nvshmem_team_t team, cudaStream_t stream)
{
    gpurma_nvshmemi_barrier_on_stream("nvshmemx_team_sync_on_stream", team, (void *)stream);
    return 0;
}
static inline int nvshmemx_sync_on_stream(nvshmem_team_t team, cudaStream_t stream)
{
    return nvshmemx_team_sync_on_stream(team, stream);
}

/* ----------------------------------------------------- collective launch */

/* Every block of a kernel that synchronizes across blocks (device barriers
 * spanning the grid) must be resident at once: a cooperative launch. */
static inline int nvshmemx_collective_launch(const void *func, dim3 grid, dim3 block, void **args,
                                             size_t shared_mem, cudaStream_t stream)
{
    if (nvshmemx_init_status() < NVSHMEM_STATUS_IS_INITIALIZED)
        return NVSHMEMX_ERROR_INTERNAL;
    cudaError_t err = cudaLaunchCooperativeKernel(func, grid, block, args, shared_mem, stream);
    return err == cudaSuccess ? NVSHMEMX_SUCCESS : NVSHMEMX_ERROR_INTERNAL;
}

/* The largest grid a collective launch of func with these block dimensions
 * can use on the current device. */
static inline int nvshmemx_collective_launch_query_gridsize(const void *func, dim3 block,
                                                            void **args, size_t shared_mem,
                                                            int *gridsize)
{
    (void)args;
    int dev = 0, sms = 0, per_sm = 0;
    if (!gridsize || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func,
                                                      (int)(block.x * block.y * block.z),
                                                      shared_mem) != cudaSuccess)
        return NVSHMEMX_ERROR_INTERNAL;
    *gridsize = sms * per_sm;
    return NVSHMEMX_SUCCESS;
}

#endif /* GPURMA_NVSHMEMI_STREAMS */
#endif
