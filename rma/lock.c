/*
 * lock.c - MPI-3 passive-target synchronisation: lock/unlock (shared,
 * exclusive), lock_all/unlock_all, win_sync.
 *
 * Each user window gets a companion window of one 64-bit lock word per rank
 * (made with it, freed with it; host memory; the same engine choice), so
 * that the words are reached by the engines' own atomics on every path:
 * CPU atomics on the node, UCX atomics across nodes. A word holds the number
 * of shared holders in its low 32 bits and EXCLUSIVE above them:
 *   shared:    fetch_add(1); if EXCLUSIVE was set, take it back and retry;
 *   exclusive: compare_and_swap(0 -> EXCLUSIVE) until it succeeds;
 *   unlock:    flush(peer) (remote completion, as MPI_Win_unlock), then
 *              fetch_add(-1) or fetch_add(-EXCLUSIVE).
 * What this process holds is kept per target, so a wrong unlock is an
 * error, not a corrupted word. Waits are bounded like every other wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma.h"

#define LOCK_WORD_EXCLUSIVE ((uint64_t)1 << 32)

static void locks_destroy(struct gpurma_win_s *w);

int gpurma_win_locks_create(struct gpurma_win_s *w, const gpurma_win_params_t *p)
{
    gpurma_win_params_t lp;
    memset(&lp, 0, sizeof(lp));
    lp.field_mask = GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                    GPURMA_WIN_FIELD_NUM_COUNTERS;
    lp.mem_kind = GPURMA_MEM_HOST;
    lp.num_signals = 1;
    lp.num_counters = 1;
    uint64_t mask = p ? p->field_mask : 0;
    if (mask & GPURMA_WIN_FIELD_ENGINE) {
        lp.field_mask |= GPURMA_WIN_FIELD_ENGINE;
        lp.engine = p->engine;
    }
    if (mask & GPURMA_WIN_FIELD_CONTEXTS) {
        lp.field_mask |= GPURMA_WIN_FIELD_CONTEXTS;
        lp.contexts = p->contexts;
    }
    w->lock_held = calloc((size_t)w->size, sizeof(*w->lock_held));
    int rc = w->lock_held ? GPURMA_SUCCESS
                          : gpurma_set_error(GPURMA_ERR_NO_MEMORY, "rank %d: lock table",
                                             w->ctx->rank);
    /* Every rank enters the build (it agrees on failures itself). */
    gpurma_exchange_t ex = w->team->sync->exchange(w->team);
    struct gpurma_win_s *lw = NULL;
    int brc = gpurma_win_build(w->team, &ex, GPURMA_WIN_ALLOCATED, NULL, 8, &lp, 1, &lw);
    if (!rc)
        rc = brc;
    if (rc) {
        if (lw) {
            gpurma_win_destroy(lw);
            free(lw);
        }
        free(w->lock_held);
        w->lock_held = NULL;
        return rc;
    }
    *(uint64_t *)lw->base = 0;
    w->lockwin = lw;
    w->on_destroy = locks_destroy;
    return GPURMA_SUCCESS;
}

static void locks_destroy(struct gpurma_win_s *w)
{
    if (w->lockwin) {
        gpurma_win_destroy(w->lockwin);
        free(w->lockwin);
        w->lockwin = NULL;
    }
    free(w->lock_held);
    w->lock_held = NULL;
}

static int lock_word_op(gpurma_win_t w, int peer, gpurma_atomic_kind_t kind, uint64_t v,
                        uint64_t compare, uint64_t *old)
{
    struct gpurma_win_s *lw = w->lockwin;
    return lw->engines[peer]->atomic(lw, peer, kind, 0, v, compare, old);
}

static int check_lockable(gpurma_win_t w, const char *op)
{
    int rc = gpurma_win_check(w);
    if (!rc && !w->lockwin)
        rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                              "rank %d: %s: this window has no lock words (a library window)",
                              w->ctx->rank, op);
    return rc;
}

/* One attempt; *got says whether the lock is now held. */
static int try_lock(gpurma_win_t w, int peer, gpurma_lock_type_t type, int *got)
{
    uint64_t old = 0;
    int rc;
    *got = 0;
    if (type == GPURMA_LOCK_EXCLUSIVE) {
        rc = lock_word_op(w, peer, GPURMA_ATOMIC_CAS, LOCK_WORD_EXCLUSIVE, 0, &old);
        *got = !rc && old == 0;
        return rc;
    }
    rc = lock_word_op(w, peer, GPURMA_ATOMIC_FETCH_ADD, 1, 0, &old);
    if (rc)
        return rc;
    if (!(old & LOCK_WORD_EXCLUSIVE)) {
        *got = 1;
        return GPURMA_SUCCESS;
    }
    return lock_word_op(w, peer, GPURMA_ATOMIC_FETCH_ADD, (uint64_t)-1, 0, &old);
}

