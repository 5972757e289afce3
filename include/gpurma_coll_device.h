/*
 * gpurma_coll_device.h - collectives callable inside kernels (and, compiled
 * as plain C, from CPU threads on the host backend): barrier, broadcast,
 * allgather (fcollect), alltoall, reduce, reduce-scatter and allreduce over
 * a team, at thread scope (plain), and on a GPU at warp (_warp) and block
 * (_block) scope. Written only with the public device API (puts, signals,
 * LL packets, waits) on the team's scratch window; the host collectives of
 * gpurma_coll.h run these same functions. Get a handle with
 * gpurma_coll_device(team, mem_kind, &handle). Not ABI beyond the calls.
 *
 * The scratch window (every member's copy has the same layout):
 *   state   this member's epoch and, per peer and buffer parity, the epoch
 *           of the last write it made there (read only by this member)
 *   data    [2 parities][n sources] slots of `slot` bytes: bulk puts
 *   ll      [2 parities][n sources] slots of LL packets (8-byte packets:
 *           4 bytes of data and a 4-byte flag in one store)
 *   stage   [n sources] of `ll_slot` bytes: LL payloads, unpacked
 * Signals: slot src carries "src's data for epoch e has arrived" (SET e),
 * slot n + peer carries "peer has consumed what this member wrote to it up
 * to epoch e" (SET e). The window holds one copy of all this per channel
 * (regions one after the other, signals from 2n x channel), so that the
 * parts of a large collective move at once (one block each).
 *
 * Epochs: every step of every collective takes the next epoch (the same
 * number on every member, since collectives run in the same order
 * everywhere); parity e & 1 picks the buffer. A member writes into a
 * peer's buffer of parity q only once the peer acknowledged the last
 * epoch this member wrote there, so nothing is ever cleared, no barrier is
 * needed between collectives, and LL flags (the epoch's low 32 bits) never
 * repeat what the slot held before. The epoch lives in the window (device
 * memory for GPU handles), so a replayed CUDA graph continues it. CPU
 * threads wait through gpurma_wait_until (a dead member is reported, not
 * only timed out); kernels poll with the device wait.
 *
 * Results follow gpurma_coll.h: reductions combine contributions in rank
 * order (gpurma/detail/dev_reduce.h), so every member gets the same bytes.
 * Collectives of one team must not run concurrently (one stream, or one
 * thread, per team and handle), as with any collective.
 */
#ifndef GPURMA_COLL_DEVICE_H
#define GPURMA_COLL_DEVICE_H

#include "gpurma_device.h"
#include "gpurma/detail/dev_reduce.h"

#define GPURMA_DEV_COLL_MAGIC 0x636f6c6cu /* "coll" */

/* Algorithms (the host selector picks one per call; the device calls
 * without _algo pick ONESHOT_LL when a rank's share fits an LL slot and
 * ONESHOT otherwise). */
typedef enum {
    GPURMA_COLL_ALGO_AUTO       = 0,
    GPURMA_COLL_ALGO_ONESHOT_LL = 1, /* everything to everyone, LL packets       */
    GPURMA_COLL_ALGO_ONESHOT    = 2, /* everything to everyone, puts + signals   */
    GPURMA_COLL_ALGO_TWOSHOT    = 3, /* allreduce: reduce-scatter, then allgather */
    GPURMA_COLL_ALGO_RING       = 4  /* allreduce: pipelined chain in rank order  */
} gpurma_coll_algo_t;

typedef struct gpurma_dev_coll {
    gpurma_dev_win_t win;       /* the team's scratch window                   */
    uint64_t         slot;      /* bytes of one data slot                      */
    uint64_t         ll_slot;   /* payload bytes of one LL slot (multiple of 8) */
    /* The regions of this handle's channel, the same in every member. */
    uint64_t         state_off, data_off, ll_off, stage_off;
    int32_t          rank, size;
    uint32_t         magic;
    uint32_t         pad;
    /* Channels: independent copies of the regions and signals, so that
     * several blocks (or steps) work on parts of one collective at once.
     * This handle moves part `part` of `nparts` of the data, on channel
     * `part`; gpurma_coll_device gives part 0 of 1 (everything). */
    uint32_t         nchannels, part, nparts, sig_base;
} gpurma_dev_coll_t;

