/*
 * comm.c - communicators: unique ids, init (rank, config, scalable, all),
 * split, shrink, finalize, destroy, abort, revoke, and the queries.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_internal.h"

#define CONFIG_MAGIC 0xcafebeefu

_Static_assert(sizeof(ncclUniqueId) == sizeof(gpurma_unique_id_t), "unique id sizes differ");

NCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    if (!uniqueId)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
    gpurma_unique_id_t id;
    gpurma_status_t rc = gpurma_get_unique_id(&id);
    if (rc != GPURMA_SUCCESS)
        return gpurma_nccl_fail_rc(NULL, rc, "ncclGetUniqueId");
    memcpy(uniqueId->internal, id.internal, sizeof id.internal);
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclGetUniqueId)

/* ----------------------------------------------------------- creation */

/* The fields of config the caller's header has (size says how many). */
static ncclResult_t read_config(const ncclConfig_t *config, ncclComm_t comm)
{
    comm->blocking = 1;
    if (!config)
        return ncclSuccess;
    if (config->magic != CONFIG_MAGIC || config->size < offsetof(ncclConfig_t, cgaClusterSize))
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "config was not set up with NCCL_CONFIG_INITIALIZER (magic 0x%x, "
                                "size %zu)", config->magic, config->size);
    if (config->blocking != NCCL_CONFIG_UNDEF_INT && config->blocking != 0 &&
        config->blocking != 1)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "config->blocking is %d: expected 0 or 1", config->blocking);
    comm->blocking = config->blocking != 0;
    if (config->size >= offsetof(ncclConfig_t, collnetEnable) && config->commName)
        snprintf(comm->name, sizeof comm->name, "%s", config->commName);
    return ncclSuccess;
}

static ncclComm_t comm_new(void)
{
    ncclComm_t comm = calloc(1, sizeof *comm);
    if (!comm)
        return NULL;
    comm->magic = GPURMA_NCCL_COMM_MAGIC;
    comm->device = -1;
    comm->blocking = 1;
    comm->init_state = ncclInProgress;
    pthread_mutex_init(&comm->lock, NULL);
    return comm;
}

/* A communicator from comm_new that never got a team (or NULL). */
static void comm_discard(ncclComm_t comm)
{
    if (!comm)
        return;
    pthread_mutex_destroy(&comm->lock);
    free(comm);
}

/* What a communicator holds beyond its team: the send/recv window and the
 * real NCCL's communicator. Collective over the team. */
static ncclResult_t comm_setup(ncclComm_t comm)
{
    comm->rank = gpurma_team_rank(comm->team);
    comm->size = gpurma_team_size(comm->team);
    ncclResult_t res = gpurma_nccl_p2p_setup(comm);
    if (res != ncclSuccess)
        return res;
    gpurma_nccl_fallback_comm_init(comm);
    if (comm->gpu && gpurma_nccl_gpu_load_kernels())
        return gpurma_nccl_fail(comm, ncclUnhandledCudaError,
                                "init: the NCCL layer's kernels could not be loaded on GPU %d",
                                comm->device);
    if (comm->gpu && gpurma_nccl_gpu_probe_create(&comm->gpu_probe))
        gpurma_nccl_log("rank %d: no probe stream: ncclCommGetAsyncError will not see a GPU "
                        "fault", comm->rank);
    /* How a run shows it went through this library and not NVIDIA's. */
    if (getenv("GPURMA_NCCL_DEBUG"))
        gpurma_nccl_log("rank %d of %d: communicator on %s %d, send/recv slots of %zu bytes%s",
                        comm->rank, comm->size, comm->gpu ? "GPU" : "the host backend, device",
                        comm->gpu ? comm->device : -1, comm->p2p_chunk,
                        comm->fallback ? ", fallback NCCL communicator made" : "");
    return ncclSuccess;
}

static void release_ctx(nccl_ctx_ref_t *ref, int finalize)
{
    if (!ref || __atomic_sub_fetch(&ref->refs, 1, __ATOMIC_ACQ_REL))
        return;
    if (finalize)
        gpurma_finalize(ref->ctx);
    free(ref);
}

