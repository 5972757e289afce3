/*
 * bitwise.c - and, or and xor reductions (reduce and reducescatter) on
 * random 64-, 32-, 16- and 8-bit words, on the world and on a strided team,
 * with an odd element count and poisoned destinations: every PE checks
 * every element against the combination it computes itself.
 */
#include "nvtest.h"

#define N 37 /* elements per block: odd, not a multiple of any vector width */

static int me, npes;
static void *gsrc, *gdst; /* npes * N words of the widest type, each */

static uint64_t word(int pe, size_t i, int round)
{
    return nv_seed(53, pe, (uint64_t)round * 100000 + i);
}

/* The expected combination over the team's members of their word at i. */
static uint64_t expect(const int *members, int size, size_t i, int round, int op, uint64_t mask)
{
    uint64_t acc = word(members[0], i, round) & mask;
    for (int m = 1; m < size; m++) {
        uint64_t v = word(members[m], i, round) & mask;
        acc = op == 0 ? acc & v : op == 1 ? acc | v : acc ^ v;
    }
    return acc;
}

#define CHECK_TYPE(NAME, TYPE)                                                              \
    static void check_##NAME(nvshmem_team_t team, const int *members, int size, int rank,   \
                             int round)                                                     \
    {                                                                                       \
        const uint64_t mask = sizeof(TYPE) == 8 ? ~(uint64_t)0                              \
                                                : (((uint64_t)1 << (8 * sizeof(TYPE))) - 1); \
        TYPE *src = (TYPE *)gsrc, *dst = (TYPE *)gdst;                                      \
        for (int op = 0; op < 3; op++) {                                                    \
            for (size_t i = 0; i < (size_t)size * N; i++)                                   \
                src[i] = (TYPE)(word(me, i, round + op) & mask);                            \
            memset(dst, NV_POISON, ((size_t)npes * N + 1) * 8);                            \
            if (op == 0)                                                                    \
                nvshmem_##NAME##_and_reduce(team, dst, src, N);                             \
            else if (op == 1)                                                               \
                nvshmem_##NAME##_or_reduce(team, dst, src, N);                              \
            else                                                                            \
                nvshmem_##NAME##_xor_reduce(team, dst, src, N);                             \
            for (size_t i = 0; i < N; i++)                                                  \
                NV_ASSERT(((uint64_t)dst[i] & mask) == expect(members, size, i, round + op, op, mask), \
                          #NAME " op %d reduce [%zu]", op, i);                              \
            NV_ASSERT((unsigned char)((unsigned char *)dst)[N * sizeof(TYPE)] == NV_POISON, \
                      #NAME " reduce wrote past its %d elements", N);                       \
            memset(dst, NV_POISON, ((size_t)npes * N + 1) * 8);                            \
            if (op == 0)                                                                    \
                nvshmem_##NAME##_and_reducescatter(team, dst, src, N);                      \
            else if (op == 1)                                                               \
                nvshmem_##NAME##_or_reducescatter(team, dst, src, N);                       \
            else                                                                            \
                nvshmem_##NAME##_xor_reducescatter(team, dst, src, N);                      \
            for (size_t i = 0; i < N; i++)                                                  \
                NV_ASSERT(((uint64_t)dst[i] & mask) == expect(members, size, (size_t)rank * N + i,   \
                                                     round + op, op, mask),                 \
                          #NAME " op %d reducescatter [%zu]", op, i);                       \
            NV_ASSERT((unsigned char)((unsigned char *)dst)[N * sizeof(TYPE)] == NV_POISON, \
                      #NAME " reducescatter wrote past its %d elements", N);                \
        }                                                                                   \
    }
CHECK_TYPE(uint64, uint64_t)
CHECK_TYPE(int32, int32_t)
CHECK_TYPE(ushort, unsigned short)
CHECK_TYPE(uchar, unsigned char)

static void check_team(nvshmem_team_t team, const int *members, int size, int round)
{
    int rank = nvshmem_team_my_pe(team);
    check_uint64(team, members, size, rank, round);
    check_int32(team, members, size, rank, round + 10);
    check_ushort(team, members, size, rank, round + 20);
    check_uchar(team, members, size, rank, round + 30);
}

int main(void)
{
    nv_init("bitwise");
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    int world[64], even[64];
    NV_ASSERT(npes <= 64, "at most 64 PEs");
    gsrc = nvshmem_malloc((size_t)npes * N * 8);
    gdst = nvshmem_malloc(((size_t)npes * N + 1) * 8);
    for (int i = 0; i < npes && i < 64; i++)
        world[i] = i;
    check_team(NVSHMEM_TEAM_WORLD, world, npes, 1);
    nvshmem_team_t t;
    int size = (npes + 1) / 2;
    for (int i = 0; i < size; i++)
        even[i] = 2 * i;
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, size, NULL, 0, &t);
    if (t != NVSHMEM_TEAM_INVALID) {
        check_team(t, even, size, 100);
        nvshmem_team_destroy(t);
    }
    nvshmem_barrier_all();
    nvshmem_free(gdst);
    nvshmem_free(gsrc);
    nv_finish();
    return 0;
}
