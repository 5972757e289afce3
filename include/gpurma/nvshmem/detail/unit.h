/*
 * unit.h - the state of one translation unit, and how it gets filled.
 *
 * No -rdc: kernels cannot reach a device symbol of another unit (or of the
 * library), so every unit that includes nvshmem.h holds its own copy of
 * the state, `static` (in __constant__ memory under nvcc) and therefore
 * never a duplicate symbol, with or without -rdc. At load time (program
 * start, or dlopen of a module) the unit registers an updater with the
 * library; the library calls it once the heap exists, again when teams
 * change, and at once for a unit registered after init. The updater copies
 * with the program's own CUDA runtime: a static cudart in the program is a
 * different copy from libgpurma's, and only the copy that loaded this
 * unit's kernels knows its __constant__ symbol.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_UNIT_H
#define GPURMA_NVSHMEM_DETAIL_UNIT_H

#include "gpurma/nvshmem/detail/host_api.h"

#if defined(__CUDACC__) && !defined(__HIPCC__)
#include <cuda_runtime.h>
#include <stdio.h>
#define GPURMA_NVSHMEMI_CUDA 1
/* Host-and-device calls, device-only calls, and the device pass. */
#define GPURMA_NVSHMEMI_HD static __host__ __device__ __forceinline__
#define GPURMA_NVSHMEMI_D  static __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define GPURMA_NVSHMEMI_DEVICE_PASS 1
#else
#define GPURMA_NVSHMEMI_DEVICE_PASS 0
#endif
static __constant__ gpurma_nvshmemi_state_t gpurma_nvshmemi_st;
#elif defined(__HIPCC__)
#error "gpurma's nvshmem.h supports CUDA and plain C/C++ (host backend); HIP is not supported"
#else
#include <string.h>
#define GPURMA_NVSHMEMI_CUDA 0
#define GPURMA_NVSHMEMI_HD static inline
#define GPURMA_NVSHMEMI_D  static inline
#define GPURMA_NVSHMEMI_DEVICE_PASS 0
static gpurma_nvshmemi_state_t gpurma_nvshmemi_st;
#endif

#if GPURMA_NVSHMEMI_CUDA
/*
 * Modules the program loaded itself (cuModuleLoad of a cubin built from
 * nvshmem.h) and handed to nvshmemx_cumodule_init: each holds its own
 * gpurma_nvshmemi_st, which this unit's updater fills with the driver
 * (reached through the runtime, so that a program without modules needs no
 * -lcuda).
 */
#define GPURMA_NVSHMEMI_MAX_MODULES 16
static CUmodule gpurma_nvshmemi_modules[GPURMA_NVSHMEMI_MAX_MODULES];

static int gpurma_nvshmemi_fill_module(CUmodule m, const gpurma_nvshmemi_state_t *s)
{
    typedef CUresult (*get_global_fn)(CUdeviceptr *, size_t *, CUmodule, const char *);
    typedef CUresult (*copy_fn)(CUdeviceptr, const void *, size_t);
    static get_global_fn get_global;
    static copy_fn copy;
    if (!get_global || !copy) {
        void *g = NULL, *c = NULL;
        if (cudaGetDriverEntryPointByVersion("cuModuleGetGlobal", &g, 12000, cudaEnableDefault,
                                             NULL) != cudaSuccess ||
            cudaGetDriverEntryPointByVersion("cuMemcpyHtoD", &c, 12000, cudaEnableDefault,
                                             NULL) != cudaSuccess || !g || !c)
            return -1;
        get_global = (get_global_fn)g;
        copy = (copy_fn)c;
    }
    CUdeviceptr dptr;
    size_t bytes = 0;
    if (get_global(&dptr, &bytes, m, "gpurma_nvshmemi_st") != CUDA_SUCCESS ||
        bytes != sizeof *s)
        return -1;
    return copy(dptr, s, sizeof *s) == CUDA_SUCCESS ? 0 : -1;
}
#endif

/* Host calls ordered on a CUDA stream exist in CUDA units and in C++ units
 * built with CUDA's headers (types.h). */
#if GPURMA_NVSHMEMI_CUDA || GPURMA_NVSHMEMI_CUDA_HOST
#define GPURMA_NVSHMEMI_STREAMS 1
#else
#define GPURMA_NVSHMEMI_STREAMS 0
#endif

static void gpurma_nvshmemi_update_unit(const gpurma_nvshmemi_state_t *s)
{
#if GPURMA_NVSHMEMI_CUDA
    if (!s->heap_host)
        for (int i = 0; i < GPURMA_NVSHMEMI_MAX_MODULES; i++)
            if (gpurma_nvshmemi_modules[i] && gpurma_nvshmemi_fill_module(gpurma_nvshmemi_modules[i], s))
                gpurma_nvshmemi_fail("nvshmemx_cumodule_init", GPURMA_ERR_GPU,
                                     "could not fill a module's state (was it built from "
                                     "gpurma's nvshmem.h?)");
    /* A heap in host memory (no GPU in use) is out of kernels' reach, and
     * there may be no device to copy to. */
    if (s->heap_host)
        return;
    /* __constant__ memory is per device: copy on the heap's GPU, and give
     * the program back the device it had. */
    int cur = -1, count = 0, dev = s->device;
    if (cudaGetDevice(&cur) != cudaSuccess)
        cur = -1;
    if (dev == GPURMA_DEVICE_AUTO) /* the library's automatic choice, as gpurma makes it */
        dev = cudaGetDeviceCount(&count) == cudaSuccess && count > 0 ? s->node_rank % count : -1;
    if (dev < 0)
        dev = cur;
    if (dev >= 0 && dev != cur)
        cudaSetDevice(dev);
    cudaError_t err = cudaMemcpyToSymbol(gpurma_nvshmemi_st, s, sizeof *s);
    if (dev >= 0 && cur >= 0 && dev != cur)
        cudaSetDevice(cur);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* not the program's error to see later */
        gpurma_nvshmemi_fail("nvshmem_init", GPURMA_ERR_GPU,
                             "could not fill a unit's __constant__ state");
    }
#else
    memcpy(&gpurma_nvshmemi_st, s, sizeof *s);
#endif
}

/* Register once the unit's own constructors have run: under nvcc the unit's
 * kernels and __constant__ symbols are registered by a constructor that
 * runs after plain ones of the same unit, and before its C++ dynamic
 * initializers. */
#ifdef __cplusplus
namespace {
struct gpurma_nvshmemi_unit_registration {
    gpurma_nvshmemi_unit_registration() { gpurma_nvshmemi_register(gpurma_nvshmemi_update_unit); }
    ~gpurma_nvshmemi_unit_registration()
    {
        gpurma_nvshmemi_unregister(gpurma_nvshmemi_update_unit);
    }
};
static gpurma_nvshmemi_unit_registration gpurma_nvshmemi_unit_registered;
} // namespace
#else
__attribute__((constructor)) static void gpurma_nvshmemi_unit_register(void)
{
    gpurma_nvshmemi_register(gpurma_nvshmemi_update_unit);
}
__attribute__((destructor)) static void gpurma_nvshmemi_unit_unregister(void)
{
    gpurma_nvshmemi_unregister(gpurma_nvshmemi_update_unit);
}
#endif

#endif
