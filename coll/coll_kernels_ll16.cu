/*
 * coll_kernels_ll16.cu - LL16 (coll_ll16.h) in a kernel of its own, one
 * per collective: small collectives are bound by latency, and a kernel
 * that holds only the code it runs spends no time fetching instructions of
 * the others. It uses no stack (each thread's stage of one unit per source
 * is in shared memory, stride blockDim.x), takes every member's window as
 * mapped here by value (__grid_constant__: read in place, no table read
 * before the first packet), and is launched only for calls the host saw
 * LL16 can take (one node, the parts its slots need), so a declined call
 * here is a broken promise: an error. What the host knows is worked out
 * there (gpurma_coll_ll16_handle), and so is whether LL16 can take the
 * call (gpurma_dcoll__ll16_fits): the kernel starts on its packets with
 * neither check. Its first instructions put the two memory round trips
 * every call waits on before its first packet (the channel's epoch, the
 * first unit of send) in flight together, from addresses the host worked
 * out (gpurma_coll_ll16_first_t), before the handle's fields are read.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

template <int KIND>
__global__ void __launch_bounds__(GPURMA_COLL_LL16_THREADS)
gpurma_k_coll_ll16(gpurma_dev_coll_t c, const __grid_constant__ gpurma_dcoll__ll16_bases_t b,
                   gpurma_coll_ll16_first_t f, void *recv, const void *send, size_t count,
                   int dtype, int op, int root)
{
    extern __shared__ uint64_t gpurma_k_ll16_stage[];
    const gpurma_dcoll__grp_t g = {threadIdx.x, blockDim.x, 2};
    const int one = gridDim.x == 1;
    const gpurma_dcoll__ll16_early_t early = gpurma_coll_ll16_early(
        &f, &g, one,
        one ? gpurma_dcoll__ll16_first_unit(KIND, f.sends, (const char *)send, f.bytes, g.tid) : 0);
    if (gridDim.x > 1)
        c = gpurma_dev_coll_part(c, blockIdx.x, gridDim.x);
    gpurma_status_t rc = gpurma_dcoll__run_ll16_staged(
        &c, &b, &g, KIND, recv, send, count, (gpurma_dtype_t)dtype, (gpurma_redop_t)op, root,
        gpurma_k_ll16_stage + threadIdx.x, blockDim.x, &early);
    if (rc == GPURMA_DCOLL__DECLINED)
        rc = GPURMA_ERR_INTERNAL;
    if (rc != GPURMA_SUCCESS)
        gpurma_k_coll_fail(c, " (ll16)", KIND, rc);
}

extern "C" int gpurma_coll_preload_ll16(void)
{
    return gpurma_gpu_load("loading the collectives' LL16 kernels",
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_ALLREDUCE>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_ALLGATHER>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_REDUCE_SCATTER>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_ALLTOALL>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_BROADCAST>,
                           gpurma_k_coll_ll16<GPURMA_DCOLL__K_REDUCE>);
}

extern "C" int gpurma_coll_launch_ll16(void *stream, const gpurma_dev_coll_t *c, unsigned parts,
                                       int kind, void *recv, const void *send, size_t count,
                                       int dtype, int op, int root,
                                       const gpurma_dcoll__ll16_bases_t *ll16)
{
#define LL16(K, DK)                                                                            \
    case GPURMA_COLL_##K:                                                                      \
        return gpurma_gpu_launch_smem(                                                         \
            "collective kernel launch", gpurma_k_coll_ll16<DK>, parts, threads, stage, stream, \
            gpurma_coll_ll16_handle(c, parts, DK, count, dtype, op, root), *ll16, f, recv,     \
            send, count, dtype, op, root)
    const size_t es = gpurma_dev_dtype_size((gpurma_dtype_t)dtype);
    gpurma_coll_ll16_first_t f;
    if (!gpurma_coll_ll16_first(c, parts, ll16, count, es,
                                kind != GPURMA_COLL_BROADCAST || c->rank == root, &f))
        return gpurma_set_error(GPURMA_ERR_INTERNAL,
                                "rank %d: LL16 kernel: a call its slots or team cannot take "
                                "(%u parts, count %zu)",
                                c->rank, parts, count);
    const unsigned threads = gpurma_coll_ll16_threads(count, parts, es);
    const size_t stage = (size_t)c->size * threads * sizeof(uint64_t);
    switch (kind) {
        LL16(ALLREDUCE, GPURMA_DCOLL__K_ALLREDUCE);
        LL16(ALLGATHER, GPURMA_DCOLL__K_ALLGATHER);
        LL16(REDUCE_SCATTER, GPURMA_DCOLL__K_REDUCE_SCATTER);
        LL16(ALLTOALL, GPURMA_DCOLL__K_ALLTOALL);
        LL16(BROADCAST, GPURMA_DCOLL__K_BROADCAST);
        LL16(REDUCE, GPURMA_DCOLL__K_REDUCE);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
#undef LL16
}
