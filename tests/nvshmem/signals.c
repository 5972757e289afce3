/*
 * signals.c - the signal patterns of NVSHMEM programs:
 *   ring broadcast: PE 0's data travels the ring; each hop is putmem, fence,
 *     signal_op(SET round) and the next PE's signal_wait_until;
 *   ring reduce: partial sums travel the ring with put_signal_nbi (ADD);
 *   MoE all-to-all: every PE sends a random number of tokens to every PE
 *     with putmem_signal_nbi into a per-source slot and waits with
 *     wait_until_all on the per-source signals; then wait_until_any/some
 *     and the test family on the same words.
 */
#include "nvtest.h"

static int me, npes, next, prev;

static void ring_broadcast(void)
{
    const size_t bytes = 100003; /* odd, not a multiple of any vector width */
    char *data = (char *)nvshmem_malloc(bytes);
    uint64_t *sig = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
    char *want = (char *)malloc(bytes);
    *sig = 0;
    nvshmem_barrier_all();
    for (uint64_t round = 1; round <= 3; round++) {
        nv_fill(want, bytes, nv_seed(11, 0, round));
        if (me == 0)
            memcpy(data, want, bytes);
        else {
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, round);
            NV_EXPECT_BYTES(data, want, bytes, "broadcast round %llu", (unsigned long long)round);
        }
        if (next != 0) {
            nvshmem_putmem(data, data, bytes, next);
            nvshmem_fence();
            nvshmemx_signal_op(sig, round, NVSHMEM_SIGNAL_SET, next);
        }
        nvshmem_barrier_all();
    }
    NV_ASSERT(nvshmem_signal_fetch(sig) == (me == 0 ? 0 : 3), "signal_fetch after 3 rounds");
    free(want);
    nvshmem_free(sig);
    nvshmem_free(data);
}

/* Partial sums of n doubles travel from PE 0 to PE npes-1, one hop per PE. */
static void ring_reduce(void)
{
    const size_t n = 4099;
    double *partial = (double *)nvshmem_malloc(n * sizeof(double));
    double *mine = (double *)malloc(n * sizeof(double));
    double *acc = (double *)malloc(n * sizeof(double));
    uint64_t *sig = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
    *sig = 0;
    for (size_t i = 0; i < n; i++)
        mine[i] = (double)(nv_seed(12, me, i) % 1000) - 500.0;
    nvshmem_barrier_all();
    if (me == 0)
        memcpy(acc, mine, n * sizeof(double));
    else {
        nvshmem_uint64_wait_until(sig, NVSHMEM_CMP_GE, 1);
        for (size_t i = 0; i < n; i++)
            acc[i] = partial[i] + mine[i];
    }
    if (me != npes - 1) {
        nvshmem_double_put_signal_nbi(partial, acc, n, sig, 1, NVSHMEM_SIGNAL_ADD, next);
        nvshmem_quiet();
    } else {
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int pe = 0; pe < npes; pe++)
                want += (double)(nv_seed(12, pe, i) % 1000) - 500.0;
            NV_ASSERT(acc[i] == want, "reduce element %zu: %g, want %g", i, acc[i], want);
        }
    }
    nvshmem_barrier_all();
    free(mine), free(acc);
    nvshmem_free(sig);
    nvshmem_free(partial);
}

/* Tokens of 24 bytes (an odd number of words); up to 9 per pair. */
#define TOKEN 24
#define MAX_TOK 9
static size_t tokens(int from, int to, uint64_t round)
{
    return (size_t)(nv_seed(13, from * 4096 + to, round) % (MAX_TOK + 1));
}

