/*
 * coll_ring.h - allreduce along a pipelined chain in rank order
 * (each member talks to its two neighbours: for members on several
 * nodes).
 * Part of gpurma_coll_device.h (include that); compiles as CUDA, HIP and
 * plain C. Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_RING_H
#define GPURMA_DETAIL_COLL_RING_H

#include "gpurma/detail/coll_proto.h"

/* allreduce along a chain in rank order, for members on several nodes:
 * each member talks only to its neighbours. Per step: rank 0 sends its
 * piece to 1, rank r adds its own and passes the partial result on, rank
 * n-1 finishes it and sends it to 0, which passes it along 0, 1, ..., n-2.
 * Steps pipeline: rank 0 starts the next piece while later ranks work on
 * this one, so each link carries the data about twice in all. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__allreduce_ring(const gpurma_dev_coll_t *c,
                                                           const gpurma_dcoll__grp_t *g,
                                                           void *recv, const void *send,
                                                           size_t count, gpurma_dtype_t dtype,
                                                           gpurma_redop_t op, int ll)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, count, dtype, op, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dcoll__begin(c, g);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const int n = c->size, me = c->rank, last = n - 1;
    const size_t es = gpurma_dev_dtype_size(dtype);
    size_t lo, len_all;
    gpurma_dcoll__share(c, count, &lo, &len_all);
    send = (const char *)send + lo * es, recv = (char *)recv + lo * es;
    const size_t total = len_all * es;
    const size_t step = gpurma_dcoll__step_bytes(c, ll, es);
    uint64_t e = gpurma_dcoll__epoch(c);
    /* One step of empty pieces when count is 0 (coll_proto.h, send). */
    for (size_t off = 0, first = 1; (first || off < total) && rc == GPURMA_SUCCESS;
         off += step, first = 0) {
        size_t len = total - off < step ? total - off : step;
        char *out = (char *)recv + off;
        const char *in = (const char *)send + off;
        const char *d = 0;
        e++; /* reduce along 0 -> n-1 */
        if (n == 1) {
            gpurma_dev_reduce_coop(out, in, in, 0, 1, len / es, dtype, op, 1, g->tid,
                                   g->nthreads);
        } else if (me == 0) {
            rc = gpurma_dcoll__send(c, g, 1, in, len, e, ll);
        } else {
            rc = gpurma_dcoll__recv(c, g, me - 1, len, e, ll, &d);
            if (rc == GPURMA_SUCCESS) {
                gpurma_dcoll__sync(g);
                gpurma_dev_reduce_coop(out, d, in, 0, 2, len / es, dtype, op,
                                       me == last ? (unsigned)n : 0, g->tid, g->nthreads);
                rc = gpurma_dcoll__consumed(c, g, me - 1, e);
            }
            if (rc == GPURMA_SUCCESS && me != last)
                rc = gpurma_dcoll__send(c, g, me + 1, out, len, e, ll);
        }
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__flush(c, g);
        e++; /* result along n-1 -> 0 -> 1 -> ... -> n-2 */
        if (rc != GPURMA_SUCCESS || n == 1)
            continue;
        int prev = me == 0 ? last : me - 1, next = me == last ? 0 : me + 1;
        if (me != last) {
            rc = gpurma_dcoll__recv(c, g, prev, len, e, ll, &d);
            if (rc == GPURMA_SUCCESS) {
                gpurma_sh_copy(out, d, len, g->tid, g->nthreads);
                rc = gpurma_dcoll__consumed(c, g, prev, e);
            }
        }
        if (rc == GPURMA_SUCCESS && next != last)
            rc = gpurma_dcoll__send(c, g, next, out, len, e, ll);
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__flush(c, g);
    }
    return gpurma_dcoll__finish(c, g, e, rc);
}

#endif
