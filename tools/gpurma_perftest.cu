/*
 * gpurma_perftest.cu - gpurma-perftest: the patterns of NVSHMEM's device
 * perftests, written on gpurma's public device API (per-peer channels), so
 * that tests/gpu/nvshmem-side-by-side.sh can print both in one table.
 * Two ranks, one GPU each (or both on one GPU with --shared-gpu, for
 * correctness only). Each pattern measures what the NVSHMEM test of the
 * same name measures, the same way (CUDA events around the kernel, the
 * value divided by the iterations):
 *
 *   put_bw        shmem_put_bw: CTAS blocks of THREADS threads; each round
 *                 every block puts its slice (size / CTAS, in 8-byte words)
 *                 with a block put, then the grid meets; a quiet after the
 *                 last round. GB/s of `size` bytes a round (10^9 B/s).
 *   p_lat         shmem_p_latency: one block; every thread stores 4-byte
 *                 elements one put_value each, the block meets, one thread
 *                 quiets. Microseconds a round.
 *   put_signal_rtt_{thread,warp,block}
 *                 shmem_put_signal_ping_pong_latency: a put_signal of size
 *                 bytes each way, the receiver waits for the signal first.
 *                 Round trip in microseconds, as NVSHMEM reports it.
 *   fetch_add_lat shmem_atomic_latency -a fetch_add (uint64_t): one thread
 *                 fetch-adds the peer's word in a loop, then quiets; the
 *                 results are dropped but the last (as the perftest's).
 *   barrier_{thread,warp,block}
 *                 barrier_latency: a device barrier of both ranks in a
 *                 loop, when this tree has gpurma_coll_device.h.
 *
 * Every pattern checks what it delivered: destinations are poisoned first
 * and compared with the pseudo-random source after the timed runs; the
 * fetch-add word must hold its start value plus every increment.
 *
 * Rank 0 prints "perf PATTERN SIZE CTAS VALUE UNIT" lines (the script's
 * input, readable as a table) and "# ..." comments.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "gpurma.h"
#include "gpurma_device.h"
#if defined(__has_include)
#if __has_include("gpurma_coll_device.h")
#include "gpurma_coll_device.h"
#define PERF_HAVE_DEV_BARRIER 1
#endif
#endif
#ifndef PERF_HAVE_DEV_BARRIER
#define PERF_HAVE_DEV_BARRIER 0
#endif
#include "bench_util.h"
#include "gpurma_perftest_common.cuh"

namespace {

enum { SIG_PING = 0 };

struct Perf {
    PerfOpts o;
    gpurma_ctx_t ctx;
    gpurma_team_t world;
    int rank, peer, nsm;
    gpurma_win_t win;
    gpurma_dev_win_t dw;
    char *base;      /* this rank's window (device memory)                */
    size_t data_len; /* data area of the window; the atomic word after it */
    char *src;       /* device: the pseudo-random source of every put     */
    int *status;     /* device: first failing status of a kernel          */
    unsigned long long *scratch; /* device: grid counter, mismatches, old */
    uint64_t seq;    /* signal values used so far (they only grow)        */
    uint64_t seed;
    cudaStream_t s;
    cudaEvent_t e0, e1;
};

const char *const PROG = "gpurma-perftest";
#define CUDA_TRY(p, x) PERF_CUDA_TRY(PROG, (p)->rank, x)
#define TRY(x) PERF_TRY(x)

