/*
 * coll_direct.h - zero-copy collectives on registered buffers (allreduce,
 * allgather, reduce-scatter, alltoall, alltoallv, broadcast, reduce):
 * every member reads the peers'
 * send buffers and writes the peers' recv buffers directly (IPC
 * mappings), no scratch slot in between (gpurma_dcoll__direct_move says
 * which way each moves its data). For allreduce rank r reduces share r of
 * the elements, in rank order, and stores the result into every member's
 * recv (reduce-scatter and allgather in one pass), so every member holds
 * bitwise the same result. One kernel of G blocks:
 *
 *   1. block 0 writes its record "arrived at epoch e+1, with this
 *      fingerprint (which buffers, offsets, count, dtype, op)" into every
 *      member, no fence before it, waits for every member's record here,
 *      checks their fingerprints, then opens a gate in its own state that
 *      the other blocks wait on;
 *   2. every block reduces its slice of this member's share;
 *   3. the last block to finish fences once and writes "done at e+2"
 *      into its record in every member, and waits for every member's:
 *      nobody's kernel ends (so nobody reuses its buffers) while a peer
 *      may still read or write them.
 *
 * The epoch and the gate live in the team's GPU scratch window (channel
 * 0's state), so graph replays continue them. Blocks other than 0 wait
 * only on block 0 of their own kernel, and block 0 only on block 0 of the
 * peers' kernels, which the GPU schedules first.
 * Part of the collectives' device code (coll_kernels_direct.cu); CUDA
 * only but the record's address, below.
 * Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_DIRECT_H
#define GPURMA_DETAIL_COLL_DIRECT_H

#include "gpurma/detail/coll_proto.h"

/* Members a direct collective takes (its buffers travel by value). */
#define GPURMA_DCOLL_DIRECT_MAX 32

/* Every member's send and recv, as mapped in this process. alltoallv:
 * send[p] is where member p's block for this member starts, recv[p] where
 * it goes here, and bytes[p] its length (unused by the others). */
typedef struct {
    const void *send[GPURMA_DCOLL_DIRECT_MAX];
    void       *recv[GPURMA_DCOLL_DIRECT_MAX];
    size_t      bytes[GPURMA_DCOLL_DIRECT_MAX];
    uint64_t    fingerprint; /* the same on every member, or the call is refused */
    uint64_t    recv_id;     /* reduce: this member's recv registration and
                                offset, 0 when it is not registered */
} gpurma_dcoll__direct_t;

/* Words of channel 0's state region this algorithm uses. */
#define GPURMA_DCOLL__GATE 0   /* epoch block 0 let the others start at    */
#define GPURMA_DCOLL__DONE 1   /* blocks finished in this call             */

/* Member `from`'s record of a call, in each member's scratch window
 * (coll_scratch.c): three 16-byte signal slots, k = 0, 1, 2, signal
 * `from` of the ranges GPURMA_DCOLL__RANGE_DIRECT0 and _DIRECT (the map
 * is in coll_proto.h; tests/unit/test_coll_signal_map.c checks it). A
 * member running another algorithm for the same call (registered buffers
 * on some ranks only) never writes them: the others time out instead of
 * taking its data for a record. Plain C too, for that test. */
GPURMA_DEVICE uint64_t *gpurma_dcoll__direct_rec(const gpurma_dev_coll_t *c, int at, int from,
                                                 int k)
{
    const uint32_t range = k ? GPURMA_DCOLL__RANGE_DIRECT(c->nchannels, k)
                             : GPURMA_DCOLL__RANGE_DIRECT0(c->nchannels),
                   sig = range * (uint32_t)c->size + (uint32_t)from;
    gpurma_dev_signal_slot_t *s = at == c->rank ? c->win.signals : c->win.peers[at].signals;
    return &s[sig].value;
}

#if GPURMA_DEV_GPU
/* The record's six 8-byte words (slot k's are words 2k, 2k + 1):
 *   0      the epoch of the member's last arrival, whole
 *   1..4   LL packet halves (4 payload bytes, then a 4-byte flag: the low
 *          32 bits of that arrival's epoch) of the fingerprint, low half
 *          first, then of the recv_id (a reduce's; 0 otherwise)
 *   5      the epoch of the member's last later meeting, whole
 * Each word is one 8-byte store and single-copy atomic (the packets'
 * halves as LL16's, dev_shim.h), so a reader that sees a half's flag sees
 * its payload with it: no fence and no second signal make the record
 * trustworthy. Whole epochs (64 bits, compared as the signals they
 * replace: at or past) never wrap; a half counts only when its flag is
 * the arrival word's, so a half that has yet to land (the stores of one
 * record land in any order) is not taken for this call's. */
