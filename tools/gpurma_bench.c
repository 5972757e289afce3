/*
 * gpurma-bench - one-sided performance of the host backend between two ranks.
 *
 *   mpirun -np 2 gpurma-bench [--test latency|bw|atomic|all] [--min 8] [--max 4M]
 *
 * Rank 0 and rank 1 measure; any further rank only joins the barriers that
 * separate the steps. Three patterns, each printed as a table next to a
 * reference measured in the same run by rank 0 alone:
 *
 *   latency  put_signal ping-pong: rank 0 puts+signals, rank 1 waits and
 *            puts+signals back; one-way time = half the round trip. The
 *            reference is one memcpy of the same size (the floor of a put).
 *   bw       64 puts of the size, flush, a signal, and rank 1's
 *            acknowledgement (so the time covers data the receiver has
 *            seen). The reference is 64 single-thread memcpy calls between
 *            two buffers of the same size: the same cache footprint.
 *   atomic   fetch_add on rank 1's window, one at a time. The reference is
 *            the same fetch_add on local memory.
 *   putflush (only when asked for) one put, then a flush, again and again:
 *            what a pusher waits for per operation (with GPURMA_ENGINE=port,
 *            the round trip through the proxy). The reference is one memcpy
 *            of the same size. Measured twice: through the host API, and
 *            through the device API called by this thread (what a kernel
 *            does; on the host backend it runs on the CPU, and its flush
 *            waits for the proxy thread instead of executing descriptors).
 *
 * Every value is the median of several batches; the batches of each
 * reference alternate with gpurma's, so that load from other work on a
 * shared machine hits both alike. Data arriving through the measured puts is
 * checked byte for byte once per size, so a put that moved nothing cannot
 * pass for a fast one.
 *
 * --gpu runs the GPU benchmarks instead (gpurma_bench_gpu.cu, CUDA builds);
 * without CUDA it exits with 77 and says why.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpurma.h"
#include "gpurma_device.h"
#ifdef HAVE_CUDA
#include "gpurma_bench_gpu.h"
#endif

#include "tools/bench_util.h"

enum { SIG_PING = 0, SIG_PONG, SIG_BW_DONE, SIG_BW_ACK, SIG_ATOMIC_DONE, NUM_SIGS };
/* putflush is not part of all: it is the port engine's row (GPURMA_ENGINE=port). */
enum { TEST_LATENCY = 1, TEST_BW = 2, TEST_ATOMIC = 4, TEST_ALL = 7, TEST_PUTFLUSH = 8 };
enum { FROM_HOST_API = 0, FROM_DEVICE_API = 1 }; /* who pushes putflush's puts */

typedef struct {
    size_t min_size, max_size;
    long   iters, warmup, batches;
    int    tests;
    int    csv;
    int    gpu, max_given, quick;
} options_t;

typedef struct {
    gpurma_ctx_t  ctx;
    gpurma_team_t world;
    gpurma_win_t  win;
    char         *base;       /* this rank's window                       */
    size_t        atomic_off; /* 8-byte slot after the data area          */
    int           rank, size;
    unsigned char *src;       /* this rank's pattern, page aligned         */
    unsigned char *peer_src;  /* the other measuring rank's pattern        */
    unsigned char *copy_src, *copy_dst; /* memcpy reference buffers         */
    uint64_t      seq[NUM_SIGS]; /* last value set on each signal          */
    options_t     opt;
} bench_t;

/* ------------------------------------------------------------------ helpers */


static void die(bench_t *b, const char *what, int rc)
{
    fprintf(stderr, "gpurma-bench: rank %d: %s failed: %s (%s)\n", b->rank, what,
            gpurma_strerror((gpurma_status_t)rc), gpurma_last_error_message(b->ctx));
    gpurma_abort(b->ctx, 1, what);
}

