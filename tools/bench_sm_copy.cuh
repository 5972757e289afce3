/*
 * bench_sm_copy.cuh - the plain SM copy kernel that gpurma-bench --gpu
 * (tools/gpurma_bench_gpu.cu) and gpurma-coll-bench --gpu
 * (tools/gpurma_coll_bench_floors.cu) time as the bandwidth peak of a
 * peer: 16-byte loads and stores through the peer's mapped window, nothing
 * else, so both tools measure the same ceiling the same way.
 */
#ifndef GPURMA_BENCH_SM_COPY_CUH
#define GPURMA_BENCH_SM_COPY_CUH

#include <cstddef>

#include <cuda_runtime.h>

enum { BENCH_SM_COPY_THREADS = 512 };

/* Block b copies bytes [b * slice, (b + 1) * slice) of n; n and slice are
 * multiples of 16 and both buffers 16-byte aligned. */
static __global__ void bench_sm_copy(char *dst, const char *src, size_t n, size_t slice)
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

/* The grid for n bytes: blocks of 64 KiB or more each (fewer, longer
 * blocks keep stores in flight), at most 4 per SM; slices 16-byte aligned. */
static inline void bench_sm_copy_grid(size_t n, int nsm, unsigned *blocks, size_t *slice)
{
    size_t b = n / (64 * 1024);
    size_t maxb = (size_t)nsm * 4;
    b = b < 1 ? 1 : b > maxb ? maxb : b;
    *slice = ((n + b - 1) / b + 15) / 16 * 16;
    *blocks = (unsigned)((n + *slice - 1) / *slice);
}

#endif
