/*
 * gpurma_device.h - the device API: one-sided operations callable from GPU
 * kernels (CUDA, HIP) and, compiled as plain C, from CPU threads on the host
 * backend. Header-only: no -rdc, no global device state, nothing to link but
 * libgpurma. Handles are passed by value; get one with gpurma_win_device().
 *
 * Every function returns a gpurma_status_t; bad input (peer out of range,
 * offset+size past the target's window, misaligned atomics) returns an error
 * and writes nothing. Waits return GPURMA_ERR_TIMEOUT after the configured
 * timeout instead of hanging.
 *
 * Cooperative forms (_coop) split the work over threads tid = 0..nthreads-1
 * of a team the caller defines; every member calls with the same arguments.
 * On a GPU, _warp and _block forms use the calling warp or block.
 */
#ifndef GPURMA_DEVICE_H
#define GPURMA_DEVICE_H

#include "gpurma.h"
#include "gpurma/detail/dev_shim.h"
#include "gpurma/detail/dev_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *out with the by-value handle of win for kernels (or CPU threads). */
GPURMA_API gpurma_status_t gpurma_win_device(gpurma_win_t win, gpurma_dev_win_t *out);

#if !GPURMA_DEV_GPU
/* Host backend: operations on peers whose memory is not mapped in this
 * process (windows made by gpurma_win_create on private memory). */
enum {
    GPURMA_DEV_OP_PUT = 0, GPURMA_DEV_OP_GET, GPURMA_DEV_OP_FETCH_ADD,
    GPURMA_DEV_OP_SWAP, GPURMA_DEV_OP_CAS
};
GPURMA_API gpurma_status_t gpurma_dev_host_call(const gpurma_dev_win_t *w, int op, int peer,
                                                size_t off, void *buf, size_t bytes, uint64_t a,
                                                uint64_t b, uint64_t *old);
#endif

#ifdef __cplusplus
}
#endif

#include "gpurma/detail/dev_mem.h"
#include "gpurma/detail/dev_port.h"

/* Every operation loads the peer's entry once and works on that copy: the
 * stores of a put may alias the table as far as the compiler knows, and a
 * reload between data and signal costs a dependent global load. */

/* ------------------------------------------------------------- data movement */

