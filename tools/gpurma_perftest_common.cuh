/*
 * gpurma_perftest_common.cuh - what gpurma-perftest and the NVSHMEM-API
 * program (tests/bench/nvshmem_api_perf.cu, built against NVSHMEM itself
 * or gpurma's NVSHMEM layer) share, so both measure and check the same way:
 * the pseudo-random source and its poison, the delivery check, the grid
 * barrier of the put-bandwidth pattern and the "perf" output line.
 * Plain CUDA and bench_util.h: it includes neither gpurma nor NVSHMEM.
 */
#ifndef GPURMA_PERFTEST_COMMON_CUH
#define GPURMA_PERFTEST_COMMON_CUH

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "bench_util.h"

/* A grid barrier or a wait that takes longer than this has lost its peer. */
constexpr uint64_t PERF_SPIN_LIMIT_NS = 20ull * 1000 * 1000 * 1000;
/* Kernel status of a spin that gave up (library statuses are negative or,
 * for NVSHMEM, absent). */
enum { PERF_SPIN_TIMEOUT = 1 };

/* Return 1 from the calling function, after a message naming prog, rank and
 * the call, when a CUDA call fails (PERF_CUDA_TRY) or a step did (PERF_TRY). */
#define PERF_CUDA_TRY(prog, rank, x)                                                          \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s: rank %d: %s:%d: %s: %s\n", prog, rank, __FILE__, __LINE__,   \
                    #x, cudaGetErrorString(e_));                                              \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

#define PERF_TRY(x)                                                                           \
    do {                                                                                      \
        int r_ = (x);                                                                         \
        if (r_)                                                                               \
            return r_;                                                                        \
    } while (0)

/* Milliseconds of launch() (which returns 0, or 1 after its own message)
 * between two events recorded on s, as NVSHMEM's perftests time. */
template <typename F>
int perf_time_ms(const char *prog, int rank, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                 F launch, float *ms)
{
    PERF_CUDA_TRY(prog, rank, cudaEventRecord(e0, s));
    PERF_TRY(launch());
    PERF_CUDA_TRY(prog, rank, cudaGetLastError());
    PERF_CUDA_TRY(prog, rank, cudaEventRecord(e1, s));
    PERF_CUDA_TRY(prog, rank, cudaEventSynchronize(e1));
    PERF_CUDA_TRY(prog, rank, cudaEventElapsedTime(ms, e0, e1));
    return 0;
}

/* Byte i of the source for a seed: a hash, so shifted or lost bytes show. */
__host__ __device__ inline uint8_t perf_pattern_byte(uint64_t seed, uint64_t i)
{
    uint64_t z = (i + seed) * 0x9e3779b97f4a7c15ull + 0x94d049bb133111ebull;
    z ^= z >> 31;
    z *= 0xbf58476d1ce4e5b9ull;
    return (uint8_t)(z ^ (z >> 29));
}

/* invert: the poison, which differs from the pattern in every byte. */
__global__ void perf_k_fill(uint8_t *dst, size_t n, uint64_t seed, int invert)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint8_t b = perf_pattern_byte(seed, i);
        dst[i] = invert ? (uint8_t)~b : b;
    }
}

/* Counts the bytes of [0, n) that differ from the pattern (or the poison). */
__global__ void perf_k_check(const uint8_t *got, size_t n, uint64_t seed, int invert,
                             unsigned long long *bad)
{
    unsigned long long b = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint8_t want = perf_pattern_byte(seed, i);
        b += got[i] != (invert ? (uint8_t)~want : want);
    }
    if (b)
        atomicAdd(bad, b);
}

inline unsigned perf_fill_blocks(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 2048 ? 2048 : b);
}

/* Fills [0, n) of dst with the pattern (invert 0) or the poison (1). */
inline cudaError_t perf_fill(void *dst, size_t n, uint64_t seed, int invert, cudaStream_t s)
{
    perf_k_fill<<<perf_fill_blocks(n), 256, 0, s>>>((uint8_t *)dst, n, seed, invert);
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaStreamSynchronize(s);
}

/* Checks a buffer that received `got` bytes of the pattern and must still
 * hold the poison in [got, n). bad: two device counters. Returns 0, or 1
 * after a message naming prog and what. */
