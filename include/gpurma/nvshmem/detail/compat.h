/*
 * compat.h - odds and ends NVSHMEM's headers give programs beside the
 * OpenSHMEM calls: the error-print macro its own samples and perftests
 * use, and the registration of modules a program loads with the driver.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_COMPAT_H
#define GPURMA_NVSHMEM_DETAIL_COMPAT_H

#include "gpurma/nvshmem/detail/unit.h"

/* Prints "file:function:line: message" to stderr. */
#ifndef NVSHMEMI_ERROR_PRINT
#define NVSHMEMI_ERROR_PRINT(...)                                                           \
    do {                                                                                    \
        fprintf(stderr, "%s:%s:%d: ", __FILE__, __func__, __LINE__);                        \
        fprintf(stderr, __VA_ARGS__);                                                       \
        fprintf(stderr, "\n");                                                              \
    } while (0)
#endif

#if GPURMA_NVSHMEMI_CUDA
/* A module (cuModuleLoad of a cubin that includes nvshmem.h) whose kernels
 * call NVSHMEM: its copy of the layer's state is filled now and whenever
 * the state changes, until nvshmemx_cumodule_finalize. */
static inline int nvshmemx_cumodule_init(CUmodule module)
{
    int slot = -1;
    for (int i = 0; i < GPURMA_NVSHMEMI_MAX_MODULES; i++)
        if (gpurma_nvshmemi_modules[i] == module || (!gpurma_nvshmemi_modules[i] && slot < 0))
            slot = i;
    if (!module || slot < 0)
        return NVSHMEMX_ERROR_INVALID_VALUE;
    gpurma_nvshmemi_modules[slot] = module;
    gpurma_nvshmemi_refresh(gpurma_nvshmemi_update_unit);
    return NVSHMEMX_SUCCESS;
}
static inline int nvshmemx_cumodule_finalize(CUmodule module)
{
    for (int i = 0; i < GPURMA_NVSHMEMI_MAX_MODULES; i++)
        if (module && gpurma_nvshmemi_modules[i] == module) {
            gpurma_nvshmemi_modules[i] = NULL;
            return NVSHMEMX_SUCCESS;
        }
    return NVSHMEMX_ERROR_INVALID_VALUE;
}
#endif

#endif
