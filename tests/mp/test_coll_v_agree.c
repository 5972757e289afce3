/*
 * test_coll_v_agree.c - rank 0 calls alltoallv while its peers call other
 * collectives, which the API does not allow: no peer may return SUCCESS.
 * alltoallv first agrees on the counts (an exchange of one uint64 per
 * pair, then a reduction of two uint64 by MAX); before the fix those ran
 * as a plain alltoall and allreduce, so a peer's gpurma_alltoall of one
 * uint64 paired with the first and returned SUCCESS with rank 0's
 * send_counts as its data, and a following gpurma_allreduce of two
 * uint64 by MAX paired with the second. GPURMA_COLL_ALGO=oneshot_ll (set
 * here) runs the peers' calls with the packets the agreement uses, as
 * every team spread over nodes or larger than LL16's does by itself. Each
 * case on a team of its own (the team is out of step after it).
 */
#include "common.h"
#include "gpurma_coll.h"
#include "settle.h"

#define TIMEOUT_MS 1000

static void one_case(int peers_reduce_too)
{
    gpurma_team_t t;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    const int n = t_size;
    size_t *counts = t_malloc(4 * (size_t)n * sizeof(size_t));
    size_t *sd = counts + n, *rd = counts + 2 * n, *ones = counts + 3 * n;
    for (int p = 0; p < n; p++)
        ones[p] = 1, sd[p] = rd[p] = (size_t)p;
    uint64_t *in = t_malloc(2 * (size_t)n * 8), *out = t_malloc(2 * (size_t)n * 8);
    t_fill(in, 2 * (size_t)n * 8, t_seed(17, (uint64_t)t_rank, (uint64_t)peers_reduce_too));
    memset(out, T_POISON, 2 * (size_t)n * 8);
    t_arm_message();
    gpurma_status_t rc;
    const char *what;
    if (t_rank == 0) {
        what = "alltoallv";
        rc = gpurma_alltoallv(t, in, ones, sd, out, ones, rd, GPURMA_UINT64, NULL);
    } else {
        what = "alltoall beside an alltoallv";
        rc = gpurma_alltoall(t, in, out, 1, GPURMA_UINT64, NULL);
        if (rc == GPURMA_SUCCESS && peers_reduce_too) {
            what = "allreduce after an alltoall beside an alltoallv";
            rc = gpurma_allreduce(t, in, out, 2, GPURMA_UINT64, GPURMA_MAX, NULL);
        }
    }
    T_ASSERT(rc != GPURMA_SUCCESS, "%s: SUCCESS beside another collective", what);
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT, "%s: %d (%s): %s", what,
             (int)rc, gpurma_strerror(rc), gpurma_last_error_message(t_ctx));
    T_ASSERT(!strstr(gpurma_last_error_message(t_ctx), t_stale_message),
             "%s: %d without a message of its own", what, (int)rc);
    /* Peers may still wait out a timeout (two, one after the other, at
     * most): no rank goes on before every rank is out of its call (see
     * test_coll_mismatch.c); the team stays: it is out of step. */
    t_settle(4.0 * TIMEOUT_MS / 1000.0);
    CHECK(gpurma_barrier(t_world));
    free(counts), free(in), free(out);
}

int main(void)
{
    setenv("GPURMA_COLL_ALGO", "oneshot_ll", 1);
    t_init("test_coll_v_agree", TIMEOUT_MS);
    t_settle_init();
    if (t_size > 1) {
        one_case(0);
        one_case(1);
    }
    return t_finish("");
}