#define CHECK(b, call)                                                                    \
    do {                                                                                  \
        int rc_ = (call);                                                                 \
        if (rc_ != GPURMA_SUCCESS)                                                        \
            die((b), #call, rc_);                                                         \
    } while (0)



/* One row of a table: medians over the batches. The ratio is the median of
 * the per-batch ratios: each gpurma batch is compared with the reference
 * batch that ran right after it, which cancels slow drifts of a shared
 * machine better than a ratio of two medians. */
typedef struct {
    double value, peer, ratio;
} result_t;

static void summarize(double *mine, double *ref, long n, result_t *out)
{
    double *ratio = calloc((size_t)n, sizeof(double));
    for (long i = 0; ratio && i < n; i++)
        ratio[i] = ref[i] > 0 ? mine[i] / ref[i] : 0;
    out->ratio = ratio ? median(ratio, n) : 0;
    out->value = median(mine, n);
    out->peer = median(ref, n);
    free(ratio);
}

/* Keeps the compiler from dropping copies into buffers nobody reads. */
static inline void clobber(void) { __asm__ __volatile__("" ::: "memory"); }


static void progress(const bench_t *b, const char *test, size_t size)
{
    if (b->rank != 0)
        return;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\rgpurma-bench: %-8s %9zu B ", test, size);
    else if (!strcmp(test, "atomic"))
        fprintf(stderr, "gpurma-bench: running atomic\n");
    else if (size == b->opt.min_size)
        fprintf(stderr, "gpurma-bench: running %s (%zu B .. %zu B)\n", test, b->opt.min_size,
                b->opt.max_size);
}

static void progress_done(const bench_t *b)
{
    if (b->rank == 0 && isatty(STDERR_FILENO))
        fprintf(stderr, "\r%50s\r", "");
}

/* Each signal is set to an ever-growing sequence number, so a wait for >= the
 * next number can never be satisfied by a previous step. */
static uint64_t next_seq(bench_t *b, int sig) { return ++b->seq[sig]; }

static void signal_next(bench_t *b, int peer, int sig)
{
    CHECK(b, gpurma_signal(b->win, peer, (uint32_t)sig, GPURMA_SIGNAL_SET, next_seq(b, sig)));
}

static void wait_next(bench_t *b, int sig)
{
    CHECK(b, gpurma_wait_until(b->win, (uint32_t)sig, GPURMA_CMP_GE, next_seq(b, sig)));
}

/* Destination bytes must be exactly the pattern the peer put. */
static void verify_window(bench_t *b, size_t size, const char *test)
{
    if (memcmp(b->base, b->peer_src, size) == 0)
        return;
    size_t i = 0;
    while (b->base[i] == b->peer_src[i])
        i++;
    fprintf(stderr,
            "gpurma-bench: rank %d: %s, %zu B: byte %zu is 0x%02x, the peer put 0x%02x\n",
            b->rank, test, size, i, (unsigned char)b->base[i], b->peer_src[i]);
    gpurma_abort(b->ctx, 1, "data check failed");
}

/* Every step starts with the window poisoned (so stale data from a previous
 * size cannot pass the check) and with every rank present. */
static void step_begin(bench_t *b, size_t size)
{
    if (b->rank < 2)
        memset(b->base, 0xa5, size);
    CHECK(b, gpurma_barrier(b->world));
}

static void step_end(bench_t *b) { CHECK(b, gpurma_barrier(b->world)); }

/* ------------------------------------------------------------ measurements */

/* Time of n memcpy calls of size bytes, in microseconds per call. */
static double memcpy_time_us(bench_t *b, size_t size, long n)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        memcpy(b->copy_dst, b->copy_src, size);
        clobber();
    }
    return (now_s() - t0) * 1e6 / (double)n;
}

/* One-way latency in microseconds, rank 0's view (rank 1 returns 0). After
 * each batch rank 0 times the memcpy reference while rank 1 already waits
 * for the next ping: on a shared machine both then see the same conditions. */
