/*
 * test_coll.c - the collectives of gpurma_coll.h on host buffers (stream
 * NULL), every collective x dtype x operator x in/out of place, with odd
 * counts that span several steps of the scratch window (the test makes
 * its slots 1 KiB unless GPURMA_COLL_SLOT_BYTES is set).
 *
 * Expected results are recomputed by every rank from the seeds of every
 * rank's data: integers exactly (wrapping SUM and PROD, AVG = wrapped sum
 * / n truncated toward zero), floats against a float64 reference within
 * (n + 1) * eps of the sum of magnitudes (eps: the type's unit roundoff;
 * MIN and MAX exactly, NaN propagated). Every rank must hold bitwise the
 * same result (hashes compared through an allgather checked before).
 * Destinations are poisoned, with guard bytes around them; bad arguments
 * must fail with GPURMA_ERR_INVALID_ARG, a message, and nothing written.
 */
#include <signal.h>

#include "common.h"
#include "gpurma_coll.h"
#include "gpurma_coll_device.h"
#include "test_coll_ref.h"

#define GUARD 32

/* Mismatches fail the test; cr_check_reduced printed the first. */
static void check_reduced(const void *got, void **in, int n, size_t at, size_t count,
                          gpurma_dtype_t t, gpurma_redop_t op, const char *what)
{
    long bad = cr_check_reduced(got, in, n, at, count, t, op, what);
    T_ASSERT(!bad, "%s: %ld of %zu elements wrong", what, bad, count);
}

/* Every rank holds the same bytes: FNV-1a hashes, gathered. */
static void check_same_everywhere(const void *buf, size_t bytes, const char *what)
{
    uint64_t h = 1469598103934665603ull, *all = t_malloc((size_t)t_size * 8);
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ ((const unsigned char *)buf)[i]) * 1099511628211ull;
    CHECK(gpurma_allgather(t_world, &h, all, 1, GPURMA_UINT64, NULL));
    for (int r = 0; r < t_size; r++)
        T_ASSERT(all[r] == h, "%s: rank %d holds other bytes than rank %d", what, r, t_rank);
    free(all);
}

/* A destination of n bytes between poisoned guards. */
static unsigned char *poisoned(size_t n)
{
    unsigned char *p = t_malloc(n + 2 * GUARD);
    memset(p, T_POISON, n + 2 * GUARD);
    return p + GUARD;
}
static void check_guards(unsigned char *p, size_t n, const char *what)
{
    t_verify_fill(p - GUARD, T_POISON, GUARD, what, t_rank, 0);
    t_verify_fill(p + n, T_POISON, GUARD, what, t_rank, n);
}

/* Every rank's contribution for round, each n elements. */
static void **all_inputs(size_t n, gpurma_dtype_t t, gpurma_redop_t op, uint64_t round)
{
    void **in = t_malloc((size_t)t_size * sizeof(void *));
    for (int r = 0; r < t_size; r++) {
        in[r] = t_malloc(n * cr_esize(t));
        cr_gen(in[r], n, t, op, r, round);
    }
    return in;
}
static void free_inputs(void **in)
{
    for (int r = 0; r < t_size; r++)
        free(in[r]);
    free(in);
}

/* ------------------------------------------------------------ collectives */

static uint64_t round_no;

