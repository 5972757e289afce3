/*
 * test_coll_mismatch.c - ranks that pass different counts to one
 * collective, which the API does not allow: no rank may return SUCCESS,
 * not even one whose arguments match the root's or most peers' (the
 * call's fingerprint goes from every member to every other in its first
 * step, so each sees the odd one out), and not a rank that passes a count
 * of 0 (it still takes that first step). Every error is INVALID_ARG (a
 * piece of another call refused) or TIMEOUT (waiting for a piece or an
 * acknowledgement never sent), and nothing is written past what this
 * rank's own count covers.
 *
 * Cases: allgather, alltoall, broadcast, reduce (root 0) and allreduce,
 * each with rank 0 passing a larger count, the last rank one element
 * fewer, the last rank 0 and rank 0 (the root) 0; each on a team of its
 * own, since a team is out of step after such a call. Before each, every
 * rank passes 0 on that team: SUCCESS, nothing written (the team stays in
 * step). Before the fixes, in a broadcast the ranks whose count was the
 * root's returned SUCCESS, and a rank passing 0 returned SUCCESS at once
 * (broadcast, reduce, allreduce; with GPURMA_COLL_ALGO=ce, which
 * tests/mp/test_coll-algos.sh runs, also allgather and alltoall).
 *
 * Then allreduces whose ranks differ in dtype or op as well as in count,
 * rank 0 one call and the others another: pairs whose fingerprint XOR
 * count is the same, which a 32-bit key over the two (an LL16 variant of
 * 2026-11-27 that checked such a key in place of every header) let pass:
 * the smaller call's ranks returned SUCCESS with the other call's bytes.
 */
#include "common.h"
#include "gpurma_coll.h"
#include "gpurma_coll_device.h" /* gpurma_dev_dtype_size */
#include "settle.h"

#define TIMEOUT_MS 1000
#define BASE 1001 /* elements; odd */
#define GUARD 64

enum { K_ALLGATHER, K_ALLTOALL, K_BROADCAST, K_REDUCE, K_ALLREDUCE, K_CASES };
static const char *const names[K_CASES] = {"allgather", "alltoall", "broadcast", "reduce",
                                           "allreduce"};
#define VARIANTS 4
static const char *const odd_one[VARIANTS] = {"rank 0 larger", "last rank one fewer",
                                              "last rank 0", "rank 0 passes 0"};

static size_t count_of(int rank, int variant)
{
    switch (variant) {
    case 0:
        return rank == 0 ? 2 * BASE + 3 : BASE;
    case 1:
        return rank == t_size - 1 ? BASE - 1 : BASE;
    case 2:
        return rank == t_size - 1 ? 0 : BASE;
    default:
        return rank == 0 ? 0 : BASE;
    }
}

static gpurma_status_t call(int kind, gpurma_team_t t, const void *in, void *out, size_t count)
{
    switch (kind) {
    case K_ALLGATHER:
        return gpurma_allgather(t, in, out, count, GPURMA_INT32, NULL);
    case K_ALLTOALL:
        return gpurma_alltoall(t, in, out, count, GPURMA_INT32, NULL);
    case K_BROADCAST:
        return gpurma_broadcast(t, in, out, count, GPURMA_INT32, 0, NULL);
    case K_REDUCE:
        return gpurma_reduce(t, in, out, count, GPURMA_INT32, GPURMA_SUM, 0, NULL);
    default:
        return gpurma_allreduce(t, in, out, count, GPURMA_INT32, GPURMA_SUM, NULL);
    }
}

/* Bytes of recv this rank's own call may write. */
static size_t writes(int kind, size_t count)
{
    if (kind == K_REDUCE && t_rank != 0)
        return 0;
    return count * 4 * (kind == K_ALLGATHER || kind == K_ALLTOALL ? (size_t)t_size : 1);
}

/* Refused, with a message of its own, nothing written past what this
 * rank's own call covers (w bytes). */
