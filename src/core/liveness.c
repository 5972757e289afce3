/*
 * liveness.c - noticing dead peers, and the bounded wait built on it.
 *
 * On a node, a peer is dead when its process is gone or a zombie; checking
 * costs a kill(0) and, rarely, a read of /proc, so waits do it only every
 * GPURMA_LIVENESS_MS. Peers on other nodes are reported by the bootstrap
 * (PMIx events, closed sockets) and by engines (UCX endpoints), through
 * gpurma_peer_failed; the layers above learn of deaths through their
 * peer_failed hooks. Context hooks (registration, progress) live here too,
 * since every wait runs them.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "gpurma_device.h" /* gpurma_dev_compare */

static int process_gone(pid_t pid)
{
    if (kill(pid, 0) == 0) {
        /* A zombie still answers kill(0) until its parent reaps it, so a
         * live peer costs a read of its /proc stat at every check. */
        char path[64], buf[256];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            return 0;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *state = strrchr(buf, ')');
        return state && (state[2] == 'Z' || state[2] == 'X');
    }
    return errno == ESRCH;
}

/* A team that has the dead rank as a member says so to its kernels (its
 * gone word), whose waits for the dead member then end. */
static void mark_team(struct gpurma_team_s *t, int world_rank)
{
    for (int i = 0; t && t->gone && i < t->size; i++)
        if (t->world_ranks[i] == world_rank) {
            __atomic_store_n(t->gone, 1, __ATOMIC_RELEASE);
            return;
        }
}

void gpurma_peer_failed(struct gpurma_ctx_s *ctx, int world_rank, const char *how)
{
    if (world_rank < 0 || world_rank >= ctx->size || world_rank == ctx->rank ||
        __atomic_exchange_n(&ctx->dead[world_rank], 1, __ATOMIC_ACQ_REL))
        return;
    __atomic_fetch_add(&ctx->ndead, 1, __ATOMIC_RELEASE);
    GPURMA_WARN(GPURMA_SUB_INIT, "rank %d: rank %d has failed (%s)", ctx->rank, world_rank, how);
    pthread_mutex_lock(&ctx->lock);
    mark_team(ctx->world, world_rank);
    mark_team(ctx->node, world_rank);
    for (struct gpurma_team_s *t = ctx->teams; t; t = t->next_live)
        mark_team(t, world_rank);
    pthread_mutex_unlock(&ctx->lock);
    int n = __atomic_load_n(&ctx->nhooks, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (ctx->hooks[i]->peer_failed)
            ctx->hooks[i]->peer_failed(ctx, world_rank);
}

int gpurma_ctx_add_hooks(struct gpurma_ctx_s *ctx, const gpurma_ctx_hooks_t *hooks)
{
    int rc = GPURMA_SUCCESS;
    pthread_mutex_lock(&ctx->lock);
    int n = ctx->nhooks, seen = 0;
    for (int i = 0; i < n; i++)
        seen |= ctx->hooks[i] == hooks;
    if (!seen && n == GPURMA_CTX_MAX_HOOKS)
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "context: more than %d hook tables",
                              GPURMA_CTX_MAX_HOOKS);
    else if (!seen) {
        ctx->hooks[n] = hooks;
        __atomic_store_n(&ctx->nhooks, n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx->lock);
    return rc;
}

int gpurma_ctx_progress(struct gpurma_ctx_s *ctx)
{
    int n = __atomic_load_n(&ctx->nhooks, __ATOMIC_ACQUIRE), work = 0;
    for (int i = 0; i < n; i++)
        if (ctx->hooks[i]->progress)
            work += ctx->hooks[i]->progress(ctx);
    return work;
}

/* How a message names what known_dead found. */
static const char *dead_text(int dead, char *buf, size_t len)
{
    if (dead == GPURMA_RANK_UNKNOWN)
        return "a rank of the job (the launcher did not say which)";
    snprintf(buf, len, "rank %d", dead);
    return buf;
}

/* A dead member among the known failures, GPURMA_RANK_UNKNOWN when the
 * bootstrap reports a death without saying whose (every team fails then),
 * or -1. */
static int known_dead(struct gpurma_ctx_s *ctx, const int *world_ranks, int n)
{
    gpurma_bootstrap_t *bs = ctx->bs;
    if (__atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE)) {
        int r = __atomic_load_n(&bs->failed_rank, __ATOMIC_RELAXED);
        if (r < 0)
            return GPURMA_RANK_UNKNOWN;
        gpurma_peer_failed(ctx, r, "the bootstrap reported it");
    }
    if (!__atomic_load_n(&ctx->ndead, __ATOMIC_ACQUIRE))
        return -1;
    for (int i = 0; i < n; i++)
        if (__atomic_load_n(&ctx->dead[world_ranks[i]], __ATOMIC_ACQUIRE))
            return world_ranks[i];
    return -1;
}