/* What this member keeps at the start of each channel's state region in
 * its own scratch window. */
typedef struct gpurma_dcoll__state {
    uint64_t epoch;
    uint64_t reserved[7];
    uint64_t last_write[]; /* [peer * 2 + parity] */
} gpurma_dcoll__state_t;

/* Bytes of the state region for a team of n (64-byte aligned); the host
 * sizes the window with it. */
GPURMA_HOST_DEVICE size_t gpurma_dcoll__state_bytes(int n)
{
    return (64 + (size_t)n * 2 * sizeof(uint64_t) + 63) & ~(size_t)63;
}

/* The calling group: tid of nthreads, and how it synchronizes. */
typedef struct {
    unsigned tid, nthreads;
    int      scope; /* 0 one thread, 1 warp, 2 block */
} gpurma_dcoll__grp_t;

GPURMA_DEVICE void gpurma_dcoll__sync(const gpurma_dcoll__grp_t *g)
{
#if GPURMA_DEV_GPU
    if (g->scope == 1)
        gpurma_sh_sync_warp();
    else if (g->scope == 2)
        gpurma_sh_sync_block();
#else
    (void)g;
#endif
}

/* One status for the whole group: thread 0's, after a sync (waits and
 * signals are made by thread 0 only). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__agree(const gpurma_dcoll__grp_t *g,
                                                  gpurma_status_t rc)
{
#if GPURMA_DEV_GPU
    if (g->scope == 2)
        return gpurma_sh_block_any(rc != GPURMA_SUCCESS) ? (rc ? rc : GPURMA_ERR_INTERNAL) : rc;
    if (g->scope == 1)
        return gpurma_sh_warp_any(rc != GPURMA_SUCCESS) ? (rc ? rc : GPURMA_ERR_INTERNAL) : rc;
#else
    (void)g;
#endif
    return rc;
}

GPURMA_DEVICE gpurma_dcoll__state_t *gpurma_dcoll__state(const gpurma_dev_coll_t *c)
{
    return (gpurma_dcoll__state_t *)(c->win.peers[c->rank].base + c->state_off);
}

/* Packet bytes of one LL slot. */
GPURMA_HOST_DEVICE uint64_t gpurma_dcoll__ll_span(uint64_t ll_slot)
{
    return ll_slot * 2; /* 8-byte packets carry 4 bytes */
}

/* Bytes of one channel's copy of each region, for a team of n: state,
 * data, LL and stage (the window holds nchannels of each). */
GPURMA_HOST_DEVICE void gpurma_dcoll__channel_bytes(int n, uint64_t slot, uint64_t ll_slot,
                                                    uint64_t sizes[4])
{
    sizes[0] = gpurma_dcoll__state_bytes(n);
    sizes[1] = 2 * (uint64_t)n * slot;
    sizes[2] = 2 * (uint64_t)n * gpurma_dcoll__ll_span(ll_slot);
    sizes[3] = (uint64_t)n * ll_slot;
}

/* The handle for part `part` of `nparts` (on channel `part`), from the
 * handle of channel 0; nparts 0 when the window has too few channels (the
 * calls then return INVALID_ARG). */
GPURMA_HOST_DEVICE gpurma_dev_coll_t gpurma_dev_coll_part(gpurma_dev_coll_t c, unsigned part,
                                                         unsigned nparts)
{
    uint64_t sz[4];
    gpurma_dcoll__channel_bytes(c.size, c.slot, c.ll_slot, sz);
    unsigned k = c.part; /* back to channel 0 first */
    c.state_off -= k * sz[0], c.data_off -= k * sz[1], c.ll_off -= k * sz[2], c.stage_off -= k * sz[3];
    if (part >= nparts || nparts > c.nchannels) {
        c.part = 0, c.nparts = 0, c.sig_base = 0;
        return c;
    }
    c.state_off += part * sz[0], c.data_off += part * sz[1], c.ll_off += part * sz[2];
    c.stage_off += part * sz[3];
    c.part = part, c.nparts = nparts, c.sig_base = part * 2u * (uint32_t)c.size;
    return c;
}

