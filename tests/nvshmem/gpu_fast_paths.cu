/*
 * gpu_fast_paths.cu - the NVSHMEM layer's load/store paths on the GPU, the
 * ones issue 17 made lean, checked for what they deliver (plain nvcc, no
 * -rdc, as a porting user builds):
 *   1. AMOs whose results kernels drop (REDs that overlap): every thread
 *      of a block adds to the next PE's 64- and 32-bit words many times;
 *      the words must hold their random start plus every addition;
 *   2. p of an odd count of ints, putmem_warp and getmem_block at odd byte
 *      offsets and sizes, into poisoned destinations;
 *   3. device barriers (thread, warp and block forms) and sync_all_block,
 *      round after round: data a PE wrote before the barrier (p into the
 *      next PE; for sync, plain stores into its own buffer, read by the
 *      next PE with getmem_block) must be what the reader sees after it.
 * Runs at any PE count (one PE puts to itself); exits 77 without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvshmem.h>
#include <nvshmemx.h>

#define GPU_CHECK_NAME "gpu_fast_paths"
#include "gpu_check.h"

/* A value of element i that PE pe writes in round r (never the poison). */
static __host__ __device__ int pattern(int pe, unsigned r, size_t i)
{
    uint32_t x = (uint32_t)pe * 2654435761u ^ (uint32_t)r * 40503u ^ (uint32_t)i * 97u;
    x ^= x >> 13;
    return (int)(x | 1u);
}

/* 1. Dropped results: nothing is read back but the words at the end. */
static __global__ void amo_storm(uint64_t *w64, uint32_t *w32, int rounds, int to)
{
    for (int r = 0; r < rounds; r++) {
        (void)nvshmem_uint64_atomic_fetch_add(w64, (uint64_t)threadIdx.x + 1, to);
        nvshmem_uint32_atomic_add(w32, 1u, to);
    }
    nvshmem_quiet();
}

/* 2. p of every element, then a warp put and a block get at odd offsets. */
static __global__ void p_all(int *dst, const int *src, size_t n, int to)
{
    for (size_t j = threadIdx.x; j < n; j += blockDim.x)
        nvshmem_int_p(dst + j, src[j], to);
    __syncthreads();
    if (threadIdx.x == 0)
        nvshmem_quiet();
}
static __global__ void put_warp(char *dst, const char *src, size_t bytes, int to)
{
    if (threadIdx.x < 32)
        nvshmemx_putmem_warp(dst, src, bytes, to);
}
static __global__ void get_block(char *dst, const char *src, size_t bytes, int from)
{
    nvshmemx_getmem_block(dst, src, bytes, from);
}

/* 3. Rounds of p into the next PE's buffer (two, by round parity), a
 * barrier of the given scope, and the check of what the previous PE wrote
 * into ours. scope: 0 thread (thread 0, the block meeting around it),
 * 1 warp (warp 0, likewise), 2 block. */
static __global__ void barrier_rounds(int *buf, size_t n, int rounds, int scope, int *bad)
{
    int me_ = nvshmem_my_pe(), np = nvshmem_n_pes();
    int to = (me_ + 1) % np, from = (me_ + np - 1) % np;
    for (int r = 0; r < rounds; r++) {
        int *b = buf + (size_t)(r & 1) * n;
        for (size_t j = threadIdx.x; j < n; j += blockDim.x)
            nvshmem_int_p(b + j, pattern(me_, (unsigned)r, j), to);
        __syncthreads();
        if (scope == 0) {
            if (threadIdx.x == 0)
                nvshmem_barrier_all();
            __syncthreads();
        } else if (scope == 1) {
            if (threadIdx.x < 32)
                nvshmemx_barrier_all_warp();
            __syncthreads();
        } else {
            nvshmemx_barrier_all_block();
        }
        for (size_t j = threadIdx.x; j < n; j += blockDim.x)
            if (((volatile int *)b)[j] != pattern(from, (unsigned)r, j))
                atomicAdd(bad, 1);
    }
}

/* Rounds of plain stores into this PE's own buffer, sync_all_block, and a
 * block get of the previous PE's buffer, checked. */
static __global__ void sync_rounds(int *buf, int *got, size_t n, int rounds, int *bad)
{
    int me_ = nvshmem_my_pe(), np = nvshmem_n_pes();
    int from = (me_ + np - 1) % np;
    for (int r = 0; r < rounds; r++) {
        int *b = buf + (size_t)(r & 1) * n;
        for (size_t j = threadIdx.x; j < n; j += blockDim.x)
            b[j] = pattern(me_, (unsigned)r, j);
        nvshmemx_sync_all_block();
        nvshmemx_getmem_block(got, b, n * sizeof(int), from);
        for (size_t j = threadIdx.x; j < n; j += blockDim.x)
            if (got[j] != pattern(from, (unsigned)r, j))
                atomicAdd(bad, 1);
        __syncthreads();
    }
}

static void launch(const void *k, unsigned threads, void **args, cudaStream_t s)
{
    ASSERT(nvshmemx_collective_launch(k, dim3(1), dim3(threads), args, 0, s) == 0,
           "collective launch");
    CU(cudaStreamSynchronize(s));
}