int gpurma_liveness_check(struct gpurma_ctx_s *ctx, const int *world_ranks, int n)
{
    int dead = known_dead(ctx, world_ranks, n);
    if (dead != -1)
        return dead;
    gpurma_bootstrap_t *bs = ctx->bs;
    int my_node = bs->node_of[ctx->rank];
    for (int i = 0; i < n; i++) {
        int r = world_ranks[i];
        if (r != ctx->rank && bs->node_of[r] == my_node && process_gone(ctx->pids[r])) {
            gpurma_peer_failed(ctx, r, "its process is gone");
            return r;
        }
    }
    return -1;
}

int gpurma_team_check_alive(struct gpurma_team_s *team, int peer, const char *what)
{
    struct gpurma_ctx_s *ctx = team->ctx;
    const int *members = peer >= 0 ? &team->world_ranks[peer] : team->world_ranks;
    int n = peer >= 0 ? 1 : team->size;
    int dead = known_dead(ctx, members, n);
    if (dead == -1) { /* look again at most once per liveness period */
        uint64_t now = gpurma_now_ns(), next = __atomic_load_n(&ctx->next_liveness, __ATOMIC_RELAXED);
        if (now >= next && __atomic_compare_exchange_n(&ctx->next_liveness, &next,
                                                       now + ctx->liveness_ns, 0,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            dead = gpurma_liveness_check(ctx, team->world_ranks, team->size);
        if (dead >= 0 && peer >= 0 && dead != members[0])
            dead = known_dead(ctx, members, 1);
    }
    if (dead == -1)
        return GPURMA_SUCCESS;
    char text[64];
    return gpurma_set_error(GPURMA_ERR_PEER_FAILED, "rank %d: %s: %s has died", ctx->rank, what,
                            dead_text(dead, text, sizeof(text)));
}

int gpurma_wait_u64(struct gpurma_team_s *team, const uint64_t *p, gpurma_cmp_t cmp,
                    uint64_t value, const char *what, int peer)
{
    struct gpurma_ctx_s *ctx = team->ctx;
    uint64_t start = gpurma_now_ns(), now = start, next_check = start + ctx->liveness_ns;
    /* Spin while it is cheap (each rank has a core): a yield or a timer
     * sleep costs tens of microseconds to wake from. */
    uint64_t spin_end = start + ctx->spin_ns, slow = 0;
    for (uint64_t iter = 0;; iter++) {
        uint64_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
        if (gpurma_dev_compare(v, cmp, value))
            return GPURMA_SUCCESS;
        /* What this wait is for may be this process's own port work, or a
         * peer's UCX operation that needs our worker progressed. */
        if (gpurma_ctx_progress(ctx)) {
            slow = 0;
            continue;
        }
        if ((iter & 63) != 63) {
            if (now < spin_end)
                gpurma_backoff(0);
            else
                gpurma_backoff(slow++);
            continue;
        }
        now = gpurma_now_ns();
        int rc = gpurma_wait_stalled(team, start, now, &next_check, v, value, what, peer);
        /* What a peer sent before it died (or closed its connection) counts. */
        if (rc && gpurma_dev_compare(__atomic_load_n(p, __ATOMIC_ACQUIRE), cmp, value))
            return GPURMA_SUCCESS;
        if (rc)
            return rc;
        gpurma_backoff(now < spin_end ? 0 : slow++);
    }
}

int gpurma_wait_stalled(struct gpurma_team_s *team, uint64_t start, uint64_t now,
                        uint64_t *next_check, uint64_t v, uint64_t value, const char *what,
                        int peer)
{
    struct gpurma_ctx_s *ctx = team->ctx;
    if (now >= *next_check) {
        *next_check = now + ctx->liveness_ns;
        int dead = gpurma_liveness_check(ctx, team->world_ranks, team->size);
        char text[64];
        if (dead != -1)
            return gpurma_set_error(GPURMA_ERR_PEER_FAILED,
                                    "rank %d: %s: %s has died (value %llu, wanted %llu)",
                                    ctx->rank, what, dead_text(dead, text, sizeof(text)),
                                    (unsigned long long)v, (unsigned long long)value);
    }
    if (now - start > ctx->timeout_ns) {
        char peer_text[48] = "";
        if (peer >= 0 && peer < team->size)
            snprintf(peer_text, sizeof(peer_text), " (peer: world rank %d)",
                     team->world_ranks[peer]);
        return gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                "rank %d: %s timed out after %llu ms: value %llu, wanted %llu%s",
                                ctx->rank, what, (unsigned long long)(ctx->timeout_ns / 1000000),
                                (unsigned long long)v, (unsigned long long)value, peer_text);
    }
    return GPURMA_SUCCESS;
}

/* A probe for callers that have no wait of their own to learn it from (an
 * NCCL-style asynchronous error query while the work runs on a stream). */
GPURMA_API gpurma_status_t gpurma_team_check_peers(gpurma_team_t team)
{
    int rc = gpurma_team_check(team);
    return rc ? (gpurma_status_t)rc
              : (gpurma_status_t)gpurma_team_check_alive(team, -1, "team_check_peers");
}