/* This part's elements [*lo, *lo + *len) of count. */
GPURMA_DEVICE void gpurma_dcoll__share(const gpurma_dev_coll_t *c, size_t count, size_t *lo,
                                       size_t *len)
{
    size_t p = c->part, np = c->nparts;
    size_t a = count / np * p + count % np * p / np;
    size_t b = count / np * (p + 1) + count % np * (p + 1) / np;
    *lo = a, *len = b - a;
}

/* Waits until this member's signal sig reaches v. On CPU threads through
 * the host call gpurma_wait_until: it spins while each rank has a core,
 * then yields, and notices a dead member (GPURMA_ERR_PEER_FAILED, with a
 * message naming it) instead of only timing out. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__wait(const gpurma_dev_coll_t *c, uint32_t sig,
                                                 uint64_t v)
{
#if !GPURMA_DEV_GPU
    gpurma_status_t rc = gpurma_dev__check_win(&c->win);
    if (rc != GPURMA_SUCCESS)
        return rc;
    return gpurma_wait_until((gpurma_win_t)c->win.host_win, sig, GPURMA_CMP_GE, v);
#else
    return gpurma_dev_wait_until(c->win, sig, GPURMA_CMP_GE, v);
#endif
}

/* Sends bytes at src to peer's slot of this member for epoch e: after the
 * peer acknowledged the last epoch written to that parity. ll: as LL
 * packets (the flag is the epoch), else a put and the data signal. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__send(const gpurma_dev_coll_t *c,
                                                 const gpurma_dcoll__grp_t *g, int peer,
                                                 const void *src, size_t bytes, uint64_t e,
                                                 int ll)
{
    const int n = c->size, q = (int)(e & 1);
    gpurma_dcoll__state_t *st = gpurma_dcoll__state(c);
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (ll && !bytes)
        return GPURMA_SUCCESS; /* nothing to carry, nothing to wait for */
    if (g->tid == 0)
        rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)(n + peer), st->last_write[peer * 2 + q]);
    rc = gpurma_dcoll__agree(g, rc);
    if (rc != GPURMA_SUCCESS)
        return rc;
    size_t slot = (size_t)(q * n + c->rank);
    if (ll) {
        rc = gpurma_dev_put_packets_coop(c->win, peer,
                                         (size_t)c->ll_off + slot * (size_t)gpurma_dcoll__ll_span(c->ll_slot),
                                         src, bytes, (uint32_t)e, g->tid, g->nthreads);
        gpurma_dcoll__sync(g);
#if !GPURMA_DEV_GPU
        /* CPU threads wait for a signal, not for the flags (see recv). */
        if (rc == GPURMA_SUCCESS && g->tid == 0)
            rc = gpurma_dev_signal(c->win, peer, c->sig_base + (uint32_t)c->rank,
                                   GPURMA_SIGNAL_SET, e);
#endif
    } else if (g->nthreads == 1) {
        rc = bytes ? gpurma_dev_put_signal(c->win, peer, (size_t)c->data_off + slot * c->slot,
                                           src, bytes, c->sig_base + (uint32_t)c->rank,
                                           GPURMA_SIGNAL_SET, e)
                   : gpurma_dev_signal(c->win, peer, c->sig_base + (uint32_t)c->rank,
                                       GPURMA_SIGNAL_SET, e);
    } else {
        if (bytes)
            rc = gpurma_dev_put_coop(c->win, peer, (size_t)c->data_off + slot * c->slot, src,
                                     bytes, g->tid, g->nthreads);
        gpurma_dcoll__sync(g);
        if (g->tid == 0 && rc == GPURMA_SUCCESS) {
#if GPURMA_DEV_GPU /* the group's stores, then the signal (one thread: the signal orders) */
            gpurma_sh_fence_release_system();
#endif
            rc = gpurma_dev_signal(c->win, peer, c->sig_base + (uint32_t)c->rank,
                                   GPURMA_SIGNAL_SET, e);
        }
    }
    if (g->tid == 0)
        st->last_write[peer * 2 + q] = e;
    return gpurma_dcoll__agree(g, rc);
}

