/*
 * test_gpu_barrier.cu - what the device barrier (gpurma_dev_coll_barrier,
 * _warp, _block) orders on GPUs. Every round, the threads of one block on
 * every rank store bytes of that round (a hash of round, writer and
 * reader; an odd length that changes every round) straight into their own
 * range of every peer's window (mapped memory, plain stores, no fence of
 * their own), meet the other ranks in a barrier, then check byte for byte
 * that every peer's range here holds the peer's bytes of this round, and
 * meet again before the next round overwrites them. Scopes in turn:
 *   thread: every thread stores, __syncthreads, thread 0 barriers,
 *           __syncthreads, every thread checks (the fence is cumulative
 *           over what thread 0 observed through the block barrier);
 *   warp:   warp 0 alone stores, barriers (_warp) and checks;
 *   block:  every thread stores, barriers (_block) and checks, with no
 *           synchronization of the test's own around the call.
 * A barrier that returned before a peer arrived, or whose ordering missed
 * a thread's stores, shows as bytes of the last round (or poison).
 * Needs every peer mapped (one node); skips otherwise.
 */
#include "gpu_common.h"
#include "gpurma_coll_device.h"

gpurma_ctx_t g_ctx;
static long failures;

enum { SLOT = 4096, MAX_LEN = 4000 };

struct Result {
    unsigned long long bad_bytes;
    unsigned rounds_done;
    int status;
};

__device__ uint64_t range_seed(unsigned round, int from, int to)
{
    return (uint64_t)round << 32 ^ (uint64_t)from << 16 ^ (uint64_t)to;
}
__device__ size_t range_len(unsigned round) { return 1 + (size_t)((round * 7919u) % MAX_LEN); }

/* Threads tid of nthreads store this rank's range of round r into every
 * peer's window. */
__device__ void store_ranges(gpurma_dev_win_t w, unsigned r, unsigned tid, unsigned nthreads)
{
    const size_t len = range_len(r);
    for (int p = 0; p < w.size; p++) {
        if (p == w.rank)
            continue;
        char *dst = w.peers[p].base + (size_t)w.rank * SLOT;
        const uint64_t seed = range_seed(r, w.rank, p);
        for (size_t k = tid; k < len; k += nthreads)
            dst[k] = (char)pattern_byte(seed, k);
    }
}

/* The bytes of round r in every peer's range here that are not the
 * peer's. */
__device__ unsigned long long check_ranges(gpurma_dev_win_t w, const char *window, unsigned r,
                                           unsigned tid, unsigned nthreads)
{
    const size_t len = range_len(r);
    unsigned long long bad = 0;
    for (int p = 0; p < w.size; p++) {
        if (p == w.rank)
            continue;
        const uint64_t seed = range_seed(r, p, w.rank);
        /* Plain loads, as a program's: the acquire of thread 0 (or lane
         * 0) and the group's barrier after it must be enough. */
        const char *got = window + (size_t)p * SLOT;
        for (size_t k = tid; k < len; k += nthreads)
            bad += (uint8_t)got[k] != pattern_byte(seed, k);
    }
    return bad;
}

/* One barrier of round r's scope, called by every thread of the block;
 * the block learns its status. */
__device__ int scoped_barrier(gpurma_dev_coll_t c, unsigned r, int *shared_rc)
{
    const unsigned scope = r % 3;
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (scope == 0) {
        __syncthreads();
        if (threadIdx.x == 0)
            *shared_rc = (int)gpurma_dev_coll_barrier(c);
        __syncthreads();
        return *shared_rc;
    }
    if (scope == 1) {
        if (threadIdx.x < 32)
            rc = gpurma_dev_coll_barrier_warp(c);
        return (int)rc;
    }
    return (int)gpurma_dev_coll_barrier_block(c);
}

__global__ void k_rounds(gpurma_dev_win_t w, gpurma_dev_coll_t c, const char *window,
                         unsigned rounds, Result *res)
{
    __shared__ int shared_rc, stop;
    if (threadIdx.x == 0)
        stop = 0;
    __syncthreads();
    for (unsigned r = 1; r <= rounds && !stop; r++) {
        const bool warp_round = r % 3 == 1;
        const bool active = !warp_round || threadIdx.x < 32;
        const unsigned nthreads = warp_round ? 32 : blockDim.x;
        if (active)
            store_ranges(w, r, threadIdx.x, nthreads);
        int rc = scoped_barrier(c, r, &shared_rc);
        if (active && rc == GPURMA_SUCCESS) {
            unsigned long long bad = check_ranges(w, window, r, threadIdx.x, nthreads);
            if (bad)
                atomicAdd(&res->bad_bytes, bad);
        }
        /* Nobody overwrites a peer's range before the peer checked it. */
        if (active && rc == GPURMA_SUCCESS)
            rc = scoped_barrier(c, r, &shared_rc);
        if (active && rc != GPURMA_SUCCESS) {
            atomicExch(&res->status, rc);
            stop = 1;
        }
        __syncthreads();
        if (threadIdx.x == 0 && !stop)
            res->rounds_done = r;
    }
}

int main(int argc, char **argv)
{
    skip_without_gpu("test_gpu_barrier");
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;
    init_bounded();
    gpurma_team_t world = gpurma_team_world(g_ctx);
    const int rank = gpurma_rank(g_ctx), n = gpurma_size(g_ctx);
    void *base;
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, (size_t)n * SLOT, NULL, &base, &win));
    gpurma_dev_win_t dw;
    gpurma_dev_coll_t c;
    GK(gpurma_win_device(win, &dw));
    GK(gpurma_coll_device(world, GPURMA_MEM_DEVICE, &c));
    int mapped = 1;
    for (int p = 0; p < n; p++)
        mapped &= p == rank || gpurma_win_peer_ptr(win, p) != NULL;
    if (!mapped) {
        printf("test_gpu_barrier: rank %d: a peer is not mapped here, skipped\n", rank);
        GK(gpurma_win_free(&win));
        GK(gpurma_finalize(g_ctx));
        return 77;
    }
    CK(cudaMemset(base, 0xA5, (size_t)n * SLOT));
    CK(cudaDeviceSynchronize());
    Result *res;
    CK(cudaMallocHost(&res, sizeof(Result)));
    memset(res, 0, sizeof(*res));
    GK(gpurma_barrier(world)); /* every window poisoned before anyone stores */
    k_rounds<<<1, 256>>>(dw, c, (const char *)base, rounds, res);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    EXPECT(res->status == 0, "a barrier returned %d (%s)", res->status,
           gpurma_strerror((gpurma_status_t)res->status));
    EXPECT(res->bad_bytes == 0, "%llu bytes of a peer's range were not its bytes of the round",
           res->bad_bytes);
    EXPECT(res->rounds_done == rounds, "%u of %u rounds done", res->rounds_done, rounds);
    printf("rank %d: %u rounds, %llu bytes out of order, status %d: %s\n", rank,
           res->rounds_done, res->bad_bytes, res->status, failures ? "FAILED" : "passed");
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&win));
    GK(gpurma_finalize(g_ctx));
    return failures ? 1 : 0;
}