static void measure_latency(bench_t *b, size_t size, result_t *res)
{
    long n = lat_iters(b->opt.iters, size);
    long warm = clamp_long(b->opt.warmup, 0, n);
    double *batch_us = calloc((size_t)b->opt.batches, sizeof(double));
    double *batch_copy = calloc((size_t)b->opt.batches, sizeof(double));
    if (!batch_us || !batch_copy)
        gpurma_abort(b->ctx, 1, "out of memory");
    for (long bi = -1; bi < b->opt.batches; bi++) { /* batch -1 warms up */
        long rounds = bi < 0 ? warm : n;
        double t0 = now_s();
        for (long i = 0; i < rounds; i++) {
            if (b->rank == 0) {
                CHECK(b, gpurma_put_signal(b->win, 1, 0, b->src, size, SIG_PING,
                                           GPURMA_SIGNAL_SET, next_seq(b, SIG_PING)));
                wait_next(b, SIG_PONG);
            } else {
                wait_next(b, SIG_PING);
                CHECK(b, gpurma_put_signal(b->win, 0, 0, b->src, size, SIG_PONG,
                                           GPURMA_SIGNAL_SET, next_seq(b, SIG_PONG)));
            }
        }
        if (bi >= 0 && b->rank == 0) {
            batch_us[bi] = (now_s() - t0) * 1e6 / (2.0 * (double)rounds);
            batch_copy[bi] = memcpy_time_us(b, size, n);
        }
    }
    /* The last wait of each side acquired the other's last put. */
    verify_window(b, size, "latency");
    if (b->rank == 0)
        summarize(batch_us, batch_copy, b->opt.batches, res);
    free(batch_us);
    free(batch_copy);
}

/* 64 copies without the library, in GB/s: the peak a put can reach. */
static double memcpy_bw_gbs(bench_t *b, size_t size, long reps)
{
    double t0 = now_s();
    for (long r = 0; r < reps; r++)
        for (int k = 0; k < PUTS_PER_BW_REP; k++) {
            memcpy(b->copy_dst, b->copy_src, size);
            clobber();
        }
    return (double)size * PUTS_PER_BW_REP * (double)reps / (now_s() - t0) / 1e9;
}

/* Put bandwidth in GB/s (1e9 bytes per second), rank 0's view. Batches of
 * puts and of reference copies alternate, for the reason given above. */
static void measure_bw(bench_t *b, size_t size, result_t *res)
{
    long reps = bw_reps(b->opt.iters, size);
    double *batch_gbs = calloc((size_t)b->opt.batches, sizeof(double));
    double *batch_peak = calloc((size_t)b->opt.batches, sizeof(double));
    if (!batch_gbs || !batch_peak)
        gpurma_abort(b->ctx, 1, "out of memory");
    for (long bi = -1; bi < b->opt.batches; bi++) { /* batch -1 warms up */
        double t0 = now_s();
        for (long r = 0; r < reps; r++) {
            if (b->rank == 0) {
                for (int k = 0; k < PUTS_PER_BW_REP; k++)
                    CHECK(b, gpurma_put(b->win, 1, 0, b->src, size));
                CHECK(b, gpurma_flush_local(b->win, 1));
                signal_next(b, 1, SIG_BW_DONE);
                wait_next(b, SIG_BW_ACK);
            } else {
                wait_next(b, SIG_BW_DONE);
                signal_next(b, 0, SIG_BW_ACK);
            }
        }
        if (bi >= 0 && b->rank == 0) {
            batch_gbs[bi] =
                (double)size * PUTS_PER_BW_REP * (double)reps / (now_s() - t0) / 1e9;
            batch_peak[bi] = memcpy_bw_gbs(b, size, reps);
        }
    }
    if (b->rank == 1)
        verify_window(b, size, "bandwidth");
    if (b->rank == 0 && memcmp(b->copy_dst, b->copy_src, size))
        gpurma_abort(b->ctx, 1, "memcpy reference: copy mismatch");
    if (b->rank == 0)
        summarize(batch_gbs, batch_peak, b->opt.batches, res);
    free(batch_gbs);
    free(batch_peak);
}

static int put_then_flush(bench_t *b, const gpurma_dev_win_t *dw, size_t size)
{
    if (!dw) {
        int rc = gpurma_put(b->win, 1, 0, b->src, size);
        return rc ? rc : gpurma_flush_local(b->win, 1);
    }
    gpurma_status_t rc = gpurma_dev_put(*dw, 1, 0, b->src, size);
    return rc ? rc : gpurma_dev_flush_local(*dw, 1);
}

/* put + flush in GB/s, rank 0's view; batches alternate with memcpy of
 * the same size. The destination is checked after a quiet. dw: through
 * the device API. */
