/*
 * coll_kernels.cu - the kernel behind the collectives on a stream: block b
 * of `parts` runs the device collective (gpurma_coll_device.h, block scope)
 * on part b of the data, on channel b of the team's GPU scratch window
 * (one SM per part: large pieces take up to GPURMA_COLL_GPU_CHANNELS). Everything it needs is in its arguments
 * (by value) and in the window (the epochs), so a captured graph replays
 * it as it is. A collective that fails on the GPU (a peer that never came:
 * the wait timed out) stops the kernel with a trap, after a message; the
 * stream then reports the error, as the stream waits of rma/ do.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cstdio>


#include "gpurma_coll_device.h"
#include "gpurma/detail/coll_direct.h"
extern "C" {
#include "coll_internal.h"
#include "gpurma_internal.h"
}
#include "gpu_launch.h"

/* 512 threads per block move 8 KiB per round with 16-byte vectors. */
#define GPURMA_COLL_THREADS 512

/* A collective that failed on the GPU stops its kernel, after a message
 * (the stream then reports the error); `which` names the collective. */
__device__ void gpurma_k_coll_fail(int rank, const char *which, int kind, gpurma_status_t rc)
{
    if (threadIdx.x == 0)
        printf("gpurma: rank %d: collective %d on a stream%s failed with status %d (%s)\n", rank,
               kind, which, (int)rc,
               rc == GPURMA_ERR_INVALID_ARG
                   ? "a peer passed another collective, count, dtype, op or root, or "
                     "another collective ran on this team at the same time"
                   : "a peer did not take part within the timeout?");
    __trap();
}

__global__ void __launch_bounds__(GPURMA_COLL_THREADS)
gpurma_k_coll(gpurma_dev_coll_t c, int kind, void *recv, const void *send, size_t count,
              int dtype, int op, int root, int algo)
{
    /* Block b moves part b of the data on channel b. */
    c = gpurma_dev_coll_part(c, blockIdx.x, gridDim.x);
    gpurma_dtype_t t = (gpurma_dtype_t)dtype;
    gpurma_redop_t o = (gpurma_redop_t)op;
    gpurma_status_t rc;
    switch (kind) {
    case GPURMA_COLL_ALLREDUCE:
        rc = gpurma_dev_coll_allreduce_algo_block(c, recv, send, count, t, o, algo);
        break;
    case GPURMA_COLL_ALLGATHER:
        rc = gpurma_dev_coll_allgather_algo_block(c, recv, send, count, t, algo);
        break;
    case GPURMA_COLL_REDUCE_SCATTER:
        rc = gpurma_dev_coll_reduce_scatter_algo_block(c, recv, send, count, t, o, algo);
        break;
    case GPURMA_COLL_BROADCAST:
        rc = gpurma_dev_coll_broadcast_algo_block(c, recv, send, count, t, root, algo);
        break;
    case GPURMA_COLL_REDUCE:
        rc = gpurma_dev_coll_reduce_algo_block(c, recv, send, count, t, o, root, algo);
        break;
    case GPURMA_COLL_ALLTOALL:
        rc = gpurma_dev_coll_alltoall_algo_block(c, recv, send, count, t, algo);
        break;
    default:
        rc = GPURMA_ERR_INTERNAL;
        break;
    }
    if (rc != GPURMA_SUCCESS)
        gpurma_k_coll_fail(c.rank, "", kind, rc);
}

/* LL16 (coll_ll16.h) in a kernel of its own, one per collective: small
 * collectives are bound by latency, and a kernel that holds only the code
 * it runs spends no time fetching instructions of the others. It uses no
 * stack (each thread's stage of one unit per source is in shared memory,
 * stride blockDim.x), takes every member's window as mapped here by value
 * (__grid_constant__: read in place, no table read before the first
 * packet), and is launched only for calls the host saw LL16 can take (one
 * node, the parts its slots need), so a declined call here is a broken
 * promise: an error. */
#define GPURMA_COLL_LL16_THREADS 256