static void test_reductions(gpurma_dtype_t t, gpurma_redop_t op, size_t count, int inplace)
{
    const size_t es = cr_esize(t), n = (size_t)t_size;
    char what[160];
    /* allreduce */
    {
        uint64_t rd = ++round_no;
        void **in = all_inputs(count, t, op, rd);
        unsigned char *recv = poisoned(count * es);
        const void *send = in[t_rank];
        if (inplace) {
            memcpy(recv, in[t_rank], count * es);
            send = recv;
        }
        snprintf(what, sizeof(what), "allreduce %s %s count %zu%s", cr_dtype_names[t], cr_op_names[op],
                 count, inplace ? " in place" : "");
        CHECK(gpurma_allreduce(t_world, send, recv, count, t, op, NULL));
        check_guards(recv, count * es, what);
        check_reduced(recv, in, t_size, 0, count, t, op, what);
        check_same_everywhere(recv, count * es, what);
        free(recv - GUARD);
        free_inputs(in);
    }
    /* reduce_scatter: each rank contributes n blocks */
    {
        uint64_t rd = ++round_no;
        void **in = all_inputs(n * count, t, op, rd);
        unsigned char *recv = poisoned(n * count * es);
        const void *send = in[t_rank];
        if (inplace) {
            memcpy(recv, in[t_rank], n * count * es);
            send = recv;
        }
        snprintf(what, sizeof(what), "reduce_scatter %s %s count %zu%s", cr_dtype_names[t],
                 cr_op_names[op], count, inplace ? " in place" : "");
        CHECK(gpurma_reduce_scatter(t_world, send, recv, count, t, op, NULL));
        check_guards(recv, n * count * es, what);
        check_reduced(recv, in, t_size, (size_t)t_rank * count, count, t, op, what);
        if (!inplace) /* past the result, recv is untouched */
            t_verify_fill(recv + count * es, T_POISON, (n - 1) * count * es, what, t_rank,
                          count * es);
        free(recv - GUARD);
        free_inputs(in);
    }
    /* reduce, to a root that moves with the round */
    {
        uint64_t rd = ++round_no;
        int root = (int)(rd % n);
        void **in = all_inputs(count, t, op, rd);
        unsigned char *recv = poisoned(count * es);
        const void *send = in[t_rank];
        if (inplace) {
            memcpy(recv, in[t_rank], count * es);
            send = recv;
        }
        snprintf(what, sizeof(what), "reduce %s %s count %zu root %d%s", cr_dtype_names[t],
                 cr_op_names[op], count, root, inplace ? " in place" : "");
        CHECK(gpurma_reduce(t_world, send, recv, count, t, op, root, NULL));
        check_guards(recv, count * es, what);
        if (t_rank == root)
            check_reduced(recv, in, t_size, 0, count, t, op, what);
        else if (inplace)
            t_verify(recv, in[t_rank], count * es, what, t_rank, 0);
        else
            t_verify_fill(recv, T_POISON, count * es, what, t_rank, 0);
        free(recv - GUARD);
        free_inputs(in);
    }
}

static void test_moves(gpurma_dtype_t t, size_t count, int inplace)
{
    const size_t es = cr_esize(t), n = (size_t)t_size, block = count * es;
    char what[160];
    /* allgather: in place, send is this rank's slot of recv */
    {
        uint64_t rd = ++round_no;
        void **in = all_inputs(count, t, GPURMA_SUM, rd);
        unsigned char *recv = poisoned(n * block);
        const void *send = in[t_rank];
        if (inplace) {
            memcpy(recv + (size_t)t_rank * block, in[t_rank], block);
            send = recv + (size_t)t_rank * block;
        }
        snprintf(what, sizeof(what), "allgather %s count %zu%s", cr_dtype_names[t], count,
                 inplace ? " in place" : "");
        CHECK(gpurma_allgather(t_world, send, recv, count, t, NULL));
        check_guards(recv, n * block, what);
        for (int r = 0; r < t_size; r++)
            t_verify(recv + (size_t)r * block, in[r], block, what, r, (size_t)r * block);
        free(recv - GUARD);
        free_inputs(in);
    }
    /* alltoall: block r of recv is block `rank` of r's send */
    {
        uint64_t rd = ++round_no;
        void **in = all_inputs(n * count, t, GPURMA_SUM, rd);
        unsigned char *recv = poisoned(n * block);
        const void *send = in[t_rank];
        if (inplace) {
            memcpy(recv, in[t_rank], n * block);
            send = recv;
        }
        snprintf(what, sizeof(what), "alltoall %s count %zu%s", cr_dtype_names[t], count,
                 inplace ? " in place" : "");
        CHECK(gpurma_alltoall(t_world, send, recv, count, t, NULL));
        check_guards(recv, n * block, what);
        for (int r = 0; r < t_size; r++)
            t_verify(recv + (size_t)r * block, (char *)in[r] + (size_t)t_rank * block, block,
                     what, r, (size_t)r * block);
        free(recv - GUARD);
        free_inputs(in);
    }
    /* broadcast from a root that moves with the round */
    {
        uint64_t rd = ++round_no;
        int root = (int)(rd % n);
        void **in = all_inputs(count, t, GPURMA_SUM, rd);
        unsigned char *recv = poisoned(block);
        const void *send = in[t_rank];
        if (inplace) {
            if (t_rank == root)
                memcpy(recv, in[t_rank], block);
            send = recv;
        }
        snprintf(what, sizeof(what), "broadcast %s count %zu root %d%s", cr_dtype_names[t], count,
                 root, inplace ? " in place" : "");
        CHECK(gpurma_broadcast(t_world, send, recv, count, t, root, NULL));
        check_guards(recv, block, what);
        t_verify(recv, in[root], block, what, root, 0);
        free(recv - GUARD);
        free_inputs(in);
    }
}