#define GPURMA_DCOLL__REC_ARRIVED 0
#define GPURMA_DCOLL__REC_MET     5

GPURMA_DEVICE uint64_t *gpurma_dcoll__direct_word(const gpurma_dev_coll_t *c, int at, int from,
                                                  int w)
{
    return gpurma_dcoll__direct_rec(c, at, from, w / 2) + (w & 1);
}

/* Thread `i` of the group writes this member's record into member
 * rank + i: all of it for the arrival at epoch e, else word 5 alone. */
GPURMA_DEVICE void gpurma_dcoll__direct_post(const gpurma_dev_coll_t *c,
                                             const gpurma_dcoll__direct_t *d, int i, uint64_t e,
                                             int arrival)
{
    const int to = (c->rank + i) % c->size, me = c->rank;
    if (!arrival) {
        gpurma_sh_store_relaxed_u64(gpurma_dcoll__direct_word(c, to, me, GPURMA_DCOLL__REC_MET), e);
        return;
    }
    const uint32_t f = (uint32_t)e;
    gpurma_sh_store_packet8(gpurma_dcoll__direct_word(c, to, me, 1), (uint32_t)d->fingerprint, f);
    gpurma_sh_store_packet16(gpurma_dcoll__direct_word(c, to, me, 2),
                             (uint32_t)(d->fingerprint >> 32), f, (uint32_t)d->recv_id, f);
    gpurma_sh_store_packet8(gpurma_dcoll__direct_word(c, to, me, 4), (uint32_t)(d->recv_id >> 32),
                            f);
    gpurma_sh_store_relaxed_u64(gpurma_dcoll__direct_word(c, to, me, GPURMA_DCOLL__REC_ARRIVED), e);
}

/* Member `from`'s payloads here, once the record is whole: *print its
 * fingerprint, *id its recv_id. 0 until every half carries the flag of
 * the arrival word it read (its epoch in *arrived). */
GPURMA_DEVICE int gpurma_dcoll__direct_read(const gpurma_dev_coll_t *c, int from,
                                            uint64_t *arrived, uint64_t *print, uint64_t *id)
{
    uint32_t w1[2], w23[4], w4[2];
    *arrived = gpurma_sh_load_acquire_u64(
        gpurma_dcoll__direct_word(c, c->rank, from, GPURMA_DCOLL__REC_ARRIVED));
    gpurma_sh_load_packet8(gpurma_dcoll__direct_word(c, c->rank, from, 1), &w1[0], &w1[1]);
    gpurma_sh_load_packet16(gpurma_dcoll__direct_word(c, c->rank, from, 2), w23);
    gpurma_sh_load_packet8(gpurma_dcoll__direct_word(c, c->rank, from, 4), &w4[0], &w4[1]);
    const uint32_t f = (uint32_t)*arrived;
    *print = (uint64_t)w1[0] | (uint64_t)w23[0] << 32;
    *id = (uint64_t)w23[2] | (uint64_t)w4[0] << 32;
    return w1[1] == f && w23[1] == f && w23[3] == f && w4[1] == f;
}

