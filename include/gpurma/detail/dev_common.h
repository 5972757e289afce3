/*
 * dev_common.h - what every path of the device API shares: the argument
 * checks each operation starts with, comparisons and the bounded wait.
 * Path headers (dev_mem.h, dev_port.h, dev_host.h) build on this one only;
 * gpurma_device.h picks a path per operation. Not ABI.
 */
#ifndef GPURMA_DETAIL_DEV_COMMON_H
#define GPURMA_DETAIL_DEV_COMMON_H

#include "gpurma.h"
#include "gpurma/detail/dev_shim.h"
#include "gpurma/detail/dev_types.h"

/* Range checks are written `off > size || n > size - off`, never
 * `off + n > size`, which wraps for offsets or sizes near SIZE_MAX. */

#if !GPURMA_DEV_GPU
#ifdef __cplusplus
extern "C" {
#endif
/* Host backend: GPURMA_SUCCESS when p is a live window (or switch) struct
 * of the library, GPURMA_ERR_FREED for one released since (a tombstone),
 * GPURMA_ERR_INVALID_ARG for any other pointer, which is not read: the
 * library looks it up in its handle registry first. Sets no message. */
GPURMA_API gpurma_status_t gpurma_dev_host_win_state(const void *p);
GPURMA_API gpurma_status_t gpurma_dev_host_switch_state(const void *p);
/* The same for a whole by-value handle, whose every field must then be
 * the one the library made (gpurma_win_device, gpurma_dev_win_chan): a
 * handle with the right host pointer but other tables, rank or sizes is
 * GPURMA_ERR_INVALID_ARG, its pointers not followed. */
GPURMA_API gpurma_status_t gpurma_dev_host_win_handle_state(const gpurma_dev_win_t *h);
GPURMA_API gpurma_status_t gpurma_dev_host_chan_state(const gpurma_dev_chan_t *c);
#ifdef __cplusplus
}
#endif
#endif

/* A handle gpurma_win_device made (a zeroed or garbled one is INVALID_ARG)
 * of a live window. On the host backend the window struct outlives the
 * window (a tombstone), the peer table, signals, counters and FIFOs do
 * not; the library looks the handle up (a forged one is refused, not
 * read). A window freed by another thread while this check passes is the
 * caller's race, as with any freed memory. GPU code cannot read the host
 * struct. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_win(const gpurma_dev_win_t *w)
{
    if (w->magic != GPURMA_DEV_WIN_MAGIC)
        return GPURMA_ERR_INVALID_ARG;
#if !GPURMA_DEV_GPU
    return gpurma_dev_host_win_handle_state(w);
#else
    return GPURMA_SUCCESS;
#endif
}

/* A channel gpurma_dev_win_chan made for a valid peer (otherwise the reason
 * it recorded; a zeroed or garbled channel is INVALID_ARG), of a window not
 * freed since on the host backend. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_chan(const gpurma_dev_chan_t *c)
{
    if (c->magic != GPURMA_DEV_CHAN_MAGIC)
        return c->status < 0 ? (gpurma_status_t)c->status : GPURMA_ERR_INVALID_ARG;
#if !GPURMA_DEV_GPU
    return gpurma_dev_host_chan_state(c);
#else
    return GPURMA_SUCCESS;
#endif
}

/* A live handle and a rank of the window's team. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_peer(const gpurma_dev_win_t *w, int peer)
{
    gpurma_status_t rc = gpurma_dev__check_win(w);
    if (rc == GPURMA_SUCCESS && (peer < 0 || peer >= w->size))
        rc = GPURMA_ERR_INVALID_ARG;
    return rc;
}

/* Thread tid of a cooperative team of nthreads (0 threads would never end). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_team(unsigned tid, unsigned nthreads)
{
    return tid < nthreads ? GPURMA_SUCCESS : GPURMA_ERR_INVALID_ARG;
}

/* Both: the checks of a cooperative call aimed at peer. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_coop(const gpurma_dev_win_t *w, int peer,
                                                     unsigned tid, unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_peer(w, peer);
    return rc != GPURMA_SUCCESS ? rc : gpurma_dev__check_team(tid, nthreads);
}

/* Buffer present, [off, off+bytes) inside a peer entry the caller has loaded. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_peer_range(const gpurma_dev_peer_t *pe,
                                                           size_t off, size_t bytes,
                                                           const void *buf)
{
    if (bytes && !buf)
        return GPURMA_ERR_INVALID_ARG;
    if (off > pe->size || bytes > pe->size - off)
        return GPURMA_ERR_OUT_OF_BOUNDS;
    return GPURMA_SUCCESS;
}

/* A signal id of the window and an operation signals know. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_signal_args(uint32_t num_signals, uint32_t sig,
                                                            gpurma_signal_op_t op)
{
    return sig < num_signals && (op == GPURMA_SIGNAL_SET || op == GPURMA_SIGNAL_ADD)
               ? GPURMA_SUCCESS
               : GPURMA_ERR_INVALID_ARG;
}

/* Range and alignment of a 64-bit atomic at off in a loaded peer entry
 * (an atomic has no buffer: pe stands in for one). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_atomic_at(const gpurma_dev_peer_t *pe, size_t off)
{
    gpurma_status_t rc = gpurma_dev__check_peer_range(pe, off, 8, pe);
    if (rc == GPURMA_SUCCESS && (off & 7))
        rc = GPURMA_ERR_MISALIGNED;
    return rc;
}

enum { GPURMA_DEV__ATOMIC_FETCH_ADD = 0, GPURMA_DEV__ATOMIC_SWAP, GPURMA_DEV__ATOMIC_CAS };

/* Load/store and host-call puts are locally complete when they return:
 * one thread bumps the counter (UINT32_MAX: none). */
