/*
 * coll.c - NVSHMEM host and on-stream collectives through gpurma's
 * collectives (gpurma_coll.h).
 */
#include "gpurma_coll.h"
#include "nvshmem_internal.h"

GPURMA_API int gpurma_nvshmemi_coll(const char *call, int kind, nvshmem_team_t team, void *dest,
                                    const void *source, size_t count, int dtype, int op,
                                    int root, void *stream)
{
    gpurma_team_t t = gpurma_nvshmemi_gteam(call, team);
    if (!stream && !gpurma_nvshmemi_lib.st.heap_host)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_UNSUPPORTED,
                             "a blocking collective on a GPU heap needs nvshmem.h compiled by "
                             "nvcc (it runs on the program's stream)");
    gpurma_dtype_t dt = (gpurma_dtype_t)dtype;
    gpurma_redop_t ro = (gpurma_redop_t)op;
    gpurma_status_t rc;
    switch (kind) {
    case GPURMA_NVSHMEMI_COLL_ALLREDUCE:
        rc = gpurma_allreduce(t, source, dest, count, dt, ro, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER:
        rc = gpurma_reduce_scatter(t, source, dest, count, dt, ro, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_BROADCAST:
        rc = gpurma_broadcast(t, source, dest, count, dt, root, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_ALLGATHER:
        rc = gpurma_allgather(t, source, dest, count, dt, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_ALLTOALL:
        rc = gpurma_alltoall(t, source, dest, count, dt, stream);
        break;
    default:
        rc = GPURMA_ERR_INVALID_ARG;
        break;
    }
    gpurma_nvshmemi_check_rc(call, rc);
    return 0;
}