/* Waits until member `from`'s record here reached epoch e: with
 * `arrival`, its arrival word, and the record is whole (*print, *id: its
 * payloads); else its later-meeting word, read with acquire loads (those
 * meetings order data). An arrival past e is refused (INVALID_ARG), not
 * taken: no member posts its next arrival before this one's done record,
 * which comes after this wait, so a later arrival means the members' epochs
 * differ (a call that failed on some of them), and a record of another call
 * whose fingerprint happened to match (the same call in a loop) would let
 * this member read and write buffers the other is not done with. The later
 * meetings compare at or past: a member may already be in the next phase. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__direct_await(const gpurma_dev_coll_t *c, int from,
                                                        uint64_t e, int arrival,
                                                        uint64_t *print, uint64_t *id)
{
    const uint64_t *met = gpurma_dcoll__direct_word(c, c->rank, from, GPURMA_DCOLL__REC_MET);
    uint64_t start = 0, arrived = 0;
    for (uint64_t iter = 0;; iter++) {
        if (arrival ? gpurma_dcoll__direct_read(c, from, &arrived, print, id) && arrived >= e
                    : gpurma_sh_load_acquire_u64(met) >= e)
            return arrival && arrived != e ? GPURMA_ERR_INVALID_ARG : GPURMA_SUCCESS;
        const gpurma_status_t over = gpurma_dcoll__wait_over(c, iter, &start);
        if (over != GPURMA_SUCCESS)
            return over;
        gpurma_sh_pause_n(iter);
    }
}

/* A meeting of every member at epoch e, by every thread of one block:
 * thread i sends this member's record to member rank + i and waits for
 * member i's here, so a meeting costs one trip over the links rather than
 * one per member; a member that never came fails it for the whole block
 * (a timeout). Why each ordering is enough (docs/collectives.md):
 *
 * The arrival (`arrival`: the first meeting of a call) has no fence and
 * no acquire. What the peers need from it travels in the record itself
 * (the epoch, the fingerprint, the recv_id), in words that each vouch for
 * themselves (gpurma_dcoll__direct_post). The data they then read from this member's send
 * (and the recv they write) was last written or read by earlier work on
 * this member's stream, complete before this kernel started: kernel
 * boundaries perform those accesses at this GPU's memory, where peer
 * loads and stores over the links are served, and no peer cached a line
 * of it in this call before seeing the record (its L1 starts the kernel
 * empty). A fence here would order only this kernel's own earlier
 * stores, and there are none that a peer reads. The stores go out
 * together (one warp) and may land in any order: the reader checks every
 * half against the arrival word.
 *
 * Every later meeting (`arrival` 0: between phases, and done) orders
 * data: this member's stores into the peers' buffers, and its loads of
 * the peers' sends, must be performed before a peer that sees the record
 * goes on (a peer ends its kernel, and the user reuses its buffers). The
 * block's barrier makes every thread's accesses observed by warp 0; each
 * sending thread's fence.acq_rel.sys after it is cumulative over them and
 * precedes its own record stores in program order (a release pattern),
 * so one fence of one warp covers the block; the record's word is a
 * relaxed 8-byte store, no second store for the release to wait on. The
 * waiting side loads that word with ld.acquire.sys (the same 8 bytes:
 * morally strong), then the block's barrier spreads it to every thread. With several blocks, the caller's counter hands the other
 * blocks' releases to this one first (gpurma_dcoll__direct_done). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__direct_meet(const gpurma_dev_coll_t *c,
                                                       const gpurma_dcoll__direct_t *d, uint64_t e,
                                                       int arrival, uint64_t *print,
                                                       uint64_t *id)
{
    const int i = (int)threadIdx.x;
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (!arrival)
        __syncthreads();
    if (i < c->size) {
        if (!arrival)
            gpurma_sh_fence_release_system();
        gpurma_dcoll__direct_post(c, d, i, e, arrival);
        rc = gpurma_dcoll__direct_await(c, i, e, arrival, print, id);
    }
    if (gpurma_sh_block_any(rc != GPURMA_SUCCESS))
        return rc != GPURMA_SUCCESS ? rc : GPURMA_ERR_TIMEOUT;
    return GPURMA_SUCCESS;
}

/* [*a, *b): block `blk` of `nblk`'s slice of elements [lo, hi), in whole
 * 16-byte vectors, so that every block starts aligned when the buffers
 * and lo are (else the element loop of gpurma_dev_reduce_ptrs takes it). */
GPURMA_DEVICE void gpurma_dcoll__direct_slice(size_t lo, size_t hi, size_t es, unsigned blk,
                                              unsigned nblk, size_t *a, size_t *b)
{
    const size_t unit = es < 16 ? (size_t)gpurma_sh_udiv(16, es) : 1,
                 units = gpurma_sh_div_ceil(hi - lo, unit);
    *a = lo + (size_t)gpurma_sh_udiv(units * blk, nblk) * unit;
    *b = lo + (size_t)gpurma_sh_udiv(units * (blk + 1), nblk) * unit;
    if (*b > hi)
        *b = hi;
    if (*a > hi)
        *a = hi;
}

/* Member r's share of count elements of es bytes among m members: [*lo,
 * *hi), cut at whole 16-byte vectors so that every share starts aligned
 * where the buffers are (else the copy or reduce goes element by element:
 * a broadcast's byte shares of a third ran at a tenth of the link). */
