/*
 * collectives.c - NVSHMEM collectives on the world and on a split team:
 * sum/min/max reduce of random ints and doubles, reducescatter, broadcast
 * from every root, fcollect and alltoall, with exact checks. They map onto
 * gpurma's collectives (gpurma_coll.h, gpurma_coll_device.h).
 */

#include "nvtest.h"

#define N 1031 /* elements per PE: odd, prime */

static int me, npes;
/* Symmetric buffers, allocated by every PE of the world (nvshmem_malloc is
 * collective over the world, so never inside a sub-team's code). */
static int *src, *dst;
static double *dsrc, *ddst;

static int rnd_int(int pe, size_t i, int round)
{
    return (int)(nv_seed(31, pe, (uint64_t)round * 100000 + i) % 2001) - 1000;
}

static void check_team(nvshmem_team_t team, int round)
{
    int r = nvshmem_team_my_pe(team), n = nvshmem_team_n_pes(team);
    int world[64];
    for (int k = 0; k < n && k < 64; k++)
        world[k] = nvshmem_team_translate_pe(team, k, NVSHMEM_TEAM_WORLD);
    for (size_t i = 0; i < (size_t)n * N; i++)
        src[i] = rnd_int(me, i, round);
    for (size_t i = 0; i < N; i++)
        dsrc[i] = (double)rnd_int(me, i, round + 7) / 8.0; /* exact in binary */
    memset(dst, NV_POISON, (size_t)n * N * sizeof(int));
    nvshmem_barrier(team);

    nvshmem_int_sum_reduce(team, dst, src, N);
    for (size_t i = 0; i < N; i++) {
        int want = 0;
        for (int k = 0; k < n; k++)
            want += rnd_int(world[k], i, round);
        NV_ASSERT(dst[i] == want, "int sum_reduce [%zu]: %d, want %d", i, dst[i], want);
    }
    nvshmem_double_max_reduce(team, ddst, dsrc, N);
    for (size_t i = 0; i < N; i++) {
        double want = -1e300;
        for (int k = 0; k < n; k++) {
            double v = (double)rnd_int(world[k], i, round + 7) / 8.0;
            want = v > want ? v : want;
        }
        NV_ASSERT(ddst[i] == want, "double max_reduce [%zu]", i);
    }
    nvshmem_int_min_reducescatter(team, dst, src, N);
    for (size_t i = 0; i < N; i++) {
        int want = 1 << 30;
        for (int k = 0; k < n; k++) {
            int v = rnd_int(world[k], (size_t)r * N + i, round);
            want = v < want ? v : want;
        }
        NV_ASSERT(dst[i] == want, "int min_reducescatter [%zu]", i);
    }
    for (int root = 0; root < n; root++) {
        memset(dst, NV_POISON, N * sizeof(int));
        nvshmem_int_broadcast(team, dst, src, N, root);
        for (size_t i = 0; i < N; i++)
            NV_ASSERT(dst[i] == rnd_int(world[root], i, round), "broadcast from %d [%zu]", root, i);
    }
    nvshmem_int_fcollect(team, dst, src, N);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < N; i++)
            NV_ASSERT(dst[(size_t)k * N + i] == rnd_int(world[k], i, round), "fcollect %d [%zu]",
                      k, i);
    nvshmem_int_alltoall(team, dst, src, N);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < N; i++)
            NV_ASSERT(dst[(size_t)k * N + i] == rnd_int(world[k], (size_t)r * N + i, round),
                      "alltoall from %d [%zu]", k, i);
    nvshmem_barrier(team);
}

int main(void)
{
    nv_init("collectives");
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    src = (int *)nvshmem_malloc((size_t)npes * N * sizeof(int));
    dst = (int *)nvshmem_malloc((size_t)npes * N * sizeof(int));
    dsrc = (double *)nvshmem_malloc(N * sizeof(double));
    ddst = (double *)nvshmem_malloc(N * sizeof(double));
    check_team(NVSHMEM_TEAM_WORLD, 1);
    nvshmem_team_t even;
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even);
    if (even != NVSHMEM_TEAM_INVALID) {
        check_team(even, 2);
        nvshmem_team_destroy(even);
    }
    nvshmem_barrier_all();
    nvshmem_free(ddst), nvshmem_free(dsrc), nvshmem_free(dst), nvshmem_free(src);
    nv_finish();
    return 0;
}
