/*
 * coll_kernels.h - what the collectives' kernel files share (C++, nvcc or
 * hipcc only). Each family of kernels is a file of its own, so that a
 * parallel make compiles them at the same time (one file of all of them
 * took 8.5 minutes of one core, 2026-11-26):
 *
 *   coll_kernels.cu         the dispatch between them, the loading
 *   coll_kernels_<kind>.cu  the generic kernel of one collective (every
 *                           algorithm of gpurma_coll_device.h)
 *   coll_kernels_ll16.cu    LL16, a kernel per collective
 *   coll_kernels_v.cu       alltoallv, counts by value
 *   coll_kernels_direct.cu  zero-copy on registered buffers
 *
 * The extern "C" entry points the host code calls are in coll_internal.h;
 * the ones only the kernel files call each other through are below.
 */
#ifndef GPURMA_COLL_KERNELS_H
#define GPURMA_COLL_KERNELS_H

#include <cstdio>

#include "gpurma_coll_device.h"
extern "C" {
#include "coll_internal.h"
#include "gpurma_internal.h"
}
#include "gpu_launch.h"

/* 512 threads per block move 8 KiB per round with 16-byte vectors. */
#define GPURMA_COLL_THREADS 512

/* A collective that failed on the GPU stops its kernel, after a message
 * (the stream then reports the error); `which` names the kernel family.
 * Except once the host knows a member of the team dead (c.gone, which made
 * some thread's wait end with PEER_FAILED; the others of its block, which
 * only saw the block fail, may hold another status): the kernel then ends
 * without a trap. A trap breaks the CUDA context, and under MPS that of
 * every process on the GPU, other jobs' too; the death is reported by the
 * host instead (the team's calls, gpurma_team_check_peers,
 * ncclCommGetAsyncError), as NCCL reports it, and the call's results are
 * undefined. */
static __device__ __forceinline__ void gpurma_k_coll_fail(const gpurma_dev_coll_t &c,
                                                          const char *which, int kind,
                                                          gpurma_status_t rc)
{
    if (rc == GPURMA_ERR_PEER_FAILED || (c.gone && gpurma_sh_load_relaxed_u64(c.gone))) {
        if (threadIdx.x == 0 && blockIdx.x == 0)
            gpurma_sh_report("gpurma: rank %d: collective %d on a stream%s ended early: a member "
                             "of the team died; its results are undefined\n",
                             c.rank, kind, which);
        return;
    }
    if (threadIdx.x == 0)
        gpurma_sh_report("gpurma: rank %d: collective %d on a stream%s failed with status %d "
                         "(%s)\n",
                         c.rank, kind, which, (int)rc,
                         rc == GPURMA_ERR_INVALID_ARG
                             ? "a peer passed another collective, count, dtype, op or root, or "
                               "another collective ran on this team at the same time"
                             : "a peer did not take part within the timeout?");
    __trap();
}

/* The generic kernel of collective KIND (a GPURMA_COLL_* kind): block b of
 * `parts` runs the device collective (gpurma_coll_device.h, block scope,
 * any algorithm) on part b of the data, on channel b of the team's GPU
 * scratch window. A kernel per collective, each in a file of its own
 * (coll_kernels_<kind>.cu, by GPURMA_COLL_KERNEL_FILE): together they were
 * one kernel that took most of the build's time alone. */