GPURMA_DEVICE void gpurma_dcoll__direct_share(size_t count, size_t es, int r, int m, size_t *lo,
                                              size_t *hi)
{
    const size_t unit = es < 16 ? (size_t)gpurma_sh_udiv(16, es) : 1,
                 units = gpurma_sh_div_ceil(count, unit);
    uint64_t a, b;
    gpurma_sh_split(units, (uint64_t)r, (uint64_t)m, &a, &b);
    *lo = (size_t)a * unit;
    *hi = (size_t)b * unit;
    if (*hi > count)
        *hi = count;
    if (*lo > count)
        *lo = count;
}

/* This block's threads copy len bytes, in the widest words that both
 * addresses allow (alltoallv's blocks start wherever their displacements
 * put them: copied byte by byte, a 4-byte-aligned block moves at a
 * fraction of the link's speed). Slices start at 16-byte multiples, so
 * the addresses' alignment is their block's. */
GPURMA_DEVICE void gpurma_dcoll__direct_copy(char *dst, const char *src, size_t len)
{
    const uintptr_t al = (uintptr_t)dst | (uintptr_t)src;
    /* UINT8 at 16-byte alignment: the reduce's 16-byte vector path */
    const gpurma_dtype_t t = !(al & 15) ? GPURMA_UINT8
                             : !(al & 7) ? GPURMA_UINT64
                             : !(al & 3) ? GPURMA_UINT32
                                         : GPURMA_UINT8;
    const size_t w = gpurma_dev_dtype_size(t), body = (size_t)gpurma_sh_udiv(len, w) * w;
    const void *s1[1] = {src};
    void *d1[1] = {dst};
    gpurma_dev_reduce_ptrs(d1, 1, s1, 1, (size_t)gpurma_sh_udiv(body, w), t, GPURMA_SUM, 1,
                           threadIdx.x, blockDim.x);
    if (body < len) {
        s1[0] = src + body, d1[0] = dst + body;
        gpurma_dev_reduce_ptrs(d1, 1, s1, 1, len - body, GPURMA_UINT8, GPURMA_SUM, 1,
                               threadIdx.x, blockDim.x);
    }
}

/* Whether a reduce's members share it out: every member's recv is the
 * same registration at the same offset (recv_id, in every member's
 * arrival record here, checked whole by block 0 before any block moves),
 * so that member r can store its share straight into the root's recv.
 * Every member reads the same values, so all decide alike; a record's
 * payload is rewritten only by the member's next call's arrival, which
 * waits for this member's done. */
GPURMA_DEVICE int gpurma_dcoll__direct_reduce_shared(const gpurma_dev_coll_t *c,
                                                    const gpurma_dcoll__direct_t *d)
{
    if (!d->recv_id)
        return 0;
    for (int p = 0; p < c->size; p++) {
        uint64_t arrived, print, id;
        (void)gpurma_dcoll__direct_read(c, p, &arrived, &print, &id);
        if (id != d->recv_id)
            return 0;
    }
    return 1;
}

/* With at least one block per lane, the grid splits into `lanes` lanes
 * of consecutive blocks (lane k holds blocks [k nb / lanes, (k + 1) nb /
 * lanes): [*k0, *k1) is this block's lane, *lblk its place in it of
 * *lnb; with fewer blocks every block takes every lane, [0, lanes), as
 * block blockIdx.x of gridDim.x. Lanes that run side by side load every
 * link at once where one after the other would load one at a time. */
GPURMA_DEVICE void gpurma_dcoll__direct_lane(int lanes, int *k0, int *k1, unsigned *lblk,
                                             unsigned *lnb)
{
    const unsigned nb = gridDim.x, blk = blockIdx.x;
    *k0 = 0, *k1 = lanes, *lblk = blk, *lnb = nb;
    if (nb >= (unsigned)lanes) {
        *k0 = (int)gpurma_sh_udiv((uint64_t)(blk + 1) * (uint64_t)lanes - 1, nb);
        *k1 = *k0 + 1;
        const unsigned first = (unsigned)gpurma_sh_udiv((uint64_t)*k0 * nb, (uint64_t)lanes);
        *lblk = blk - first;
        *lnb = (unsigned)gpurma_sh_udiv((uint64_t)*k1 * nb, (uint64_t)lanes) - first;
    }
}

/* A broadcast to more than one other member forwards, in chunks of at
 * least this many bytes (at most GPURMA_DCOLL__BCAST_CHUNKS of them): the
 * root's stores of chunk j run beside the others' forwarding of chunk
 * j - 1, one meeting of every member between two. */
