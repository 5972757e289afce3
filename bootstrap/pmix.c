/*
 * pmix.c - the PMIx bootstrap (mpirun, srun --mpi=pmix, prrte).
 *
 * An allgather is one PMIx_Fence with PMIX_COLLECT_DATA: every rank puts its
 * block under a key unique to the exchange, the fence distributes all
 * blocks, and each block is then read from the local store. The fence is
 * issued nonblocking and waited for here, so that the wait honours
 * timeout_ms and stops as soon as the event handler reports a dead peer,
 * whatever the server does with PMIX_TIMEOUT.
 *
 * Built only with PMIx (configure --with-pmix); pmix_none.c stands in
 * otherwise, and pmix_detect.c recognizes a PMIx launch in both builds.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "gpurma_internal.h"

#include <pmix.h>
#include <pthread.h>

typedef struct {
    gpurma_bootstrap_t *bs;
    pmix_proc_t         me;
    uint64_t            exchanges; /* makes each allgather's key unique */
    size_t              handler_id;
    int                 handler_registered;
    int                 broken; /* a fence was abandoned; later fences would not match */
} pmix_state_t;

/* PMIx event handlers receive no user pointer, and a process has one PMIx
 * client, so the handler finds the open bootstrap here. */
static pthread_mutex_t active_mu = PTHREAD_MUTEX_INITIALIZER;
static pmix_state_t   *active;

/* A fence request outlives an abandoned wait (timeout, dead peer): the
 * callback and the waiter each hold a reference, the last one frees it. */
typedef struct {
    int           done;
    pmix_status_t status;
    int           refs;
    size_t        ninfo;
    pmix_info_t   info[2];
    pmix_proc_t   job;
} fence_request_t;

static void fence_request_release(fence_request_t *req)
{
    if (__atomic_sub_fetch(&req->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        for (size_t i = 0; i < req->ninfo; i++)
            PMIX_INFO_DESTRUCT(&req->info[i]);
        free(req);
    }
}

static void fence_complete(pmix_status_t status, void *cbdata)
{
    fence_request_t *req = cbdata;
    req->status = status;
    __atomic_store_n(&req->done, 1, __ATOMIC_RELEASE);
    fence_request_release(req);
}

static void mark_peer_failed(gpurma_bootstrap_t *bs, int rank)
{
    if (__atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE))
        return; /* keep the first report */
    __atomic_store_n(&bs->failed_rank, rank, __ATOMIC_RELAXED);
    __atomic_store_n(&bs->peer_failed, 1, __ATOMIC_RELEASE);
}

/* --------------------------------------------------------------- events */

/* Events that mean a process of the job is gone. */
static pmix_status_t failure_events[] = {
#ifdef PMIX_ERR_PROC_ABORTED
    PMIX_ERR_PROC_ABORTED,
#endif
#ifdef PMIX_ERR_PROC_REQUESTED_ABORT
    PMIX_ERR_PROC_REQUESTED_ABORT,
#endif
#ifdef PMIX_ERR_PROC_ABORTING
    PMIX_ERR_PROC_ABORTING,
#endif
#ifdef PMIX_PROC_TERMINATED
    PMIX_PROC_TERMINATED,
#endif
#ifdef PMIX_EVENT_PROC_TERMINATED
    PMIX_EVENT_PROC_TERMINATED,
#endif
#ifdef PMIX_ERR_PROC_TERM_WO_SYNC
    PMIX_ERR_PROC_TERM_WO_SYNC,
#endif
#ifdef PMIX_ERR_PROC_KILLED_BY_CMD
    PMIX_ERR_PROC_KILLED_BY_CMD,
#endif
#ifdef PMIX_ERR_PROC_ABORTED_BY_SIG
    PMIX_ERR_PROC_ABORTED_BY_SIG,
#endif
#ifdef PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED
    PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED,
#endif
#ifdef PMIX_ERR_EXIT_NONZERO_TERM
    PMIX_ERR_EXIT_NONZERO_TERM,
#endif
#ifdef PMIX_ERR_LOST_CONNECTION
    PMIX_ERR_LOST_CONNECTION,
#endif
#ifdef PMIX_ERR_UNREACH
    PMIX_ERR_UNREACH,
#endif
#ifdef PMIX_ERR_JOB_ABORTED
    PMIX_ERR_JOB_ABORTED,
#endif
#ifdef PMIX_ERR_JOB_ABORTED_BY_SIG
    PMIX_ERR_JOB_ABORTED_BY_SIG,
#endif
#ifdef PMIX_EVENT_NODE_DOWN
    PMIX_EVENT_NODE_DOWN,
#endif
};

