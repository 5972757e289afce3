/*
 * coll_ll16.h - small collectives in one step of 16-byte LL packets with
 * no acknowledgement and no signal: allreduce, allgather, reduce-scatter,
 * alltoall, broadcast and reduce. Every member receives a header from
 * every other in every call, the data or not: a broadcast's root sends its
 * data, a reduce's members send theirs to the root, and every other pair
 * exchanges a header alone.
 *
 * Each channel has its own LL16 region, [2 parities][n sources] slots of
 * 16-byte packets (two halves of 4 data bytes and a 4-byte flag, stored
 * with one 16-byte store on a GPU, read with one 16-byte load), and its
 * own epoch (a word of the channel's state); the flag is the epoch's low
 * 32 bits. Packet 0 of a slot is the header (the call's print in one half,
 * its count in the other: exact, since a call this algorithm takes has a
 * count below 2^32), the data follows, 8 bytes per packet. A member
 * stores its piece straight into every peer's slot of parity e & 1 and
 * reads the pieces of epoch e in its own slots, reducing or copying them
 * on the fly. Every header is read and compared exactly before anything
 * is written; a thread that takes data from the source whose header it
 * checks polls the two together, so that the header, which lands about
 * when the data does, costs no round trip of its own.
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

/* The channel's state word that holds its LL16 epoch (times two, plus 1
 * while a call holds the channel's LL16 region: gpurma_dcoll__own_epoch). */
#define GPURMA_DCOLL__LL16_EPOCH 4

/* Payload bytes a channel's LL16 slot carries: all whole packets but the
 * header, 8 bytes each (the slot spans gpurma_dcoll__ll_span(ll_slot)
 * bytes, which need not be a multiple of 16). */