static void moe_alltoall(void)
{
    size_t slot = MAX_TOK * TOKEN;
    char *recv = (char *)nvshmem_malloc((size_t)npes * slot);
    uint64_t *sig = (uint64_t *)nvshmem_calloc((size_t)npes, sizeof(uint64_t));
    char *send = (char *)malloc((size_t)npes * slot), *want = (char *)malloc(slot);
    NV_ASSERT(nvshmem_uint64_test(&sig[0], NVSHMEM_CMP_EQ, 0), "calloc'd signal not 0");
    for (uint64_t round = 1; round <= 4; round++) {
        memset(recv, NV_POISON, (size_t)npes * slot);
        nvshmem_barrier_all();
        /* dispatch: one put + signal per destination, in a rotated order */
        for (int k = 0; k < npes; k++) {
            int to = (me + k) % npes;
            size_t nt = tokens(me, to, round);
            nv_fill(send + (size_t)to * slot, nt * TOKEN, nv_seed(14, me * 4096 + to, round));
            nvshmem_putmem_signal_nbi(recv + (size_t)me * slot, send + (size_t)to * slot,
                                       nt * TOKEN, &sig[me], 1, NVSHMEM_SIGNAL_ADD, to);
        }
        nvshmem_quiet();
        /* combine: every source has signalled round times in total */
        nvshmem_uint64_wait_until_all(sig, (size_t)npes, NULL, NVSHMEM_CMP_GE, round);
        NV_ASSERT(nvshmem_uint64_test_all(sig, (size_t)npes, NULL, NVSHMEM_CMP_EQ, round),
                  "test_all after wait_until_all");
        for (int from = 0; from < npes; from++) {
            size_t nt = tokens(from, me, round);
            memset(want, NV_POISON, slot);
            nv_fill(want, nt * TOKEN, nv_seed(14, from * 4096 + me, round));
            NV_EXPECT_BYTES(recv + (size_t)from * slot, want, slot,
                            "tokens from PE %d, round %llu", from, (unsigned long long)round);
        }
        nvshmem_barrier_all();
    }
    /* any / some / test families on the same words, with exclusions */
    int *status = (int *)calloc((size_t)npes, sizeof(int));
    size_t *idx = (size_t *)malloc((size_t)npes * sizeof(size_t));
    status[0] = 1; /* PE 0's slot is excluded */
    size_t any = nvshmem_uint64_wait_until_any(sig, (size_t)npes, status, NVSHMEM_CMP_EQ, 4);
    NV_ASSERT(npes == 1 ? any == SIZE_MAX : any == 1, "wait_until_any gave %zu", any);
    size_t some = nvshmem_uint64_wait_until_some(sig, (size_t)npes, idx, NULL, NVSHMEM_CMP_EQ, 4);
    NV_ASSERT(some == (size_t)npes && idx[npes - 1] == (size_t)npes - 1, "wait_until_some gave %zu",
              some);
    NV_ASSERT(nvshmem_uint64_test_any(sig, (size_t)npes, NULL, NVSHMEM_CMP_GT, 4) == SIZE_MAX,
              "test_any found a value above 4");
    NV_ASSERT(nvshmem_uint64_test_some(sig, (size_t)npes, idx, NULL, NVSHMEM_CMP_NE, 4) == 0,
              "test_some found a value other than 4");
    uint64_t *vals = (uint64_t *)malloc((size_t)npes * sizeof(uint64_t));
    for (int i = 0; i < npes; i++)
        vals[i] = 4;
    nvshmem_uint64_wait_until_all_vector(sig, (size_t)npes, NULL, NVSHMEM_CMP_EQ, vals);
    vals[npes - 1] = 5;
    NV_ASSERT(nvshmem_uint64_test_some_vector(sig, (size_t)npes, idx, NULL, NVSHMEM_CMP_EQ, vals) ==
                  (size_t)(npes - 1),
              "test_some_vector");
    nvshmem_barrier_all();
    free(vals), free(status), free(idx), free(send), free(want);
    nvshmem_free(sig);
    nvshmem_free(recv);
}

int main(void)
{
    nv_init("signals");
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
    ring_broadcast();
    ring_reduce();
    moe_alltoall();
    nv_finish();
    return 0;
}