/* Termination events also announce normal exits; those carry exit code 0. */
static int is_plain_termination(pmix_status_t status)
{
#ifdef PMIX_PROC_TERMINATED
    if (status == PMIX_PROC_TERMINATED)
        return 1;
#endif
#ifdef PMIX_EVENT_PROC_TERMINATED
    if (status == PMIX_EVENT_PROC_TERMINATED)
        return 1;
#endif
    return 0;
}

/* How a fence ends when a participant dies: Open MPI 4's server completes
 * it with PARTIAL_SUCCESS; others use the failure codes themselves. */
static int means_dead_peer(pmix_status_t status)
{
    if (status == PMIX_ERR_PARTIAL_SUCCESS)
        return 1;
    for (size_t i = 0; i < sizeof(failure_events) / sizeof(failure_events[0]); i++)
        if (status == failure_events[i])
            return 1;
    return 0;
}

static void on_pmix_event(size_t handler_id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                          size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    (void)handler_id;
    (void)results;
    (void)nresults;
    const pmix_proc_t *affected = NULL;
    int have_exit_code = 0, exit_code = 0;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
            info[i].value.type == PMIX_PROC) {
            affected = info[i].value.data.proc;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
                   info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray &&
                   info[i].value.data.darray->type == PMIX_PROC &&
                   info[i].value.data.darray->size > 0) {
            affected = info[i].value.data.darray->array;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT) {
            have_exit_code = 1;
            exit_code      = info[i].value.data.integer;
        }
    }
    if (!affected && source && source->rank != PMIX_RANK_UNDEF &&
        source->rank != PMIX_RANK_WILDCARD)
        affected = source;

    /* A rank that ended normally is not a failure; without an exit code a
     * bare termination notice cannot be told apart from one, so it is not
     * treated as one either (the fence wait still times out). */
    int ignore = is_plain_termination(status) && (!have_exit_code || exit_code == 0);

    pthread_mutex_lock(&active_mu);
    if (active && !ignore) {
        int same_job = !affected || PMIX_CHECK_NSPACE(affected->nspace, active->me.nspace);
        int rank     = affected && same_job && affected->rank < (pmix_rank_t)active->bs->size
                           ? (int)affected->rank : -1;
        if (same_job && rank != active->bs->rank) {
            GPURMA_WARN(GPURMA_SUB_BOOT, "PMIx event '%s': rank %d failed",
                        PMIx_Error_string(status), rank);
            mark_peer_failed(active->bs, rank);
        }
    }
    pthread_mutex_unlock(&active_mu);

    /* Let other handlers (the MPI library's, for one) see the event too. */
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* ------------------------------------------------------------ exchanges */

static int pmix_broken_error(pmix_state_t *st)
{
    return gpurma_set_error(GPURMA_ERR_BOOTSTRAP,
                            "pmix bootstrap on rank %d is unusable: an earlier fence was "
                            "abandoned (timeout or failed peer)", st->bs->rank);
}

