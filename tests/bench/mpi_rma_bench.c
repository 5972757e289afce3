/*
 * mpi_rma_bench - the patterns of gpurma-bench through MPI-3 RMA, as the
 * baseline gpurma-bench-compare measures gpurma against.
 *
 *   mpirun -np 2 mpi_rma_bench [--test latency|bw|atomic|all] [--min 8] [--max 4M]
 *
 * One window from MPI_Win_allocate, passive target for the whole run
 * (MPI_Win_lock_all once). Ranks 0 and 1 measure; further ranks only join
 * the barriers between steps.
 *
 *   latency  ping-pong of data + flag: MPI_Put of the data, MPI_Win_flush
 *            (MPI orders nothing between two puts, so the data must be
 *            complete at the target before the flag can say so), then the
 *            flag with MPI_Accumulate(MPI_REPLACE) and MPI_Win_flush. The
 *            receiver polls its own flag with MPI_Fetch_and_op(MPI_NO_OP)
 *            (an atomic read, consistent with the accumulate) and calls
 *            MPI_Win_sync before touching the data. One-way = half a round.
 *   bw       64 MPI_Put of the size + MPI_Win_flush, then a flag and the
 *            receiver's acknowledgement, as in gpurma-bench.
 *   atomic   MPI_Fetch_and_op(MPI_SUM) on the peer + MPI_Win_flush (the
 *            fetched value is only defined after the flush).
 *
 * Each value is the median of several batches; the data of the last round
 * of each size is checked byte for byte.
 */
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bench_util.h"

/* Flag slots after the data area, one cache line each. */
enum { FLAG_PING = 0, FLAG_PONG, FLAG_BW_DONE, FLAG_BW_ACK, FLAG_ATOMIC, NUM_FLAGS };
enum { TEST_LATENCY = 1, TEST_BW = 2, TEST_ATOMIC = 4, TEST_ALL = 7 };

typedef struct {
    size_t min_size, max_size;
    long   iters, warmup, batches;
    int    tests, csv;
} options_t;

typedef struct {
    MPI_Win        win;
    unsigned char *base;
    MPI_Aint       flags_off; /* byte offset of the flag area */
    int            rank, size;
    unsigned char *src, *peer_src;
    int64_t        seq[NUM_FLAGS];
    options_t      opt;
} bench_t;





static MPI_Aint flag_disp(const bench_t *b, int flag) { return b->flags_off + (MPI_Aint)flag * 64; }

/* Sets the peer's flag to the next sequence number: MPI_Accumulate with
 * MPI_REPLACE is atomic with respect to the reader's MPI_Fetch_and_op. */
static void flag_set(bench_t *b, int peer, int flag)
{
    int64_t v = ++b->seq[flag];
    MPI_Accumulate(&v, 1, MPI_INT64_T, peer, flag_disp(b, flag), 1, MPI_INT64_T, MPI_REPLACE,
                   b->win);
    MPI_Win_flush(peer, b->win);
}

/* Polls this rank's own flag until it reaches the next sequence number. */
static void flag_wait(bench_t *b, int flag)
{
    int64_t want = ++b->seq[flag], seen = 0, dummy = 0;
    do {
        MPI_Fetch_and_op(&dummy, &seen, MPI_INT64_T, b->rank, flag_disp(b, flag), MPI_NO_OP,
                         b->win);
        MPI_Win_flush(b->rank, b->win);
    } while (seen < want);
    MPI_Win_sync(b->win); /* data written before the flag is now readable */
}