GPURMA_HOST_DEVICE size_t gpurma_dcoll__ll16_cap(const gpurma_dev_coll_t *c)
{
    return ((size_t)gpurma_dcoll__ll_span(c->ll_slot) / 2 - 8) & ~(size_t)7;
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

/* The print LL16's headers carry: the call's, with its part count mixed
 * in, so that members that cut a call into different parts (a setting
 * that differs between ranks) refuse it rather than take each other's
 * shares for their own. */
GPURMA_HOST_DEVICE uint32_t gpurma_dcoll__ll16_print(const gpurma_dev_coll_t *c)
{
    return gpurma_dcoll__print_algo(c->print, (int)(c->nparts << 8) + GPURMA_COLL_ALGO_LL16);
}

/* The signal a source raises on CPU threads (after the zero-copy range). */
GPURMA_HOST_DEVICE uint32_t gpurma_dcoll__ll16_sig(const gpurma_dev_coll_t *c, int src)
{
    return (GPURMA_DCOLL__RANGE_LL16(c->nchannels) + c->part) * (uint32_t)c->size +
           (uint32_t)src;
}

/* Every member's scratch window as mapped here (NULL where it is not
 * mapped by load/store), so that no table is read before the first
 * packet leaves: the dedicated kernel gets it by value from the host. */
typedef struct {
    char *at[GPURMA_DCOLL_LL16_MAX_RANKS];
} gpurma_dcoll__ll16_bases_t;

/* Slot (parity of e, source src) in member `at`'s copy of the region. */
GPURMA_DEVICE uint64_t *gpurma_dcoll__ll16_slot(const gpurma_dev_coll_t *c,
                                                const gpurma_dcoll__ll16_bases_t *b, int at,
                                                int src, uint64_t e)
{
    const size_t span = (size_t)gpurma_dcoll__ll_span(c->ll_slot);
    return (uint64_t *)(b->at[at] + c->ll16_off +
                        ((size_t)(e & 1) * (size_t)c->size + (size_t)src) * span);
}

/* Waits for the 16-byte packet at p to carry flag in both halves, its
 * first load's words already in v; its two data words in *d. With hh, it
 * waits for the header at hh as well (its words in hv, loaded afresh with
 * every poll of p), which gpurma_dcoll__ll16_head then checks without a
 * load of its own. A data packet's wait also looks at its slot's header
 * (head; NULL for a header) now and then: a member in another call may
 * never send this packet (a broadcast from another root, a shorter count),
 * and its header says so (GPURMA_ERR_INVALID_ARG) long before the timeout
 * would. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_read(const gpurma_dev_coll_t *c, const uint64_t *p,
                                                      const uint64_t *head, uint32_t flag,
                                                      uint32_t v[4], uint64_t *d,
                                                      const uint64_t *hh, uint32_t hv[4])
{
    uint64_t start = 0;
    for (uint64_t iter = 0;
         v[1] != flag || v[3] != flag || (hh && (hv[1] != flag || hv[3] != flag)); iter++) {
        const gpurma_status_t over = gpurma_dcoll__wait_over(c, iter, &start);
        if (over != GPURMA_SUCCESS)
            return over;
        if (head && (iter & 255) == 255) {
            uint32_t h[4];
            gpurma_sh_load_packet16(head, h);
            if (h[1] == flag && h[3] == flag &&
                (h[0] != gpurma_dcoll__ll16_print(c) || h[2] != (uint32_t)c->count))
                return GPURMA_ERR_INVALID_ARG;
        }
        gpurma_sh_pause_n(iter);
        gpurma_sh_load_packet16(p, v);
        if (hh)
            gpurma_sh_load_packet16(hh, hv);
    }
    *d = (uint64_t)v[0] | (uint64_t)v[2] << 32;
    return GPURMA_SUCCESS;
}

/* The header at h (its first load's words already in hv) of the call
 * this member runs: the same print and the count it expects from that
 * source; GPURMA_ERR_INVALID_ARG for a member that passed another call. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_head(const gpurma_dev_coll_t *c, const uint64_t *h,
                                                      uint32_t flag, uint32_t print,
                                                      uint64_t count, uint32_t hv[4])
{
    uint64_t d = 0;
    gpurma_status_t rc = gpurma_dcoll__ll16_read(c, h, NULL, flag, hv, &d, NULL, NULL);
    if (rc == GPURMA_SUCCESS && ((uint32_t)d != print || (d >> 32) != count))
        rc = GPURMA_ERR_INVALID_ARG;
    return rc;
}

/* 8-byte unit i of bytes at s (zeros past the end). */
GPURMA_DEVICE uint64_t gpurma_dcoll__ll16_unit(const char *s, size_t bytes, size_t i)
{
    if (8 * i + 8 <= bytes && !(((uintptr_t)s + 8 * i) & 7))
        return *(const uint64_t *)(const void *)(s + 8 * i);
    const unsigned char *u = (const unsigned char *)s;
    uint64_t lo = gpurma_dev__payload_word(u, bytes, 2 * i);
    uint64_t hi = 8 * i + 4 < bytes ? gpurma_dev__payload_word(u, bytes, 2 * i + 1) : 0;
    return lo | hi << 32;
}

GPURMA_DEVICE void gpurma_dcoll__ll16_store_unit(char *dst, size_t bytes, size_t i, uint64_t v)
{
    if (8 * i + 8 <= bytes && !(((uintptr_t)dst + 8 * i) & 7)) {
        *(uint64_t *)(void *)(dst + 8 * i) = v;
        return;
    }
    unsigned char *u = (unsigned char *)dst;
    gpurma_dev__store_payload_word(u, bytes, 2 * i, (uint32_t)v);
    if (8 * i + 4 < bytes)
        gpurma_dev__store_payload_word(u, bytes, 2 * i + 1, (uint32_t)(v >> 32));
}

/* Which collective: a GPURMA_DCOLL__K_* kind. Pieces: allreduce and
 * allgather send their whole (part of) send to everyone; reduce-scatter
 * and alltoall send block p to member p. */
GPURMA_DEVICE int gpurma_dcoll__ll16_scatters(int kind)
{
    return kind == GPURMA_DCOLL__K_REDUCE_SCATTER || kind == GPURMA_DCOLL__K_ALLTOALL;
}

/* Whether member `me` sends its data to member `to` (a header goes to
 * every member): a broadcast's root to all, every reduce member to the
 * root, everyone to everyone in the other collectives. */
GPURMA_DEVICE int gpurma_dcoll__ll16_feeds(int kind, int me, int to, int root)
{
    return kind == GPURMA_DCOLL__K_BROADCAST ? me == root
           : kind == GPURMA_DCOLL__K_REDUCE  ? to == root
                                             : 1;
}

/* The member k places after `me` in a team of n. */
GPURMA_DEVICE int gpurma_dcoll__ll16_after(int me, int k, int n)
{
    return me + k < n ? me + k : me + k - n;
}

/* On CPU threads, after this member's packets: a signal to every peer,
 * then a wait for every peer's, so that a member that died is reported
 * before any packet is polled. Nothing on a GPU. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_host_meet(const gpurma_dev_coll_t *c,
                                                           const gpurma_dcoll__grp_t *g, uint64_t e)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
#if !GPURMA_DEV_GPU
    const int n = c->size, me = c->rank;
    for (int k = 1; k < n && g->tid == 0 && rc == GPURMA_SUCCESS; k++)
        rc = gpurma_dev_signal(c->win, (me + k) % n, gpurma_dcoll__ll16_sig(c, me),
                               GPURMA_SIGNAL_SET, e);
    for (int k = 1; k < n && g->tid == 0 && rc == GPURMA_SUCCESS; k++) {
        const int src = (me + n - k) % n;
        rc = gpurma_dcoll__wait(c, gpurma_dcoll__ll16_sig(c, src), e);
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__check_abandoned(c, 1, src, e);
    }
    rc = gpurma_dcoll__agree(g, rc);
#else
    (void)c, (void)g, (void)e;
#endif
    return rc;
}

/* Unit i of every source into the stage (source s at stage[s * stride]):
 * this member's from mine, the peers' from their packets, loaded four
 * peers at a time (in flight together, few registers); source hsrc's
 * header at h polled with its packet (hv; hsrc -1: none). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_gather(const gpurma_dev_coll_t *c,
                                                        const gpurma_dcoll__ll16_bases_t *b,
                                                        uint64_t e, const char *mine, size_t bytes,
                                                        size_t i, uint64_t *stage, size_t stride,
                                                        int hsrc, const uint64_t *h, uint32_t hv[4])
{
    const int n = c->size, me = c->rank;
    const uint32_t flag = (uint32_t)e;
    stage[(size_t)me * stride] = gpurma_dcoll__ll16_unit(mine, bytes, i);
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (int k0 = 1; k0 < n && rc == GPURMA_SUCCESS; k0 += 4) {
        uint32_t v[4][4];
        GPURMA_UNROLL
        for (int j = 0; j < 4; j++)
            if (k0 + j < n)
                gpurma_sh_load_packet16(gpurma_dcoll__ll16_slot(c, b, me,
                                                                gpurma_dcoll__ll16_after(me, k0 + j, n),
                                                                e) +
                                            2 + 2 * i,
                                        v[j]);
        GPURMA_UNROLL
        for (int j = 0; j < 4; j++) {
            if (k0 + j < n && rc == GPURMA_SUCCESS) {
                const int src = gpurma_dcoll__ll16_after(me, k0 + j, n);
                uint64_t d = 0;
                const uint64_t *slot = gpurma_dcoll__ll16_slot(c, b, me, src, e);
                rc = gpurma_dcoll__ll16_read(c, slot + 2 + 2 * i, slot, flag, v[j], &d,
                                             src == hsrc ? h : NULL, hv);
                stage[(size_t)src * stride] = d;
            }
        }
    }
    return rc;
}

/* Unit i of a broadcast's result: the root's own from its send, the
 * others' from the root's packet (with the root's header at h, hsrc the
 * root: polled together, as gpurma_dcoll__ll16_gather). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_bcast_unit(const gpurma_dev_coll_t *c,
                                                            const gpurma_dcoll__ll16_bases_t *b,
                                                            uint64_t e, const char *mine,
                                                            size_t bytes, size_t i, int root,
                                                            uint64_t *d, int hsrc,
                                                            const uint64_t *h, uint32_t hv[4])
{
    if (c->rank == root) {
        *d = gpurma_dcoll__ll16_unit(mine, bytes, i);
        return GPURMA_SUCCESS;
    }
    const uint64_t *slot = gpurma_dcoll__ll16_slot(c, b, c->rank, root, e);
    uint32_t v[4];
    gpurma_sh_load_packet16(slot + 2 + 2 * i, v);
    return gpurma_dcoll__ll16_read(c, slot + 2 + 2 * i, slot, (uint32_t)e, v, d,
                                   root == hsrc ? h : NULL, hv);
}

/* Unit i of the result from the stage: the sources reduced in rank order,
 * or each copied to its block. */
GPURMA_DEVICE void gpurma_dcoll__ll16_deliver(const gpurma_dev_coll_t *c, int reduces, char *out,
                                              size_t block, size_t bytes, size_t i,
                                              uint64_t *stage, size_t stride,
                                              gpurma_dtype_t dtype, gpurma_redop_t op)
{
    if (!reduces) {
        for (int src = 0; src < c->size; src++)
            gpurma_dcoll__ll16_store_unit(out + (size_t)src * block, bytes, i,
                                          stage[(size_t)src * stride]);
        return;
    }
    /* elements past the piece's end (zeros in every source) are reduced
     * too, and not stored */
    gpurma_dcoll__ll16_store_unit(
        out, bytes, i,
        gpurma_dev_reduce_unit8(stage, stride, c->size, dtype, op, (unsigned)c->size));
}

/* The collective on this channel at epoch e, the channel taken: every
 * member's part is `len` elements from element `lo` of each block (count
 * elements a block: gpurma_dcoll__share). Thread t serves the units t, t + nthreads, ...; its
 * stage (one 8-byte unit per source, stride apart) is its own. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_run(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__ll16_bases_t *b,
                                                     const gpurma_dcoll__grp_t *g, int kind,
                                                     void *recv, const void *send, size_t count,
                                                     size_t lo, size_t len, gpurma_dtype_t dtype,
                                                     gpurma_redop_t op, int root, uint64_t e,
                                                     uint64_t pre, uint64_t *stage, size_t stride)
{
    const int n = c->size, me = c->rank;
    const size_t es = gpurma_dev_dtype_size(dtype), block = count * es;
    const size_t bytes = len * es, units = gpurma_sh_div_ceil(bytes, 8);
    const int scatter = gpurma_dcoll__ll16_scatters(kind);
    const int bcast = kind == GPURMA_DCOLL__K_BROADCAST;
    const int reduces = kind == GPURMA_DCOLL__K_ALLREDUCE ||
                        kind == GPURMA_DCOLL__K_REDUCE_SCATTER || kind == GPURMA_DCOLL__K_REDUCE;
    /* A reduce's members other than the root take no data (recv is not
     * theirs to touch); every other member writes all of its units. */
    const size_t takes = kind == GPURMA_DCOLL__K_REDUCE && me != root ? 0 : units;
    /* A broadcast's members other than the root read nothing of send. */
    const size_t gives = bcast && me != root ? 0 : units;
    const char *in = gives ? (const char *)send + lo * es : 0;
    const char *mine = in + (scatter ? (size_t)me * block : 0);
    char *out = takes ? (char *)recv + lo * es : 0;
    const uint32_t flag = (uint32_t)e, print = gpurma_dcoll__ll16_print(c);
    gpurma_status_t rc = GPURMA_SUCCESS;

    /* Send: packet 0 the header (thread 0), packet 1 + i unit i of the
     * piece. */
    if (g->tid == 0)
        for (int k = 1; k < n; k++)
            gpurma_sh_store_packet16(
                gpurma_dcoll__ll16_slot(c, b, gpurma_dcoll__ll16_after(me, k, n), me, e), print,
                flag, (uint32_t)count, flag);
    for (size_t i = g->tid; i < gives; i += g->nthreads) {
        const uint64_t all = scatter             ? 0
                             : i == g->tid ? pre
                                           : gpurma_dcoll__ll16_unit(in, bytes, i);
        /* a scatter's units four peers at a time: loads in flight together,
         * few registers */
        for (int k0 = 1; k0 < n; k0 += 4) {
            uint64_t d[4];
            GPURMA_UNROLL
            for (int j = 0; j < 4; j++)
                if (scatter && k0 + j < n)
                    d[j] = gpurma_dcoll__ll16_unit(
                        in + (size_t)gpurma_dcoll__ll16_after(me, k0 + j, n) * block, bytes, i);
            GPURMA_UNROLL
            for (int j = 0; j < 4; j++)
                if (k0 + j < n &&
                    gpurma_dcoll__ll16_feeds(kind, me, gpurma_dcoll__ll16_after(me, k0 + j, n),
                                             root)) {
                    const uint64_t w = scatter ? d[j] : all;
                    gpurma_sh_store_packet16(
                        gpurma_dcoll__ll16_slot(c, b, gpurma_dcoll__ll16_after(me, k0 + j, n), me, e) +
                            2 + 2 * i,
                        (uint32_t)w, flag, (uint32_t)(w >> 32), flag);
                }
        }
    }
    rc = gpurma_dcoll__ll16_host_meet(c, g, e);

    /* Receive. In the first round, thread t < n - 1 also checks the header
     * of the member t + 1 places after this one, polled with that member's
     * packet when it reads one, and nothing is written before all agree: a
     * member that passed another call is refused with recv untouched, and
     * every unit of send was read (sent) before any is overwritten in
     * place. */
    for (size_t i = g->tid, round = 0;; i += g->nthreads, round++) {
        /* the first header this thread checks is loaded with its first
         * unit's packets */
        const int head = round == 0 && g->tid < (unsigned)n - 1;
        const int hsrc = head ? gpurma_dcoll__ll16_after(me, (int)g->tid + 1, n) : -1;
        const uint64_t *h = head ? gpurma_dcoll__ll16_slot(c, b, me, hsrc, e) : 0;
        uint32_t hv[4] = {0, 0, 0, 0};
        if (head)
            gpurma_sh_load_packet16(h, hv);
        if (rc == GPURMA_SUCCESS && i < takes)
            rc = bcast ? gpurma_dcoll__ll16_bcast_unit(c, b, e, mine, bytes, i, root, stage, hsrc,
                                                       h, hv)
                       : gpurma_dcoll__ll16_gather(c, b, e, mine, bytes, i, stage, stride, hsrc,
                                                   h, hv);
        if (round == 0) {
            for (unsigned t = g->tid; t < (unsigned)n - 1 && rc == GPURMA_SUCCESS;
                 t += g->nthreads) {
                if (t != g->tid) {
                    h = gpurma_dcoll__ll16_slot(c, b, me, gpurma_dcoll__ll16_after(me, (int)t + 1, n),
                                                e);
                    gpurma_sh_load_packet16(h, hv);
                }
                rc = gpurma_dcoll__ll16_head(c, h, flag, print, (uint64_t)count, hv);
            }
            rc = gpurma_dcoll__agree(g, rc);
        }
        if (rc != GPURMA_SUCCESS || i >= takes)
            break;
        if (bcast)
            gpurma_dcoll__ll16_store_unit(out, bytes, i, stage[0]);
        else
            gpurma_dcoll__ll16_deliver(c, reduces, out, block, bytes, i, stage, stride, dtype, op);
    }
    return gpurma_dcoll__agree(g, rc);
}

