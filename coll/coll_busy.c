/*
 * coll_busy.c - the team's in-use flag: one call of gpurma_coll.h at a
 * time per team and rank (the collectives, coll_register,
 * coll_deregister). Two at once on one team (two threads; the API does not
 * allow it) would pair with the peers' calls in an order nobody chose, or
 * change the registrations a running collective looks up, so the second is
 * refused, the first fails when it ends (leave), and the team's calls fail
 * from then on at this rank: its peers then fail too (refused or timed
 * out) rather than match a call of the wrong thread. The scratch
 * protocol's own flag (gpurma_dcoll__begin) covers kernels and device
 * calls; this one covers every algorithm of the host API, ce included,
 * for the whole call.
 */
#include "coll_internal.h"
#include "gpurma_internal.h"

int gpurma_coll_team_claim(struct gpurma_team_s *t)
{
    int idle = 0;
    return __atomic_compare_exchange_n(&t->coll_busy, &idle, 1, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

void gpurma_coll_team_unclaim(struct gpurma_team_s *t)
{
    __atomic_store_n(&t->coll_busy, 0, __ATOMIC_RELEASE);
}

int gpurma_coll_team_enter(struct gpurma_team_s *t, const char *what)
{
    /* A member known dead (t->gone, set with the context's record of it):
     * the call could only fail, and its kernel would touch the dead
     * member's memory, which its death may have released (a GPU fault,
     * under MPS every process's on the GPU). The liveness check names it. */
    if (__atomic_load_n(t->gone, __ATOMIC_ACQUIRE))
        return gpurma_team_check_alive(t, -1, what);
    if (__atomic_load_n(&t->coll_misused, __ATOMIC_ACQUIRE))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: refused: two collective calls ran on this team at "
                                "the same time before (another thread); its collectives fail "
                                "from then on: free the team",
                                t->ctx->rank, what);
    if (!gpurma_coll_team_claim(t)) {
        __atomic_store_n(&t->coll_misused, 1, __ATOMIC_RELEASE);
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: refused: another collective, coll_register or "
                                "coll_deregister runs on this team at the same time (another "
                                "thread); the team's collectives fail from now on: free the team",
                                t->ctx->rank, what);
    }
    return GPURMA_SUCCESS;
}

int gpurma_coll_team_leave(struct gpurma_team_s *t, const char *what, int rc)
{
    gpurma_coll_team_unclaim(t);
    if (rc == GPURMA_SUCCESS && __atomic_load_n(&t->coll_misused, __ATOMIC_ACQUIRE))
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                              "rank %d: %s: another collective, coll_register or coll_deregister "
                              "was called on this team while this one ran (another thread): its "
                              "peers may have matched the other call; the team's collectives "
                              "fail from now on: free the team",
                              t->ctx->rank, what);
    return rc;
}
