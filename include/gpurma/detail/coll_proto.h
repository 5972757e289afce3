/*
 * coll_proto.h - the collectives' protocol on a team's scratch
 * window: the handle, channels and parts, epochs, sends (after the
 * peer's acknowledgement), receives, acknowledgements, the barrier. The
 * algorithms (coll_oneshot.h, coll_twoshot.h, coll_ring.h) are built
 * from these.
 * Part of gpurma_coll_device.h (include that); compiles as CUDA, HIP and
 * plain C. Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_PROTO_H
#define GPURMA_DETAIL_COLL_PROTO_H

#include "gpurma_device.h"
#include "gpurma/detail/coll_algos.h"
#include "gpurma/detail/dev_reduce.h"

#define GPURMA_DEV_COLL_MAGIC 0x636f6c6cu /* "coll" */

/* Algorithms, numbered in the order of their list (coll_algos.h; the host
 * selector picks one per call; the device calls without _algo pick
 * ONESHOT_LL when a rank's share fits an LL slot and ONESHOT otherwise). */
#define GPURMA_COLL_ALGO__ENUM(ID, ...) GPURMA_COLL_ALGO_##ID,
typedef enum {
    GPURMA_COLL_ALGOS(GPURMA_COLL_ALGO__ENUM)
    GPURMA_COLL_ALGO__COUNT
} gpurma_coll_algo_t;
#undef GPURMA_COLL_ALGO__ENUM

typedef struct gpurma_dev_coll {
    gpurma_dev_win_t win;       /* the team's scratch window                   */
    uint64_t         slot;      /* bytes of one data slot                      */
    uint64_t         ll_slot;   /* payload bytes of one LL slot (multiple of 4) */
    /* The regions of this handle's channel, the same in every member. */
    uint64_t         state_off, data_off, ll_off, stage_off, ll16_off;
    int32_t          rank, size;
    uint32_t         magic;
    /* The call's fingerprint (which collective, count, dtype, op, root):
     * set by each call, sent after every piece, checked by its receivers. */
    uint32_t         print;
    /* Channels: independent copies of the regions and signals, so that
     * several blocks (or steps) work on parts of one collective at once.
     * This handle moves part `part` of `nparts` of the data, on channel
     * `part`; gpurma_coll_device gives part 0 of 1 (everything). */
    uint32_t         nchannels, part, nparts, sig_base;
    /* The call's count, set with the print and sent exactly beside it:
     * the 32-bit print cannot keep apart every pair of calls that differ
     * in count and another field at once (see gpurma_dcoll__print). */
    uint64_t         count;
    /* Nonzero once this process learned that a member of the team died
     * (the host's liveness checks set it: a wait of a host call,
     * gpurma_team_check_peers, ncclCommGetAsyncError); in memory the GPU
     * maps. The collectives' waits read it with their clock, and end with
     * GPURMA_ERR_PEER_FAILED rather than waiting out the timeout. NULL:
     * never set. */
    const uint64_t  *gone;
} gpurma_dev_coll_t;

#if !GPURMA_DEV_GPU
#ifdef __cplusplus
extern "C" {
#endif
/* Host backend: GPURMA_SUCCESS when c is a handle gpurma_coll_device made
 * (or gpurma_dev_coll_part of one) for a team not freed since: its window
 * handle is the scratch window's own and its regions, channels and part
 * are that window's layout; GPURMA_ERR_FREED once the team is freed;
 * GPURMA_ERR_INVALID_ARG for anything else, whose pointers and offsets are
 * not followed (coll/coll_scratch.c). Sets no message. */
GPURMA_API gpurma_status_t gpurma_dev_host_coll_state(const gpurma_dev_coll_t *c);
#ifdef __cplusplus
}
#endif
#endif

/* Whether a collective's wait must end: GPURMA_ERR_PEER_FAILED once a
 * member of the team is known dead (c->gone, read with the clock, every
 * 256 polls: a mapped host word costs a trip over the bus), TIMEOUT past
 * the window's timeout, else GPURMA_SUCCESS (wait on). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__wait_over(const gpurma_dev_coll_t *c, uint64_t iter,
                                                      uint64_t *start)
{
    if ((iter & 255) == 255 && c->gone && gpurma_sh_load_relaxed_u64(c->gone))
        return GPURMA_ERR_PEER_FAILED;
    return gpurma_dev__expired(iter, start, c->win.timeout_ns) ? GPURMA_ERR_TIMEOUT
                                                                : GPURMA_SUCCESS;
}

/* What this member keeps at the start of each channel's state region in
 * its own scratch window. */
typedef struct gpurma_dcoll__state {
    uint64_t epoch;
    /* [GPURMA_DCOLL__BUSY], [GPURMA_DCOLL__LAST_BARRIER]; coll_direct.h's
     * and coll_ll16.h's words (an algorithm with an epoch of its own keeps
     * it in one word, times two, plus 1 while a call holds it:
     * gpurma_dcoll__own_epoch) */
    uint64_t reserved[7];
    uint64_t last_write[]; /* [peer * 2 + parity] */
} gpurma_dcoll__state_t;

