/*
 * gpu_cuda.c - the CUDA runtime calls of libgpurma_nccl (CUDA builds). Each
 * reports failure as nonzero; the caller turns it into an NCCL result.
 * Without a driver (CI) every query says "no GPU" and the library runs on
 * gpurma's host backend.
 */
#include <cuda_runtime_api.h>

#include "nccl_internal.h"

int gpurma_nccl_gpu_current_device(void)
{
    int n = 0, dev = -1;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
        cudaGetLastError(); /* not sticky: clear it for the application */
        return -1;
    }
    return cudaGetDevice(&dev) == cudaSuccess ? dev : -1;
}

int gpurma_nccl_gpu_set_device(int device)
{
    return cudaSetDevice(device) != cudaSuccess;
}

int gpurma_nccl_gpu_malloc(void **ptr, size_t bytes)
{
    return cudaMalloc(ptr, bytes) != cudaSuccess;
}

int gpurma_nccl_gpu_free(void *ptr)
{
    return cudaFree(ptr) != cudaSuccess;
}

int gpurma_nccl_gpu_malloc_relaxed(void **ptr, size_t bytes)
{
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    int relaxed = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (relaxed)
        cudaThreadExchangeStreamCaptureMode(&mode); /* back to the thread's own */
    if (e != cudaSuccess)
        cudaGetLastError();
    return e != cudaSuccess;
}

int gpurma_nccl_gpu_is_device_ptr(const void *ptr)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

int gpurma_nccl_gpu_copy_async(void *dst, const void *src, size_t bytes, void *stream)
{
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream) !=
           cudaSuccess;
}

int gpurma_nccl_gpu_probe_create(void **probe)
{
    cudaStream_t s = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        cudaGetLastError();
        *probe = NULL;
        return 1;
    }
    *probe = s;
    return 0;
}

void gpurma_nccl_gpu_probe_destroy(void *probe)
{
    if (probe)
        cudaStreamDestroy((cudaStream_t)probe);
}

/* The probe stream is empty and non-blocking: its query costs about a
 * microsecond and needs no current device. It never takes part in a
 * capture, so this thread's capture mode is relaxed around the query:
 * another thread's graph capture in the global mode (torch's default)
 * neither refuses it nor is invalidated by it. A broken context fails
 * every call with its sticky error. */
int gpurma_nccl_gpu_probe_failed(void *probe, const char **why)
{
    if (!probe)
        return 0;
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    int relaxed = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
    cudaError_t e = cudaStreamQuery((cudaStream_t)probe);
    if (relaxed)
        cudaThreadExchangeStreamCaptureMode(&mode); /* back to the thread's own */
    if (e == cudaSuccess || e == cudaErrorNotReady)
        return 0;
    *why = cudaGetErrorString(e);
    return 1;
}

int gpurma_nccl_gpu_stream_capturing(void *stream)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (stream == NULL) /* the legacy stream cannot be captured */
        return 0;
    if (cudaStreamIsCapturing((cudaStream_t)stream, &st) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return st != cudaStreamCaptureStatusNone;
}