static int acquire(gpurma_win_t w, int peer, gpurma_lock_type_t type, const char *op)
{
    int expected = 0;
    if (!__atomic_compare_exchange_n(&w->lock_held[peer], &expected, -(int)type, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: this process already holds a lock on peer %d",
                                w->ctx->rank, op, peer);
    struct gpurma_ctx_s *ctx = w->ctx;
    uint64_t start = gpurma_now_ns(), next_check = start + ctx->liveness_ns, slow = 0;
    char what[80];
    snprintf(what, sizeof(what), "%s(%s, peer %d)", op,
             type == GPURMA_LOCK_EXCLUSIVE ? "exclusive" : "shared", peer);
    for (;;) {
        int got, rc = try_lock(w, peer, type, &got);
        if (!rc && got) {
            __atomic_store_n(&w->lock_held[peer], (int)type, __ATOMIC_RELEASE);
            return GPURMA_SUCCESS;
        }
        if (!rc) {
            gpurma_ctx_progress(ctx);
            rc = gpurma_wait_stalled(w->team, start, gpurma_now_ns(), &next_check, 0, 0, what,
                                     peer);
        }
        if (rc) {
            __atomic_store_n(&w->lock_held[peer], 0, __ATOMIC_RELEASE);
            return rc;
        }
        gpurma_backoff(slow++);
    }
}

static int release(gpurma_win_t w, int peer, const char *op)
{
    int held = __atomic_load_n(&w->lock_held[peer], __ATOMIC_ACQUIRE);
    if (held != GPURMA_LOCK_SHARED && held != GPURMA_LOCK_EXCLUSIVE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: this process holds no lock on peer %d",
                                w->ctx->rank, op, peer);
    /* What was issued under the lock is complete at the target first. */
    int rc = gpurma_flush(w, peer);
    uint64_t old;
    int urc = lock_word_op(w, peer, GPURMA_ATOMIC_FETCH_ADD,
                           held == GPURMA_LOCK_EXCLUSIVE ? (uint64_t)0 - LOCK_WORD_EXCLUSIVE
                                                         : (uint64_t)-1,
                           0, &old);
    __atomic_store_n(&w->lock_held[peer], 0, __ATOMIC_RELEASE);
    return rc ? rc : urc;
}

GPURMA_API gpurma_status_t gpurma_win_lock(gpurma_win_t w, gpurma_lock_type_t type, int peer)
{
    int rc = check_lockable(w, "win_lock");
    if (!rc)
        rc = gpurma_check_peer(w, "win_lock", peer);
    if (!rc && type != GPURMA_LOCK_SHARED && type != GPURMA_LOCK_EXCLUSIVE)
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                              "rank %d: win_lock: type %d is not SHARED or EXCLUSIVE",
                              w->ctx->rank, (int)type);
    return rc ? rc : acquire(w, peer, type, "win_lock");
}

GPURMA_API gpurma_status_t gpurma_win_unlock(gpurma_win_t w, int peer)
{
    int rc = check_lockable(w, "win_unlock");
    if (!rc)
        rc = gpurma_check_peer(w, "win_unlock", peer);
    return rc ? rc : release(w, peer, "win_unlock");
}

/* Shared on every target, as MPI_Win_lock_all; on failure, what was taken
 * is given back. */
GPURMA_API gpurma_status_t gpurma_win_lock_all(gpurma_win_t w)
{
    int rc = check_lockable(w, "win_lock_all");
    for (int p = 0; !rc && p < w->size; p++) {
        rc = acquire(w, p, GPURMA_LOCK_SHARED, "win_lock_all");
        if (rc) {
            char text[512];
            snprintf(text, sizeof(text), "%s", gpurma_error_text());
            while (p-- > 0)
                (void)release(w, p, "win_lock_all");
            return gpurma_set_error(rc, "%s", text);
        }
    }
    return rc;
}

GPURMA_API gpurma_status_t gpurma_win_unlock_all(gpurma_win_t w)
{
    int rc = check_lockable(w, "win_unlock_all");
    if (rc)
        return rc;
    for (int p = 0; p < w->size; p++)
        if (__atomic_load_n(&w->lock_held[p], __ATOMIC_ACQUIRE) != GPURMA_LOCK_SHARED)
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                    "rank %d: win_unlock_all: no shared lock on peer %d "
                                    "(lock_all was not called, or peer %d was unlocked alone)",
                                    w->ctx->rank, p, p);
    rc = gpurma_flush(w, GPURMA_ALL_PEERS);
    for (int p = 0; p < w->size; p++) {
        uint64_t old;
        int urc = lock_word_op(w, p, GPURMA_ATOMIC_FETCH_ADD, (uint64_t)-1, 0, &old);
        __atomic_store_n(&w->lock_held[p], 0, __ATOMIC_RELEASE);
        if (!rc)
            rc = urc;
    }
    return rc;
}

/* The memory model is unified (one copy of the window, which loads, stores
 * and every engine reach): a full barrier orders the caller's own accesses
 * with its and its peers' one-sided operations. */
GPURMA_API gpurma_status_t gpurma_win_sync(gpurma_win_t w)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return rc;
}
