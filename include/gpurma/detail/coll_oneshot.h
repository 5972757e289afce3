/*
 * coll_oneshot.h - the oneshot algorithms (everything to everyone
 * in one step per piece, with LL packets or with puts and signals):
 * allgather, alltoall(v), broadcast, reduce, reduce-scatter, allreduce.
 * Part of gpurma_coll_device.h (include that); compiles as CUDA, HIP and
 * plain C. Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_ONESHOT_H
#define GPURMA_DETAIL_COLL_ONESHOT_H

#include "gpurma/detail/coll_proto.h"

/* Every pattern below is one of two shapes per step: a member sends a
 * piece to a set of peers and receives a piece from a set of sources. */

/* Where each peer's block lies, in elements: allgather (scatter 0, no
 * arrays): send whole, recv[r * count]; alltoall (scatter 1): send[p *
 * count], recv[r * count]; alltoallv (arrays): counts and displacements. */
typedef struct {
    size_t count;
    int    scatter;
    const size_t *send_counts, *send_displs, *recv_counts, *recv_displs;
} gpurma_dcoll__layout_t;

/* Where this part of block r lies, in bytes. */
GPURMA_DEVICE void gpurma_dcoll__block(const gpurma_dev_coll_t *c, const gpurma_dcoll__layout_t *l,
                                       int send, int r, size_t es, size_t *at, size_t *bytes)
{
    size_t first, count, lo, len;
    if (l->send_counts) {
        first = send ? l->send_displs[r] : l->recv_displs[r];
        count = send ? l->send_counts[r] : l->recv_counts[r];
    } else {
        count = l->count;
        first = send && !l->scatter ? 0 : (size_t)r * count;
    }
    gpurma_dcoll__share(c, count, &lo, &len);
    *at = (first + lo) * es;
    *bytes = len * es;
}

/* The exchanges: piece [off, off + step) of this part of every block per
 * step, for off below this part of max_count (the largest block of any
 * member, the same everywhere), rounded up; one step of empty pieces when
 * max_count is 0, so that a member passing 0 meets its peers' fingerprints
 * (coll_proto.h, send). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__exchange(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, void *recv,
                                                     const void *send,
                                                     const gpurma_dcoll__layout_t *l,
                                                     size_t max_count, gpurma_dtype_t dtype,
                                                     int ll)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, max_count, dtype, GPURMA_SUM, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dcoll__begin(c, g);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype);
    const size_t max_bytes = gpurma_sh_div_ceil(max_count, c->nparts) * es;
    const size_t step = gpurma_dcoll__step_bytes(c, ll, es);
    uint64_t e = gpurma_dcoll__epoch(c);
    for (size_t off = 0, first = 1; (first || off < max_bytes) && rc == GPURMA_SUCCESS;
         off += step, first = 0) {
        e++;
        size_t at, bytes, len;
#define GPURMA_DCOLL__PIECE() len = bytes > off ? (bytes - off < step ? bytes - off : step) : 0
        for (int i = 0; i < n && rc == GPURMA_SUCCESS; i++) {
            int p = (me + i) % n;
            gpurma_dcoll__block(c, l, 1, p, es, &at, &bytes);
            GPURMA_DCOLL__PIECE();
            rc = gpurma_dcoll__send(c, g, p, (const char *)send + at + off, len, e, ll);
        }
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__flush(c, g);
        for (int i = 0; i < n && rc == GPURMA_SUCCESS; i++) {
            int src = (me + n - i) % n;
            const char *d = 0;
            gpurma_dcoll__block(c, l, 0, src, es, &at, &bytes);
            GPURMA_DCOLL__PIECE();
            rc = gpurma_dcoll__recv(c, g, src, len, e, ll, &d);
            if (rc == GPURMA_SUCCESS) {
                gpurma_sh_copy((char *)recv + at + off, d, len, g->tid, g->nthreads);
                rc = gpurma_dcoll__consumed(c, g, src, e);
            }
        }
#undef GPURMA_DCOLL__PIECE
    }
    return gpurma_dcoll__finish(c, g, e, rc);
}

/* broadcast: recv = send of root (root's recv too).
 * In the first step every member also sends every other an empty piece
 * (its fingerprint only), so each member compares its arguments with
 * every other member's: when any member passed another count, dtype or
 * root (or another collective), every member fails, the ones that match
 * the root included, and the root learns it without an acknowledgement
 * round at the end. That costs n - 1 fingerprint packets per member in
 * the first step, sent at once with the root's data (no round trip is
 * added: the receivers wait for them while the data travels); the other
 * way, the root waiting for every receiver's fingerprint before sending,
 * would put a second one-way trip before every broadcast's data. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__broadcast(const gpurma_dev_coll_t *c,
                                                      const gpurma_dcoll__grp_t *g, void *recv,
                                                      const void *send, size_t count,
                                                      gpurma_dtype_t dtype, int root, int ll)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, count, dtype, GPURMA_SUM, root);
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
    const size_t step = gpurma_dcoll__step_bytes(c, ll, es);
    uint64_t e = gpurma_dcoll__epoch(c);
    for (size_t off = 0, first = 1; (first || off < total) && rc == GPURMA_SUCCESS;
         off += step, first = 0) {
        const size_t len = total - off < step ? total - off : step;
        e++;
        if (me == root || first) {
            for (int i = 1; i < n && rc == GPURMA_SUCCESS; i++)
                rc = gpurma_dcoll__send(c, g, (me + i) % n,
                                        me == root ? (const char *)send + off : 0,
                                        me == root ? len : 0, e, ll);
            if (rc == GPURMA_SUCCESS)
                rc = gpurma_dcoll__flush(c, g);
        }
        /* The root's piece first, then (first step) the others' prints. */
        for (int i = 0; i < n && rc == GPURMA_SUCCESS; i++) {
            const int src = (root + i) % n;
            if (src == me || (src != root && !first))
                continue;
            const size_t got = src == root ? len : 0;
            const char *d = 0;
            rc = gpurma_dcoll__recv(c, g, src, got, e, ll, &d);
            if (rc == GPURMA_SUCCESS) {
                gpurma_sh_copy((char *)recv + off, d, got, g->tid, g->nthreads);
                rc = gpurma_dcoll__consumed(c, g, src, e);
            }
        }
        if (me == root && rc == GPURMA_SUCCESS) {
            gpurma_sh_copy((char *)recv + off, (const char *)send + off, len, g->tid,
                           g->nthreads);
            gpurma_dcoll__sync(g);
        }
    }
    return gpurma_dcoll__finish(c, g, e, rc);
}

