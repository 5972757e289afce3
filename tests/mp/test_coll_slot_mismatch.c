/*
 * test_coll_slot_mismatch.c - processes of one job with
 * GPURMA_COLL_SLOT_BYTES set differently (rank 0 1024, the others the
 * default), which the configuration does not allow: the team's scratch
 * windows then have other layouts, and a member that took its own offsets
 * for its peers' wrote past their windows (every rank crashed in LL16's
 * code, 2026-11-27). Every rank must get INVALID_ARG naming the variable,
 * with recv untouched, on the first call and on the next. The rank comes
 * from the launcher's variables (Open MPI's or PMIx's), read before init;
 * without them: skipped.
 */
#include "common.h"
#include "gpurma_coll.h"

#define TIMEOUT_MS 1000

static void one_call(size_t count, int round)
{
    int32_t *in = t_malloc(count * 4), *out = t_malloc(count * 4);
    t_fill(in, count * 4, t_seed(53, (uint64_t)t_rank, (uint64_t)round));
    memset(out, T_POISON, count * 4);
    t_arm_message();
    gpurma_status_t rc = gpurma_allreduce(t_world, in, out, count, GPURMA_INT32, GPURMA_SUM, NULL);
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG,
             "allreduce of %zu beside ranks of another GPURMA_COLL_SLOT_BYTES (%s here): %d (%s)",
             count, getenv("GPURMA_COLL_SLOT_BYTES") ? getenv("GPURMA_COLL_SLOT_BYTES") : "default",
             (int)rc, gpurma_strerror(rc));
    T_ASSERT(strstr(gpurma_last_error_message(t_ctx), "GPURMA_COLL_SLOT_BYTES") != NULL,
             "allreduce of %zu: the message does not name the variable: %s", count,
             gpurma_last_error_message(t_ctx));
    t_verify_fill(out, T_POISON, count * 4, "recv", t_rank, 0);
    t_checks += 2;
    free(in), free(out);
}

int main(void)
{
    const int r = t_launcher_rank();
    if (r < 0) {
        printf("SKIP test_coll_slot_mismatch: the launcher sets no rank variable\n");
        return 77;
    }
    if (r == 0)
        setenv("GPURMA_COLL_SLOT_BYTES", "1024", 1);
    else
        unsetenv("GPURMA_COLL_SLOT_BYTES");
    t_init("test_coll_slot_mismatch", TIMEOUT_MS);
    if (t_size > 1) {
        one_call(1001, 0);
        one_call(3, 1); /* the window is made again, and refused again */
    }
    return t_finish("");
}