#define GPURMA_TRY(p, x)                                                                      \
    do {                                                                                      \
        int s_ = (x);                                                                         \
        if (s_ != GPURMA_SUCCESS) {                                                           \
            fprintf(stderr, "%s: rank %d: %s:%d: %s: %s (%s)\n", PROG, (p)->rank,             \
                    __FILE__, __LINE__, #x, gpurma_strerror((gpurma_status_t)s_),             \
                    gpurma_last_error_message((p)->ctx));                                     \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

/* ------------------------------------------------------------ data, checks */

/* Poisons [0, n) of this rank's window. */
int poison(Perf *p, size_t n)
{
    CUDA_TRY(p, perf_fill(p->base, n, p->seed, 1, p->s));
    return 0;
}

/* Checks this rank's window: [0, got) holds the pattern, [got, n) still
 * the poison. */
int check_window(Perf *p, const char *what, size_t got, size_t n)
{
    return perf_check(PROG, p->rank, what, p->base, got, n, p->seed,
                      p->scratch + 1, p->s);
}

/* The first failing status a kernel recorded (a failure ends the run). */
int kernel_status(Perf *p, const char *what, size_t n)
{
    int st = 0;
    CUDA_TRY(p, cudaMemcpy(&st, p->status, sizeof(st), cudaMemcpyDeviceToHost));
    if (st) {
        fprintf(stderr, "gpurma-perftest: rank %d: %s of %zu B failed: %s\n", p->rank, what, n,
                st == PERF_SPIN_TIMEOUT ? "a grid barrier spun too long"
                       : gpurma_strerror((gpurma_status_t)st));
        return 1;
    }
    return 0;
}

/* Milliseconds of launch() between two events on the stream. */
template <typename F> int time_ms(Perf *p, F launch, float *ms)
{
    return perf_time_ms(PROG, p->rank, p->s, p->e0, p->e1, launch, ms);
}

void row(Perf *p, const char *pattern, size_t size, long ctas, double value, const char *unit)
{
    perf_row(p->rank, pattern, size, ctas, value, unit);
}

/* ---------------------------------------------------------------- put_bw */

__global__ void k_put_bw(gpurma_dev_win_t w, int peer, const char *src, size_t slice,
                         unsigned rounds, unsigned long long *arrivals, int *status)
{
    gpurma_dev_chan_t c = gpurma_dev_win_chan(w, peer);
    size_t off = blockIdx.x * slice;
    int rc = 0;
    for (unsigned i = 0; i < rounds; i++) {
        if (slice) {
            int s = gpurma_dev_chan_put_block(c, off, src + off, slice);
            rc = rc ? rc : s;
        }
        perf_grid_meet(arrivals, i + 1, status);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int s = gpurma_dev_quiet(w);
        rc = rc ? rc : s;
    }
    if (threadIdx.x == 0)
        perf_note_status(status, rc);
}

int put_bw(Perf *p)
{
    const PerfOpts &o = p->o;
    int per_sm = 0;
    CUDA_TRY(p, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_put_bw,
                                                              (int)o.bw_threads, 0));
    for (int ci = 0; ci < o.nctas; ci++) {
        long ctas = o.ctas[ci];
        if (ctas > (long)per_sm * p->nsm) {
            /* The grid meets every round: blocks that wait for blocks not
             * yet scheduled would never finish. */
            if (p->rank == 0)
                printf("# put_bw: %ld CTAs of %ld threads do not fit at once on this GPU "
                       "(%d per SM, %d SMs): skipped\n",
                       ctas, o.bw_threads, per_sm, p->nsm);
            continue;
        }
        for (size_t n = o.bw_min; n <= o.bw_max; n *= 2) {
            /* NVSHMEM's slicing: size / CTAS in 8-byte words per block. */
            size_t slice = n / 8 / (size_t)ctas * 8;
            size_t moved = slice * (size_t)ctas;
            if (p->rank == 1)
                TRY(poison(p, n));
            GPURMA_TRY(p, gpurma_barrier(p->world));
            float ms = 0;
            if (p->rank == 0) {
                long iters = o.bw_iters;
                CUDA_TRY(p, cudaMemsetAsync(p->scratch, 0, sizeof(*p->scratch), p->s));
                k_put_bw<<<(unsigned)ctas, (unsigned)o.bw_threads, 0, p->s>>>(
                    p->dw, p->peer, p->src, slice, (unsigned)o.bw_warmup, p->scratch, p->status);
                CUDA_TRY(p, cudaGetLastError());
                CUDA_TRY(p, cudaMemsetAsync(p->scratch, 0, sizeof(*p->scratch), p->s));
                TRY(time_ms(p, [&] {
                    k_put_bw<<<(unsigned)ctas, (unsigned)o.bw_threads, 0, p->s>>>(
                        p->dw, p->peer, p->src, slice, (unsigned)iters, p->scratch, p->status);
                    return 0;
                }, &ms));
                TRY(kernel_status(p, "put_bw", n));
                row(p, "put_bw", n, ctas, (double)n * (double)iters / (ms * 1e-3) / 1e9, "GB/s");
                if (moved < n)
                    printf("# put_bw %zu B over %ld CTAs: slices of %zu B move %zu B a round "
                           "(as NVSHMEM's slicing does); the figure counts %zu B\n",
                           n, ctas, slice, moved, n);
            }
            GPURMA_TRY(p, gpurma_barrier(p->world));
            if (p->rank == 1)
                TRY(check_window(p, "put_bw", moved, n));
        }
    }
    return 0;
}

/* ----------------------------------------------------------------- p_lat */

__global__ void k_p_lat(gpurma_dev_win_t w, int peer, const uint32_t *src, size_t nelems,
                        unsigned rounds, int *status)
{
    gpurma_dev_chan_t c = gpurma_dev_win_chan(w, peer);
    int rc = 0;
    for (unsigned i = 0; i < rounds; i++) {
        for (size_t j = threadIdx.x; j < nelems; j += blockDim.x) {
            int s = gpurma_dev_chan_put_value(c, j * PERF_P_ELEM, src[j], PERF_P_ELEM);
            rc = rc ? rc : s;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int s = gpurma_dev_quiet(w);
            rc = rc ? rc : s;
        }
        __syncthreads();
    }
    perf_note_status(status, rc);
}

int p_lat(Perf *p)
{
    const PerfOpts &o = p->o;
    for (size_t n = 8; n <= o.p_max; n *= 2) {
        size_t nelems = n / PERF_P_ELEM;
        if (p->rank == 1)
            TRY(poison(p, n));
        GPURMA_TRY(p, gpurma_barrier(p->world));
        if (p->rank == 0) {
            const uint32_t *src = (const uint32_t *)p->src;
            k_p_lat<<<1, (unsigned)o.p_threads, 0, p->s>>>(p->dw, p->peer, src, nelems,
                                                           (unsigned)o.lat_warmup, p->status);
            CUDA_TRY(p, cudaGetLastError());
            float ms = 0;
            TRY(time_ms(p, [&] {
                k_p_lat<<<1, (unsigned)o.p_threads, 0, p->s>>>(p->dw, p->peer, src, nelems,
                                                               (unsigned)o.lat_iters, p->status);
                return 0;
            }, &ms));
            TRY(kernel_status(p, "p_lat", n));
            row(p, "p_lat", n, 1, ms * 1e3 / (double)o.lat_iters, "us");
        }
        GPURMA_TRY(p, gpurma_barrier(p->world));
        if (p->rank == 1)
            TRY(check_window(p, "p_lat", n, n));
    }
    return 0;
}

/* -------------------------------------------------------- put_signal_rtt */

enum Scope { SCOPE_THREAD = 0, SCOPE_WARP, SCOPE_BLOCK };

template <int SCOPE> __device__ inline int ps_send(gpurma_dev_chan_t c, const char *src, size_t n,
                                                   uint64_t v)
{
    if constexpr (SCOPE == SCOPE_THREAD)
        return gpurma_dev_chan_put_signal(c, 0, src, n, SIG_PING, GPURMA_SIGNAL_SET, v);
    else if constexpr (SCOPE == SCOPE_WARP)
        return gpurma_dev_chan_put_signal_warp(c, 0, src, n, SIG_PING, GPURMA_SIGNAL_SET, v);
    else
        return gpurma_dev_chan_put_signal_block(c, 0, src, n, SIG_PING, GPURMA_SIGNAL_SET, v);
}

/* One thread waits; the group meets before it replies, so no member's
 * copy starts before the data it answers arrived. After a failure a thread
 * stops waiting but still meets its group. */
template <int SCOPE> __device__ inline int ps_recv(gpurma_dev_win_t w, uint64_t v, int rc)
{
    if (threadIdx.x == 0 && !rc)
        rc = gpurma_dev_wait_until(w, SIG_PING, GPURMA_CMP_GE, v);
    if constexpr (SCOPE == SCOPE_WARP)
        __syncwarp();
    else if constexpr (SCOPE == SCOPE_BLOCK)
        __syncthreads();
    return rc;
}

template <int SCOPE>
__global__ void k_put_signal(gpurma_dev_win_t w, int peer, const char *src, size_t n,
                             uint64_t base, unsigned rounds, int starter, int *status)
{
    gpurma_dev_chan_t c = gpurma_dev_win_chan(w, peer);
    int rc = 0;
    for (unsigned i = 1; i <= rounds; i++) {
        if (!starter)
            rc = ps_recv<SCOPE>(w, base + i, rc);
        int s = ps_send<SCOPE>(c, src, n, base + i);
        rc = rc ? rc : s;
        if (starter)
            rc = ps_recv<SCOPE>(w, base + i, rc);
    }
    if (threadIdx.x == 0) {
        int s = gpurma_dev_quiet(w);
        rc = rc ? rc : s;
    }
    perf_note_status(status, rc);
}

typedef void (*PsKernel)(gpurma_dev_win_t, int, const char *, size_t, uint64_t, unsigned, int,
                         int *);

/* Both ranks run `rounds` of the ping-pong; gives rank 0's milliseconds. */
int ps_run(Perf *p, PsKernel k, unsigned threads, size_t n, unsigned rounds, float *ms)
{
    uint64_t base = p->seq;
    p->seq += rounds;
    GPURMA_TRY(p, gpurma_barrier(p->world));
    TRY(time_ms(p, [&] {
        k<<<1, threads, 0, p->s>>>(p->dw, p->peer, p->src, n, base, rounds, p->rank == 0,
                                   p->status);
        return 0;
    }, ms));
    return kernel_status(p, "put_signal ping-pong", n);
}

int put_signal_rtt(Perf *p)
{
    const PerfOpts &o = p->o;
    static const struct {
        PsKernel k;
        const char *name;
    } scopes[] = {{k_put_signal<SCOPE_THREAD>, "put_signal_rtt_thread"},
                  {k_put_signal<SCOPE_WARP>, "put_signal_rtt_warp"},
                  {k_put_signal<SCOPE_BLOCK>, "put_signal_rtt_block"}};
    const unsigned threads[] = {1, 32, (unsigned)o.block_threads};
    for (int sc = 0; sc < 3; sc++) {
        for (size_t n = 8; n <= o.ps_max; n *= 2) {
            TRY(poison(p, n));
            float ms = 0;
            TRY(ps_run(p, scopes[sc].k, threads[sc], n, (unsigned)o.lat_warmup, &ms));
            TRY(ps_run(p, scopes[sc].k, threads[sc], n, (unsigned)o.lat_iters, &ms));
            row(p, scopes[sc].name, n, 1, ms * 1e3 / (double)o.lat_iters, "us");
            /* Both ranks received the peer's source in every round. */
            GPURMA_TRY(p, gpurma_barrier(p->world));
            TRY(check_window(p, scopes[sc].name, n, n));
        }
    }
    return 0;
}

/* --------------------------------------------------------- fetch_add_lat */

__global__ void k_fetch_add(gpurma_dev_win_t w, int peer, size_t off, unsigned rounds,
                            unsigned long long *last_old, int *status)
{
    gpurma_dev_chan_t c = gpurma_dev_win_chan(w, peer);
    int rc = 0;
    /* As shmem_atomic_latency: fetching atomics whose results are dropped
     * (so they may overlap), except the last one's, which the check reads. */
    uint64_t old = 0, dropped;
    for (unsigned i = 0; i + 1 < rounds && !rc; i++)
        rc = gpurma_dev_chan_atomic_fetch_add(c, off, 1, &dropped);
    if (rounds && !rc)
        rc = gpurma_dev_chan_atomic_fetch_add(c, off, 1, &old);
    if (!rc)
        rc = gpurma_dev_quiet(w);
    *last_old = old;
    perf_note_status(status, rc);
}

int fetch_add_lat(Perf *p)
{
    const PerfOpts &o = p->o;
    const size_t off = p->data_len; /* the atomic word, past the data */
    const uint64_t start = p->seed | 1;
    if (p->rank == 1)
        CUDA_TRY(p, cudaMemcpy(p->base + off, &start, sizeof(start), cudaMemcpyHostToDevice));
    GPURMA_TRY(p, gpurma_barrier(p->world));
    unsigned long long *last = p->scratch + 3;
    if (p->rank == 0) {
        k_fetch_add<<<1, 1, 0, p->s>>>(p->dw, p->peer, off, (unsigned)o.lat_warmup, last,
                                       p->status);
        CUDA_TRY(p, cudaGetLastError());
        float ms = 0;
        TRY(time_ms(p, [&] {
            k_fetch_add<<<1, 1, 0, p->s>>>(p->dw, p->peer, off, (unsigned)o.lat_iters, last,
                                           p->status);
            return 0;
        }, &ms));
        TRY(kernel_status(p, "fetch_add", 8));
        unsigned long long old = 0;
        CUDA_TRY(p, cudaMemcpy(&old, last, sizeof(old), cudaMemcpyDeviceToHost));
        uint64_t want = start + (uint64_t)o.lat_warmup + (uint64_t)o.lat_iters - 1;
        if (old != want) {
            fprintf(stderr, "gpurma-perftest: fetch_add: last value fetched %llu, expected "
                            "%llu\n", old, (unsigned long long)want);
            return 1;
        }
        row(p, "fetch_add_lat", 8, 1, ms * 1e3 / (double)o.lat_iters, "us");
    }
    GPURMA_TRY(p, gpurma_barrier(p->world));
    if (p->rank == 1) {
        uint64_t got = 0, want = start + (uint64_t)o.lat_warmup + (uint64_t)o.lat_iters;
        CUDA_TRY(p, cudaMemcpy(&got, p->base + off, sizeof(got), cudaMemcpyDeviceToHost));
        if (got != want) {
            fprintf(stderr, "gpurma-perftest: fetch_add: the word holds %llu, expected %llu\n",
                    (unsigned long long)got, (unsigned long long)want);
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ barrier_lat */

#if PERF_HAVE_DEV_BARRIER
template <int SCOPE> __global__ void k_barrier(gpurma_dev_coll_t c, unsigned rounds, int *status)
{
    int rc = 0;
    for (unsigned i = 0; i < rounds && !rc; i++) {
        if constexpr (SCOPE == SCOPE_THREAD)
            rc = gpurma_dev_coll_barrier(c);
        else if constexpr (SCOPE == SCOPE_WARP)
            rc = gpurma_dev_coll_barrier_warp(c);
        else
            rc = gpurma_dev_coll_barrier_block(c);
    }
    perf_note_status(status, rc);
}

int barrier_lat(Perf *p)
{
    const PerfOpts &o = p->o;
    gpurma_dev_coll_t c;
    GPURMA_TRY(p, gpurma_coll_device(p->world, GPURMA_MEM_DEVICE, &c));
    typedef void (*BarrierKernel)(gpurma_dev_coll_t, unsigned, int *);
    static const struct {
        BarrierKernel k;
        const char *name;
    } scopes[] = {{k_barrier<SCOPE_THREAD>, "barrier_thread"},
                  {k_barrier<SCOPE_WARP>, "barrier_warp"},
                  {k_barrier<SCOPE_BLOCK>, "barrier_block"}};
    const unsigned threads[] = {1, 32, (unsigned)o.block_threads};
    for (int sc = 0; sc < 3; sc++) {
        float ms = 0;
        for (int timed = 0; timed < 2; timed++) {
            unsigned rounds = (unsigned)(timed ? o.lat_iters : o.lat_warmup);
            GPURMA_TRY(p, gpurma_barrier(p->world));
            TRY(time_ms(p, [&] {
                scopes[sc].k<<<1, threads[sc], 0, p->s>>>(c, rounds, p->status);
                return 0;
            }, &ms));
            TRY(kernel_status(p, scopes[sc].name, 0));
        }
        row(p, scopes[sc].name, 0, 1, ms * 1e3 / (double)o.lat_iters, "us");
    }
    return 0;
}
#else
int barrier_lat(Perf *p)
{
    if (p->rank == 0)
        printf("# device barrier: skipped (this tree has no gpurma_coll_device.h)\n");
    return 0;
}
#endif

/* ------------------------------------------------------------------ setup */

int run(Perf *p)
{
    GPURMA_TRY(p, gpurma_init(NULL, &p->ctx));
    p->world = gpurma_team_world(p->ctx);
    p->rank = gpurma_rank(p->ctx);
    if (gpurma_size(p->ctx) != 2) {
        if (p->rank == 0)
            fprintf(stderr, "gpurma-perftest: needs exactly 2 ranks\n");
        gpurma_finalize(p->ctx);
        return 77;
    }
    p->peer = 1 - p->rank;
    int dev, ngpu;
    CUDA_TRY(p, cudaGetDevice(&dev));
    CUDA_TRY(p, cudaGetDeviceCount(&ngpu));
    CUDA_TRY(p, cudaDeviceGetAttribute(&p->nsm, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CUDA_TRY(p, cudaGetDeviceProperties(&prop, dev));
    if (ngpu < 2 && !p->o.shared_gpu) {
        if (p->rank == 0)
            printf("gpurma-perftest: %d GPU visible, 2 needed (--shared-gpu runs both ranks "
                   "on one, for correctness only)\n", ngpu);
        gpurma_finalize(p->ctx);
        return 77;
    }
    if (p->rank == 0) {
        printf("# gpurma-perftest %s: 2 ranks, GPU %d of %d (%s, %d SMs), device barrier %s\n",
               gpurma_version_string(), dev, ngpu, prop.name, p->nsm,
               PERF_HAVE_DEV_BARRIER ? "built" : "not in this tree");
        if (ngpu < 2)
            printf("# SHARED GPU: both ranks on one GPU; correctness only, the figures are "
                   "not peer figures\n");
        printf("# %-20s %12s %5s %14s %s\n", "pattern", "size(B)", "ctas", "value", "unit");
    }
    const PerfOpts &o = p->o;
    size_t data = o.bw_max;
    if (o.p_max > data)
        data = o.p_max;
    if (o.ps_max > data)
        data = o.ps_max;
    p->data_len = (data + 255) / 256 * 256;
    /* The atomic word after the data (one 256-byte line of its own). */
    void *base;
    GPURMA_TRY(p, gpurma_win_allocate(p->world, p->data_len + 256, NULL, &base, &p->win));
    p->base = (char *)base;
    GPURMA_TRY(p, gpurma_win_device(p->win, &p->dw));
    CUDA_TRY(p, cudaMalloc(&p->src, p->data_len));
    CUDA_TRY(p, cudaMalloc(&p->status, sizeof(int)));
    CUDA_TRY(p, cudaMalloc(&p->scratch, 4 * sizeof(*p->scratch)));
    CUDA_TRY(p, cudaMemset(p->status, 0, sizeof(int)));
    CUDA_TRY(p, cudaStreamCreateWithFlags(&p->s, cudaStreamNonBlocking));
    CUDA_TRY(p, cudaEventCreate(&p->e0));
    CUDA_TRY(p, cudaEventCreate(&p->e1));
    /* Both ranks derive the same source: the checks compare with it. */
    p->seed = 0x5eed0000ull + (uint64_t)o.bw_max;
    CUDA_TRY(p, perf_fill(p->src, p->data_len, p->seed, 0, p->s));
    GPURMA_TRY(p, gpurma_barrier(p->world));

    if (o.patterns & PERF_PAT_BW)
        TRY(put_bw(p));
    if (o.patterns & PERF_PAT_P)
        TRY(p_lat(p));
    if (o.patterns & PERF_PAT_PUT_SIGNAL)
        TRY(put_signal_rtt(p));
    if (o.patterns & PERF_PAT_FETCH_ADD)
        TRY(fetch_add_lat(p));
    if (o.patterns & PERF_PAT_BARRIER)
        TRY(barrier_lat(p));

    GPURMA_TRY(p, gpurma_barrier(p->world));
    GPURMA_TRY(p, gpurma_win_free(&p->win));
    CUDA_TRY(p, cudaEventDestroy(p->e0));
    CUDA_TRY(p, cudaEventDestroy(p->e1));
    CUDA_TRY(p, cudaStreamDestroy(p->s));
    CUDA_TRY(p, cudaFree(p->src));
    CUDA_TRY(p, cudaFree(p->status));
    CUDA_TRY(p, cudaFree(p->scratch));
    GPURMA_TRY(p, gpurma_finalize(p->ctx));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Perf p;
    memset(&p, 0, sizeof(p));
    PerfOpts &o = p.o;
    perf_default_opts(&o);
    int rc = perf_parse_args(PROG, "on gpurma's device API", argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* Ping-pong kernels wait for kernels the peer launches later; with lazy
     * loading, loading a later kernel would wait for a running one. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) {
        printf("gpurma-perftest: no GPU here, nothing measured\n");
        return 77;
    }
    rc = run(&p);
    fflush(stdout);
    return rc;
}
