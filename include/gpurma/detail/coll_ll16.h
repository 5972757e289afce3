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
 * beyond the channel's slot, the call runs oneshot (LL or not) instead,
 * decided the same way on every member.
 * Part of gpurma_coll_device.h (include that); compiles as CUDA, HIP and
 * plain C. Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_LL16_H
#define GPURMA_DETAIL_COLL_LL16_H

#include "gpurma/detail/coll_oneshot.h"

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

/* The collective on this channel; every member's part is `len` elements
 * starting at element `lo` of each block (count elements a block). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_run(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, int kind,
                                                     void *recv, const void *send, size_t count,
                                                     gpurma_dtype_t dtype, gpurma_redop_t op)
{
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype), block = count * es;
    size_t lo, len;
    gpurma_dcoll__share(c, count, &lo, &len);
    const size_t bytes = len * es, units = gpurma_sh_div_ceil(bytes, 8);
    const int scatter = gpurma_dcoll__ll16_scatters(kind);
    const int reduces = kind == GPURMA_DCOLL__K_ALLREDUCE || kind == GPURMA_DCOLL__K_REDUCE_SCATTER;
    const char *in = (const char *)send + lo * es;
    gpurma_dcoll__state_t *st = gpurma_dcoll__state(c);
    gpurma_status_t rc = GPURMA_SUCCESS;

    /* The channel, as every algorithm takes it (a second collective on the
     * team at once is refused); relaxed: it orders nothing else. */
    if (g->tid == 0 && gpurma_sh_cas_relaxed_u64(&st->reserved[GPURMA_DCOLL__BUSY], 0, 1) != 0)
        rc = GPURMA_ERR_INVALID_ARG;
    rc = gpurma_dcoll__agree(g, rc);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const uint64_t e = st->reserved[GPURMA_DCOLL__LL16_EPOCH] + 1;
    const uint32_t flag = (uint32_t)e;

    /* Send: packet 0 the header, packet 1 + i unit i of the piece. */
    for (size_t i = g->tid; i < units + 1; i += g->nthreads) {
        uint32_t d[2] = {c->print, 0};
        for (int k = 0; k < n; k++) {
            const int p = (me + k) % n;
            if (p == me)
                continue;
            if (i && (k == 1 || scatter))
                gpurma_dcoll__ll16_unit(in + (scatter ? (size_t)p * block : 0), bytes, i - 1, d);
            gpurma_sh_store_packet16(gpurma_dcoll__ll16_slot(c, p, me, e) + 2 * i, d[0], flag, d[1],
                                     flag);
        }
    }
#if !GPURMA_DEV_GPU
    for (int k = 1; k < n && rc == GPURMA_SUCCESS && g->tid == 0; k++)
        rc = gpurma_dev_signal(c->win, (me + k) % n, gpurma_dcoll__ll16_sig(c, me),
                               GPURMA_SIGNAL_SET, e);
#endif
    /* Headers: every source's, before any data is used (a member that
     * passed another call is refused here, not waited for). */
    for (int k = 1; k < n && rc == GPURMA_SUCCESS && g->tid == 0; k++) {
        const int src = (me + n - k) % n;
        uint32_t h[2];
#if !GPURMA_DEV_GPU
        rc = gpurma_dcoll__wait(c, gpurma_dcoll__ll16_sig(c, src), e);
        if (rc == GPURMA_SUCCESS)
#endif
            rc = gpurma_dcoll__ll16_read(c, gpurma_dcoll__ll16_slot(c, me, src, e), flag, h);
        if (rc == GPURMA_SUCCESS && h[0] != c->print)
            rc = GPURMA_ERR_INVALID_ARG;
    }
    /* Also: every unit of send was read before any is overwritten in place. */
    rc = gpurma_dcoll__agree(g, rc);

    /* Receive: unit i of every source, reduced in rank order or copied. */
    char *out = (char *)recv + lo * es;
    const char *mine = in + (scatter ? (size_t)me * block : 0);
    for (size_t i = g->tid; i < units && rc == GPURMA_SUCCESS; i += g->nthreads) {
        /* 8-byte aligned, as the reduce reads 8-byte elements. */
        union {
            uint64_t w;
            uint32_t h[2];
        } u[GPURMA_DCOLL_LL16_MAX_RANKS], r;
        for (int src = 0; src < n && rc == GPURMA_SUCCESS; src++) {
            if (src == me)
                gpurma_dcoll__ll16_unit(mine, bytes, i, u[src].h);
            else
                rc = gpurma_dcoll__ll16_read(c, gpurma_dcoll__ll16_slot(c, me, src, e) + 2 + 2 * i,
                                             flag, u[src].h);
            if (!reduces && rc == GPURMA_SUCCESS)
                gpurma_dcoll__ll16_store_unit(out + (size_t)src * block, bytes, i, u[src].h);
        }
        if (reduces && rc == GPURMA_SUCCESS) {
            const size_t left = bytes - 8 * i;
            gpurma_dev_reduce_coop(&r.w, &u[0].w, &u[1].w, sizeof u[0], n,
                                   (left < 8 ? left : 8) / es, dtype, op, (unsigned)n, 0, 1);
            gpurma_dcoll__ll16_store_unit(out, bytes, i, r.h);
        }
    }
    rc = gpurma_dcoll__agree(g, rc);
    if (g->tid == 0) {
        /* A failed call still moves on: its packets may be out, and the
         * next call must not take their flag for its own. */
        st->reserved[GPURMA_DCOLL__LL16_EPOCH] = e;
        *(volatile uint64_t *)&st->reserved[GPURMA_DCOLL__BUSY] = 0;
    }
    gpurma_dcoll__sync(g);
    return rc;
}

/* The collectives of this algorithm; other teams and pieces run oneshot,
 * decided the same way on every member. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__run_ll16(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, int kind,
                                                     void *recv, const void *send, size_t count,
                                                     gpurma_dtype_t dtype, gpurma_redop_t op)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, count, dtype, op, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const size_t es = gpurma_dev_dtype_size(dtype);
    int mapped = c->win.nports == 0 && c->size <= GPURMA_DCOLL_LL16_MAX_RANKS &&
                 gpurma_sh_div_ceil(count, c->nparts) * es <= gpurma_dcoll__ll16_cap(c);
    for (int p = 0; p < c->size && mapped; p++)
        mapped = c->win.peers[p].path == GPURMA_DEV_PATH_LOADSTORE && c->win.peers[p].base;
    if (mapped)
        return gpurma_dcoll__ll16_run(c, g, kind, recv, send, count, dtype, op);
    return gpurma_dcoll__run_oneshot(c, g, kind, recv, send, count, dtype, op,
                                     gpurma_sh_div_ceil(count, c->nparts) * es <=
                                         gpurma_dcoll__slot_data(c, 1));
}

#endif