GPURMA_DEVICE gpurma_status_t gpurma_dev__put_to(const gpurma_dev_win_t *w,
                                                 const gpurma_dev_peer_t *pe, int peer,
                                                 size_t dst_off, const void *src, size_t bytes,
                                                 uint32_t counter, unsigned tid,
                                                 unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_peer_range(pe, dst_off, bytes, src);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (pe->path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_sh_copy(pe->base + dst_off, src, bytes, tid, nthreads);
        break;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        if (!tid)
            rc = gpurma_dev_host_call(w, GPURMA_DEV_OP_PUT, peer, dst_off, (void *)src, bytes, 0,
                                      0, (uint64_t *)0);
        break;
#endif
    case GPURMA_DEV_PATH_FIFO:
        /* the proxy bumps the counter when the data has left the source */
        if (bytes && !gpurma_sh_proxy_readable(src))
            return GPURMA_ERR_UNSUPPORTED;
        return tid ? GPURMA_SUCCESS
                   : gpurma_dev__port_op(w, (unsigned)pe->port, GPURMA_PORT_OP_PUT, peer, dst_off,
                                         (uint64_t)(uintptr_t)src, bytes, 0, 0, UINT32_MAX, 0,
                                         counter, 0, (uint64_t *)0);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
    /* load/store and host-call puts are locally complete here */
    if (rc == GPURMA_SUCCESS && counter != UINT32_MAX && !tid)
        gpurma_sh_fetch_add_u64(&w->counters[counter], 1);
    return rc;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_coop(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                  const void *src, size_t bytes, unsigned tid,
                                                  unsigned nthreads)
{
    if (peer < 0 || peer >= w.size)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_dev_peer_t pe = w.peers[peer];
    return gpurma_dev__put_to(&w, &pe, peer, dst_off, src, bytes, UINT32_MAX, tid, nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put(gpurma_dev_win_t w, int peer, size_t dst_off,
                                             const void *src, size_t bytes)
{
    return gpurma_dev_put_coop(w, peer, dst_off, src, bytes, 0, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_get_coop(gpurma_dev_win_t w, int peer, void *dst,
                                                  size_t src_off, size_t bytes, unsigned tid,
                                                  unsigned nthreads)
{
    if (peer < 0 || peer >= w.size)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_dev_peer_t pe = w.peers[peer];
    gpurma_status_t rc = gpurma_dev__check_peer_range(&pe, src_off, bytes, dst);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_sh_copy(dst, pe.base + src_off, bytes, tid, nthreads);
        return GPURMA_SUCCESS;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        return tid ? GPURMA_SUCCESS
                   : gpurma_dev_host_call(&w, GPURMA_DEV_OP_GET, peer, src_off, dst, bytes, 0, 0,
                                          (uint64_t *)0);
#endif
    case GPURMA_DEV_PATH_FIFO: /* waits: the data is there on return */
        if (bytes && !gpurma_sh_proxy_readable(dst))
            return GPURMA_ERR_UNSUPPORTED;
        return tid ? GPURMA_SUCCESS
                   : gpurma_dev__port_op(&w, (unsigned)pe.port, GPURMA_PORT_OP_GET, peer,
                                         (uint64_t)(uintptr_t)dst,
                                         src_off, bytes, 0, 0, UINT32_MAX, 0, UINT32_MAX, 1,
                                         (uint64_t *)0);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_get(gpurma_dev_win_t w, int peer, void *dst,
                                             size_t src_off, size_t bytes)
{
    return gpurma_dev_get_coop(w, peer, dst, src_off, bytes, 0, 1);
}

/* A single store of 1, 2, 4 or 8 bytes at a naturally aligned offset. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_put_value(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                   uint64_t value, size_t bytes)
{
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
        return GPURMA_ERR_INVALID_ARG;
    if (peer < 0 || peer >= w.size)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_dev_peer_t pe = w.peers[peer];
    gpurma_status_t rc = gpurma_dev__check_peer_range(&pe, dst_off, bytes, &w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (dst_off & (bytes - 1))
        return GPURMA_ERR_MISALIGNED;
    switch (pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_dev__store_value(pe.base + dst_off, value, bytes);
        return GPURMA_SUCCESS;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL: /* little-endian: the low bytes are the value */
        return gpurma_dev_host_call(&w, GPURMA_DEV_OP_PUT, peer, dst_off, &value, bytes, 0, 0,
                                    (uint64_t *)0);
#endif
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_op(&w, (unsigned)pe.port, GPURMA_PORT_OP_PUT_VALUE, peer, dst_off,
                                   0, bytes, value,
                                   0, UINT32_MAX, 0, UINT32_MAX, 0, (uint64_t *)0);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

/* ------------------------------------------------------------------ signals */

GPURMA_DEVICE gpurma_status_t gpurma_dev__signal_to(const gpurma_dev_win_t *w,
                                                    const gpurma_dev_peer_t *pe, int peer,
                                                    uint32_t sig, gpurma_signal_op_t op,
                                                    uint64_t value)
{
    if (pe->path == GPURMA_DEV_PATH_FIFO)
        return gpurma_dev__port_op(w, (unsigned)pe->port, GPURMA_PORT_OP_SIGNAL, peer, 0, 0, 0,
                                   value, 0, sig,
                                   (uint8_t)op, UINT32_MAX, 0, (uint64_t *)0);
    if (!pe->signals)
        return GPURMA_ERR_UNSUPPORTED;
    gpurma_dev__signal_slot(&pe->signals[sig], (uint32_t)w->rank, op, value);
    return GPURMA_SUCCESS;
}

/* Release: puts this thread issued earlier to peer are visible when the peer
 * observes the signal. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_signal(gpurma_dev_win_t w, int peer, uint32_t sig,
                                                gpurma_signal_op_t op, uint64_t value)
{
    if (peer < 0 || peer >= w.size || sig >= w.num_signals ||
        (op != GPURMA_SIGNAL_SET && op != GPURMA_SIGNAL_ADD))
        return GPURMA_ERR_INVALID_ARG;
    gpurma_dev_peer_t pe = w.peers[peer];
    return gpurma_dev__signal_to(&w, &pe, peer, sig, op, value);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev__put_signal(const gpurma_dev_win_t *w, int peer,
                                                     size_t dst_off, const void *src,
                                                     size_t bytes, uint32_t sig,
                                                     gpurma_signal_op_t op, uint64_t value,
                                                     uint32_t counter, unsigned tid,
                                                     unsigned nthreads)
{
    if (peer < 0 || peer >= w->size || sig >= w->num_signals ||
        (op != GPURMA_SIGNAL_SET && op != GPURMA_SIGNAL_ADD) ||
        (counter != UINT32_MAX && counter >= w->num_counters))
        return GPURMA_ERR_INVALID_ARG;
    /* One aligned word from one thread (the latency case): its load is
     * issued before the peer entry's, so the two overlap instead of
     * following each other. */
    uint64_t word = 0;
    int one_word = nthreads == 1 && bytes == 8 && src && !(((uintptr_t)src | dst_off) & 7);
    if (one_word)
        word = *(const uint64_t *)src;
    gpurma_dev_peer_t pe = w->peers[peer];
    if (one_word && pe.path == GPURMA_DEV_PATH_LOADSTORE && pe.signals) {
        gpurma_status_t rc = gpurma_dev__check_peer_range(&pe, dst_off, 8, src);
        if (rc != GPURMA_SUCCESS)
            return rc;
        *(uint64_t *)(pe.base + dst_off) = word;
        if (counter != UINT32_MAX)
            gpurma_sh_fetch_add_u64(&w->counters[counter], 1);
        gpurma_dev__signal_slot(&pe.signals[sig], (uint32_t)w->rank, op, value);
        return GPURMA_SUCCESS;
    }
    if (pe.path == GPURMA_DEV_PATH_FIFO && nthreads == 1) {
        gpurma_status_t rc = gpurma_dev__check_peer_range(&pe, dst_off, bytes, src);
        if (rc == GPURMA_SUCCESS && bytes && !gpurma_sh_proxy_readable(src))
            rc = GPURMA_ERR_UNSUPPORTED;
        return rc != GPURMA_SUCCESS
                   ? rc
                   : gpurma_dev__port_op(w, (unsigned)pe.port, GPURMA_PORT_OP_PUT_SIGNAL, peer,
                                         dst_off,
                                         (uint64_t)(uintptr_t)src, bytes, value, 0, sig,
                                         (uint8_t)op, counter, 0, (uint64_t *)0);
    }
    gpurma_status_t rc =
        gpurma_dev__put_to(w, &pe, peer, dst_off, src, bytes, counter, tid, nthreads);
    if (rc != GPURMA_SUCCESS || nthreads > 1)
        return rc; /* the team synchronizes, then one member signals */
    return gpurma_dev__signal_to(w, &pe, peer, sig, op, value);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_signal_coop(gpurma_dev_win_t w, int peer,
                                                         size_t dst_off, const void *src,
                                                         size_t bytes, uint32_t sig,
                                                         gpurma_signal_op_t op, uint64_t value,
                                                         unsigned tid, unsigned nthreads)
{
    return gpurma_dev__put_signal(&w, peer, dst_off, src, bytes, sig, op, value, UINT32_MAX, tid,
                                  nthreads);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_signal(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                    const void *src, size_t bytes, uint32_t sig,
                                                    gpurma_signal_op_t op, uint64_t value)
{
    return gpurma_dev__put_signal(&w, peer, dst_off, src, bytes, sig, op, value, UINT32_MAX, 0,
                                  1);
}

GPURMA_DEVICE uint64_t gpurma_dev_signal_read(gpurma_dev_win_t w, uint32_t sig)
{
    return sig < w.num_signals ? gpurma_sh_load_acquire_u64(&w.signals[sig].value) : 0;
}

/* Acquire: data ordered before the matching signal is readable on return. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_wait_until(gpurma_dev_win_t w, uint32_t sig,
                                                    gpurma_cmp_t cmp, uint64_t value)
{
    if (sig >= w.num_signals || (unsigned)cmp > GPURMA_CMP_LE)
        return GPURMA_ERR_INVALID_ARG;
    return gpurma_dev__wait_u64(&w.signals[sig].value, cmp, value, w.timeout_ns);
}

/* ------------------------------------------------------------- completion */

/* Local completion: load/store and host calls complete in place; port
 * operations when the proxy context serving the peer (every context, for
 * GPURMA_ALL_PEERS) has executed everything pushed to it so far. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_flush(gpurma_dev_win_t w, int peer)
{
    if (peer != GPURMA_ALL_PEERS && (peer < 0 || peer >= w.size))
        return GPURMA_ERR_INVALID_ARG;
    unsigned first = 0, end = w.nports;
    if (peer != GPURMA_ALL_PEERS) {
        gpurma_dev_peer_t pe = w.peers[peer];
        if (pe.path != GPURMA_DEV_PATH_FIFO)
            return GPURMA_SUCCESS;
        first = (unsigned)pe.port;
        end = first + 1;
    }
    for (unsigned k = first; k < end && k < w.nports; k++) {
        uint32_t id;
        gpurma_port_fifo_t *f = gpurma_dev__port_fifo(&w, k, &id);
        uint64_t head = gpurma_sh_load_acquire_u64(f->head_ptr);
        gpurma_status_t rc = head ? gpurma_port_wait_done(f, head - 1) : GPURMA_SUCCESS;
        if (rc != GPURMA_SUCCESS)
            return rc;
    }
    return GPURMA_SUCCESS;
}

/* QUIET (wait) or FENCE (no wait) through every proxy context. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_all(const gpurma_dev_win_t *w, uint16_t op,
                                                   int wait)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (unsigned k = 0; k < w->nports && rc == GPURMA_SUCCESS; k++)
        rc = gpurma_dev__port_op(w, k, op, 0, 0, 0, 0, 0, 0, UINT32_MAX, 0, UINT32_MAX, wait,
                                 (uint64_t *)0);
    return rc;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_quiet(gpurma_dev_win_t w)
{
    gpurma_sh_fence_system();
    return gpurma_dev__port_all(&w, GPURMA_PORT_OP_QUIET, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_fence(gpurma_dev_win_t w)
{
    gpurma_sh_fence_system();
    return gpurma_dev__port_all(&w, GPURMA_PORT_OP_FENCE, 0);
}

/* ------------------------------------------------------------------ atomics */

GPURMA_DEVICE gpurma_status_t gpurma_dev__atomic_any(const gpurma_dev_win_t *w, int kind,
                                                     int peer, size_t off, uint64_t value,
                                                     uint64_t compare, uint64_t *old)
{
    if (peer >= 0 && peer < w->size && w->peers[peer].path == GPURMA_DEV_PATH_FIFO) {
        gpurma_status_t rc = gpurma_dev__check_range(w, peer, off, 8, w);
        if (rc != GPURMA_SUCCESS)
            return rc;
        if (off & 7)
            return GPURMA_ERR_MISALIGNED;
        uint64_t result = 0;
        rc = gpurma_dev__port_op(w, (unsigned)w->peers[peer].port,
                                 (uint16_t)(GPURMA_PORT_OP_FETCH_ADD + kind), peer, off, 0, 8,
                                 value, compare, UINT32_MAX, 0, UINT32_MAX, 1, &result);
        if (rc == GPURMA_SUCCESS && old)
            *old = result;
        return rc;
    }
    return gpurma_dev__atomic(w, kind, peer, off, value, compare, old);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_fetch_add(gpurma_dev_win_t w, int peer,
                                                          size_t off, uint64_t value,
                                                          uint64_t *old)
{
    return gpurma_dev__atomic_any(&w, GPURMA_DEV__ATOMIC_FETCH_ADD, peer, off, value, 0, old);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_swap(gpurma_dev_win_t w, int peer, size_t off,
                                                     uint64_t value, uint64_t *old)
{
    return gpurma_dev__atomic_any(&w, GPURMA_DEV__ATOMIC_SWAP, peer, off, value, 0, old);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_compare_swap(gpurma_dev_win_t w, int peer,
                                                             size_t off, uint64_t expected,
                                                             uint64_t desired, uint64_t *old)
{
    return gpurma_dev__atomic_any(&w, GPURMA_DEV__ATOMIC_CAS, peer, off, desired, expected, old);
}

/* ----------------------------------------------------------------- counters */

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_counted(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                     const void *src, size_t bytes,
                                                     uint32_t counter)
{
    if (counter >= w.num_counters || peer < 0 || peer >= w.size)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_dev_peer_t pe = w.peers[peer];
    return gpurma_dev__put_to(&w, &pe, peer, dst_off, src, bytes, counter, 0, 1);
}

GPURMA_DEVICE uint64_t gpurma_dev_counter_read(gpurma_dev_win_t w, uint32_t counter)
{
    return counter < w.num_counters ? gpurma_sh_load_acquire_u64(&w.counters[counter]) : 0;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_counter_wait(gpurma_dev_win_t w, uint32_t counter,
                                                      uint64_t value)
{
    if (counter >= w.num_counters)
        return GPURMA_ERR_INVALID_ARG;
    return gpurma_dev__wait_u64(&w.counters[counter], GPURMA_CMP_GE, value, w.timeout_ns);
}

/* ------------------------------------------------------------- LL packets */

/* Bytes of window space that `bytes` of payload occupy as packets. */
GPURMA_HOST_DEVICE size_t gpurma_dev_packet8_bytes(size_t bytes)
{
    return gpurma_dev__packet_bytes(bytes, 8);
}
GPURMA_HOST_DEVICE size_t gpurma_dev_packet16_bytes(size_t bytes)
{
    return gpurma_dev__packet_bytes(bytes, 16);
}

/* 8-byte packets: 4 bytes of data and a 4-byte flag in one store. The flag
 * must differ from what the destination held before (e.g. a round number). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets_coop(gpurma_dev_win_t w, int peer,
                                                          size_t dst_off, const void *src,
                                                          size_t bytes, uint32_t flag,
                                                          unsigned tid, unsigned nthreads)
{
    return gpurma_dev__put_packets(&w, peer, dst_off, src, bytes, flag, 8, tid, nthreads);
}
GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                     const void *src, size_t bytes, uint32_t flag)
{
    return gpurma_dev__put_packets(&w, peer, dst_off, src, bytes, flag, 8, 0, 1);
}
/* Waits for every packet at src_off of this rank's window to carry flag,
 * then copies the payload to dst. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets_coop(gpurma_dev_win_t w, size_t src_off,
                                                           void *dst, size_t bytes, uint32_t flag,
                                                           unsigned tid, unsigned nthreads)
{
    return gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, 8, tid, nthreads);
}
GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets(gpurma_dev_win_t w, size_t src_off,
                                                      void *dst, size_t bytes, uint32_t flag)
{
    return gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, 8, 0, 1);
}

/* 16-byte packets: two (4 data, 4 flag) halves, 8 bytes of data each. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets16_coop(gpurma_dev_win_t w, int peer,
                                                            size_t dst_off, const void *src,
                                                            size_t bytes, uint32_t flag,
                                                            unsigned tid, unsigned nthreads)
{
    return gpurma_dev__put_packets(&w, peer, dst_off, src, bytes, flag, 16, tid, nthreads);
}
GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets16(gpurma_dev_win_t w, int peer,
                                                       size_t dst_off, const void *src,
                                                       size_t bytes, uint32_t flag)
{
    return gpurma_dev__put_packets(&w, peer, dst_off, src, bytes, flag, 16, 0, 1);
}
GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets16_coop(gpurma_dev_win_t w, size_t src_off,
                                                             void *dst, size_t bytes,
                                                             uint32_t flag, unsigned tid,
                                                             unsigned nthreads)
{
    return gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, 16, tid, nthreads);
}
GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets16(gpurma_dev_win_t w, size_t src_off,
                                                        void *dst, size_t bytes, uint32_t flag)
{
    return gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, 16, 0, 1);
}

/* ------------------------------------------------- warp and block forms */
#if GPURMA_DEV_GPU
/*
 * _warp forms: every lane of a converged warp calls with the same arguments;
 * _block forms: every thread of the block does (they contain barriers, so
 * never call them under a condition that splits the block). The group
 * shares the copy with 16-byte vector moves and returns together, with the
 * same status in every thread; destinations of get and read_packets are
 * complete for the whole group on return. put_signal: the group finishes
 * its stores, then one thread fences at system scope and signals, so the
 * peer that observes the signal sees every thread's data.
 */

/* What gpurma_dev_signal rejects, checked by every thread up front so that
 * the one thread that signals cannot fail where the others succeeded. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_signal(const gpurma_dev_win_t *w, int peer,
                                                       uint32_t sig, gpurma_signal_op_t op)
{
    if (peer < 0 || peer >= w->size || sig >= w->num_signals ||
        (op != GPURMA_SIGNAL_SET && op != GPURMA_SIGNAL_ADD))
        return GPURMA_ERR_INVALID_ARG;
    const gpurma_dev_peer_t *p = &w->peers[peer];
    return p->signals || p->path == GPURMA_DEV_PATH_FIFO ? GPURMA_SUCCESS : GPURMA_ERR_UNSUPPORTED;
}

#define GPURMA_DEV__GROUP_FORMS(scope, TID, NTHREADS, SYNC, ANY)                              \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_##scope(gpurma_dev_win_t w, int peer,        \
                                                          size_t dst_off, const void *src,     \
                                                          size_t bytes)                        \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev_put_coop(w, peer, dst_off, src, bytes, TID, NTHREADS); \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_get_##scope(gpurma_dev_win_t w, int peer,        \
                                                          void *dst, size_t src_off,           \
                                                          size_t bytes)                        \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev_get_coop(w, peer, dst, src_off, bytes, TID, NTHREADS); \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_signal_##scope(                              \
        gpurma_dev_win_t w, int peer, size_t dst_off, const void *src, size_t bytes,           \
        uint32_t sig, gpurma_signal_op_t op, uint64_t value)                                   \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__check_signal(&w, peer, sig, op);                      \
        if (rc != GPURMA_SUCCESS)                                                              \
            return rc;                                                                         \
        if (w.peers[peer].path == GPURMA_DEV_PATH_FIFO) {                                      \
            /* The copy engine reads the source: every thread's part of it must  \
             * be visible system-wide before one descriptor carries data and     \
             * signal. */                                                                      \
            gpurma_sh_fence_system();                                                          \
            SYNC;                                                                              \
            if ((TID) == 0)                                                                    \
                rc = gpurma_dev_put_signal(w, peer, dst_off, src, bytes, sig, op, value);      \
            SYNC;                                                                              \
            return rc;                                                                         \
        }                                                                                      \
        rc = gpurma_dev_put_coop(w, peer, dst_off, src, bytes, TID, NTHREADS);                 \
        SYNC;                                                                                  \
        if (rc == GPURMA_SUCCESS && (TID) == 0) {                                              \
            gpurma_sh_fence_release_system();                                                  \
            gpurma_dev_peer_t pe = w.peers[peer];                                              \
            rc = gpurma_dev__signal_to(&w, &pe, peer, sig, op, value);                          \
        }                                                                                      \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets_##scope(                             \
        gpurma_dev_win_t w, int peer, size_t dst_off, const void *src, size_t bytes,           \
        uint32_t flag)                                                                         \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__put_packets(&w, peer, dst_off, src, bytes, flag, 8,   \
                                                     TID, NTHREADS);                           \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_put_packets16_##scope(                           \
        gpurma_dev_win_t w, int peer, size_t dst_off, const void *src, size_t bytes,           \
        uint32_t flag)                                                                         \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__put_packets(&w, peer, dst_off, src, bytes, flag, 16,  \
                                                     TID, NTHREADS);                           \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    /* A timeout in one thread is reported by all. */                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets_##scope(                            \
        gpurma_dev_win_t w, size_t src_off, void *dst, size_t bytes, uint32_t flag)            \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, 8, TID,   \
                                                      NTHREADS);                               \
        if (ANY(rc == GPURMA_ERR_TIMEOUT))                                                     \
            return GPURMA_ERR_TIMEOUT;                                                         \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_read_packets16_##scope(                          \
        gpurma_dev_win_t w, size_t src_off, void *dst, size_t bytes, uint32_t flag)            \
    {                                                                                          \
        gpurma_status_t rc = gpurma_dev__read_packets(&w, src_off, dst, bytes, flag, 16, TID,  \
                                                      NTHREADS);                               \
        if (ANY(rc == GPURMA_ERR_TIMEOUT))                                                     \
            return GPURMA_ERR_TIMEOUT;                                                         \
        return rc;                                                                             \
    }

GPURMA_DEV__GROUP_FORMS(warp, gpurma_sh_lane(), gpurma_sh_warp_threads(), gpurma_sh_sync_warp(),
                        gpurma_sh_warp_any)
GPURMA_DEV__GROUP_FORMS(block, gpurma_sh_block_tid(), gpurma_sh_block_threads(),
                        gpurma_sh_sync_block(), gpurma_sh_block_any)
#undef GPURMA_DEV__GROUP_FORMS

#endif /* GPURMA_DEV_GPU */

#endif /* GPURMA_DEVICE_H */