/* alltoallv: rank s sends rank d (s * 5 + d * 3 + round) % 7 * scale
 * elements; blocks packed with one element of poison between them. */
static size_t v_count(int s, int d, uint64_t rd, size_t scale)
{
    return (size_t)(((uint64_t)s * 5 + (uint64_t)d * 3 + rd) % 7) * scale;
}

static void test_alltoallv(gpurma_dtype_t t, size_t scale)
{
    const size_t es = cr_esize(t), n = (size_t)t_size;
    uint64_t rd = ++round_no;
    size_t *sc = t_malloc(n * sizeof(size_t)), *sd = t_malloc(n * sizeof(size_t));
    size_t *rc = t_malloc(n * sizeof(size_t)), *rdp = t_malloc(n * sizeof(size_t));
    size_t stot = 0, rtot = 0;
    for (int p = 0; p < t_size; p++) {
        sc[p] = v_count(t_rank, p, rd, scale), sd[p] = stot, stot += sc[p] + 1;
        rc[p] = v_count(p, t_rank, rd, scale), rdp[p] = rtot, rtot += rc[p] + 1;
    }
    /* Rank s's send buffer, regenerated by any rank: stot of s elements. */
    void **in = t_malloc(n * sizeof(void *));
    for (int s = 0; s < t_size; s++) {
        size_t tot = 0;
        for (int p = 0; p < t_size; p++)
            tot += v_count(s, p, rd, scale) + 1;
        in[s] = t_malloc(tot * es);
        cr_gen(in[s], tot, t, GPURMA_SUM, s, rd);
    }
    unsigned char *recv = poisoned(rtot * es);
    char what[128];
    snprintf(what, sizeof(what), "alltoallv %s scale %zu", cr_dtype_names[t], scale);
    CHECK(gpurma_alltoallv(t_world, in[t_rank], sc, sd, recv, rc, rdp, t, NULL));
    check_guards(recv, rtot * es, what);
    for (int s = 0; s < t_size; s++) {
        size_t soff = 0; /* where s's block for this rank starts in s's buffer */
        for (int p = 0; p < t_rank; p++)
            soff += v_count(s, p, rd, scale) + 1;
        t_verify(recv + rdp[s] * es, (char *)in[s] + soff * es, rc[s] * es, what, s, rdp[s] * es);
        t_verify_fill(recv + (rdp[s] + rc[s]) * es, T_POISON, es, what, s, (rdp[s] + rc[s]) * es);
    }
    for (int s = 0; s < t_size; s++)
        free(in[s]);
    free(in), free(sc), free(sd), free(rc), free(rdp);
    free(recv - GUARD);
}

/* alltoallv with send and recv blocks interleaved in one buffer (each
 * peer's send block, then its recv block, one element of poison after
 * each): disjoint blocks are no overlap. A send block that shares an
 * element with a recv block is refused, and nothing is written. */