static void measure_putflush(bench_t *b, const gpurma_dev_win_t *dw, size_t size, result_t *res)
{
    long n = lat_iters(b->opt.iters, size);
    double *batch_gbs = calloc((size_t)b->opt.batches, sizeof(double));
    double *batch_copy = calloc((size_t)b->opt.batches, sizeof(double));
    if (!batch_gbs || !batch_copy)
        gpurma_abort(b->ctx, 1, "out of memory");
    for (long bi = -1; b->rank == 0 && bi < b->opt.batches; bi++) { /* batch -1 warms up */
        double t0 = now_s();
        for (long i = 0; i < n; i++)
            CHECK(b, put_then_flush(b, dw, size));
        if (bi >= 0) {
            batch_gbs[bi] = (double)size * (double)n / (now_s() - t0) / 1e9;
            batch_copy[bi] = (double)size / memcpy_time_us(b, size, n) / 1e3;
        }
    }
    if (b->rank == 0)
        CHECK(b, gpurma_quiet(b->win));
    CHECK(b, gpurma_barrier(b->world));
    if (b->rank == 1)
        verify_window(b, size, "putflush");
    if (b->rank == 0)
        summarize(batch_gbs, batch_copy, b->opt.batches, res);
    free(batch_gbs);
    free(batch_copy);
}

static long atomic_ops(const options_t *o)
{
    return o->iters * 10 > ATOMIC_OPS_MIN ? o->iters * 10 : ATOMIC_OPS_MIN;
}

/* The same fetch_add on local memory, in millions per second. */
static double local_atomic_mops(bench_t *b, long n)
{
    uint64_t *cell = (uint64_t *)b->copy_dst;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        __atomic_fetch_add(cell, 1, __ATOMIC_ACQ_REL);
        clobber();
    }
    return (double)n / (now_s() - t0) / 1e6;
}

/* fetch_add on rank 1's window, in millions of operations per second;
 * batches alternate with the local reference. */
static void measure_atomic(bench_t *b, result_t *res)
{
    long n = atomic_ops(&b->opt);
    double *batch_mops = calloc((size_t)b->opt.batches, sizeof(double));
    double *batch_local = calloc((size_t)b->opt.batches, sizeof(double));
    if (!batch_mops || !batch_local)
        gpurma_abort(b->ctx, 1, "out of memory");
    if (b->rank == 1)
        memset(b->base + b->atomic_off, 0, 8);
    CHECK(b, gpurma_barrier(b->world));
    uint64_t expect = 0;
    if (b->rank == 0) {
        for (long bi = -1; bi < b->opt.batches; bi++) { /* batch -1 warms up */
            double t0 = now_s();
            for (long i = 0; i < n; i++) {
                uint64_t old;
                CHECK(b, gpurma_atomic_fetch_add(b->win, 1, b->atomic_off, 1, &old));
                /* Nobody else adds: each op must see the previous one. */
                if (old != expect++) {
                    fprintf(stderr, "gpurma-bench: fetch_add returned %llu, expected %llu\n",
                            (unsigned long long)old, (unsigned long long)(expect - 1));
                    gpurma_abort(b->ctx, 1, "atomic check failed");
                }
            }
            if (bi >= 0) {
                batch_mops[bi] = (double)n / (now_s() - t0) / 1e6;
                batch_local[bi] = local_atomic_mops(b, n);
            }
        }
        CHECK(b, gpurma_quiet(b->win));
        signal_next(b, 1, SIG_ATOMIC_DONE);
    } else if (b->rank == 1) {
        wait_next(b, SIG_ATOMIC_DONE);
        uint64_t total = __atomic_load_n((uint64_t *)(b->base + b->atomic_off), __ATOMIC_ACQUIRE);
        uint64_t want = (uint64_t)n * (uint64_t)(b->opt.batches + 1);
        if (total != want) {
            fprintf(stderr, "gpurma-bench: rank 1: counter is %llu after %llu fetch_adds\n",
                    (unsigned long long)total, (unsigned long long)want);
            gpurma_abort(b->ctx, 1, "atomic check failed");
        }
    }
    if (b->rank == 0)
        summarize(batch_mops, batch_local, b->opt.batches, res);
    free(batch_mops);
    free(batch_local);
}

/* ------------------------------------------------------------------ output */

