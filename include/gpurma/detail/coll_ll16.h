/*
 * coll_ll16.h - small collectives in one step of 16-byte LL packets with
 * no acknowledgement and no signal: allreduce, allgather, reduce-scatter
 * and alltoall, the collectives in which every member receives from every
 * other in every call.
 *
 * Each channel has its own LL16 region, [2 parities][n sources] slots of
 * 16-byte packets (two halves of 4 data bytes and a 4-byte flag, stored
 * with one 16-byte store on a GPU, read with one 16-byte load), and its
 * own epoch (a word of the channel's state); the flag is the epoch's low
 * 32 bits. Packet 0 of a slot is the header (the call's fingerprint), the
 * data follows, 8 bytes per packet. A member stores its piece straight
 * into every peer's slot of parity e & 1 and reads the pieces of epoch e
 * in its own slots, reducing or copying them on the fly.
 *
 * Why no acknowledgement is needed: a member writes epoch e into a slot
 * that held epoch e - 2. It starts epoch e only after its epoch e - 1
 * received every peer's header, so every peer had started epoch e - 1 on
 * this channel, after finishing epoch e - 2 (the same channel's calls run
 * one after the other: stream order, or one CPU thread), reads included.
 * The header goes even when the piece is empty, so the argument holds for
 * every call. Calls of other algorithms never touch these slots or the
 * epoch, so they may come between.
 *
 * On CPU threads (host backend) the sender also raises a signal per
 * source after its packets and the receiver waits for it first, so that
 * a member that died is reported (gpurma_wait_until) instead of polled
 * for until the timeout.
 *
 * It needs every peer mapped by load/store (one node, mem engine) and at
 * most GPURMA_DCOLL_LL16_MAX_RANKS members; otherwise, and for pieces
 * beyond the channel's slot, it declines the call (GPURMA_DCOLL__DECLINED)
 * and the shared code runs it (oneshot, LL when it fits), decided the same
 * way on every member.
 * Part of gpurma_coll_device.h (include that); compiles as CUDA, HIP and
 * plain C. Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_LL16_H
#define GPURMA_DETAIL_COLL_LL16_H

#include "gpurma/detail/coll_proto.h"

/* Members whose 8-byte units one thread gathers before reducing them. */
#define GPURMA_DCOLL_LL16_MAX_RANKS 16

/* The channel's state word that holds its LL16 epoch. */
#define GPURMA_DCOLL__LL16_EPOCH 4

/* Payload bytes a channel's LL16 slot carries: all packets but the header,
 * 8 bytes each (the slot spans gpurma_dcoll__ll_span(ll_slot) bytes). */
GPURMA_HOST_DEVICE size_t gpurma_dcoll__ll16_cap(const gpurma_dev_coll_t *c)
{
    return (size_t)gpurma_dcoll__ll_span(c->ll_slot) / 2 - 8;
}

/* The parts (channels, one block each on a GPU) an LL16 collective of
 * `bytes` per peer takes: each part's share, one element more at most (8
 * bytes), fits a slot; 0 when it does not fit the channels or the team is
 * too large. */
GPURMA_HOST_DEVICE unsigned gpurma_dcoll__ll16_parts(const gpurma_dev_coll_t *c, size_t bytes)
{
    const size_t room = gpurma_dcoll__ll16_cap(c) - 8;
    if (c->size > GPURMA_DCOLL_LL16_MAX_RANKS || c->ll_slot < 32)
        return 0;
    size_t parts = bytes ? (bytes - 1) / room + 1 : 1;
    return parts <= c->nchannels ? (unsigned)parts : 0;
}

/* The signal a source raises on CPU threads (after the zero-copy range). */
GPURMA_HOST_DEVICE uint32_t gpurma_dcoll__ll16_sig(const gpurma_dev_coll_t *c, int src)
{
    return (2u * c->nchannels + 1u + c->part) * (uint32_t)c->size + (uint32_t)src;
}

/* Slot (parity of e, source src) in member `at`'s copy of the region. */
GPURMA_DEVICE uint64_t *gpurma_dcoll__ll16_slot(const gpurma_dev_coll_t *c, int at, int src,
                                                uint64_t e)
{
    const size_t span = (size_t)gpurma_dcoll__ll_span(c->ll_slot);
    return (uint64_t *)(c->win.peers[at].base + c->ll16_off +
                        ((size_t)(e & 1) * (size_t)c->size + (size_t)src) * span);
}

/* Waits for the 16-byte packet at p to carry flag in both halves; its
 * two data words in d[0], d[1]. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_read(const gpurma_dev_coll_t *c, const uint64_t *p,
                                                      uint32_t flag, uint32_t d[2])
{
    uint32_t v[4];
    uint64_t start = 0;
    for (uint64_t iter = 0;; iter++) {
        gpurma_sh_load_packet16(p, v);
        if (v[1] == flag && v[3] == flag)
            break;
        if (gpurma_dev__expired(iter, &start, c->win.timeout_ns))
            return GPURMA_ERR_TIMEOUT;
        gpurma_sh_pause_n(iter);
    }
    d[0] = v[0], d[1] = v[2];
    return GPURMA_SUCCESS;
}

/* 8-byte unit i of bytes at s (zeros past the end). */
GPURMA_DEVICE void gpurma_dcoll__ll16_unit(const char *s, size_t bytes, size_t i, uint32_t d[2])
{
    const unsigned char *u = (const unsigned char *)s;
    d[0] = gpurma_dev__payload_word(u, bytes, 2 * i);
    d[1] = 8 * i + 4 < bytes ? gpurma_dev__payload_word(u, bytes, 2 * i + 1) : 0;
}

