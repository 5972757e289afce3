/*
 * coll_kernels_direct.cu - the zero-copy collectives' kernel (coll_direct.h,
 * algo_direct.c): peers read and write the registered user buffers in
 * place.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"
#include "gpurma/detail/coll_direct.h"

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

extern "C" int gpurma_coll_preload_direct(void)
{
    return gpurma_gpu_load("loading the zero-copy collectives' kernel", gpurma_k_coll_direct);
}
