/*
 * context.c - initialization, finalization and context queries.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "coll.h"
#include "gpu.h"
#include "rma.h"

#define INIT_FIELDS_KNOWN                                                               \
    (GPURMA_INIT_FIELD_BOOTSTRAP | GPURMA_INIT_FIELD_MPI_COMM | GPURMA_INIT_FIELD_DEVICE |   \
     GPURMA_INIT_FIELD_TIMEOUT_MS | GPURMA_INIT_FIELD_UNIQUE_ID)

static int exchange_over_bootstrap(const gpurma_exchange_t *ex, const void *mine, void *all,
                                   size_t len)
{
    return gpurma_bootstrap_allgather(ex->arg, mine, all, len);
}

/* The device asked for: the init parameter, else GPURMA_DEVICE (read and
 * checked once, with the rest of the configuration). */
static int requested_device(const gpurma_init_params_t *p, int *want)
{
    if (p && (p->field_mask & GPURMA_INIT_FIELD_DEVICE))
        *want = p->device;
    else
        *want = (int)gpurma_config()->device_value;
    return GPURMA_SUCCESS;
}

/* Checks the requested device before anything else is set up. */
static int check_device(const gpurma_init_params_t *p)
{
    int want;
    int rc = requested_device(p, &want);
    if (rc)
        return rc;
    if (want < GPURMA_DEVICE_HOST)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "init: device %d is not valid", want);
    return GPURMA_SUCCESS;
}

/* GPURMA_DEVICE_AUTO spreads the node's processes over its GPUs (node-local
 * rank modulo the GPU count; several processes may share one GPU), so it is
 * resolved once the bootstrap knows the local rank. The chosen GPU becomes
 * current for the initializing thread. */
static int select_device(const gpurma_init_params_t *p, int local_rank, int *device)
{
    int want;
    int rc = requested_device(p, &want);
    if (rc)
        return rc;
    int ngpus = want == GPURMA_DEVICE_HOST ? 0 : gpurma_gpu_count();
    if (want == GPURMA_DEVICE_HOST || (want == GPURMA_DEVICE_AUTO && ngpus == 0)) {
        *device = GPURMA_DEVICE_HOST;
        return GPURMA_SUCCESS;
    }
    if (want == GPURMA_DEVICE_AUTO)
        want = (local_rank > 0 ? local_rank : 0) % ngpus;
    if (want >= ngpus)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "init: GPU %d requested but %d GPU(s) are usable", want, ngpus);
    rc = gpurma_gpu_use(want);
    if (rc)
        return rc;
    *device = want;
    return GPURMA_SUCCESS;
}

static void bury_team(struct gpurma_team_s *t)
{
    gpurma_team_destroy(t);
    t->magic = GPURMA_GONE_MAGIC;
    gpurma_handle_bury(t);
}

/* Releases everything the context holds. Windows and teams the user did
 * not free go with it; their handles, and the context's own when it was
 * handed out, stay readable as tombstones that say so. */
static void ctx_release(struct gpurma_ctx_s *ctx, int handed_out)
{
    while (ctx->wins) {
        struct gpurma_win_s *w = ctx->wins;
        ctx->wins = w->next_live;
        gpurma_win_destroy(w);
        w->magic = GPURMA_GONE_MAGIC;
        gpurma_handle_bury(w);
    }
    while (ctx->teams) {
        struct gpurma_team_s *t = ctx->teams;
        ctx->teams = t->next_live;
        bury_team(t);
    }
    if (ctx->node)
        bury_team(ctx->node);
    if (ctx->world)
        bury_team(ctx->world);
    /* Engines stop their threads after the windows that use them. */
    for (int i = __atomic_load_n(&ctx->nhooks, __ATOMIC_ACQUIRE); i-- > 0;)
        if (ctx->hooks[i]->shutdown)
            ctx->hooks[i]->shutdown(ctx);
    if (ctx->bs)
        gpurma_bootstrap_close(ctx->bs);
    free(ctx->pids);
    free(ctx->dead);
    pthread_mutex_destroy(&ctx->lock);
    ctx->magic = GPURMA_DEAD_MAGIC;
    if (handed_out) {
        gpurma_handle_bury(ctx);
    } else {
        gpurma_handle_forget(ctx);
        free(ctx);
    }
}

