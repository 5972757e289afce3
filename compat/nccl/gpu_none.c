/*
 * gpu_none.c - builds without CUDA: there is never a GPU, and the library
 * runs on gpurma's host backend.
 */
#include "nccl_internal.h"

int gpurma_nccl_gpu_current_device(void) { return -1; }
int gpurma_nccl_gpu_set_device(int device) { return device >= 0; }
int gpurma_nccl_gpu_malloc(void **ptr, size_t bytes) { (void)ptr, (void)bytes; return 1; }
int gpurma_nccl_gpu_free(void *ptr) { return ptr != NULL; }
int gpurma_nccl_gpu_malloc_relaxed(void **ptr, size_t bytes)
{
    (void)ptr, (void)bytes;
    return 1;
}

int gpurma_nccl_gpu_is_device_ptr(const void *ptr) { (void)ptr; return 0; }

int gpurma_nccl_gpu_copy_async(void *dst, const void *src, size_t bytes, void *stream)
{
    (void)dst, (void)src, (void)bytes, (void)stream;
    return 1;
}

int gpurma_nccl_gpu_scale_async(void *dst, const void *src, size_t count, ncclDataType_t dtype,
                                double scalar, const void *scalar_dev, void *stream)
{
    (void)dst, (void)src, (void)count, (void)dtype, (void)scalar, (void)scalar_dev, (void)stream;
    return 1;
}

int gpurma_nccl_gpu_stream_capturing(void *stream) { (void)stream; return 0; }

int gpurma_nccl_gpu_fp8_widen_async(float *dst, const void *src, size_t n, ncclDataType_t dtype,
                                    const double *scalar, const void *scalar_dev, void *stream)
{
    (void)dst, (void)src, (void)n, (void)dtype, (void)scalar, (void)scalar_dev, (void)stream;
    return 1;
}

int gpurma_nccl_gpu_fp8_narrow_async(void *dst, const float *src, size_t n, ncclDataType_t dtype,
                                     void *stream)
{
    (void)dst, (void)src, (void)n, (void)dtype, (void)stream;
    return 1;
}

int gpurma_nccl_gpu_load_kernels(void) { return 0; }

int gpurma_nccl_gpu_probe_create(void **probe)
{
    *probe = NULL;
    return 1;
}

void gpurma_nccl_gpu_probe_destroy(void *probe) { (void)probe; }

int gpurma_nccl_gpu_probe_failed(void *probe, const char **why)
{
    (void)probe, (void)why;
    return 0;
}
