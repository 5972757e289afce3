/*
 * gpurma_device.h - the device API: one-sided operations callable from GPU
 * kernels (CUDA, HIP) and, compiled as plain C, from CPU threads on the host
 * backend. Header-only: no -rdc, no global device state, nothing to link but
 * libgpurma. Handles are passed by value; get one with gpurma_win_device().
 *
 * Channels: gpurma_dev_win_chan(w, peer) gives a gpurma_dev_chan_t, one
 * peer of the window by value (its path, base pointer, size, signal slots,
 * proxy FIFO). Every operation aimed at a peer has a channel form,
 * gpurma_dev_chan_<op>(chan, ...), that reads no table: build the channel
 * once, before a kernel's loop, and each operation in the loop works on
 * registers. For GPU windows the peer table is device memory: make
 * channels in device code (at the top of a kernel), not on the host. The
 * window forms gpurma_dev_<op>(w, peer, ...) make a channel and call the
 * channel form. A channel for a peer out of range (or from a bad handle) is
 * still a value: every operation on it returns the error its creation met
 * (GPURMA_ERR_INVALID_ARG for the peer) and writes nothing;
 * gpurma_dev_chan_status tells it up front. Packets are read from this
 * rank's own window through the channel to itself, gpurma_dev_win_chan(w,
 * w.rank). A channel lives as long as its window; on the host backend one
 * kept past gpurma_win_free gives GPURMA_ERR_FREED.
 *
 * Every function returns a gpurma_status_t; bad input (peer out of range,
 * offset+size past the target's window, sizes whose footprint overflows,
 * misaligned atomics, a handle gpurma_win_device did not make) returns an
 * error and writes nothing. On the host backend a handle kept after its
 * window was freed gives GPURMA_ERR_FREED (signal_read and counter_read,
 * which return values, give 0, also a legal value: their _checked forms
 * return the status and write the value through a pointer).
 * Waits return GPURMA_ERR_TIMEOUT after the configured timeout instead of
 * hanging.
 *
 * Cooperative forms (_coop) split the work over threads tid = 0..nthreads-1
 * of a team the caller defines; every member calls with the same arguments
 * (tid >= nthreads, or nthreads 0, is GPURMA_ERR_INVALID_ARG).
 * On a GPU, _warp and _block forms use the calling warp or block.
 */
#ifndef GPURMA_DEVICE_H
#define GPURMA_DEVICE_H

#include "gpurma.h"
#include "gpurma/detail/dev_common.h"
/* The three ways to reach a peer; each depends on dev_common.h only. This
 * file picks one per operation, with one switch on the peer's path. */
#include "gpurma/detail/dev_mem.h"  /* LOADSTORE: mapped memory          */
#include "gpurma/detail/dev_port.h" /* FIFO: descriptors to a proxy      */
#include "gpurma/detail/dev_host.h" /* HOSTCALL: library call (host only) */
/* Waits and tests on several of this rank's signal slots. */
#include "gpurma/detail/dev_wait_multi.h"
/* One element of an accumulate (element types, operators, f16/bf16). */
#include "gpurma/detail/dev_accumulate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *out with the by-value handle of win for kernels (or CPU threads). */
GPURMA_API gpurma_status_t gpurma_win_device(gpurma_win_t win, gpurma_dev_win_t *out);

#ifdef __cplusplus
}
#endif

/* ----------------------------------------------------------------- channels */

/* The peer's entry is loaded here, once; operations read only the copy
 * (the stores of a put may alias the table as far as the compiler knows,
 * and a reload between data and signal would cost a dependent load). */
GPURMA_DEVICE gpurma_dev_chan_t gpurma_dev__chan_of(const gpurma_dev_win_t *w, int peer)
{
    gpurma_dev_chan_t c;
    c.fifo = (void *)0;
    c.counters = w->counters;
    c.host_win = w->host_win;
    c.timeout_ns = w->timeout_ns;
    c.port_win_id = 0;
    c.rank = w->rank;
    c.peer = peer;
    c.num_signals = w->num_signals;
    c.num_counters = w->num_counters;
    c.status = (int32_t)gpurma_dev__check_peer(w, peer);
    c.magic = 0;
    if (c.status != GPURMA_SUCCESS) {
        c.pe.base = (char *)0;
        c.pe.signals = (gpurma_dev_signal_slot_t *)0;
        c.pe.size = 0;
        c.pe.engine = 0;
        c.pe.path = GPURMA_DEV_PATH_NONE;
        c.pe.port = 0;
        return c;
    }
    c.pe = w->peers[peer];
    if (c.pe.path == GPURMA_DEV_PATH_FIFO)
        c.fifo = gpurma_dev__port_fifo(w, (unsigned)c.pe.port, &c.port_win_id);
    c.magic = GPURMA_DEV_CHAN_MAGIC;
    return c;
}

/* The channel to peer of window w (range-checked: see the top of the file). */
GPURMA_DEVICE gpurma_dev_chan_t gpurma_dev_win_chan(gpurma_dev_win_t w, int peer)
{
    return gpurma_dev__chan_of(&w, peer);
}

