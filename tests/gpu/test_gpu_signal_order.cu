/*
 * test_gpu_signal_order.cu - stress of "data before signal" on device
 * windows. Every rank runs one kernel: block 0 sends rounds of payload to
 * rank+1 with put_signal (SET round; thread, warp and block scope in turn,
 * 8 B to 32 KiB, odd offsets), block 1 receives rounds from rank-1: it
 * waits for the signal, checks every byte of the payload, counts signal
 * ADDs, and acknowledges, after which the sender may overwrite. A payload
 * byte of the wrong round means a signal overtook its data.
 */
#include "gpu_common.h"

gpurma_ctx_t g_ctx;

enum { SIG_DATA = 0, SIG_ACK = 1, SIG_COUNT = 2 };
enum { MAX_BYTES = 32768, STAGE_OFF = 0 };

__device__ size_t round_bytes(unsigned r) { return 8 + (size_t)((r * 7919u) % MAX_BYTES); }
__device__ size_t round_off(unsigned r) { return (size_t)((r * 13u) % 64); }
__device__ uint64_t round_seed(int sender, unsigned r) { return ((uint64_t)sender << 40) ^ r; }

struct Result {
    unsigned long long bad_bytes, rounds_done;
    int status;
};

/* Thread 0 waits (when `wait`) until signal sig reaches value; then the
 * whole block learns whether to stop. Call from every thread of the block. */
__device__ int block_wait(gpurma_dev_win_t w, uint32_t sig, uint64_t value, bool wait, Result *res,
                          int *stop)
{
    if (threadIdx.x == 0 && wait) {
        gpurma_status_t rc = gpurma_dev_wait_until(w, sig, GPURMA_CMP_GE, value);
        if (rc != GPURMA_SUCCESS) {
            atomicExch(&res->status, (int)rc);
            *stop = 1;
        }
    }
    __syncthreads();
    return *stop;
}

__global__ void k_stress(gpurma_dev_win_t w, int to, int from, unsigned rounds, char *stage,
                         const char *window, Result *res)
{
    __shared__ int stop;
    if (threadIdx.x == 0)
        stop = 0;
    __syncthreads();
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (blockIdx.x == 0) { /* sender */
        for (unsigned r = 1; r <= rounds; r++) {
            size_t n = round_bytes(r), off = round_off(r);
            /* stage may be rewritten only when the receiver has checked
             * round r-1: a port-engine put reads its source asynchronously,
             * so no thread may touch stage before thread 0 saw the ACK. */
            if (block_wait(w, SIG_ACK, r - 1, r > 1, res, &stop))
                break;
            for (size_t k = threadIdx.x; k < n; k += blockDim.x)
                stage[k] = (char)pattern_byte(round_seed(w.rank, r), k);
            /* The source may be read by a copy engine (port engine), not by
             * this block: each writer makes its part visible system-wide. */
            __threadfence_system();
            __syncthreads();
            int scope = r % 3;
            if (scope == 0) {
                if (threadIdx.x == 0)
                    rc = gpurma_dev_put_signal(w, to, off, stage, n, SIG_DATA, GPURMA_SIGNAL_SET,
                                               r);
            } else if (scope == 1) {
                if (threadIdx.x < 32)
                    rc = gpurma_dev_put_signal_warp(w, to, off, stage, n, SIG_DATA,
                                                    GPURMA_SIGNAL_SET, r);
            } else {
                rc = gpurma_dev_put_signal_block(w, to, off, stage, n, SIG_DATA,
                                                 GPURMA_SIGNAL_SET, r);
            }
            if (threadIdx.x == 0 && rc == GPURMA_SUCCESS)
                rc = gpurma_dev_signal(w, to, SIG_COUNT, GPURMA_SIGNAL_ADD, 1);
            if (rc != GPURMA_SUCCESS)
                atomicExch(&res->status, (int)rc);
            __syncthreads(); /* stage is rewritten next round */
        }
    } else { /* receiver */
        for (unsigned r = 1; r <= rounds; r++) {
            if (block_wait(w, SIG_DATA, r, true, res, &stop))
                break;
            size_t n = round_bytes(r), off = round_off(r);
            unsigned long long bad = 0;
            for (size_t k = threadIdx.x; k < n; k += blockDim.x)
                bad += (uint8_t)window[off + k] != pattern_byte(round_seed(from, r), k);
            if (bad)
                atomicAdd(&res->bad_bytes, bad);
            __syncthreads();
            if (threadIdx.x == 0) {
                res->rounds_done = r;
                rc = gpurma_dev_signal(w, from, SIG_ACK, GPURMA_SIGNAL_SET, r);
                if (rc != GPURMA_SUCCESS)
                    atomicExch(&res->status, (int)rc);
            }
        }
    }
}

int main(int argc, char **argv)
{
    skip_without_gpu("test_gpu_signal_order");
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;
    init_bounded();
    gpurma_team_t world = gpurma_team_world(g_ctx);
    int rank = gpurma_rank(g_ctx), n = gpurma_size(g_ctx);
    int to = (rank + 1) % n, from = (rank + n - 1) % n;
    void *base;
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, MAX_BYTES + 4096, NULL, &base, &win));
    gpurma_dev_win_t dw;
    GK(gpurma_win_device(win, &dw));
    char *stage;
    Result *res;
    CK(cudaMalloc(&stage, MAX_BYTES + 64));
    CK(cudaMallocHost(&res, sizeof(Result)));
    memset(res, 0, sizeof(*res));
    GK(gpurma_barrier(world));
    k_stress<<<2, 256>>>(dw, to, from, rounds, stage, (const char *)base, res);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    uint64_t count = 0;
    GK(gpurma_signal_read(win, SIG_COUNT, &count));
    int failed = res->status != 0 || res->bad_bytes != 0 || res->rounds_done != rounds ||
                 count != rounds;
    printf("rank %d: %u rounds, %llu checked, %llu bytes out of order, %llu signal ADDs, status "
           "%d: %s\n",
           rank, rounds, res->rounds_done, res->bad_bytes, (unsigned long long)count,
           res->status, failed ? "FAILED" : "passed");
    GK(gpurma_win_free(&win));
    GK(gpurma_finalize(g_ctx));
    return failed;
}