/* Waits for src's data of epoch e (bytes long) and sets *data to it, in
 * this member's window. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__recv(const gpurma_dev_coll_t *c,
                                                 const gpurma_dcoll__grp_t *g, int src,
                                                 size_t bytes, uint64_t e, int ll,
                                                 const char **data)
{
    const int n = c->size, q = (int)(e & 1);
    char *base = c->win.peers[c->rank].base;
    size_t slot = (size_t)(q * n + src);
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (ll) {
        char *stage = base + c->stage_off + (size_t)src * c->ll_slot;
#if !GPURMA_DEV_GPU
        /* CPU threads: the sender signals after its packets (see send), so
         * that a dead sender is noticed here rather than by a timeout. */
        if (bytes && g->tid == 0)
            rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)src, e);
        rc = gpurma_dcoll__agree(g, rc);
        if (rc != GPURMA_SUCCESS)
            return rc;
#endif
        if (bytes)
            rc = gpurma_dev_read_packets_coop(c->win,
                                               (size_t)c->ll_off + slot * (size_t)gpurma_dcoll__ll_span(c->ll_slot),
                                               stage, bytes, (uint32_t)e, g->tid, g->nthreads);
        *data = stage;
    } else {
        if (g->tid == 0)
            rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)src, e);
        *data = base + c->data_off + slot * c->slot;
    }
    return gpurma_dcoll__agree(g, rc);
}

/* After the group is done with src's data of epoch e: src may reuse the slot. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__consumed(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, int src,
                                                     uint64_t e)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    gpurma_dcoll__sync(g);
    if (g->tid == 0)
        rc = gpurma_dev_signal(c->win, src, c->sig_base + (uint32_t)(c->size + c->rank),
                               GPURMA_SIGNAL_SET, e);
    return gpurma_dcoll__agree(g, rc);
}

/* Sources of the user's buffers may be reused, and in-place destinations
 * overwritten, once the puts that read them completed locally. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__flush(const gpurma_dev_coll_t *c,
                                                  const gpurma_dcoll__grp_t *g)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    gpurma_dcoll__sync(g);
    if (g->tid == 0 && c->win.nports)
        rc = gpurma_dev_flush(c->win, GPURMA_ALL_PEERS);
    return gpurma_dcoll__agree(g, rc);
}

GPURMA_DEVICE uint64_t gpurma_dcoll__epoch(const gpurma_dev_coll_t *c)
{
    return gpurma_dcoll__state(c)->epoch;
}

/* Every thread has read the old epoch before thread 0 stores the new one. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__finish(const gpurma_dev_coll_t *c,
                                                   const gpurma_dcoll__grp_t *g, uint64_t e,
                                                   gpurma_status_t rc)
{
    rc = gpurma_dcoll__agree(g, rc);
    if (g->tid == 0)
        gpurma_dcoll__state(c)->epoch = e;
    gpurma_dcoll__sync(g);
    return rc;
}

/* Bytes a step carries per rank: an LL slot or a data slot. */
GPURMA_DEVICE size_t gpurma_dcoll__step_bytes(const gpurma_dev_coll_t *c, int ll, size_t es)
{
    size_t b = ll ? (size_t)c->ll_slot : (size_t)c->slot;
    return b / es * es;
}

GPURMA_DEVICE gpurma_status_t gpurma_dcoll__check(const gpurma_dev_coll_t *c,
                                                  gpurma_dtype_t dtype, gpurma_redop_t op,
                                                  int root)
{
    gpurma_status_t rc = c->magic == GPURMA_DEV_COLL_MAGIC && c->part < c->nparts
                             ? gpurma_dev__check_win(&c->win)
                             : GPURMA_ERR_INVALID_ARG;
    if (rc == GPURMA_SUCCESS && (!gpurma_dev_redop_valid(dtype, op) || root < 0 ||
                                 root >= c->size))
        rc = GPURMA_ERR_INVALID_ARG;
    return rc;
}

/* ------------------------------------------------------------ collectives */