ncclResult_t gpurma_nccl_comm_init_now(ncclComm_t comm)
{
    gpurma_init_params_t p = {.field_mask = GPURMA_INIT_FIELD_UNIQUE_ID,
                              .unique_id = &comm->init_id,
                              .rank = comm->init_rank,
                              .size = comm->init_size};
    /* NCCL takes the caller's current GPU; GPURMA_DEVICE, when set, wins
     * (GPURMA_DEVICE=host runs the host backend). */
    const char *env = getenv("GPURMA_DEVICE");
    if (!env || !env[0]) {
        p.field_mask |= GPURMA_INIT_FIELD_DEVICE;
        p.device = comm->device >= 0 ? comm->device : GPURMA_DEVICE_HOST;
    }
    nccl_ctx_ref_t *ref = calloc(1, sizeof *ref);
    if (!ref)
        return gpurma_nccl_fail(comm, ncclSystemError, "init: out of memory");
    gpurma_status_t rc = gpurma_init(&p, &ref->ctx);
    if (rc != GPURMA_SUCCESS) {
        free(ref);
        ncclResult_t res = gpurma_nccl_fail_rc(comm, rc, "ncclCommInitRank: gpurma_init");
        __atomic_store_n(&comm->init_state, res, __ATOMIC_RELEASE);
        return res;
    }
    ref->refs = 1;
    comm->ctx = ref;
    comm->team = gpurma_team_world(ref->ctx);
    ncclResult_t res = comm_setup(comm);
    if (res != ncclSuccess) {
        comm->ctx = NULL;
        release_ctx(ref, 1);
    }
    __atomic_store_n(&comm->init_state, res, __ATOMIC_RELEASE);
    return res;
}

static void *init_in_background(void *arg)
{
    ncclComm_t comm = arg;
    /* a new thread: the caller's GPU, for what setup allocates and loads */
    if (comm->device >= 0)
        gpurma_nccl_gpu_set_device(comm->device);
    gpurma_nccl_comm_init_now(comm);
    return NULL;
}

/* Records the init, then runs it: now, at the end of the open group, or on
 * a thread of its own for a non-blocking communicator. */
static ncclResult_t init_rank(ncclComm_t *out, int nranks, const void *id, int rank,
                              const ncclConfig_t *config, const char *call)
{
    if (!out)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "%s: comm is NULL", call);
    *out = NULL;
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "%s: rank %d of %d is not valid",
                                call, rank, nranks);
    ncclComm_t comm = comm_new();
    if (!comm)
        return gpurma_nccl_fail(NULL, ncclSystemError, "%s: out of memory", call);
    ncclResult_t res = read_config(config, comm);
    if (res != ncclSuccess) {
        comm_discard(comm);
        return res;
    }
    memcpy(comm->init_id.internal, id, sizeof comm->init_id.internal);
    comm->init_rank = rank;
    comm->init_size = nranks;
    comm->device = gpurma_nccl_gpu_current_device();
    *out = comm;
    nccl_op_t op = {.kind = NCCL_OP_INIT, .comm = comm};
    if (gpurma_nccl_group_enqueue(&op, &res))
        return res;
    if (!comm->blocking) {
        if (pthread_create(&comm->init_thread, NULL, init_in_background, comm) == 0) {
            comm->init_thread_started = 1;
            return ncclInProgress;
        }
    }
    res = gpurma_nccl_comm_init_now(comm);
    if (res != ncclSuccess) { /* a blocking init that failed leaves nothing */
        *out = NULL;
        comm_discard(comm);
    }
    return res;
}

NCCL_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                             int rank, ncclConfig_t *config)
{
    return init_rank(comm, nranks, commId.internal, rank, config, "ncclCommInitRankConfig");
}
NCCL_PROFILING_ALIAS(ncclCommInitRankConfig)

NCCL_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    return init_rank(comm, nranks, commId.internal, rank, NULL, "ncclCommInitRank");
}
NCCL_PROFILING_ALIAS(ncclCommInitRank)

/* Every rank holds the same nId ids; NCCL spreads its bootstrap over them,
 * gpurma's rendezvous needs one. */
NCCL_API ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank,
                                               int nId, ncclUniqueId *commIds,
                                               ncclConfig_t *config)
{
    if (nId < 1 || !commIds)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "ncclCommInitRankScalable: %d ids at %p", nId, (void *)commIds);
    return init_rank(newcomm, nranks, commIds[0].internal, myrank, config,
                     "ncclCommInitRankScalable");
}
NCCL_PROFILING_ALIAS(ncclCommInitRankScalable)

