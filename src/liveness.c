/*
 * liveness.c - noticing dead peers, and the bounded wait built on it.
 *
 * On a node, a peer is dead when its process is gone or a zombie; checking
 * costs a kill(0) and, rarely, a read of /proc, so waits do it only every
 * GPURMA_LIVENESS_MS. Peers on other nodes are reported by the bootstrap
 * (PMIx events, closed sockets).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "port.h"
#include "rma.h"

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

int gpurma_liveness_check(struct gpurma_ctx_s *ctx, const int *world_ranks, int n)
{
    gpurma_bootstrap_t *bs = ctx->bs;
    if (__atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE)) {
        int r = __atomic_load_n(&bs->failed_rank, __ATOMIC_RELAXED);
        return r >= 0 ? r : ctx->rank == 0 ? 1 : 0;
    }
    int my_node = bs->node_of[ctx->rank];
    for (int i = 0; i < n; i++) {
        int r = world_ranks[i];
        if (r != ctx->rank && bs->node_of[r] == my_node && process_gone(ctx->pids[r]))
            return r;
    }
    return -1;
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
        if (gpurma_port_poll(ctx)) {
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
        if (dead >= 0)
            return gpurma_set_error(GPURMA_ERR_PEER_FAILED,
                                    "rank %d: %s: rank %d has died (value %llu, wanted %llu)",
                                    ctx->rank, what, dead, (unsigned long long)v,
                                    (unsigned long long)value);
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
