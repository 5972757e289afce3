/*
 * halo_compare.c - a 2-D halo exchange (one ghost layer of doubles around a
 * BX x BY block per rank, px x py ranks) through gpurma and through MPI-3
 * RMA in the same job, batches alternating so that a slow moment of the
 * machine hits both:
 *
 *   gpurma       one gpurma_put_subarray_signal per neighbour (columns are
 *                strided shapes: no packing), then gpurma_wait_until_all;
 *   MPI fence    MPI_Put with an MPI_Type_vector for columns, between two
 *                MPI_Win_fence;
 *   MPI PSCW     the same puts between MPI_Win_post/start and
 *                MPI_Win_complete/wait over the neighbour group.
 *
 * Open MPI's one-sided component is picked at launch (OMPI_MCA_osc=sm or
 * rdma; tests/bench/halo-compare.sh runs both). Rank 0 prints one line per
 * variant: median microseconds per exchange and the ratio MPI / gpurma
 * (above 1: gpurma faster). Every exchange is checked once at the end: the
 * ghost cells hold the neighbours' edges.
 *
 *   mpirun -np 4 tests/bench/halo_compare [BX BY ITERS BATCHES]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpurma.h"

enum { LEFT, RIGHT, DOWN, UP };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what, gpurma_ctx_t ctx)
{
    fprintf(stderr, "halo_compare: %s: %s\n", what, ctx ? gpurma_last_error_message(ctx) : "");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int bx = argc > 1 ? atoi(argv[1]) : 256, by = argc > 2 ? atoi(argv[2]) : 256;
    int iters = argc > 3 ? atoi(argv[3]) : 200, batches = argc > 4 ? atoi(argv[4]) : 7;
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    gpurma_ctx_t ctx;
    if (gpurma_init(NULL, &ctx))
        die("gpurma_init", NULL);
    int px = 1;
    for (int d = 1; d * d <= n; d++)
        if (n % d == 0)
            px = d;
    int py = n / px, cx = me % px, cy = me / px;
    int nb[4] = {cx > 0 ? me - 1 : -1, cx < px - 1 ? me + 1 : -1, cy > 0 ? me - px : -1,
                 cy < py - 1 ? me + px : -1};
    size_t w = (size_t)bx + 2, h = (size_t)by + 2, bytes = w * h * sizeof(double);

    /* gpurma window and MPI window, same block layout (x fastest). */
    gpurma_win_t gw;
    double *gb;
    if (gpurma_win_allocate(gpurma_team_world(ctx), bytes, NULL, (void **)&gb, &gw))
        die("gpurma_win_allocate", ctx);
    double *mb;
    MPI_Win mw;
    MPI_Win_allocate((MPI_Aint)bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mb, &mw);
    for (size_t i = 0; i < w * h; i++)
        gb[i] = mb[i] = me * 1e6 + (double)i;

    /* Where each side's edge starts here, and where it lands at the
     * neighbour (equal block sizes: the same layout everywhere). */
    size_t src[4] = {w + 1, w + (size_t)bx, w + 1, (size_t)by * w + 1};
    size_t dst[4] = {w + (size_t)bx + 1, w, (h - 1) * w + 1, 1};
    gpurma_subarray_t shape[4];
    for (int d = 0; d < 4; d++) {
        memset(&shape[d], 0, sizeof(shape[d]));
        shape[d].elem_bytes = sizeof(double);
        shape[d].count[2] = 1;
        if (d <= RIGHT) {
            shape[d].count[0] = 1;
            shape[d].count[1] = (size_t)by;
            shape[d].src_pitch[0] = shape[d].dst_pitch[0] = w * sizeof(double);
        } else {
            shape[d].count[0] = (size_t)bx;
            shape[d].count[1] = 1;
        }
    }
    uint32_t sigs[4];
    size_t nsig = 0;
    for (int d = 0; d < 4; d++)
        if (nb[d] >= 0)
            sigs[nsig++] = (uint32_t)d; /* slot d: data from the neighbour on side d */
    MPI_Datatype column;
    MPI_Type_vector(by, 1, (int)w, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Group world_group, nb_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int nbr[4], nnb = 0;
    for (int d = 0; d < 4; d++)
        if (nb[d] >= 0)
            nbr[nnb++] = nb[d];
    MPI_Group_incl(world_group, nnb, nbr, &nb_group);

    double *t_g = calloc((size_t)batches, sizeof(double));
    double *t_f = calloc((size_t)batches, sizeof(double));
    double *t_p = calloc((size_t)batches, sizeof(double));
    uint64_t round = 0;
    for (int bi = -1; bi < batches; bi++) { /* batch -1 warms up */
        /* gpurma */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_s();
        for (int it = 0; it < iters; it++) {
            round++;
            for (int d = 0; d < 4; d++)
                if (nb[d] >= 0 &&
                    gpurma_put_subarray_signal(gw, nb[d], dst[d] * sizeof(double), gb + src[d],
                                               &shape[d], (uint32_t)(d ^ 1), GPURMA_SIGNAL_SET,
                                               round))
                    die("put_subarray_signal", ctx);
            if (gpurma_wait_until_all(gw, sigs, nsig, NULL, GPURMA_CMP_GE, round))
                die("wait_until_all", ctx);
        }
        double tg = (now_s() - t0) / iters;
        /* MPI fence: the phase opens and closes its epochs (PSCW follows). */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now_s();
        MPI_Win_fence(MPI_MODE_NOPRECEDE, mw);
        for (int it = 0; it < iters; it++) {
            for (int d = 0; d < 4; d++) {
                if (nb[d] < 0)
                    continue;
                if (d <= RIGHT)
                    MPI_Put(mb + src[d], 1, column, nb[d], (MPI_Aint)dst[d], 1, column, mw);
                else
                    MPI_Put(mb + src[d], bx, MPI_DOUBLE, nb[d], (MPI_Aint)dst[d], bx, MPI_DOUBLE,
                            mw);
            }
            MPI_Win_fence(it == iters - 1 ? MPI_MODE_NOSUCCEED : 0, mw);
        }
        double tf = (now_s() - t0) / iters;
        /* MPI PSCW */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now_s();
        for (int it = 0; it < iters; it++) {
            MPI_Win_post(nb_group, 0, mw);
            MPI_Win_start(nb_group, 0, mw);
            for (int d = 0; d < 4; d++) {
                if (nb[d] < 0)
                    continue;
                if (d <= RIGHT)
                    MPI_Put(mb + src[d], 1, column, nb[d], (MPI_Aint)dst[d], 1, column, mw);
                else
                    MPI_Put(mb + src[d], bx, MPI_DOUBLE, nb[d], (MPI_Aint)dst[d], bx, MPI_DOUBLE,
                            mw);
            }
            MPI_Win_complete(mw);
            MPI_Win_wait(mw);
        }
        double tp = (now_s() - t0) / iters;
        /* The slowest rank's time is the exchange's. */
        double mine[3] = {tg, tf, tp}, worst[3];
        MPI_Reduce(mine, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (bi >= 0) {
            t_g[bi] = worst[0];
            t_f[bi] = worst[1];
            t_p[bi] = worst[2];
        }
    }
    /* Check: every ghost holds the neighbour's edge, in both libraries. */
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int d = 0; d < 4; d++) {
        if (nb[d] < 0)
            continue;
        /* Data from side d landed at dst[d ^ 1] from the neighbour's src[d ^ 1]. */
        for (size_t k = 0; k < (d <= RIGHT ? (size_t)by : (size_t)bx); k++) {
            size_t step = d <= RIGHT ? w : 1;
            size_t at = dst[d ^ 1] + k * step, from = src[d ^ 1] + k * step;
            double want = nb[d] * 1e6 + (double)from;
            bad += gb[at] != want;
            bad += mb[at] != want;
        }
    }
    int any_bad;
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        qsort(t_g, (size_t)batches, sizeof(double), cmp_double);
        qsort(t_f, (size_t)batches, sizeof(double), cmp_double);
        qsort(t_p, (size_t)batches, sizeof(double), cmp_double);
        double g = t_g[batches / 2], f = t_f[batches / 2], p = t_p[batches / 2];
        const char *osc = getenv("OMPI_MCA_osc");
        printf("halo %dx%d doubles/rank, %d ranks (%dx%d), osc %s, %d x %d exchanges: "
               "gpurma %.2f us | MPI fence %.2f us (%.2fx) | MPI PSCW %.2f us (%.2fx) | %s\n",
               bx, by, n, px, py, osc ? osc : "default", batches, iters, g * 1e6, f * 1e6, f / g,
               p * 1e6, p / g, any_bad ? "GHOSTS WRONG" : "ghosts checked");
    }
    MPI_Type_free(&column);
    MPI_Group_free(&nb_group);
    MPI_Group_free(&world_group);
    MPI_Win_free(&mw);
    gpurma_win_free(&gw);
    gpurma_finalize(ctx);
    MPI_Finalize();
    return any_bad && me == 0 ? 1 : 0;
}
