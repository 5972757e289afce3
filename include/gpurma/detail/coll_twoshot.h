/*
 * coll_twoshot.h - allreduce in two shots: reduce-scatter, then
 * allgather of the reduced parts.
 * Part of gpurma_coll_device.h (include that); compiles as CUDA, HIP and
 * plain C. Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_TWOSHOT_H
#define GPURMA_DETAIL_COLL_TWOSHOT_H

#include "gpurma/detail/coll_proto.h"

/* allreduce in two shots per step: the step's piece is cut into n parts,
 * part r reduced by rank r (reduce-scatter), then sent to everyone
 * (allgather). Each part is reduced in rank order by one rank. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__allreduce_twoshot(const gpurma_dev_coll_t *c,
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
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype);
    size_t lo, len_all;
    gpurma_dcoll__share(c, count, &lo, &len_all);
    send = (const char *)send + lo * es, recv = (char *)recv + lo * es;
    const size_t total = len_all * es;
    const size_t part_max = gpurma_dcoll__step_bytes(c, ll, es);
    uint64_t e = gpurma_dcoll__epoch(c);
    size_t off = 0;
    /* One round of empty parts when count is 0: a member passing 0 meets
     * its peers' fingerprints (coll_proto.h, send). */
    for (int first = 1; (first || off < total) && rc == GPURMA_SUCCESS; first = 0) {
        /* Parts of whole elements, at most part_max bytes each. */
        size_t left = (total - off) / es;
        size_t per = left / (size_t)n + (left % (size_t)n != 0);
        if (per * es > part_max)
            per = part_max / es;
        size_t step = per * es * (size_t)n;
        if (step > total - off)
            step = total - off;
#define GPURMA_DCOLL__PART(r, at, len)                                                         \
    size_t at = (size_t)(r) * per * es, len = at < step ? (step - at < per * es ? step - at   \
                                                                                : per * es)   \
                                                        : 0
        e++; /* reduce-scatter */
        for (int i = 0; i < n && rc == GPURMA_SUCCESS; i++) {
            int p = (me + i) % n;
            GPURMA_DCOLL__PART(p, at, len);
            rc = gpurma_dcoll__send(c, g, p, (const char *)send + off + at, len, e, ll);
        }
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__flush(c, g);
        GPURMA_DCOLL__PART(me, my_at, my_len);
        char *mine = (char *)recv + off + my_at;
        rc = gpurma_dcoll__recv_reduce(c, g, mine, my_len, e, ll, dtype, op);
        if (rc != GPURMA_SUCCESS)
            break;
        gpurma_dcoll__sync(g);
        e++; /* allgather of the reduced parts */
        for (int i = 1; i < n && rc == GPURMA_SUCCESS; i++)
            rc = gpurma_dcoll__send(c, g, (me + i) % n, mine, my_len, e, ll);
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__flush(c, g);
        for (int i = 1; i < n && rc == GPURMA_SUCCESS; i++) {
            int src = (me + n - i) % n;
            GPURMA_DCOLL__PART(src, at, len);
            const char *d = 0;
            rc = gpurma_dcoll__recv(c, g, src, len, e, ll, &d);
            if (rc == GPURMA_SUCCESS) {
                gpurma_sh_copy((char *)recv + off + at, d, len, g->tid, g->nthreads);
                rc = gpurma_dcoll__consumed(c, g, src, e);
            }
        }
#undef GPURMA_DCOLL__PART
        off += step;
    }
    return gpurma_dcoll__finish(c, g, e, rc);
}

#endif