static int fence(pmix_state_t *st, int collect, const char *what)
{
    gpurma_bootstrap_t *bs = st->bs;
    fence_request_t *req = calloc(1, sizeof(*req));
    if (!req)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "pmix bootstrap: no memory");
    req->job      = st->me;
    req->job.rank = PMIX_RANK_WILDCARD;
    if (collect) {
        bool yes = true;
        PMIX_INFO_LOAD(&req->info[req->ninfo++], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    }
    if (bs->timeout_ms > 0) {
        int seconds = (int)((bs->timeout_ms + 999) / 1000);
        PMIX_INFO_LOAD(&req->info[req->ninfo++], PMIX_TIMEOUT, &seconds, PMIX_INT);
    }
    req->refs = 2; /* the callback's and ours */
    pmix_status_t prc = PMIx_Fence_nb(&req->job, 1, req->info, req->ninfo,
                                      fence_complete, req);
    if (prc != PMIX_SUCCESS) {
        req->refs = 1;
        fence_request_release(req);
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "pmix bootstrap: PMIx_Fence_nb (%s) on rank "
                                "%d failed: %s", what, bs->rank, PMIx_Error_string(prc));
    }

    uint64_t start = gpurma_now_ns();
    int rc = 0;
    for (uint64_t iter = 0; !__atomic_load_n(&req->done, __ATOMIC_ACQUIRE); iter++) {
        if (__atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE)) {
            int failed = __atomic_load_n(&bs->failed_rank, __ATOMIC_RELAXED);
            rc = gpurma_set_error(GPURMA_ERR_PEER_FAILED,
                                  "pmix bootstrap: %s on rank %d abandoned: rank %d failed",
                                  what, bs->rank, failed);
            break;
        }
        if (bs->timeout_ms > 0 && gpurma_now_ns() - start > (uint64_t)bs->timeout_ms * 1000000u) {
            rc = gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                  "pmix bootstrap: %s on rank %d timed out after %lld ms waiting "
                                  "for the other ranks to reach the fence (PMIx does not say "
                                  "which)", what, bs->rank, (long long)bs->timeout_ms);
            break;
        }
        gpurma_backoff(iter);
    }
    if (rc) {
        st->broken = 1;
    } else if (req->status != PMIX_SUCCESS) {
        st->broken = 1;
        if (req->status == PMIX_ERR_TIMEOUT) {
            rc = gpurma_set_error(GPURMA_ERR_TIMEOUT, "pmix bootstrap: fence for %s on rank %d "
                                  "timed out in the PMIx server", what, bs->rank);
        } else if (means_dead_peer(req->status) ||
                   __atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE)) {
            mark_peer_failed(bs, -1);
            int failed = __atomic_load_n(&bs->failed_rank, __ATOMIC_RELAXED);
            char who[64] = "a rank of the job died (PMIx does not say which)";
            if (failed >= 0)
                snprintf(who, sizeof(who), "rank %d failed", failed);
            rc = gpurma_set_error(GPURMA_ERR_PEER_FAILED, "pmix bootstrap: fence for %s on rank "
                                  "%d failed (%s): %s", what, bs->rank,
                                  PMIx_Error_string(req->status), who);
        } else {
            rc = gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "pmix bootstrap: fence for %s on rank %d "
                                  "failed: %s", what, bs->rank, PMIx_Error_string(req->status));
        }
    }
    fence_request_release(req);
    return rc;
}

static int pmix_barrier(gpurma_bootstrap_t *bs)
{
    pmix_state_t *st = bs->impl;
    if (st->broken)
        return pmix_broken_error(st);
    return fence(st, 0, "barrier");
}

static int pmix_allgather(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    pmix_state_t *st = bs->impl;
    if (st->broken)
        return pmix_broken_error(st);
    if (len == 0)
        return fence(st, 0, "allgather of 0 bytes");

    /* A fresh key per exchange, because values put earlier stay in the
     * store and a reused key could return a stale block. */
    char key[PMIX_MAX_KEYLEN + 1];
    snprintf(key, sizeof(key), "gpurma.ag.%llu", (unsigned long long)st->exchanges++);
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type          = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)mine;
    value.data.bo.size  = len;
    pmix_status_t prc = PMIx_Put(PMIX_GLOBAL, key, &value); /* copies the bytes */
    if (prc == PMIX_SUCCESS)
        prc = PMIx_Commit();
    if (prc != PMIX_SUCCESS)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "pmix bootstrap: PMIx_Put/Commit of %zu "
                                "bytes on rank %d failed: %s", len, bs->rank,
                                PMIx_Error_string(prc));
    int rc = fence(st, 1, "allgather");
    if (rc)
        return rc;

    pmix_info_t get_info;
    size_t nget_info = 0;
    if (bs->timeout_ms > 0) {
        int seconds = (int)((bs->timeout_ms + 999) / 1000);
        PMIX_INFO_LOAD(&get_info, PMIX_TIMEOUT, &seconds, PMIX_INT);
        nget_info = 1;
    }
    for (int r = 0; r < bs->size && !rc; r++) {
        pmix_proc_t peer;
        pmix_value_t *got = NULL;
        PMIX_LOAD_PROCID(&peer, st->me.nspace, (pmix_rank_t)r);
        prc = PMIx_Get(&peer, key, nget_info ? &get_info : NULL, nget_info, &got);
        if (prc != PMIX_SUCCESS || !got)
            rc = gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "pmix bootstrap: rank %d cannot read "
                                  "rank %d's block '%s': %s", bs->rank, r, key,
                                  PMIx_Error_string(prc));
        else if (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != len)
            rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG, "pmix bootstrap: allgather size "
                                  "mismatch: rank %d passed %zu bytes, rank %d passed %zu",
                                  r, got->type == PMIX_BYTE_OBJECT ? got->data.bo.size : 0,
                                  bs->rank, len);
        else
            memcpy((char *)all + (size_t)r * len, got->data.bo.bytes, len);
        if (got)
            PMIX_VALUE_RELEASE(got);
    }
    if (nget_info)
        PMIX_INFO_DESTRUCT(&get_info);
    return rc;
}