inline int perf_check(const char *prog, int rank, const char *what, const void *buf, size_t got,
                      size_t n, uint64_t seed, unsigned long long *bad, cudaStream_t s)
{
    unsigned long long h[2] = {0, 0};
    const uint8_t *b = (const uint8_t *)buf;
    cudaError_t e = cudaMemsetAsync(bad, 0, sizeof(h), s);
    if (e == cudaSuccess && got)
        perf_k_check<<<perf_fill_blocks(got), 256, 0, s>>>(b, got, seed, 0, bad);
    if (e == cudaSuccess && n > got)
        perf_k_check<<<perf_fill_blocks(n - got), 256, 0, s>>>(b + got, n - got, seed + got, 1,
                                                               bad + 1);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(h, bad, sizeof(h), cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: rank %d: checking %s: %s\n", prog, rank, what, cudaGetErrorString(e));
        return 1;
    }
    if (h[0] || h[1]) {
        fprintf(stderr, "%s: rank %d: %s of %zu B: %llu of %zu delivered bytes differ from the "
                        "source, %llu bytes past them were overwritten\n",
                prog, rank, what, n, h[0], got, h[1]);
        return 1;
    }
    return 0;
}

__device__ inline void perf_note_status(int *status, int rc)
{
    if (rc)
        atomicCAS(status, 0, rc);
}

__device__ inline uint64_t perf_now_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* All blocks of the grid meet: a counter of arrivals that every block
 * waits to see reach round * gridDim.x (the grid must be co-resident: the
 * caller checks occupancy). Records PERF_SPIN_TIMEOUT in *status when the
 * wait spins past PERF_SPIN_LIMIT_NS. */
__device__ inline void perf_grid_meet(unsigned long long *arrivals, unsigned long long round,
                                      int *status)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(arrivals, 1ull);
        unsigned long long want = round * gridDim.x;
        uint64_t t0 = perf_now_ns();
        for (unsigned k = 0; *(volatile unsigned long long *)arrivals < want; k++)
            if ((k & 1023) == 1023 && perf_now_ns() - t0 > PERF_SPIN_LIMIT_NS) {
                perf_note_status(status, PERF_SPIN_TIMEOUT);
                break;
            }
    }
    __syncthreads();
}

/* One result, on rank 0: "perf PATTERN SIZE CTAS VALUE UNIT". */
inline void perf_row(int rank, const char *pattern, size_t size, long ctas, double value,
                     const char *unit)
{
    if (rank == 0) {
        printf("perf %-22s %12zu %5ld %14.4f %s\n", pattern, size, ctas, value, unit);
        fflush(stdout);
    }
}

/* ------------------------------------------------------------------ options */

enum { PERF_MAX_CTA_LIST = 16, PERF_P_ELEM = 4 /* bytes of a p element (int) */ };
enum { PERF_PAT_BW = 1, PERF_PAT_P = 2, PERF_PAT_PUT_SIGNAL = 4, PERF_PAT_FETCH_ADD = 8,
       PERF_PAT_BARRIER = 16, PERF_PAT_ALL = 31 };

/* The options both programs take (perf_usage lists them). */
struct PerfOpts {
    long ctas[PERF_MAX_CTA_LIST];
    int nctas;
    long bw_threads, p_threads, block_threads;
    size_t bw_min, bw_max, p_max, ps_max;
    long bw_iters, bw_warmup, lat_iters, lat_warmup;
    unsigned patterns;
    bool shared_gpu;
};

inline void perf_usage(FILE *f, const char *prog, const char *what)
{
    fprintf(f,
        "Usage: %s [options]   (2 ranks: mpirun -np 2, or the uid bootstrap)\n"
        "NVSHMEM perftest patterns %s; rank 0 prints\n"
        "\"perf PATTERN SIZE CTAS VALUE UNIT\" lines.\n"
        "  --patterns LIST   of bw,p,put_signal,fetch_add,barrier (default all)\n"
        "  --ctas LIST       CTA counts of put_bw, comma-separated (default 4,132)\n"
        "  --threads N       threads per CTA of put_bw (default 1024)\n"
        "  --min SIZE        smallest put_bw size (default 1k; k, m, g suffixes)\n"
        "  --max SIZE        largest put_bw size (default 1g)\n"
        "  --p-max SIZE      largest p_lat size (default 64k; 4-byte elements)\n"
        "  --p-threads N     threads of p_lat (default 512)\n"
        "  --ps-max SIZE     largest put_signal ping-pong size (default 1m)\n"
        "  --block-threads N threads of the block-scope rows (default 512)\n"
        "  --iters N         timed rounds of put_bw (default 200), --warmup N (20)\n"
        "  --lat-iters N     timed rounds of latencies (default 500), --lat-warmup N (50)\n"
        "  --quick           fewer rounds (a smoke test)\n"
        "  --shared-gpu      run with one GPU for both ranks (correctness only, flagged)\n"
        "Sizes double from the smallest. Exits 77 without 2 GPUs (or 1 with\n"
        "--shared-gpu) or without 2 ranks.\n",
        prog, what);
}