static void test_alltoallv_interleaved(void)
{
    const size_t n = (size_t)t_size, es = 4;
    uint64_t rd = ++round_no;
    size_t *sc = t_malloc(n * sizeof(size_t)), *sd = t_malloc(n * sizeof(size_t));
    size_t *rc = t_malloc(n * sizeof(size_t)), *rdp = t_malloc(n * sizeof(size_t));
    size_t tot = 0;
    for (int p = 0; p < t_size; p++) {
        sc[p] = v_count(t_rank, p, rd, 3), sd[p] = tot, tot += sc[p] + 1;
        rc[p] = v_count(p, t_rank, rd, 3), rdp[p] = tot, tot += rc[p] + 1;
    }
    unsigned char *buf = poisoned(tot * es), *want = t_malloc(tot * es);
    /* every rank's send elements: rank s's block for d is v(s, d) values */
    for (int p = 0; p < t_size; p++)
        for (size_t i = 0; i < sc[p]; i++) {
            uint32_t v = (uint32_t)(t_seed(rd, (uint64_t)t_rank, (uint64_t)p) + i);
            memcpy(buf + (sd[p] + i) * es, &v, es);
        }
    memcpy(want, buf, tot * es);
    for (int s = 0; s < t_size; s++)
        for (size_t i = 0; i < rc[s]; i++) {
            uint32_t v = (uint32_t)(t_seed(rd, (uint64_t)s, (uint64_t)t_rank) + i);
            memcpy(want + (rdp[s] + i) * es, &v, es);
        }
    CHECK(gpurma_alltoallv(t_world, buf, sc, sd, buf, rc, rdp, GPURMA_UINT32, NULL));
    check_guards(buf, tot * es, "alltoallv interleaved");
    t_verify(buf, want, tot * es, "alltoallv with send and recv blocks interleaved", -1, 0);
    /* One element to every peer, send block p at 2p and recv block p at
     * 2p + 1, but recv block 0 on send block 0: refused on every rank
     * before anything moves. */
    for (int p = 0; p < t_size; p++)
        sc[p] = rc[p] = 1, sd[p] = 2 * (size_t)p, rdp[p] = p ? 2 * (size_t)p + 1 : 0;
    memcpy(want, buf, tot * es);
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_alltoallv(t_world, buf, sc, sd, buf, rc, rdp, GPURMA_UINT32, NULL));
    t_verify(buf, want, tot * es, "refused alltoallv", -1, 0);
    CHECK(gpurma_barrier(t_world));
    free(buf - GUARD), free(want), free(sc), free(sd), free(rc), free(rdp);
}

/* MIN and MAX propagate NaN from any rank, first or last. */
static void test_nan(void)
{
    for (gpurma_dtype_t t = GPURMA_FLOAT16; t <= GPURMA_FLOAT64; t++) {
        for (gpurma_redop_t op = GPURMA_MIN; op <= GPURMA_MAX; op++) {
            double send[4] = {0}, recv[4];
            unsigned char *s = (unsigned char *)send;
            for (int i = 0; i < 4; i++)
                cr_put_f(s, t, (size_t)i, (double)(t_rank + i));
            if (t_rank == t_size - 1)
                cr_put_f(s, t, 0, NAN);
            if (t_rank == 0)
                cr_put_f(s, t, 1, NAN);
            CHECK(gpurma_allreduce(t_world, send, recv, 4, t, op, NULL));
            for (int i = 0; i < 2; i++)
                T_ASSERT(isnan(cr_get_f(recv, t, (size_t)i)), "%s %s: element %d is %g, not NaN",
                         cr_dtype_names[t], cr_op_names[op], i, cr_get_f(recv, t, (size_t)i));
            double want = op == GPURMA_MIN ? 2 : t_size - 1 + 2;
            T_ASSERT(cr_get_f(recv, t, 2) == want, "%s %s: element 2 is %g, expected %g",
                     cr_dtype_names[t], cr_op_names[op], cr_get_f(recv, t, 2), want);
        }
    }
}

/* ------------------------------------------------------------ bad input */