static void pmix_abort(gpurma_bootstrap_t *bs, int code, const char *why)
{
    (void)bs;
    /* NULL procs: the whole namespace. Returns when the server refuses. */
    PMIx_Abort(code, why ? why : "gpurma_abort", NULL, 0);
}

static void pmix_finalize(gpurma_bootstrap_t *bs)
{
    pmix_state_t *st = bs->impl;
    if (st->handler_registered)
        PMIx_Deregister_event_handler(st->handler_id, NULL, NULL);
    pthread_mutex_lock(&active_mu);
    if (active == st)
        active = NULL;
    pthread_mutex_unlock(&active_mu);
    PMIx_Finalize(NULL, 0);
    free(st);
    bs->impl = NULL;
}

static const gpurma_bootstrap_ops_t pmix_ops = {
    .size      = sizeof(gpurma_bootstrap_ops_t),
    .name      = "pmix",
    .allgather = pmix_allgather,
    .barrier   = pmix_barrier,
    .abort     = pmix_abort,
    .finalize  = pmix_finalize,
};

static int job_size(pmix_state_t *st, int *size)
{
    pmix_proc_t job;
    pmix_value_t *value = NULL;
    PMIX_LOAD_PROCID(&job, st->me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t prc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &value);
    if (prc != PMIX_SUCCESS || !value)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "pmix bootstrap: PMIx_Get(PMIX_JOB_SIZE) "
                                "failed: %s", PMIx_Error_string(prc));
    int rc = 0;
    switch (value->type) {
    case PMIX_UINT32: *size = (int)value->data.uint32; break;
    case PMIX_INT:    *size = value->data.integer; break;
    case PMIX_UINT16: *size = value->data.uint16; break;
    default:
        rc = gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "pmix bootstrap: PMIX_JOB_SIZE has "
                              "unexpected type %d", (int)value->type);
    }
    PMIX_VALUE_RELEASE(value);
    return rc;
}

static int pmix_open(const gpurma_bootstrap_args_t *args, gpurma_bootstrap_t **out)
{
    pmix_state_t *st = calloc(1, sizeof(*st));
    gpurma_bootstrap_t *bs = calloc(1, sizeof(*bs));
    if (!st || !bs) {
        free(st);
        free(bs);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "pmix bootstrap: no memory");
    }
    pmix_status_t prc = PMIx_Init(&st->me, NULL, 0);
    if (prc != PMIX_SUCCESS) {
        free(st);
        free(bs);
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "PMIx_Init failed: %s (was the process "
                                "started by mpirun or srun --mpi=pmix?)", PMIx_Error_string(prc));
    }
    st->bs          = bs;
    bs->ops         = &pmix_ops;
    bs->impl        = st;
    bs->rank        = (int)st->me.rank;
    bs->timeout_ms  = args->timeout_ms;
    bs->failed_rank = -1;
    int rc = job_size(st, &bs->size);
    if (!rc && (bs->size < 1 || bs->rank >= bs->size))
        rc = gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "pmix bootstrap: rank %d outside job size %d",
                              bs->rank, bs->size);
    if (rc) {
        PMIx_Finalize(NULL, 0);
        free(st);
        free(bs);
        return rc;
    }

    pthread_mutex_lock(&active_mu);
    active = st;
    pthread_mutex_unlock(&active_mu);
    /* Blocking registration: returns the handler id, or a negative error. */
    prc = PMIx_Register_event_handler(failure_events,
                                      sizeof(failure_events) / sizeof(failure_events[0]), NULL,
                                      0, on_pmix_event, NULL, NULL);
    if (prc >= 0) {
        st->handler_id         = (size_t)prc;
        st->handler_registered = 1;
    } else {
        /* Peers on this node are still watched by the waits themselves. */
        GPURMA_INFO(GPURMA_SUB_BOOT, "pmix bootstrap: cannot register for failure events (%s); "
                    "a dead peer on another node will show as a timeout",
                    PMIx_Error_string(prc));
    }
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "pmix bootstrap: namespace %s rank %d size %d", st->me.nspace,
                 bs->rank, bs->size);
    *out = bs;
    return 0;
}

const gpurma_bootstrap_entry_t gpurma_bootstrap_pmix = {
    .name   = "pmix",
    .detect = gpurma_bootstrap_pmix_detect,
    .open   = pmix_open,
};