#define GPURMA_DCOLL__BCAST_CHUNK  (4u << 20)
#define GPURMA_DCOLL__BCAST_CHUNKS 8
/* Up to this many bytes the root stores all of it into every member in
 * one phase: its links carry it n - 1 times, which costs less there than
 * a meeting of every member more (4x H200, 4 ranks, 2026-11-27: two
 * phases took 18 us from 64 to 256 KiB, a one-phase reduce 12.5). */
#define GPURMA_DCOLL__BCAST_PUSH_MAX (1u << 20)

GPURMA_DEVICE int gpurma_dcoll__direct_bcast_chunks(size_t bytes, int n)
{
    if (n <= 2)
        return 1;
    const size_t k = bytes / GPURMA_DCOLL__BCAST_CHUNK;
    return k < 1 ? 1 : k > GPURMA_DCOLL__BCAST_CHUNKS ? GPURMA_DCOLL__BCAST_CHUNKS : (int)k;
}

/* How many phases a collective's move takes (a meeting of every member
 * between two): a broadcast to more than one other member forwards, one
 * phase more than its chunks. Every member computes the same. */
GPURMA_DEVICE int gpurma_dcoll__direct_phases(int kind, int n, size_t bytes)
{
    return kind == GPURMA_DCOLL__K_BROADCAST && n > 2 && bytes > GPURMA_DCOLL__BCAST_PUSH_MAX
               ? gpurma_dcoll__direct_bcast_chunks(bytes, n) + 1
               : 1;
}

/* A broadcast's phase: the root stores chunk `phase` of its send into its
 * own recv, and into the recv of every other member share k of the chunk
 * among the n - 1 others (all of it when there is one other); each other
 * member stores its share of chunk `phase - 1`, which the root stored in
 * the phase before, into the other non-roots' recv. The root's links carry
 * the data once, the others' their share each, and both at once. */
GPURMA_DEVICE void gpurma_dcoll__direct_bcast(const gpurma_dev_coll_t *c,
                                              const gpurma_dcoll__direct_t *d, size_t bytes,
                                              int root, int phase)
{
    const int n = c->size, r = c->rank, m = n - 1,
              chunks = gpurma_dcoll__direct_bcast_chunks(bytes, n);
    const void *src[1];
    void *dst[GPURMA_DCOLL_DIRECT_MAX];
    size_t lo, hi, a, b, clo, chi;
    /* The k-th non-root, and which k a member is. */
#define GPURMA_DCOLL__NONROOT(k) ((k) < root ? (k) : (k) + 1)
    if (n > 2 && bytes <= GPURMA_DCOLL__BCAST_PUSH_MAX) {
        /* one phase: the root stores its slice into every member's recv
         * (its own too, out of place) */
        if (r != root)
            return;
        gpurma_dcoll__direct_slice(0, bytes, 1, blockIdx.x, gridDim.x, &a, &b);
        int nd = 0;
        for (int p = 0; p < n && a < b; p++)
            if (p != r || d->send[r] != d->recv[r])
                dst[nd++] = (char *)d->recv[p] + a;
        src[0] = (const char *)d->send[r] + a;
        if (nd)
            gpurma_dev_reduce_ptrs(dst, nd, src, 1, b - a, GPURMA_UINT8, GPURMA_SUM, 1,
                                   threadIdx.x, blockDim.x);
        return;
    }
    /* the chunk this member moves in this phase: [clo, clo + bytes) */
    const int chunk = r == root ? phase : phase - 1;
    if (chunk < 0 || chunk >= chunks)
        return;
    gpurma_dcoll__direct_share(bytes, 1, chunk, chunks, &clo, &chi);
    bytes = chi - clo;
    if (r == root) {
        /* Share k goes to non-root k (lane k: every link at once) and, out
         * of place, to the root's own recv in the same stores: the shares
         * cover the count, and the local copy runs beside the link's
         * instead of after it. */
        const int local = d->send[r] != d->recv[r];
        int k0, k1;
        unsigned lblk, lnb;
        gpurma_dcoll__direct_lane(m, &k0, &k1, &lblk, &lnb);
        for (int k = k0; k < k1; k++) {
            gpurma_dcoll__direct_share(bytes, 1, k, m, &lo, &hi);
            gpurma_dcoll__direct_slice(clo + lo, clo + hi, 1, lblk, lnb, &a, &b);
            if (a >= b)
                continue;
            src[0] = (const char *)d->send[r] + a;
            dst[0] = (char *)d->recv[GPURMA_DCOLL__NONROOT(k)] + a;
            if (local)
                dst[1] = (char *)d->recv[r] + a;
            gpurma_dev_reduce_ptrs(dst, 1 + local, src, 1, b - a, GPURMA_UINT8, GPURMA_SUM, 1,
                                   threadIdx.x, blockDim.x);
        }
    } else {
        const int k = r < root ? r : r - 1;
        gpurma_dcoll__direct_share(bytes, 1, k, m, &lo, &hi);
        gpurma_dcoll__direct_slice(clo + lo, clo + hi, 1, blockIdx.x, gridDim.x, &a, &b);
        if (a >= b)
            return;
        int nd = 0;
        for (int j = 0; j < m; j++)
            if (j != k)
                dst[nd++] = (char *)d->recv[GPURMA_DCOLL__NONROOT(j)] + a;
        src[0] = (const char *)d->recv[r] + a;
        gpurma_dev_reduce_ptrs(dst, nd, src, 1, b - a, GPURMA_UINT8, GPURMA_SUM, 1, threadIdx.x,
                               blockDim.x);
    }
#undef GPURMA_DCOLL__NONROOT
}