/* One process, ndev ranks: the group runs their inits side by side. */
NCCL_API ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    if (!comms || ndev < 1)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "ncclCommInitAll: %d devices into %p", ndev, (void *)comms);
    ncclUniqueId id;
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess)
        return res;
    int saved = gpurma_nccl_gpu_current_device();
    ncclGroupStart();
    for (int i = 0; i < ndev && res == ncclSuccess; i++) {
        if (saved >= 0)
            gpurma_nccl_gpu_set_device(devlist ? devlist[i] : i);
        res = ncclCommInitRank(comms + i, ndev, id, i);
    }
    ncclResult_t end = ncclGroupEnd();
    if (saved >= 0)
        gpurma_nccl_gpu_set_device(saved);
    return res != ncclSuccess ? res : end;
}
NCCL_PROFILING_ALIAS(ncclCommInitAll)

/* The split itself (collective over the parent's team): child, made by
 * ncclCommSplit (NULL for NCCL_SPLIT_NOCOLOR), gets its team and what a
 * communicator holds; on failure its init state says so. */
static ncclResult_t split_now(ncclComm_t comm, int color, int key, ncclComm_t child)
{
    gpurma_team_t team = NULL;
    gpurma_status_t rc = gpurma_team_split(
        comm->team, color == NCCL_SPLIT_NOCOLOR ? GPURMA_TEAM_UNDEFINED : color, key, &team);
    ncclResult_t res = rc ? gpurma_nccl_fail_rc(comm, rc, "ncclCommSplit") : ncclSuccess;
    if (res == ncclSuccess && child) {
        __atomic_add_fetch(&comm->ctx->refs, 1, __ATOMIC_ACQ_REL);
        child->ctx = comm->ctx;
        child->team = team;
        child->own_team = 1;
        child->device = comm->device;
        res = comm_setup(child);
        if (res != ncclSuccess) {
            gpurma_team_free(&team);
            release_ctx(child->ctx, 1);
            child->ctx = NULL;
        }
    }
    if (child)
        __atomic_store_n(&child->init_state, res, __ATOMIC_RELEASE);
    return res;
}

ncclResult_t gpurma_nccl_comm_split_now(const nccl_op_t *op)
{
    ncclResult_t res = gpurma_nccl_check_comm(op->comm, "ncclCommSplit");
    if (res != ncclSuccess) {
        if (op->child)
            __atomic_store_n(&op->child->init_state, res, __ATOMIC_RELEASE);
        return res;
    }
    return split_now(op->comm, op->root, op->key, op->child);
}

/* Inside a group the split is queued, as NCCL does: *newcomm is set now
 * and usable once ncclGroupEnd returns (one thread can then split the
 * communicators of several ranks of its process together). */
NCCL_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                    ncclConfig_t *config)
{
    ncclResult_t res = gpurma_nccl_check_comm(comm, "ncclCommSplit");
    if (res == ncclSuccess && !newcomm)
        res = gpurma_nccl_fail(comm, ncclInvalidArgument, "ncclCommSplit: newcomm is NULL");
    if (res == ncclSuccess && color < 0 && color != NCCL_SPLIT_NOCOLOR)
        res = gpurma_nccl_fail(comm, ncclInvalidArgument,
                               "ncclCommSplit: color %d: expected >= 0 or NCCL_SPLIT_NOCOLOR",
                               color);
    if (res != ncclSuccess) {
        gpurma_nccl_group_refuse(res);
        return res;
    }
    *newcomm = NULL;
    ncclComm_t child = NULL;
    if (color != NCCL_SPLIT_NOCOLOR) {
        if (!(child = comm_new()))
            return gpurma_nccl_fail(comm, ncclSystemError, "ncclCommSplit: out of memory");
        if ((res = read_config(config, child)) != ncclSuccess) {
            comm_discard(child);
            return res;
        }
    }
    nccl_op_t op = {.kind = NCCL_OP_SPLIT, .comm = comm, .root = color, .key = key,
                    .child = child};
    if (gpurma_nccl_group_enqueue(&op, &res)) {
        if (res == ncclSuccess)
            *newcomm = child;
        else
            comm_discard(child);
        return res;
    }
    res = split_now(comm, color, key, child);
    if (res != ncclSuccess) {
        comm_discard(child);
        return res;
    }
    *newcomm = child;
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclCommSplit)

/* The excluded ranks do not call: a team split over the parent would wait
 * for them, so the survivors meet again through a unique id that the lowest
 * of them sends the others over the parent's send/recv window. */
