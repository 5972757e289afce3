/*
 * test_coll_algo_mismatch.c - processes of one job with GPURMA_COLL_ALGO
 * set differently (rank 0 oneshot, the others twoshot, whose own code
 * cuts an allreduce's steps into other pieces in the same slots), which
 * the configuration does not allow: no rank may return SUCCESS. Before
 * the fix every rank returned SUCCESS with a wrong sum (the fingerprint
 * named the call, not the algorithm, so each took the other's pieces as
 * its own). Each size on a team of its own (the team is out of step
 * after it); random data, so that a result taken from the wrong pieces
 * could not pass by chance. The rank comes from the launcher's variables
 * (Open MPI's or PMIx's), read before init; without them: skipped.
 */
#include "common.h"
#include "gpurma_coll.h"
#include "settle.h"

#define TIMEOUT_MS 1000

static void one_case(size_t count)
{
    gpurma_team_t t;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    int32_t *in = t_malloc(count * 4), *out = t_malloc(count * 4);
    t_fill(in, count * 4, t_seed(19, (uint64_t)t_rank, count));
    memset(out, T_POISON, count * 4);
    t_arm_message();
    gpurma_status_t rc = gpurma_allreduce(t, in, out, count, GPURMA_INT32, GPURMA_SUM, NULL);
    T_ASSERT(rc != GPURMA_SUCCESS, "allreduce of %zu (%s here): SUCCESS beside ranks running "
             "another algorithm", count, getenv("GPURMA_COLL_ALGO"));
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT, "allreduce of %zu: %d (%s): %s",
             count, (int)rc, gpurma_strerror(rc), gpurma_last_error_message(t_ctx));
    T_ASSERT(!strstr(gpurma_last_error_message(t_ctx), t_stale_message),
             "allreduce of %zu: %d without a message of its own", count, (int)rc);
    /* Peers may still wait out a timeout (two, one after the other, at
     * most): no rank goes on before every rank is out of its call (see
     * test_coll_mismatch.c); the team stays: it is out of step. */
    t_settle(4.0 * TIMEOUT_MS / 1000.0);
    CHECK(gpurma_barrier(t_world));
    free(in), free(out);
}

int main(void)
{
    /* The rank is known only after init, which reads the variable: the
     * launcher's rank variables decide it (one process alone: skipped). */
    const int r = t_launcher_rank();
    if (r < 0) {
        printf("SKIP test_coll_algo_mismatch: the launcher sets no rank variable\n");
        return 77;
    }
    setenv("GPURMA_COLL_ALGO", r == 0 ? "oneshot" : "twoshot", 1);
    t_init("test_coll_algo_mismatch", TIMEOUT_MS);
    t_settle_init();
    if (t_size > 1) {
        one_case(1001);
        one_case(40000); /* several steps and parts */
    }
    return t_finish("");
}