static void test_bad_input(void)
{
    enum { N = 64 };
    int32_t send[N], *recv = (int32_t *)poisoned(N * 4 * (size_t)t_size);
    cr_gen(send, N, GPURMA_INT32, GPURMA_SUM, t_rank, 1);
    const size_t rbytes = N * 4 * (size_t)t_size;
    gpurma_team_t w = t_world;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, send, recv, N, (gpurma_dtype_t)99, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, send, recv, N, GPURMA_INT32, (gpurma_redop_t)99, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, send, recv, N, GPURMA_INT32, (gpurma_redop_t)-1, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, send, recv, SIZE_MAX / 2, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allgather(w, send, recv, SIZE_MAX / 4, GPURMA_INT64, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, NULL, recv, N, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, send, NULL, N, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_broadcast(w, send, recv, N, GPURMA_INT32, t_size, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_broadcast(w, send, recv, N, GPURMA_INT32, -1, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_reduce(w, send, recv, N, GPURMA_INT32, GPURMA_SUM, t_size, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(NULL, send, recv, N, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, (void *)(UINTPTR_MAX - 16), recv, N, GPURMA_INT32, GPURMA_SUM, NULL));
    /* Partial overlap: recv one element past send, and allgather's send
     * anywhere but this rank's slot. */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allreduce(w, recv, recv + 1, N, GPURMA_INT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_alltoall(w, recv + 1, recv, 2, GPURMA_INT32, NULL));
    int32_t *wrong_slot = recv + N * ((t_rank + 1) % t_size) + (t_size == 1);
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allgather(w, wrong_slot, recv, N, GPURMA_INT32, NULL));
    size_t counts[64] = {0}, displs[64] = {0};
    if (t_size <= 64) {
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_alltoallv(w, send, NULL, displs, recv, counts, displs, GPURMA_INT32, NULL));
        counts[0] = 1, displs[0] = SIZE_MAX;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_alltoallv(w, send, counts, displs, recv, counts, displs, GPURMA_INT32, NULL));
        displs[0] = 0;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_alltoallv(w, send, counts, displs, send, counts, displs, GPURMA_INT32, NULL));
    }
    t_verify_fill((unsigned char *)recv - GUARD, T_POISON, rbytes + 2 * GUARD, "bad input", t_rank, 0);
    /* Zero counts are fine and write nothing. */
    CHECK(gpurma_allreduce(w, NULL, NULL, 0, GPURMA_FLOAT32, GPURMA_SUM, NULL));
    CHECK(gpurma_alltoall(w, NULL, NULL, 0, GPURMA_INT8, NULL));
    /* Registration: a hint, checked. */
    CHECK(gpurma_coll_register(w, recv, rbytes));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_coll_register(w, recv + 1, 4));
    /* One rank's refusal is every rank's, and no list changes: rank 0's
     * range overlaps its registration, the others' is fresh (so fresh can
     * be registered next, everywhere); rank 0 deregisters what it never
     * registered, the others fresh (which then stays registered). */
    int32_t *fresh = t_malloc(64);
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_coll_register(w, t_rank == 0 ? recv + 1 : fresh, 16));
    CHECK(gpurma_coll_deregister(w, recv));
    /* Each rank registers its own size (an alltoallv's send buffers differ). */
    CHECK(gpurma_coll_register(w, fresh, 16 + 16 * (size_t)(t_rank % 4)));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_coll_deregister(w, t_rank == 0 ? recv : fresh));
    CHECK(gpurma_coll_deregister(w, fresh));
    free(fresh);
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_coll_deregister(w, recv));
    free((unsigned char *)recv - GUARD);
}

/* ------------------------------------------------ device collectives */

/* gpurma_coll_device.h called from this CPU thread (the host backend's
 * device API): the same team scratch window and epochs as the host calls,
 * interleaved with them. */