/* Whether LL16 can run a call whose largest piece is count elements of es
 * bytes, decided alike on every member: no proxied peer and none
 * unmapped, not too many members, no part beyond the slot. */
GPURMA_HOST_DEVICE int gpurma_dcoll__ll16_fits(const gpurma_dev_coll_t *c,
                                               const gpurma_dcoll__ll16_bases_t *b, size_t count,
                                               size_t es)
{
    /* the header carries the count in 32 bits (a slot holds far fewer
     * elements; the test is for a handle with a forged ll_slot) */
    int mapped = c->win.nports == 0 && c->size <= GPURMA_DCOLL_LL16_MAX_RANKS &&
                 c->nparts > 0 && count <= 0xffffffffu &&
                 gpurma_sh_div_ceil(count, c->nparts) * es <= gpurma_dcoll__ll16_cap(c);
    for (int p = 0; p < c->size && p < GPURMA_DCOLL_LL16_MAX_RANKS; p++)
        mapped &= b->at[p] != NULL;
    return mapped;
}

/* The state word of this channel that holds its LL16 epoch, in this
 * member's window as mapped here (also worked out on the host, for LL16's
 * own kernels: gpurma_coll_ll16_first_t). */
GPURMA_HOST_DEVICE uint64_t *gpurma_dcoll__ll16_word(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__ll16_bases_t *b)
{
    gpurma_dcoll__state_t *st = (gpurma_dcoll__state_t *)(b->at[c->rank] + c->state_off);
    return &st->reserved[GPURMA_DCOLL__LL16_EPOCH];
}

