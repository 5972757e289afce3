/*
 * nvshmem_ring.cu - the ring of nvshmem_ring.c with the put in a kernel;
 * init before cudaSetDevice, the device from the node rank. Exits 77
 * without a GPU.
 */
#include <stdio.h>

#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void ring(long *inbox, uint64_t *flag)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_long_p(inbox, 100 + me, (me + 1) % n);
    nvshmem_fence();
    nvshmemx_signal_op(flag, 1, NVSHMEM_SIGNAL_SET, (me + 1) % n);
    nvshmem_signal_wait_until(flag, NVSHMEM_CMP_EQ, 1);
}

int main(void)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("no GPU: skipped\n");
        return 77;
    }
    nvshmem_init();
    cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % ndev);
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    long *inbox = (long *)nvshmem_malloc(sizeof(long)), got = 0;
    uint64_t *flag = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    ring<<<1, 1>>>(inbox, flag);
    cudaDeviceSynchronize();
    cudaMemcpy(&got, inbox, sizeof got, cudaMemcpyDeviceToHost);
    int ok = got == 100 + (me + n - 1) % n;
    printf("PE %d of %d got %ld: %s\n", me, n, got, ok ? "ok" : "WRONG");
    nvshmem_barrier_all();
    nvshmem_free(flag);
    nvshmem_free(inbox);
    nvshmem_finalize();
    return ok ? 0 : 1;
}
