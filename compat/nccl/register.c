/*
 * register.c - ncclCommRegister, windows, ncclMemAlloc.
 *
 * NCCL registers buffers locally (ncclCommRegister) and collectively
 * (ncclCommWindowRegister). gpurma_coll_register is collective, so only
 * windows use it; a local registration is recorded and checked, and also
 * handed to gpurma_coll_register when GPURMA_NCCL_REGISTER=collective says
 * every rank registers in the same order (as nccl-tests -R 1 does).
 */
#include <stdlib.h>
#include <string.h>

#include "nccl_internal.h"

#define REG_MAGIC 0x72656769u

typedef struct {
    uint32_t   magic;
    ncclComm_t comm;
    void      *buf;
    size_t     bytes;
    int        with_gpurma; /* gpurma_coll_register succeeded */
} registration_t;

static int collective_local_registration(void)
{
    const char *v = getenv("GPURMA_NCCL_REGISTER");
    return v && !strcmp(v, "collective");
}

static ncclResult_t do_register(ncclComm_t comm, void *buff, size_t size, void **out,
                                int collective, const char *call)
{
    ncclResult_t res = gpurma_nccl_check_comm(comm, call);
    if (res != ncclSuccess)
        return res;
    if (!out || !buff || !size)
        return gpurma_nccl_fail(comm, ncclInvalidArgument, "%s: buffer %p of %zu bytes, handle %p",
                                call, buff, size, (void *)out);
    *out = NULL;
    registration_t *r = calloc(1, sizeof *r);
    if (!r)
        return gpurma_nccl_fail(comm, ncclSystemError, "%s: out of memory", call);
    *r = (registration_t){REG_MAGIC, comm, buff, size, 0};
    if (collective) {
        gpurma_status_t st = gpurma_coll_register(comm->team, buff, size);
        if (st == GPURMA_SUCCESS) {
            r->with_gpurma = 1;
        } else if (st != GPURMA_ERR_UNSUPPORTED) {
            free(r);
            return gpurma_nccl_fail_rc(comm, st, call);
        }
        /* UNSUPPORTED: the collectives copy through their own buffers. */
    }
    *out = r;
    return ncclSuccess;
}

static ncclResult_t do_deregister(ncclComm_t comm, void *handle, const char *call)
{
    ncclResult_t res = gpurma_nccl_check_comm_cleanup(comm, call);
    if (res != ncclSuccess)
        return res;
    registration_t *r = handle;
    if (!r || r->magic != REG_MAGIC || r->comm != comm)
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "%s: %p is not a registration of this communicator", call,
                                handle);
    if (r->with_gpurma) {
        gpurma_status_t st = gpurma_coll_deregister(comm->team, r->buf);
        if (st != GPURMA_SUCCESS)
            return gpurma_nccl_fail_rc(comm, st, call);
    }
    r->magic = 0;
    free(r);
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size,
                                       void **handle)
{
    return do_register(comm, buff, size, handle, collective_local_registration(),
                       "ncclCommRegister");
}
NCCL_PROFILING_ALIAS(ncclCommRegister)

NCCL_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    return do_deregister(comm, handle, "ncclCommDeregister");
}
NCCL_PROFILING_ALIAS(ncclCommDeregister)

/* Collective, as in NCCL. */
NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size,
                                             ncclWindow_t *win, int winFlags)
{
    if (winFlags & ~NCCL_WIN_COLL_SYMMETRIC)
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "ncclCommWindowRegister: unknown flags 0x%x", winFlags);
    return do_register(comm, buff, size, (void **)win, 1, "ncclCommWindowRegister");
}
NCCL_PROFILING_ALIAS(ncclCommWindowRegister)

NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    return do_deregister(comm, win, "ncclCommWindowDeregister");
}
NCCL_PROFILING_ALIAS(ncclCommWindowDeregister)

/* GPU memory of the current device; page-aligned host memory where the
 * process has no GPU (the host backend). */
NCCL_API ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    if (!ptr || !size)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "ncclMemAlloc: ptr %p, size %zu",
                                (void *)ptr, size);
    *ptr = NULL;
    if (gpurma_nccl_gpu_current_device() >= 0) {
        if (gpurma_nccl_gpu_malloc(ptr, size))
            return gpurma_nccl_fail(NULL, ncclUnhandledCudaError,
                                    "ncclMemAlloc: cudaMalloc of %zu bytes failed", size);
        return ncclSuccess;
    }
    if (posix_memalign(ptr, NCCL_WIN_REQUIRED_ALIGNMENT, size))
        return gpurma_nccl_fail(NULL, ncclSystemError, "ncclMemAlloc: no memory for %zu bytes",
                                size);
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclMemAlloc)

NCCL_API ncclResult_t ncclMemFree(void *ptr)
{
    if (!ptr)
        return ncclSuccess;
    if (gpurma_nccl_gpu_is_device_ptr(ptr)) {
        if (gpurma_nccl_gpu_free(ptr))
            return gpurma_nccl_fail(NULL, ncclUnhandledCudaError, "ncclMemFree: cudaFree failed");
        return ncclSuccess;
    }
    free(ptr);
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclMemFree)
