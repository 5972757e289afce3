/*
 * gpu_bench.cu - GPU benchmarks of gpurma between two ranks (one GPU each),
 * with the raw peaks measured in the same run:
 *
 *   bandwidth  put_block from a grid of blocks into the peer's window,
 *              1 KiB .. 1 GiB, against a plain SM copy kernel writing the
 *              same bytes through the same mapping with the same grid, and
 *              against the copy engine (cudaMemcpyAsync to the peer);
 *   latency    put_signal + wait_until ping-pong, one-way, 8 B .. 1 MiB
 *              (block scope; 8 B also at thread scope), and LL packet
 *              ping-pong (put_packets/read_packets), against a raw flag
 *              ping-pong (one thread, st.release.sys / ld.acquire.sys).
 *
 * Rank 0 prints lines "bw|lat <name> <bytes> <gpurma> <peak> <ratio>" and a
 * table. Standalone for now; gpurma-bench --gpu will run the same code.
 */
#include <vector>

#include "gpu_common.h"

gpurma_ctx_t g_ctx;
static int rank, nranks, peer;
static gpurma_team_t world;

enum { SIG_PING = 0, BW_THREADS = 512, LAT_THREADS = 512 };

/* ------------------------------------------------------------ bandwidth */

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

static void grid_for(size_t n, int nsm, unsigned *blocks, size_t *slice)
{
    size_t b = n / (64 * 1024);
    size_t maxb = (size_t)nsm * 4;
    b = b < 1 ? 1 : b > maxb ? maxb : b;
    *slice = ((n + b - 1) / b + 15) / 16 * 16;
    *blocks = (unsigned)((n + *slice - 1) / *slice);
}

/* GB/s of `iters` launches of what(i). */
template <typename F> static double time_gbs(size_t n, int iters, cudaStream_t s, F what)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 2; i++) /* warm up */
        what();
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < iters; i++)
        what();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return (double)n * iters / (ms * 1e-3) / 1e9;
}

/* -------------------------------------------------------------- latency */

enum { LAT_RAW = 0, LAT_RAW_DATA_FLAG, LAT_RAW_DATA_ORIGIN_FLAG, LAT_RAW_TABLE, LAT_PUT_SIGNAL_THREAD, LAT_PUT_SIGNAL_BLOCK, LAT_LL_THREAD, LAT_LL_BLOCK };