/* Alltoall: block p of r's send (bytes long) into block r of p's recv,
 * every p, a lane per destination from the next member on (members start
 * on different links), so that the copy into r's own recv runs beside the
 * stores over the links rather than after them. */
GPURMA_DEVICE void gpurma_dcoll__direct_alltoall(const gpurma_dev_coll_t *c,
                                                 const gpurma_dcoll__direct_t *d, size_t bytes)
{
    const int n = c->size, r = c->rank;
    int k0, k1;
    unsigned lblk, lnb;
    gpurma_dcoll__direct_lane(n, &k0, &k1, &lblk, &lnb);
    for (int k = k0; k < k1; k++) {
        const int p = (r + 1 + k) % n;
        size_t a, b;
        gpurma_dcoll__direct_slice(0, bytes, 1, lblk, lnb, &a, &b);
        if (a >= b)
            continue;
        gpurma_dcoll__direct_copy((char *)d->recv[p] + (size_t)r * bytes + a,
                                  (const char *)d->send[r] + (size_t)p * bytes + a, b - a);
    }
}

/* Which way each collective moves its data once every member arrived
 * (count elements a block; member r, n members; "share r" is r's n-th of
 * the count):
 *   allreduce       share r of every send reduced into every recv
 *   allgather       r's send into block r of every recv
 *   reduce-scatter  block r of every send reduced into r's recv
 *   alltoall        block p of r's send into block r of p's recv, every p
 *   alltoallv       r pulls every member's block for it into its recv
 *                   (only the send side is registered: blocks differ in
 *                   length, and the puller knows where each lands)
 *   broadcast       gpurma_dcoll__direct_bcast
 *   reduce          when every recv is registered alike, the count is
 *                   shared among the members but the root: each reduces
 *                   its share of every send (the root's too) into the
 *                   root's recv, so that the root's links carry the data
 *                   once each way (in: the results; out: its send to the
 *                   readers) and so do the others'; else the root
 *                   reduces every send
 * The group's threads (tid of nthreads) share this block's slice. */
