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
 *   latency    put_signal + wait_until ping-pong, one-way, 8 B .. 1 MiB
 *              (block scope; 8 B also at thread scope), LL packet ping-pong
 *              (put_packets/read_packets), and the host-initiated
 *              put_signal_on_stream + wait_until_on_stream ping-pong
 *              replayed from a CUDA graph, against a raw flag ping-pong
 *              (one thread, st.release.sys / ld.acquire.sys).
 *
 * Rank 0 prints lines "bw <name> <bytes> <gpurma> <peak> <ratio> ce <GB/s>"
 * and "lat <name> <bytes> <us> <raw us> <ratio>", which
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
#include "bench_util.h"
#include "gpurma_bench_gpu.h"

namespace {

enum { SIG_PING = 0, SIG_STREAM = 1, BW_THREADS = 512, LAT_THREADS = 512 };

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
    uint64_t **table;      /* device: the peer's flag address         */
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

__global__ void k_raw_copy(char *dst, const char *src, size_t n, size_t slice)
{
    size_t begin = blockIdx.x * slice;
    if (begin >= n)
        return;
    size_t len = n - begin < slice ? n - begin : slice;
    uint4 *d = (uint4 *)(dst + begin);
    const uint4 *s = (const uint4 *)(src + begin);
    for (size_t i = threadIdx.x; i < len / 16; i += blockDim.x)
        d[i] = s[i];
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

/* Blocks of 64 KiB or more each, at most 4 per SM; slices 16-byte aligned. */
void grid_for(size_t n, int nsm, unsigned *blocks, size_t *slice)
{
    size_t b = n / (64 * 1024);
    size_t maxb = (size_t)nsm * 4;
    b = b < 1 ? 1 : b > maxb ? maxb : b;
    *slice = ((n + b - 1) / b + 15) / 16 * 16;
    *blocks = (unsigned)((n + *slice - 1) / *slice);
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
            grid_for(n, b->nsm, &blocks, &slice);
            int iters = n <= (1u << 20) ? 200 : n <= (64u << 20) ? 50 : 10;
            if (b->quick)
                iters = iters / 4 + 2;
            cudaStream_t s = b->s;
            char *pp = b->peer_ptr, *src = b->src;
            double raw = 0, put = 0, ce = 0;
            TRY(time_gbs(b, n, iters, [&] {
                k_raw_copy<<<blocks, BW_THREADS, 0, s>>>(pp, src, n, slice);
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

enum {
    LAT_RAW = 0,
    LAT_RAW_DATA_FLAG,
    LAT_RAW_DATA_ORIGIN_FLAG,
    LAT_RAW_TABLE,
    LAT_PUT_SIGNAL_THREAD,
    LAT_PUT_SIGNAL_BLOCK,
    LAT_LL_THREAD,
    LAT_LL_BLOCK
};

/* Ping-pong between rank 0 (starts) and rank 1, `warm` + `iters` rounds;
 * rank 0 times the last `iters` with the global timer. */
__global__ void k_pingpong(gpurma_dev_win_t w, int kind, int to, int starter, const char *src,
                           char *dst, size_t n, unsigned warm, unsigned iters, uint64_t *my_flag,
                           uint64_t *peer_flag, uint64_t *const *table, uint64_t base,
                           LatResult *res)
{
    __shared__ int failed;
    if (threadIdx.x == 0)
        failed = 0;
    __syncthreads();
    gpurma_status_t rc = GPURMA_SUCCESS;
    uint64_t t0 = 0;
    const uint64_t limit_ns = 20ull * 1000000000ull;
    bool block = kind == LAT_PUT_SIGNAL_BLOCK || kind == LAT_LL_BLOCK;
    for (unsigned i = 1; i <= warm + iters && !failed; i++) {
        uint64_t v = base + i;
        if (i == warm + 1 && threadIdx.x == 0)
            t0 = gpurma_sh_now_ns();
        for (int step = 0; step < 2; step++) {
            bool send = (step == 0) == (starter != 0);
            if (kind <= LAT_RAW_TABLE) {
                if (threadIdx.x != 0)
                    continue;
                if (send) {
                    /* The floor of any "data, then flag" protocol: one
                     * 8-byte store, then the release store of the flag. */
                    uint64_t *flag = peer_flag;
                    /* The addresses read from a table in device memory, as
                     * the device API reads its peer table. */
                    if (kind == LAT_RAW_TABLE)
                        flag = table[0];
                    if (kind != LAT_RAW)
                        *(volatile uint64_t *)(flag + 8) = v;
                    /* what gpurma's signal slot adds: the origin, next to the value */
                    if (kind == LAT_RAW_DATA_ORIGIN_FLAG)
                        gpurma_sh_store_relaxed_u32((uint32_t *)(peer_flag + 1), 1);
                    gpurma_sh_store_release_u64(flag, v);
                } else {
                    uint64_t start = gpurma_sh_now_ns();
                    while (gpurma_sh_load_acquire_u64(my_flag) < v)
                        if (gpurma_sh_now_ns() - start > limit_ns) {
                            rc = GPURMA_ERR_TIMEOUT;
                            failed = 1;
                            break;
                        }
                }
            } else if (kind == LAT_PUT_SIGNAL_THREAD || kind == LAT_PUT_SIGNAL_BLOCK) {
                if (send) {
                    if (block)
                        rc = gpurma_dev_put_signal_block(w, to, 0, src, n, SIG_PING,
                                                         GPURMA_SIGNAL_SET, v);
                    else if (threadIdx.x == 0)
                        rc = gpurma_dev_put_signal(w, to, 0, src, n, SIG_PING, GPURMA_SIGNAL_SET,
                                                   v);
                } else {
                    if (threadIdx.x == 0)
                        rc = gpurma_dev_wait_until(w, SIG_PING, GPURMA_CMP_GE, v);
                    if (block)
                        __syncthreads();
                }
            } else {
                /* LL: flags only grow, so one buffer per direction is enough. */
                if (send) {
                    if (block)
                        rc = gpurma_dev_put_packets_block(w, to, 0, src, n, (uint32_t)v);
                    else if (threadIdx.x == 0)
                        rc = gpurma_dev_put_packets(w, to, 0, src, n, (uint32_t)v);
                } else {
                    if (block)
                        rc = gpurma_dev_read_packets_block(w, 0, dst, n, (uint32_t)v);
                    else if (threadIdx.x == 0)
                        rc = gpurma_dev_read_packets(w, 0, dst, n, (uint32_t)v);
                }
            }
            if (rc != GPURMA_SUCCESS)
                failed = 1;
        }
        if (block || kind <= LAT_RAW_TABLE)
            __syncthreads();
    }
    if (threadIdx.x == 0) {
        res->ns = gpurma_sh_now_ns() - t0;
        res->status = failed ? (rc ? (int)rc : -1) : 0;
    }
}

/* One-way microseconds of a ping-pong of `kind`; *base: the flag, signal or
 * LL flag values used so far (they only grow). */
int pingpong(Bench *b, int kind, size_t n, uint64_t *my_flag, uint64_t *peer_flag,
             uint64_t *base, double *us)
{
    const unsigned warm = b->quick ? 50 : 200, iters = b->quick ? 500 : 2000;
    unsigned threads = kind == LAT_PUT_SIGNAL_BLOCK || kind == LAT_LL_BLOCK ? LAT_THREADS : 32;
    GPURMA_TRY(b, gpurma_barrier(b->world));
    memset(b->res, 0, sizeof(*b->res));
    k_pingpong<<<1, threads, 0, b->s>>>(b->dw, kind, b->peer, b->rank == 0, b->src, b->dst, n,
                                         warm, iters, my_flag, peer_flag, b->table, *base,
                                         b->res);
    CUDA_TRY(b, cudaGetLastError());
    CUDA_TRY(b, cudaStreamSynchronize(b->s));
    *base += warm + iters;
    GPURMA_TRY(b, gpurma_barrier(b->world));
    if (b->res->status) {
        fprintf(stderr, "gpurma-bench --gpu: rank %d: ping-pong kind %d, %zu B failed: %d\n",
                b->rank, kind, n, b->res->status);
        return 1;
    }
    *us = (double)b->res->ns / (2.0 * iters) / 1000.0;
    return 0;
}

/* Host-initiated put_signal_on_stream + wait_until_on_stream ping-pong,
 * captured once into a CUDA graph and replayed: what a graph of
 * stream-ordered operations costs per message. Best of 3 replays. */
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
    double best = 1e30;
    for (int rep = 0; rep < 4; rep++) {
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
        if (rep > 0 && ms * 1e3 / (2.0 * iters) < best) /* the first one warms up */
            best = ms * 1e3 / (2.0 * iters);
    }
    GPURMA_TRY(b, gpurma_barrier(b->world));
    CUDA_TRY(b, cudaEventDestroy(e0));
    CUDA_TRY(b, cudaEventDestroy(e1));
    CUDA_TRY(b, cudaGraphExecDestroy(exec));
    CUDA_TRY(b, cudaGraphDestroy(graph));
    *us = best;
    return 0;
}

int latency(Bench *b)
{
    /* Raw flags live in the window too, past the data area. */
    uint64_t *my_flag = (uint64_t *)(b->base + b->flag_off);
    uint64_t *peer_flag = (uint64_t *)(b->peer_ptr + b->flag_off);
    CUDA_TRY(b, cudaMemset(my_flag, 0, 128));
    CUDA_TRY(b, cudaMemcpy(b->table, &peer_flag, sizeof(uint64_t *), cudaMemcpyHostToDevice));
    CUDA_TRY(b, cudaDeviceSynchronize());
    bool r0 = b->rank == 0;
    if (r0)
        printf("%-28s %12s %12s %12s %8s\n", "latency (us, one-way)", "bytes", "gpurma",
               "raw_flag", "ratio");
    uint64_t seq = 0;
    double raw, raw2, t;
    TRY(pingpong(b, LAT_RAW, 8, my_flag, peer_flag, &seq, &raw));
    TRY(pingpong(b, LAT_RAW, 8, my_flag, peer_flag, &seq, &raw2));
    raw = raw2 < raw ? raw2 : raw;
    if (r0)
        printf("lat raw_flag 8 %.3f %.3f 1.000\n", raw, raw);
    static const struct {
        int kind;
        const char *name;
    } raws[] = {{LAT_RAW_DATA_FLAG, "raw_data+flag"},
                {LAT_RAW_DATA_ORIGIN_FLAG, "raw_data+origin+flag"},
                {LAT_RAW_TABLE, "raw_table+data+flag"}};
    for (const auto &r : raws) {
        TRY(pingpong(b, r.kind, 8, my_flag, peer_flag, &seq, &t));
        if (r0)
            printf("lat %s 8 %.3f %.3f %.3f\n", r.name, t, raw, t / raw);
    }
    static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
    uint64_t sigseq = 0, llseq = 0;
    double ps8, ps8b;
    TRY(pingpong(b, LAT_PUT_SIGNAL_THREAD, 8, my_flag, peer_flag, &sigseq, &ps8));
    TRY(pingpong(b, LAT_PUT_SIGNAL_THREAD, 8, my_flag, peer_flag, &sigseq, &ps8b));
    ps8 = ps8b < ps8 ? ps8b : ps8;
    if (r0)
        printf("lat put_signal_thread 8 %.3f %.3f %.3f\n", ps8, raw, ps8 / raw);
    for (size_t n : sizes) {
        TRY(pingpong(b, LAT_PUT_SIGNAL_BLOCK, n, my_flag, peer_flag, &sigseq, &t));
        if (r0)
            printf("lat put_signal_block %zu %.3f %.3f %.3f\n", n, t, raw, t / raw);
    }
    TRY(pingpong(b, LAT_LL_THREAD, 8, my_flag, peer_flag, &llseq, &t));
    if (r0)
        printf("lat ll_thread 8 %.3f %.3f %.3f\n", t, raw, t / raw);
    for (size_t n : sizes) {
        if (n > 65536)
            break;
        TRY(pingpong(b, LAT_LL_BLOCK, n, my_flag, peer_flag, &llseq, &t));
        if (r0)
            printf("lat ll_block %zu %.3f %.3f %.3f\n", n, t, raw, t / raw);
    }
    /* The LL and signal ping-pongs leave SIG_PING high; the stream one
     * uses its own signal. */
    static const size_t stream_sizes[] = {8, 4096, 65536, 1048576};
    for (size_t n : stream_sizes) {
        TRY(stream_pingpong(b, n, &t));
        if (r0)
            printf("lat stream_put_signal %zu %.3f %.3f %.3f\n", n, t, raw, t / raw);
    }
    fflush(stdout);
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
            GPURMA_TRY(b, gpurma_flush(pw, b->peer));
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
                    GPURMA_TRY(b, gpurma_flush(pw, b->peer));
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
    CUDA_TRY(b, cudaMalloc(&b->table, sizeof(uint64_t *)));
    CUDA_TRY(b, cudaMallocHost(&b->res, sizeof(*b->res)));
    CUDA_TRY(b, cudaMemset(b->status, 0, sizeof(int)));
    k_fill_src<<<fill_blocks(b->flag_off), 256>>>((uint8_t *)b->src, b->flag_off, 0);
    CUDA_TRY(b, cudaGetLastError());
    CUDA_TRY(b, cudaDeviceSynchronize());
    CUDA_TRY(b, cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking));
    GPURMA_TRY(b, gpurma_barrier(b->world));

    TRY(bandwidth(b));
    TRY(latency(b));
    TRY(port_bandwidth(b));

    GPURMA_TRY(b, gpurma_barrier(b->world));
    GPURMA_TRY(b, gpurma_win_free(&b->win));
    CUDA_TRY(b, cudaStreamDestroy(b->s));
    CUDA_TRY(b, cudaFree(b->src));
    CUDA_TRY(b, cudaFree(b->dst));
    CUDA_TRY(b, cudaFree(b->status));
    CUDA_TRY(b, cudaFree(b->mismatches));
    CUDA_TRY(b, cudaFree(b->table));
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
