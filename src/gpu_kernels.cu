/*
 * gpu_kernels.cu - the kernels behind host-initiated operations on device
 * windows: a signal slot update and a 64-bit atomic, each one thread. They
 * use the same code as kernels calling the device API, so host and device
 * signals and atomics agree on memory order and atomicity.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cuda_runtime_api.h>

#include "gpurma_device.h"
extern "C" { /* the core's headers are C */
#include "gpu.h"
#include "gpurma_internal.h"
}

__global__ void gpurma_k_signal(gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                                uint64_t value)
{
    /* The data this signal announces was copied by an earlier, completed
     * operation of the same stream; the fence orders it for every observer. */
    gpurma_sh_fence_system();
    gpurma_dev__signal_slot(slot, origin, (gpurma_signal_op_t)op, value);
}

__global__ void gpurma_k_atomic(uint64_t *p, int kind, uint64_t value, uint64_t compare,
                                uint64_t *old_out)
{
    uint64_t prev;
    if (kind == GPURMA_DEV__ATOMIC_FETCH_ADD)
        prev = gpurma_sh_fetch_add_u64(p, value);
    else if (kind == GPURMA_DEV__ATOMIC_SWAP)
        prev = gpurma_sh_exchange_u64(p, value);
    else
        prev = gpurma_sh_cas_u64(p, compare, value);
    *(volatile uint64_t *)old_out = prev;
    gpurma_sh_fence_system();
}

static int launch_status(const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return GPURMA_SUCCESS;
    return gpurma_set_error(GPURMA_ERR_GPU, "%s kernel launch: %s", what, cudaGetErrorString(e));
}

/* With lazy module loading (the CUDA default), the first launch of a kernel
 * loads it, and loading waits for the kernels running on the device: a
 * first host signal to a user kernel spinning in wait_until would wait for
 * that kernel, forever. Load ours when the GPU is selected instead. */
extern "C" int gpurma_gpu_preload_kernels(void)
{
    cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, gpurma_k_signal) != cudaSuccess ||
        cudaFuncGetAttributes(&a, gpurma_k_atomic) != cudaSuccess)
        return launch_status("loading the library's");
    return GPURMA_SUCCESS;
}

extern "C" int gpurma_gpu_launch_signal(void *stream, gpurma_dev_signal_slot_t *slot,
                                        uint32_t origin, int op, uint64_t value)
{
    gpurma_k_signal<<<1, 1, 0, (cudaStream_t)stream>>>(slot, origin, op, value);
    return launch_status("signal");
}

extern "C" int gpurma_gpu_launch_atomic(void *stream, uint64_t *p, int kind, uint64_t value,
                                        uint64_t compare, uint64_t *old_out)
{
    uint64_t *dev_out = NULL;
    /* old_out is mapped pinned memory: the kernel writes it directly. */
    if (cudaHostGetDevicePointer((void **)&dev_out, old_out, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        dev_out = old_out; /* unified addressing: the host address works too */
    }
    gpurma_k_atomic<<<1, 1, 0, (cudaStream_t)stream>>>(p, kind, value, compare, dev_out);
    return launch_status("atomic");
}