static void table_head(const bench_t *b, const char *test, const char *title, const char *unit,
                       const char *peer_name, const char *ratio_name)
{
    if (b->rank != 0)
        return;
    if (b->opt.csv)
        return;
    printf("\n# %s: %s\n", test, title);
    printf("# %10s %14s %14s %10s\n", "size(B)", unit, peer_name, ratio_name);
}

static void table_row(const bench_t *b, const char *test, size_t size, const result_t *r,
                      const char *unit)
{
    if (b->rank != 0)
        return;
    if (b->opt.csv)
        printf("%s,%zu,%.6g,%.6g,%.4f,%s\n", test, size, r->value, r->peer, r->ratio, unit);
    else
        printf("  %10zu %14.3f %14.3f %10.3f\n", size, r->value, r->peer, r->ratio);
    fflush(stdout);
}

/* ------------------------------------------------------------------- tests */

static void run_latency(bench_t *b)
{
    table_head(b, "latency", "put_signal ping-pong, one-way time (half round trip), median",
               "gpurma(us)", "memcpy(us)", "ratio");
    for (size_t s = b->opt.min_size; s <= b->opt.max_size; s *= 2) {
        progress(b, "latency", s);
        step_begin(b, s);
        result_t r = {0, 0, 0};
        if (b->rank < 2)
            measure_latency(b, s, &r);
        step_end(b);
        table_row(b, "latency", s, &r, "us");
    }
    progress_done(b);
}

static void run_bw(bench_t *b)
{
    table_head(b, "bw",
               "64 puts + flush + acknowledged signal; peak = single-thread memcpy, same footprint",
               "gpurma(GB/s)", "memcpy(GB/s)", "fraction");
    for (size_t s = b->opt.min_size; s <= b->opt.max_size; s *= 2) {
        progress(b, "bw", s);
        step_begin(b, s);
        result_t r = {0, 0, 0};
        if (b->rank < 2)
            measure_bw(b, s, &r);
        step_end(b);
        table_row(b, "bw", s, &r, "GB/s");
    }
    progress_done(b);
}

static void run_putflush(bench_t *b, int from)
{
    const char *test = from == FROM_DEVICE_API ? "devputflush" : "putflush";
    gpurma_dev_win_t dw;
    if (from == FROM_DEVICE_API)
        CHECK(b, gpurma_win_device(b->win, &dw));
    table_head(b, test,
               from == FROM_DEVICE_API
                   ? "gpurma_dev_put, then gpurma_dev_flush_local, by this thread; peer = memcpy"
                   : "put, then flush, one at a time; peer = memcpy of the same size",
               "gpurma(GB/s)", "memcpy(GB/s)", "fraction");
    for (size_t s = b->opt.min_size; s <= b->opt.max_size; s *= 2) {
        progress(b, test, s);
        step_begin(b, s);
        result_t r = {0, 0, 0};
        if (b->rank < 2)
            measure_putflush(b, from == FROM_DEVICE_API ? &dw : NULL, s, &r);
        else
            CHECK(b, gpurma_barrier(b->world)); /* measure_putflush's barrier */
        step_end(b);
        table_row(b, test, s, &r, "GB/s");
    }
    progress_done(b);
}

static void run_atomic(bench_t *b)
{
    table_head(b, "atomic", "fetch_add on the peer, one at a time", "gpurma(Mop/s)",
               "local(Mop/s)", "ratio");
    progress(b, "atomic", b->opt.min_size);
    result_t r = {0, 0, 0};
    if (b->rank < 2)
        measure_atomic(b, &r);
    else
        CHECK(b, gpurma_barrier(b->world)); /* measure_atomic's barrier */
    step_end(b);
    table_row(b, "atomic", 8, &r, "Mop/s");
    progress_done(b);
}

