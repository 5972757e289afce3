/*
 * gpu_module.cu - a shared object gpu_ring loads with dlopen after
 * nvshmem_init: its unit registers then, and the library must fill its
 * state at once for its kernel to work.
 */
#include <nvshmem.h>

static __global__ void module_ring(int *dst)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(dst, 5000 + me, (me + 1) % n);
    nvshmem_quiet();
}

extern "C" __attribute__((visibility("default"))) int gpu_module_ring(int *dst)
{
    module_ring<<<1, 1>>>(dst);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}
