/*
 * mpi_plugin.c - the MPI bootstrap, built with mpicc into
 * libgpurma_bootstrap_mpi.so so that libgpurma itself never links MPI.
 *
 * Self-contained: libgpurma's logging and error functions are hidden from
 * plugins, so errors are returned as status codes and the text is kept in a
 * per-thread buffer that libgpurma reads through
 * GPURMA_BOOTSTRAP_MPI_ERROR_SYMBOL.
 *
 * Timeouts: blocking MPI collectives cannot be interrupted, so exchanges use
 * the nonblocking forms and poll them against the deadline. On a timeout the
 * request is left pending on plugin-owned buffers (the caller's buffers are
 * never handed to MPI, so it may free them) and the bootstrap refuses further
 * use. MPI itself gives no notice of a dead peer; the launcher normally ends
 * the job, and peer_failed is never set here.
 */
#include <mpi.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bootstrap.h"
#include "gpurma.h"
#include "mpi_plugin.h"

#define PLUGIN_EXPORT __attribute__((visibility("default")))

typedef struct {
    MPI_Comm comm;
    int      broken; /* a request timed out and is still pending */
} mpi_state_t;

static __thread char plugin_error[512];

PLUGIN_EXPORT const char *gpurma_bootstrap_mpi_plugin_error(void) { return plugin_error; }

__attribute__((format(printf, 2, 3))) static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plugin_error, sizeof(plugin_error), fmt, ap);
    va_end(ap);
    return status;
}

static int fail_mpi(const char *what, int mpi_rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof(text), "MPI error %d", mpi_rc);
    return fail(GPURMA_ERR_BOOTSTRAP, "%s failed: %s", what, text);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Drives req to completion or until timeout_ms passes. Sleeps grow to 100 us
 * so that oversubscribed runs leave the CPU to the peers they wait for. */
static int wait_request(mpi_state_t *st, MPI_Request *req, int64_t timeout_ms, int rank,
                        const char *what)
{
    if (timeout_ms <= 0) {
        int rc = MPI_Wait(req, MPI_STATUS_IGNORE);
        return rc == MPI_SUCCESS ? 0 : fail_mpi(what, rc);
    }
    uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
    for (uint64_t iter = 0;; iter++) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return fail_mpi(what, rc);
        if (done)
            return 0;
        if (now_ns() > deadline) {
            st->broken = 1;
            return fail(GPURMA_ERR_TIMEOUT,
                        "mpi bootstrap: rank %d timed out after %lld ms in %s (MPI does not say "
                        "which rank is missing)", rank, (long long)timeout_ms, what);
        }
        if (iter > 1000) {
            struct timespec pause = {0, iter < 10000 ? 10000 : 100000};
            nanosleep(&pause, NULL);
        }
    }
}

static int mpi_allgather(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    mpi_state_t *st = bs->impl;
    if (st->broken)
        return fail(GPURMA_ERR_BOOTSTRAP, "mpi bootstrap unusable after an earlier timeout");
    if (len > INT_MAX)
        return fail(GPURMA_ERR_UNSUPPORTED,
                    "mpi bootstrap: allgather of %zu bytes per rank exceeds MPI's int count", len);
    if (len == 0)
        return bs->ops->barrier(bs);

    /* Plugin-owned copies: if the request times out it stays pending, and MPI
     * must not then write into memory the caller has reused. */
    size_t total = len * (size_t)bs->size;
    char *send = malloc(len), *recv = malloc(total);
    if (!send || !recv) {
        free(send);
        free(recv);
        return fail(GPURMA_ERR_NO_MEMORY, "mpi bootstrap: no memory for %zu bytes", total);
    }
    memcpy(send, mine, len);
    MPI_Request req;
    int rc = MPI_Iallgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, st->comm, &req);
    if (rc != MPI_SUCCESS) {
        free(send);
        free(recv);
        return fail_mpi("MPI_Iallgather", rc);
    }
    rc = wait_request(st, &req, bs->timeout_ms, bs->rank, "MPI_Iallgather");
    if (rc == GPURMA_ERR_TIMEOUT)
        return rc; /* buffers stay with the pending request */
    if (rc == 0)
        memcpy(all, recv, total);
    free(send);
    free(recv);
    return rc;
}

static int mpi_barrier(gpurma_bootstrap_t *bs)
{
    mpi_state_t *st = bs->impl;
    if (st->broken)
        return fail(GPURMA_ERR_BOOTSTRAP, "mpi bootstrap unusable after an earlier timeout");
    MPI_Request req;
    int rc = MPI_Ibarrier(st->comm, &req);
    if (rc != MPI_SUCCESS)
        return fail_mpi("MPI_Ibarrier", rc);
    return wait_request(st, &req, bs->timeout_ms, bs->rank, "MPI_Ibarrier");
}

static void mpi_abort(gpurma_bootstrap_t *bs, int code, const char *why)
{
    mpi_state_t *st = bs->impl;
    (void)why; /* gpurma_abort has logged it; MPI_Abort takes no text */
    MPI_Abort(st->comm, code);
}

static void mpi_finalize(gpurma_bootstrap_t *bs)
{
    mpi_state_t *st = bs->impl;
    int finalized = 1;
    MPI_Finalized(&finalized);
    /* A communicator with a request still pending cannot be freed safely. */
    if (!finalized && !st->broken)
        MPI_Comm_free(&st->comm);
    free(st);
    bs->impl = NULL;
}

static const gpurma_bootstrap_ops_t mpi_ops = {
    .size      = sizeof(gpurma_bootstrap_ops_t),
    .name      = "mpi",
    .allgather = mpi_allgather,
    .barrier   = mpi_barrier,
    .abort     = mpi_abort,
    .finalize  = mpi_finalize,
};

PLUGIN_EXPORT int gpurma_bootstrap_mpi_plugin_open(void *mpi_comm, int64_t timeout_ms,
                                                   gpurma_bootstrap_t **out)
{
    /* Checks that the prototype matches the contract in bootstrap.h. */
    gpurma_bootstrap_mpi_open_fn self_check = gpurma_bootstrap_mpi_plugin_open;
    (void)self_check;

    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return fail(GPURMA_ERR_NOT_INITIALIZED,
                    "MPI is not initialized (call MPI_Init before gpurma_init)");

    mpi_state_t *st = calloc(1, sizeof(*st));
    gpurma_bootstrap_t *bs = calloc(1, sizeof(*bs));
    if (!st || !bs) {
        free(st);
        free(bs);
        return fail(GPURMA_ERR_NO_MEMORY, "mpi bootstrap: no memory");
    }
    /* A private communicator keeps our traffic apart from the application's. */
    int rc = MPI_Comm_dup(*(MPI_Comm *)mpi_comm, &st->comm);
    if (rc != MPI_SUCCESS) {
        free(st);
        free(bs);
        return fail_mpi("MPI_Comm_dup", rc);
    }
    MPI_Comm_set_errhandler(st->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(st->comm, &bs->rank);
    MPI_Comm_size(st->comm, &bs->size);
    bs->ops         = &mpi_ops;
    bs->timeout_ms  = timeout_ms;
    bs->failed_rank = -1;
    bs->impl        = st;
    *out = bs;
    return 0;
}