GPURMA_DEVICE gpurma_status_t gpurma_dcoll__barrier(const gpurma_dev_coll_t *c,
                                                    const gpurma_dcoll__grp_t *g)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, GPURMA_UINT8, GPURMA_SUM, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    uint64_t e = gpurma_dcoll__epoch(c) + 1;
    for (int i = 0; i < c->size && g->tid == 0 && rc == GPURMA_SUCCESS; i++)
        rc = gpurma_dev_signal(c->win, (c->rank + i) % c->size, c->sig_base + (uint32_t)c->rank,
                               GPURMA_SIGNAL_SET, e);
    for (int i = 0; i < c->size && g->tid == 0 && rc == GPURMA_SUCCESS; i++)
        rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)i, e);
    return gpurma_dcoll__finish(c, g, e, rc);
}

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
 * member, the same everywhere), rounded up. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__exchange(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, void *recv,
                                                     const void *send,
                                                     const gpurma_dcoll__layout_t *l,
                                                     size_t max_count, gpurma_dtype_t dtype,
                                                     int ll)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, dtype, GPURMA_SUM, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype);
    const size_t max_bytes = gpurma_sh_div_ceil(max_count, c->nparts) * es;
    const size_t step = gpurma_dcoll__step_bytes(c, ll, es);
    uint64_t e = gpurma_dcoll__epoch(c);
    for (size_t off = 0; off < max_bytes && rc == GPURMA_SUCCESS; off += step) {
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

/* broadcast: recv = send of root (root's recv too). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__broadcast(const gpurma_dev_coll_t *c,
                                                      const gpurma_dcoll__grp_t *g, void *recv,
                                                      const void *send, size_t count,
                                                      gpurma_dtype_t dtype, int root, int ll)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, dtype, GPURMA_SUM, root);
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
    for (size_t off = 0; off < total && rc == GPURMA_SUCCESS; off += step) {
        size_t len = total - off < step ? total - off : step;
        e++;
        if (me == root) {
            for (int i = 1; i < n && rc == GPURMA_SUCCESS; i++)
                rc = gpurma_dcoll__send(c, g, (me + i) % n, (const char *)send + off, len, e, ll);
            if (rc == GPURMA_SUCCESS)
                rc = gpurma_dcoll__flush(c, g);
            gpurma_sh_copy((char *)recv + off, (const char *)send + off, len, g->tid,
                           g->nthreads);
            gpurma_dcoll__sync(g);
        } else {
            const char *d = 0;
            rc = gpurma_dcoll__recv(c, g, root, len, e, ll, &d);
            if (rc == GPURMA_SUCCESS) {
                gpurma_sh_copy((char *)recv + off, d, len, g->tid, g->nthreads);
                rc = gpurma_dcoll__consumed(c, g, root, e);
            }
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
    gpurma_status_t rc = gpurma_dcoll__check(c, dtype, op, root);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype), block = count * es;
    size_t lo, len_all;
    gpurma_dcoll__share(c, count, &lo, &len_all);
    send = (const char *)send + lo * es, recv = (char *)recv + lo * es;
    const size_t total = len_all * es;
    const size_t step = gpurma_dcoll__step_bytes(c, ll, es);
    const size_t slot_stride = ll ? (size_t)c->ll_slot : (size_t)c->slot;
    uint64_t e = gpurma_dcoll__epoch(c);
    for (size_t off = 0; off < total && rc == GPURMA_SUCCESS; off += step) {
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
        const char *first = 0;
        for (int src = 0; src < n && rc == GPURMA_SUCCESS; src++) {
            const char *d = 0;
            rc = gpurma_dcoll__recv(c, g, src, len, e, ll, &d);
            if (!src)
                first = d;
        }
        if (rc != GPURMA_SUCCESS)
            break;
        gpurma_dcoll__sync(g);
        /* The slots of sources 0..n-1 are slot_stride apart in one parity. */
        gpurma_dev_reduce_coop((char *)recv + off, first, first + slot_stride, slot_stride, n,
                               len / es, dtype, op, (unsigned)n, g->tid, g->nthreads);
        for (int src = 0; src < n && rc == GPURMA_SUCCESS; src++)
            rc = gpurma_dcoll__consumed(c, g, src, e);
    }
    return gpurma_dcoll__finish(c, g, e, rc);
}