static void test_device_api(void)
{
    gpurma_dev_coll_t c, zero;
    memset(&zero, 0, sizeof(zero));
    CHECK(gpurma_coll_device(t_world, GPURMA_MEM_HOST, &c));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_coll_device(t_world, (gpurma_mem_kind_t)7, &c));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_coll_device(t_world, GPURMA_MEM_HOST, NULL));
    const size_t n = (size_t)t_size, count = 123;
    int64_t *send = t_malloc(n * count * 8), *recv = t_malloc(n * count * 8);
    void **in = all_inputs(n * count, GPURMA_INT64, GPURMA_SUM, ++round_no);
    memcpy(send, in[t_rank], n * count * 8);
    for (int round = 0; round < 3; round++) {
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_barrier(c));
        memset(recv, T_POISON, n * count * 8);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_allreduce(c, recv, send, count, GPURMA_INT64, GPURMA_SUM));
        check_reduced(recv, in, t_size, 0, count, GPURMA_INT64, GPURMA_SUM, "dev allreduce");
        memset(recv, T_POISON, n * count * 8);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_reduce_scatter(c, recv, send, count, GPURMA_INT64, GPURMA_MAX));
        check_reduced(recv, in, t_size, (size_t)t_rank * count, count, GPURMA_INT64, GPURMA_MAX, "dev reduce_scatter");
        int root = (round + 1) % t_size;
        memset(recv, T_POISON, n * count * 8);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_reduce(c, recv, send, count, GPURMA_INT64, GPURMA_PROD, root));
        if (t_rank == root)
            check_reduced(recv, in, t_size, 0, count, GPURMA_INT64, GPURMA_PROD, "dev reduce");
        else
            t_verify_fill(recv, T_POISON, count * 8, "dev reduce (not root)", t_rank, 0);
        /* a host collective between device ones: the epochs are shared */
        CHECK(gpurma_broadcast(t_world, send, recv, count, GPURMA_INT64, root, NULL));
        t_verify(recv, in[root], count * 8, "broadcast between dev calls", root, 0);
        memset(recv, T_POISON, n * count * 8);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_broadcast(c, recv, send, count, GPURMA_INT64, root));
        t_verify(recv, in[root], count * 8, "dev broadcast", root, 0);
        memset(recv, T_POISON, n * count * 8);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_allgather(c, recv, send, count, GPURMA_INT64));
        for (int r = 0; r < t_size; r++)
            t_verify(recv + (size_t)r * count, in[r], count * 8, "dev allgather", r, 0);
        memset(recv, T_POISON, n * count * 8);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_alltoall(c, recv, send, count, GPURMA_INT64));
        for (int r = 0; r < t_size; r++)
            t_verify(recv + (size_t)r * count, (int64_t *)in[r] + (size_t)t_rank * count,
                     count * 8, "dev alltoall", r, 0);
    }
    /* Bad input: an error, nothing written, no epoch spent (the next
     * collective still matches on every rank). */
    memset(recv, T_POISON, n * count * 8);
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_coll_barrier(zero));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_coll_allreduce(zero, recv, send, count, GPURMA_INT64, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_coll_allreduce(c, recv, send, count, (gpurma_dtype_t)42, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_coll_allreduce(c, recv, send, count, GPURMA_INT64, (gpurma_redop_t)42));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_coll_broadcast(c, recv, send, count, GPURMA_INT64, t_size));
    t_verify_fill(recv, T_POISON, n * count * 8, "dev bad input", t_rank, 0);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_barrier(c));
    free_inputs(in);
    free(send), free(recv);
}

/* "death" (tests/mp/test_coll-death.sh, uid bootstrap): the last rank kills
 * itself between collectives; every other rank must get
 * GPURMA_ERR_PEER_FAILED from the collective it is in, with a message that
 * names a dead rank, well within the timeout, whatever the algorithm. */
static int death(void)
{
    t_init("test_coll death", 20000);
    const int victim = t_size - 1;
    static double x[4096], y[4096];
    for (int i = 0; i < 1000; i++) {
        if (i == 20 && t_rank == victim)
            raise(SIGKILL);
        double t0 = t_now();
        /* small (LL) and large (puts and signals) in turn */
        size_t n = i % 2 ? 4096 : 3;
        gpurma_status_t rc = gpurma_allreduce(t_world, x, y, n, GPURMA_FLOAT64, GPURMA_SUM, NULL);
        if (rc == GPURMA_SUCCESS)
            continue;
        /* The victim, or a survivor that saw it first and left (in the
         * ring, rank 1 waits on rank 0 only). */
        const char *m = gpurma_last_error_message(t_ctx);
        if (rc != GPURMA_ERR_PEER_FAILED || !strstr(m, "has died") || t_now() - t0 > 10)
            T_FAIL("after %.2f s: %d (%s): %s", t_now() - t0, rc, gpurma_strerror(rc), m);
        printf("rank %d: PEER_FAILED in %.3f s at round %d: %s\n", t_rank, t_now() - t0, i, m);
        /* Teardown does not wait for the dead, and releases everything
         * (the sanitizer build checks for leaks). */
        t0 = t_now();
        rc = gpurma_finalize(t_ctx);
        if ((rc != GPURMA_SUCCESS && rc != GPURMA_ERR_PEER_FAILED) || t_now() - t0 > 10)
            T_FAIL("finalize after the death: %d (%s) after %.2f s", rc, gpurma_strerror(rc),
                   t_now() - t0);
        return 0;
    }
    T_FAIL("the death of rank %d went unnoticed", victim);
}

