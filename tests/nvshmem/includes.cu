/*
 * includes.cu - a program that compiles against NVSHMEM 3.4 relying on
 * what nvshmem.h brings in (issue 17 item 3): the CUDA runtime and driver
 * API (cuMemCreate and its types, as NVSHMEM's perftest helpers use them),
 * assert, bool, the fixed-width and size types, half and bfloat16, stdio,
 * stdlib, string, limits and errno, with no include of its own. `make
 * check` compiles it (no GPU needed); it is never run.
 */
#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void uses_device_types(half *h, __nv_bfloat16 *b, uint64_t *sig)
{
    bool first = threadIdx.x == 0;
    if (first) {
        h[0] = __float2half(1.0f);
        b[0] = __float2bfloat16(2.0f);
        nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_ADD, (nvshmem_my_pe() + 1) % nvshmem_n_pes());
    }
}

int main(int argc, char **argv)
{
    (void)argv;
    assert(argc >= 1);
    int8_t i8 = INT8_MAX;
    uint32_t u32 = UINT32_MAX;
    size_t bytes = (size_t)1 << 21;
    ptrdiff_t d = 0;
    bool ok = i8 > 0 && u32 > 0 && d == 0 && INT_MAX > 0 && errno >= 0;
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle handle;
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long) = cuMemCreate;
    cudaStream_t stream = NULL;
    char *copy = (char *)malloc(16);
    if (!ok || !copy || !create || (argc > 99 && create(&handle, bytes, &prop, 0) != CUDA_SUCCESS))
        printf("unreachable %p\n", (void *)stream);
    free(copy);
    return 0;
}