/* allreduce in two shots per step: the step's piece is cut into n parts,
 * part r reduced by rank r (reduce-scatter), then sent to everyone
 * (allgather). Each part is reduced in rank order by one rank. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__allreduce_twoshot(const gpurma_dev_coll_t *c,
                                                              const gpurma_dcoll__grp_t *g,
                                                              void *recv, const void *send,
                                                              size_t count, gpurma_dtype_t dtype,
                                                              gpurma_redop_t op, int ll)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, dtype, op, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype);
    size_t lo, len_all;
    gpurma_dcoll__share(c, count, &lo, &len_all);
    send = (const char *)send + lo * es, recv = (char *)recv + lo * es;
    const size_t total = len_all * es;
    const size_t part_max = gpurma_dcoll__step_bytes(c, ll, es);
    const size_t slot_stride = ll ? (size_t)c->ll_slot : (size_t)c->slot;
    uint64_t e = gpurma_dcoll__epoch(c);
    size_t off = 0;
    while (off < total && rc == GPURMA_SUCCESS) {
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
        const char *first = 0;
        for (int src = 0; src < n && rc == GPURMA_SUCCESS; src++) {
            const char *d = 0;
            rc = gpurma_dcoll__recv(c, g, src, my_len, e, ll, &d);
            if (!src)
                first = d;
        }
        if (rc != GPURMA_SUCCESS)
            break;
        gpurma_dcoll__sync(g);
        char *mine = (char *)recv + off + my_at;
        if (my_len)
            gpurma_dev_reduce_coop(mine, first, first + slot_stride, slot_stride, n,
                                   my_len / es, dtype, op, (unsigned)n, g->tid, g->nthreads);
        for (int src = 0; src < n && rc == GPURMA_SUCCESS; src++)
            rc = gpurma_dcoll__consumed(c, g, src, e);
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
    gpurma_status_t rc = gpurma_dcoll__check(c, dtype, op, 0);
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
    for (size_t off = 0; off < total && rc == GPURMA_SUCCESS; off += step) {
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

/* ------------------------------------------------------------ the API */

/* Whether a rank's share of count elements (this part of it) fits one LL
 * step. */
GPURMA_DEVICE int gpurma_dcoll__fits_ll(const gpurma_dev_coll_t *c, size_t count,
                                        gpurma_dtype_t dtype)
{
    size_t es = gpurma_dev_dtype_size(dtype);
    return es && gpurma_sh_div_ceil(count, c->nparts ? c->nparts : 1) <= (size_t)c->ll_slot / es;
}

/* The selector's choice made on the device: ll for small shares. */
#define GPURMA_DCOLL__LL(algo, c, count, dtype)                                                \
    ((algo) == GPURMA_COLL_ALGO_ONESHOT_LL ||                                                  \
     ((algo) == GPURMA_COLL_ALGO_AUTO && gpurma_dcoll__fits_ll(c, count, dtype)))

/* Each call: every member of the team calls it with the same count, dtype,
 * op and root; buffers are this thread's (global memory on a GPU). The
 * group forms take the whole warp or block, with the same arguments. The
 * _algo forms take a gpurma_coll_algo_t (the host library's selector uses
 * them); TWOSHOT and RING apply to allreduce, other collectives take
 * them as ONESHOT. */