/* The signals of a team's scratch window with nch channels and n members:
 * ranges of n signals (one per source member), numbered here, in window
 * order. Each use takes its range's base from this map alone.
 *   [0, 2 nch)           the data signals and acknowledgements, 2 a channel
 *                        (channel p's first: GPURMA_DCOLL__RANGE_DATA(p))
 *   2 nch                the zero-copy record's slot 0 (coll_direct.h)
 *   [2 nch + 1, 3 nch + 1)  LL16's on CPU threads, 1 a channel (coll_ll16.h)
 *   [3 nch + 1, 4 nch + 1)  the barrier's, 1 a channel (below)
 *   4 nch + 1, 4 nch + 2    the zero-copy record's slots 1 and 2
 *   [4 nch + 3, 6 nch + 3)  abandoned calls on CPU threads, 2 a channel:
 *                        the shared protocol's, then LL16's (below)
 * coll_scratch.c makes the window with GPURMA_DCOLL__SIGNALS of them. */
#define GPURMA_DCOLL__RANGE_DATA(part)     (2u * (uint32_t)(part))
#define GPURMA_DCOLL__RANGE_DIRECT0(nch)   (2u * (uint32_t)(nch))
#define GPURMA_DCOLL__RANGE_LL16(nch)      (2u * (uint32_t)(nch) + 1u)
#define GPURMA_DCOLL__RANGE_BARRIER(nch)   (3u * (uint32_t)(nch) + 1u)
#define GPURMA_DCOLL__RANGE_DIRECT(nch, k) (4u * (uint32_t)(nch) + (uint32_t)(k))
#define GPURMA_DCOLL__RANGE_ABANDON(nch, part, ll16) \
    (4u * (uint32_t)(nch) + 3u + 2u * (uint32_t)(part) + (uint32_t)(ll16))
#define GPURMA_DCOLL__SIGNALS(nch, n)      ((6u * (uint32_t)(nch) + 3u) * (uint32_t)(n))

/* The epoch in an algorithm's own epoch word (the low bit: in use). */
GPURMA_HOST_DEVICE uint64_t gpurma_dcoll__own_epoch(uint64_t word)
{
    return word >> 1;
}

/* The state word that is 1 while a collective runs on this channel: a
 * second one at the same time (two threads or streams on one team) is
 * refused instead of sharing epochs and slots with it. */
#define GPURMA_DCOLL__BUSY 3

/* What an algorithm with code of its own returns for a call it leaves to
 * the shared code (another node, a large team, a large piece); never a
 * status of the API. */
#define GPURMA_DCOLL__DECLINED ((gpurma_status_t)0x4000)

/* Which collective a call is, for its fingerprint. */
enum {
    GPURMA_DCOLL__K_BARRIER = 1, GPURMA_DCOLL__K_BROADCAST, GPURMA_DCOLL__K_ALLGATHER,
    GPURMA_DCOLL__K_ALLTOALL, GPURMA_DCOLL__K_ALLTOALLV, GPURMA_DCOLL__K_REDUCE,
    GPURMA_DCOLL__K_REDUCE_SCATTER, GPURMA_DCOLL__K_ALLREDUCE
};

/* A call's fingerprint: members that pass another collective, count,
 * dtype, op or root differ here (never 0, so that a zeroed slot never
 * matches). The print is 1 + (f + count x K) mod (2^32 - 1), K prime to
 * the modulus and f the other fields packed side by side: kind (5 bits),
 * dtype (4), op (3), root + 2 (the rest; alltoallv's agreement passes
 * roots -2 and -1). For one count, two calls share a print only when
 * their fields are the same (roots below 2^20 - 3; larger ones wrap).
 * For one set of fields, two counts share a print only when they differ
 * by a multiple of 2^32 - 1. A call that differs in the count and in
 * another field at once can still share a print, so every piece also
 * carries the count itself (gpurma_dev_coll_t.count), compared exactly:
 * with the two, calls that differ in any field are told apart. A 32-bit
 * hash of everything let colliding counts, found in seconds, return
 * SUCCESS with stale bytes (2026-11-26). */
GPURMA_HOST_DEVICE uint64_t gpurma_dcoll__mod_2p32m1(uint64_t x)
{
    /* 2^32 = 1 modulo 2^32 - 1: fold the high word onto the low one */
    x = (x & 0xffffffffull) + (x >> 32);
    x = (x & 0xffffffffull) + (x >> 32);
    return x >= 0xffffffffull ? x - 0xffffffffull : x;
}

GPURMA_HOST_DEVICE uint32_t gpurma_dcoll__print(int kind, size_t count, gpurma_dtype_t dtype,
                                                gpurma_redop_t op, int root)
{
    const uint64_t k = 0x9e3779b1ull; /* prime, and prime to 2^32 - 1 = 3 x 5 x 17 x 257 x 65537 */
    /* Out of range fields (refused before anything is sent) only mix. */
    const uint64_t f = (uint64_t)(uint32_t)kind | (uint64_t)(uint32_t)dtype << 5 |
                       (uint64_t)(uint32_t)op << 9 | (uint64_t)((int64_t)root + 2) << 12;
    const uint64_t c = gpurma_dcoll__mod_2p32m1((uint64_t)count);
    return (uint32_t)(1 + gpurma_dcoll__mod_2p32m1(gpurma_dcoll__mod_2p32m1(f) +
                                                   gpurma_dcoll__mod_2p32m1(c * k)));
}

/* Sets the fingerprint of a call: its print and its exact count. */
GPURMA_HOST_DEVICE void gpurma_dcoll__set_call(gpurma_dev_coll_t *c, int kind, size_t count,
                                               gpurma_dtype_t dtype, gpurma_redop_t op, int root)
{
    c->print = gpurma_dcoll__print(kind, count, dtype, op, root);
    c->count = (uint64_t)count;
}

/* A fingerprint for the same call run by another algorithm (one with
 * code of its own that shares oneshot's slots); never 0 either. */
