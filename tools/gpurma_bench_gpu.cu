/*
 * gpurma_bench_gpu.cu - the GPU benchmarks of gpurma-bench --gpu, between
 * two ranks with one GPU each, with the raw peaks measured in the same run:
 *
 *   bandwidth  put_block from a grid of blocks into the peer's window,
 *              1 KiB .. 1 GiB, against a plain SM copy kernel writing the
 *              same bytes through the same mapping with the same grid, and
 *              against the copy engine (cudaMemcpyAsync to the peer, as
 *              cudaMemcpyPeer does). The bytes each put delivered are
 *              compared with the source after every size.
 *   latency    ping-pongs, one-way, each against the floor of its protocol
 *              class measured in the same run by minimal one-thread kernels
 *              (volatile flag, release/acquire flag, 8 B data + release
 *              flag, LL 8 B): put_signal through a channel (thread and warp
 *              at 8 B, block 8 B .. 1 MiB), LL packets (thread, warp, block
 *              up to 64 KiB), the host-initiated put_signal_on_stream +
 *              wait_until_on_stream replayed from a CUDA graph, and
 *              kernel-initiated put_signal through the port engine.
 *
 * Rank 0 prints lines "bw <name> <bytes> <gpurma> <peak> <ratio> ce <GB/s>"
 * and "lat <name> <bytes> <us> <floor us> <ratio> <floor>", which
 * tests/gpu/run-device.sh turns into its table, and a readable table.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <cuda_runtime.h>

#include "gpurma.h"
#include "gpurma_device.h"
#include "bench_sm_copy.cuh"
#include "bench_util.h"
#include "gpurma_bench_gpu.h"

namespace {

enum { SIG_PING = 0, SIG_STREAM = 1, BW_THREADS = BENCH_SM_COPY_THREADS, LAT_THREADS = 512 };

struct LatResult {
    unsigned long long ns;
    int status;
};

struct Bench {
    gpurma_ctx_t ctx;
    gpurma_team_t world;
    int rank, peer, nsm;
    bool quick;
    size_t max_bw;
    size_t flag_off;       /* raw flags, past every data area         */
    gpurma_win_t win;
    gpurma_dev_win_t dw;
    char *base, *peer_ptr; /* this rank's window, the peer's (mapped) */
    char *src, *dst;       /* device buffers                          */
    int *status;           /* device: first failing put status        */
    unsigned long long *mismatches;
    double data_rel_floor; /* us, measured by latency()               */
    LatResult *res;        /* pinned                                  */
    cudaStream_t s;
};

#define CUDA_TRY(b, x)                                                                        \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "gpurma-bench --gpu: rank %d: %s:%d: %s: %s\n", (b)->rank,        \
                    __FILE__, __LINE__, #x, cudaGetErrorString(e_));                          \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

