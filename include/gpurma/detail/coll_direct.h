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
 *   1. block 0 publishes this call's fingerprint (which buffers, offsets,
 *      count, dtype, op) and raises "arrived at epoch e+1" on every member,
 *      waits for every member's, checks their fingerprints, then opens a
 *      gate in its own state that the other blocks wait on;
 *   2. every block reduces its slice of this member's share;
 *   3. the last block to finish raises "done at e+2" on every member and
 *      waits for every member's: nobody's kernel ends (so nobody reuses
 *      its buffers) while a peer may still read or write them.
 *
 * The epoch and the gate live in the team's GPU scratch window (channel
 * 0's state), so graph replays continue them. Blocks other than 0 wait
 * only on block 0 of their own kernel, and block 0 only on block 0 of the
 * peers' kernels, which the GPU schedules first.
 * Part of the collectives' device code (coll_kernels.cu); CUDA only.
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
#define GPURMA_DCOLL__PRINT 2  /* this call's fingerprint, read by peers   */
#define GPURMA_DCOLL__RECV_ID 5 /* this call's recv_id, read by peers      */

#if GPURMA_DEV_GPU
/* The signal member `from` raises on this algorithm's steps: a range of
 * its own after every channel's data signals and acknowledgements, so
 * that a member running another algorithm for the same call (registered
 * buffers on some ranks only) never takes it for data: it times out. */
GPURMA_DEVICE uint32_t gpurma_dcoll__direct_sig(const gpurma_dev_coll_t *c, int from)
{
    return 2u * (uint32_t)c->size * c->nchannels + (uint32_t)from;
}

/* Every thread of one block: raises this member's signal to e on every
 * member, then waits until every member raised its own to e here; the
 * stores of every thread of the block before the call are visible to a
 * member that sees the signal (the fence after the block's barrier, then
 * each signal's release), and everything the members stored before
 * theirs is visible to the block after. Thread i signals member
 * rank + i and waits for member i, so a meeting costs one trip over the
 * links rather than one per member. A failed signal or wait (a member
 * that never came) fails the meeting for the whole block. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__direct_meet(const gpurma_dev_coll_t *c, uint64_t e)
{
    const int i = (int)threadIdx.x;
    gpurma_status_t rc = GPURMA_SUCCESS;
    __syncthreads();
    if (i == 0)
        gpurma_sh_fence_release_system();
    __syncthreads();
    if (i < c->size)
        rc = gpurma_dev_signal(c->win, (c->rank + i) % c->size,
                               gpurma_dcoll__direct_sig(c, c->rank), GPURMA_SIGNAL_SET, e);
    if (i < c->size && rc == GPURMA_SUCCESS)
        rc = gpurma_dcoll__wait(c, gpurma_dcoll__direct_sig(c, i), e);
    if (gpurma_sh_block_any(rc != GPURMA_SUCCESS))
        return rc != GPURMA_SUCCESS ? rc : GPURMA_ERR_TIMEOUT;
    __threadfence();
    return GPURMA_SUCCESS;
}

/* [*a, *b): block `blk` of `nblk`'s slice of elements [lo, hi), in whole
 * 16-byte vectors, so that every block starts aligned when the buffers
 * and lo are (else the element loop of gpurma_dev_reduce_ptrs takes it). */