GPURMA_DEVICE void gpurma_dev__count_local(uint64_t *counters, uint32_t counter, unsigned tid)
{
    if (counter != UINT32_MAX && !tid)
        gpurma_sh_fetch_add_u64(&counters[counter], 1);
}

/* Whether v cmp ref holds. */
GPURMA_DEVICE int gpurma_dev_compare(uint64_t v, gpurma_cmp_t cmp, uint64_t ref)
{
    switch (cmp) {
    case GPURMA_CMP_EQ: return v == ref;
    case GPURMA_CMP_NE: return v != ref;
    case GPURMA_CMP_GT: return v > ref;
    case GPURMA_CMP_GE: return v >= ref;
    case GPURMA_CMP_LT: return v < ref;
    case GPURMA_CMP_LE: return v <= ref;
    }
    return 0;
}

/* Whether a wait has run past timeout_ns (0: never). The clock is read
 * every 256 polls, the first time at poll 255, so a wait that ends sooner
 * (a ping-pong's) reads no clock at all; *start (0 until then) is that
 * first reading, and the timeout fires 256 polls late at most. */
GPURMA_DEVICE int gpurma_dev__expired(uint64_t iter, uint64_t *start, uint64_t timeout_ns)
{
    if ((iter & 255) == 255) {
        uint64_t now = gpurma_sh_now_ns();
        if (!*start)
            *start = now;
        else if (timeout_ns && now - *start > timeout_ns)
            return 1;
    }
    return 0;
}

/* Polls with acquire loads; the clock is read only every 256 polls. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__wait_u64(const uint64_t *p, gpurma_cmp_t cmp,
                                                   uint64_t value, uint64_t timeout_ns)
{
    uint64_t start = 0;
    for (uint64_t iter = 0;; iter++) {
        if (gpurma_dev_compare(gpurma_sh_load_acquire_u64(p), cmp, value))
            return GPURMA_SUCCESS;
        if (gpurma_dev__expired(iter, &start, timeout_ns))
            return GPURMA_ERR_TIMEOUT;
        gpurma_sh_pause_n(iter);
    }
}

/* ------------------------------------------------------------- LL packets */

/* Packets of psize (8: 4 payload bytes each; 16: 8) that carry `bytes`. */
GPURMA_HOST_DEVICE size_t gpurma_dev__packet_count(size_t bytes, int psize)
{
    return gpurma_sh_div_ceil(bytes, (size_t)psize / 2);
}

/* The window bytes those packets take, in *span; 0 (and *span untouched)
 * when that does not fit in a size_t. */
GPURMA_HOST_DEVICE int gpurma_dev__packet_span(size_t bytes, int psize, size_t *span)
{
    size_t npk = gpurma_dev__packet_count(bytes, psize);
    if (npk > SIZE_MAX / (size_t)psize)
        return 0;
    *span = npk * (size_t)psize;
    return 1;
}

/* The same, saturated: SIZE_MAX (never a multiple of 8, so never a real
 * span, and larger than any window) when it does not fit. */
GPURMA_HOST_DEVICE size_t gpurma_dev__packet_bytes(size_t bytes, int psize)
{
    size_t span;
    return gpurma_dev__packet_span(bytes, psize, &span) ? span : SIZE_MAX;
}

/* What a packet call checks after the peer, before it writes or waits: a
 * buffer, a footprint that fits, inside the loaded peer entry, a team
 * thread, an offset aligned to the packet size. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_packets(const gpurma_dev_peer_t *pe, size_t off,
                                                        size_t bytes, const void *buf,
                                                        int psize, unsigned tid,
                                                        unsigned nthreads)
{
    size_t span = SIZE_MAX;
    int fits = gpurma_dev__packet_span(bytes, psize, &span);
    gpurma_status_t rc = gpurma_dev__check_peer_range(pe, off, span, buf);
    if (rc == GPURMA_SUCCESS && !fits)
        rc = GPURMA_ERR_OUT_OF_BOUNDS; /* only a window of SIZE_MAX bytes gets here */
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_team(tid, nthreads);
    if (rc == GPURMA_SUCCESS && (off & ((size_t)psize - 1)))
        rc = GPURMA_ERR_MISALIGNED;
    return rc;
}

#endif