/* Claims the region of the epoch word `word`: thread 0 sets its in-use
 * bit (at device scope: only this GPU's kernels take it, the L2 answers)
 * and learns the epoch in the same round trip; the others read the word
 * beside it. What the word held, for gpurma_dcoll__ll16_settle. */
GPURMA_DEVICE uint64_t gpurma_dcoll__ll16_claim(const gpurma_dcoll__grp_t *g, uint64_t *word)
{
    return g->tid == 0 ? gpurma_sh_fetch_or_acquire_gpu_u64(word, 1) : *(volatile uint64_t *)word;
}

/* The call's epoch (*e) from what the claimed word held; refused for the
 * whole group when another call held the region (a call that runs beside
 * another here: not ours to give back). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_settle(const gpurma_dcoll__grp_t *g, uint64_t got,
                                                        uint64_t *e)
{
    *e = gpurma_dcoll__own_epoch(got) + 1;
    return gpurma_dcoll__agree(g, g->tid == 0 && (got & 1) ? GPURMA_ERR_INVALID_ARG
                                                           : GPURMA_SUCCESS);
}

/* What LL16's own kernel does before anything else, for a call the host
 * checked: the region claimed (its word and what that held) and, for a
 * call of one part, this thread's first unit of send (has_pre), so that
 * the two memory round trips before the first packet overlap each other
 * and the kernel's arguments are read after them. */
