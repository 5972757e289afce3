/*
 * jacobi.c - 2-D Jacobi solver with one-sided halo exchange: the worked
 * example of docs/mpi-rma.md (an MPI-3 RMA code ported to gpurma).
 *
 * The NX x NY grid (boundary held at fixed values) is split over a px x py
 * grid of ranks. Each rank's block with its ghost cells lives twice in one
 * window (double buffering): iteration k reads copy k%2 and writes copy
 * (k+1)%2; its new boundary rows and columns then go straight into the
 * neighbours' ghost cells of copy (k+1)%2 with one put_subarray_signal per
 * neighbour (columns are strided: no packing), and iteration k+1 starts
 * once wait_until_all has seen all neighbours' signals reach k+1. A
 * neighbour can write copy (k+1)%2's ghosts only after it has seen our
 * signal k, i.e. after we finished reading that copy: no other
 * synchronisation is needed. The residual is an allreduce every 10 steps.
 *
 *   mpirun -np 4 examples/jacobi [NX NY ITERS] [--check]
 *
 * --check: rank 0 gathers the grid (gets) and compares it bit for bit with
 * a serial run of the same sweeps; exit 0 only if identical.
 */
#include <gpurma.h>
#include <gpurma_coll.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(call)                                                                            \
    do {                                                                                     \
        gpurma_status_t rc_ = (call);                                                        \
        if (rc_ != GPURMA_SUCCESS) {                                                         \
            fprintf(stderr, "jacobi: %s: %s\n", #call, gpurma_last_error_message(ctx));     \
            gpurma_abort(ctx, 1, "jacobi failed");                                           \
        }                                                                                    \
    } while (0)

enum { LEFT, RIGHT, DOWN, UP };

static gpurma_ctx_t ctx;

/* Fixed boundary: hot left edge, a ramp on top, cold elsewhere. */
static double boundary(int gx, int gy, int nx, int ny)
{
    if (gx == 0)
        return 1.0;
    if (gy == ny + 1)
        return (double)gx / (nx + 1);
    return 0.0;
}

/* Serial reference: the same sweeps over the whole grid. */
static double *serial(int nx, int ny, int iters)
{
    size_t w = (size_t)nx + 2, h = (size_t)ny + 2;
    double *a = calloc(w * h, sizeof(double)), *b = calloc(w * h, sizeof(double));
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++)
            if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
                a[y * w + x] = b[y * w + x] = boundary((int)x, (int)y, nx, ny);
    for (int k = 0; k < iters; k++) {
        for (size_t y = 1; y < h - 1; y++)
            for (size_t x = 1; x < w - 1; x++)
                b[y * w + x] = 0.25 * (a[y * w + x - 1] + a[y * w + x + 1] +
                                       a[(y - 1) * w + x] + a[(y + 1) * w + x]);
        double *t = a;
        a = b;
        b = t;
    }
    free(b);
    return a;
}

/* Cells and first interior index (0-based) of part c of n cells over parts:
 * the first n % parts parts get one cell more. */
static int part_cells(int n, int parts, int c) { return n / parts + (c < n % parts); }
static int part_start(int n, int parts, int c)
{
    return c * (n / parts) + (c < n % parts ? c : n % parts);
}

