/*
 * bitwise.c - and, or and xor reductions (reduce and reducescatter) on
 * random 64-, 32-, 16- and 8-bit words, on the world and on a strided team,
 * with an odd element count and poisoned destinations: every PE checks
 * every element against the combination it computes itself. Then sum,
 * prod, min and max of 16-bit integers (signed and unsigned), which are
 * the layer's own too.
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

/* 16-bit arithmetic: op 0 sum, 1 prod, 2 min, 3 max, computed here in the
 * type itself (sum and prod wrap modulo 2^16). */
#define CHECK_ARITH16(NAME, TYPE)                                                           \
    static TYPE expect16_##NAME(const int *members, int size, size_t i, int round, int op)  \
    {                                                                                       \
        TYPE acc = (TYPE)word(members[0], i, round);                                        \
        for (int m = 1; m < size; m++) {                                                    \
            TYPE v = (TYPE)word(members[m], i, round);                                      \
            acc = op == 0   ? (TYPE)(uint16_t)((uint16_t)acc + (uint16_t)v)                 \
                  : op == 1 ? (TYPE)(uint16_t)((uint32_t)(uint16_t)acc * (uint16_t)v)       \
                  : op == 2 ? (v < acc ? v : acc)                                           \
                            : (v > acc ? v : acc);                                          \
        }                                                                                   \
        return acc;                                                                         \
    }                                                                                       \
    static void arith16_##NAME(nvshmem_team_t team, const int *members, int size, int rank, \
                               int round)                                                   \
    {                                                                                       \
        TYPE *src = (TYPE *)gsrc, *dst = (TYPE *)gdst;                                      \
        for (int op = 0; op < 4; op++) {                                                    \
            for (int scatter = 0; scatter < 2; scatter++) {                                 \
                for (size_t i = 0; i < (size_t)size * N; i++)                               \
                    src[i] = (TYPE)word(me, i, round + op);                                 \
                memset(dst, NV_POISON, ((size_t)npes * N + 1) * 8);                        \
                if (!scatter)                                                               \
                    (op == 0 ? nvshmem_##NAME##_sum_reduce                                  \
                     : op == 1 ? nvshmem_##NAME##_prod_reduce                               \
                     : op == 2 ? nvshmem_##NAME##_min_reduce                                \
                               : nvshmem_##NAME##_max_reduce)(team, dst, src, N);           \
                else                                                                        \
                    (op == 0 ? nvshmem_##NAME##_sum_reducescatter                           \
                     : op == 1 ? nvshmem_##NAME##_prod_reducescatter                        \
                     : op == 2 ? nvshmem_##NAME##_min_reducescatter                         \
                               : nvshmem_##NAME##_max_reducescatter)(team, dst, src, N);    \
                for (size_t i = 0; i < N; i++) {                                            \
                    TYPE want = expect16_##NAME(members, size,                              \
                                                scatter ? (size_t)rank * N + i : i,         \
                                                round + op, op);                            \
                    NV_ASSERT(dst[i] == want, #NAME " op %d %s [%zu]: %d, want %d", op,     \
                              scatter ? "reducescatter" : "reduce", i, (int)dst[i],         \
                              (int)want);                                                   \
                }                                                                           \
                NV_ASSERT(((unsigned char *)dst)[N * sizeof(TYPE)] == NV_POISON,            \
                          #NAME " wrote past its %d elements", N);                          \
            }                                                                               \
        }                                                                                   \
    }
CHECK_ARITH16(short, short)
CHECK_ARITH16(uint16, uint16_t)

static void check_team(nvshmem_team_t team, const int *members, int size, int round)
{
    arith16_short(team, members, size, nvshmem_team_my_pe(team), round + 40);
    arith16_uint16(team, members, size, nvshmem_team_my_pe(team), round + 50);
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
