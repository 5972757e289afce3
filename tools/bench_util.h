/*
 * bench_util.h - what gpurma-bench and its MPI-3 RMA twin (tests/bench/
 * mpi_rma_bench.c) share, so that both measure the same patterns the same
 * way: batch sizes, the data pattern, clocks and medians. Header-only: the
 * MPI program is built with mpicc and does not link libgpurma.
 */
#ifndef GPURMA_BENCH_UTIL_H
#define GPURMA_BENCH_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define PUTS_PER_BW_REP 64
#define ATOMIC_OPS_MIN  1000
/* Per-batch byte budgets keep the largest sizes to a fraction of a second. */
#define LAT_BATCH_BYTES (32ull << 20)
#define BW_BATCH_BYTES  (256ull << 20)

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift64*: a cheap seeded pattern each rank can regenerate for another. */
static inline void fill_pattern(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        p[i] = (unsigned char)((x * 0x2545f4914f6cdd1dull) >> 56);
    }
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline long clamp_long(long v, long lo, long hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Iterations of a latency batch and repetitions of a bandwidth batch. */
static inline long lat_iters(long max_iters, size_t size)
{
    return clamp_long((long)(LAT_BATCH_BYTES / size), 4, max_iters);
}

static inline long bw_reps(long max_iters, size_t size)
{
    return clamp_long((long)(BW_BATCH_BYTES / (PUTS_PER_BW_REP * size)), 1, max_iters);
}

/* A size with an optional k, m or g suffix (powers of 1024) and a final b;
 * 0 when it is well formed, positive and at most max. */
static inline int parse_size(const char *s, size_t max, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if ((*end == 'b' || *end == 'B') && end[1] == '\0')
        end++;
    if (*end || v == 0 || v > max)
        return -1;
    *out = (size_t)v;
    return 0;
}

static inline int parse_long(const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min)
        return -1;
    *out = v;
    return 0;
}

#endif