/* Reductions with every contribution sent to the reducer: kind 0 reduce
 * (to root), 1 allreduce (to everyone), 2 reduce-scatter (block r to r). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__reduce_push(const gpurma_dev_coll_t *c,
                                                        const gpurma_dcoll__grp_t *g, void *recv,
                                                        const void *send, size_t count,
                                                        gpurma_dtype_t dtype, gpurma_redop_t op,
                                                        int root, int kind, int ll)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, count, dtype, op, root);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dcoll__begin(c, g);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype), block = count * es;
    size_t lo, len_all;
    gpurma_dcoll__share(c, count, &lo, &len_all);
    send = (const char *)send + lo * es, recv = (char *)recv + lo * es;
    const size_t total = len_all * es;
    const size_t step = gpurma_dcoll__step_bytes(c, ll, es);
    uint64_t e = gpurma_dcoll__epoch(c);
    /* One step of empty pieces when count is 0 (see exchange). */
    for (size_t off = 0, first = 1; (first || off < total) && rc == GPURMA_SUCCESS;
         off += step, first = 0) {
        size_t len = total - off < step ? total - off : step;
        e++;
        for (int i = 0; i < n && rc == GPURMA_SUCCESS; i++) {
            int p = (me + i) % n;
            if (kind == 0 && p != root)
                continue;
            const char *s = (const char *)send + (kind == 2 ? (size_t)p * block : 0) + off;
            rc = gpurma_dcoll__send(c, g, p, s, len, e, ll);
        }
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__flush(c, g);
        if (kind == 0 && me != root)
            continue;
        rc = gpurma_dcoll__recv_reduce(c, g, (char *)recv + off, len, e, ll, dtype, op);
    }
    /* A reduce's other members receive nothing: they learn that the root
     * took their pieces as this call's from its last acknowledgement. */
    if (kind == 0 && me != root && rc == GPURMA_SUCCESS)
        rc = gpurma_dcoll__await_consumed(c, g, root, e);
    return gpurma_dcoll__finish(c, g, e, rc);
}

#endif