static void check_refused(gpurma_status_t rc, const char *what, const char *how,
                          unsigned char *out, size_t w, size_t cap)
{
    T_ASSERT(rc != GPURMA_SUCCESS, "%s (%s): SUCCESS beside a mismatch", what, how);
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT, "%s (%s): %d (%s): %s",
             what, how, (int)rc, gpurma_strerror(rc), gpurma_last_error_message(t_ctx));
    T_ASSERT(!strstr(gpurma_last_error_message(t_ctx), t_stale_message),
             "%s (%s): %d without a message of its own", what, how, (int)rc);
    t_verify_fill(out - GUARD, T_POISON, GUARD, "head", t_rank, 0);
    t_verify_fill(out + w, T_POISON, cap - w + GUARD, "tail", t_rank, w);
    t_checks++;
    /* Peers may still wait out a timeout on the case's team (one at most:
     * every wait of a case starts within its first moments); no rank goes
     * on to the next case's barrier on the world team before every rank is
     * out of this call. The team stays: freeing is collective over a team
     * out of step. */
    t_settle(4.0 * TIMEOUT_MS / 1000.0);
}

static void one_case(int kind, int variant, unsigned char *in, unsigned char *out, size_t cap)
{
    gpurma_team_t t;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    const size_t count = count_of(t_rank, variant);
    const uint64_t round = (uint64_t)(kind * VARIANTS + variant);
    const char *what = names[kind];
    t_fill(in, cap, t_seed(11, (uint64_t)t_rank, round));
    memset(out - GUARD, T_POISON, cap + 2 * GUARD);
    /* Every rank 0: a success that writes nothing, and the team in step. */
    gpurma_status_t rc = call(kind, t, in, out, 0);
    T_ASSERT(rc == GPURMA_SUCCESS, "%s with count 0 on every rank: %d (%s): %s", what, (int)rc,
             gpurma_strerror(rc), gpurma_last_error_message(t_ctx));
    t_verify_fill(out - GUARD, T_POISON, cap + 2 * GUARD, "count 0 wrote", t_rank, 0);
    CHECK(gpurma_barrier(t_world));
    t_arm_message();
    rc = call(kind, t, in, out, count);
    char how[64];
    snprintf(how, sizeof how, "%s, count %zu here", odd_one[variant], count);
    check_refused(rc, what, how, out, writes(kind, count), cap);
}

/* Allreduce calls of another dtype or op and count: rank 0 passes the
 * first, the others the second. */
static const struct {
    size_t         count[2];
    gpurma_dtype_t dtype[2];
    gpurma_redop_t op[2];
} cross[] = {
    {{6127, 2683}, {GPURMA_INT8, GPURMA_BFLOAT16}, {GPURMA_SUM, GPURMA_SUM}},
    {{12751, 12208}, {GPURMA_INT8, GPURMA_INT8}, {GPURMA_SUM, GPURMA_PROD}},
};

static void cross_case(int k, unsigned char *in, unsigned char *out, size_t cap)
{
    gpurma_team_t t;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    const int mine = t_rank != 0;
    const size_t count = cross[k].count[mine];
    const gpurma_dtype_t dtype = cross[k].dtype[mine];
    t_fill(in, cap, t_seed(12, (uint64_t)t_rank, (uint64_t)k));
    memset(out - GUARD, T_POISON, cap + 2 * GUARD);
    CHECK(gpurma_barrier(t_world));
    t_arm_message();
    gpurma_status_t rc = gpurma_allreduce(t, in, out, count, dtype, cross[k].op[mine], NULL);
    char how[96];
    snprintf(how, sizeof how, "rank 0: %zu of dtype %d op %d, the others %zu of dtype %d op %d",
             cross[k].count[0], (int)cross[k].dtype[0], (int)cross[k].op[0], cross[k].count[1],
             (int)cross[k].dtype[1], (int)cross[k].op[1]);
    check_refused(rc, "allreduce", how, out, count * gpurma_dev_dtype_size(dtype), cap);
}

int main(void)
{
    t_init("test_coll_mismatch", TIMEOUT_MS);
    t_settle_init();
    if (t_size > 1) {
        const size_t cap = (2 * BASE + 3) * 4 * (size_t)t_size;
        unsigned char *in = t_malloc(cap), *out = (unsigned char *)t_malloc(cap + 2 * GUARD) + GUARD;
        for (int kind = 0; kind < K_CASES; kind++)
            for (int variant = 0; variant < VARIANTS; variant++)
                one_case(kind, variant, in, out, cap);
        for (int k = 0; k < (int)(sizeof cross / sizeof cross[0]); k++)
            cross_case(k, in, out, cap);
        free(in), free(out - GUARD);
    }
    return t_finish("");
}
