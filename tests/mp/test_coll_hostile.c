/*
 * test_coll_hostile.c - the collectives of gpurma_coll.h under input an
 * attacker or a careless caller gives them (host buffers, stream NULL):
 * sizes that overflow only once multiplied by the element size or the
 * team size, roots far out of range, unknown dtype and op values, NULL
 * buffers with and without data, send and recv overlapping by part,
 * alltoallv blocks that overlap or wrap the address space, teams freed
 * and contexts finalized before the call, and ranks that disagree on the
 * count (an error on both, never SUCCESS). Every bad call must return an error with a message and leave the
 * poisoned destinations (and the guards around them) untouched; good
 * calls with NULL and count 0 must succeed.
 */
#include <limits.h>

#include "common.h"
#include "gpurma_coll.h"
#include "gpurma_coll_device.h"

#define GUARD 64
#define N 37 /* odd: no size class lines up with it */

/* A destination of n bytes between poisoned guards. */
static unsigned char *poisoned(size_t n)
{
    unsigned char *p = t_malloc(n + 2 * GUARD);
    memset(p, T_POISON, n + 2 * GUARD);
    return p + GUARD;
}

static void check_untouched(const unsigned char *p, size_t n, const char *what)
{
    t_verify_fill(p - GUARD, T_POISON, n + 2 * GUARD, what, t_rank, 0);
}