inline int perf_parse_ctas(const char *s, PerfOpts *o)
{
    o->nctas = 0;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || v < 1 || v > 65535 || o->nctas == PERF_MAX_CTA_LIST)
            return -1;
        o->ctas[o->nctas++] = v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return o->nctas ? 0 : -1;
}

inline int perf_parse_patterns(const char *s, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"bw", PERF_PAT_BW}, {"p", PERF_PAT_P}, {"put_signal", PERF_PAT_PUT_SIGNAL},
                 {"fetch_add", PERF_PAT_FETCH_ADD}, {"barrier", PERF_PAT_BARRIER}, {"all", PERF_PAT_ALL}};
    *out = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        unsigned bit = 0;
        for (const auto &n : names)
            if (strlen(n.name) == len && !strncmp(s, n.name, len))
                bit = n.bit;
        if (!bit)
            return -1;
        *out |= bit;
        s += len + (s[len] == ',');
    }
    return *out ? 0 : -1;
}

/* 0, 2 on a usage error, or -1 after --help. */
inline int perf_parse_args(const char *prog, const char *what, int argc, char **argv,
                           PerfOpts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            perf_usage(stdout, prog, what);
            return -1;
        } else if (!strcmp(a, "--quick")) {
            o->bw_iters = 20;
            o->bw_warmup = 2;
            o->lat_iters = 50;
            o->lat_warmup = 5;
            continue;
        } else if (!strcmp(a, "--shared-gpu")) {
            o->shared_gpu = true;
            continue;
        } else if (!v) {
            bad = 1;
        } else if (!strcmp(a, "--patterns")) {
            bad = perf_parse_patterns(v, &o->patterns);
        } else if (!strcmp(a, "--ctas")) {
            bad = perf_parse_ctas(v, o);
        } else if (!strcmp(a, "--threads")) {
            bad = parse_long(v, 1, &o->bw_threads) || o->bw_threads > 1024;
        } else if (!strcmp(a, "--p-threads")) {
            bad = parse_long(v, 1, &o->p_threads) || o->p_threads > 1024;
        } else if (!strcmp(a, "--block-threads")) {
            bad = parse_long(v, 32, &o->block_threads) || o->block_threads > 1024;
        } else if (!strcmp(a, "--min")) {
            bad = parse_size(v, (size_t)1 << 40, &o->bw_min);
        } else if (!strcmp(a, "--max")) {
            bad = parse_size(v, (size_t)1 << 40, &o->bw_max);
        } else if (!strcmp(a, "--p-max")) {
            bad = parse_size(v, (size_t)1 << 30, &o->p_max) || o->p_max < 8;
        } else if (!strcmp(a, "--ps-max")) {
            bad = parse_size(v, (size_t)1 << 30, &o->ps_max) || o->ps_max < 8;
        } else if (!strcmp(a, "--iters")) {
            bad = parse_long(v, 1, &o->bw_iters) || o->bw_iters > (1l << 30);
        } else if (!strcmp(a, "--warmup")) {
            bad = parse_long(v, 0, &o->bw_warmup) || o->bw_warmup > (1l << 30);
        } else if (!strcmp(a, "--lat-iters")) {
            bad = parse_long(v, 1, &o->lat_iters) || o->lat_iters > (1l << 30);
        } else if (!strcmp(a, "--lat-warmup")) {
            bad = parse_long(v, 0, &o->lat_warmup) || o->lat_warmup > (1l << 30);
        } else {
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "%s: bad argument %s%s%s (see --help)\n", prog, a,
                    v ? " " : "", v ? v : "");
            return 2;
        }
        i++;
    }
    if (o->bw_min < 8 || o->bw_min > o->bw_max) {
        fprintf(stderr, "%s: --min must be at least 8 and at most --max\n", prog);
        return 2;
    }
    if (o->shared_gpu) {
        /* Kernels of the two ranks take turns on one GPU: a ping-pong
         * round costs a time slice, so run few of them. */
        o->lat_iters = o->lat_iters < 20 ? o->lat_iters : 20;
        o->lat_warmup = o->lat_warmup < 2 ? o->lat_warmup : 2;
    }
    return 0;
}

inline void perf_default_opts(PerfOpts *o)
{
    memset(o, 0, sizeof(*o));
    o->ctas[0] = 4;
    o->ctas[1] = 132;
    o->nctas = 2;
    o->bw_threads = 1024;
    o->p_threads = 512;
    o->block_threads = 512;
    o->bw_min = 1024;
    o->bw_max = (size_t)1 << 30;
    o->p_max = 64 * 1024;
    o->ps_max = 1024 * 1024;
    o->bw_iters = 200;
    o->bw_warmup = 20;
    o->lat_iters = 500;
    o->lat_warmup = 50;
    o->patterns = PERF_PAT_ALL;
}

#endif
