/*
 * coll_kernels.cu - the collectives on a stream, as kernels: the dispatch
 * between the kernel families (coll_kernels.h: a generic kernel per
 * collective, LL16, alltoallv, zero-copy) and their loading. Everything a
 * kernel needs is in its arguments (by value) and in the team's GPU
 * scratch window (the epochs), so a captured graph replays it as it is. A
 * collective that fails on the GPU (a peer that never came: the wait timed
 * out) stops the kernel with a trap, after a message; the stream then
 * reports the error, as the stream waits of rma/ do.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

/* The generic kernels, by collective (gpurma_coll_kind_t order). */
static const struct {
    gpurma_coll_launch_fn *launch;
    int (*preload)(void);
} generic[] = {
    {gpurma_coll_launch_allreduce, gpurma_coll_preload_allreduce},
    {gpurma_coll_launch_allgather, gpurma_coll_preload_allgather},
    {gpurma_coll_launch_reduce_scatter, gpurma_coll_preload_reduce_scatter},
    {gpurma_coll_launch_broadcast, gpurma_coll_preload_broadcast},
    {gpurma_coll_launch_reduce, gpurma_coll_preload_reduce},
    {gpurma_coll_launch_alltoall, gpurma_coll_preload_alltoall},
};
static_assert(sizeof(generic) / sizeof(generic[0]) == GPURMA_COLL_ALLTOALLV,
              "a generic kernel for every collective but alltoallv");

extern "C" int gpurma_coll_preload_kernels(void)
{
    int rc = GPURMA_SUCCESS;
    for (size_t k = 0; k < sizeof(generic) / sizeof(generic[0]) && rc == GPURMA_SUCCESS; k++)
        rc = generic[k].preload();
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_coll_preload_ll16();
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_coll_preload_v();
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_coll_preload_direct();
    return rc;
}

extern "C" int gpurma_coll_launch(void *stream, const gpurma_dev_coll_t *c, unsigned parts,
                                  int kind, void *recv, const void *send, size_t count, int dtype,
                                  int op, int root, int algo,
                                  const gpurma_dcoll__ll16_bases_t *ll16)
{
    if (kind < 0 || kind >= GPURMA_COLL_ALLTOALLV)
        return gpurma_set_error(GPURMA_ERR_INTERNAL, "collective kernel: kind %d", kind);
    const size_t es = gpurma_dev_dtype_size((gpurma_dtype_t)dtype);
    if (gpurma_coll_ll16_runs(c, parts, algo, count * es, ll16)) {
        int rc = gpurma_coll_launch_ll16(stream, c, parts, kind, recv, send, count, dtype, op,
                                         root, ll16);
        if (rc != GPURMA_ERR_UNSUPPORTED)
            return rc;
    }
    return generic[kind].launch(stream, c, parts, recv, send, count, dtype, op, root, algo);
}