GPURMA_DEVICE void gpurma_dcoll__direct_slice(size_t lo, size_t hi, size_t es, unsigned blk,
                                              unsigned nblk, size_t *a, size_t *b)
{
    const size_t unit = es < 16 ? 16 / es : 1, units = gpurma_sh_div_ceil(hi - lo, unit);
    *a = lo + units * blk / nblk * unit;
    *b = lo + units * (blk + 1) / nblk * unit;
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
    const size_t unit = es < 16 ? 16 / es : 1, units = gpurma_sh_div_ceil(count, unit);
    *lo = (units / (size_t)m * (size_t)r + units % (size_t)m * (size_t)r / (size_t)m) * unit;
    *hi = (units / (size_t)m * (size_t)(r + 1) + units % (size_t)m * (size_t)(r + 1) / (size_t)m) *
          unit;
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
    const size_t w = gpurma_dev_dtype_size(t), body = len / w * w;
    const void *s1[1] = {src};
    void *d1[1] = {dst};
    gpurma_dev_reduce_ptrs(d1, 1, s1, 1, body / w, t, GPURMA_SUM, 1, threadIdx.x, blockDim.x);
    if (body < len) {
        s1[0] = src + body, d1[0] = dst + body;
        gpurma_dev_reduce_ptrs(d1, 1, s1, 1, len - body, GPURMA_UINT8, GPURMA_SUM, 1,
                               threadIdx.x, blockDim.x);
    }
}

/* Whether a reduce's members share it out: every member's recv is the
 * same registration at the same offset (recv_id, published before the
 * first meeting), so that member r can store its share straight into the
 * root's recv. Every member reads the same words, so all decide alike. */
GPURMA_DEVICE int gpurma_dcoll__direct_reduce_shared(const gpurma_dev_coll_t *c,
                                                    const gpurma_dcoll__direct_t *d)
{
    if (!d->recv_id)
        return 0;
    for (int p = 0; p < c->size; p++) {
        const gpurma_dcoll__state_t *ps =
            (const gpurma_dcoll__state_t *)(c->win.peers[p].base + c->state_off);
        if (*(volatile const uint64_t *)&ps->reserved[GPURMA_DCOLL__RECV_ID] != d->recv_id)
            return 0;
    }
    return 1;
}

/* A broadcast to more than one other member forwards, in chunks of at
 * least this many bytes (at most GPURMA_DCOLL__BCAST_CHUNKS of them): the
 * root's stores of chunk j run beside the others' forwarding of chunk
 * j - 1, one meeting of every member between two. */