GPURMA_API gpurma_status_t gpurma_init_version(unsigned api_version, const gpurma_init_params_t *p,
                                               gpurma_ctx_t *out)
{
    if (!out)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "init: ctx pointer is NULL");
    *out = NULL;
    if ((api_version >> 16) != GPURMA_VERSION_MAJOR ||
        (api_version & 0xffff) > GPURMA_VERSION_MINOR)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "init: program built against gpurma API %u.%u, library is %d.%d",
                                api_version >> 16, api_version & 0xffff, GPURMA_VERSION_MAJOR,
                                GPURMA_VERSION_MINOR);
    if (gpurma_config_check())
        return GPURMA_ERR_INVALID_ARG; /* the message names the variable */
    const gpurma_config_t *cfg = gpurma_config();
    uint64_t mask = p ? p->field_mask : 0;
    if (mask & ~(uint64_t)INIT_FIELDS_KNOWN)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "init: field_mask 0x%llx has unknown bits 0x%llx",
                                (unsigned long long)mask,
                                (unsigned long long)(mask & ~(uint64_t)INIT_FIELDS_KNOWN));
    int64_t timeout_ms = (mask & GPURMA_INIT_FIELD_TIMEOUT_MS) ? p->timeout_ms : cfg->timeout_ms;
    /* The same bound as GPURMA_TIMEOUT_MS: never overflows in ns. */
    if (timeout_ms <= 0 || timeout_ms > GPURMA_CFG_TIMEOUT_MS_MAX)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "init: timeout %lld ms: expected 1 to %lld ms (7 days)",
                                (long long)timeout_ms, (long long)GPURMA_CFG_TIMEOUT_MS_MAX);

    struct gpurma_ctx_s *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "init: out of memory");
    pthread_mutex_init(&ctx->lock, NULL);
    ctx->timeout_ns = (uint64_t)timeout_ms * 1000000ull;
    ctx->liveness_ns = (uint64_t)cfg->liveness_ms * 1000000ull;

    ctx->device = GPURMA_DEVICE_HOST;
    int rc = check_device(p);
    if (!rc && (mask & GPURMA_INIT_FIELD_UNIQUE_ID)) {
        gpurma_uid_explicit_t uid;
        if (mask & (GPURMA_INIT_FIELD_BOOTSTRAP | GPURMA_INIT_FIELD_MPI_COMM))
            rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG, "init: a unique id names the "
                                  "bootstrap: bootstrap or mpi_comm given too");
        if (!rc)
            rc = gpurma_uid_decode_id(p->unique_id, p->unique_id ? GPURMA_UNIQUE_ID_BYTES : 0,
                                      p->rank, p->size, &uid);
        if (!rc)
            rc = gpurma_bootstrap_open_uid(&uid, timeout_ms, &ctx->bs);
    } else if (!rc) {
        rc = gpurma_bootstrap_open((mask & GPURMA_INIT_FIELD_BOOTSTRAP) ? p->bootstrap : NULL,
                                   (mask & GPURMA_INIT_FIELD_MPI_COMM) ? p->mpi_comm : NULL,
                                   timeout_ms, &ctx->bs);
    }
    if (!rc)
        rc = select_device(p, ctx->bs->local_rank, &ctx->device);
    if (rc) {
        ctx_release(ctx, 0);
        return rc;
    }
    ctx->rank = ctx->bs->rank;
    ctx->size = ctx->bs->size;
    /* More ranks than cores on the node (CI runs 8 on 2): spinning would
     * only delay the rank being waited for. */
    cpu_set_t cpus;
    int ncpu = sched_getaffinity(0, sizeof(cpus), &cpus) ? 1 : CPU_COUNT(&cpus);
    if (cfg->spin_us > 0 && ctx->bs->local_size <= ncpu)
        ctx->spin_ns = (uint64_t)cfg->spin_us * 1000ull;
    ctx->magic = GPURMA_CTX_MAGIC;
    gpurma_log_set_rank(ctx->rank);
    /* Known before the world team is built: its checks look the context up. */
    int reg = gpurma_handle_register(ctx, GPURMA_HANDLE_CTX);

    ctx->pids = calloc((size_t)ctx->size, sizeof(pid_t));
    ctx->dead = calloc((size_t)ctx->size, sizeof(*ctx->dead));
    int *ranks = malloc((size_t)ctx->size * sizeof(int));
    pid_t me = getpid();
    rc = reg                               ? reg
         : ctx->pids && ctx->dead && ranks ? gpurma_bootstrap_allgather(ctx->bs, &me, ctx->pids, sizeof(me))
                            : gpurma_set_error(GPURMA_ERR_NO_MEMORY, "init: out of memory");
    if (!rc) {
        for (int i = 0; i < ctx->size; i++)
            ranks[i] = i;
        gpurma_exchange_t ex = {exchange_over_bootstrap, ctx->bs, NULL, ctx->size, ctx->rank};
        rc = gpurma_team_create(ctx, ranks, ctx->size, ctx->rank, 1, &ex, &ctx->world);
    }
    free(ranks);
    if (!rc)
        rc = gpurma_team_split_internal(ctx->world, ctx->bs->node_id, ctx->rank, 1, &ctx->node);
    if (rc) {
        ctx_release(ctx, 0);
        return rc;
    }
    GPURMA_INFO(GPURMA_SUB_INIT,
                "rank %d of %d, node %d of %d (local rank %d of %d), bootstrap %s, %s backend",
                ctx->rank, ctx->size, ctx->bs->node_id, ctx->bs->num_nodes, ctx->bs->local_rank,
                ctx->bs->local_size, ctx->bs->ops->name,
                ctx->device == GPURMA_DEVICE_HOST ? "host" : "GPU");
    if (ctx->device >= 0)
        GPURMA_INFO(GPURMA_SUB_INIT, "using GPU %d", ctx->device);
    *out = ctx;
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_finalize(gpurma_ctx_t ctx)
{
    int rc = gpurma_ctx_check(ctx);
    if (rc)
        return rc;
    /* Peers may still be reading our segments until everyone is here. */
    rc = gpurma_barrier(ctx->world);
    /* Every rank is here: from now on a closed connection is a peer that
     * finished, not one that died. */
    __atomic_store_n(&ctx->finalizing, 1, __ATOMIC_RELEASE);
    ctx_release(ctx, 1);
    return rc;
}

