/*
 * gpu_launch.h - the one way the library's .cu files launch and load
 * kernels, so that a kernel file holds kernels and calls no runtime
 * function itself (the shim's runtime, CUDA or HIP, is chosen here once).
 * C++ (nvcc or hipcc) only.
 *
 *   return gpurma_gpu_launch("signal", gpurma_k_signal, 1, 1, stream, slot, op);
 *
 * gpurma_gpu_launch and gpurma_gpu_load report a gpurma status with the
 * runtime's reason (libgpurma's own files); the _raw forms return only
 * whether it worked, for the layers built on the public API (the NCCL
 * layer), which cannot reach libgpurma's internal error functions.
 */
#ifndef GPURMA_GPU_LAUNCH_H
#define GPURMA_GPU_LAUNCH_H

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
typedef hipStream_t gpurma_gpu_stream_t;
typedef hipError_t  gpurma_gpu_error_t;
typedef hipFuncAttributes gpurma_gpu_func_attr_t;
#define GPURMA_GPU_OK                     hipSuccess
#define gpurma_gpu_rt_last_error          hipGetLastError
#define gpurma_gpu_rt_func_attr(a, k)     hipFuncGetAttributes((a), (const void *)(k))
#define gpurma_gpu_rt_error_string        hipGetErrorString
#else
#include <cuda_runtime_api.h>
typedef cudaStream_t gpurma_gpu_stream_t;
typedef cudaError_t  gpurma_gpu_error_t;
typedef cudaFuncAttributes gpurma_gpu_func_attr_t;
#define GPURMA_GPU_OK                     cudaSuccess
#define gpurma_gpu_rt_last_error          cudaGetLastError
#define gpurma_gpu_rt_func_attr(a, k)     cudaFuncGetAttributes((a), (k))
#define gpurma_gpu_rt_error_string        cudaGetErrorString
#endif

/* Launches kernel<<<grid, block, smem, stream>>>(args...); 0 when the
 * launch was accepted, else the runtime's error code (which it then
 * clears). */
template <typename... P, typename... A>
static inline int gpurma_gpu_launch_smem_raw(void (*kernel)(P...), unsigned grid, unsigned block,
                                             size_t smem, void *stream, A... args)
{
    kernel<<<grid, block, smem, (gpurma_gpu_stream_t)stream>>>(args...);
    return (int)gpurma_gpu_rt_last_error();
}
template <typename... P, typename... A>
static inline int gpurma_gpu_launch_raw(void (*kernel)(P...), unsigned grid, unsigned block,
                                        void *stream, A... args)
{
    return gpurma_gpu_launch_smem_raw(kernel, grid, block, 0, stream, args...);
}

/* Loads the kernels into the current device now (lazy loading would load
 * a kernel at its first launch, which waits for the kernels running then);
 * 0 when all loaded, else the runtime's error code. */
static inline int gpurma_gpu_load_raw(void) { return 0; }
template <typename K, typename... More>
static inline int gpurma_gpu_load_raw(K kernel, More... more)
{
    gpurma_gpu_func_attr_t a;
    gpurma_gpu_error_t e = gpurma_gpu_rt_func_attr(&a, kernel);
    if (e != GPURMA_GPU_OK) {
        (void)gpurma_gpu_rt_last_error();
        return (int)e;
    }
    return gpurma_gpu_load_raw(more...);
}

#ifdef GPURMA_INTERNAL_H
/* GPURMA_ERR_GPU, with "<what>: <the runtime's text for err>" as the
 * thread's message (gpu_kernels.cu). */
extern "C" int gpurma_gpu_launch_failed(const char *what, int err);

/* As gpurma_gpu_launch_smem_raw; GPURMA_SUCCESS, or GPURMA_ERR_GPU with
 * the message "<what>: <reason>". */
template <typename... P, typename... A>
static inline int gpurma_gpu_launch_smem(const char *what, void (*kernel)(P...), unsigned grid,
                                         unsigned block, size_t smem, void *stream, A... args)
{
    int err = gpurma_gpu_launch_smem_raw(kernel, grid, block, smem, stream, args...);
    return err ? gpurma_gpu_launch_failed(what, err) : GPURMA_SUCCESS;
}
template <typename... P, typename... A>
static inline int gpurma_gpu_launch(const char *what, void (*kernel)(P...), unsigned grid,
                                    unsigned block, void *stream, A... args)
{
    return gpurma_gpu_launch_smem(what, kernel, grid, block, 0, stream, args...);
}

/* As gpurma_gpu_load_raw; GPURMA_SUCCESS, or GPURMA_ERR_GPU naming what. */
template <typename... K>
static inline int gpurma_gpu_load(const char *what, K... kernels)
{
    int err = gpurma_gpu_load_raw(kernels...);
    return err ? gpurma_gpu_launch_failed(what, err) : GPURMA_SUCCESS;
}
#endif

#endif
