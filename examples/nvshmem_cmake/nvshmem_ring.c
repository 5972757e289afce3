/*
 * nvshmem_ring.c - an NVSHMEM host program: every PE puts its number into
 * the next PE's symmetric buffer and checks what the previous one sent.
 * On the host backend (no GPU) the same program runs on CPUs.
 *
 *   mpirun -np 4 ./nvshmem_ring
 */
#include <stdio.h>

#include <nvshmem.h>
#include <nvshmemx.h>

int main(void)
{
    nvshmem_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    long *inbox = (long *)nvshmem_malloc(sizeof(long));
    uint64_t *flag = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    long mine = 100 + me;
    nvshmem_long_put_signal(inbox, &mine, 1, flag, 1, NVSHMEM_SIGNAL_SET, (me + 1) % n);
    nvshmem_signal_wait_until(flag, NVSHMEM_CMP_EQ, 1);
    int ok = *inbox == 100 + (me + n - 1) % n;
    printf("PE %d of %d got %ld: %s\n", me, n, *inbox, ok ? "ok" : "WRONG");
    nvshmem_barrier_all();
    nvshmem_free(flag);
    nvshmem_free(inbox);
    nvshmem_finalize();
    return ok ? 0 : 1;
}