#define GPURMA_TRY(b, x)                                                                      \
    do {                                                                                      \
        int s_ = (x);                                                                         \
        if (s_ != GPURMA_SUCCESS) {                                                           \
            fprintf(stderr, "gpurma-bench --gpu: rank %d: %s:%d: %s: %s (%s)\n", (b)->rank,   \
                    __FILE__, __LINE__, #x, gpurma_strerror((gpurma_status_t)s_),             \
                    gpurma_last_error_message((b)->ctx));                                     \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

#define TRY(x)                                                                                \
    do {                                                                                      \
        int r_ = (x);                                                                         \
        if (r_)                                                                               \
            return r_;                                                                        \
    } while (0)

/* ------------------------------------------------------------ bandwidth */

/* Byte i of the source: a hash, so that shifted or lost data shows. */
__host__ __device__ inline uint8_t src_byte(uint64_t i)
{
    uint64_t z = i * 0x9e3779b97f4a7c15ull + 0x94d049bb133111ebull;
    z ^= z >> 31;
    z *= 0xbf58476d1ce4e5b9ull;
    return (uint8_t)(z ^ (z >> 29));
}

__global__ void k_fill_src(uint8_t *dst, size_t n, int invert)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = invert ? (uint8_t)~src_byte(i) : src_byte(i);
}

__global__ void k_compare(const uint8_t *got, size_t n, unsigned long long *bad)
{
    unsigned long long b = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        b += got[i] != src_byte(i);
    if (b)
        atomicAdd(bad, b);
}

__global__ void k_put_block(gpurma_dev_win_t w, int to, const char *src, size_t n, size_t slice,
                            int *status)
{
    size_t begin = blockIdx.x * slice;
    if (begin >= n)
        return;
    size_t len = n - begin < slice ? n - begin : slice;
    gpurma_status_t rc = gpurma_dev_put_block(w, to, begin, src + begin, len);
    if (rc != GPURMA_SUCCESS && threadIdx.x == 0)
        atomicExch(status, (int)rc);
}

/* GB/s of `iters` calls of what(), after 2 untimed ones. */
template <typename F> int time_gbs(Bench *b, size_t n, int iters, F what, double *gbs)
{
    cudaEvent_t e0, e1;
    CUDA_TRY(b, cudaEventCreate(&e0));
    CUDA_TRY(b, cudaEventCreate(&e1));
    for (int i = 0; i < 2; i++)
        CUDA_TRY(b, what());
    CUDA_TRY(b, cudaEventRecord(e0, b->s));
    for (int i = 0; i < iters; i++)
        CUDA_TRY(b, what());
    CUDA_TRY(b, cudaEventRecord(e1, b->s));
    CUDA_TRY(b, cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_TRY(b, cudaEventElapsedTime(&ms, e0, e1));
    CUDA_TRY(b, cudaEventDestroy(e0));
    CUDA_TRY(b, cudaEventDestroy(e1));
    *gbs = (double)n * iters / (ms * 1e-3) / 1e9;
    return 0;
}

unsigned fill_blocks(size_t n) { return (unsigned)((n + 255) / 256 < 2048 ? (n + 255) / 256 : 2048); }

/* Rank 0 writes into rank 1's window; rank 1 waits at the barrier. */
int bandwidth(Bench *b)
{
    if (b->rank == 0) {
        printf("%-28s %12s %12s %12s %8s %12s\n", "bandwidth (GB/s)", "bytes", "gpurma_put",
               "sm_copy", "ratio", "ce_memcpy");
        for (size_t n = 1024; n <= b->max_bw; n *= 2) {
            unsigned blocks;
            size_t slice;
            bench_sm_copy_grid(n, b->nsm, &blocks, &slice);
            int iters = n <= (1u << 20) ? 200 : n <= (64u << 20) ? 50 : 10;
            if (b->quick)
                iters = iters / 4 + 2;
            cudaStream_t s = b->s;
            char *pp = b->peer_ptr, *src = b->src;
            double raw = 0, put = 0, ce = 0;
            TRY(time_gbs(b, n, iters, [&] {
                bench_sm_copy<<<blocks, BW_THREADS, 0, s>>>(pp, src, n, slice);
                return cudaGetLastError();
            }, &raw));
            /* Poison what the puts must overwrite, then check they did. */
            k_fill_src<<<fill_blocks(n), 256, 0, s>>>((uint8_t *)pp, n, 1);
            CUDA_TRY(b, cudaMemsetAsync(b->mismatches, 0, sizeof(*b->mismatches), s));
            gpurma_dev_win_t dw = b->dw;
            int to = b->peer, *status = b->status;
            TRY(time_gbs(b, n, iters, [&] {
                k_put_block<<<blocks, BW_THREADS, 0, s>>>(dw, to, src, n, slice, status);
                return cudaGetLastError();
            }, &put));
            k_compare<<<fill_blocks(n), 256, 0, s>>>((const uint8_t *)pp, n, b->mismatches);
            TRY(time_gbs(b, n, iters, [&] {
                return cudaMemcpyAsync(pp, src, n, cudaMemcpyDefault, s);
            }, &ce));
            unsigned long long bad = 0;
            int st = 0;
            CUDA_TRY(b, cudaMemcpy(&bad, b->mismatches, sizeof(bad), cudaMemcpyDeviceToHost));
            CUDA_TRY(b, cudaMemcpy(&st, b->status, sizeof(st), cudaMemcpyDeviceToHost));
            if (bad || st) {
                fprintf(stderr, "gpurma-bench --gpu: put_block of %zu B: status %d, %llu bytes "
                                "at the peer differ from the source\n",
                        n, st, bad);
                return 1;
            }
            printf("bw put_block %zu %.2f %.2f %.3f ce %.2f\n", n, put, raw, put / raw, ce);
            fflush(stdout);
        }
    }
    GPURMA_TRY(b, gpurma_barrier(b->world));
    return 0;
}

/* -------------------------------------------------------------- latency */

/*
 * Every latency figure is a ping-pong between rank 0 (it starts) and rank
 * 1, one-way time = loop time / (2 * rounds). The loop of a kernel holds the
 * protocol and nothing else: thread 0 reads the global timer once before
 * the timed rounds and once after; the only barrier added to what the
 * operations contain is the one after a group's receipt of a put_signal.
 *
 * The floors are minimal kernels, one thread per GPU, that each protocol
 * class cannot beat; each gpurma row prints its ratio to the floor of its
 * class: put_signal rows (thread, warp, block, host stream, port engine)
 * to "8 B data + release flag", LL rows to "LL 8 B", flag rows to
 * themselves. Flags, data and packets of the floors live in the windows,
 * past the data area, so they take the same path as gpurma's.
 */
enum LatKind {
    FLOOR_VOLATILE = 0,    /* volatile store, volatile polls of one flag            */
    FLOOR_RELACQ,          /* st.release.sys, ld.acquire.sys polls                  */
    FLOOR_DATA_REL,        /* one 8-byte data store, then the release flag          */
    FLOOR_LL8,             /* one 8-byte store of 4 B data + 4 B flag, volatile polls */
    FLOOR_DATA_ORIGIN_REL, /* data, the origin word, release flag: a signal slot     */
    LAT_PUT_SIGNAL_THREAD,
    LAT_PUT_SIGNAL_THREAD_WIN, /* the window form: the peer entry loaded every round */
    LAT_PUT_SIGNAL_WARP,
    LAT_PUT_SIGNAL_BLOCK,
    LAT_LL_THREAD,
    LAT_LL_WARP,
    LAT_LL_BLOCK,
    LAT_KINDS
};

/* Polls before a floor gives up (it reads no clock): tens of seconds. */
constexpr uint64_t FLOOR_POLL_LIMIT = 1ull << 26;

/* Word offsets of the floors' locations from a window's flag area. */
enum { FLOOR_FLAG = 0, FLOOR_ORIGIN = 1, FLOOR_DATA = 8, FLOOR_PACKET = 16 };

struct LatArgs {
    gpurma_dev_win_t w;         /* the window (its peer table is device memory) */
    int peer;
    gpurma_dev_chan_t to, self; /* made by the kernel, once, before any round   */
    const char *src;
    char *dst;
    size_t n;
    uint64_t *my_flags, *peer_flags; /* floors: this rank's and the peer's flag area */
    uint64_t base;                   /* values used so far (they only grow)         */
    unsigned warm, iters;
    int starter;
    LatResult *res;
};

template <int KIND> __device__ __forceinline__ int lat_send(const LatArgs &a, uint64_t v)
{
    uint64_t *f = a.peer_flags;
    if constexpr (KIND == FLOOR_VOLATILE) {
        *(volatile uint64_t *)(f + FLOOR_FLAG) = v;
    } else if constexpr (KIND == FLOOR_RELACQ) {
        gpurma_sh_store_release_u64(f + FLOOR_FLAG, v);
    } else if constexpr (KIND == FLOOR_DATA_REL || KIND == FLOOR_DATA_ORIGIN_REL) {
        f[FLOOR_DATA] = v;
        if constexpr (KIND == FLOOR_DATA_ORIGIN_REL)
            gpurma_sh_store_relaxed_u32((uint32_t *)(f + FLOOR_ORIGIN), 1);
        gpurma_sh_store_release_u64(f + FLOOR_FLAG, v);
    } else if constexpr (KIND == FLOOR_LL8) {
        gpurma_sh_store_packet8(f + FLOOR_PACKET, (uint32_t)v * 3u, (uint32_t)v);
    } else if constexpr (KIND == LAT_PUT_SIGNAL_THREAD) {
        return gpurma_dev_chan_put_signal(a.to, 0, a.src, a.n, SIG_PING, GPURMA_SIGNAL_SET, v);
    } else if constexpr (KIND == LAT_PUT_SIGNAL_THREAD_WIN) {
        return gpurma_dev_put_signal(a.w, a.peer, 0, a.src, a.n, SIG_PING, GPURMA_SIGNAL_SET, v);
    } else if constexpr (KIND == LAT_PUT_SIGNAL_WARP) {
        return gpurma_dev_chan_put_signal_warp(a.to, 0, a.src, a.n, SIG_PING, GPURMA_SIGNAL_SET,
                                               v);
    } else if constexpr (KIND == LAT_PUT_SIGNAL_BLOCK) {
        return gpurma_dev_chan_put_signal_block(a.to, 0, a.src, a.n, SIG_PING,
                                                GPURMA_SIGNAL_SET, v);
    } else if constexpr (KIND == LAT_LL_THREAD) {
        return gpurma_dev_chan_put_packets(a.to, 0, a.src, a.n, (uint32_t)v);
    } else if constexpr (KIND == LAT_LL_WARP) {
        return gpurma_dev_chan_put_packets_warp(a.to, 0, a.src, a.n, (uint32_t)v);
    } else {
        return gpurma_dev_chan_put_packets_block(a.to, 0, a.src, a.n, (uint32_t)v);
    }
    return 0;
}

/* The receiving half of round v; rc: the thread's status so far. After a
 * failure a thread stops waiting (the kernel then ends quickly) but still
 * meets every barrier its group meets. The floors check the data they
 * receive: a load the protocol makes anyway. */
template <int KIND> __device__ __forceinline__ int lat_recv(const LatArgs &a, uint64_t v, int rc)
{
    uint64_t *f = a.my_flags;
    if constexpr (KIND == LAT_PUT_SIGNAL_THREAD || KIND == LAT_PUT_SIGNAL_THREAD_WIN ||
                  KIND == LAT_PUT_SIGNAL_WARP || KIND == LAT_PUT_SIGNAL_BLOCK) {
        /* Thread 0 waits; the group's reply must not start before the
         * receipt (its copy would overlap the wait), so the group meets
         * once: the one barrier the protocol needs. */
        if (threadIdx.x == 0 && !rc)
            rc = gpurma_dev_wait_until(a.w, SIG_PING, GPURMA_CMP_GE, v);
        if constexpr (KIND == LAT_PUT_SIGNAL_WARP)
            __syncwarp();
        else if constexpr (KIND == LAT_PUT_SIGNAL_BLOCK)
            __syncthreads();
        return rc;
    }
    /* The LL group forms end with a vote, so their status is the same in
     * every thread, and skipping is uniform. */
    if (rc)
        return rc;
    if constexpr (KIND == FLOOR_VOLATILE) {
        for (uint64_t k = 0; *(volatile uint64_t *)(f + FLOOR_FLAG) < v; k++)
            if (k > FLOOR_POLL_LIMIT)
                return GPURMA_ERR_TIMEOUT;
    } else if constexpr (KIND == FLOOR_RELACQ || KIND == FLOOR_DATA_REL ||
                         KIND == FLOOR_DATA_ORIGIN_REL) {
        for (uint64_t k = 0; gpurma_sh_load_acquire_u64(f + FLOOR_FLAG) < v; k++)
            if (k > FLOOR_POLL_LIMIT)
                return GPURMA_ERR_TIMEOUT;
        if constexpr (KIND != FLOOR_RELACQ)
            if (f[FLOOR_DATA] != v)
                return -1000; /* data behind its flag: a broken floor */
    } else if constexpr (KIND == FLOOR_LL8) {
        uint32_t data, flag;
        for (uint64_t k = 0;; k++) {
            gpurma_sh_load_packet8(f + FLOOR_PACKET, &data, &flag);
            if (flag == (uint32_t)v)
                break;
            if (k > FLOOR_POLL_LIMIT)
                return GPURMA_ERR_TIMEOUT;
        }
        if (data != (uint32_t)v * 3u)
            return -1000;
    } else if constexpr (KIND == LAT_LL_THREAD) {
        return gpurma_dev_chan_read_packets(a.self, 0, a.dst, a.n, (uint32_t)v);
    } else if constexpr (KIND == LAT_LL_WARP) {
        return gpurma_dev_chan_read_packets_warp(a.self, 0, a.dst, a.n, (uint32_t)v);
    } else {
        return gpurma_dev_chan_read_packets_block(a.self, 0, a.dst, a.n, (uint32_t)v);
    }
    return 0;
}

/* Rounds first..last: the starter sends then receives, the other the
 * reverse; sends go on after a failure, so that every thread of a group
 * makes the same group calls. */
template <int KIND> __device__ __forceinline__ int lat_rounds(const LatArgs &a, uint64_t first,
                                                             uint64_t last, int rc)
{
    for (uint64_t i = first; i <= last; i++) {
        uint64_t v = a.base + i;
        if (!a.starter)
            rc = lat_recv<KIND>(a, v, rc);
        int s = lat_send<KIND>(a, v);
        rc = rc ? rc : s;
        if (a.starter)
            rc = lat_recv<KIND>(a, v, rc);
    }
    return rc;
}

template <int KIND> __global__ void k_lat(LatArgs a)
{
    a.to = gpurma_dev_win_chan(a.w, a.peer);
    a.self = gpurma_dev_win_chan(a.w, a.w.rank);
    int rc = lat_rounds<KIND>(a, 1, a.warm, 0);
    uint64_t t0 = threadIdx.x == 0 ? gpurma_sh_now_ns() : 0;
    rc = lat_rounds<KIND>(a, a.warm + 1, a.warm + a.iters, rc);
    if (threadIdx.x == 0) {
        a.res->ns = gpurma_sh_now_ns() - t0;
        a.res->status = rc;
    }
}

typedef void (*LatKernel)(LatArgs);
const LatKernel lat_kernels[] = {
    k_lat<FLOOR_VOLATILE>,        k_lat<FLOOR_RELACQ>,
    k_lat<FLOOR_DATA_REL>,        k_lat<FLOOR_LL8>,
    k_lat<FLOOR_DATA_ORIGIN_REL>, k_lat<LAT_PUT_SIGNAL_THREAD>,
    k_lat<LAT_PUT_SIGNAL_THREAD_WIN>,
    k_lat<LAT_PUT_SIGNAL_WARP>,   k_lat<LAT_PUT_SIGNAL_BLOCK>,
    k_lat<LAT_LL_THREAD>,         k_lat<LAT_LL_WARP>,
    k_lat<LAT_LL_BLOCK>};
static_assert(sizeof(lat_kernels) / sizeof(lat_kernels[0]) == LAT_KINDS, "one kernel per kind");

unsigned lat_threads(int kind)
{
    switch (kind) {
    case LAT_PUT_SIGNAL_WARP:
    case LAT_LL_WARP: return 32;
    case LAT_PUT_SIGNAL_BLOCK:
    case LAT_LL_BLOCK: return LAT_THREADS;
    default: return 1;
    }
}

/* What a ping-pong runs on: a window's device handle and the floors' flags. */
struct LatTarget {
    gpurma_dev_win_t dw;
    uint64_t *my_flags, *peer_flags;
    uint64_t seq; /* values used so far by this target's signal or LL flags */
};

enum { LAT_REPEATS = 5 };

/* One-way microseconds of `kind` moving n bytes: the median of
 * LAT_REPEATS ping-pongs (`iters` timed rounds each, after `warm`). */
int pingpong(Bench *b, LatTarget *t, int kind, size_t n, unsigned iters, double *us)
{
    const unsigned warm = b->quick ? 20 : 100;
    const int repeats = b->quick ? 3 : LAT_REPEATS;
    LatArgs a;
    memset(&a, 0, sizeof(a));
    a.w = t->dw;
    a.peer = b->peer;
    a.src = b->src;
    a.dst = b->dst;
    a.n = n;
    a.my_flags = t->my_flags;
    a.peer_flags = t->peer_flags;
    a.warm = warm;
    a.iters = iters;
    a.starter = b->rank == 0;
    a.res = b->res;
    double r[LAT_REPEATS];
    for (int rep = 0; rep < repeats; rep++) {
        a.base = t->seq;
        GPURMA_TRY(b, gpurma_barrier(b->world));
        memset(b->res, 0, sizeof(*b->res));
        lat_kernels[kind]<<<1, lat_threads(kind), 0, b->s>>>(a);
        CUDA_TRY(b, cudaGetLastError());
        CUDA_TRY(b, cudaStreamSynchronize(b->s));
        t->seq += warm + iters;
        GPURMA_TRY(b, gpurma_barrier(b->world));
        if (b->res->status) {
            fprintf(stderr, "gpurma-bench --gpu: rank %d: ping-pong kind %d, %zu B failed: %d\n",
                    b->rank, kind, n, b->res->status);
            return 1;
        }
        r[rep] = (double)b->res->ns / (2.0 * iters) / 1000.0;
    }
    *us = median(r, repeats);
    return 0;
}

/* Host-initiated put_signal_on_stream + wait_until_on_stream ping-pong,
 * captured once into a CUDA graph and replayed: what a graph of
 * stream-ordered operations costs per message. Median of the replays
 * after the first. */
int stream_pingpong(Bench *b, size_t n, double *us)
{
    const int iters = b->quick ? 50 : 200;
    const size_t off = 8192; /* clear of the LL and ping-pong areas */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_TRY(b, cudaStreamBeginCapture(b->s, cudaStreamCaptureModeGlobal));
    for (int i = 1; i <= iters; i++) {
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == (b->rank == 0))
                GPURMA_TRY(b, gpurma_put_signal_on_stream(b->win, b->peer, off, b->src, n,
                                                          SIG_STREAM, GPURMA_SIGNAL_SET,
                                                          (uint64_t)i, b->s));
            else
                GPURMA_TRY(b, gpurma_wait_until_on_stream(b->win, SIG_STREAM, GPURMA_CMP_GE,
                                                          (uint64_t)i, b->s));
        }
    }
    CUDA_TRY(b, cudaStreamEndCapture(b->s, &graph));
    CUDA_TRY(b, cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t e0, e1;
    CUDA_TRY(b, cudaEventCreate(&e0));
    CUDA_TRY(b, cudaEventCreate(&e1));
    double r[LAT_REPEATS];
    for (int rep = 0; rep <= LAT_REPEATS; rep++) {
        /* Every replay counts from 1 again: both graphs are done before
         * the slots go back to 0, and both are reset before either starts. */
        GPURMA_TRY(b, gpurma_barrier(b->world));
        GPURMA_TRY(b, gpurma_signal_reset(b->win, SIG_STREAM));
        GPURMA_TRY(b, gpurma_barrier(b->world));
        CUDA_TRY(b, cudaEventRecord(e0, b->s));
        CUDA_TRY(b, cudaGraphLaunch(exec, b->s));
        CUDA_TRY(b, cudaEventRecord(e1, b->s));
        CUDA_TRY(b, cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_TRY(b, cudaEventElapsedTime(&ms, e0, e1));
        if (rep > 0) /* the first one warms up */
            r[rep - 1] = ms * 1e3 / (2.0 * iters);
    }
    GPURMA_TRY(b, gpurma_barrier(b->world));
    CUDA_TRY(b, cudaEventDestroy(e0));
    CUDA_TRY(b, cudaEventDestroy(e1));
    CUDA_TRY(b, cudaGraphExecDestroy(exec));
    CUDA_TRY(b, cudaGraphDestroy(graph));
    *us = median(r, LAT_REPEATS);
    return 0;
}

/* The floors, measured first in every run that prints ratios to them. */
struct Floors {
    double flag_volatile, flag_relacq, data_rel, ll8;
};

/* "lat NAME BYTES US FLOOR_US RATIO FLOOR_NAME" (tests/gpu/run-device.sh
 * reads the first five). */
void lat_row(Bench *b, const char *name, size_t n, double us, double floor_us,
             const char *floor_name)
{
    if (b->rank == 0)
        printf("lat %s %zu %.3f %.3f %.3f %s\n", name, n, us, floor_us, us / floor_us, floor_name);
    fflush(stdout);
}

int measure_floors(Bench *b, LatTarget *t, Floors *f)
{
    const unsigned iters = b->quick ? 500 : 2000;
    double origin;
    TRY(pingpong(b, t, FLOOR_VOLATILE, 8, iters, &f->flag_volatile));
    TRY(pingpong(b, t, FLOOR_RELACQ, 8, iters, &f->flag_relacq));
    TRY(pingpong(b, t, FLOOR_DATA_REL, 8, iters, &f->data_rel));
    TRY(pingpong(b, t, FLOOR_LL8, 8, iters, &f->ll8));
    TRY(pingpong(b, t, FLOOR_DATA_ORIGIN_REL, 8, iters, &origin));
    lat_row(b, "floor_volatile_flag", 8, f->flag_volatile, f->flag_volatile, "volatile_flag");
    lat_row(b, "floor_relacq_flag", 8, f->flag_relacq, f->flag_relacq, "relacq_flag");
    lat_row(b, "floor_data+release_flag", 8, f->data_rel, f->data_rel, "data+release_flag");
    lat_row(b, "floor_ll8", 8, f->ll8, f->ll8, "ll8");
    /* what gpurma's signal slot adds to the floor: the origin word */
    lat_row(b, "raw_data+origin+release_flag", 8, origin, f->data_rel, "data+release_flag");
    return 0;
}

int latency(Bench *b)
{
    /* The floors' flags live in the window too, past the data area. */
    LatTarget t;
    memset(&t, 0, sizeof(t));
    t.dw = b->dw;
    t.my_flags = (uint64_t *)(b->base + b->flag_off);
    t.peer_flags = (uint64_t *)(b->peer_ptr + b->flag_off);
    CUDA_TRY(b, cudaMemset(t.my_flags, 0, 256));
    CUDA_TRY(b, cudaDeviceSynchronize());
    if (b->rank == 0)
        printf("%-28s %12s %12s %12s %8s  %s\n", "latency (us, one-way)", "bytes", "gpurma",
               "floor", "ratio", "floor");
    Floors f;
    TRY(measure_floors(b, &t, &f));
    const unsigned iters = b->quick ? 500 : 2000;
    static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
    const char *ps = "data+release_flag";
    static const struct {
        int kind;
        const char *name;
    } ps8[] = {{LAT_PUT_SIGNAL_THREAD, "put_signal_thread"},
               {LAT_PUT_SIGNAL_THREAD_WIN, "put_signal_thread_window_form"},
               {LAT_PUT_SIGNAL_WARP, "put_signal_warp"}},
      ll8[] = {{LAT_LL_THREAD, "ll_thread"}, {LAT_LL_WARP, "ll_warp"}};
    double us;
    for (const auto &k : ps8) {
        TRY(pingpong(b, &t, k.kind, 8, iters, &us));
        lat_row(b, k.name, 8, us, f.data_rel, ps);
    }
    for (size_t n : sizes) {
        TRY(pingpong(b, &t, LAT_PUT_SIGNAL_BLOCK, n, n > 65536 ? iters / 4 : iters, &us));
        lat_row(b, "put_signal_block", n, us, f.data_rel, ps);
    }
    /* LL flags start over from 1 in their own area: the put_signal rounds
     * left data there whose words could look like a flag. */
    CUDA_TRY(b, cudaMemset(b->base, 0, 2 * 65536 + 4096));
    CUDA_TRY(b, cudaDeviceSynchronize());
    GPURMA_TRY(b, gpurma_barrier(b->world));
    t.seq = 0;
    for (const auto &k : ll8) {
        TRY(pingpong(b, &t, k.kind, 8, iters, &us));
        lat_row(b, k.name, 8, us, f.ll8, "ll8");
    }
    for (size_t n : sizes) {
        if (n > 65536)
            break;
        TRY(pingpong(b, &t, LAT_LL_BLOCK, n, iters, &us));
        lat_row(b, "ll_block", n, us, f.ll8, "ll8");
    }
    /* The stream ping-pong uses its own signal. */
    static const size_t stream_sizes[] = {8, 4096, 65536, 1048576};
    for (size_t n : stream_sizes) {
        TRY(stream_pingpong(b, n, &us));
        lat_row(b, "stream_put_signal", n, us, f.data_rel, ps);
    }
    b->data_rel_floor = f.data_rel;
    return 0;
}

/* Kernel-initiated put_signal through the port engine (the FIFO, the proxy,
 * the copy engine), against the same data + release flag floor. A failure
 * here is reported and skipped: the rows before it stand. */
int port_latency(Bench *b)
{
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_ENGINE;
    p.engine = GPURMA_ENGINE_PORT;
    gpurma_win_t pw;
    void *pbase;
    GPURMA_TRY(b, gpurma_win_allocate(b->world, 1u << 20, &p, &pbase, &pw));
    LatTarget t;
    memset(&t, 0, sizeof(t));
    GPURMA_TRY(b, gpurma_win_device(pw, &t.dw));
    static const size_t sizes[] = {8, 4096, 65536};
    const unsigned iters = b->quick ? 100 : 500;
    int rc = 0;
    for (size_t n : sizes) {
        double us;
        rc = pingpong(b, &t, LAT_PUT_SIGNAL_THREAD, n, iters, &us);
        if (rc) {
            if (b->rank == 0)
                fprintf(stderr, "gpurma-bench --gpu: port engine put_signal latency skipped\n");
            break;
        }
        lat_row(b, "port_put_signal_thread", n, us, b->data_rel_floor, "data+release_flag");
    }
    GPURMA_TRY(b, gpurma_barrier(b->world));
    GPURMA_TRY(b, gpurma_win_free(&pw));
    return 0;
}

/* --max: a size (k/m/g suffixes, no trailing b) of at least 1 KiB. */
int parse_max(const char *s, size_t *out)
{
    size_t len = strlen(s);
    if (len && (s[len - 1] == 'b' || s[len - 1] == 'B'))
        return -1;
    return parse_size(s, SIZE_MAX, out) || *out < 1024 ? -1 : 0;
}

/* The port engine with the copy engine: host-initiated puts of n bytes from
 * device memory into the peer's window, each completed by a flush, against
 * cudaMemcpyPeerAsync of the same bytes, each synchronized, in the same run. */
int port_bandwidth(Bench *b)
{
    size_t max = b->max_bw < (256u << 20) ? b->max_bw : (256u << 20);
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_ENGINE;
    p.engine = GPURMA_ENGINE_PORT;
    gpurma_win_t pw;
    void *pbase;
    GPURMA_TRY(b, gpurma_win_allocate(b->world, max, &p, &pbase, &pw));
    int ngpu = 0, dev = 0;
    CUDA_TRY(b, cudaGetDeviceCount(&ngpu));
    CUDA_TRY(b, cudaGetDevice(&dev));
    if (b->rank == 0 && ngpu >= 2) {
        char *peer = (char *)gpurma_win_peer_ptr(pw, b->peer);
        int peer_dev = 1 - dev;
        printf("%-28s %12s %12s %12s %8s\n", "port bandwidth (GB/s)", "bytes", "gpurma_port",
               "memcpy_peer", "ratio");
        for (size_t n = 1u << 20; n <= max; n *= 4) {
            int iters = n <= (16u << 20) ? 50 : 10;
            if (b->quick)
                iters = iters / 4 + 2;
            /* One untimed round of each, so neither pays a first-use cost. */
            GPURMA_TRY(b, gpurma_put(pw, b->peer, 0, b->src, n));
            GPURMA_TRY(b, gpurma_flush_local(pw, b->peer));
            CUDA_TRY(b, cudaMemcpyPeerAsync(peer, peer_dev, b->src, dev, n, b->s));
            CUDA_TRY(b, cudaStreamSynchronize(b->s));
            /* Rounds alternate between the two, and the medians are
             * compared, so that a slow moment of the machine hits both. */
            enum { ROUNDS = 5 };
            double port_r[ROUNDS], ref_r[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                double t0 = now_s();
                for (int i = 0; i < iters; i++) {
                    GPURMA_TRY(b, gpurma_put(pw, b->peer, 0, b->src, n));
                    GPURMA_TRY(b, gpurma_flush_local(pw, b->peer));
                }
                port_r[r] = (double)n * iters / (now_s() - t0) / 1e9;
                t0 = now_s();
                for (int i = 0; i < iters; i++) {
                    CUDA_TRY(b, cudaMemcpyPeerAsync(peer, peer_dev, b->src, dev, n, b->s));
                    CUDA_TRY(b, cudaStreamSynchronize(b->s));
                }
                ref_r[r] = (double)n * iters / (now_s() - t0) / 1e9;
            }
            double port = median(port_r, ROUNDS), ref = median(ref_r, ROUNDS);
            printf("bwport put %zu %.2f %.2f %.3f\n", n, port, ref, port / ref);
        }
    }
    GPURMA_TRY(b, gpurma_barrier(b->world));
    GPURMA_TRY(b, gpurma_win_free(&pw));
    return 0;
}

int run(Bench *b)
{
    GPURMA_TRY(b, gpurma_init(NULL, &b->ctx));
    b->world = gpurma_team_world(b->ctx);
    b->rank = gpurma_rank(b->ctx);
    if (gpurma_size(b->ctx) != 2) {
        if (b->rank == 0)
            fprintf(stderr, "gpurma-bench --gpu: needs exactly 2 ranks (one GPU each)\n");
        gpurma_finalize(b->ctx);
        return 77;
    }
    b->peer = 1 - b->rank;
    int dev, ngpu;
    CUDA_TRY(b, cudaGetDevice(&dev));
    CUDA_TRY(b, cudaGetDeviceCount(&ngpu));
    CUDA_TRY(b, cudaDeviceGetAttribute(&b->nsm, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CUDA_TRY(b, cudaGetDeviceProperties(&prop, dev));
    if (b->rank == 0)
        printf("# gpurma-bench --gpu %s: 2 ranks, GPU %d of %d (%s, %d SMs)%s\n",
               gpurma_version_string(), dev, ngpu, prop.name, b->nsm,
               ngpu < 2 ? " -- ranks share one GPU: numbers are not peer numbers" : "");

    /* Bandwidth writes [0, max_bw); latency tests up to 1 MiB at offsets
     * below 16 KiB; the raw flags come after both. */
    b->flag_off = b->max_bw > (4u << 20) ? b->max_bw : (4u << 20);
    void *base;
    GPURMA_TRY(b, gpurma_win_allocate(b->world, b->flag_off + 4096, NULL, &base, &b->win));
    b->base = (char *)base;
    GPURMA_TRY(b, gpurma_win_device(b->win, &b->dw));
    b->peer_ptr = (char *)gpurma_win_peer_ptr(b->win, b->peer);
    if (!b->peer_ptr) {
        fprintf(stderr, "gpurma-bench --gpu: the peer's window is not mapped here (engine %s)\n",
                gpurma_engine_name(gpurma_win_engine(b->win, b->peer)));
        return 1;
    }
    CUDA_TRY(b, cudaMalloc(&b->src, b->flag_off));
    CUDA_TRY(b, cudaMalloc(&b->dst, 1 << 21));
    CUDA_TRY(b, cudaMalloc(&b->status, sizeof(int)));
    CUDA_TRY(b, cudaMalloc(&b->mismatches, sizeof(unsigned long long)));
    CUDA_TRY(b, cudaMallocHost(&b->res, sizeof(*b->res)));
    CUDA_TRY(b, cudaMemset(b->status, 0, sizeof(int)));
    k_fill_src<<<fill_blocks(b->flag_off), 256>>>((uint8_t *)b->src, b->flag_off, 0);
    CUDA_TRY(b, cudaGetLastError());
    CUDA_TRY(b, cudaDeviceSynchronize());
    CUDA_TRY(b, cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking));
    GPURMA_TRY(b, gpurma_barrier(b->world));

    TRY(bandwidth(b));
    TRY(latency(b));
    TRY(port_latency(b));
    TRY(port_bandwidth(b));

    GPURMA_TRY(b, gpurma_barrier(b->world));
    GPURMA_TRY(b, gpurma_win_free(&b->win));
    CUDA_TRY(b, cudaStreamDestroy(b->s));
    CUDA_TRY(b, cudaFree(b->src));
    CUDA_TRY(b, cudaFree(b->dst));
    CUDA_TRY(b, cudaFree(b->status));
    CUDA_TRY(b, cudaFree(b->mismatches));
    CUDA_TRY(b, cudaFreeHost(b->res));
    GPURMA_TRY(b, gpurma_finalize(b->ctx));
    return 0;
}

} // namespace

extern "C" int gpurma_bench_gpu_main(int argc, char **argv)
{
    Bench b;
    memset(&b, 0, sizeof(b));
    b.max_bw = 1ull << 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) {
            b.quick = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: gpurma-bench --gpu [--max SIZE] [--quick]  (2 ranks, one GPU each)\n");
            return 0;
        } else if (!strcmp(a, "--max") && i + 1 < argc) {
            if (parse_max(argv[++i], &b.max_bw))
                goto bad;
        } else if (parse_max(a, &b.max_bw)) {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, "gpurma-bench --gpu: bad argument %s (sizes from 1k, k/m/g suffixes)\n",
                argv[i]);
        return 2;
    }
    /* Ping-pong kernels wait for kernels the peer launches later; with lazy
     * loading, loading a later kernel would wait for a running one. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) {
        printf("gpurma-bench --gpu: no GPU here, nothing measured\n");
        return 77;
    }
    int rc = run(&b);
    fflush(stdout);
    return rc;
}