/* ----------------------------------------------------------------- options */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 gpurma-bench [options]\n"
            "One-sided benchmarks of gpurma's host backend between ranks 0 and 1\n"
            "(further ranks only wait at barriers).\n"
            "\n"
            "  --test T       latency, bw, atomic, all (default: the three), or putflush\n"
            "                 (put then flush, one at a time, through the host API and\n"
            "                 through the device API: the port engine's rows)\n"
            "  --min SIZE     smallest message (default 8); k, m suffixes allowed\n"
            "  --max SIZE     largest message (default 4m); sizes double from --min\n"
            "  --iters N      round trips (latency) or repetitions of 64 puts (bw) per\n"
            "                 batch, capped for large sizes; fetch_adds per batch are\n"
            "                 10*N (default 1000)\n"
            "  --warmup N     untimed round trips before the latency batches (default 100)\n"
            "  --batches N    batches per size; each value is their median (default 9)\n"
            "  --quick        --iters 200 --warmup 50 --batches 5 (and a short --gpu run)\n"
            "  --csv          print test,size,gpurma,peer,ratio,unit lines\n"
            "  --gpu          the GPU benchmarks instead (CUDA build, 2 ranks with one GPU\n"
            "                 each); --max is then the largest bandwidth size (default 1g)\n"
            "  -h, --help     this text\n"
            "\n"
            "Tables: latency is the one-way time of a put_signal ping-pong next to one\n"
            "memcpy of the same size; bw is put bandwidth (GB/s = 1e9 B/s) next to the\n"
            "single-thread memcpy peak for the same buffer sizes; atomic is fetch_add\n"
            "on the peer next to the same fetch_add on local memory.\n");
}

/* Returns 0 to run, 1 to exit successfully (help), 2 on a usage error. */
static int parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){8, 4u << 20, 1000, 100, 9, TEST_ALL, 0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "--csv")) {
            o->csv = 1;
            takes = 0;
        } else if (!strcmp(a, "--gpu")) {
            o->gpu = 1;
            takes = 0;
        } else if (!strcmp(a, "--quick")) {
            /* Later --iters/--warmup/--batches still override these. */
            o->quick = 1;
            o->iters = 200;
            o->warmup = 50;
            o->batches = 5;
            takes = 0;
        } else if (!v) {
            fprintf(stderr, "gpurma-bench: unknown option or missing value: %s\n", a);
            return 2;
        } else if (!strcmp(a, "--min")) {
            if (parse_size(v, SIZE_MAX, &o->min_size))
                goto bad;
        } else if (!strcmp(a, "--max")) {
            if (parse_size(v, SIZE_MAX, &o->max_size))
                goto bad;
            o->max_given = 1;
        } else if (!strcmp(a, "--iters")) {
            if (parse_long(v, 1, &o->iters))
                goto bad;
        } else if (!strcmp(a, "--warmup")) {
            if (parse_long(v, 0, &o->warmup))
                goto bad;
        } else if (!strcmp(a, "--batches")) {
            if (parse_long(v, 1, &o->batches))
                goto bad;
        } else if (!strcmp(a, "--test")) {
            if (!strcmp(v, "latency") || !strcmp(v, "lat"))
                o->tests = TEST_LATENCY;
            else if (!strcmp(v, "bw"))
                o->tests = TEST_BW;
            else if (!strcmp(v, "atomic"))
                o->tests = TEST_ATOMIC;
            else if (!strcmp(v, "putflush"))
                o->tests = TEST_PUTFLUSH;
            else if (!strcmp(v, "all"))
                o->tests = TEST_ALL;
            else
                goto bad;
        } else {
            fprintf(stderr, "gpurma-bench: unknown option %s (see --help)\n", a);
            return 2;
        }
        i += takes;
        continue;
    bad:
        fprintf(stderr, "gpurma-bench: bad value for %s: %s (see --help)\n", a, v);
        return 2;
    }
    if (o->min_size > o->max_size) {
        fprintf(stderr, "gpurma-bench: --min %zu is larger than --max %zu\n", o->min_size,
                o->max_size);
        return 2;
    }
    return 0;
}

/* ---------------------------------------------------------------------- GPU */

/* --gpu: the GPU benchmarks (tools/gpurma_bench_gpu.cu, CUDA builds
 * only) initialize gpurma themselves, so they run instead of the host ones. */