#define GPURMA_DCOLL__API(SUFFIX, GRP)                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_barrier##SUFFIX(gpurma_dev_coll_t c)         \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        return gpurma_dcoll__barrier(&c, &g);                                                  \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_broadcast_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int root, int algo)                                                                    \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        return gpurma_dcoll__broadcast(&c, &g, dst, src, count, dtype, root,                   \
                                       GPURMA_DCOLL__LL(algo, &c, count, dtype));              \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allgather_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int algo)                                                                              \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        gpurma_dcoll__layout_t l = {count, 0, 0, 0, 0, 0};                                     \
        return gpurma_dcoll__exchange(&c, &g, dst, src, &l, count, dtype,                      \
                                      GPURMA_DCOLL__LL(algo, &c, count, dtype));               \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_alltoall_algo##SUFFIX(                       \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int algo)                                                                              \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        gpurma_dcoll__layout_t l = {count, 1, 0, 0, 0, 0};                                     \
        return gpurma_dcoll__exchange(&c, &g, dst, src, &l, count, dtype,                      \
                                      GPURMA_DCOLL__LL(algo, &c, count, dtype));               \
    }                                                                                          \
    /* Counts and displacements in elements, one per member; max_count is                  \
     * the largest count of any member's arrays (the same on every member). */              \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_alltoallv_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const size_t *recv_counts, const size_t *recv_displs,  \
        const void *src, const size_t *send_counts, const size_t *send_displs,                 \
        size_t max_count, gpurma_dtype_t dtype, int algo)                                      \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        gpurma_dcoll__layout_t l = {0, 1, send_counts, send_displs, recv_counts, recv_displs}; \
        return gpurma_dcoll__exchange(&c, &g, dst, src, &l, max_count, dtype,                  \
                                      GPURMA_DCOLL__LL(algo, &c, max_count, dtype));           \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce_algo##SUFFIX(                         \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int root, int algo)                                                 \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        return gpurma_dcoll__reduce_push(&c, &g, dst, src, count, dtype, op, root, 0,          \
                                         GPURMA_DCOLL__LL(algo, &c, count, dtype));            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce_scatter_algo##SUFFIX(                 \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int algo)                                                           \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        return gpurma_dcoll__reduce_push(&c, &g, dst, src, count, dtype, op, 0, 2,             \
                                         GPURMA_DCOLL__LL(algo, &c, count, dtype));            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allreduce_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int algo)                                                           \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        if (algo == GPURMA_COLL_ALGO_TWOSHOT)                                                  \
            return gpurma_dcoll__allreduce_twoshot(&c, &g, dst, src, count, dtype, op, 0);     \
        if (algo == GPURMA_COLL_ALGO_RING)                                                     \
            return gpurma_dcoll__allreduce_ring(&c, &g, dst, src, count, dtype, op, 0);        \
        return gpurma_dcoll__reduce_push(&c, &g, dst, src, count, dtype, op, 0, 1,             \
                                         GPURMA_DCOLL__LL(algo, &c, count, dtype));            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_broadcast##SUFFIX(                           \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int root)                                                                              \
    {                                                                                          \
        return gpurma_dev_coll_broadcast_algo##SUFFIX(c, dst, src, count, dtype, root, 0);     \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allgather##SUFFIX(                           \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype)   \
    {                                                                                          \
        return gpurma_dev_coll_allgather_algo##SUFFIX(c, dst, src, count, dtype, 0);           \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_alltoall##SUFFIX(                            \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype)   \
    {                                                                                          \
        return gpurma_dev_coll_alltoall_algo##SUFFIX(c, dst, src, count, dtype, 0);            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce##SUFFIX(                              \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int root)                                                           \
    {                                                                                          \
        return gpurma_dev_coll_reduce_algo##SUFFIX(c, dst, src, count, dtype, op, root, 0);    \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce_scatter##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op)                                                                     \
    {                                                                                          \
        return gpurma_dev_coll_reduce_scatter_algo##SUFFIX(c, dst, src, count, dtype, op, 0);  \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allreduce##SUFFIX(                           \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op)                                                                     \
    {                                                                                          \
        return gpurma_dev_coll_allreduce_algo##SUFFIX(c, dst, src, count, dtype, op, 0);       \
    }

#define GPURMA_DCOLL__ONE {0, 1, 0}
GPURMA_DCOLL__API(, GPURMA_DCOLL__ONE)
#if GPURMA_DEV_GPU
#define GPURMA_DCOLL__WARP {gpurma_sh_lane(), gpurma_sh_warp_threads(), 1}
#define GPURMA_DCOLL__BLOCK {gpurma_sh_block_tid(), gpurma_sh_block_threads(), 2}
GPURMA_DCOLL__API(_warp, GPURMA_DCOLL__WARP)
GPURMA_DCOLL__API(_block, GPURMA_DCOLL__BLOCK)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The handle of team's scratch window in host memory (GPURMA_MEM_HOST:
 * for CPU threads) or on the GPU (GPURMA_MEM_DEVICE: for kernels).
 * Collective over the team the first time for each kind. */
GPURMA_API gpurma_status_t gpurma_coll_device(gpurma_team_t team, gpurma_mem_kind_t kind,
                                              gpurma_dev_coll_t *out);

#ifdef __cplusplus
}
#endif

#endif /* GPURMA_COLL_DEVICE_H */
