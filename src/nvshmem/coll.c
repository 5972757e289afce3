/*
 * coll.c - NVSHMEM collectives through gpurma's collectives (gpurma_coll.h).
 *
 * gpurma_coll.h's calls are referenced weakly: a libgpurma built before
 * the collectives landed (issue 11) still loads this library, and a
 * collective then ends the job with a message naming the call instead of
 * failing to link every NVSHMEM program.
 */
#include "gpurma_coll.h"
#include "nvshmem_internal.h"

#pragma weak gpurma_allreduce
#pragma weak gpurma_reduce_scatter
#pragma weak gpurma_broadcast
#pragma weak gpurma_allgather
#pragma weak gpurma_alltoall

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
    gpurma_status_t rc = GPURMA_ERR_UNSUPPORTED;
    int have = 0;
    switch (kind) {
    case GPURMA_NVSHMEMI_COLL_ALLREDUCE:
        if ((have = gpurma_allreduce != NULL))
            rc = gpurma_allreduce(t, source, dest, count, dt, ro, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER:
        if ((have = gpurma_reduce_scatter != NULL))
            rc = gpurma_reduce_scatter(t, source, dest, count, dt, ro, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_BROADCAST:
        if ((have = gpurma_broadcast != NULL))
            rc = gpurma_broadcast(t, source, dest, count, dt, root, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_ALLGATHER:
        if ((have = gpurma_allgather != NULL))
            rc = gpurma_allgather(t, source, dest, count, dt, stream);
        break;
    case GPURMA_NVSHMEMI_COLL_ALLTOALL:
        if ((have = gpurma_alltoall != NULL))
            rc = gpurma_alltoall(t, source, dest, count, dt, stream);
        break;
    default:
        rc = GPURMA_ERR_INVALID_ARG;
        have = 1;
        break;
    }
    if (!have)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_UNSUPPORTED,
                             "this libgpurma has no collectives (gpurma_coll.h, issue 11)");
    gpurma_nvshmemi_check_rc(call, rc);
    return 0;
}