template <int KIND>
__global__ void __launch_bounds__(GPURMA_COLL_THREADS)
gpurma_k_coll(gpurma_dev_coll_t c, void *recv, const void *send, size_t count, int dtype, int op,
              int root, int algo)
{
    /* Block b moves part b of the data on channel b. */
    c = gpurma_dev_coll_part(c, blockIdx.x, gridDim.x);
    gpurma_dtype_t t = (gpurma_dtype_t)dtype;
    gpurma_redop_t o = (gpurma_redop_t)op;
    gpurma_status_t rc;
    switch (KIND) {
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
        gpurma_k_coll_fail(c, "", KIND, rc);
}

/* What a generic kernel's file gives coll_kernels.cu's table: its launch
 * (of this type) and its loading. */
typedef int gpurma_coll_launch_fn(void *stream, const gpurma_dev_coll_t *c, unsigned parts,
                                  void *recv, const void *send, size_t count, int dtype, int op,
                                  int root, int algo);
#define GPURMA_COLL_KERNEL_FILE(name, KIND)                                                    \
    extern "C" int gpurma_coll_launch_##name(void *stream, const gpurma_dev_coll_t *c,         \
                                             unsigned parts, void *recv, const void *send,     \
                                             size_t count, int dtype, int op, int root,        \
                                             int algo)                                         \
    {                                                                                          \
        return gpurma_gpu_launch(#name " kernel launch", gpurma_k_coll<KIND>, parts,           \
                                 GPURMA_COLL_THREADS, stream, *c, recv, send, count, dtype,    \
                                 op, root, algo);                                              \
    }                                                                                          \
    extern "C" int gpurma_coll_preload_##name(void)                                            \
    {                                                                                          \
        return gpurma_gpu_load("loading the " #name " kernel", gpurma_k_coll<KIND>);           \
    }
#define GPURMA_COLL_KERNEL_DECLARE(name)                                                       \
    extern "C" gpurma_coll_launch_fn gpurma_coll_launch_##name;                                \
    extern "C" int gpurma_coll_preload_##name(void);
GPURMA_COLL_KERNEL_DECLARE(allreduce)
GPURMA_COLL_KERNEL_DECLARE(allgather)
GPURMA_COLL_KERNEL_DECLARE(reduce_scatter)
GPURMA_COLL_KERNEL_DECLARE(broadcast)
GPURMA_COLL_KERNEL_DECLARE(reduce)
GPURMA_COLL_KERNEL_DECLARE(alltoall)

/* Whether a call the host gave to LL16 (algo) in `parts` parts runs in
 * an LL16 kernel: every member mapped here (ll16), no proxied peer, and
 * parts that hold the largest piece (bytes) within the channels. */
static inline int gpurma_coll_ll16_runs(const gpurma_dev_coll_t *c, unsigned parts, int algo,
                                        size_t bytes, const gpurma_dcoll__ll16_bases_t *ll16)
{
    const unsigned need = gpurma_dcoll__ll16_parts(c, bytes);
    return algo == GPURMA_COLL_ALGO_LL16 && ll16 && !c->win.nports && need && parts >= need &&
           parts <= c->nchannels;
}

/* Threads of an LL16 kernel's block: one per 8-byte unit of a part of
 * the largest piece (count elements of es bytes in parts), in whole
 * warps, 64 to GPURMA_COLL_LL16_THREADS: small pieces synchronize fewer
 * threads. */
#define GPURMA_COLL_LL16_THREADS 256
static inline unsigned gpurma_coll_ll16_threads(size_t count, unsigned parts, size_t es)
{
    const size_t units = (gpurma_sh_div_ceil(count, parts) * es + 7) / 8;
    return units >= GPURMA_COLL_LL16_THREADS ? GPURMA_COLL_LL16_THREADS
           : units < 64                      ? 64
                                             : (unsigned)(units + 31) / 32 * 32;
}

/* An LL16 kernel's handle, with what the host knows worked out here: a
 * single part's share (its 64-bit arithmetic in one thread delayed every
 * call) and the call's fingerprint (dk: a GPURMA_DCOLL__K_* kind). */
static inline gpurma_dev_coll_t gpurma_coll_ll16_handle(const gpurma_dev_coll_t *c, unsigned parts,
                                                        int dk, size_t count, int dtype, int op,
                                                        int root)
{
    gpurma_dev_coll_t h = parts == 1 ? gpurma_dev_coll_part(*c, 0, 1) : *c;
    gpurma_dcoll__set_call(&h, dk, count, (gpurma_dtype_t)dtype, (gpurma_redop_t)op, root);
    return h;
}

/* What an LL16 kernel starts from, worked out on the host: part 0's epoch
 * word in this member's window, the bytes from one part's word to the
 * next, and for a call of one part the piece's bytes and whether this
 * member sends from send at all (a broadcast's root alone does). */
typedef struct {
    uint64_t *word0;
    size_t    word_step, bytes;
    int       sends;
} gpurma_coll_ll16_first_t;

/* *f for a call of count elements of es bytes (the largest block for
 * alltoallv) in parts on channel 0's handle c; 0 when LL16 cannot take the
 * call, which the kernels do not check (gpurma_dcoll__ll16_fits: a store
 * through a null or foreign base there). */
static inline int gpurma_coll_ll16_first(const gpurma_dev_coll_t *c, unsigned parts,
                                         const gpurma_dcoll__ll16_bases_t *ll16, size_t count,
                                         size_t es, int sends, gpurma_coll_ll16_first_t *f)
{
    const gpurma_dev_coll_t part0 = gpurma_dev_coll_part(*c, 0, parts);
    if (!parts || part0.nparts != parts || !es ||
        !gpurma_dcoll__ll16_fits(&part0, ll16, count, es))
        return 0;
    f->word0 = gpurma_dcoll__ll16_word(&part0, ll16);
    f->word_step = gpurma_dcoll__state_bytes(c->size);
    f->bytes = count * es; /* a part's share when there is one part: all */
    f->sends = sends;
    return 1;
}

/* What an LL16 kernel does first: claims part blockIdx.x's region (its
 * epoch word from f), after this thread's first unit of send went out as
 * a load (pre, when the kernel knows it: has_pre). */
static __device__ __forceinline__ gpurma_dcoll__ll16_early_t
gpurma_coll_ll16_early(const gpurma_coll_ll16_first_t *f, const gpurma_dcoll__grp_t *g,
                       int has_pre, uint64_t pre)
{
    gpurma_dcoll__ll16_early_t early;
    early.has_pre = has_pre, early.pre = pre;
    early.word = (uint64_t *)(void *)((char *)f->word0 + (size_t)blockIdx.x * f->word_step);
    early.got = gpurma_dcoll__ll16_claim(g, early.word);
    return early;
}

/* coll_kernels_ll16.cu: launches the LL16 kernel of collective `kind` (a
 * GPURMA_COLL_* kind); GPURMA_ERR_UNSUPPORTED, launching nothing, for a
 * kind LL16 has no kernel for. */
extern "C" int gpurma_coll_launch_ll16(void *stream, const gpurma_dev_coll_t *c, unsigned parts,
                                       int kind, void *recv, const void *send, size_t count,
                                       int dtype, int op, int root,
                                       const gpurma_dcoll__ll16_bases_t *ll16);

/* Each kernel file's part of gpurma_coll_preload_kernels. */
extern "C" int gpurma_coll_preload_ll16(void);
extern "C" int gpurma_coll_preload_v(void);
extern "C" int gpurma_coll_preload_direct(void);

#endif
