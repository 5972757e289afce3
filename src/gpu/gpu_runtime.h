/*
 * gpu_runtime.h - the GPU runtime the shim's sources are written against,
 * with CUDA's names. gpu_cuda.c and gpu_kernels.cu are compiled once for
 * CUDA and, in a ROCm build, once more for HIP (gpu_hip.c, gpu_kernels_hip.hip,
 * which define GPURMA_GPU_HIP): the names below then map onto the HIP
 * runtime, so the shim's logic is written once for both runtimes.
 */
#ifndef GPURMA_GPU_RUNTIME_H
#define GPURMA_GPU_RUNTIME_H

#if !defined(GPURMA_GPU_HIP)

#include <cuda_runtime_api.h>

#include "gpu_driver.h"

/* Kind of memory in a cudaPointerAttributes. */
#define GPURMA_GPU_PTR_TYPE(a) ((a).type)

#else /* HIP */

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

/* The driver calls of the shim's default path are runtime calls in HIP. */
typedef hipDeviceptr_t CUdeviceptr;
typedef hipError_t CUresult;
typedef hipStream_t CUstream;
typedef uint64_t cuuint64_t;
#define CUDA_SUCCESS                  hipSuccess
#define CUDA_ERROR_NOT_SUPPORTED      hipErrorNotSupported
#define CU_STREAM_WRITE_VALUE_DEFAULT 0
#define GPURMA_DRIVER_NEED(name, who) GPURMA_SUCCESS
static const struct {
    hipError_t (*cuMemGetAddressRange)(hipDeviceptr_t *, size_t *, hipDeviceptr_t);
    hipError_t (*cuStreamWriteValue64)(hipStream_t, void *, uint64_t, unsigned int);
} gpurma_driver = {hipMemGetAddressRange, hipStreamWriteValue64};

#define cudaDeviceCanAccessPeer             hipDeviceCanAccessPeer
#define cudaDeviceEnablePeerAccess          hipDeviceEnablePeerAccess
#define cudaDeviceGetPCIBusId               hipDeviceGetPCIBusId
#define cudaErrorPeerAccessAlreadyEnabled   hipErrorPeerAccessAlreadyEnabled
#define cudaErrorMemoryAllocation           hipErrorOutOfMemory
#define cudaError_t                         hipError_t
#define cudaFree                            hipFree
#define cudaFreeHost                        hipHostFree
#define cudaGetDevice                       hipGetDevice
#define cudaGetDeviceCount                  hipGetDeviceCount
#define cudaGetErrorName                    hipGetErrorName
#define cudaGetErrorString                  hipGetErrorString
#define cudaGetLastError                    hipGetLastError
#define cudaHostAlloc                       hipHostMalloc
#define cudaHostAllocMapped                 hipHostMallocMapped
#define cudaHostAllocPortable               hipHostMallocPortable
#define cudaHostGetDevicePointer            hipHostGetDevicePointer
#define cudaIpcCloseMemHandle               hipIpcCloseMemHandle
#define cudaIpcGetMemHandle                 hipIpcGetMemHandle
#define cudaIpcMemHandle_t                  hipIpcMemHandle_t
#define cudaIpcMemLazyEnablePeerAccess      hipIpcMemLazyEnablePeerAccess
#define cudaIpcOpenMemHandle                hipIpcOpenMemHandle
#define cudaMalloc                          hipMalloc
#define cudaMemcpy                          hipMemcpy
#define cudaMemcpy2DAsync                   hipMemcpy2DAsync
#define cudaMemcpy3DAsync                   hipMemcpy3DAsync
#define cudaMemcpy3DParms                   hipMemcpy3DParms
#define cudaExtent                          hipExtent
#define cudaPitchedPtr                      hipPitchedPtr
#define cudaMemcpyAsync                     hipMemcpyAsync
#define cudaMemcpyDefault                   hipMemcpyDefault
#define cudaMemcpyHostToDevice              hipMemcpyHostToDevice
#define cudaMemcpyPeerAsync                 hipMemcpyPeerAsync
#define cudaMemoryTypeDevice                hipMemoryTypeDevice
#define cudaMemoryTypeHost                  hipMemoryTypeHost
#if HIP_VERSION_MAJOR >= 6
#define cudaMemoryTypeManaged               hipMemoryTypeManaged
#define GPURMA_GPU_PTR_TYPE(a)              ((a).type)
#else /* ROCm 5 names them differently */
#define cudaMemoryTypeManaged               hipMemoryTypeUnified
#define GPURMA_GPU_PTR_TYPE(a)              ((a).memoryType)
#endif
#define cudaMemset                          hipMemset
#define cudaMemsetAsync                     hipMemsetAsync
#define cudaPointerAttributes               hipPointerAttribute_t
#define cudaPointerGetAttributes            hipPointerGetAttributes
#define cudaSetDevice                       hipSetDevice
#define cudaStreamCaptureMode               hipStreamCaptureMode
#define cudaStreamCaptureModeRelaxed        hipStreamCaptureModeRelaxed
#define cudaStreamCaptureStatus             hipStreamCaptureStatus
#define cudaStreamCaptureStatusNone         hipStreamCaptureStatusNone
#define cudaStreamCreateWithFlags           hipStreamCreateWithFlags
#define cudaStreamDestroy                   hipStreamDestroy
#define cudaStreamIsCapturing               hipStreamIsCapturing
#define cudaStreamLegacy                    ((hipStream_t)0)
#define cudaStreamNonBlocking               hipStreamNonBlocking
#define cudaStreamPerThread                 hipStreamPerThread
#define cudaStreamSynchronize               hipStreamSynchronize
#define cudaStream_t                        hipStream_t
#define cudaSuccess                         hipSuccess
#define cudaThreadExchangeStreamCaptureMode hipThreadExchangeStreamCaptureMode
#ifdef __HIPCC__ /* kernels: stop the kernel as CUDA's __trap does */
#define __trap() __builtin_trap()
#endif

#endif /* HIP */

#endif