GPURMA_HOST_DEVICE uint32_t gpurma_dcoll__print_algo(uint32_t print, int algo)
{
    uint32_t p = (print ^ ((uint32_t)algo * 0x9e3779b9u)) * 0x85ebca6bu;
    return p ? p : 1;
}

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
 * signals are made by thread 0 only). The sync also orders memory: what
 * thread 0 acquired (a peer's data behind its signal), every thread of
 * the group sees after it. A warp's vote orders nothing, so the warp
 * meets at a warp barrier first. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__agree(const gpurma_dcoll__grp_t *g,
                                                  gpurma_status_t rc)
{
#if GPURMA_DEV_GPU
    if (g->scope == 2)
        return gpurma_sh_block_any(rc != GPURMA_SUCCESS) ? (rc ? rc : GPURMA_ERR_INTERNAL) : rc;
    if (g->scope == 1) {
        gpurma_sh_sync_warp();
        return gpurma_sh_warp_any(rc != GPURMA_SUCCESS) ? (rc ? rc : GPURMA_ERR_INTERNAL) : rc;
    }
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

/* The regions of a channel, in window order. */
#define GPURMA_DCOLL__REGIONS 5

/* Bytes of one channel's copy of each region, for a team of n: state,
 * data, LL, stage and LL16 (coll_ll16.h: the same span as LL); the window
 * holds nchannels of each. */
GPURMA_HOST_DEVICE void gpurma_dcoll__channel_bytes(int n, uint64_t slot, uint64_t ll_slot,
                                                    uint64_t sizes[GPURMA_DCOLL__REGIONS])
{
    sizes[0] = gpurma_dcoll__state_bytes(n);
    sizes[1] = 2 * (uint64_t)n * slot;
    sizes[2] = 2 * (uint64_t)n * gpurma_dcoll__ll_span(ll_slot);
    sizes[3] = (uint64_t)n * ll_slot;
    sizes[4] = sizes[2];
}

/* The handle's region offsets, in the order of channel_bytes. */
#define GPURMA_DCOLL__OFFSETS(h)                                                               \
    { &(h)->state_off, &(h)->data_off, &(h)->ll_off, &(h)->stage_off, &(h)->ll16_off }

/* The handle for part `part` of `nparts` (on channel `part`), from the
 * handle of channel 0; nparts 0 when the window has too few channels (the
 * calls then return INVALID_ARG). */
GPURMA_HOST_DEVICE gpurma_dev_coll_t gpurma_dev_coll_part(gpurma_dev_coll_t c, unsigned part,
                                                         unsigned nparts)
{
    uint64_t sz[GPURMA_DCOLL__REGIONS];
    uint64_t *offs[GPURMA_DCOLL__REGIONS] = GPURMA_DCOLL__OFFSETS(&c);
    gpurma_dcoll__channel_bytes(c.size, c.slot, c.ll_slot, sz);
    const int fits = part < nparts && nparts <= c.nchannels;
    /* From this handle's channel to channel `part` (channel 0 when refused). */
    const unsigned to = fits ? part : 0;
    for (int k = 0; k < GPURMA_DCOLL__REGIONS; k++)
        *offs[k] = *offs[k] - c.part * sz[k] + to * sz[k];
    if (!fits) {
        c.part = 0, c.nparts = 0, c.sig_base = 0;
        return c;
    }
    c.part = part, c.nparts = nparts;
    c.sig_base = GPURMA_DCOLL__RANGE_DATA(part) * (uint32_t)c.size;
    return c;
}

/* This part's elements [*lo, *lo + *len) of count. */
GPURMA_DEVICE void gpurma_dcoll__share(const gpurma_dev_coll_t *c, size_t count, size_t *lo,
                                       size_t *len)
{
    uint64_t a, b;
    gpurma_sh_split(count, c->part, c->nparts, &a, &b);
    *lo = (size_t)a, *len = (size_t)(b - a);
}

/* A slot's trailer, after the data: the call's count, then the
 * fingerprint word (gpurma_dcoll__trailer). A data slot's last 16 bytes
 * hold the two words; an LL slot's last three packets hold the count's
 * low and high halves and the print, each flagged with the epoch. */
#define GPURMA_DCOLL__TRAILER_BYTES 16      /* a data slot's                */
#define GPURMA_DCOLL__LL_TRAILER_PAYLOAD 12 /* an LL slot's, in three packets */

/* The smallest slots a handle may have (gpurma_dcoll__check): every step
 * then carries at least one element of every dtype beside the trailer. */
#define GPURMA_DCOLL__MIN_SLOT 32

/* Where a slot's trailer starts, from the slot's start. Pieces stop before
 * it (gpurma_dcoll__step_bytes). */
GPURMA_HOST_DEVICE size_t gpurma_dcoll__trailer_at(const gpurma_dev_coll_t *c, int ll)
{
    return ll ? (size_t)gpurma_dcoll__ll_span(c->ll_slot) - 2 * GPURMA_DCOLL__LL_TRAILER_PAYLOAD
              : (size_t)c->slot - GPURMA_DCOLL__TRAILER_BYTES;
}

/* The fingerprint word a piece of epoch e carries: the epoch's low 32
 * bits over the call's print (an LL packet's layout, flag over payload),
 * so that neither a piece of another call nor a stale one passes. */
GPURMA_HOST_DEVICE uint64_t gpurma_dcoll__trailer(const gpurma_dev_coll_t *c, uint64_t e)
{
    return (uint64_t)(uint32_t)e << 32 | c->print;
}

/* Data bytes one slot carries: all but the trailer (0 for a slot below
 * GPURMA_DCOLL__MIN_SLOT, which the calls refuse). */
GPURMA_HOST_DEVICE size_t gpurma_dcoll__slot_data(const gpurma_dev_coll_t *c, int ll)
{
    const uint64_t room = ll ? c->ll_slot : c->slot;
    const uint64_t trailer = ll ? GPURMA_DCOLL__LL_TRAILER_PAYLOAD : GPURMA_DCOLL__TRAILER_BYTES;
    return room >= GPURMA_DCOLL__MIN_SLOT ? (size_t)(room - trailer) : 0;
}

/* Puts the trailer of this call's piece of epoch e into peer's slot at
 * `at` (of peer's window): thread 0 only, before the piece's signal. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__put_trailer(const gpurma_dev_coll_t *c, int peer,
                                                        size_t at, uint64_t e, int ll)
{
    at += gpurma_dcoll__trailer_at(c, ll);
    gpurma_status_t rc;
    if (!ll) {
        rc = gpurma_dev_put_value(c->win, peer, at, c->count, 8);
        return rc != GPURMA_SUCCESS ? rc
                                    : gpurma_dev_put_value(c->win, peer, at + 8,
                                                           gpurma_dcoll__trailer(c, e), 8);
    }
    /* LL: one 8-byte store of (flag, payload) per packet */
    const uint64_t flag = (uint64_t)(uint32_t)e << 32;
    rc = gpurma_dev_put_value(c->win, peer, at, flag | (uint32_t)c->count, 8);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev_put_value(c->win, peer, at + 8, flag | (uint32_t)(c->count >> 32), 8);
    return rc != GPURMA_SUCCESS ? rc
                                : gpurma_dev_put_value(c->win, peer, at + 16,
                                                       gpurma_dcoll__trailer(c, e), 8);
}

/* Waits until this member's signal sig reaches v. On CPU threads through
 * the host call gpurma_wait_until: it spins while each rank has a core,
 * then yields, and notices a dead member (GPURMA_ERR_PEER_FAILED, with a
 * message naming it) instead of only timing out. On a GPU it also ends
 * once the host knows a member dead (gpurma_dcoll__wait_over). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__wait(const gpurma_dev_coll_t *c, uint32_t sig,
                                                 uint64_t v)
{
    gpurma_status_t rc = gpurma_dev__check_win(&c->win);
    if (rc != GPURMA_SUCCESS)
        return rc;
#if !GPURMA_DEV_GPU
    return gpurma_wait_until((gpurma_win_t)c->win.host_win, sig, GPURMA_CMP_GE, v);
#else
    if (sig >= c->win.num_signals)
        return GPURMA_ERR_INVALID_ARG;
    const uint64_t *word = &c->win.signals[sig].value;
    uint64_t start = 0;
    for (uint64_t iter = 0;; iter++) {
        if (gpurma_sh_load_acquire_u64(word) >= v)
            return GPURMA_SUCCESS;
        const gpurma_status_t over = gpurma_dcoll__wait_over(c, iter, &start);
        if (over != GPURMA_SUCCESS)
            return over;
        gpurma_sh_pause_n(iter);
    }
#endif
}

/* Abandoned calls (CPU threads). A member whose call failed moves its
 * epoch on, but the pieces it sent stay in its peers' windows. A peer that
 * comes to that call late, or refused it alone for its own arguments and
 * so did not move on, would take them for its next call's and return
 * SUCCESS with data of a call its peers gave up. So a member whose call
 * failed tells every peer the call's last epoch (one signal per source in
 * each epoch domain: the shared protocol's, ll16 0, and LL16's, ll16 1),
 * and a receiver refuses a source's piece of an epoch at or below what the
 * source abandoned. On a GPU a failed call traps its kernel: nothing comes
 * after it. */
GPURMA_HOST_DEVICE uint32_t gpurma_dcoll__abandon_sig(const gpurma_dev_coll_t *c, int ll16,
                                                      int src)
{
    return GPURMA_DCOLL__RANGE_ABANDON(c->nchannels, c->part, ll16) * (uint32_t)c->size +
           (uint32_t)src;
}

/* Tells every peer that this member's call of last epoch e failed. */
GPURMA_DEVICE void gpurma_dcoll__abandon(const gpurma_dev_coll_t *c, const gpurma_dcoll__grp_t *g,
                                         int ll16, uint64_t e)
{
#if !GPURMA_DEV_GPU
    for (int k = 1; k < c->size && g->tid == 0; k++)
        (void)gpurma_dev_signal(c->win, (c->rank + k) % c->size,
                                gpurma_dcoll__abandon_sig(c, ll16, c->rank), GPURMA_SIGNAL_SET, e);
#else
    (void)c, (void)g, (void)ll16, (void)e;
#endif
}

/* INVALID_ARG when src gave up its call of epoch e (its piece there is of
 * a call that failed), else SUCCESS. Thread 0 only, after the piece came. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__check_abandoned(const gpurma_dev_coll_t *c, int ll16,
                                                            int src, uint64_t e)
{
#if !GPURMA_DEV_GPU
    uint64_t gave_up = 0;
    gpurma_status_t rc = gpurma_signal_read((gpurma_win_t)c->win.host_win,
                                            gpurma_dcoll__abandon_sig(c, ll16, src), &gave_up);
    return rc != GPURMA_SUCCESS ? rc : gave_up >= e ? GPURMA_ERR_INVALID_ARG : GPURMA_SUCCESS;
#else
    (void)c, (void)ll16, (void)src, (void)e;
    return GPURMA_SUCCESS;
#endif
}

/* Sends bytes at src to peer's slot of this member for epoch e: after the
 * peer acknowledged the last epoch written to that parity. ll: as LL
 * packets (the flag is the epoch), else a put and the data signal. An
 * empty piece goes too, fingerprint only: a member that passed a count of
 * 0 (or whose share of a step is empty) is still compared with its peers,
 * so it cannot return at once beside peers that passed more. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__send(const gpurma_dev_coll_t *c,
                                                 const gpurma_dcoll__grp_t *g, int peer,
                                                 const void *src, size_t bytes, uint64_t e,
                                                 int ll)
{
    const int n = c->size, q = (int)(e & 1);
    gpurma_dcoll__state_t *st = gpurma_dcoll__state(c);
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (g->tid == 0)
        rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)(n + peer), st->last_write[peer * 2 + q]);
    rc = gpurma_dcoll__agree(g, rc);
    if (rc != GPURMA_SUCCESS)
        return rc;
    size_t slot = (size_t)(q * n + c->rank);
    if (ll) {
        const size_t at = (size_t)c->ll_off + slot * (size_t)gpurma_dcoll__ll_span(c->ll_slot);
        rc = gpurma_dev_put_packets_coop(c->win, peer, at, src, bytes, (uint32_t)e, g->tid,
                                         g->nthreads);
        /* The trailer in the slot's last packets, flagged like the data. */
        if (rc == GPURMA_SUCCESS && g->tid == 0)
            rc = gpurma_dcoll__put_trailer(c, peer, at, e, 1);
        gpurma_dcoll__sync(g);
#if !GPURMA_DEV_GPU
        /* CPU threads wait for a signal, not for the flags (see recv). */
        if (rc == GPURMA_SUCCESS && g->tid == 0)
            rc = gpurma_dev_signal(c->win, peer, c->sig_base + (uint32_t)c->rank,
                                   GPURMA_SIGNAL_SET, e);
#endif
    } else if (g->nthreads == 1) {
        rc = gpurma_dcoll__put_trailer(c, peer, (size_t)c->data_off + slot * c->slot, e, 0);
        if (rc == GPURMA_SUCCESS)
            rc = bytes ? gpurma_dev_put_signal(c->win, peer, (size_t)c->data_off + slot * c->slot,
                                           src, bytes, c->sig_base + (uint32_t)c->rank,
                                           GPURMA_SIGNAL_SET, e)
                   : gpurma_dev_signal(c->win, peer, c->sig_base + (uint32_t)c->rank,
                                       GPURMA_SIGNAL_SET, e);
    } else {
        if (bytes)
            rc = gpurma_dev_put_coop(c->win, peer, (size_t)c->data_off + slot * c->slot, src,
                                     bytes, g->tid, g->nthreads);
        if (rc == GPURMA_SUCCESS && g->tid == 0)
            rc = gpurma_dcoll__put_trailer(c, peer, (size_t)c->data_off + slot * c->slot, e, 0);
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

/* Whether src's piece of epoch e in slot (at `at` of this member's
 * window) carries this call's fingerprint and count: INVALID_ARG when src
 * passed another collective, count, dtype, op or root, or is at another
 * epoch (the team's members fell out of step after an earlier error).
 * The count is compared exactly, so a rank that passed another count is
 * refused even where the two prints are the same. Thread 0 only, after
 * the piece arrived. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__check_print(const gpurma_dev_coll_t *c, size_t at,
                                                        uint64_t e, int ll)
{
    const char *trailer = c->win.peers[c->rank].base + at + gpurma_dcoll__trailer_at(c, ll);
    if (!ll) {
        const volatile uint64_t *w = (const volatile uint64_t *)(const void *)trailer;
        return w[1] == gpurma_dcoll__trailer(c, e) && w[0] == c->count ? GPURMA_SUCCESS
                                                                       : GPURMA_ERR_INVALID_ARG;
    }
    uint32_t got[3] = {0, 0, 0}; /* count low, count high, print */
    gpurma_status_t rc =
        gpurma_dev_read_packets_coop(c->win, at + gpurma_dcoll__trailer_at(c, 1), got,
                                     GPURMA_DCOLL__LL_TRAILER_PAYLOAD, (uint32_t)e, 0, 1);
    if (rc != GPURMA_SUCCESS)
        return rc;
    return got[2] == c->print && ((uint64_t)got[1] << 32 | got[0]) == c->count
               ? GPURMA_SUCCESS
               : GPURMA_ERR_INVALID_ARG;
}