typedef struct {
    uint64_t *word;
    uint64_t  got, pre;
    int       has_pre;
} gpurma_dcoll__ll16_early_t;

/* The first unit of send thread tid sends (all but scatters send the same
 * to every peer; a broadcast's root alone sends): in, bytes of the piece. */
GPURMA_DEVICE uint64_t gpurma_dcoll__ll16_first_unit(int kind, int sends, const char *in,
                                                     size_t bytes, unsigned tid)
{
    return !gpurma_dcoll__ll16_scatters(kind) && sends && 8 * (size_t)tid < bytes
               ? gpurma_dcoll__ll16_unit(in, bytes, tid)
               : 0;
}

/* Takes this channel's LL16 region for a call whose largest piece is
 * count elements of es bytes: *e its epoch, *word the state word to give
 * back (gpurma_dcoll__ll16_give). Declines (GPURMA_DCOLL__DECLINED) what
 * the algorithm cannot run (gpurma_dcoll__ll16_fits), decided alike on
 * every member, unless LL16's own kernel claimed the region already
 * (early: a call the host checked). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_take(const gpurma_dev_coll_t *c,
                                                      const gpurma_dcoll__ll16_bases_t *b,
                                                      const gpurma_dcoll__grp_t *g, size_t count,
                                                      size_t es,
                                                      const gpurma_dcoll__ll16_early_t *early,
                                                      uint64_t **word, uint64_t *e)
{
    if (!early && !gpurma_dcoll__ll16_fits(c, b, count, es))
        return GPURMA_DCOLL__DECLINED;
    *word = early ? early->word : gpurma_dcoll__ll16_word(c, b);
    return gpurma_dcoll__ll16_settle(g, early ? early->got : gpurma_dcoll__ll16_claim(g, *word), e);
}

/* Gives the region back at epoch e. A failed call moves on too: its
 * packets may be out, and the next call must not take their flag for its
 * own; on CPU threads its peers learn it was abandoned (coll_proto.h). */
