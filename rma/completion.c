/*
 * completion.c - completion and ordering of one-sided operations, named as
 * MPI-3 names them: flush = remote completion (MPI_Win_flush), flush_local =
 * local completion (MPI_Win_flush_local), win_fence = MPI_Win_fence (a
 * collective), order = per-peer ordering (shmem_fence). The table beside
 * MPI, OpenSHMEM, NVSHMEM and NCCL GIN is in docs/mpi-rma.md.
 */
#include "rma.h"

/* Applies fn once per distinct engine serving peer (or every peer). */
static int for_engines(gpurma_win_t w, int peer, const char *op,
                       int (*fn)(const gpurma_engine_ops_t *, gpurma_win_t, int))
{
    int rc = peer == GPURMA_ALL_PEERS ? gpurma_win_check(w) : gpurma_check_peer(w, op, peer);
    if (rc)
        return rc;
    if (peer != GPURMA_ALL_PEERS)
        return fn(w->engines[peer], w, peer);
    const gpurma_engine_ops_t *done[GPURMA_ENGINE_KINDS] = {0};
    int ndone = 0;
    for (int i = 0; i < w->size && !rc; i++) {
        const gpurma_engine_ops_t *e = w->engines[i];
        int seen = 0;
        for (int k = 0; k < ndone; k++)
            seen |= done[k] == e;
        if (seen)
            continue;
        if (ndone < GPURMA_ENGINE_KINDS)
            done[ndone++] = e;
        rc = fn(e, w, GPURMA_ALL_PEERS);
    }
    return rc;
}

static int do_flush_local(const gpurma_engine_ops_t *e, gpurma_win_t w, int peer)
{
    return e->flush(w, peer);
}
static int do_flush_remote(const gpurma_engine_ops_t *e, gpurma_win_t w, int peer)
{
    return peer == GPURMA_ALL_PEERS ? e->quiet(w) : e->flush_remote(w, peer);
}
static int do_fence(const gpurma_engine_ops_t *e, gpurma_win_t w, int peer)
{
    (void)peer;
    return e->fence(w);
}

/* Completion calls also say when a target is known dead: what was sent to
 * it is lost, even where the stores themselves "completed" (mem engine). */
GPURMA_API gpurma_status_t gpurma_flush_local(gpurma_win_t w, int peer)
{
    int rc = for_engines(w, peer, "flush_local", do_flush_local);
    return rc ? rc : gpurma_team_check_alive(w->team, peer, "flush_local");
}

GPURMA_API gpurma_status_t gpurma_flush(gpurma_win_t w, int peer)
{
    int rc = for_engines(w, peer, "flush", do_flush_remote);
    return rc ? rc : gpurma_team_check_alive(w->team, peer, "flush");
}

GPURMA_API gpurma_status_t gpurma_quiet(gpurma_win_t w)
{
    int rc = for_engines(w, GPURMA_ALL_PEERS, "quiet", do_flush_remote);
    return rc ? rc : gpurma_team_check_alive(w->team, -1, "quiet");
}

GPURMA_API gpurma_status_t gpurma_order(gpurma_win_t w)
{
    return for_engines(w, GPURMA_ALL_PEERS, "order", do_fence);
}

GPURMA_API gpurma_status_t gpurma_fence(gpurma_win_t w)
{
    return gpurma_order(w);
}

/* MPI_Win_fence: this rank's operations complete at their targets, then the
 * team's barrier (which orders every member's earlier stores before every
 * member's later loads), so that after it each member reads what any member
 * put before it. */
GPURMA_API gpurma_status_t gpurma_win_fence(gpurma_win_t w)
{
    int rc = gpurma_quiet(w);
    return rc ? rc : w->team->sync->barrier(w->team);
}