#define GPURMA_DCOLL__BCAST_CHUNK  (4u << 20)
#define GPURMA_DCOLL__BCAST_CHUNKS 8

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
    return kind == GPURMA_DCOLL__K_BROADCAST && n > 2
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
    /* the chunk this member moves in this phase: [clo, clo + bytes) */
    const int chunk = r == root ? phase : phase - 1;
    if (chunk < 0 || chunk >= chunks)
        return;
    gpurma_dcoll__direct_share(bytes, 1, chunk, chunks, &clo, &chi);
    bytes = chi - clo;
    if (r == root) {
        /* Share k goes to non-root k and, out of place, to the root's own
         * recv in the same stores: the shares cover the count, and the
         * local copy runs beside the link's instead of after it. */
        const int local = d->send[r] != d->recv[r];
        for (int k = 0; k < m; k++) {
            gpurma_dcoll__direct_share(bytes, 1, k, m, &lo, &hi);
            gpurma_dcoll__direct_slice(clo + lo, clo + hi, 1, blockIdx.x, gridDim.x, &a, &b);
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
 * every p. With at least one block per member the grid splits into n
 * lanes, one per destination from the next member on (members start on
 * different links), so that the copy into r's own recv runs beside the
 * stores over the links rather than after them; else every block takes
 * its slice of each destination in turn. */
GPURMA_DEVICE void gpurma_dcoll__direct_alltoall(const gpurma_dev_coll_t *c,
                                                 const gpurma_dcoll__direct_t *d, size_t bytes)
{
    const int n = c->size, r = c->rank;
    const unsigned nb = gridDim.x, blk = blockIdx.x;
    int k0 = 0, k1 = n;
    unsigned lblk = blk, lnb = nb;
    if (nb >= (unsigned)n) {
        /* lane k holds blocks [k nb / n, (k + 1) nb / n): at least one */
        k0 = (int)(((size_t)(blk + 1) * (size_t)n - 1) / nb);
        k1 = k0 + 1;
        const unsigned first = (unsigned)((size_t)k0 * nb / (size_t)n);
        lblk = blk - first;
        lnb = (unsigned)((size_t)k1 * nb / (size_t)n) - first;
    }
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
 *   reduce          share r of every send reduced into share r of the
 *                   root's recv, when every recv is registered alike
 *                   (the root's links then carry the data about twice,
 *                   not n - 1 times); else the root reduces every send
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
    if (kind == GPURMA_DCOLL__K_REDUCE && !shared && r != root)
        return;
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
        gpurma_dcoll__direct_share(count, es, r, n, &lo, &hi);
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
 * phase follows), else only the last block to finish waits. */
GPURMA_DEVICE void gpurma_dcoll__direct_done(const gpurma_dev_coll_t *c,
                                             gpurma_dcoll__state_t *st, int kind, uint64_t e,
                                             int gated)
{
    volatile uint64_t *gate = &st->reserved[GPURMA_DCOLL__GATE];
    __shared__ int last;
    __syncthreads();
    if (threadIdx.x == 0) {
        gpurma_sh_fence_release_system(); /* this block's stores into the peers */
        unsigned long long *done = (unsigned long long *)&st->reserved[GPURMA_DCOLL__DONE];
        last = atomicAdd(done, 1ull) == gridDim.x - 1;
        if (last) {
            gpurma_sh_fence_release_system(); /* acquire: every block's stores, before ours */
            *done = 0;
        }
    }
    __syncthreads();
    if (last) {
        gpurma_status_t rc = gpurma_dcoll__direct_meet(c, e);
        if (rc != GPURMA_SUCCESS) {
            if (threadIdx.x == 0)
                printf("gpurma: rank %d: collective %d on registered buffers: a peer did not "
                       "finish within the timeout (status %d)\n", c->rank, kind, (int)rc);
            __trap();
        }
        if (threadIdx.x == 0)
            *gate = e;
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
        if (threadIdx.x == 0) {
            st->reserved[GPURMA_DCOLL__PRINT] = d->fingerprint;
            st->reserved[GPURMA_DCOLL__RECV_ID] = d->recv_id;
        }
        gpurma_status_t rc = gpurma_dcoll__direct_meet(c, e + 1); /* releases the print */
        const int p = (int)threadIdx.x;
        if (rc == GPURMA_SUCCESS && p < n) {
            const gpurma_dcoll__state_t *ps =
                (const gpurma_dcoll__state_t *)(c->win.peers[p].base + c->state_off);
            if (*(volatile const uint64_t *)&ps->reserved[GPURMA_DCOLL__PRINT] != d->fingerprint) {
                printf("gpurma: rank %d: collective %d on registered buffers: rank %d passed "
                       "another collective, buffers, offsets, count, dtype, op or root\n",
                       c->rank, kind, p);
                rc = GPURMA_ERR_INVALID_ARG;
            }
        }
        if (gpurma_sh_block_any(rc != GPURMA_SUCCESS)) {
            /* a failed meeting fails every thread: one message */
            if (threadIdx.x == 0 && rc != GPURMA_SUCCESS && rc != GPURMA_ERR_INVALID_ARG)
                printf("gpurma: rank %d: collective %d on registered buffers failed with status "
                       "%d (a peer did not take part within the timeout?)\n", c->rank, kind,
                       (int)rc);
            __trap();
        }
        if (threadIdx.x == 0)
            *gate = e + 1;
    } else if (threadIdx.x == 0) {
        while (*gate < e + 1)
            gpurma_sh_pause_n(0);
        __threadfence();
    }
    __syncthreads();

    for (int ph = 0; ph < phases; ph++) {
        gpurma_dcoll__direct_move(c, d, kind, count, dtype, op, root, ph);
        gpurma_dcoll__direct_done(c, st, kind, e + 2 + (uint64_t)ph, ph + 1 < phases);
    }
    if (threadIdx.x == 0 && *gate == e + 1 + (uint64_t)phases)
        st->epoch = e + 1 + (uint64_t)phases; /* the last block: every block read e */
}
#endif

#endif