GPURMA_DEVICE void gpurma_dcoll__ll16_give(const gpurma_dev_coll_t *c,
                                           const gpurma_dcoll__grp_t *g, uint64_t *word,
                                           uint64_t e, gpurma_status_t rc)
{
    if (rc != GPURMA_SUCCESS)
        gpurma_dcoll__abandon(c, g, 1, e);
    if (g->tid == 0)
        *(volatile uint64_t *)word = e << 1;
    gpurma_dcoll__sync(g);
}

/* The LL16 bases of a call from a device-API call: every member's window
 * as mapped here, NULL where it is not mapped by load/store. */
GPURMA_DEVICE gpurma_dcoll__ll16_bases_t gpurma_dcoll__ll16_bases(const gpurma_dev_coll_t *c)
{
    gpurma_dcoll__ll16_bases_t b;
    for (int p = 0; p < GPURMA_DCOLL_LL16_MAX_RANKS; p++)
        b.at[p] = p < c->size && c->win.peers[p].path == GPURMA_DEV_PATH_LOADSTORE
                      ? c->win.peers[p].base
                      : NULL;
    return b;
}

/* The collectives of this algorithm with a stage the caller gives (its
 * own kernel: shared memory, stride = threads); other teams and pieces
 * are declined (the shared oneshot code runs them), decided the same way
 * on every member. The region is taken (a second LL16 collective on the
 * team at once is refused) and the epoch read in one memory round trip.
 * early: NULL, or what LL16's own kernel did first, for a call whose
 * handle the host library made and whose arguments (gpurma_dcoll__check)
 * and team (gpurma_dcoll__ll16_fits) it checked before the launch: the
 * kernel then starts on the packets without them. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__run_ll16_staged(const gpurma_dev_coll_t *c,
                                                            const gpurma_dcoll__ll16_bases_t *b,
                                                            const gpurma_dcoll__grp_t *g, int kind,
                                                            void *recv, const void *send,
                                                            size_t count, gpurma_dtype_t dtype,
                                                            gpurma_redop_t op, int root,
                                                            uint64_t *stage, size_t stride,
                                                            const gpurma_dcoll__ll16_early_t *early)
{
    gpurma_status_t rc = early ? GPURMA_SUCCESS : gpurma_dcoll__check(c, count, dtype, op, root);
    if (rc != GPURMA_SUCCESS)
        return rc;
    /* This thread's first unit of send, loaded while the channel is taken:
     * reading is safe before. */
    size_t lo, len;
    gpurma_dcoll__share(c, count, &lo, &len);
    const size_t es = gpurma_dev_dtype_size(dtype), bytes = len * es;
    const uint64_t pre =
        early && early->has_pre
            ? early->pre
            : gpurma_dcoll__ll16_first_unit(kind, kind != GPURMA_DCOLL__K_BROADCAST || c->rank == root,
                                            (const char *)send + lo * es, bytes, g->tid);
    uint64_t *word, e;
    rc = gpurma_dcoll__ll16_take(c, b, g, count, es, early, &word, &e);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dcoll__ll16_run(c, b, g, kind, recv, send, count, lo, len, dtype, op, root, e,
                                pre, stage, stride);
    gpurma_dcoll__ll16_give(c, g, word, e, rc);
    return rc;
}

/* The same with each thread's stage in its own memory (a device-API call
 * from any kernel, CPU threads). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__run_ll16(const gpurma_dev_coll_t *c,
                                                     const gpurma_dcoll__grp_t *g, int kind,
                                                     void *recv, const void *send, size_t count,
                                                     gpurma_dtype_t dtype, gpurma_redop_t op,
                                                     int root)
{
    uint64_t stage[GPURMA_DCOLL_LL16_MAX_RANKS];
    const gpurma_dcoll__ll16_bases_t b = gpurma_dcoll__ll16_bases(c);
    return gpurma_dcoll__run_ll16_staged(c, &b, g, kind, recv, send, count, dtype, op, root, stage,
                                         1, NULL);
}

#endif
