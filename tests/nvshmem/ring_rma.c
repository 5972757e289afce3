/*
 * ring_rma.c - every PE writes to the next one and reads from the previous
 * one, for every standard type (p, g, put, get, nbi, iput, iget), the sized
 * forms and putmem/getmem at every size class, odd sizes included. Random
 * data, poisoned destinations, exact byte checks, and the bytes around each
 * destination must stay poisoned.
 */
#include "nvtest.h"

#define N 37 /* elements per typed check: odd, not a power of two */

static int me, npes, next, prev;

/* One type: p/g, put/get, put_nbi/get_nbi + quiet, iput/iget. */
#define RING_TYPE(NAME, TYPE)                                                                 \
    static void ring_##NAME(uint64_t round)                                                  \
    {                                                                                        \
        TYPE *dst = (TYPE *)nvshmem_malloc((N + 2) * sizeof(TYPE));                          \
        TYPE *src = (TYPE *)nvshmem_malloc(N * sizeof(TYPE));                                \
        TYPE mine[N], theirs[N], got[N + 2], want[N + 2];                                    \
        nv_fill(mine, sizeof mine, nv_seed(__LINE__, me, round));                            \
        nv_fill(theirs, sizeof theirs, nv_seed(__LINE__, prev, round));                      \
        memcpy(src, mine, sizeof mine);                                                      \
        for (int form = 0; form < 4; form++) {                                               \
            memset(dst, NV_POISON, (N + 2) * sizeof(TYPE));                                  \
            nvshmem_barrier_all();                                                           \
            switch (form) {                                                                  \
            case 0:                                                                          \
                for (int i = 0; i < N; i++)                                                  \
                    nvshmem_##NAME##_p(&dst[i + 1], mine[i], next);                          \
                break;                                                                       \
            case 1:                                                                          \
                nvshmem_##NAME##_put(dst + 1, mine, N, next);                                \
                break;                                                                       \
            case 2:                                                                          \
                nvshmem_##NAME##_put_nbi(dst + 1, mine, N, next);                            \
                nvshmem_quiet();                                                             \
                break;                                                                       \
            default: /* the even elements at stride 2, from every other of mine */           \
                nvshmem_##NAME##_iput(dst + 1, mine, 2, 2, (N + 1) / 2, next);               \
                break;                                                                       \
            }                                                                                \
            nvshmem_barrier_all();                                                           \
            memset(want, NV_POISON, sizeof want);                                            \
            for (int i = 0; i < N; i++)                                                      \
                if (form < 3 || i % 2 == 0)                                                  \
                    want[i + 1] = theirs[i];                                                 \
            NV_EXPECT_BYTES(dst, want, sizeof want, #NAME " form %d from PE %d", form, prev); \
        }                                                                                    \
        nvshmem_barrier_all();                                                               \
        /* reads of prev's source: g, get, get_nbi, iget */                                  \
        for (int form = 0; form < 4; form++) {                                               \
            memset(got, NV_POISON, sizeof got);                                              \
            if (form == 0)                                                                   \
                for (int i = 0; i < N; i++)                                                  \
                    got[i + 1] = nvshmem_##NAME##_g(&src[i], prev);                          \
            else if (form == 1)                                                              \
                nvshmem_##NAME##_get(got + 1, src, N, prev);                                 \
            else if (form == 2) {                                                            \
                nvshmem_##NAME##_get_nbi(got + 1, src, N, prev);                             \
                nvshmem_quiet();                                                             \
            } else                                                                           \
                nvshmem_##NAME##_iget(got + 1, src, 3, 3, N / 3 + 1, prev);                  \
            memset(want, NV_POISON, sizeof want);                                            \
            for (int i = 0; i < N; i++)                                                      \
                if (form < 3 || i % 3 == 0)                                                  \
                    want[i + 1] = theirs[i];                                                 \
            NV_EXPECT_BYTES(got, want, sizeof want, #NAME " read form %d from PE %d", form,  \
                            prev);                                                           \
        }                                                                                    \
        nvshmem_barrier_all();                                                               \
        nvshmem_free(src);                                                                   \
        nvshmem_free(dst);                                                                   \
    }
GPURMA_NVSHMEMI_RMA_TYPES(RING_TYPE)

/* putmem/getmem and the sized forms at sizes around every boundary. */
static void ring_bytes(uint64_t round)
{
    static const size_t sizes[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 4096, 4097,
                                   65536 + 5, (1u << 20) + 3};
    const size_t max = (1u << 20) + 3 + 64;
    char *dst = (char *)nvshmem_malloc(max), *src = (char *)nvshmem_malloc(max);
    char *mine = (char *)malloc(max), *theirs = (char *)malloc(max), *want = (char *)malloc(max);
    char *got = (char *)malloc(max);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        nv_fill(mine, n, nv_seed(1, me, round * 100 + k));
        nv_fill(theirs, n, nv_seed(1, prev, round * 100 + k));
        for (int form = 0; form < 7; form++) {
            memset(dst, NV_POISON, n + 32);
            nvshmem_barrier_all();
            switch (form) {
            case 0: nvshmem_putmem(dst + 16, mine, n, next); break;
            case 1: nvshmem_putmem_nbi(dst + 16, mine, n, next); nvshmem_quiet(); break;
            case 2: nvshmem_put8(dst + 16, mine, n, next); break;
            case 3: nvshmem_put16(dst + 16, mine, n / 2, next); break;
            case 4: nvshmem_put32(dst + 16, mine, n / 4, next); break;
            case 5: nvshmem_put64_nbi(dst + 16, mine, n / 8, next); nvshmem_quiet(); break;
            default: nvshmem_put128(dst + 16, mine, n / 16, next); break;
            }
            nvshmem_barrier_all();
            size_t moved = form < 3 ? n : form == 3 ? n / 2 * 2 : form == 4 ? n / 4 * 4
                                                    : form == 5 ? n / 8 * 8 : n / 16 * 16;
            memset(want, NV_POISON, n + 32);
            memcpy(want + 16, theirs, moved);
            NV_EXPECT_BYTES(dst, want, n + 32, "putmem form %d, %zu bytes", form, n);
        }
        /* getmem from prev, who holds theirs in src */
        memcpy(src, mine, n);
        nvshmem_barrier_all();
        memset(got, NV_POISON, n + 32);
        nvshmem_getmem(got + 16, src, n, prev);
        memset(want, NV_POISON, n + 32);
        memcpy(want + 16, theirs, n);
        NV_EXPECT_BYTES(got, want, n + 32, "getmem %zu bytes", n);
        memset(got, NV_POISON, n + 32);
        nvshmem_get64_nbi(got + 16, src, n / 8, prev);
        nvshmem_quiet();
        memset(want + 16 + n / 8 * 8, NV_POISON, n - n / 8 * 8);
        NV_EXPECT_BYTES(got, want, n + 32, "get64_nbi %zu bytes", n);
        nvshmem_barrier_all();
    }
    nvshmem_free(src);
    nvshmem_free(dst);
    free(mine), free(theirs), free(want), free(got);
}

int main(void)
{
    nv_init("ring_rma");
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
    NV_ASSERT(me >= 0 && me < npes, "my_pe %d, n_pes %d", me, npes);
    NV_ASSERT(nvshmem_team_my_pe(NVSHMEM_TEAM_WORLD) == me, "team_my_pe(WORLD)");
    for (uint64_t round = 0; round < 2; round++) {
#define RUN(NAME, TYPE) ring_##NAME(round);
        GPURMA_NVSHMEMI_RMA_TYPES(RUN)
        ring_bytes(round);
    }
    /* nvshmem_ptr: a peer on this node is load/store reachable */
    int *word = (int *)nvshmem_malloc(sizeof(int));
    *word = 1000 + me;
    nvshmem_barrier_all();
    int *peer = (int *)nvshmem_ptr(word, next);
    if (peer)
        NV_ASSERT(*peer == 1000 + next, "nvshmem_ptr of PE %d reads %d", next, *peer);
    NV_ASSERT(nvshmem_ptr(word, npes) == NULL, "nvshmem_ptr of PE n_pes is not NULL");
    nvshmem_free(word);
    nv_finish();
    return 0;
}
