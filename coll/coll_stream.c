/*
 * coll_stream.c - the collectives on a CUDA stream: one kernel, one block
 * per part, runs the device collective of gpurma_coll_device.h on the
 * team's GPU scratch window, enqueued without host synchronization, so the
 * call can be captured in a CUDA graph (the epochs live in the window, on
 * the GPU).
 * The kernels are in coll_kernels*.cu (CUDA builds). alltoallv's counts and
 * displacements (host arrays) are copied into its kernel's arguments.
 */
#include "config.h"

#include "coll_internal.h"
#include "gpu.h"
#include "gpurma_internal.h"

int gpurma_coll_stream_run(const coll_call_t *a, const gpurma_dev_coll_t *c,
                           const gpurma_dcoll__ll16_bases_t *ll16, gpurma_coll_algo_t algo,
                           unsigned parts)
{
#ifdef HAVE_CUDA
    int rc = gpurma_gpu_stream_begin(a->team->ctx->device, a->stream);
    if (rc)
        return rc;
    if (a->kind == GPURMA_COLL_ALLTOALLV) {
        if (a->team->size > GPURMA_COLL_V_MAX_RANKS)
            return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                    "rank %d: alltoallv on a stream takes teams of at most %d "
                                    "ranks (this one has %d); use stream NULL",
                                    a->team->ctx->rank, GPURMA_COLL_V_MAX_RANKS, a->team->size);
        return gpurma_coll_launch_v(a->stream, c, parts, a->recv, a->send, a->send_counts,
                                    a->send_displs, a->recv_counts, a->recv_displs, a->max_count,
                                    (int)a->dtype, (int)algo, ll16);
    }
    return gpurma_coll_launch(a->stream, c, parts, (int)a->kind, a->recv, a->send, a->count,
                              (int)a->dtype, (int)a->op, a->root, (int)algo, ll16);
#else
    (void)c, (void)ll16, (void)algo, (void)parts;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "rank %d: collectives on a stream need a build with CUDA",
                            a->team->ctx->rank);
#endif
}
