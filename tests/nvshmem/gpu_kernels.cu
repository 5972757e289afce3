/*
 * gpu_kernels.cu - device-side NVSHMEM calls of gpu_ring, in a unit of
 * their own (see gpu_kernels.h).
 */
#include <nvshmem.h>
#include <nvshmemx.h>

#include "gpu_kernels.h"

static __global__ void ring_broadcast(char *data, size_t bytes, uint64_t *sig)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), next = (me + 1) % n;
    if (me != 0 && threadIdx.x == 0)
        nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, 1);
    __syncthreads();
    if (next != 0) {
        nvshmemx_putmem_block(data, data, bytes, next);
        if (threadIdx.x == 0) {
            nvshmem_fence();
            nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_SET, next);
        }
    }
}

void launch_ring_broadcast(char *data, size_t bytes, uint64_t *sig, cudaStream_t s)
{
    ring_broadcast<<<1, 256, 0, s>>>(data, bytes, sig);
}

static __global__ void ring_reduce(int *partial, int *acc, const int *mine, size_t n,
                                   uint64_t *sig)
{
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    size_t chunk = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * chunk;
    size_t hi = lo + chunk < n ? lo + chunk : n;
    if (lo >= hi)
        return;
    if (me != 0 && threadIdx.x == 0)
        nvshmem_uint64_wait_until(&sig[blockIdx.x], NVSHMEM_CMP_GE, 1);
    __syncthreads();
    for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
        acc[i] = (me ? partial[i] : 0) + mine[i];
    __syncthreads();
    if (me != npes - 1)
        nvshmemx_int_put_signal_nbi_block(partial + lo, acc + lo, hi - lo, &sig[blockIdx.x], 1,
                                          NVSHMEM_SIGNAL_ADD, me + 1);
}

void launch_ring_reduce(int *partial, int *acc, const int *mine, size_t n, uint64_t *sig,
                        int blocks, cudaStream_t s)
{
    ring_reduce<<<blocks, 128, 0, s>>>(partial, acc, mine, n, sig);
}

/* Block b sends to PE (me + b) % n; block 0 then waits for every source. */
static __global__ void moe(char *recv, const char *send, size_t slot, const size_t *nbytes,
                           uint64_t *sig, uint64_t round)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), to = (me + blockIdx.x) % n;
    nvshmemx_putmem_signal_nbi_block(recv + (size_t)me * slot, send + (size_t)to * slot,
                                     nbytes[to], &sig[me], 1, NVSHMEM_SIGNAL_ADD, to);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        nvshmem_quiet();
        nvshmem_uint64_wait_until_all(sig, (size_t)n, NULL, NVSHMEM_CMP_GE, round);
    }
}

void launch_moe(char *recv, const char *send, size_t slot, const size_t *nbytes, uint64_t *sig,
                uint64_t round, cudaStream_t s)
{
    moe<<<nvshmem_n_pes(), 128, 0, s>>>(recv, send, slot, nbytes, sig, round);
}

/* To every PE: i32[0] += me + 1 and i32[1] ^= 1 << me (same 64-bit word),
 * i64 += me + 1, u32 |= 1 << me, u64 fetch_inc, and compare_swaps of
 * which only PE 0's can succeed (u64[1]: 0 -> 7). */
static __global__ void atomics(int *i32, long long *i64, unsigned *u32, uint64_t *u64)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    for (int k = 0; k < n; k++) {
        int pe = (me + k) % n;
        nvshmem_int_atomic_fetch_add(&i32[0], me + 1, pe);
        nvshmem_int32_atomic_xor(&i32[1], 1 << (me % 31), pe);
        nvshmem_longlong_atomic_add(i64, me + 1, pe);
        nvshmem_uint_atomic_or(u32, 1u << (me % 32), pe);
        nvshmem_uint64_atomic_fetch_inc(&u64[0], pe);
        /* only PE 0's can succeed (the word is 0, then 7) */
        nvshmem_uint64_atomic_compare_swap(&u64[1], me == 0 ? 0 : 12345, me == 0 ? 7 : 9, pe);
    }
}

/* A device reduction of the world by one block (gpurma's device collectives). */
static __global__ void reduce_block(int *dest, const int *source, size_t n)
{
    nvshmemx_int_sum_reduce_block(NVSHMEM_TEAM_WORLD, dest, source, n);
}
int launch_reduce_block(int *dest, const int *source, size_t n, cudaStream_t s)
{
    reduce_block<<<1, 256, 0, s>>>(dest, source, n);
    return 1;
}

void launch_atomics(int *i32, long long *i64, unsigned *u32, uint64_t *u64, cudaStream_t s)
{
    atomics<<<1, 1, 0, s>>>(i32, i64, u32, u64);
}