static void verify_window(bench_t *b, size_t size, const char *test)
{
    if (memcmp(b->base, b->peer_src, size) == 0)
        return;
    size_t i = 0;
    while (b->base[i] == b->peer_src[i])
        i++;
    fprintf(stderr, "mpi_rma_bench: rank %d: %s, %zu B: byte %zu is 0x%02x, the peer put 0x%02x\n",
            b->rank, test, size, i, b->base[i], b->peer_src[i]);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void step_begin(bench_t *b, size_t size)
{
    if (b->rank < 2) {
        memset(b->base, 0xa5, size);
        MPI_Win_sync(b->win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static double measure_latency(bench_t *b, size_t size)
{
    long n = lat_iters(b->opt.iters, size);
    long warm = clamp_long(b->opt.warmup, 0, n);
    int peer = 1 - b->rank;
    double *batch_us = calloc((size_t)b->opt.batches, sizeof(double));
    for (long bi = -1; bi < b->opt.batches; bi++) {
        long rounds = bi < 0 ? warm : n;
        double t0 = now_s();
        for (long i = 0; i < rounds; i++) {
            if (b->rank == 1)
                flag_wait(b, FLAG_PING);
            MPI_Put(b->src, (int)size, MPI_BYTE, peer, 0, (int)size, MPI_BYTE, b->win);
            MPI_Win_flush(peer, b->win);
            flag_set(b, peer, b->rank == 0 ? FLAG_PING : FLAG_PONG);
            if (b->rank == 0)
                flag_wait(b, FLAG_PONG);
        }
        if (bi >= 0 && rounds > 0)
            batch_us[bi] = (now_s() - t0) * 1e6 / (2.0 * (double)rounds);
    }
    verify_window(b, size, "latency");
    double r = median(batch_us, b->opt.batches);
    free(batch_us);
    return r;
}

static double measure_bw(bench_t *b, size_t size)
{
    long reps = bw_reps(b->opt.iters, size);
    double *batch_gbs = calloc((size_t)b->opt.batches, sizeof(double));
    for (long bi = -1; bi < b->opt.batches; bi++) {
        double t0 = now_s();
        for (long r = 0; r < reps; r++) {
            if (b->rank == 0) {
                for (int k = 0; k < PUTS_PER_BW_REP; k++)
                    MPI_Put(b->src, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, b->win);
                MPI_Win_flush(1, b->win);
                flag_set(b, 1, FLAG_BW_DONE);
                flag_wait(b, FLAG_BW_ACK);
            } else {
                flag_wait(b, FLAG_BW_DONE);
                flag_set(b, 0, FLAG_BW_ACK);
            }
        }
        if (bi >= 0)
            batch_gbs[bi] = (double)size * PUTS_PER_BW_REP * (double)reps / (now_s() - t0) / 1e9;
    }
    if (b->rank == 1)
        verify_window(b, size, "bandwidth");
    double r = median(batch_gbs, b->opt.batches);
    free(batch_gbs);
    return r;
}

static double measure_atomic(bench_t *b)
{
    long n = b->opt.iters * 10 > ATOMIC_OPS_MIN ? b->opt.iters * 10 : ATOMIC_OPS_MIN;
    double *batch_mops = calloc((size_t)b->opt.batches, sizeof(double));
    MPI_Aint counter = flag_disp(b, FLAG_ATOMIC);
    if (b->rank == 1) {
        memset(b->base + counter, 0, 8);
        MPI_Win_sync(b->win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (b->rank == 0) {
        int64_t one = 1, old = 0, expect = 0;
        for (long bi = -1; bi < b->opt.batches; bi++) {
            double t0 = now_s();
            for (long i = 0; i < n; i++) {
                MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, counter, MPI_SUM, b->win);
                MPI_Win_flush(1, b->win);
                if (old != expect++) {
                    fprintf(stderr, "mpi_rma_bench: fetch_and_op returned %lld, expected %lld\n",
                            (long long)old, (long long)(expect - 1));
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
            if (bi >= 0)
                batch_mops[bi] = (double)n / (now_s() - t0) / 1e6;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double r = median(batch_mops, b->opt.batches);
    free(batch_mops);
    return r;
}

static void table_head(const bench_t *b, const char *test, const char *title, const char *unit)
{
    if (b->rank != 0 || b->opt.csv)
        return;
    printf("\n# %s: %s\n", test, title);
    printf("# %10s %14s\n", "size(B)", unit);
}

static void table_row(const bench_t *b, const char *test, size_t size, double value,
                      const char *unit)
{
    if (b->rank != 0)
        return;
    if (b->opt.csv)
        printf("%s,%zu,%.6g,%s\n", test, size, value, unit);
    else
        printf("  %10zu %14.3f\n", size, value);
    fflush(stdout);
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 mpi_rma_bench [options]\n"
            "gpurma-bench's patterns through MPI-3 RMA (passive target, lock_all).\n"
            "  --test T     latency, bw, atomic or all (default all)\n"
            "  --min SIZE   smallest message (default 8); k, m suffixes allowed\n"
            "  --max SIZE   largest message (default 4m)\n"
            "  --iters N    round trips / repetitions per batch (default 1000)\n"
            "  --warmup N   untimed latency rounds (default 100)\n"
            "  --batches N  batches per size, median reported (default 9)\n"
            "  --csv        print test,size,value,unit lines\n"
            "  -h, --help   this text\n");
}

/* 0: run; 1: help printed; 2: usage error. */
static int parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){8, 4u << 20, 1000, 100, 9, TEST_ALL, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "--csv")) {
            o->csv = 1;
            continue;
        } else if (!v) {
            bad = 1;
        } else if (!strcmp(a, "--min")) {
            bad = parse_size(v, (size_t)1 << 30, &o->min_size);
        } else if (!strcmp(a, "--max")) {
            bad = parse_size(v, (size_t)1 << 30, &o->max_size);
        } else if (!strcmp(a, "--iters")) {
            bad = parse_long(v, 1, &o->iters);
        } else if (!strcmp(a, "--warmup")) {
            bad = parse_long(v, 0, &o->warmup);
        } else if (!strcmp(a, "--batches")) {
            bad = parse_long(v, 1, &o->batches);
        } else if (!strcmp(a, "--test")) {
            o->tests = !strcmp(v, "latency") || !strcmp(v, "lat") ? TEST_LATENCY
                       : !strcmp(v, "bw")                          ? TEST_BW
                       : !strcmp(v, "atomic")                      ? TEST_ATOMIC
                       : !strcmp(v, "all")                         ? TEST_ALL
                                                                   : 0;
            bad = o->tests == 0;
        } else {
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "mpi_rma_bench: bad option or value: %s %s (see --help)\n", a,
                    v ? v : "");
            return 2;
        }
        i++;
    }
    if (o->min_size > o->max_size) {
        fprintf(stderr, "mpi_rma_bench: --min is larger than --max\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof(b));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    int prc = parse_options(argc, argv, &b.opt);
    if (prc) {
        MPI_Finalize();
        return prc == 1 ? 0 : prc;
    }
    if (b.size < 2) {
        fprintf(stderr, "mpi_rma_bench: needs at least 2 ranks (mpirun -np 2 mpi_rma_bench)\n");
        MPI_Finalize();
        return 2;
    }

    size_t max = b.opt.max_size;
    b.flags_off = (MPI_Aint)((max + 63) / 64 * 64);
    MPI_Aint win_bytes = b.flags_off + NUM_FLAGS * 64;
    MPI_Win_allocate(win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b.base, &b.win);
    memset(b.base, 0, (size_t)win_bytes);
    MPI_Win_lock_all(0, b.win);
    MPI_Barrier(MPI_COMM_WORLD);

    size_t alloc = (max + 4095) / 4096 * 4096;
    b.src = aligned_alloc(4096, alloc);
    b.peer_src = aligned_alloc(4096, alloc);
    if (!b.src || !b.peer_src)
        MPI_Abort(MPI_COMM_WORLD, 1);
    fill_pattern(b.src, max, 1000 + (uint64_t)b.rank);
    fill_pattern(b.peer_src, max, 1000 + (uint64_t)(b.rank == 0 ? 1 : 0));

    if (b.rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, ",\n")] = '\0';
        printf("# mpi_rma_bench: %s, ranks 0 and 1 of %d, passive target (lock_all)\n", lib,
               b.size);
        printf("# median of %ld batches; sizes %zu B .. %zu B\n", b.opt.batches,
               b.opt.min_size, b.opt.max_size);
        if (b.opt.csv)
            printf("test,size,value,unit\n");
        fflush(stdout);
    }

    if (b.opt.tests & TEST_LATENCY) {
        table_head(&b, "latency",
                   "ping-pong of MPI_Put + flush + flag accumulate + flush, one-way", "MPI(us)");
        for (size_t s = b.opt.min_size; s <= max; s *= 2) {
            step_begin(&b, s);
            double v = b.rank < 2 ? measure_latency(&b, s) : 0;
            MPI_Barrier(MPI_COMM_WORLD);
            table_row(&b, "latency", s, v, "us");
        }
    }
    if (b.opt.tests & TEST_BW) {
        table_head(&b, "bw", "64 MPI_Put + flush + acknowledged flag", "MPI(GB/s)");
        for (size_t s = b.opt.min_size; s <= max; s *= 2) {
            step_begin(&b, s);
            double v = b.rank < 2 ? measure_bw(&b, s) : 0;
            MPI_Barrier(MPI_COMM_WORLD);
            table_row(&b, "bw", s, v, "GB/s");
        }
    }
    if (b.opt.tests & TEST_ATOMIC) {
        table_head(&b, "atomic", "MPI_Fetch_and_op(SUM) + flush, one at a time", "MPI(Mop/s)");
        double v = 0;
        if (b.rank < 2) {
            v = measure_atomic(&b);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        table_row(&b, "atomic", 8, v, "Mop/s");
    }

    MPI_Win_unlock_all(b.win);
    MPI_Win_free(&b.win);
    free(b.src);
    free(b.peer_src);
    MPI_Finalize();
    return 0;
}