/* Waits for src's data of epoch e (bytes long) and sets *data to it, in
 * this member's window; checks the piece's fingerprint, also when the
 * piece is empty (see send). */
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
        const size_t at = (size_t)c->ll_off + slot * (size_t)gpurma_dcoll__ll_span(c->ll_slot);
        char *stage = base + c->stage_off + (size_t)src * c->ll_slot;
#if !GPURMA_DEV_GPU
        /* CPU threads: the sender signals after its packets (see send), so
         * that a dead sender is noticed here rather than by a timeout. */
        if (g->tid == 0)
            rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)src, e);
        if (rc == GPURMA_SUCCESS && g->tid == 0)
            rc = gpurma_dcoll__check_abandoned(c, 0, src, e);
        rc = gpurma_dcoll__agree(g, rc);
        if (rc != GPURMA_SUCCESS)
            return rc;
#endif
        /* The fingerprint first: a piece of another length never completes */
        if (g->tid == 0)
            rc = gpurma_dcoll__check_print(c, at, e, 1);
        rc = gpurma_dcoll__agree(g, rc);
        if (bytes && rc == GPURMA_SUCCESS)
            rc = gpurma_dev_read_packets_coop(c->win, at, stage, bytes, (uint32_t)e, g->tid,
                                               g->nthreads);
        *data = stage;
    } else {
        const size_t at = (size_t)c->data_off + slot * c->slot;
        if (g->tid == 0)
            rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)src, e);
        if (rc == GPURMA_SUCCESS && g->tid == 0)
            rc = gpurma_dcoll__check_print(c, at, e, 0);
        if (rc == GPURMA_SUCCESS && g->tid == 0)
            rc = gpurma_dcoll__check_abandoned(c, 0, src, e);
        *data = base + at;
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