GPURMA_DEVICE void gpurma_dcoll__direct_move(const gpurma_dev_coll_t *c,
                                             const gpurma_dcoll__direct_t *d, int kind,
                                             size_t count, gpurma_dtype_t dtype,
                                             gpurma_redop_t op, int root, int phase)
{
    const int n = c->size, r = c->rank;
    if (kind == GPURMA_DCOLL__K_BROADCAST) {
        gpurma_dcoll__direct_bcast(c, d, count * gpurma_dev_dtype_size(dtype), root, phase);
        return;
    }
    const int shared = kind == GPURMA_DCOLL__K_ALLREDUCE ||
                       (kind == GPURMA_DCOLL__K_REDUCE && gpurma_dcoll__direct_reduce_shared(c, d));
    /* who reduces which share: member `who` of `among` */
    int who = r, among = n;
    if (kind == GPURMA_DCOLL__K_REDUCE && n > 1) {
        if (shared == (r == root))
            return; /* the root when the others share it, they when it does not */
        who = r < root ? r : r - 1;
        among = n - 1;
    }
    if (kind == GPURMA_DCOLL__K_ALLTOALLV) {
        /* from the next member on, so that members start on different links */
        for (int k = 0; k < n; k++) {
            const int p = (r + 1 + k) % n;
            size_t a, b;
            gpurma_dcoll__direct_slice(0, d->bytes[p], 1, blockIdx.x, gridDim.x, &a, &b);
            if (a >= b)
                continue;
            gpurma_dcoll__direct_copy((char *)d->recv[p] + a, (const char *)d->send[p] + a, b - a);
        }
        return;
    }
    if (kind == GPURMA_DCOLL__K_ALLTOALL) {
        gpurma_dcoll__direct_alltoall(c, d, count * gpurma_dev_dtype_size(dtype));
        return;
    }
    if (kind == GPURMA_DCOLL__K_ALLGATHER) {
        /* copies move bytes: a float's NaN payload must come out as it went in */
        count *= gpurma_dev_dtype_size(dtype);
        dtype = GPURMA_UINT8;
    }
    const size_t es = gpurma_dev_dtype_size(dtype);
    size_t lo = 0, hi = count, a, b;
    if (shared)
        gpurma_dcoll__direct_share(count, es, who, among, &lo, &hi);
    gpurma_dcoll__direct_slice(lo, hi, es, blockIdx.x, gridDim.x, &a, &b);
    if (a >= b)
        return;
    const size_t at = a * es, mine = (size_t)r * count * es;
    const void *src[GPURMA_DCOLL_DIRECT_MAX];
    void *dst[GPURMA_DCOLL_DIRECT_MAX];
    switch (kind) {
    case GPURMA_DCOLL__K_ALLREDUCE:
        for (int p = 0; p < n; p++) {
            src[p] = (const char *)d->send[p] + at;
            dst[p] = (char *)d->recv[p] + at;
        }
        gpurma_dev_reduce_ptrs(dst, n, src, n, b - a, dtype, op, (unsigned)n, threadIdx.x,
                               blockDim.x);
        break;
    case GPURMA_DCOLL__K_ALLGATHER:
        src[0] = (const char *)d->send[r] + at;
        for (int p = 0; p < n; p++)
            dst[p] = (char *)d->recv[p] + mine + at;
        gpurma_dev_reduce_ptrs(dst, n, src, 1, b - a, dtype, GPURMA_SUM, 1, threadIdx.x,
                               blockDim.x);
        break;
    case GPURMA_DCOLL__K_REDUCE_SCATTER:
    case GPURMA_DCOLL__K_REDUCE: {
        const size_t from = kind == GPURMA_DCOLL__K_REDUCE ? at : mine + at;
        for (int p = 0; p < n; p++)
            src[p] = (const char *)d->send[p] + from;
        dst[0] = (char *)d->recv[kind == GPURMA_DCOLL__K_REDUCE ? root : r] + at;
        gpurma_dev_reduce_ptrs(dst, 1, src, n, b - a, dtype, op, (unsigned)n, threadIdx.x,
                               blockDim.x);
        break;
    }
    default: /* alltoall and alltoallv returned above */
        break;
    }
}

/* Every block of this kernel is done with its part, then every member's
 * kernel is (a meeting at epoch e); blocks wait for it when `gated` (a
 * phase follows), else only the last block to finish waits. Each block's
 * thread 0 releases the block's accesses (the barrier, then its
 * fence.acq_rel.sys: cumulative) before it counts the block in; the last
 * block's acquire fence after the count takes them over, and its
 * meeting's release hands them on to the peers. A kernel of one block
 * (small calls) needs no count: the meeting's own fence is its only one. */
GPURMA_DEVICE void gpurma_dcoll__direct_done(const gpurma_dev_coll_t *c,
                                             const gpurma_dcoll__direct_t *d,
                                             gpurma_dcoll__state_t *st, int kind, uint64_t e,
                                             int gated)
{
    volatile uint64_t *gate = &st->reserved[GPURMA_DCOLL__GATE];
    __shared__ int last;
    if (gridDim.x > 1) {
        __syncthreads();
        if (threadIdx.x == 0) {
            gpurma_sh_fence_release_system(); /* this block's accesses to the peers */
            unsigned long long *done = (unsigned long long *)&st->reserved[GPURMA_DCOLL__DONE];
            last = atomicAdd(done, 1ull) == gridDim.x - 1;
            if (last) {
                __threadfence(); /* acquire: every block's release, seen through the count */
                *done = 0;
            }
        }
        __syncthreads();
    }
    if (gridDim.x == 1 || last) {
        gpurma_status_t rc = gpurma_dcoll__direct_meet(c, d, e, 0, (uint64_t *)0, (uint64_t *)0);
        if (rc != GPURMA_SUCCESS) {
            if (threadIdx.x == 0)
                gpurma_sh_report("gpurma: rank %d: collective %d on registered buffers: a peer "
                                 "did not finish within the timeout (status %d)\n",
                                 c->rank, kind, (int)rc);
            __trap();
        }
        if (threadIdx.x == 0) {
            if (gated)
                __threadfence(); /* release: what the meeting acquired, to the other blocks */
            *gate = e;
        }
    } else if (gated && threadIdx.x == 0) {
        while (*gate < e)
            gpurma_sh_pause_n(0);
        __threadfence();
    }
    __syncthreads();
}