GPURMA_DEVICE void gpurma_dcoll__ll16_store_unit(char *dst, size_t bytes, size_t i,
                                                 const uint32_t d[2])
{
    unsigned char *u = (unsigned char *)dst;
    gpurma_dev__store_payload_word(u, bytes, 2 * i, d[0]);
    if (8 * i + 4 < bytes)
        gpurma_dev__store_payload_word(u, bytes, 2 * i + 1, d[1]);
}

/* Which collective: a GPURMA_DCOLL__K_* kind. Pieces: allreduce and
 * allgather send their whole (part of) send to everyone; reduce-scatter
 * and alltoall send block p to member p. */
GPURMA_DEVICE int gpurma_dcoll__ll16_scatters(int kind)
{
    return kind == GPURMA_DCOLL__K_REDUCE_SCATTER || kind == GPURMA_DCOLL__K_ALLTOALL;
}

/* The delivery of a unit is called, not inlined, on a GPU: every device
 * function is forced inline there, and the reduce over every dtype and op
 * inlined at each call site made the collectives' kernels take minutes
 * to compile. */
#if GPURMA_DEV_GPU
#define GPURMA_DCOLL__LL16_CALLED static __device__ __noinline__
#else
#define GPURMA_DCOLL__LL16_CALLED static inline
#endif

/* One 8-byte unit of a piece, 8-byte aligned (the reduce reads 8-byte
 * elements). */
typedef union {
    uint64_t w;
    uint32_t h[2];
} gpurma_dcoll__ll16_unit_t;

/* Unit i of every source into u (this member's from mine). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_gather(const gpurma_dev_coll_t *c, uint64_t e,
                                                        const char *mine, size_t bytes, size_t i,
                                                        gpurma_dcoll__ll16_unit_t *u)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (int src = 0; src < c->size && rc == GPURMA_SUCCESS; src++) {
        if (src == c->rank)
            gpurma_dcoll__ll16_unit(mine, bytes, i, u[src].h);
        else
            rc = gpurma_dcoll__ll16_read(c, gpurma_dcoll__ll16_slot(c, c->rank, src, e) + 2 + 2 * i,
                                         (uint32_t)e, u[src].h);
    }
    return rc;
}

/* Unit i of the result: the sources reduced in rank order, or each copied
 * to its block. */
GPURMA_DCOLL__LL16_CALLED void gpurma_dcoll__ll16_deliver(const gpurma_dev_coll_t *c, int reduces,
                                                          char *out, size_t block, size_t bytes,
                                                          size_t i,
                                                          const gpurma_dcoll__ll16_unit_t *u,
                                                          gpurma_dtype_t dtype, gpurma_redop_t op)
{
    if (!reduces) {
        for (int src = 0; src < c->size; src++)
            gpurma_dcoll__ll16_store_unit(out + (size_t)src * block, bytes, i, u[src].h);
        return;
    }
    const size_t left = bytes - 8 * i;
    gpurma_dcoll__ll16_unit_t r;
    gpurma_dev_reduce_coop(&r.w, &u[0].w, &u[1].w, sizeof u[0], c->size,
                           (left < 8 ? left : 8) / gpurma_dev_dtype_size(dtype), dtype, op,
                           (unsigned)c->size, 0, 1);
    gpurma_dcoll__ll16_store_unit(out, bytes, i, r.h);
}

/* The collective on this channel at epoch e, the channel taken: every
 * member's part is `len` elements from element `lo` of each block (count
 * elements a block). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_run(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, int kind,
                                                     void *recv, const void *send, size_t count,
                                                     gpurma_dtype_t dtype, gpurma_redop_t op,
                                                     uint64_t e)
{
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype), block = count * es;
    size_t lo, len;
    gpurma_dcoll__share(c, count, &lo, &len);
    const size_t bytes = len * es, units = gpurma_sh_div_ceil(bytes, 8);
    const int scatter = gpurma_dcoll__ll16_scatters(kind);
    const int reduces = kind == GPURMA_DCOLL__K_ALLREDUCE || kind == GPURMA_DCOLL__K_REDUCE_SCATTER;
    const char *in = (const char *)send + lo * es;
    const char *mine = in + (scatter ? (size_t)me * block : 0);
    char *out = (char *)recv + lo * es;
    const uint32_t flag = (uint32_t)e;
    gpurma_status_t rc = GPURMA_SUCCESS;

    /* Send: packet 0 the header, packet 1 + i unit i of the piece. */
    for (size_t i = g->tid; i < units + 1; i += g->nthreads) {
        uint32_t d[2] = {c->print, 0};
        for (int k = 1; k < n; k++) {
            const int p = (me + k) % n;
            if (i && (k == 1 || scatter))
                gpurma_dcoll__ll16_unit(in + (scatter ? (size_t)p * block : 0), bytes, i - 1, d);
            gpurma_sh_store_packet16(gpurma_dcoll__ll16_slot(c, p, me, e) + 2 * i, d[0], flag, d[1],
                                     flag);
        }
    }