int main(void)
{
    if (!gpu_check_start())
        return 77;
    cudaStream_t s;
    CU(cudaStreamCreate(&s));
    srand(1234u + 77u * (unsigned)me);

    /* 1. */
    uint64_t *w64 = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
    uint32_t *w32 = (uint32_t *)nvshmem_malloc(sizeof(uint32_t));
    uint64_t start64 = ((uint64_t)rand() << 32) ^ (uint64_t)rand();
    uint32_t start32 = (uint32_t)rand() * 2654435761u;
    CU(cudaMemcpy(w64, &start64, sizeof start64, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(w32, &start32, sizeof start32, cudaMemcpyHostToDevice));
    sync_all();
    const int rounds = 1001, threads = 256;
    amo_storm<<<1, threads, 0, s>>>(w64, w32, rounds, next);
    CU(cudaStreamSynchronize(s));
    sync_all();
    uint64_t got64 = 0;
    uint32_t got32 = 0;
    CU(cudaMemcpy(&got64, w64, sizeof got64, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(&got32, w32, sizeof got32, cudaMemcpyDeviceToHost));
    uint64_t want64 = start64 + (uint64_t)rounds * threads * (threads + 1) / 2;
    uint32_t want32 = start32 + (uint32_t)(rounds * threads);
    ASSERT(got64 == want64, "64-bit adds with dropped results: %llu, want %llu",
           (unsigned long long)got64, (unsigned long long)want64);
    ASSERT(got32 == want32, "32-bit adds: %u, want %u", got32, want32);

    /* 2. */
    const size_t n = 4099 + 2;
    int *dst = (int *)nvshmem_malloc(n * sizeof(int)), *src = (int *)nvshmem_malloc(n * sizeof(int));
    int *host = (int *)malloc(n * sizeof(int)), *back = (int *)malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        host[i] = pattern(me, 7, i) ^ rand();
    CU(cudaMemcpy(src, host, n * sizeof(int), cudaMemcpyHostToDevice));
    CU(cudaMemset(dst, 0xa5, n * sizeof(int)));
    sync_all();
    p_all<<<1, 512, 0, s>>>(dst, src, n, next);
    CU(cudaStreamSynchronize(s));
    sync_all();
    CU(cudaMemcpy(back, dst, n * sizeof(int), cudaMemcpyDeviceToHost));
    /* the previous PE's source, rebuilt from its seed */
    srand(1234u + 77u * (unsigned)prev);
    (void)rand(), (void)rand(), (void)rand();
    for (size_t i = 0; i < n; i++) {
        int w = pattern(prev, 7, i) ^ rand();
        ASSERT(back[i] == w, "p element %zu: %d, want %d", i, back[i], w);
    }
    /* warp put and block get, odd offsets and sizes, poisoned around */
    const size_t off = 3, bytes = n * sizeof(int) - 9;
    CU(cudaMemset(dst, 0x5a, n * sizeof(int)));
    sync_all();
    put_warp<<<1, 64, 0, s>>>((char *)dst + off, (const char *)src + 1, bytes, next);
    CU(cudaStreamSynchronize(s));
    nvshmem_quiet();
    sync_all();
    char *gotb = NULL, *pb = (char *)malloc(n * sizeof(int)), *mine = (char *)malloc(n * sizeof(int));
    CU(cudaMalloc((void **)&gotb, n * sizeof(int)));
    CU(cudaMemset(gotb, 0x33, n * sizeof(int)));
    get_block<<<1, 256, 0, s>>>(gotb + 5, (const char *)dst + off, bytes, next);
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(pb, gotb, n * sizeof(int), cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(mine, src, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n * sizeof(int); i++) {
        unsigned char w = i >= 5 && i < 5 + bytes ? (unsigned char)mine[1 + i - 5] : 0x33;
        ASSERT((unsigned char)pb[i] == w, "warp put + block get byte %zu: %#x, want %#x", i,
               (unsigned char)pb[i], w);
    }
    CU(cudaFree(gotb));
    free(pb), free(mine), free(host), free(back);

    /* 3. */
    const size_t m = 1531;
    const int brounds = 64;
    int *buf = (int *)nvshmem_malloc(2 * m * sizeof(int)), *got = NULL, *bad = NULL;
    CU(cudaMalloc((void **)&got, m * sizeof(int)));
    CU(cudaMalloc((void **)&bad, sizeof(int)));
    const char *names[] = {"barrier_all", "barrier_all_warp", "barrier_all_block"};
    for (int scope = 0; scope < 3; scope++) {
        CU(cudaMemset(buf, 0xa5, 2 * m * sizeof(int)));
        CU(cudaMemset(bad, 0, sizeof(int)));
        sync_all();
        size_t mm = m;
        int rr = brounds, sc = scope;
        void *args[] = {&buf, &mm, &rr, &sc, &bad};
        launch((const void *)barrier_rounds, 128, args, s);
        int nbad = -1;
        CU(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
        ASSERT(nbad == 0, "%s: %d elements were not the previous PE's after the barrier",
               names[scope], nbad);
    }
    CU(cudaMemset(buf, 0xa5, 2 * m * sizeof(int)));
    CU(cudaMemset(bad, 0, sizeof(int)));
    sync_all();
    {
        size_t mm = m;
        int rr = brounds;
        void *args[] = {&buf, &got, &mm, &rr, &bad};
        launch((const void *)sync_rounds, 256, args, s);
        int nbad = -1;
        CU(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
        ASSERT(nbad == 0, "sync_all_block: %d elements read were not the previous PE's stores",
               nbad);
    }
    CU(cudaFree(got));
    CU(cudaFree(bad));

    sync_all();
    if (me == 0)
        printf("PASS gpu_fast_paths: %d PEs\n", npes);
    nvshmem_finalize();
    return 0;
}