NCCL_API ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                                     int excludeRanksCount, ncclComm_t *newcomm,
                                     ncclConfig_t *config, int shrinkFlags)
{
    ncclResult_t res = gpurma_nccl_check_comm(comm, "ncclCommShrink");
    if (res != ncclSuccess)
        return res;
    if (!newcomm || excludeRanksCount < 0 || (excludeRanksCount && !excludeRanksList) ||
        (shrinkFlags & ~NCCL_SHRINK_ABORT))
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "ncclCommShrink: newcomm %p, %d excluded ranks at %p, flags 0x%x",
                                (void *)newcomm, excludeRanksCount, (void *)excludeRanksList,
                                shrinkFlags);
    *newcomm = NULL;
    int *alive = malloc((size_t)comm->size * sizeof *alive);
    if (!alive)
        return gpurma_nccl_fail(comm, ncclSystemError, "ncclCommShrink: out of memory");
    for (int r = 0; r < comm->size; r++)
        alive[r] = 1;
    for (int i = 0; i < excludeRanksCount; i++) {
        int r = excludeRanksList[i];
        if (r < 0 || r >= comm->size || r == comm->rank) {
            free(alive);
            return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                    "ncclCommShrink: excluded rank %d is %s", r,
                                    r == comm->rank ? "the caller" : "not a rank of comm");
        }
        alive[r] = 0;
    }
    int new_rank = 0, new_size = 0;
    for (int r = 0; r < comm->size; r++) {
        new_rank += alive[r] && r < comm->rank;
        new_size += alive[r];
    }
    gpurma_unique_id_t id;
    res = gpurma_nccl_p2p_share_id(comm, alive, &id);
    free(alive);
    if (res != ncclSuccess)
        return res;
    if (shrinkFlags & NCCL_SHRINK_ABORT)
        __atomic_store_n(&comm->revoked, 1, __ATOMIC_RELEASE);
    ncclUniqueId nid;
    memcpy(nid.internal, id.internal, sizeof nid.internal);
    int saved = gpurma_nccl_gpu_current_device();
    if (comm->device >= 0)
        gpurma_nccl_gpu_set_device(comm->device);
    res = init_rank(newcomm, new_size, nid.internal, new_rank, config, "ncclCommShrink");
    if (saved >= 0 && saved != comm->device)
        gpurma_nccl_gpu_set_device(saved);
    return res;
}
NCCL_PROFILING_ALIAS(ncclCommShrink)

/* --------------------------------------------------------- teardown */

static void join_init(ncclComm_t comm)
{
    if (comm->init_thread_started) {
        pthread_join(comm->init_thread, NULL);
        comm->init_thread_started = 0;
    }
}

/* The open group's calls on comm (its init among them) would run on a
 * communicator that is gone: finalize and destroy wait for ncclGroupEnd. */
static ncclResult_t refuse_if_queued(ncclComm_t comm, const char *call)
{
    if (!gpurma_nccl_group_holds(comm, NCCL_OP_KINDS))
        return ncclSuccess;
    return gpurma_nccl_fail(comm->init_state == ncclSuccess ? comm : NULL, ncclInvalidUsage,
                            "%s: the open group (ncclGroupStart without its ncclGroupEnd yet) "
                            "holds calls on this communicator: end the group first",
                            call);
}

/* Operations are complete when their calls return (host) or when their
 * streams get past them (GPU): nothing is left in flight in the library. */
NCCL_API ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    if (!comm || comm->magic != GPURMA_NCCL_COMM_MAGIC)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "ncclCommFinalize: not a live comm");
    ncclResult_t res = refuse_if_queued(comm, "ncclCommFinalize");
    if (res != ncclSuccess)
        return res;
    join_init(comm);
    comm->finalized = 1;
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclCommFinalize)

/* Freeing the window, the team and the context waits for the other ranks,
 * but ncclCommDestroy must not: nccl-tests destroys the communicators of
 * two ranks of one process one after the other on one thread. So a thread
 * of its own does it, and the process waits for those threads at exit
 * (bounded by GPURMA_NCCL_TEARDOWN_S, default 60 s). */
typedef struct teardown {
    pthread_t        thread;
    struct teardown *next;
    int              done;
} teardown_t;

static pthread_mutex_t teardown_lock = PTHREAD_MUTEX_INITIALIZER;
static teardown_t *teardowns;

