/*
 * atomics.c - every typed atomic on 32- and 64-bit types, from every PE at
 * once to every PE: the final values are exact sums, bit sets and swap
 * chains, and the neighbouring value that shares the 64-bit word (touched
 * by a different operation at the same time) is never clobbered.
 */
#include "nvtest.h"

static int me, npes;

/* Each object: [0] the operand, [1] its neighbour in the same 8 bytes
 * (for 32-bit types), padded to 16 bytes. */
#define AMO_STD(NAME, TYPE)                                                                   \
    static void amo_##NAME(void)                                                             \
    {                                                                                        \
        TYPE *w = (TYPE *)nvshmem_malloc(16);                                                \
        TYPE base = (TYPE)(nv_seed(__LINE__, 0, 0) % 1000 + 17);                             \
        memset(w, 0, 16);                                                                    \
        w[0] = base;                                                                         \
        w[1] = (TYPE)(base * 3);                                                             \
        nvshmem_barrier_all();                                                               \
        /* fetch_add me+1, add 2, inc and fetch_inc to every PE; the neighbour gets          \
         * fetch_add 1 from everyone */                                                      \
        for (int k = 0; k < npes; k++) {                                                     \
            int pe = (me + k) % npes;                                                        \
            TYPE old = nvshmem_##NAME##_atomic_fetch_add(&w[0], (TYPE)(me + 1), pe);          \
            NV_ASSERT(old >= base, #NAME " fetch_add returned %lld", (long long)old);        \
            nvshmem_##NAME##_atomic_add(&w[0], (TYPE)2, pe);                                 \
            nvshmem_##NAME##_atomic_inc(&w[0], pe);                                          \
            (void)nvshmem_##NAME##_atomic_fetch_inc(&w[0], pe);                              \
            if (sizeof(TYPE) == 4)                                                           \
                nvshmem_##NAME##_atomic_add(&w[1], (TYPE)1, pe);                             \
        }                                                                                    \
        nvshmem_barrier_all();                                                               \
        long long sum = (long long)npes * (npes + 1) / 2 + 4LL * npes;                       \
        NV_ASSERT(w[0] == (TYPE)(base + sum), #NAME " sum %lld, want %lld", (long long)w[0], \
                  (long long)(TYPE)(base + sum));                                            \
        TYPE nb = sizeof(TYPE) == 4 ? (TYPE)(base * 3 + npes) : (TYPE)(base * 3);            \
        NV_ASSERT(w[1] == nb, #NAME " neighbour %lld, want %lld", (long long)w[1],           \
                  (long long)nb);                                                            \
        NV_ASSERT(nvshmem_##NAME##_atomic_fetch(&w[0], (me + 1) % npes) == (TYPE)(base + sum), \
                  #NAME " atomic_fetch");                                                    \
        nvshmem_barrier_all();                                                               \
        /* compare_swap: the PEs take turns in rank order on PE 0's word */                 \
        if (me == 0)                                                                         \
            w[0] = (TYPE)0;                                                                  \
        nvshmem_barrier_all();                                                               \
        for (;;) {                                                                           \
            TYPE seen = nvshmem_##NAME##_atomic_compare_swap(&w[0], (TYPE)me, (TYPE)(me + 1), \
                                                             0);                             \
            if (seen == (TYPE)me)                                                            \
                break;                                                                       \
            NV_ASSERT(seen < (TYPE)me, #NAME " compare_swap saw %lld past %d",               \
                      (long long)seen, me);                                                  \
        }                                                                                    \
        nvshmem_barrier_all();                                                               \
        if (me == 0)                                                                         \
            NV_ASSERT(w[0] == (TYPE)npes, #NAME " compare_swap chain ended at %lld",         \
                      (long long)w[0]);                                                      \
        nvshmem_barrier_all();                                                               \
        nvshmem_free(w);                                                                     \
    }
GPURMA_NVSHMEMI_AMO_STD_TYPES(AMO_STD)

/* set, swap, fetch (floats too): each PE sets its own slot at the next PE,
 * then swaps a value in and must get back what it set. */
#define AMO_EXT(NAME, TYPE)                                                                   \
    static void amo_ext_##NAME(void)                                                         \
    {                                                                                        \
        TYPE *w = (TYPE *)nvshmem_malloc(16);                                                \
        memset(w, 0, 16);                                                                    \
        nvshmem_barrier_all();                                                               \
        int next = (me + 1) % npes, prev = (me + npes - 1) % npes;                           \
        TYPE a = (TYPE)(nv_seed(7, me, 1) % 100000) + (TYPE)0.5,                             \
             b = (TYPE)(nv_seed(7, me, 2) % 100000) + (TYPE)0.25;                            \
        nvshmem_##NAME##_atomic_set(&w[0], a, next);                                         \
        nvshmem_barrier_all();                                                               \
        TYPE pa = (TYPE)(nv_seed(7, prev, 1) % 100000) + (TYPE)0.5;                          \
        NV_ASSERT(w[0] == pa, #NAME " set from PE %d", prev);                                \
        NV_ASSERT(nvshmem_##NAME##_atomic_fetch(&w[0], next) == a, #NAME " fetch");          \
        nvshmem_barrier_all();                                                               \
        TYPE old = nvshmem_##NAME##_atomic_swap(&w[0], b, next);                             \
        NV_ASSERT(old == a, #NAME " swap returned another value");                           \
        nvshmem_barrier_all();                                                               \
        nvshmem_free(w);                                                                     \
    }
GPURMA_NVSHMEMI_AMO_EXT_TYPES(AMO_EXT)

/* and, or, xor: bit me % bits of every PE's word, from every PE. */
#define AMO_BIT(NAME, TYPE)                                                                   \
    static void amo_bit_##NAME(void)                                                         \
    {                                                                                        \
        TYPE *w = (TYPE *)nvshmem_malloc(32);                                                \
        unsigned bits = sizeof(TYPE) * 8;                                                    \
        TYPE mine = (TYPE)((TYPE)1 << (me % bits));                                          \
        w[0] = 0;                                                                            \
        w[1] = (TYPE)~(TYPE)0;                                                               \
        w[2] = 0;                                                                            \
        w[3] = (TYPE)0x5a5a5a5a;                                                             \
        nvshmem_barrier_all();                                                               \
        TYPE ors = 0;                                                                        \
        for (int k = 0; k < npes; k++) {                                                     \
            int pe = (me + k) % npes;                                                        \
            ors |= (TYPE)((TYPE)1 << (k % bits));                                            \
            nvshmem_##NAME##_atomic_or(&w[0], mine, pe);                                     \
            (void)nvshmem_##NAME##_atomic_fetch_and(&w[1], (TYPE)~mine, pe);                 \
            nvshmem_##NAME##_atomic_xor(&w[2], mine, pe);                                    \
            (void)nvshmem_##NAME##_atomic_fetch_or(&w[3], 0, pe);                            \
        }                                                                                    \
        nvshmem_barrier_all();                                                               \
        TYPE x = 0;                                                                          \
        for (int k = 0; k < npes; k++)                                                       \
            x ^= (TYPE)((TYPE)1 << (k % bits));                                              \
        NV_ASSERT(w[0] == ors, #NAME " or");                                                 \
        NV_ASSERT(w[1] == (TYPE)~ors, #NAME " fetch_and");                                   \
        NV_ASSERT(w[2] == x, #NAME " xor");                                                  \
        NV_ASSERT(w[3] == (TYPE)0x5a5a5a5a, #NAME " neighbour");                             \
        nvshmem_barrier_all();                                                               \
        TYPE before = nvshmem_##NAME##_atomic_fetch_xor(&w[2], x, me);                       \
        NV_ASSERT(before == x && w[2] == 0, #NAME " fetch_xor");                             \
        nvshmem_barrier_all();                                                               \
        nvshmem_free(w);                                                                     \
    }
GPURMA_NVSHMEMI_AMO_BIT_TYPES(AMO_BIT)

int main(void)
{
    nv_init("atomics");
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
#define RUN_STD(NAME, TYPE) amo_##NAME();
#define RUN_EXT(NAME, TYPE) amo_ext_##NAME();
#define RUN_BIT(NAME, TYPE) amo_bit_##NAME();
    GPURMA_NVSHMEMI_AMO_STD_TYPES(RUN_STD)
    GPURMA_NVSHMEMI_AMO_EXT_TYPES(RUN_EXT)
    GPURMA_NVSHMEMI_AMO_BIT_TYPES(RUN_BIT)
    nv_finish();
    return 0;
}