static int run_gpu_bench(const options_t *o)
{
#ifdef HAVE_CUDA
    char max_arg[32];
    char *args[5];
    int n = 0;
    args[n++] = (char *)"gpurma-bench --gpu";
    if (o->max_given) {
        snprintf(max_arg, sizeof(max_arg), "%zu", o->max_size);
        args[n++] = (char *)"--max";
        args[n++] = max_arg;
    }
    if (o->quick)
        args[n++] = (char *)"--quick";
    args[n] = NULL;
    return gpurma_bench_gpu_main(n, args);
#else
    (void)o;
    fprintf(stderr, "gpurma-bench: --gpu: this gpurma was built without CUDA (configure "
                    "--with-cuda), so the GPU benchmarks are not part of it. Without --gpu the "
                    "host backend is measured.\n");
    return 77;
#endif
}

/* --------------------------------------------------------------------- main */

static unsigned char *page_alloc(bench_t *b, size_t n)
{
    size_t len = (n + 4095) / 4096 * 4096;
    unsigned char *p = aligned_alloc(4096, len);
    if (!p)
        gpurma_abort(b->ctx, 1, "out of memory");
    memset(p, 0x5a, len); /* fault the pages in before any timing */
    return p;
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof(b));
    int prc = parse_options(argc, argv, &b.opt);
    if (prc)
        return prc == 1 ? 0 : prc;
    if (b.opt.gpu)
        return run_gpu_bench(&b.opt);

    int rc = gpurma_init(NULL, &b.ctx);
    if (rc) {
        fprintf(stderr, "gpurma-bench: init failed: %s (%s)\n",
                gpurma_strerror((gpurma_status_t)rc), gpurma_last_error_message(NULL));
        return 1;
    }
    b.rank = gpurma_rank(b.ctx);
    b.size = gpurma_size(b.ctx);
    b.world = gpurma_team_world(b.ctx);
    if (b.size < 2) {
        fprintf(stderr, "gpurma-bench: needs at least 2 ranks, e.g. mpirun -np 2 gpurma-bench\n");
        gpurma_finalize(b.ctx);
        return 2;
    }

    size_t max = b.opt.max_size;
    b.atomic_off = (max + 63) / 64 * 64;
    gpurma_win_params_t wp = {.field_mask = GPURMA_WIN_FIELD_NUM_SIGNALS,
                              .num_signals = NUM_SIGS};
    void *base;
    CHECK(&b, gpurma_win_allocate(b.world, b.atomic_off + 64, &wp, &base, &b.win));
    b.base = base;
    memset(b.base, 0, b.atomic_off + 64); /* fault the window in */

    b.src = page_alloc(&b, max);
    b.peer_src = page_alloc(&b, max);
    fill_pattern(b.src, max, 1000 + (uint64_t)b.rank);
    fill_pattern(b.peer_src, max, 1000 + (uint64_t)(b.rank == 0 ? 1 : 0));
    if (b.rank == 0) {
        b.copy_src = page_alloc(&b, max);
        b.copy_dst = page_alloc(&b, max);
        fill_pattern(b.copy_src, max, 7);
        printf("# gpurma-bench %s: host backend, ranks 0 and 1 of %d, bootstrap %s, "
               "engine to rank 1: %s\n",
               gpurma_version_string(), b.size, gpurma_bootstrap_name(b.ctx),
               gpurma_engine_name(gpurma_win_engine(b.win, 1)));
        printf("# median of %ld batches (ratio: median of the per-batch ratios, each gpurma batch "
               "against the reference batch right after it); sizes %zu B .. %zu B\n", b.opt.batches,
               b.opt.min_size, b.opt.max_size);
        if (b.opt.csv)
            printf("test,size,gpurma,peer,ratio,unit\n");
        fflush(stdout);
    }
    CHECK(&b, gpurma_barrier(b.world));

    if (b.opt.tests & TEST_LATENCY)
        run_latency(&b);
    if (b.opt.tests & TEST_BW)
        run_bw(&b);
    if (b.opt.tests & TEST_ATOMIC)
        run_atomic(&b);
    if (b.opt.tests & TEST_PUTFLUSH) {
        run_putflush(&b, FROM_HOST_API);
        run_putflush(&b, FROM_DEVICE_API);
    }

    CHECK(&b, gpurma_win_free(&b.win));
    free(b.src);
    free(b.peer_src);
    free(b.copy_src);
    free(b.copy_dst);
    CHECK(&b, gpurma_finalize(b.ctx));
    return 0;
}