static void release(ncclComm_t comm)
{
    if (comm->init_state == ncclSuccess) {
        gpurma_nccl_fallback_comm_destroy(comm, 0);
        gpurma_nccl_p2p_teardown(comm);
        gpurma_nccl_gpu_probe_destroy(comm->gpu_probe);
        if (comm->own_team)
            gpurma_team_free(&comm->team);
        release_ctx(comm->ctx, 1);
    }
    if (comm->gpu && comm->scratch)
        gpurma_nccl_gpu_free(comm->scratch);
    else
        free(comm->scratch);
    for (size_t i = 0; i < comm->graph_scratch_n; i++)
        gpurma_nccl_gpu_free(comm->graph_scratch[i]);
    free(comm->graph_scratch);
    comm_discard(comm);
}

typedef struct {
    ncclComm_t  comm;
    teardown_t *entry;
} teardown_arg_t;

static void *teardown_main(void *p)
{
    teardown_arg_t a = *(teardown_arg_t *)p;
    free(p);
    if (a.comm->device >= 0)
        gpurma_nccl_gpu_set_device(a.comm->device);
    release(a.comm);
    __atomic_store_n(&a.entry->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void wait_teardowns(void)
{
    const char *env = getenv("GPURMA_NCCL_TEARDOWN_S");
    long limit = env && *env ? strtol(env, NULL, 10) : 60;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += limit > 0 ? limit : 60;
    pthread_mutex_lock(&teardown_lock);
    for (teardown_t **p = &teardowns; *p;) {
        teardown_t *t = *p;
        if (pthread_timedjoin_np(t->thread, NULL, &until) == 0) {
            *p = t->next;
            free(t);
        } else { /* still running: its entry stays where the thread can find it */
            gpurma_nccl_log("a communicator's teardown did not finish when the process "
                            "ended; peers gone?");
            p = &t->next;
        }
    }
    pthread_mutex_unlock(&teardown_lock);
}

static void reap_teardowns(void)
{
    pthread_mutex_lock(&teardown_lock);
    for (teardown_t **p = &teardowns; *p;) {
        teardown_t *t = *p;
        if (__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
            pthread_join(t->thread, NULL);
            *p = t->next;
            free(t);
        } else {
            p = &t->next;
        }
    }
    pthread_mutex_unlock(&teardown_lock);
}

static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;
static void register_atexit(void) { atexit(wait_teardowns); }

NCCL_API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (comm->magic != GPURMA_NCCL_COMM_MAGIC)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "ncclCommDestroy: %p is not a live communicator", (void *)comm);
    ncclResult_t res = refuse_if_queued(comm, "ncclCommDestroy");
    if (res != ncclSuccess)
        return res;
    join_init(comm);
    if (comm->aborted)
        return ncclSuccess;
    comm->magic = GPURMA_NCCL_COMM_GONE;
    if (comm->init_state != ncclSuccess) { /* nothing shared with peers */
        release(comm);
        return ncclSuccess;
    }
    /* The fallback NCCL's communicator goes here, on the caller's thread:
     * NCCL destroys the ranks of one process one after the other on one
     * thread (nccl-tests -g 2), and two teardown threads destroying them
     * at once crashed it in cuStreamDestroy (2x H100, 2026-11-26). */
    if (comm->fallback) {
        int saved = gpurma_nccl_gpu_current_device();
        if (comm->device >= 0)
            gpurma_nccl_gpu_set_device(comm->device);
        gpurma_nccl_fallback_comm_destroy(comm, 0);
        if (saved >= 0)
            gpurma_nccl_gpu_set_device(saved);
    }
    reap_teardowns();
    pthread_once(&atexit_once, register_atexit);
    teardown_t *t = calloc(1, sizeof *t);
    teardown_arg_t *a = malloc(sizeof *a);
    if (t && a) {
        *a = (teardown_arg_t){comm, t};
        pthread_mutex_lock(&teardown_lock);
        if (pthread_create(&t->thread, NULL, teardown_main, a) == 0) {
            t->next = teardowns;
            teardowns = t;
            pthread_mutex_unlock(&teardown_lock);
            return ncclSuccess;
        }
        pthread_mutex_unlock(&teardown_lock);
    }
    free(t);
    free(a);
    release(comm); /* no thread: do it here */
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclCommDestroy)

/* Local and immediate: nothing collective, since the peers may be gone.
 * The communicator's gpurma resources are left to the end of the process
 * (freeing a window or a context waits for the peers); later calls on it
 * fail with ncclInvalidUsage, and its async error stays set. */
/* Aborted communicators stay listed (reachable) until the process ends:
 * their memory is deliberately kept, not lost. */