template <int KIND>
__global__ void __launch_bounds__(GPURMA_COLL_LL16_THREADS)
gpurma_k_coll_ll16(gpurma_dev_coll_t c, const __grid_constant__ gpurma_dcoll__ll16_bases_t b,
                   void *recv, const void *send, size_t count, int dtype, int op, int root)
{
    extern __shared__ uint64_t gpurma_k_ll16_stage[];
    c = gpurma_dev_coll_part(c, blockIdx.x, gridDim.x);
    gpurma_dcoll__grp_t g = {threadIdx.x, blockDim.x, 2};
    gpurma_dcoll__set_call(&c, KIND, count, (gpurma_dtype_t)dtype, (gpurma_redop_t)op, root);
    gpurma_status_t rc = gpurma_dcoll__run_ll16_staged(
        &c, &b, &g, KIND, recv, send, count, (gpurma_dtype_t)dtype, (gpurma_redop_t)op, root,
        gpurma_k_ll16_stage + threadIdx.x, blockDim.x);
    if (rc == GPURMA_DCOLL__DECLINED)
        rc = GPURMA_ERR_INTERNAL;
    if (rc != GPURMA_SUCCESS)
        gpurma_k_coll_fail(c.rank, " (ll16)", KIND, rc);
}

/* alltoallv's counts and displacements, by value: send counts, send
 * displacements, recv counts, recv displacements, n entries each. Three
 * capacities, so that small teams do not pay 8 KiB of arguments per launch. */
template <int CAP> struct coll_v_table {
    size_t v[4 * CAP];
};

template <int CAP>
__global__ void __launch_bounds__(GPURMA_COLL_THREADS)
gpurma_k_coll_v(gpurma_dev_coll_t c, void *recv, const void *send, coll_v_table<CAP> t, int n,
                size_t max_count, int dtype, int algo)
{
    /* The algorithm reads the arrays many times per step: shared memory,
     * not a per-thread copy of the argument. */
    __shared__ size_t v[4 * CAP];
    for (int i = threadIdx.x; i < 4 * n; i += blockDim.x)
        v[i] = t.v[i];
    __syncthreads();
    c = gpurma_dev_coll_part(c, blockIdx.x, gridDim.x);
    gpurma_status_t rc = gpurma_dev_coll_alltoallv_algo_block(
        c, recv, v + 2 * n, v + 3 * n, send, v, v + n, max_count, (gpurma_dtype_t)dtype, algo);
    if (rc != GPURMA_SUCCESS) {
        if (threadIdx.x == 0)
            printf("gpurma: rank %d: alltoallv on a stream failed with status %d (a peer did "
                   "not take part within the timeout?)\n",
                   c.rank, (int)rc);
        __trap();
    }
}

template <int CAP>
static int launch_v(void *stream, const gpurma_dev_coll_t *c, unsigned parts, void *recv,
                    const void *send, const size_t *const arrays[4], int n, size_t max_count,
                    int dtype, int algo)
{
    coll_v_table<CAP> t;
    for (int k = 0; k < 4; k++)
        for (int r = 0; r < n; r++)
            t.v[k * n + r] = arrays[k][r];
    return gpurma_gpu_launch("alltoallv kernel launch", gpurma_k_coll_v<CAP>, parts,
                             GPURMA_COLL_THREADS, stream, *c, recv, send, t, n, max_count, dtype,
                             algo);
}

extern "C" int gpurma_coll_launch_v(void *stream, const gpurma_dev_coll_t *c, unsigned parts,
                                    void *recv, const void *send, const size_t *send_counts,
                                    const size_t *send_displs, const size_t *recv_counts,
                                    const size_t *recv_displs, size_t max_count, int dtype,
                                    int algo)
{
    const size_t *const arrays[4] = {send_counts, send_displs, recv_counts, recv_displs};
    const int n = c->size;
    if (n <= 8)
        return launch_v<8>(stream, c, parts, recv, send, arrays, n, max_count, dtype, algo);
    if (n <= 64)
        return launch_v<64>(stream, c, parts, recv, send, arrays, n, max_count, dtype, algo);
    if (n <= GPURMA_COLL_V_MAX_RANKS)
        return launch_v<GPURMA_COLL_V_MAX_RANKS>(stream, c, parts, recv, send, arrays, n,
                                                 max_count, dtype, algo);
    return gpurma_set_error(GPURMA_ERR_INTERNAL, "alltoallv kernel: team of %d ranks", n);
}

/* Zero-copy collectives on registered buffers (coll_direct.h): blocks
 * share this member's part of the elements. Two blocks to an SM (at most
 * 64 registers a thread): the members' blocks must all be resident at
 * once when they share a GPU (gpurma_coll_direct_resident), and at 106
 * registers one block a GPU's SM held left 8 members of 32 blocks
 * waiting on each other under MPS (2026-11-26). */
