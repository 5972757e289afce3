/*
 * gpu_scale.cu - the multiplication of PreMulSum on a stream: dst = src *
 * scalar in the element type, the scalar given by value or read from
 * device memory when the kernel runs (ncclScalarDevice).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gpurma/nccl/nccl.h"
#include "gpu_launch.h"

template <typename T>
__global__ void scale_kernel(T *dst, const T *src, size_t n, T scalar, const T *scalar_dev)
{
    T s = scalar_dev ? *scalar_dev : scalar;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i] * s;
}

template <typename T>
static int launch(void *dst, const void *src, size_t n, T scalar, const void *scalar_dev,
                  void *stream)
{
    size_t blocks = (n + 255) / 256;
    if (blocks > 1024)
        blocks = 1024;
    return gpurma_gpu_launch_raw(scale_kernel<T>, (unsigned)blocks, 256, stream, (T *)dst,
                                 (const T *)src, n, scalar, (const T *)scalar_dev) != 0;
}

extern "C" int gpurma_nccl_gpu_scale_async(void *dst, const void *src, size_t count,
                                           ncclDataType_t dtype, double scalar,
                                           const void *scalar_dev, void *stream)
{
    void *s = stream;
    switch (dtype) {
    case ncclInt8:     return launch<int8_t>(dst, src, count, (int8_t)scalar, scalar_dev, s);
    case ncclUint8:    return launch<uint8_t>(dst, src, count, (uint8_t)scalar, scalar_dev, s);
    case ncclInt32:    return launch<int32_t>(dst, src, count, (int32_t)scalar, scalar_dev, s);
    case ncclUint32:   return launch<uint32_t>(dst, src, count, (uint32_t)scalar, scalar_dev, s);
    case ncclInt64:    return launch<int64_t>(dst, src, count, (int64_t)scalar, scalar_dev, s);
    case ncclUint64:   return launch<uint64_t>(dst, src, count, (uint64_t)scalar, scalar_dev, s);
    case ncclFloat32:  return launch<float>(dst, src, count, (float)scalar, scalar_dev, s);
    case ncclFloat64:  return launch<double>(dst, src, count, scalar, scalar_dev, s);
    case ncclFloat16:
        return launch<__half>(dst, src, count, __float2half((float)scalar), scalar_dev, s);
    case ncclBfloat16:
        return launch<__nv_bfloat16>(dst, src, count, __float2bfloat16((float)scalar),
                                     scalar_dev, s);
    default: return 1;
    }
}

extern "C" int gpurma_nccl_gpu_fp8_load(void);

/* Every kernel of the NCCL layer, loaded when a GPU communicator is set up
 * rather than lazily at a first launch, which would wait for the kernels
 * running then (collectives waiting for peers). */
extern "C" int gpurma_nccl_gpu_load_kernels(void)
{
    int rc = gpurma_gpu_load_raw(scale_kernel<int8_t>, scale_kernel<uint8_t>,
                                 scale_kernel<int32_t>, scale_kernel<uint32_t>,
                                 scale_kernel<int64_t>, scale_kernel<uint64_t>,
                                 scale_kernel<float>, scale_kernel<double>, scale_kernel<__half>,
                                 scale_kernel<__nv_bfloat16>);
    return rc ? rc : gpurma_nccl_gpu_fp8_load();
}
