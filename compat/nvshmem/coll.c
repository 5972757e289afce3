/*
 * coll.c - NVSHMEM host and on-stream collectives through gpurma's
 * collectives (gpurma_coll.h).
 */
#include "checked.h"
#include "gpurma_coll.h"
#include "gpurma_device.h"
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
    /* Both buffers must be symmetric and lie in the heap whole: one block
     * of count elements, or one per member (source of reducescatter and
     * alltoall, dest of fcollect and alltoall). */
    size_t esize = gpurma_dev_dtype_size(dt), block, src_bytes, dst_bytes;
    size_t n = (size_t)gpurma_team_size(t);
    int src_per_member = kind == GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER ||
                         kind == GPURMA_NVSHMEMI_COLL_ALLTOALL;
    int dst_per_member = kind == GPURMA_NVSHMEMI_COLL_ALLGATHER ||
                         kind == GPURMA_NVSHMEMI_COLL_ALLTOALL;
    if (!esize || gpurma_size_mul(count, esize, &block) ||
        gpurma_size_mul(block, src_per_member ? n : 1, &src_bytes) ||
        gpurma_size_mul(block, dst_per_member ? n : 1, &dst_bytes))
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG, "the element count overflows");
    (void)gpurma_nvshmemi_heap_offset(call, source, src_bytes, NULL);
    (void)gpurma_nvshmemi_heap_offset(call, dest, dst_bytes, NULL);
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
