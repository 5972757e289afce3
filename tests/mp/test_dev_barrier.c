/*
 * test_dev_barrier.c - the device barrier (gpurma_dev_coll_barrier) on CPU
 * threads, for what it delivers: what every rank stored into every peer's
 * window before a barrier is there for the peer after it. Each round every
 * rank puts bytes of that round (random, an odd length that grows each
 * round) into its own range of every peer's window, meets the others in a
 * barrier, checks every peer's range here byte for byte, and meets them in
 * a second barrier before the next round overwrites anything. A barrier
 * that returned before some peer arrived would let a rank read a range its
 * peer had not written yet (the last round's bytes, or poison). Every third
 * round a device allreduce runs between the barriers: they share the
 * channel's epochs, and each must still match its peers'.
 */
#include "common.h"
#include "gpurma_coll.h"
#include "gpurma_coll_device.h"

#define ROUNDS 40
#define MAX_LEN 1400 /* the longest range; the rest of each slot is a guard */
#define SLOT 1536

static uint64_t range_seed(int round, int from, int to)
{
    return t_seed(47, (uint64_t)from * 1000003u + (uint64_t)to, (uint64_t)round);
}

int main(void)
{
    t_init("test_dev_barrier", 0);
    const size_t bytes = (size_t)t_size * SLOT;
    void *base;
    gpurma_win_t win;
    CHECK(gpurma_win_allocate(t_world, bytes, NULL, &base, &win));
    memset(base, T_POISON, bytes);
    gpurma_dev_win_t dw;
    gpurma_dev_coll_t c;
    CHECK(gpurma_win_device(win, &dw));
    CHECK(gpurma_coll_device(t_world, GPURMA_MEM_HOST, &c));
    CHECK(gpurma_barrier(t_world)); /* every window poisoned before anyone writes */
    /* A source per peer: a put through the port engine reads its source
     * later (the proxy), so none is refilled before the quiet below. */
    unsigned char *mine = t_malloc((size_t)t_size * MAX_LEN), *want = t_malloc(MAX_LEN);
    for (int round = 0; round < ROUNDS; round++) {
        const size_t len = 1001 + (size_t)round * 9; /* odd, below MAX_LEN */
        for (int p = 0; p < t_size; p++) {
            if (p == t_rank)
                continue;
            unsigned char *src = mine + (size_t)p * MAX_LEN;
            t_fill(src, len, range_seed(round, t_rank, p));
            CHECK(gpurma_dev_put(dw, p, (size_t)t_rank * SLOT, src, len));
        }
        /* The port engine's puts complete asynchronously; the barrier
         * orders stores, not a proxy's queue (see docs/collectives.md). */
        if (dw.nports)
            CHECK(gpurma_dev_quiet(dw));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_barrier(c));
        for (int p = 0; p < t_size; p++) {
            if (p == t_rank)
                continue;
            const unsigned char *got = (const unsigned char *)base + (size_t)p * SLOT;
            t_fill(want, len, range_seed(round, p, t_rank));
            t_verify(got, want, len, "a peer's put before the barrier, read after it", p, 0);
            t_verify_fill(got + MAX_LEN, T_POISON, SLOT - MAX_LEN, "past the range", p, MAX_LEN);
        }
        if (round % 3 == 2) {
            uint64_t one = (uint64_t)round + 1, sum = 0;
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_coll_allreduce(c, &sum, &one, 1, GPURMA_UINT64, GPURMA_SUM));
            T_ASSERT(sum == one * (uint64_t)t_size, "round %d: allreduce between barriers gave %llu",
                     round, (unsigned long long)sum);
        }
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_coll_barrier(c));
    }
    free(mine), free(want);
    CHECK(gpurma_win_free(&win));
    return t_finish("");
}
