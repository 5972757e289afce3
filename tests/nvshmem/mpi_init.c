/*
 * mpi_init.c - an MPI program that hands NVSHMEM a communicator
 * (nvshmemx_init_attr with NVSHMEMX_INIT_WITH_MPI_COMM): the PEs are the
 * communicator's ranks, checked by a ring shift with nvshmem_p and against
 * MPI's own view (a duplicate of MPI_COMM_WORLD), and MPI keeps working
 * beside it.
 */
#include <mpi.h>

#include "nvtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nv_name = "mpi_init";
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    attr.mpi_comm = &comm;
    setenv("NVSHMEM_SYMMETRIC_SIZE", "8M", 0);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr) != NVSHMEMX_SUCCESS) {
        fprintf(stderr, "FAIL mpi_init: rank %d: nvshmemx_init_attr(MPI_COMM)\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    NV_ASSERT(me == rank && npes == size, "PE %d of %d, MPI rank %d of %d", me, npes, rank, size);
    int *slot = (int *)nvshmem_malloc(sizeof(int));
    *slot = -1;
    nvshmem_barrier_all();
    nvshmem_int_p(slot, 700 + me, (me + 1) % npes);
    nvshmem_barrier_all();
    NV_ASSERT(*slot == 700 + (me + npes - 1) % npes, "ring shift got %d", *slot);
    /* MPI still works beside NVSHMEM */
    int sum = 0;
    MPI_Allreduce(slot, &sum, 1, MPI_INT, MPI_SUM, comm);
    NV_ASSERT(sum == 700 * npes + npes * (npes - 1) / 2, "MPI_Allreduce beside NVSHMEM: %d", sum);
    nvshmem_free(slot);
    nv_finish();
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
