/*
 * errors.c - result codes, error strings, the last error, the version, and
 * the library's log lines.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_internal.h"

/* NCCL keeps one last-error text per process; per thread is what a
 * multi-threaded caller can use, and what gpurma does. A thread that had
 * no error of its own reads the process's last one: torch may ask from
 * another thread than the one whose call failed. */
static __thread char last_error[1024];
static char process_last_error[1024];
static pthread_mutex_t process_last_error_lock = PTHREAD_MUTEX_INITIALIZER;

ncclResult_t gpurma_nccl_result(gpurma_status_t rc)
{
    switch (rc) {
    case GPURMA_SUCCESS:             return ncclSuccess;
    case GPURMA_ERR_INVALID_ARG:
    case GPURMA_ERR_OUT_OF_BOUNDS:
    case GPURMA_ERR_MISALIGNED:      return ncclInvalidArgument;
    case GPURMA_ERR_UNSUPPORTED:
    case GPURMA_ERR_NOT_INITIALIZED:
    case GPURMA_ERR_FREED:           return ncclInvalidUsage;
    case GPURMA_ERR_TIMEOUT:
    case GPURMA_ERR_PEER_FAILED:     return ncclRemoteError;
    case GPURMA_ERR_NO_MEMORY:
    case GPURMA_ERR_BOOTSTRAP:
    case GPURMA_ERR_TRANSPORT:       return ncclSystemError;
    case GPURMA_ERR_GPU:             return ncclUnhandledCudaError;
    default:                         return ncclInternalError;
    }
}

void gpurma_nccl_set_async(ncclComm_t comm, ncclResult_t result)
{
    ncclResult_t none = ncclSuccess;
    if (comm)
        __atomic_compare_exchange_n(&comm->async_error, &none, result, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
}

ncclResult_t gpurma_nccl_fail(ncclComm_t comm, ncclResult_t result, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (comm && comm->magic == GPURMA_NCCL_COMM_MAGIC)
        snprintf(last_error, sizeof last_error, "gpurma-nccl rank %d of %d: %s", comm->rank,
                 comm->size, msg);
    else
        snprintf(last_error, sizeof last_error, "gpurma-nccl: %s", msg);
    pthread_mutex_lock(&process_last_error_lock);
    memcpy(process_last_error, last_error, sizeof last_error);
    pthread_mutex_unlock(&process_last_error_lock);
    if (getenv("GPURMA_NCCL_DEBUG"))
        fprintf(stderr, "%s\n", last_error);
    return result;
}

ncclResult_t gpurma_nccl_fail_rc(ncclComm_t comm, gpurma_status_t rc, const char *what)
{
    ncclResult_t result = gpurma_nccl_result(rc);
    const char *detail = comm && comm->ctx ? gpurma_last_error_message(comm->ctx->ctx)
                                           : gpurma_last_error_message(NULL);
    gpurma_nccl_fail(comm, result, "%s: %s (%s)", what, gpurma_strerror(rc),
                     detail ? detail : "");
    /* A peer that died or stopped answering breaks the communicator: torch's
     * watchdog learns it from ncclCommGetAsyncError. */
    if (result == ncclRemoteError || result == ncclSystemError ||
        result == ncclUnhandledCudaError)
        gpurma_nccl_set_async(comm, result);
    return result;
}

void gpurma_nccl_log(const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpurma-nccl: %s\n", msg);
}

static ncclResult_t check_comm(ncclComm_t comm, const char *call, int cleanup)
{
    if (!comm)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "%s: comm is NULL", call);
    if (comm->magic != GPURMA_NCCL_COMM_MAGIC)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "%s: comm %p is not a live communicator (destroyed?)", call,
                                (void *)comm);
    ncclResult_t st = __atomic_load_n(&comm->init_state, __ATOMIC_ACQUIRE);
    if (st == ncclInProgress)
        return gpurma_nccl_fail(comm, ncclInvalidUsage,
                                "%s: the communicator is still initializing (poll "
                                "ncclCommGetAsyncError until it is ncclSuccess)", call);
    if (st != ncclSuccess)
        return gpurma_nccl_fail(comm, ncclInvalidUsage, "%s: the communicator's init failed",
                                call);
    if (__atomic_load_n(&comm->aborted, __ATOMIC_ACQUIRE))
        return gpurma_nccl_fail(comm, ncclInvalidUsage, "%s: the communicator was aborted",
                                call);
    if (comm->finalized && !cleanup)
        return gpurma_nccl_fail(comm, ncclInvalidUsage, "%s: the communicator was finalized",
                                call);
    if (__atomic_load_n(&comm->revoked, __ATOMIC_ACQUIRE))
        return gpurma_nccl_fail(comm, ncclInvalidUsage, "%s: the communicator was revoked",
                                call);
    return ncclSuccess;
}

ncclResult_t gpurma_nccl_check_comm(ncclComm_t comm, const char *call)
{
    return check_comm(comm, call, 0);
}

/* Cleanup (deregistrations, ncclRedOpDestroy) stays allowed between
 * ncclCommFinalize and ncclCommDestroy, where programs release what they
 * made with the communicator. */
ncclResult_t gpurma_nccl_check_comm_cleanup(ncclComm_t comm, const char *call)
{
    return check_comm(comm, call, 1);
}

NCCL_API const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess:            return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with GPURMA_NCCL_DEBUG=1 for details)";
    case ncclSystemError:        return "unhandled system error (run with GPURMA_NCCL_DEBUG=1 for details)";
    case ncclInternalError:      return "internal error - please report this issue to the gpurma developers";
    case ncclInvalidArgument:    return "invalid argument (run with GPURMA_NCCL_DEBUG=1 for details)";
    case ncclInvalidUsage:       return "invalid usage (run with GPURMA_NCCL_DEBUG=1 for details)";
    case ncclRemoteError:        return "remote process exited or there was a network error";
    case ncclInProgress:         return "NCCL operation in progress";
    default:                     return "unknown result code";
    }
}
NCCL_PROFILING_ALIAS(ncclGetErrorString)

NCCL_API const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm; /* per thread, whatever the communicator */
    return last_error[0] ? last_error : process_last_error;
}
NCCL_PROFILING_ALIAS(ncclGetLastError)

NCCL_API ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclGetVersion)

/* NCCL rereads NCCL_DEBUG here; gpurma's log settings are read per call. */
NCCL_API void ncclResetDebugInit(void)
{
    last_error[0] = '\0';
    pthread_mutex_lock(&process_last_error_lock);
    process_last_error[0] = '\0';
    pthread_mutex_unlock(&process_last_error_lock);
}
NCCL_PROFILING_ALIAS(ncclResetDebugInit)