/* Sizes that overflow a size_t only once multiplied. */
static void huge_counts(gpurma_team_t w, unsigned char *send, unsigned char *recv)
{
    const size_t two63 = (size_t)1 << 63;
    /* count * 4 overflows */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_allreduce(w, send, recv, SIZE_MAX / 4 + 1, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_broadcast(w, send, recv, two63, GPURMA_FLOAT16, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_reduce(w, send, recv, two63, GPURMA_FLOAT64, GPURMA_MAX, 0, NULL));
    /* count * 8 fits, * team size overflows (or, alone, wraps the address space) */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_allgather(w, send, recv, SIZE_MAX / 8, GPURMA_UINT64, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoall(w, send, recv, two63 / 8, GPURMA_INT64, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_reduce_scatter(w, send, recv, two63, GPURMA_UINT8, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoall(w, send, recv, two63, GPURMA_UINT8, NULL));
}

static void bad_values(gpurma_team_t w, unsigned char *send, unsigned char *recv)
{
    const int roots[] = {-1, t_size, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_broadcast(w, send, recv, N, GPURMA_INT32, roots[i], NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_reduce(w, send, recv, N, GPURMA_INT32, GPURMA_SUM, roots[i], NULL));
    }
    const int dtypes[] = {-1, 10000, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++) {
        gpurma_dtype_t t = (gpurma_dtype_t)dtypes[i];
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allgather(w, send, recv, 1, t, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_alltoall(w, send, recv, 0, t, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_reduce_scatter(w, send, recv, 1, t, GPURMA_SUM, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_allreduce(w, send, recv, 1, GPURMA_FLOAT32, (gpurma_redop_t)dtypes[i],
                                    NULL));
    }
    /* NULL with data */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allgather(w, NULL, recv, 1, GPURMA_UINT8, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_alltoall(w, send, NULL, 1, GPURMA_UINT8, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_reduce_scatter(w, NULL, recv, 1, GPURMA_UINT8, GPURMA_SUM, NULL));
    /* partial overlaps, in each direction, by one byte and by one element */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_allreduce(w, recv + 1, recv, N, GPURMA_UINT8, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_allreduce(w, recv, recv + 4 * N - 4, N, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_reduce_scatter(w, recv + 4, recv, N, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_broadcast(w, recv + 3, recv, N, GPURMA_UINT8, t_rank, NULL));
    if (t_size > 1) /* allgather's in-place slot is recv + rank * count, not recv + 1 */
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_allgather(w, recv + (size_t)((t_rank + 1) % t_size) * N, recv, N,
                                    GPURMA_UINT8, NULL));
}

/* alltoallv: per-peer arrays near SIZE_MAX and 2^63, overlapping blocks. */
static void bad_alltoallv(gpurma_team_t w, unsigned char *send, unsigned char *recv)
{
    size_t n = (size_t)t_size, *c = t_malloc(n * sizeof *c), *d = t_malloc(n * sizeof *d);
    size_t *zc = t_malloc(n * sizeof *zc), *zd = t_malloc(n * sizeof *zd);
    for (size_t r = 0; r < n; r++)
        c[r] = 1, d[r] = r, zc[r] = 0, zd[r] = 0;
    const size_t last = n - 1;
    const size_t bad_displs[] = {SIZE_MAX, SIZE_MAX / 4, (size_t)1 << 62, (size_t)1 << 63};
    for (size_t i = 0; i < sizeof bad_displs / sizeof *bad_displs; i++) {
        size_t keep = d[last];
        d[last] = bad_displs[i];
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(w, send, c, d, recv, c, zd, GPURMA_INT32, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(w, send, c, zd, recv, c, d, GPURMA_INT32, NULL));
        d[last] = keep;
    }
    size_t keep = c[0];
    c[0] = SIZE_MAX / 2; /* the count alone: times 4 overflows */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoallv(w, send, c, d, recv, zc, zd, GPURMA_INT32, NULL));
    c[0] = keep;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoallv(w, send, c, d, recv, c, d, (gpurma_dtype_t)-3, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoallv(w, NULL, c, d, recv, c, d, GPURMA_INT32, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoallv(w, send, c, d, NULL, c, d, GPURMA_INT32, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoallv(w, send, c, d, (void *)(UINTPTR_MAX - 2), c, d, GPURMA_INT32,
                                NULL));
    /* two peers' blocks in the same place of recv: which one lands there
     * would be a race, so it must be refused (sending one block to two
     * peers is fine: send is only read) */
    if (t_size > 1) {
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(w, send, c, d, recv, c, zd, GPURMA_INT32, NULL));
        size_t k = d[1];
        d[1] = 0, c[0] = 2; /* block 0 covers [0, 2), block 1 starts at 1 */
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(w, send, c, zd, recv, c, d, GPURMA_INT32, NULL));
        d[1] = 1;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(w, send, c, zd, recv, c, d, GPURMA_INT32, NULL));
        d[1] = k, c[0] = 1;
        /* rank 0 sends every peer more than the peer expects (then less):
         * every rank must refuse before anything moves */
        size_t *more = t_malloc(n * sizeof *more), *wide = t_malloc(n * sizeof *wide);
        for (size_t r = 0; r < n; r++)
            more[r] = t_rank == 0 ? 2 : 1, wide[r] = 2 * r;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(w, send, more, wide, recv, c, wide, GPURMA_INT32, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(w, send, c, wide, recv, more, wide, GPURMA_INT32, NULL));
        free(more), free(wide);
    }
    free(c), free(d), free(zc), free(zd);
}

/* Calls that are fine: NULL buffers with count 0, a non-root's unused
 * buffers NULL, one send block given to every peer. */
static void good_edges(gpurma_team_t w)
{
    CHECK(gpurma_allreduce(w, NULL, NULL, 0, GPURMA_INT32, GPURMA_SUM, NULL));
    CHECK(gpurma_allgather(w, NULL, NULL, 0, GPURMA_UINT8, NULL));
    CHECK(gpurma_alltoall(w, NULL, NULL, 0, GPURMA_FLOAT64, NULL));
    CHECK(gpurma_reduce_scatter(w, NULL, NULL, 0, GPURMA_INT64, GPURMA_MAX, NULL));
    CHECK(gpurma_broadcast(w, NULL, NULL, 0, GPURMA_UINT32, t_size - 1, NULL));

    uint64_t mine[N], got[N], want[N];
    t_fill(mine, sizeof mine, t_seed(1, (uint64_t)t_rank, 0));
    uint64_t rs = t_seed(1, 0, 0);
    t_fill(want, sizeof want, rs);
    memset(got, T_POISON, sizeof got);
    /* broadcast from 0: the others' send NULL */
    CHECK(gpurma_broadcast(w, t_rank == 0 ? mine : NULL, got, N, GPURMA_UINT64, 0, NULL));
    t_verify(got, want, sizeof got, "broadcast, non-roots' send NULL", 0, 0);
    /* reduce to the last rank: the others' recv NULL */
    unsigned char *dst = poisoned(sizeof got);
    int root = t_size - 1;
    CHECK(gpurma_reduce(w, mine, t_rank == root ? dst : NULL, N, GPURMA_UINT64, GPURMA_MAX,
                        root, NULL));
    if (t_rank == root) {
        for (int r = 0; r < t_size; r++) {
            uint64_t theirs[N];
            t_fill(theirs, sizeof theirs, t_seed(1, (uint64_t)r, 0));
            for (int i = 0; i < N; i++)
                if (!r || theirs[i] > want[i])
                    want[i] = theirs[i];
        }
        t_verify(dst, want, sizeof want, "reduce MAX, non-roots' recv NULL", root, 0);
    }
    t_verify_fill(dst - GUARD, T_POISON, GUARD, "reduce guard", t_rank, 0);
    t_verify_fill(dst + sizeof got, T_POISON, GUARD, "reduce guard", t_rank, 0);
    free(dst - GUARD);

    /* alltoallv: the same 3 send elements to every peer (overlapping
     * send blocks), odd displacements in recv, all counts 0 with
     * displacements near SIZE_MAX / 4 accepted or refused, never used. */
    size_t n = (size_t)t_size, *sc = t_malloc(n * 8), *sd = t_malloc(n * 8);
    size_t *rc = t_malloc(n * 8), *rd = t_malloc(n * 8);
    for (size_t r = 0; r < n; r++)
        sc[r] = 3, sd[r] = 1, rc[r] = 3, rd[r] = 5 * r + 2;
    uint32_t src[8];
    t_fill(src, sizeof src, t_seed(2, (uint64_t)t_rank, 0));
    size_t rbytes = (5 * n + 2) * 4;
    unsigned char *rb = poisoned(rbytes);
    CHECK(gpurma_alltoallv(w, src, sc, sd, rb, rc, rd, GPURMA_UINT32, NULL));
    for (size_t r = 0; r < n; r++) {
        uint32_t theirs[8];
        t_fill(theirs, sizeof theirs, t_seed(2, r, 0));
        t_verify(rb + rd[r] * 4, theirs + 1, 12, "alltoallv shared send block", (int)r, rd[r] * 4);
        t_verify_fill(rb + rd[r] * 4 - 8, T_POISON, 8, "alltoallv gap", (int)r, rd[r] * 4 - 8);
    }
    t_verify_fill(rb - GUARD, T_POISON, GUARD, "alltoallv head guard", t_rank, 0);
    t_verify_fill(rb + 5 * n * 4, T_POISON, 8 + GUARD, "alltoallv tail", t_rank, 5 * n * 4);
    free(rb - GUARD);
    free(sc), free(sd), free(rc), free(rd);
}

/* A team freed (the old handle kept), then one whose context is gone. */
static void dead_team(void)
{
    gpurma_team_t t = NULL, old;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    old = t;
    CHECK(gpurma_team_free(&t));
    T_ASSERT(t == NULL, "team_free left the handle set");
    int32_t v = 7, r = 0x5a5a5a5a;
    gpurma_status_t rc = gpurma_allreduce(old, &v, &r, 1, GPURMA_INT32, GPURMA_SUM, NULL);
    T_ASSERT(rc == GPURMA_ERR_FREED || rc == GPURMA_ERR_INVALID_ARG,
             "allreduce on a freed team returned %d (%s)", (int)rc, gpurma_strerror(rc));
    rc = gpurma_broadcast(old, &v, &r, 1, GPURMA_INT32, 0, NULL);
    T_ASSERT(rc == GPURMA_ERR_FREED || rc == GPURMA_ERR_INVALID_ARG,
             "broadcast on a freed team returned %d", (int)rc);
    T_ASSERT(r == 0x5a5a5a5a, "a collective on a freed team wrote its recv");
}

/* The device collectives (run here by the CPU) check the same sizes: a
 * count whose buffers wrap is refused, nothing written. */
static void huge_device_counts(gpurma_team_t w, unsigned char *send, unsigned char *recv)
{
    gpurma_dev_coll_t c;
    CHECK(gpurma_coll_device(w, GPURMA_MEM_HOST, &c));
    const size_t two63 = (size_t)1 << 63;
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_coll_allgather(c, recv, send, SIZE_MAX / 2, GPURMA_INT32));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_coll_allreduce(c, recv, send, SIZE_MAX / 4 + 1, GPURMA_INT32,
                                          GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_coll_broadcast(c, recv, send, two63, GPURMA_FLOAT16, 0));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_coll_reduce_scatter(c, recv, send, SIZE_MAX / 8 + 1, GPURMA_UINT64,
                                               GPURMA_SUM));
    if (t_size > 1) /* count * 8 fits, times the team size does not */
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_coll_alltoall(c, recv, send, two63 / 8, GPURMA_INT64));
    /* the team is still in step */
    CHECK(gpurma_dev_coll_barrier(c));
}

int main(void)
{
    t_init("test_coll_hostile", 3000); /* the count mismatch waits out one timeout */
    gpurma_team_t w = t_world;
    gpurma_status_t rc;
    size_t big = (size_t)t_size * N * 8;
    unsigned char *send = poisoned(big), *recv = poisoned(big);
    t_fill(send, big, t_seed(3, (uint64_t)t_rank, 0));
    huge_counts(w, send, recv);
    bad_values(w, send, recv);
    bad_alltoallv(w, send, recv);
    huge_device_counts(w, send, recv);
    check_untouched(recv, big, "recv after bad calls");
    good_edges(w);
    dead_team();
    /* the world still works after all that */
    uint32_t one = 1, sum = 0;
    CHECK(gpurma_allreduce(w, &one, &sum, 1, GPURMA_UINT32, GPURMA_SUM, NULL));
    T_ASSERT(sum == (uint32_t)t_size, "allreduce after bad calls gave %u", sum);

    /* One rank passes a larger count than the other (an LL-sized and a
     * multi-step one), each on a team of its own since the team is out of
     * step afterwards: nothing past the smaller recv may change, and no
     * rank may return SUCCESS. Every piece carries the call's fingerprint
     * (collective, count, dtype, op, root) and epoch: a rank that receives
     * a piece of another call refuses (INVALID_ARG, at once); one whose
     * peer took another path (LL against puts) waits for data that never
     * comes and times out. Run with 2 ranks only: a case may cost one
     * timeout. */
    if (t_size == 2) {
        const size_t counts[2][2] = {{40, 24}, {3000, 700}};
        gpurma_team_t t[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++)
            CHECK(gpurma_team_split(w, 0, t_rank, &t[k]));
        for (int k = 0; k < 2; k++) {
            size_t count = counts[k][t_rank], cap = counts[k][0] * 4;
            unsigned char *in = t_malloc(cap), *out = poisoned(cap);
            t_fill(in, cap, t_seed(4, (uint64_t)t_rank, (uint64_t)k));
            t_arm_message();
            rc = gpurma_allreduce(t[k], in, out, count, GPURMA_INT32, GPURMA_SUM, NULL);
            T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT,
                     "count mismatch: allreduce returned %d (%s)", (int)rc, gpurma_strerror(rc));
            /* the message is the collective's, and none older */
            T_ASSERT(strstr(gpurma_last_error_message(t_ctx),
                            rc == GPURMA_ERR_TIMEOUT ? "GPURMA_TIMEOUT_MS" : "another collective") &&
                         !strstr(gpurma_last_error_message(t_ctx), t_stale_message),
                     "count mismatch: %d with the message: %s", (int)rc,
                     gpurma_last_error_message(t_ctx));
            t_verify_fill(out - GUARD, T_POISON, GUARD, "count mismatch head", t_rank, 0);
            t_verify_fill(out + count * 4, T_POISON, cap - count * 4 + GUARD,
                          "count mismatch tail", t_rank, count * 4);
            /* a refusal is at once; the peer may still wait out its timeout */
            if (rc == GPURMA_ERR_INVALID_ARG)
                usleep(3500 * 1000);
            free(in), free(out - GUARD);
        }
        /* t[] stay allocated: freeing is collective over a team out of step */
    }

    /* finalize, then a collective on the handles kept: an error, no crash */
    gpurma_team_t kept = w;
    CHECK(gpurma_barrier(w));
    gpurma_ctx_t ctx = t_ctx;
    CHECK(gpurma_finalize(ctx));
    rc = gpurma_allreduce(kept, &one, &sum, 1, GPURMA_UINT32, GPURMA_SUM, NULL);
    T_ASSERT(rc != GPURMA_SUCCESS, "allreduce after finalize succeeded");
    if (t_rank == 0)
        printf("PASS %s: %d ranks, %.2f s (after finalize: %d %s)\n", t_name, t_size,
               t_now() - t_start, (int)rc, gpurma_strerror(rc));
    free(send - GUARD), free(recv - GUARD);
    return 0;
}