/* The kernel's body, in every block; c is channel 0's handle. A failure
 * (a member that never came, one that passed another call) stops the
 * whole kernel with a message: the other blocks never start reading.
 * Meetings at epochs e + 1 (arrived), e + 2 .. (between phases) and
 * e + 1 + phases (done); the channel's epoch moves by 1 + phases. */
GPURMA_DEVICE void gpurma_dcoll__run_direct(const gpurma_dev_coll_t *c,
                                            const gpurma_dcoll__direct_t *d, int kind,
                                            size_t count, gpurma_dtype_t dtype, gpurma_redop_t op,
                                            int root)
{
    const int n = c->size,
              phases = gpurma_dcoll__direct_phases(kind, n, count * gpurma_dev_dtype_size(dtype));
    gpurma_dcoll__state_t *st = gpurma_dcoll__state(c);
    volatile uint64_t *gate = &st->reserved[GPURMA_DCOLL__GATE];
    const uint64_t e = st->epoch; /* read by every block before the last one moves it */
    if (blockIdx.x == 0) {
        uint64_t print = 0, id = 0;
        gpurma_status_t rc = gpurma_dcoll__direct_meet(c, d, e + 1, 1, &print, &id);
        const int p = (int)threadIdx.x;
        const int other = rc == GPURMA_SUCCESS && p < n && print != d->fingerprint;
        if (other)
            rc = GPURMA_ERR_INVALID_ARG;
        /* every member's record is read by warp 0 (n <= 32 threads of at
         * least 32): the first member that passed another call, named once */
        const unsigned others = p < 32 ? __ballot_sync(0xffffffffu, other) : 0u;
        if (gpurma_sh_block_any(rc != GPURMA_SUCCESS)) {
            /* a failed meeting fails every thread: one message */
            const int ahead = gpurma_sh_block_any(rc == GPURMA_ERR_INVALID_ARG && !other);
            if (threadIdx.x == 0 && others)
                gpurma_sh_report("gpurma: rank %d: collective %d on registered buffers: rank %d "
                                 "passed another collective, buffers, offsets, count, dtype, op "
                                 "or root\n",
                                 c->rank, kind, __ffs((int)others) - 1);
            else if (threadIdx.x == 0 && ahead)
                gpurma_sh_report("gpurma: rank %d: collective %d on registered buffers: a "
                                 "member's record is of a later call (the members' epochs "
                                 "differ: did an earlier collective fail on some ranks?)\n",
                                 c->rank, kind);
            else if (threadIdx.x == 0)
                gpurma_sh_report("gpurma: rank %d: collective %d on registered buffers failed "
                                 "with status %d (a peer did not take part within the "
                                 "timeout?)\n",
                                 c->rank, kind, rc ? (int)rc : (int)GPURMA_ERR_TIMEOUT);
            __trap();
        }
        /* Relaxed: the other blocks take nothing from the arrival but
         * that it passed (gpurma_dcoll__direct_meet says why the data
         * needs no acquire; the records they read were checked whole). */
        if (threadIdx.x == 0 && gridDim.x > 1)
            *gate = e + 1;
    } else if (threadIdx.x == 0) {
        while (*gate < e + 1)
            gpurma_sh_pause_n(0);
    }
    __syncthreads();

    for (int ph = 0; ph < phases; ph++) {
        gpurma_dcoll__direct_move(c, d, kind, count, dtype, op, root, ph);
        gpurma_dcoll__direct_done(c, d, st, kind, e + 2 + (uint64_t)ph, ph + 1 < phases);
    }
    if (threadIdx.x == 0 && *gate == e + 1 + (uint64_t)phases)
        st->epoch = e + 1 + (uint64_t)phases; /* the last block: every block read e */
}
#endif

#endif