/* Waits until peer gave back its slot of this member's piece of epoch e
 * (gpurma_dcoll__consumed). A member that only sends in a call (the
 * others in a reduce) ends with it: a peer that passed another call
 * refuses the piece and never gives the slot back, so the sender fails
 * too (a timeout) instead of returning success. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__await_consumed(const gpurma_dev_coll_t *c,
                                                           const gpurma_dcoll__grp_t *g,
                                                           int peer, uint64_t e)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (g->tid == 0)
        rc = gpurma_dcoll__wait(c, c->sig_base + (uint32_t)(c->size + peer), e);
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
        rc = gpurma_dev_flush_local(c->win, GPURMA_ALL_PEERS);
    return gpurma_dcoll__agree(g, rc);
}

GPURMA_DEVICE uint64_t gpurma_dcoll__epoch(const gpurma_dev_coll_t *c)
{
    return gpurma_dcoll__state(c)->epoch;
}

/* Takes this channel for one collective: INVALID_ARG (and nothing sent)
 * when another is running on it now (another thread, stream or block on
 * the same team), which would share its epochs and slots. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__begin(const gpurma_dev_coll_t *c,
                                                  const gpurma_dcoll__grp_t *g)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (g->tid == 0 &&
        gpurma_sh_cas_u64(&gpurma_dcoll__state(c)->reserved[GPURMA_DCOLL__BUSY], 0, 1) != 0)
        rc = GPURMA_ERR_INVALID_ARG;
    return gpurma_dcoll__agree(g, rc);
}

/* Every thread has read the old epoch before thread 0 stores the new one
 * and gives the channel back; a failed call is abandoned (above). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__finish(const gpurma_dev_coll_t *c,
                                                   const gpurma_dcoll__grp_t *g, uint64_t e,
                                                   gpurma_status_t rc)
{
    rc = gpurma_dcoll__agree(g, rc);
    if (rc != GPURMA_SUCCESS)
        gpurma_dcoll__abandon(c, g, 0, e);
    if (g->tid == 0) {
        gpurma_dcoll__state(c)->epoch = e;
        gpurma_sh_store_release_u64(&gpurma_dcoll__state(c)->reserved[GPURMA_DCOLL__BUSY], 0);
    }
    gpurma_dcoll__sync(g);
    return rc;
}

/* Step e's len bytes from every member into dst, reduced in rank order (so
 * every rank computes the same bytes), then the members' slots given back. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__recv_reduce(const gpurma_dev_coll_t *c,
                                                        const gpurma_dcoll__grp_t *g, void *dst,
                                                        size_t len, uint64_t e, int ll,
                                                        gpurma_dtype_t dtype, gpurma_redop_t op)
{
    const int n = c->size;
    const size_t slot_stride = ll ? (size_t)c->ll_slot : (size_t)c->slot;
    const char *first = 0;
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (int src = 0; src < n && rc == GPURMA_SUCCESS; src++) {
        const char *d = 0;
        rc = gpurma_dcoll__recv(c, g, src, len, e, ll, &d);
        if (!src)
            first = d;
    }
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_dcoll__sync(g);
    /* The slots of sources 0..n-1 are slot_stride apart in one parity. */
    if (len)
        gpurma_dev_reduce_coop(dst, first, first + slot_stride, slot_stride, n,
                               len / gpurma_dev_dtype_size(dtype), dtype, op, (unsigned)n, g->tid,
                               g->nthreads);
    for (int src = 0; src < n && rc == GPURMA_SUCCESS; src++)
        rc = gpurma_dcoll__consumed(c, g, src, e);
    return rc;
}