int main(int argc, char **argv)
{
    int nx = 256, ny = 256, iters = 200, check = 0, pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check"))
            check = 1;
        else if (pos == 0)
            nx = atoi(argv[i]), pos++;
        else if (pos == 1)
            ny = atoi(argv[i]), pos++;
        else
            iters = atoi(argv[i]);
    }
    if (gpurma_init(NULL, &ctx))
        return 1;
    int me = gpurma_rank(ctx), n = gpurma_size(ctx);
    /* The most square px x py with px * py = n. */
    int px = 1;
    for (int d = 1; d * d <= n; d++)
        if (n % d == 0)
            px = d;
    int py = n / px;
    int cx = me % px, cy = me / px;
    /* Block sizes: the first rows/columns get one extra cell. */
    int bx = part_cells(nx, px, cx), by = part_cells(ny, py, cy);
    int x0 = part_start(nx, px, cx), y0 = part_start(ny, py, cy);
    size_t w = (size_t)bx + 2, h = (size_t)by + 2, copy = w * h * sizeof(double);

    /* One window, two copies of the block with ghosts. */
    gpurma_win_t win;
    double *base;
    TRY(gpurma_win_allocate(gpurma_team_world(ctx), 2 * copy, NULL, (void **)&base, &win));
    int nb[4] = {cx > 0 ? me - 1 : -1, cx < px - 1 ? me + 1 : -1, cy > 0 ? me - px : -1,
                 cy < py - 1 ? me + px : -1};
    /* A neighbour's block (with ghosts): left/right ones share our height,
     * up/down ones our width. */
    size_t nb_w[4], nb_h[4];
    for (int d = 0; d < 4; d++) {
        nb_w[d] = d <= RIGHT ? (size_t)part_cells(nx, px, cx + (d == LEFT ? -1 : 1)) + 2 : w;
        nb_h[d] = d <= RIGHT ? h : (size_t)part_cells(ny, py, cy + (d == DOWN ? -1 : 1)) + 2;
    }
    for (int c = 0; c < 2; c++) {
        double *g = base + (size_t)c * w * h;
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                g[y * w + x] = boundary(x0 + (int)x, y0 + (int)y, nx, ny);
    }
    uint32_t sigs[4];
    size_t nsig = 0;
    for (int d = 0; d < 4; d++)
        if (nb[d] >= 0)
            sigs[nsig++] = (uint32_t)d;
    TRY(gpurma_barrier(gpurma_team_world(ctx)));

    double residual = 0;
    for (int k = 0; k < iters; k++) {
        double *a = base + (size_t)(k % 2) * w * h, *b = base + (size_t)((k + 1) % 2) * w * h;
        double local = 0;
        for (size_t y = 1; y <= (size_t)by; y++)
            for (size_t x = 1; x <= (size_t)bx; x++) {
                double v = 0.25 * (a[y * w + x - 1] + a[y * w + x + 1] + a[(y - 1) * w + x] +
                                   a[(y + 1) * w + x]);
                local += (v - a[y * w + x]) * (v - a[y * w + x]);
                b[y * w + x] = v;
            }
        /* Our edges into the neighbours' ghosts of copy (k+1)%2. The signal
         * slot says which side of the neighbour it lands on. */
        size_t next_copy = (size_t)((k + 1) % 2);
        for (int d = 0; d < 4; d++) {
            if (nb[d] < 0)
                continue;
            gpurma_subarray_t s;
            memset(&s, 0, sizeof(s));
            s.elem_bytes = sizeof(double);
            s.count[2] = 1;
            size_t nw = nb_w[d], nh = nb_h[d];
            size_t dst, src;
            if (d <= RIGHT) { /* a column: by rows of one element */
                s.count[0] = 1;
                s.count[1] = (size_t)by;
                s.src_pitch[0] = w * sizeof(double);
                s.dst_pitch[0] = nw * sizeof(double);
                src = w + (d == LEFT ? 1 : (size_t)bx);
                dst = nw + (d == LEFT ? nw - 1 : 0);
            } else { /* a row */
                s.count[0] = (size_t)bx;
                s.count[1] = 1;
                src = (d == DOWN ? 1 : (size_t)by) * w + 1;
                dst = (d == DOWN ? (nh - 1) * nw : 0) + 1;
            }
            uint32_t their_side = (uint32_t)(d ^ 1); /* LEFT<->RIGHT, DOWN<->UP */
            TRY(gpurma_put_subarray_signal(win, nb[d],
                                           (next_copy * nw * nh + dst) * sizeof(double),
                                           b + src, &s, their_side, GPURMA_SIGNAL_SET,
                                           (uint64_t)k + 1));
        }
        TRY(gpurma_wait_until_all(win, sigs, nsig, NULL, GPURMA_CMP_GE, (uint64_t)k + 1));
        if (k % 10 == 9 || k == iters - 1) {
            TRY(gpurma_allreduce(gpurma_team_world(ctx), &local, &residual, 1, GPURMA_FLOAT64,
                                 GPURMA_SUM, NULL));
            residual = sqrt(residual);
        }
    }
    /* Everyone's last copy is final once all have passed this barrier. */
    TRY(gpurma_barrier(gpurma_team_world(ctx)));
    int bad = 0;
    if (me == 0)
        printf("jacobi: %d x %d grid, %d iterations, %d x %d ranks, residual %.6e\n", nx, ny,
               iters, px, py, residual);
    if (check && me == 0) {
        double *ref = serial(nx, ny, iters);
        size_t fw = (size_t)nx + 2, last = (size_t)(iters % 2);
        for (int r = 0; r < n; r++) {
            int rcx = r % px, rcy = r / px;
            int rbx = part_cells(nx, px, rcx), rby = part_cells(ny, py, rcy);
            int rx0 = part_start(nx, px, rcx), ry0 = part_start(ny, py, rcy);
            size_t rw = (size_t)rbx + 2, rh = (size_t)rby + 2;
            double *blk = malloc(rw * rh * sizeof(double));
            TRY(gpurma_get(win, r, blk, last * rw * rh * sizeof(double),
                           rw * rh * sizeof(double)));
            TRY(gpurma_flush_local(win, r));
            for (int y = 1; y <= rby; y++)
                for (int x = 1; x <= rbx; x++) {
                    double want = ref[(size_t)(ry0 + y) * fw + (size_t)(rx0 + x)];
                    if (memcmp(&blk[(size_t)y * rw + (size_t)x], &want, sizeof(double)) && !bad++)
                        fprintf(stderr, "jacobi: rank %d cell (%d,%d): %.17g, serial %.17g\n", r,
                                rx0 + x, ry0 + y, blk[(size_t)y * rw + (size_t)x], want);
                }
            free(blk);
        }
        free(ref);
        printf("jacobi: %s the serial run bit for bit\n", bad ? "DIFFERS from" : "matches");
    }
    TRY(gpurma_barrier(gpurma_team_world(ctx)));
    TRY(gpurma_win_free(&win));
    gpurma_finalize(ctx);
    return bad ? 1 : 0;
}
