/*
 * gpu_driver.h - the one table of CUDA driver entry points the library
 * calls. The driver is reached through the runtime's
 * cudaGetDriverEntryPointByVersion, never by linking libcuda: a CUDA build
 * of libgpurma must load where there is no driver and run the host backend.
 *
 * CUDA builds only (includes cuda.h). An entry is resolved on first need,
 * one at a time, so that a call the default path never makes (the switch
 * engine's multicast calls) is not even looked up unless its path runs.
 * Adding a call: one row below, with the CUDA version whose signature it
 * has.
 */
#ifndef GPURMA_GPU_DRIVER_H
#define GPURMA_GPU_DRIVER_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, CUDA version of the signature, (parameters)) */
#define GPURMA_DRIVER_CALLS(X)                                                                \
    X(cuDeviceGet, 12000, (CUdevice *, int))                                                  \
    X(cuDeviceGetAttribute, 12000, (int *, CUdevice_attribute, CUdevice))                     \
    X(cuMemGetAddressRange, 12000, (CUdeviceptr *, size_t *, CUdeviceptr))                    \
    X(cuPointerGetAttribute, 12000, (void *, CUpointer_attribute, CUdeviceptr))              \
    X(cuMemRetainAllocationHandle, 12010, (CUmemGenericAllocationHandle *, void *))           \
    X(cuMemRelease, 12010, (CUmemGenericAllocationHandle))                                    \
    X(cuMulticastGetGranularity, 12010, (size_t *, const CUmulticastObjectProp *,             \
                                         CUmulticastGranularity_flags))                       \
    X(cuMulticastCreate, 12010, (CUmemGenericAllocationHandle *, const CUmulticastObjectProp *)) \
    X(cuMulticastAddDevice, 12010, (CUmemGenericAllocationHandle, CUdevice))                  \
    X(cuMulticastBindMem, 12010, (CUmemGenericAllocationHandle, size_t,                       \
                                  CUmemGenericAllocationHandle, size_t, size_t,               \
                                  unsigned long long))                                        \
    X(cuMulticastUnbind, 12010, (CUmemGenericAllocationHandle, CUdevice, size_t, size_t))     \
    X(cuMemExportToShareableHandle, 12010, (void *, CUmemGenericAllocationHandle,             \
                                            CUmemAllocationHandleType, unsigned long long))   \
    X(cuMemImportFromShareableHandle, 12010, (CUmemGenericAllocationHandle *, void *,         \
                                              CUmemAllocationHandleType))                     \
    X(cuMemAddressReserve, 12010, (CUdeviceptr *, size_t, size_t, CUdeviceptr,                \
                                   unsigned long long))                                       \
    X(cuMemAddressFree, 12010, (CUdeviceptr, size_t))                                         \
    X(cuMemMap, 12010, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,            \
                        unsigned long long))                                                  \
    X(cuMemUnmap, 12010, (CUdeviceptr, size_t))                                               \
    X(cuMemSetAccess, 12010, (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))        \
    X(cuStreamWriteValue64, 12000, (CUstream, CUdeviceptr, cuuint64_t, unsigned int))

/* The table: gpurma_driver.cuDeviceGet(...) once gpurma_driver_need said so. */
typedef struct {
#define GPURMA_DRIVER_SLOT(name, version, params) CUresult (*name) params;
    GPURMA_DRIVER_CALLS(GPURMA_DRIVER_SLOT)
#undef GPURMA_DRIVER_SLOT
} gpurma_driver_t;
extern gpurma_driver_t gpurma_driver;

typedef enum {
#define GPURMA_DRIVER_INDEX(name, version, params) GPURMA_DRIVER_##name,
    GPURMA_DRIVER_CALLS(GPURMA_DRIVER_INDEX)
#undef GPURMA_DRIVER_INDEX
    GPURMA_DRIVER_NUM_CALLS
} gpurma_driver_call_t;

/* Resolves the entry (once; thread-safe). GPURMA_SUCCESS, or
 * GPURMA_ERR_UNSUPPORTED with a message that starts with who and names the
 * missing entry point and the CUDA version it needs. */
int gpurma_driver_need(gpurma_driver_call_t call, const char *who);
/* (name is not macro-expanded: cuda.h maps some names to their _v2.) */
#define GPURMA_DRIVER_NEED(name, who) gpurma_driver_need(GPURMA_DRIVER_##name, who)

#ifdef __cplusplus
}
#endif

#endif
