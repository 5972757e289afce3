/*
 * gpu_fp8.cu - FP8 reductions on a stream (coll.c): the input widened to
 * float (PreMulSum's scaling first, in FP8, as NCCL does), the float result
 * narrowed back, with cuda_fp8.h's conversions (round to nearest even,
 * saturating). fp8.c does the same bytes on the host.
 */
#include <cuda_fp8.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gpurma/nccl/nccl.h"
#include "gpu_launch.h"

static __device__ float fp8_to_float(uint8_t v, __nv_fp8_interpretation_t kind)
{
    return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)v, kind)));
}

static __device__ uint8_t float_to_fp8(float f, __nv_fp8_interpretation_t kind)
{
    return (uint8_t)__nv_cvt_float_to_fp8(f, __NV_SATFINITE, kind);
}

/* scaled: PreMulSum; its scalar is the FP8 byte at scalar_dev when given
 * (read when the kernel runs), else `scalar`. */
__global__ void widen_kernel(float *dst, const uint8_t *src, size_t n,
                             __nv_fp8_interpretation_t kind, int scaled, float scalar,
                             const uint8_t *scalar_dev)
{
    float s = scalar_dev ? fp8_to_float(*scalar_dev, kind) : scalar;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = fp8_to_float(src[i], kind);
        dst[i] = scaled ? fp8_to_float(float_to_fp8(v * s, kind), kind) : v;
    }
}

__global__ void narrow_kernel(uint8_t *dst, const float *src, size_t n,
                              __nv_fp8_interpretation_t kind)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = float_to_fp8(src[i], kind);
}

static unsigned blocks_for(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b > 1024 ? 1024 : b ? b : 1);
}

static __nv_fp8_interpretation_t kind_of(ncclDataType_t t)
{
    return t == ncclFloat8e5m2 ? __NV_E5M2 : __NV_E4M3;
}

extern "C" int gpurma_nccl_gpu_fp8_widen_async(float *dst, const void *src, size_t n,
                                               ncclDataType_t dtype, const double *scalar,
                                               const void *scalar_dev, void *stream)
{
    if (!n)
        return 0;
    return gpurma_gpu_launch_raw(widen_kernel, blocks_for(n), 256, stream, dst,
                                 (const uint8_t *)src, n, kind_of(dtype),
                                 scalar || scalar_dev ? 1 : 0,
                                 scalar ? (float)*scalar : 0.0f,
                                 (const uint8_t *)scalar_dev) != 0;
}

extern "C" int gpurma_nccl_gpu_fp8_narrow_async(void *dst, const float *src, size_t n,
                                                ncclDataType_t dtype, void *stream)
{
    if (!n)
        return 0;
    return gpurma_gpu_launch_raw(narrow_kernel, blocks_for(n), 256, stream, (uint8_t *)dst, src,
                                 n, kind_of(dtype)) != 0;
}

/* Loaded at communicator setup: a lazily loaded kernel would be loaded at
 * its first launch, which waits for the kernels running then (collectives
 * that wait for peers). */
extern "C" int gpurma_nccl_gpu_fp8_load(void)
{
    return gpurma_gpu_load_raw(widen_kernel, narrow_kernel);
}