/* Bytes a step carries per rank: an LL slot or a data slot. */
GPURMA_DEVICE size_t gpurma_dcoll__step_bytes(const gpurma_dev_coll_t *c, int ll, size_t es)
{
    return gpurma_dcoll__slot_data(c, ll) / es * es;
}

/* The handle, dtype, op and root, and a count whose buffers fit: the
 * largest (allgather's recv, alltoall's send and recv) holds count elements
 * per member, so count * element size * members must not wrap. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__check(const gpurma_dev_coll_t *c, size_t count,
                                                  gpurma_dtype_t dtype, gpurma_redop_t op,
                                                  int root)
{
#if GPURMA_DEV_GPU
    gpurma_status_t rc = c->magic == GPURMA_DEV_COLL_MAGIC && c->part < c->nparts
                             ? gpurma_dev__check_win(&c->win)
                             : GPURMA_ERR_INVALID_ARG;
#else
    gpurma_status_t rc = c->magic == GPURMA_DEV_COLL_MAGIC ? gpurma_dev_host_coll_state(c)
                                                           : GPURMA_ERR_INVALID_ARG;
#endif
    if (rc == GPURMA_SUCCESS &&
        (c->slot < GPURMA_DCOLL__MIN_SLOT || c->ll_slot < GPURMA_DCOLL__MIN_SLOT ||
         !gpurma_dev_redop_valid(dtype, op) || root < 0 || root >= c->size ||
         gpurma_sh_mul_wraps(count, gpurma_dev_dtype_size(dtype) * (size_t)c->size)))
        rc = GPURMA_ERR_INVALID_ARG;
    return rc;
}

/* ------------------------------------------------------------ collectives */