struct LatResult {
    unsigned long long ns;
    int status;
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
                /* LL: flags only grow, two buffers per direction are not needed. */
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

static double pingpong(gpurma_win_t win, gpurma_dev_win_t dw, int kind, const char *src,
                       char *dst, size_t n, uint64_t *my_flag, uint64_t *peer_flag,
                       LatResult *res, uint64_t *base)
{
    static uint64_t **table;
    if (!table) {
        CK(cudaMalloc(&table, sizeof(uint64_t *)));
        CK(cudaMemcpy(table, &peer_flag, sizeof(uint64_t *), cudaMemcpyHostToDevice));
    }
    const unsigned warm = 200, iters = 2000;
    unsigned threads = kind == LAT_PUT_SIGNAL_BLOCK || kind == LAT_LL_BLOCK ? LAT_THREADS : 32;
    GK(gpurma_barrier(world));
    memset(res, 0, sizeof(*res));
    k_pingpong<<<1, threads>>>(dw, kind, peer, rank == 0, src, dst, n, warm, iters, my_flag,
                               peer_flag, table, *base, res);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    *base += warm + iters; /* flags, signals and LL flags keep growing */
    GK(gpurma_barrier(world));
    (void)win;
    if (res->status) {
        fprintf(stderr, "rank %d: ping-pong kind %d size %zu failed: %d\n", rank, kind, n,
                res->status);
        exit(1);
    }
    return (double)res->ns / (2.0 * iters) / 1000.0; /* one-way microseconds */
}

int main(int argc, char **argv)
{
    skip_without_gpu("gpu_bench");
    size_t max_bw = argc > 1 ? strtoull(argv[1], NULL, 0) : (1ull << 30);
    GK(gpurma_init(NULL, &g_ctx));
    world = gpurma_team_world(g_ctx);
    rank = gpurma_rank(g_ctx);
    nranks = gpurma_size(g_ctx);
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "gpu_bench needs exactly 2 ranks\n");
        gpurma_finalize(g_ctx);
        return 77;
    }
    peer = 1 - rank;
    int dev, ngpu, nsm;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceCount(&ngpu));
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    if (rank == 0)
        printf("gpu_bench: 2 ranks, GPU %d of %d (%s, %d SMs)%s\n", dev, ngpu, prop.name, nsm,
               ngpu < 2 ? " -- ranks share one GPU: numbers are not peer numbers" : "");

    size_t win_bytes = max_bw + 4096;
    void *base;
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, win_bytes, NULL, &base, &win));
    gpurma_dev_win_t dw;
    GK(gpurma_win_device(win, &dw));
    char *peer_ptr = (char *)gpurma_win_peer_ptr(win, peer);
    char *src, *dst;
    int *status;
    CK(cudaMalloc(&src, max_bw));
    CK(cudaMalloc(&dst, 1 << 21));
    CK(cudaMalloc(&status, sizeof(int)));
    CK(cudaMemset(status, 0, sizeof(int)));
    fill(src, max_bw, 5, 0, 0);
    CK(cudaDeviceSynchronize());
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GK(gpurma_barrier(world));

    /* Bandwidth: rank 0 writes into rank 1; rank 1 waits at the barrier. */
    if (rank == 0) {
        printf("%-28s %12s %12s %12s %12s %8s\n", "bandwidth (GB/s)", "bytes", "gpurma_put",
               "sm_copy", "ce_memcpy", "ratio");
        for (size_t n = 1024; n <= max_bw; n *= 2) {
            unsigned blocks;
            size_t slice;
            grid_for(n, nsm, &blocks, &slice);
            int iters = n <= (1u << 20) ? 200 : n <= (64u << 20) ? 50 : 10;
            double raw = time_gbs(n, iters, s, [&] {
                k_raw_copy<<<blocks, BW_THREADS, 0, s>>>(peer_ptr, src, n, slice);
            });
            double put = time_gbs(n, iters, s, [&] {
                k_put_block<<<blocks, BW_THREADS, 0, s>>>(dw, peer, src, n, slice, status);
            });
            double ce = time_gbs(n, iters, s, [&] {
                CK(cudaMemcpyAsync(peer_ptr, src, n, cudaMemcpyDefault, s));
            });
            CK(cudaGetLastError());
            printf("bw put_block %zu %.2f %.2f %.3f ce %.2f\n", n, put, raw, put / raw, ce);
            fflush(stdout);
        }
        int st = 0;
        CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
        if (st) {
            fprintf(stderr, "put_block failed: %d\n", st);
            return 1;
        }
    }
    GK(gpurma_barrier(world));

    /* Latency: raw flags live in the window too, past the data area. */
    uint64_t *my_flag = (uint64_t *)((char *)base + max_bw);
    uint64_t *peer_flag = (uint64_t *)(peer_ptr + max_bw);
    CK(cudaMemset(my_flag, 0, 8));
    CK(cudaDeviceSynchronize());
    LatResult *res;
    CK(cudaMallocHost(&res, sizeof(*res)));
    uint64_t seq = 0;
    double raw = pingpong(win, dw, LAT_RAW, src, dst, 8, my_flag, peer_flag, res, &seq);
    double raw2 = pingpong(win, dw, LAT_RAW, src, dst, 8, my_flag, peer_flag, res, &seq);
    raw = raw2 < raw ? raw2 : raw;
    if (rank == 0)
        printf("lat raw_flag 8 %.3f %.3f 1.000\n", raw, raw);
    double rdf = pingpong(win, dw, LAT_RAW_DATA_FLAG, src, dst, 8, my_flag, peer_flag, res, &seq);
    if (rank == 0)
        printf("lat raw_data+flag 8 %.3f %.3f %.3f\n", rdf, raw, rdf / raw);
    double rdof = pingpong(win, dw, LAT_RAW_DATA_ORIGIN_FLAG, src, dst, 8, my_flag, peer_flag, res,
                           &seq);
    if (rank == 0)
        printf("lat raw_data+origin+flag 8 %.3f %.3f %.3f\n", rdof, raw, rdof / raw);
    double rt = pingpong(win, dw, LAT_RAW_TABLE, src, dst, 8, my_flag, peer_flag, res, &seq);
    if (rank == 0)
        printf("lat raw_table+data+flag 8 %.3f %.3f %.3f\n", rt, raw, rt / raw);
    static const size_t lat_sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
    uint64_t sigseq = 0, llseq = 0;
    double ps8 = pingpong(win, dw, LAT_PUT_SIGNAL_THREAD, src, dst, 8, my_flag, peer_flag, res,
                          &sigseq);
    double ps8b = pingpong(win, dw, LAT_PUT_SIGNAL_THREAD, src, dst, 8, my_flag, peer_flag, res,
                           &sigseq);
    ps8 = ps8b < ps8 ? ps8b : ps8;
    if (rank == 0)
        printf("lat put_signal_thread 8 %.3f %.3f %.3f\n", ps8, raw, ps8 / raw);
    for (size_t n : lat_sizes) {
        double t = pingpong(win, dw, LAT_PUT_SIGNAL_BLOCK, src, dst, n, my_flag, peer_flag, res,
                            &sigseq);
        if (rank == 0)
            printf("lat put_signal_block %zu %.3f %.3f %.3f\n", n, t, raw, t / raw);
    }
    double ll8 = pingpong(win, dw, LAT_LL_THREAD, src, dst, 8, my_flag, peer_flag, res, &llseq);
    if (rank == 0)
        printf("lat ll_thread 8 %.3f %.3f %.3f\n", ll8, raw, ll8 / raw);
    for (size_t n : lat_sizes) {
        if (n > 65536)
            break;
        double t = pingpong(win, dw, LAT_LL_BLOCK, src, dst, n, my_flag, peer_flag, res, &llseq);
        if (rank == 0)
            printf("lat ll_block %zu %.3f %.3f %.3f\n", n, t, raw, t / raw);
    }
    fflush(stdout);
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&win));
    GK(gpurma_finalize(g_ctx));
    return 0;
}