static pthread_mutex_t aborted_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aborted {
    ncclComm_t      comm;
    struct aborted *next;
} *aborted_list;

NCCL_API ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (comm->magic != GPURMA_NCCL_COMM_MAGIC)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "ncclCommAbort: %p is not a live communicator", (void *)comm);
    gpurma_nccl_group_drop(comm); /* this thread's open group runs none of its calls */
    if (!__atomic_exchange_n(&comm->aborted, 1, __ATOMIC_ACQ_REL)) {
        struct aborted *a = malloc(sizeof *a);
        if (a) {
            pthread_mutex_lock(&aborted_lock);
            *a = (struct aborted){comm, aborted_list};
            aborted_list = a;
            pthread_mutex_unlock(&aborted_lock);
        }
    }
    gpurma_nccl_set_async(comm, ncclRemoteError);
    gpurma_nccl_fallback_comm_destroy(comm, 1);
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclCommAbort)

NCCL_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
    if (!comm || comm->magic != GPURMA_NCCL_COMM_MAGIC || revokeFlags != NCCL_REVOKE_DEFAULT)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "ncclCommRevoke: comm %p, flags 0x%x (must be 0)", (void *)comm,
                                revokeFlags);
    __atomic_store_n(&comm->revoked, 1, __ATOMIC_RELEASE);
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclCommRevoke)

/* ---------------------------------------------------------- queries */

NCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    if (!comm || comm->magic != GPURMA_NCCL_COMM_MAGIC || !asyncError)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "ncclCommGetAsyncError: comm %p, asyncError %p", (void *)comm,
                                (void *)asyncError);
    ncclResult_t st = __atomic_load_n(&comm->init_state, __ATOMIC_ACQUIRE);
    if (st == ncclSuccess)
        st = __atomic_load_n(&comm->async_error, __ATOMIC_ACQUIRE);
    /* Work on a stream reports no error to the host: a dead peer, and a
     * kernel that failed (a collective whose wait timed out stops its
     * kernel with a trap, which breaks the GPU's context), are looked for
     * here, which is what torch's watchdog polls. */
    if (st == ncclSuccess && !comm->aborted) {
        gpurma_status_t rc = gpurma_team_check_peers(comm->team);
        const char *why = NULL;
        if (rc != GPURMA_SUCCESS) {
            st = gpurma_nccl_fail_rc(comm, rc, "ncclCommGetAsyncError");
        } else if (gpurma_nccl_gpu_probe_failed(comm->gpu_probe, &why)) {
            st = gpurma_nccl_fail(comm, ncclUnhandledCudaError,
                                  "ncclCommGetAsyncError: the GPU's context failed (%s): a "
                                  "kernel faulted, or a collective timed out waiting for a peer "
                                  "(GPURMA_TIMEOUT_MS; its 'gpurma: rank' line says which)",
                                  why);
            gpurma_nccl_set_async(comm, st);
        }
    }
    if (st == ncclSuccess && comm->init_thread_started)
        join_init(comm); /* finished: reap the thread */
    *asyncError = st;
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclCommGetAsyncError)

static ncclResult_t query(const ncclComm_t comm, const void *out, const char *call)
{
    if (!out)
        return gpurma_nccl_fail(comm, ncclInvalidArgument, "%s: output pointer is NULL", call);
    if (!comm || comm->magic != GPURMA_NCCL_COMM_MAGIC)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument, "%s: not a live communicator", call);
    if (__atomic_load_n(&comm->init_state, __ATOMIC_ACQUIRE) != ncclSuccess)
        return gpurma_nccl_fail(comm, ncclInvalidUsage, "%s: the communicator is not initialized",
                                call);
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    ncclResult_t res = query(comm, count, "ncclCommCount");
    if (res == ncclSuccess)
        *count = comm->size;
    return res;
}
NCCL_PROFILING_ALIAS(ncclCommCount)

NCCL_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    ncclResult_t res = query(comm, rank, "ncclCommUserRank");
    if (res == ncclSuccess)
        *rank = comm->rank;
    return res;
}
NCCL_PROFILING_ALIAS(ncclCommUserRank)

/* -1 on the host backend: the communicator has no GPU. */
NCCL_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
    ncclResult_t res = query(comm, device, "ncclCommCuDevice");
    if (res == ncclSuccess)
        *device = comm->gpu ? comm->device : -1;
    return res;
}
NCCL_PROFILING_ALIAS(ncclCommCuDevice)