GPURMA_API void gpurma_abort(gpurma_ctx_t ctx, int code, const char *why)
{
    int live = ctx && !gpurma_ctx_check(ctx);
    fprintf(stderr, "[gpurma %d] gpurma_abort(%d): %s\n", live ? ctx->rank : -1, code,
            why ? why : "");
    if (live) { /* the launcher ends the other ranks */
        void (*end_job)(gpurma_bootstrap_t *, int, const char *) = ctx->bs->ops->abort;
        end_job(ctx->bs, code, why);
    }
    _exit(code ? code : 1);
}

GPURMA_API int gpurma_rank(gpurma_ctx_t ctx)
{
    return GPURMA_QUERY(gpurma_ctx_check(ctx)) ? -1 : ctx->rank;
}

GPURMA_API int gpurma_size(gpurma_ctx_t ctx)
{
    return GPURMA_QUERY(gpurma_ctx_check(ctx)) ? -1 : ctx->size;
}

GPURMA_API int gpurma_node_rank(gpurma_ctx_t ctx)
{
    return GPURMA_QUERY(gpurma_ctx_check(ctx)) ? -1 : ctx->bs->local_rank;
}

GPURMA_API int gpurma_node_size(gpurma_ctx_t ctx)
{
    return GPURMA_QUERY(gpurma_ctx_check(ctx)) ? -1 : ctx->bs->local_size;
}

GPURMA_API const char *gpurma_bootstrap_name(gpurma_ctx_t ctx)
{
    return GPURMA_QUERY(gpurma_ctx_check(ctx)) ? NULL : ctx->bs->ops->name;
}

GPURMA_API gpurma_status_t gpurma_device_in_use(gpurma_ctx_t ctx, int *device)
{
    int rc = gpurma_ctx_check(ctx);
    if (rc)
        return rc;
    if (!device)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "gpurma_device_in_use: device is NULL");
    *device = ctx->device;
    return GPURMA_SUCCESS;
}

GPURMA_API const char *gpurma_last_error_message(gpurma_ctx_t ctx)
{
    /* Messages are per thread: a thread's last failed call is what it
     * wants explained, whichever context that call was given (a failed
     * init leaves none). ctx is there for symmetry with the other calls. */
    (void)ctx;
    return gpurma_error_text();
}

GPURMA_API const char *gpurma_version_string(void)
{
#define GPURMA_STR2(x) #x
#define GPURMA_STR(x) GPURMA_STR2(x)
    return GPURMA_STR(GPURMA_VERSION_MAJOR) "." GPURMA_STR(GPURMA_VERSION_MINOR) "." GPURMA_STR(
        GPURMA_VERSION_PATCH);
}
