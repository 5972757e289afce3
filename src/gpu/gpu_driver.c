/*
 * gpu_driver.c - resolves the entries of gpu_driver.h's table through the
 * CUDA runtime (CUDA builds only).
 */
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "gpu_driver.h"
#include "gpurma_internal.h"

gpurma_driver_t gpurma_driver;

#define DRIVER_NAME(name, version, params) #name,
static const char *const names[] = {GPURMA_DRIVER_CALLS(DRIVER_NAME)};
#define DRIVER_VERSION(name, version, params) version,
static const int versions[] = {GPURMA_DRIVER_CALLS(DRIVER_VERSION)};
#define DRIVER_OFFSET(name, version, params) offsetof(gpurma_driver_t, name),
static const size_t offsets[] = {GPURMA_DRIVER_CALLS(DRIVER_OFFSET)};

int gpurma_driver_need(gpurma_driver_call_t call, const char *who)
{
    if ((unsigned)call >= GPURMA_DRIVER_NUM_CALLS)
        return gpurma_set_error(GPURMA_ERR_INTERNAL, "%s: no such driver call %d", who, (int)call);
    void **slot = (void **)((char *)&gpurma_driver + offsets[call]);
    if (__atomic_load_n(slot, __ATOMIC_ACQUIRE))
        return GPURMA_SUCCESS;
    /* Two threads may both look it up: they store the same pointer. */
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    cudaError_t e = cudaGetDriverEntryPointByVersion(names[call], &fn, (unsigned)versions[call],
                                                     cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
        (void)cudaGetLastError();
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "%s: the driver has no %s (CUDA %d.%d or newer is needed)", who,
                                names[call], versions[call] / 1000, versions[call] % 1000 / 10);
    }
    __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    return GPURMA_SUCCESS;
}