/* GPURMA_SUCCESS for a usable channel, else what every operation on it returns. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_status(gpurma_dev_chan_t c)
{
    return gpurma_dev__check_chan(&c);
}

/* ------------------------------------------------------------- data movement */

/* counter: a local-completion counter of the window, or UINT32_MAX. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__chan_put(const gpurma_dev_chan_t *c, size_t dst_off,
                                                   const void *src, size_t bytes,
                                                   uint32_t counter, unsigned tid,
                                                   unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_chan(c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_team(tid, nthreads);
    if (rc == GPURMA_SUCCESS && counter != UINT32_MAX && counter >= c->num_counters)
        rc = GPURMA_ERR_INVALID_ARG;
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_peer_range(&c->pe, dst_off, bytes, src);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (c->pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_sh_copy(c->pe.base + dst_off, src, bytes, tid, nthreads);
        break;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        rc = gpurma_dev__host_put(c->host_win, c->peer, dst_off, src, bytes, tid);
        break;
#endif
    case GPURMA_DEV_PATH_FIFO: /* the proxy counts the completion */
        return gpurma_dev__port_put(c->fifo, c->port_win_id, c->peer, dst_off, src, bytes,
                                    counter, tid);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
    if (rc == GPURMA_SUCCESS)
        gpurma_dev__count_local(c->counters, counter, tid);
    return rc;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_coop(gpurma_dev_chan_t c, size_t dst_off,
                                                       const void *src, size_t bytes,
                                                       unsigned tid, unsigned nthreads)
{
    return gpurma_dev__chan_put(&c, dst_off, src, bytes, UINT32_MAX, tid, nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put(gpurma_dev_chan_t c, size_t dst_off,
                                                  const void *src, size_t bytes)
{
    return gpurma_dev__chan_put(&c, dst_off, src, bytes, UINT32_MAX, 0, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_get_coop(gpurma_dev_chan_t c, void *dst,
                                                       size_t src_off, size_t bytes,
                                                       unsigned tid, unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_chan(&c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_team(tid, nthreads);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_peer_range(&c.pe, src_off, bytes, dst);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (c.pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_sh_copy(dst, c.pe.base + src_off, bytes, tid, nthreads);
        return GPURMA_SUCCESS;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        return gpurma_dev__host_get(c.host_win, c.peer, dst, src_off, bytes, tid);
#endif
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_get(c.fifo, c.port_win_id, c.peer, dst, src_off, bytes, tid);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_get(gpurma_dev_chan_t c, void *dst, size_t src_off,
                                                  size_t bytes)
{
    return gpurma_dev_chan_get_coop(c, dst, src_off, bytes, 0, 1);
}

/* A single store of 1, 2, 4 or 8 bytes at a naturally aligned offset. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_value(gpurma_dev_chan_t c, size_t dst_off,
                                                        uint64_t value, size_t bytes)
{
    gpurma_status_t rc = gpurma_dev__check_chan(&c);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
        return GPURMA_ERR_INVALID_ARG;
    rc = gpurma_dev__check_peer_range(&c.pe, dst_off, bytes, &c);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (dst_off & (bytes - 1))
        return GPURMA_ERR_MISALIGNED;
    switch (c.pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_dev__store_value(c.pe.base + dst_off, value, bytes);
        return GPURMA_SUCCESS;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        return gpurma_dev__host_put_value(c.host_win, c.peer, dst_off, value, bytes);
#endif
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_submit(c.fifo, c.port_win_id,
                                       gpurma_port_desc_put_value(c.peer, dst_off, value, bytes),
                                       0, (uint64_t *)0);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_coop(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                  const void *src, size_t bytes, unsigned tid,
                                                  unsigned nthreads)
{
    return gpurma_dev_chan_put_coop(gpurma_dev__chan_of(&w, peer), dst_off, src, bytes, tid,
                                    nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put(gpurma_dev_win_t w, int peer, size_t dst_off,
                                             const void *src, size_t bytes)
{
    return gpurma_dev_chan_put(gpurma_dev__chan_of(&w, peer), dst_off, src, bytes);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_get_coop(gpurma_dev_win_t w, int peer, void *dst,
                                                  size_t src_off, size_t bytes, unsigned tid,
                                                  unsigned nthreads)
{
    return gpurma_dev_chan_get_coop(gpurma_dev__chan_of(&w, peer), dst, src_off, bytes, tid,
                                    nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_get(gpurma_dev_win_t w, int peer, void *dst,
                                             size_t src_off, size_t bytes)
{
    return gpurma_dev_chan_get(gpurma_dev__chan_of(&w, peer), dst, src_off, bytes);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_value(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                   uint64_t value, size_t bytes)
{
    return gpurma_dev_chan_put_value(gpurma_dev__chan_of(&w, peer), dst_off, value, bytes);
}

/* ------------------------------------------------------------------ signals */

/* Through the proxy, or into the peer's slots where they are mapped (the
 * load/store and host-call paths both map signals). Arguments checked. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__chan_signal_to(const gpurma_dev_chan_t *c, uint32_t sig,
                                                         gpurma_signal_op_t op, uint64_t value)
{
    switch (c->pe.path) {
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_submit(c->fifo, c->port_win_id,
                                       gpurma_port_desc_signal(c->peer, sig, op, value), 0,
                                       (uint64_t *)0);
    default:
        return gpurma_dev__mem_signal(&c->pe, (uint32_t)c->rank, sig, op, value);
    }
}

/* Release: puts this thread issued earlier to the peer are visible when the
 * peer observes the signal. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_signal(gpurma_dev_chan_t c, uint32_t sig,
                                                     gpurma_signal_op_t op, uint64_t value)
{
    gpurma_status_t rc = gpurma_dev__check_chan(&c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_signal_args(c.num_signals, sig, op);
    if (rc != GPURMA_SUCCESS)
        return rc;
    return gpurma_dev__chan_signal_to(&c, sig, op, value);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_signal(gpurma_dev_win_t w, int peer, uint32_t sig,
                                                gpurma_signal_op_t op, uint64_t value)
{
    return gpurma_dev_chan_signal(gpurma_dev__chan_of(&w, peer), sig, op, value);
}

/* With one thread: data, then the signal (one descriptor on the FIFO path).
 * With a team of several, each member moves its share and none signals:
 * the team synchronizes, then one member signals (the _warp and _block
 * forms do that themselves). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__chan_put_signal(const gpurma_dev_chan_t *c,
                                                          size_t dst_off, const void *src,
                                                          size_t bytes, uint32_t sig,
                                                          gpurma_signal_op_t op, uint64_t value,
                                                          uint32_t counter, unsigned tid,
                                                          unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_chan(c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_team(tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (gpurma_dev__check_signal_args(c->num_signals, sig, op) != GPURMA_SUCCESS ||
        (counter != UINT32_MAX && counter >= c->num_counters))
        return GPURMA_ERR_INVALID_ARG;
    rc = gpurma_dev__check_peer_range(&c->pe, dst_off, bytes, src);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (c->pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        /* One aligned word from one thread (the latency case): one 8-byte
         * store, then the signal's release store, nothing in between. */
        if (nthreads == 1 && bytes == 8 && c->pe.signals && !(((uintptr_t)src | dst_off) & 7)) {
            *(uint64_t *)(c->pe.base + dst_off) = *(const uint64_t *)src;
            gpurma_dev__count_local(c->counters, counter, 0);
            gpurma_dev__signal_slot(&c->pe.signals[sig], (uint32_t)c->rank, op, value);
            return GPURMA_SUCCESS;
        }
        gpurma_sh_copy(c->pe.base + dst_off, src, bytes, tid, nthreads);
        break;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        rc = gpurma_dev__host_put(c->host_win, c->peer, dst_off, src, bytes, tid);
        break;
#endif
    case GPURMA_DEV_PATH_FIFO:
        if (nthreads == 1) /* data and signal in one descriptor */
            return gpurma_dev__port_put_signal(c->fifo, c->port_win_id, c->peer, dst_off, src,
                                               bytes, sig, op, value, counter);
        return gpurma_dev__port_put(c->fifo, c->port_win_id, c->peer, dst_off, src, bytes,
                                    counter, tid);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
    if (rc == GPURMA_SUCCESS)
        gpurma_dev__count_local(c->counters, counter, tid);
    if (rc != GPURMA_SUCCESS || nthreads > 1)
        return rc;
    return gpurma_dev__mem_signal(&c->pe, (uint32_t)c->rank, sig, op, value);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_signal_coop(gpurma_dev_chan_t c, size_t dst_off,
                                                              const void *src, size_t bytes,
                                                              uint32_t sig, gpurma_signal_op_t op,
                                                              uint64_t value, unsigned tid,
                                                              unsigned nthreads)
{
    return gpurma_dev__chan_put_signal(&c, dst_off, src, bytes, sig, op, value, UINT32_MAX, tid,
                                       nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_signal(gpurma_dev_chan_t c, size_t dst_off,
                                                         const void *src, size_t bytes,
                                                         uint32_t sig, gpurma_signal_op_t op,
                                                         uint64_t value)
{
    return gpurma_dev__chan_put_signal(&c, dst_off, src, bytes, sig, op, value, UINT32_MAX, 0, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_signal_coop(gpurma_dev_win_t w, int peer,
                                                         size_t dst_off, const void *src,
                                                         size_t bytes, uint32_t sig,
                                                         gpurma_signal_op_t op, uint64_t value,
                                                         unsigned tid, unsigned nthreads)
{
    return gpurma_dev_chan_put_signal_coop(gpurma_dev__chan_of(&w, peer), dst_off, src, bytes,
                                           sig, op, value, tid, nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_signal(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                    const void *src, size_t bytes, uint32_t sig,
                                                    gpurma_signal_op_t op, uint64_t value)
{
    return gpurma_dev_chan_put_signal(gpurma_dev__chan_of(&w, peer), dst_off, src, bytes, sig, op,
                                      value);
}

/* Acquire, as gpurma_dev_signal_read; *value is untouched on error (bad
 * handle, freed window, sig out of range, value NULL). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_signal_read_checked(gpurma_dev_win_t w, uint32_t sig,
                                                             uint64_t *value)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (sig >= w.num_signals || !value)
        return GPURMA_ERR_INVALID_ARG;
    *value = gpurma_sh_load_acquire_u64(&w.signals[sig].value);
    return GPURMA_SUCCESS;
}

/* 0 for a bad id or handle, or a freed window (0 is also a legal value:
 * gpurma_dev_signal_read_checked tells them apart). */
GPURMA_DEVICE uint64_t gpurma_dev_signal_read(gpurma_dev_win_t w, uint32_t sig)
{
    uint64_t v = 0;
    return gpurma_dev_signal_read_checked(w, sig, &v) == GPURMA_SUCCESS ? v : 0;
}

/* Acquire: data ordered before the matching signal is readable on return. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_wait_until(gpurma_dev_win_t w, uint32_t sig,
                                                    gpurma_cmp_t cmp, uint64_t value)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (sig >= w.num_signals || (unsigned)cmp > GPURMA_CMP_LE)
        return GPURMA_ERR_INVALID_ARG;
    return gpurma_dev__wait_u64(&w.signals[sig].value, cmp, value, w.timeout_ns);
}

/* ------------------------------------------------------------- completion */

/* Named as MPI-3 names them (docs/mpi-rma.md): flush = remote completion
 * (MPI_Win_flush), flush_local = local completion (MPI_Win_flush_local,
 * NCCL GIN's flush), quiet = flush to every peer, order = per-peer ordering
 * (shmem_fence; gpurma_dev_fence is its deprecated name). */

/* Local completion: load/store and host calls complete in place; port
 * operations when the proxy context serving the peer (every context, for
 * GPURMA_ALL_PEERS) has executed everything pushed to it so far. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_flush_local(gpurma_dev_chan_t c)
{
    gpurma_status_t rc = gpurma_dev__check_chan(&c);
    if (rc != GPURMA_SUCCESS || c.pe.path != GPURMA_DEV_PATH_FIFO || !c.fifo)
        return rc;
    return gpurma_dev__port_flush_fifo(c.fifo);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_flush_local(gpurma_dev_win_t w, int peer)
{
    if (peer != GPURMA_ALL_PEERS)
        return gpurma_dev_chan_flush_local(gpurma_dev__chan_of(&w, peer));
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    return rc != GPURMA_SUCCESS ? rc : gpurma_dev__port_flush_all(&w);
}

/* Remote completion to one peer: stores made visible at system scope, and a
 * port peer's context quiesced (only that context). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_flush(gpurma_dev_chan_t c)
{
    gpurma_status_t rc = gpurma_dev__check_chan(&c);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_sh_fence_system();
    if (c.pe.path != GPURMA_DEV_PATH_FIFO || !c.fifo)
        return GPURMA_SUCCESS;
    return gpurma_dev__port_submit(c.fifo, c.port_win_id,
                                   gpurma_port_desc_sync(GPURMA_PORT_OP_QUIET), 1,
                                   (uint64_t *)0);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_quiet(gpurma_dev_win_t w)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_sh_fence_system();
    return gpurma_dev__port_all(&w, GPURMA_PORT_OP_QUIET, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_flush(gpurma_dev_win_t w, int peer)
{
    return peer == GPURMA_ALL_PEERS ? gpurma_dev_quiet(w)
                                    : gpurma_dev_chan_flush(gpurma_dev__chan_of(&w, peer));
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_order(gpurma_dev_win_t w)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_sh_fence_system();
    return gpurma_dev__port_all(&w, GPURMA_PORT_OP_FENCE, 0);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_fence(gpurma_dev_win_t w) { return gpurma_dev_order(w); }

/* ------------------------------------------------------------------ atomics */

/* kind is a GPURMA_DEV__ATOMIC_*. With via_port 0 (the host engines, and
 * the proxy executing a descriptor), a peer on the FIFO path is
 * UNSUPPORTED rather than pushed to the proxy again. Without old (a
 * non-fetching atomic) the FIFO path returns once the descriptor is pushed,
 * as a put does: nothing waits for a reply nobody reads, and flush or quiet
 * complete it. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__chan_atomic(const gpurma_dev_chan_t *c, int kind,
                                                      size_t off, uint64_t value,
                                                      uint64_t compare, uint64_t *old,
                                                      int via_port)
{
    gpurma_status_t rc = gpurma_dev__check_chan(c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_atomic_at(&c->pe, off);
    if (rc != GPURMA_SUCCESS)
        return rc;
    uint64_t prev = 0;
    switch (c->pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        prev = gpurma_dev__atomic_at((uint64_t *)(c->pe.base + off), kind, value, compare);
        break;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        rc = gpurma_dev__host_atomic(c->host_win, kind, c->peer, off, value, compare, &prev);
        break;
#endif
    case GPURMA_DEV_PATH_FIFO: {
        if (!via_port)
            return GPURMA_ERR_UNSUPPORTED;
        gpurma_port_desc_t d = gpurma_port_desc_atomic(c->peer, kind, off, value, compare);
        if (!old)
            d.flags |= GPURMA_PORT_F_NO_RESULT;
        rc = gpurma_dev__port_submit(c->fifo, c->port_win_id, d, old != 0,
                                     old ? &prev : (uint64_t *)0);
        break;
    }
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
    if (rc == GPURMA_SUCCESS && old)
        *old = prev;
    return rc;
}

/* The atomic on a peer reached by load/store or a host call (the library's
 * own engines). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__atomic(const gpurma_dev_win_t *w, int kind, int peer,
                                                 size_t off, uint64_t value, uint64_t compare,
                                                 uint64_t *old)
{
    gpurma_dev_chan_t c = gpurma_dev__chan_of(w, peer);
    return gpurma_dev__chan_atomic(&c, kind, off, value, compare, old, 0);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_atomic_fetch_add(gpurma_dev_chan_t c, size_t off,
                                                               uint64_t value, uint64_t *old)
{
    return gpurma_dev__chan_atomic(&c, GPURMA_DEV__ATOMIC_FETCH_ADD, off, value, 0, old, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_atomic_swap(gpurma_dev_chan_t c, size_t off,
                                                          uint64_t value, uint64_t *old)
{
    return gpurma_dev__chan_atomic(&c, GPURMA_DEV__ATOMIC_SWAP, off, value, 0, old, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_atomic_compare_swap(gpurma_dev_chan_t c, size_t off,
                                                                  uint64_t expected,
                                                                  uint64_t desired, uint64_t *old)
{
    return gpurma_dev__chan_atomic(&c, GPURMA_DEV__ATOMIC_CAS, off, desired, expected, old, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_fetch_add(gpurma_dev_win_t w, int peer,
                                                          size_t off, uint64_t value,
                                                          uint64_t *old)
{
    return gpurma_dev_chan_atomic_fetch_add(gpurma_dev__chan_of(&w, peer), off, value, old);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_swap(gpurma_dev_win_t w, int peer, size_t off,
                                                     uint64_t value, uint64_t *old)
{
    return gpurma_dev_chan_atomic_swap(gpurma_dev__chan_of(&w, peer), off, value, old);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_compare_swap(gpurma_dev_win_t w, int peer,
                                                             size_t off, uint64_t expected,
                                                             uint64_t desired, uint64_t *old)
{
    return gpurma_dev_chan_atomic_compare_swap(gpurma_dev__chan_of(&w, peer), off, expected,
                                               desired, old);
}

/* ----------------------------------------------------------------- counters */

GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_counted(gpurma_dev_chan_t c, size_t dst_off,
                                                          const void *src, size_t bytes,
                                                          uint32_t counter)
{
    /* UINT32_MAX means "no counter" inside; here it is a bad id like any other. */
    if (counter == UINT32_MAX && gpurma_dev__check_chan(&c) == GPURMA_SUCCESS)
        return GPURMA_ERR_INVALID_ARG;
    return gpurma_dev__chan_put(&c, dst_off, src, bytes, counter, 0, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_counted(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                     const void *src, size_t bytes,
                                                     uint32_t counter)
{
    return gpurma_dev_chan_put_counted(gpurma_dev__chan_of(&w, peer), dst_off, src, bytes,
                                       counter);
}

/* Acquire, as gpurma_dev_counter_read; *value is untouched on error (bad
 * handle, freed window, counter out of range, value NULL). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_counter_read_checked(gpurma_dev_win_t w,
                                                              uint32_t counter, uint64_t *value)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (counter >= w.num_counters || !value)
        return GPURMA_ERR_INVALID_ARG;
    *value = gpurma_sh_load_acquire_u64(&w.counters[counter]);
    return GPURMA_SUCCESS;
}

/* 0 for a bad id or handle, or a freed window (0 is also a legal value:
 * gpurma_dev_counter_read_checked tells them apart). */
GPURMA_DEVICE uint64_t gpurma_dev_counter_read(gpurma_dev_win_t w, uint32_t counter)
{
    uint64_t v = 0;
    return gpurma_dev_counter_read_checked(w, counter, &v) == GPURMA_SUCCESS ? v : 0;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_counter_wait(gpurma_dev_win_t w, uint32_t counter,
                                                      uint64_t value)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (counter >= w.num_counters)
        return GPURMA_ERR_INVALID_ARG;
    return gpurma_dev__wait_u64(&w.counters[counter], GPURMA_CMP_GE, value, w.timeout_ns);
}

/* ------------------------------------------------------------- LL packets */

/* Bytes of window space that `bytes` of payload occupy as packets (a
 * multiple of the packet size), or SIZE_MAX when that does not fit in a
 * size_t (more than 2^63 - 4 bytes of payload for 8-byte packets, 2^63 - 8
 * for 16-byte ones). SIZE_MAX is never a real footprint and exceeds every
 * window, so a check `n > size || off > size - n` refuses it; the packet
 * calls return GPURMA_ERR_OUT_OF_BOUNDS for such sizes. */
GPURMA_HOST_DEVICE size_t gpurma_dev_packet8_bytes(size_t bytes)
{
    return gpurma_dev__packet_bytes(bytes, 8);
}
GPURMA_HOST_DEVICE size_t gpurma_dev_packet16_bytes(size_t bytes)
{
    return gpurma_dev__packet_bytes(bytes, 16);
}

/* psize is 8 (one data word per packet) or 16 (two). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__chan_put_packets(const gpurma_dev_chan_t *c,
                                                           size_t dst_off, const void *src,
                                                           size_t bytes, uint32_t flag, int psize,
                                                           unsigned tid, unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_chan(c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_packets(&c->pe, dst_off, bytes, src, psize, tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (c->pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_dev__store_packets((uint64_t *)(c->pe.base + dst_off), src, bytes, flag, psize,
                                  tid, nthreads);
        return GPURMA_SUCCESS;
    case GPURMA_DEV_PATH_FIFO: /* one thread hands the payload to the proxy */
        return gpurma_dev__port_packets(c->fifo, c->port_win_id, c->peer, dst_off, src, bytes,
                                        flag, psize, tid);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

/* Packets land in this rank's own window, which is always mapped here:
 * readers use the channel to themselves, gpurma_dev_win_chan(w, w.rank)
 * (a channel to another rank is INVALID_ARG). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__chan_read_packets(const gpurma_dev_chan_t *c,
                                                            size_t src_off, void *dst,
                                                            size_t bytes, uint32_t flag,
                                                            int psize, unsigned tid,
                                                            unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_chan(c);
    if (rc == GPURMA_SUCCESS && c->peer != c->rank)
        rc = GPURMA_ERR_INVALID_ARG;
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_packets(&c->pe, src_off, bytes, dst, psize, tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (!c->pe.base)
        return GPURMA_ERR_UNSUPPORTED;
    return gpurma_dev__mem_read_packets((const uint64_t *)(c->pe.base + src_off), dst, bytes,
                                        flag, psize, c->timeout_ns, tid, nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev__read_packets(const gpurma_dev_win_t *w, size_t src_off,
                                                       void *dst, size_t bytes, uint32_t flag,
                                                       int psize, unsigned tid,
                                                       unsigned nthreads)
{
    gpurma_dev_chan_t me = gpurma_dev__chan_of(w, w->rank);
    return gpurma_dev__chan_read_packets(&me, src_off, dst, bytes, flag, psize, tid, nthreads);
}

/* 8-byte packets: 4 bytes of data and a 4-byte flag in one store. The flag
 * must differ from what the destination held before (e.g. a round number).
 * 16-byte packets: two (4 data, 4 flag) halves, 8 bytes of data each. */
#define GPURMA_DEV__PUT_PACKET_FORMS(name, psize)                                              \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_##name##_coop(                              \
        gpurma_dev_chan_t c, size_t dst_off, const void *src, size_t bytes, uint32_t flag,     \
        unsigned tid, unsigned nthreads)                                                       \
    {                                                                                          \
        return gpurma_dev__chan_put_packets(&c, dst_off, src, bytes, flag, psize, tid,         \
                                            nthreads);                                         \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_##name(gpurma_dev_chan_t c, size_t dst_off, \
                                                          const void *src, size_t bytes,       \
                                                          uint32_t flag)                       \
    {                                                                                          \
        return gpurma_dev__chan_put_packets(&c, dst_off, src, bytes, flag, psize, 0, 1);       \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_##name##_coop(gpurma_dev_win_t w, int peer,      \
                                                            size_t dst_off, const void *src,   \
                                                            size_t bytes, uint32_t flag,       \
                                                            unsigned tid, unsigned nthreads)   \
    {                                                                                          \
        return gpurma_dev_chan_##name##_coop(gpurma_dev__chan_of(&w, peer), dst_off, src,      \
                                             bytes, flag, tid, nthreads);                      \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_##name(gpurma_dev_win_t w, int peer,             \
                                                     size_t dst_off, const void *src,          \
                                                     size_t bytes, uint32_t flag)              \
    {                                                                                          \
        return gpurma_dev_chan_##name(gpurma_dev__chan_of(&w, peer), dst_off, src, bytes,      \
                                      flag);                                                   \
    }
GPURMA_DEV__PUT_PACKET_FORMS(put_packets, 8)
GPURMA_DEV__PUT_PACKET_FORMS(put_packets16, 16)
#undef GPURMA_DEV__PUT_PACKET_FORMS

/* Waits for every packet at src_off of this rank's window to carry flag,
 * then copies the payload to dst (8 or 16-byte packets). */
#define GPURMA_DEV__READ_PACKET_FORMS(name, psize)                                             \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_##name##_coop(                              \
        gpurma_dev_chan_t self, size_t src_off, void *dst, size_t bytes, uint32_t flag,        \
        unsigned tid, unsigned nthreads)                                                       \
    {                                                                                          \
        return gpurma_dev__chan_read_packets(&self, src_off, dst, bytes, flag, psize, tid,     \
                                             nthreads);                                        \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_##name(gpurma_dev_chan_t self,              \
                                                          size_t src_off, void *dst,           \
                                                          size_t bytes, uint32_t flag)         \
    {                                                                                          \
        return gpurma_dev__chan_read_packets(&self, src_off, dst, bytes, flag, psize, 0, 1);   \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_##name##_coop(gpurma_dev_win_t w, size_t src_off, \
                                                            void *dst, size_t bytes,           \
                                                            uint32_t flag, unsigned tid,       \
                                                            unsigned nthreads)                 \
    {                                                                                          \
        return gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, psize, tid, nthreads);  \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_##name(gpurma_dev_win_t w, size_t src_off,       \
                                                     void *dst, size_t bytes, uint32_t flag)   \
    {                                                                                          \
        return gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, psize, 0, 1);           \
    }
GPURMA_DEV__READ_PACKET_FORMS(read_packets, 8)
GPURMA_DEV__READ_PACKET_FORMS(read_packets16, 16)
#undef GPURMA_DEV__READ_PACKET_FORMS

/* ------------------------------------------------- warp and block forms */
#if GPURMA_DEV_GPU
/*
 * _warp forms: every lane of a converged warp calls with the same arguments;
 * _block forms: every thread of the block does (they contain barriers, so
 * never call them under a condition that splits the block). The group
 * shares the copy with 16-byte vector moves; destinations of get and
 * read_packets are complete for the whole group on return.
 *
 * put_signal has one group barrier and no other fence than the signal's:
 * every thread stores its share (no fence of its own), the group meets
 * once, and thread 0 issues the signal's system-scope release store (on the
 * FIFO path: the release store that commits the descriptor, after which
 * the copy engine reads the source). Why that is enough: the barrier
 * orders each thread's stores before thread 0's next instructions at block
 * scope, and a release is cumulative, so it publishes everything thread 0
 * has observed, not only its own stores; a peer that acquires the signal
 * therefore sees the whole group's data. Each thread fencing before the
 * barrier, or thread 0 fencing before its release store, would only wait
 * for the same stores twice. The other threads return after the barrier
 * without waiting for the signal. (bar.arrive for them would let them leave
 * even earlier, but a thread that reaches the next barrier of the block
 * before thread 0 leaves this one would be counted twice.)
 * Every thread makes the same argument checks before the barrier, so all
 * return the same status, except a FIFO that stays full for the timeout:
 * only thread 0, which pushes, reports that.
 */

#define GPURMA_DEV__GROUP_FORMS(scope, TID, NTHREADS, SYNC, ANY)                              \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_##scope(gpurma_dev_chan_t c,            \
                                                               size_t dst_off,                 \
                                                               const void *src, size_t bytes)  \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev_chan_put_coop(c, dst_off, src, bytes, TID, NTHREADS);  \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_get_##scope(gpurma_dev_chan_t c, void *dst, \
                                                               size_t src_off, size_t bytes)   \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev_chan_get_coop(c, dst, src_off, bytes, TID, NTHREADS);  \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_signal_##scope(                         \
        gpurma_dev_chan_t c, size_t dst_off, const void *src, size_t bytes, uint32_t sig,      \
        gpurma_signal_op_t op, uint64_t value)                                                 \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__check_chan(&c);                                       \
        if (rc == GPURMA_SUCCESS)                                                              \
            rc = gpurma_dev__check_signal_args(c.num_signals, sig, op);                        \
        if (rc == GPURMA_SUCCESS)                                                              \
            rc = gpurma_dev__check_peer_range(&c.pe, dst_off, bytes, src);                     \
        if (rc == GPURMA_SUCCESS) {                                                            \
            if (c.pe.path == GPURMA_DEV_PATH_FIFO)                                             \
                rc = gpurma_dev__port_readable(src, bytes);                                    \
            else if (c.pe.path != GPURMA_DEV_PATH_LOADSTORE || !c.pe.signals)                  \
                rc = GPURMA_ERR_UNSUPPORTED;                                                   \
        }                                                                                      \
        if (rc != GPURMA_SUCCESS)                                                              \
            return rc; /* the same in every thread: none waits at the barrier */               \
        if (c.pe.path == GPURMA_DEV_PATH_LOADSTORE)                                            \
            gpurma_sh_copy(c.pe.base + dst_off, src, bytes, TID, NTHREADS);                    \
        SYNC;                                                                                  \
        if ((TID) != 0)                                                                        \
            return GPURMA_SUCCESS;                                                             \
        if (c.pe.path == GPURMA_DEV_PATH_FIFO)                                                 \
            return gpurma_dev__port_submit(                                                    \
                c.fifo, c.port_win_id,                                                         \
                gpurma_port_desc_put_signal(c.peer, dst_off, src, bytes, sig, op, value,       \
                                            UINT32_MAX),                                       \
                0, (uint64_t *)0);                                                             \
        gpurma_dev__signal_slot(&c.pe.signals[sig], (uint32_t)c.rank, op, value);              \
        return GPURMA_SUCCESS;                                                                 \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_packets_##scope(                        \
        gpurma_dev_chan_t c, size_t dst_off, const void *src, size_t bytes, uint32_t flag)     \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__chan_put_packets(&c, dst_off, src, bytes, flag, 8,    \
                                                          TID, NTHREADS);                      \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_put_packets16_##scope(                      \
        gpurma_dev_chan_t c, size_t dst_off, const void *src, size_t bytes, uint32_t flag)     \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__chan_put_packets(&c, dst_off, src, bytes, flag, 16,   \
                                                          TID, NTHREADS);                      \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_##scope(gpurma_dev_win_t w, int peer,        \
                                                          size_t dst_off, const void *src,     \
                                                          size_t bytes)                        \
    {                                                                                          \
        return gpurma_dev_chan_put_##scope(gpurma_dev__chan_of(&w, peer), dst_off, src,        \
                                           bytes);                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_get_##scope(gpurma_dev_win_t w, int peer,        \
                                                          void *dst, size_t src_off,           \
                                                          size_t bytes)                        \
    {                                                                                          \
        return gpurma_dev_chan_get_##scope(gpurma_dev__chan_of(&w, peer), dst, src_off,        \
                                           bytes);                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_signal_##scope(                              \
        gpurma_dev_win_t w, int peer, size_t dst_off, const void *src, size_t bytes,           \
        uint32_t sig, gpurma_signal_op_t op, uint64_t value)                                   \
    {                                                                                          \
        return gpurma_dev_chan_put_signal_##scope(gpurma_dev__chan_of(&w, peer), dst_off, src, \
                                                  bytes, sig, op, value);                      \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets_##scope(                             \
        gpurma_dev_win_t w, int peer, size_t dst_off, const void *src, size_t bytes,           \
        uint32_t flag)                                                                         \
    {                                                                                          \
        return gpurma_dev_chan_put_packets_##scope(gpurma_dev__chan_of(&w, peer), dst_off,     \
                                                   src, bytes, flag);                          \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets16_##scope(                           \
        gpurma_dev_win_t w, int peer, size_t dst_off, const void *src, size_t bytes,           \
        uint32_t flag)                                                                         \
    {                                                                                          \
        return gpurma_dev_chan_put_packets16_##scope(gpurma_dev__chan_of(&w, peer), dst_off,   \
                                                     src, bytes, flag);                        \
    }                                                                                          \
    /* A timeout in one thread is reported by all. */                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_read_packets_##scope(                       \
        gpurma_dev_chan_t self, size_t src_off, void *dst, size_t bytes, uint32_t flag)        \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__chan_read_packets(&self, src_off, dst, bytes, flag,   \
                                                           8, TID, NTHREADS);                  \
        return ANY(rc == GPURMA_ERR_TIMEOUT) ? GPURMA_ERR_TIMEOUT : rc;                        \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_chan_read_packets16_##scope(                     \
        gpurma_dev_chan_t self, size_t src_off, void *dst, size_t bytes, uint32_t flag)        \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__chan_read_packets(&self, src_off, dst, bytes, flag,   \
                                                           16, TID, NTHREADS);                 \
        return ANY(rc == GPURMA_ERR_TIMEOUT) ? GPURMA_ERR_TIMEOUT : rc;                        \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets_##scope(                            \
        gpurma_dev_win_t w, size_t src_off, void *dst, size_t bytes, uint32_t flag)            \
    {                                                                                          \
        return gpurma_dev_chan_read_packets_##scope(gpurma_dev__chan_of(&w, w.rank), src_off,  \
                                                    dst, bytes, flag);                         \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets16_##scope(                          \
        gpurma_dev_win_t w, size_t src_off, void *dst, size_t bytes, uint32_t flag)            \
    {                                                                                          \
        return gpurma_dev_chan_read_packets16_##scope(gpurma_dev__chan_of(&w, w.rank),         \
                                                      src_off, dst, bytes, flag);              \
    }

GPURMA_DEV__GROUP_FORMS(warp, gpurma_sh_lane(), gpurma_sh_warp_threads(), gpurma_sh_sync_warp(),
                        gpurma_sh_warp_any)
GPURMA_DEV__GROUP_FORMS(block, gpurma_sh_block_tid(), gpurma_sh_block_threads(),
                        gpurma_sh_sync_block(), gpurma_sh_block_any)
#undef GPURMA_DEV__GROUP_FORMS

#endif /* GPURMA_DEV_GPU */

/* Strided and subarray transfers (on the channel operations above). */
#include "gpurma/detail/dev_strided.h"
/* Accumulate, fetch_and_op, compare_and_swap (native GPU atomics where they exist). */
#include "gpurma/detail/dev_acc_ops.h"

#endif /* GPURMA_DEVICE_H */