/* A team's collective state goes with the team (its slots): a team freed
 * with a buffer still registered, after a host collective and a device
 * handle, releases them (the sanitizer build reports a leak otherwise),
 * its kept handle answers FREED, and the next team starts with no
 * registration, so the same buffer registers there again. */
static void test_team_state_goes_with_team(void)
{
    const size_t max_count = 37 + 2 * 61;
    uint32_t *buf = t_malloc(max_count * 4), *out = t_malloc(max_count * 4);
    uint32_t *want = t_malloc(max_count * 4), *theirs = t_malloc(max_count * 4);
    for (int round = 0; round < 3; round++) {
        const size_t count = 37 + (size_t)round * 61; /* odd sizes */
        gpurma_team_t t = NULL;
        /* reversed: team ranks are not world ranks */
        CHECK(gpurma_team_split(t_world, 0, t_size - 1 - t_rank, &t));
        CHECK(gpurma_coll_register(t, buf, max_count * 4));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_coll_register(t, buf + 1, 4));
        memset(want, 0, count * 4);
        for (int r = 0; r < t_size; r++) {
            t_fill(theirs, count * 4, t_seed(41, (uint64_t)r, (uint64_t)round));
            for (size_t i = 0; i < count; i++)
                want[i] += theirs[i];
        }
        t_fill(buf, count * 4, t_seed(41, (uint64_t)t_rank, (uint64_t)round));
        memset(out, T_POISON, max_count * 4);
        CHECK(gpurma_allreduce(t, buf, out, count, GPURMA_UINT32, GPURMA_SUM, NULL));
        t_verify(out, want, count * 4, "allreduce on a fresh team", t_rank, 0);
        t_verify_fill(out + count, T_POISON, (max_count - count) * 4, "past the count", t_rank,
                      count * 4);
        gpurma_dev_coll_t h;
        CHECK(gpurma_coll_device(t, GPURMA_MEM_HOST, &h));
        gpurma_team_t kept = t;
        CHECK(gpurma_team_free(&t)); /* buf still registered */
        EXPECT_ERR(GPURMA_ERR_FREED, gpurma_coll_deregister(kept, buf));
        EXPECT_ERR(GPURMA_ERR_FREED, gpurma_coll_register(kept, buf, 4));
    }
    free(buf), free(out), free(want), free(theirs);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "death"))
        return death();
    /* Small slots: the counts below then span several steps. */
    setenv("GPURMA_COLL_SLOT_BYTES", "1024", 0);
    t_init("test_coll", 0);
    test_bad_input();
    test_device_api();
    /* 1 element; odd counts within one LL step and across several data
     * steps (1 KiB slots: 301 f64 are 3 steps), and cut into two parts
     * (channels) from 2 KiB per peer on (1031 elements of 4 and 8 bytes). */
    static const size_t counts[] = {1, 37, 301, 1031};
    for (gpurma_dtype_t t = GPURMA_INT8; t <= GPURMA_FLOAT64; t++)
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
            for (int inplace = 0; inplace < 2; inplace++) {
                for (gpurma_redop_t op = GPURMA_SUM; op <= GPURMA_AVG; op++)
                    test_reductions(t, op, counts[c], inplace);
                test_moves(t, counts[c], inplace);
            }
    for (gpurma_dtype_t t = GPURMA_INT8; t <= GPURMA_FLOAT64; t += 3)
        for (size_t scale = 1; scale <= 41; scale += 40)
            test_alltoallv(t, scale);
    test_alltoallv_interleaved();
    test_nan();
    /* A team of its own: every other rank (scratch windows are per team). */
    gpurma_team_t half = NULL;
    CHECK(gpurma_team_split(t_world, t_rank % 2, t_rank, &half));
    uint64_t mine = (uint64_t)t_rank + 1, sum = 0, want = 0;
    for (int r = t_rank % 2; r < t_size; r += 2)
        want += (uint64_t)r + 1;
    CHECK(gpurma_allreduce(half, &mine, &sum, 1, GPURMA_UINT64, GPURMA_SUM, NULL));
    T_ASSERT(sum == want, "split team allreduce: %" PRIu64 ", expected %" PRIu64, sum, want);
    CHECK(gpurma_team_free(&half));
    test_team_state_goes_with_team();
    return t_finish("");
}