__global__ void __launch_bounds__(GPURMA_COLL_THREADS, 2)
gpurma_k_coll_direct(gpurma_dev_coll_t c, gpurma_dcoll__direct_t d, int kind, size_t count,
                     int dtype, int op, int root)
{
    gpurma_dcoll__run_direct(&c, &d, kind, count, (gpurma_dtype_t)dtype, (gpurma_redop_t)op,
                             root);
}

extern "C" int gpurma_coll_launch_direct(void *stream, const gpurma_dev_coll_t *c,
                                         unsigned blocks, const gpurma_dcoll__direct_t *d,
                                         int kind, size_t count, int dtype, int op, int root)
{
    return gpurma_gpu_launch("zero-copy collective kernel launch", gpurma_k_coll_direct, blocks,
                             GPURMA_COLL_THREADS, stream, *c, *d, kind, count, dtype, op, root);
}

extern "C" unsigned gpurma_coll_direct_resident(int device)
{
    /* per device, once: the answer does not change (benign race: every
     * thread that computes it stores the same value) */
    static unsigned cache[64];
    if (device < 0 || device >= 64)
        return 0;
    unsigned v = __atomic_load_n(&cache[device], __ATOMIC_RELAXED);
    if (v)
        return v;
    int per_sm = 0, sms = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gpurma_k_coll_direct,
                                                      GPURMA_COLL_THREADS, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        per_sm <= 0 || sms <= 0) {
        (void)cudaGetLastError();
        return 0;
    }
    v = (unsigned)per_sm * (unsigned)sms;
    __atomic_store_n(&cache[device], v, __ATOMIC_RELAXED);
    return v;
}

extern "C" int gpurma_coll_preload_kernels(void)
{
    return gpurma_gpu_load("loading the collectives' kernels", gpurma_k_coll,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_ALLREDUCE>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_ALLGATHER>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_REDUCE_SCATTER>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_ALLTOALL>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_BROADCAST>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_REDUCE>, gpurma_k_coll_direct,
                           gpurma_k_coll_v<8>, gpurma_k_coll_v<64>,
                           gpurma_k_coll_v<GPURMA_COLL_V_MAX_RANKS>);
}

extern "C" int gpurma_coll_launch(void *stream, const gpurma_dev_coll_t *c, unsigned parts,
                                  int kind, void *recv, const void *send, size_t count, int dtype,
                                  int op, int root, int algo,
                                  const gpurma_dcoll__ll16_bases_t *ll16)
{
#define LL16(K, DK)                                                                            \
    case GPURMA_COLL_##K:                                                                      \
        return gpurma_gpu_launch_smem("collective kernel launch", gpurma_k_coll_ll16<DK>,      \
                                      parts, threads, stage, stream, *c, *ll16, recv, send,    \
                                      count, dtype, op, root)
    const size_t es = gpurma_dev_dtype_size((gpurma_dtype_t)dtype);
    if (algo == GPURMA_COLL_ALGO_LL16 && ll16 && !c->win.nports &&
        gpurma_dcoll__ll16_parts(c, count * es) == parts) {
        /* A thread per unit of a part, in whole warps: small pieces
         * synchronize fewer threads. */
        const size_t units = (gpurma_sh_div_ceil(count, parts) * es + 7) / 8;
        const unsigned threads =
            units >= GPURMA_COLL_LL16_THREADS
                ? GPURMA_COLL_LL16_THREADS
                : (unsigned)(units < 64 ? 64 : (units + 31) / 32 * 32);
        const size_t stage = (size_t)c->size * threads * sizeof(uint64_t);
        switch (kind) {
            LL16(ALLREDUCE, GPURMA_DCOLL__K_ALLREDUCE);
            LL16(ALLGATHER, GPURMA_DCOLL__K_ALLGATHER);
            LL16(REDUCE_SCATTER, GPURMA_DCOLL__K_REDUCE_SCATTER);
            LL16(ALLTOALL, GPURMA_DCOLL__K_ALLTOALL);
            LL16(BROADCAST, GPURMA_DCOLL__K_BROADCAST);
            LL16(REDUCE, GPURMA_DCOLL__K_REDUCE);
        default:
            break;
        }
    }
#undef LL16
    return gpurma_gpu_launch("collective kernel launch", gpurma_k_coll, parts,
                             GPURMA_COLL_THREADS, stream, *c, kind, recv, send, count, dtype, op,
                             root, algo);
}
