/*
 * test_gpu_ll_stress.cu - LL packets around a ring of ranks. In round r,
 * rank 0 sends a payload (1 B to 4 KiB, 8- or 16-byte packets, thread,
 * warp or block scope in turn) with flag r to rank 1, which reads it by
 * flag, checks every byte, and sends its own payload on to rank 2, and so
 * on back to rank 0. Flags only grow, so no buffer is ever reset; a packet
 * seen with a stale or torn flag shows as a wrong byte.
 */
#include "gpu_common.h"

gpurma_ctx_t g_ctx;

enum { MAX_BYTES = 4096 };

__device__ size_t round_bytes(unsigned r) { return 1 + (size_t)((r * 2654435761u) % MAX_BYTES); }
__device__ uint64_t hop_seed(int sender, unsigned r) { return 0x77ull << 48 ^ ((uint64_t)sender << 32) ^ r; }

struct Result {
    unsigned long long bad_bytes, rounds_done;
    int status;
};

/* Sends or receives at the round's scope; every thread of the block calls. */
__device__ gpurma_status_t ll_send(gpurma_dev_win_t w, int to, const char *src, size_t n,
                                   unsigned r)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    int scope = (r / 2) % 3;
    bool p16 = r & 1;
    if (scope == 0) {
        if (threadIdx.x == 0)
            rc = p16 ? gpurma_dev_put_packets16(w, to, 0, src, n, r)
                     : gpurma_dev_put_packets(w, to, 0, src, n, r);
    } else if (scope == 1) {
        if (threadIdx.x < 32)
            rc = p16 ? gpurma_dev_put_packets16_warp(w, to, 0, src, n, r)
                     : gpurma_dev_put_packets_warp(w, to, 0, src, n, r);
    } else {
        rc = p16 ? gpurma_dev_put_packets16_block(w, to, 0, src, n, r)
                 : gpurma_dev_put_packets_block(w, to, 0, src, n, r);
    }
    return rc;
}

__device__ gpurma_status_t ll_recv(gpurma_dev_win_t w, char *dst, size_t n, unsigned r)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    int scope = (r / 2 + 1) % 3; /* not always the sender's scope */
    bool p16 = r & 1;
    if (scope == 0) {
        if (threadIdx.x == 0)
            rc = p16 ? gpurma_dev_read_packets16(w, 0, dst, n, r)
                     : gpurma_dev_read_packets(w, 0, dst, n, r);
    } else if (scope == 1) {
        if (threadIdx.x < 32)
            rc = p16 ? gpurma_dev_read_packets16_warp(w, 0, dst, n, r)
                     : gpurma_dev_read_packets_warp(w, 0, dst, n, r);
    } else {
        rc = p16 ? gpurma_dev_read_packets16_block(w, 0, dst, n, r)
                 : gpurma_dev_read_packets_block(w, 0, dst, n, r);
    }
    return rc;
}

__global__ void k_ring(gpurma_dev_win_t w, int rank, int nranks, unsigned rounds, char *out,
                       char *in, Result *res)
{
    __shared__ int stop;
    int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
    for (unsigned r = 1; r <= rounds; r++) {
        size_t n = round_bytes(r);
        if (threadIdx.x == 0)
            stop = 0;
        for (size_t k = threadIdx.x; k < n; k += blockDim.x)
            out[k] = (char)pattern_byte(hop_seed(rank, r), k);
        __syncthreads();
        gpurma_status_t rc = GPURMA_SUCCESS;
        if (rank == 0)
            rc = ll_send(w, to, out, n, r);
        if (rc == GPURMA_SUCCESS)
            rc = ll_recv(w, in, n, r);
        __syncthreads();
        unsigned long long bad = 0;
        for (size_t k = threadIdx.x; k < n; k += blockDim.x)
            bad += (uint8_t)in[k] != pattern_byte(hop_seed(from, r), k);
        if (bad)
            atomicAdd(&res->bad_bytes, bad);
        if (rc == GPURMA_SUCCESS && rank != 0)
            rc = ll_send(w, to, out, n, r);
        if (rc != GPURMA_SUCCESS) {
            atomicExch(&res->status, (int)rc);
            stop = 1;
        }
        __syncthreads();
        if (stop)
            break;
        if (threadIdx.x == 0)
            res->rounds_done = r;
    }
}

int main(int argc, char **argv)
{
    skip_without_gpu("test_gpu_ll_stress");
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;
    init_bounded();
    gpurma_team_t world = gpurma_team_world(g_ctx);
    int rank = gpurma_rank(g_ctx), n = gpurma_size(g_ctx);
    void *base;
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, 2 * MAX_BYTES + 64, NULL, &base, &win));
    gpurma_dev_win_t dw;
    GK(gpurma_win_device(win, &dw));
    char *out, *in;
    Result *res;
    CK(cudaMalloc(&out, MAX_BYTES + 16));
    CK(cudaMalloc(&in, MAX_BYTES + 16));
    CK(cudaMallocHost(&res, sizeof(Result)));
    memset(res, 0, sizeof(*res));
    GK(gpurma_barrier(world));
    k_ring<<<1, 256>>>(dw, rank, n, rounds, out, in, res);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    int failed = res->status != 0 || res->bad_bytes != 0 || res->rounds_done != rounds;
    printf("rank %d: %u LL rounds, %llu done, %llu bad bytes, status %d: %s\n", rank, rounds,
           res->rounds_done, res->bad_bytes, res->status, failed ? "FAILED" : "passed");
    GK(gpurma_win_free(&win));
    GK(gpurma_finalize(g_ctx));
    return failed;
}