/* -------------------------------------------------------------- barrier */

/* The state word where a member keeps its count of calls on the channel
 * at its last barrier (0: none yet; see gpurma_dcoll__barrier_round). */
#define GPURMA_DCOLL__LAST_BARRIER 6

/* The signal through which src tells this member that it reached a
 * barrier: one per source and channel, after LL16's (coll_scratch.c sizes
 * the window). Barriers alone write it, so no collective's step can pass
 * for a barrier's arrival, and no barrier's for a collective's piece. */
GPURMA_HOST_DEVICE uint32_t gpurma_dcoll__barrier_sig(const gpurma_dev_coll_t *c, int src)
{
    return (GPURMA_DCOLL__RANGE_BARRIER(c->nchannels) + c->part) * (uint32_t)c->size +
           (uint32_t)src;
}

/* What a barrier that is call e on the channel signals: e's low 32 bits
 * over those of the sender's previous barrier there. The second half tells
 * a member still waiting at e that a sender already in a later barrier
 * came through a barrier at e, and not through a collective (see
 * gpurma_dcoll__barrier_seen). Never 0, the value of a slot never
 * signalled. */
GPURMA_HOST_DEVICE uint64_t gpurma_dcoll__barrier_word(uint64_t e, uint64_t prev)
{
    const uint64_t w = (uint64_t)(uint32_t)e << 32 | (uint32_t)prev;
    return w ? w : 1;
}

/* What src's last barrier word w tells a member in the barrier that is
 * its call e: 1 src reached it, 0 not yet, -1 src's call e was not a
 * barrier (it signals from a later barrier whose previous one is not e).
 * A sender is never more than one barrier ahead: its next barrier after e
 * waits for this member's arrival there. Counts are compared modulo 2^32
 * (members 2^31 calls apart are not told apart). */
GPURMA_HOST_DEVICE int gpurma_dcoll__barrier_seen(uint64_t w, uint64_t e)
{
    const int32_t ahead = (int32_t)((uint32_t)(w >> 32) - (uint32_t)e);
    if (!w || ahead < 0)
        return 0;
    return ahead == 0 || (uint32_t)w == (uint32_t)e ? 1 : -1;
}

/* Whether src has sent this member a collective's piece of epoch e: its
 * data signal is e (GPU LL steps raise none: there, the LL trailer's
 * print packet carries e as its flag). Barriers raise neither, so a
 * member in a barrier that sees one is beside a collective. */
GPURMA_DEVICE int gpurma_dcoll__step_seen(const gpurma_dev_coll_t *c, int src, uint64_t e)
{
    if (gpurma_sh_load_relaxed_u64(&c->win.signals[c->sig_base + (uint32_t)src].value) == e)
        return 1;
#if GPURMA_DEV_GPU
    const size_t slot = (size_t)((e & 1) * (uint64_t)c->size + (uint64_t)src);
    const size_t at = (size_t)c->ll_off + slot * (size_t)gpurma_dcoll__ll_span(c->ll_slot) +
                      gpurma_dcoll__trailer_at(c, 1) + 16;
    uint32_t print, flag;
    gpurma_sh_load_packet8((const uint64_t *)(const void *)(c->win.peers[c->rank].base + at),
                           &print, &flag);
    return flag == (uint32_t)e;
#else
    return 0;
#endif
}

/* Waits for src's arrival at the barrier of epoch e, call `call` on the
 * channel (gpurma_dcoll__barrier_round). Acquire: the word
 * is read with ld.acquire.sys, and src stored it (relaxed, strong) after
 * a fence.acq_rel.sys, a release pattern in the PTX memory model; the load
 * that observes it (or src's later word, stored after a later fence of
 * src) synchronizes with that fence, so everything before src's fence,
 * and everything src's fence was cumulative over, happens before what
 * this thread does next. On CPU threads the same in C11 (release fence,
 * relaxed store; acquire load), and the wait is the host call, which
 * notices a dead member (GPURMA_ERR_PEER_FAILED) instead of timing out. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__barrier_wait(const gpurma_dev_coll_t *c, int src,
                                                         uint64_t e, uint64_t call)
{
    const uint32_t sig = gpurma_dcoll__barrier_sig(c, src);
    const uint64_t *word = &c->win.signals[sig].value;
#if GPURMA_DEV_GPU
    uint64_t start = 0;
    for (uint64_t iter = 0;; iter++) {
        const int seen = gpurma_dcoll__barrier_seen(gpurma_sh_load_acquire_u64(word), call);
        if (seen)
            return seen > 0 ? GPURMA_SUCCESS : GPURMA_ERR_INVALID_ARG;
        /* Now and then: two more loads between polls would delay the
         * arrival's detection, and a mismatch needs no speed. */
        if ((iter & 63) == 63 && gpurma_dcoll__step_seen(c, src, e))
            return GPURMA_ERR_INVALID_ARG;
        const gpurma_status_t over = gpurma_dcoll__wait_over(c, iter, &start);
        if (over != GPURMA_SUCCESS)
            return over;
        gpurma_sh_pause_n(iter);
    }