#if !GPURMA_DEV_GPU
    for (int k = 1; k < n && g->tid == 0 && rc == GPURMA_SUCCESS; k++)
        rc = gpurma_dev_signal(c->win, (me + k) % n, gpurma_dcoll__ll16_sig(c, me),
                               GPURMA_SIGNAL_SET, e);
    /* A member that died is reported here, before any packet is polled. */
    for (int k = 1; k < n && g->tid == 0 && rc == GPURMA_SUCCESS; k++)
        rc = gpurma_dcoll__wait(c, gpurma_dcoll__ll16_sig(c, (me + n - k) % n), e);
    rc = gpurma_dcoll__agree(g, rc);
#endif

    /* Each thread gathers its first unit while thread 0 checks every
     * source's header; nothing is written before all agree (a member that
     * passed another call is refused with recv untouched, and every unit
     * of send was read before any is overwritten in place). */
    gpurma_dcoll__ll16_unit_t u[GPURMA_DCOLL_LL16_MAX_RANKS];
    const int first = g->tid < units && rc == GPURMA_SUCCESS;
    if (first)
        rc = gpurma_dcoll__ll16_gather(c, e, mine, bytes, g->tid, u);
    for (int k = 1; k < n && g->tid == 0 && rc == GPURMA_SUCCESS; k++) {
        uint32_t h[2];
        rc = gpurma_dcoll__ll16_read(c, gpurma_dcoll__ll16_slot(c, me, (me + n - k) % n, e), flag,
                                     h);
        if (rc == GPURMA_SUCCESS && h[0] != c->print)
            rc = GPURMA_ERR_INVALID_ARG;
    }
    rc = gpurma_dcoll__agree(g, rc);
    if (rc == GPURMA_SUCCESS && first)
        gpurma_dcoll__ll16_deliver(c, reduces, out, block, bytes, g->tid, u, dtype, op);
    for (size_t i = g->tid + g->nthreads; i < units && rc == GPURMA_SUCCESS; i += g->nthreads) {
        rc = gpurma_dcoll__ll16_gather(c, e, mine, bytes, i, u);
        if (rc == GPURMA_SUCCESS)
            gpurma_dcoll__ll16_deliver(c, reduces, out, block, bytes, i, u, dtype, op);
    }
    return gpurma_dcoll__agree(g, rc);
}

/* The collectives of this algorithm; other teams and pieces are declined
 * (the shared oneshot code runs them), decided the same way on every
 * member. The channel is taken (a second
 * collective on the team at once is refused) while the epoch and the
 * peers' table are read: one memory round trip for the three. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__run_ll16(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, int kind,
                                                     void *recv, const void *send, size_t count,
                                                     gpurma_dtype_t dtype, gpurma_redop_t op)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, count, dtype, op, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_dcoll__state_t *st = gpurma_dcoll__state(c);
    uint64_t *busy = &st->reserved[GPURMA_DCOLL__BUSY];
    /* relaxed: the word orders nothing else */
    const int took = g->tid == 0 && gpurma_sh_cas_relaxed_u64(busy, 0, 1) == 0;
    const uint64_t e = st->reserved[GPURMA_DCOLL__LL16_EPOCH] + 1;
    const size_t es = gpurma_dev_dtype_size(dtype);
    int mapped = c->win.nports == 0 && c->size <= GPURMA_DCOLL_LL16_MAX_RANKS &&
                 gpurma_sh_div_ceil(count, c->nparts) * es <= gpurma_dcoll__ll16_cap(c);
    for (int p = 0; p < c->size && p < GPURMA_DCOLL_LL16_MAX_RANKS; p++)
        mapped &= (c->win.peers[p].path == GPURMA_DEV_PATH_LOADSTORE) & !!c->win.peers[p].base;
    if (!mapped) {
        if (took)
            *(volatile uint64_t *)busy = 0;
        return GPURMA_DCOLL__DECLINED;
    }
    rc = gpurma_dcoll__agree(g, g->tid == 0 && !took ? GPURMA_ERR_INVALID_ARG : GPURMA_SUCCESS);
    if (rc != GPURMA_SUCCESS)
        return rc; /* not ours to give back */
    rc = gpurma_dcoll__ll16_run(c, g, kind, recv, send, count, dtype, op, e);
    if (g->tid == 0) {
        /* A failed call still moves on: its packets may be out, and the
         * next call must not take their flag for its own. */
        st->reserved[GPURMA_DCOLL__LL16_EPOCH] = e;
        *(volatile uint64_t *)busy = 0;
    }
    gpurma_dcoll__sync(g);
    return rc;
}

#endif