#else
    /* The word changes at most twice while this member waits (src's
     * barrier at e, then its next one), so the waits for a change are
     * few, each bounded by the timeout. */
    for (;;) {
        const uint64_t w = gpurma_sh_load_acquire_u64(word);
        const int seen = gpurma_dcoll__barrier_seen(w, call);
        if (seen)
            return seen > 0 ? GPURMA_SUCCESS : GPURMA_ERR_INVALID_ARG;
        if (gpurma_dcoll__step_seen(c, src, e))
            return GPURMA_ERR_INVALID_ARG;
        gpurma_status_t rc =
            gpurma_wait_until((gpurma_win_t)c->win.host_win, sig, GPURMA_CMP_NE, w);
        if (rc != GPURMA_SUCCESS)
            return rc == GPURMA_ERR_TIMEOUT && gpurma_dcoll__step_seen(c, src, e)
                       ? GPURMA_ERR_INVALID_ARG
                       : rc;
    }
#endif
}

/* The barrier's network part, by one thread: takes the channel, one
 * fence, one relaxed store to every peer, a wait for every peer.
 * The word counts the member's calls on the channel, not only its epochs:
 * an algorithm with a counter of its own (LL16: state word own_epoch)
 * moves no epoch, and a peer whose call there was such a collective must
 * not pass, at its next barrier, for a peer in this one.
 *
 * Ordering (PTX memory model; C11 on CPU threads):
 * - The CAS that takes the channel is an acquire at device scope: the
 *   epoch read after it is the one the channel's last user (a thread of
 *   this GPU) wrote before the fence that preceded its release of BUSY.
 * - The one fence.acq_rel.sys comes after the group's bar.sync (or
 *   __syncwarp) and before the stores to the peers: each store is then a
 *   release pattern, cumulative over everything this thread did and
 *   everything it observed through the group's barrier, so every
 *   participating thread's earlier loads and stores, including stores
 *   into peers' memory through mapped windows, precede it in causality
 *   order. A peer that observes the store with an acquire load (the wait
 *   above), and the peer's group after its own bar.sync, sees them all.
 * - The same fence orders this member's epoch words before the relaxed
 *   store that gives the channel back, for its next user.
 * - Peers reached through the port engine or a host call get the signal
 *   of the device API instead (a release of its own; a port signal is
 *   ordered after this thread's earlier operations to that peer, as any
 *   signal is).
 * No fence after the waits: the acquire loads order what follows. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__barrier_round(const gpurma_dev_coll_t *c,
                                                          int own_epoch)
{
    gpurma_dcoll__state_t *st = gpurma_dcoll__state(c);
    if (gpurma_dcoll__barrier_sig(c, c->size - 1) >= c->win.num_signals)
        return GPURMA_ERR_INVALID_ARG; /* a handle of another window's layout */
    if (gpurma_sh_cas_acquire_gpu_u64(&st->reserved[GPURMA_DCOLL__BUSY], 0, 1) != 0)
        return GPURMA_ERR_INVALID_ARG;
    const uint64_t e = st->epoch + 1,
                   call = e + gpurma_dcoll__own_epoch(st->reserved[own_epoch]);
    const uint64_t word =
        gpurma_dcoll__barrier_word(call, st->reserved[GPURMA_DCOLL__LAST_BARRIER]);
    st->epoch = e;
    st->reserved[GPURMA_DCOLL__LAST_BARRIER] = call;
    gpurma_sh_fence_release_system();
    const int n = c->size, me = c->rank;
    const uint32_t sig = gpurma_dcoll__barrier_sig(c, me);
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (int i = 1; i < n && rc == GPURMA_SUCCESS; i++) {
        const int peer = (me + i) % n;
        const gpurma_dev_peer_t *pe = &c->win.peers[peer];
        if (pe->path == GPURMA_DEV_PATH_LOADSTORE && pe->signals) {
#if !GPURMA_DEV_GPU /* for the host wait's message; GPU waits print none */
            gpurma_sh_store_relaxed_u32(&pe->signals[sig].last_origin, (uint32_t)me);
#endif
            gpurma_sh_store_relaxed_u64(&pe->signals[sig].value, word);
        } else {
            rc = gpurma_dev_signal(c->win, peer, sig, GPURMA_SIGNAL_SET, word);
        }
    }
    for (int i = 1; i < n && rc == GPURMA_SUCCESS; i++)
        rc = gpurma_dcoll__barrier_wait(c, (me + n - i) % n, e, call);
    gpurma_sh_store_relaxed_u64(&st->reserved[GPURMA_DCOLL__BUSY], 0);
    return rc;
}

/* The device barrier: one round of arrivals on signals of its own, every
 * member to every other, which collectives neither raise nor wait for. A
 * barrier beside a collective fails on every member: the barrier refuses
 * the collective's piece (gpurma_dcoll__step_seen) or a later barrier
 * that did not come through its epoch (gpurma_dcoll__barrier_seen), or
 * times out; the collective times out, no piece ever coming. The group
 * forms meet before (so that thread 0's fence covers every thread's
 * accesses) and after (a bar.red, or __syncwarp then a vote, which orders
 * no memory by itself), and thread 0 alone does the round. own_epoch:
 * the state word of the algorithm with an epoch of its own (LL16's). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__barrier(const gpurma_dev_coll_t *c,
                                                    const gpurma_dcoll__grp_t *g, int own_epoch)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    gpurma_dcoll__sync(g);
    if (g->tid == 0) {
        rc = gpurma_dcoll__check(c, 0, GPURMA_UINT8, GPURMA_SUM, 0);
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_dcoll__barrier_round(c, own_epoch);
    }
    if (g->scope == 1)
        gpurma_dcoll__sync(g);
    return gpurma_dcoll__agree(g, rc);
}

#endif
