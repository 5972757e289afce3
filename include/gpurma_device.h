/*
 * gpurma_device.h - the device API: one-sided operations callable from GPU
 * kernels (CUDA, HIP) and, compiled as plain C, from CPU threads on the host
 * backend. Header-only: no -rdc, no global device state, nothing to link but
 * libgpurma. Handles are passed by value; get one with gpurma_win_device().
 *
 * Every function returns a gpurma_status_t; bad input (peer out of range,
 * offset+size past the target's window, sizes whose footprint overflows,
 * misaligned atomics, a handle gpurma_win_device did not make) returns an
 * error and writes nothing. On the host backend a handle kept after its
 * window was freed gives GPURMA_ERR_FREED (signal_read and counter_read,
 * which return values, give 0).
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

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *out with the by-value handle of win for kernels (or CPU threads). */
GPURMA_API gpurma_status_t gpurma_win_device(gpurma_win_t win, gpurma_dev_win_t *out);

#ifdef __cplusplus
}
#endif

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
        rc = gpurma_dev__host_put(w, peer, dst_off, src, bytes, tid);
        break;
#endif
    case GPURMA_DEV_PATH_FIFO: /* the proxy counts the completion */
        return gpurma_dev__port_put(w, (unsigned)pe->port, peer, dst_off, src, bytes, counter,
                                    tid);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
    if (rc == GPURMA_SUCCESS)
        gpurma_dev__count_local(w, counter, tid);
    return rc;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_coop(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                  const void *src, size_t bytes, unsigned tid,
                                                  unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_coop(&w, peer, tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
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
    gpurma_status_t rc = gpurma_dev__check_coop(&w, peer, tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_dev_peer_t pe = w.peers[peer];
    rc = gpurma_dev__check_peer_range(&pe, src_off, bytes, dst);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_sh_copy(dst, pe.base + src_off, bytes, tid, nthreads);
        return GPURMA_SUCCESS;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        return gpurma_dev__host_get(&w, peer, dst, src_off, bytes, tid);
#endif
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_get(&w, (unsigned)pe.port, peer, dst, src_off, bytes, tid);
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
    gpurma_status_t rc = gpurma_dev__check_peer(&w, peer);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_dev_peer_t pe = w.peers[peer];
    rc = gpurma_dev__check_peer_range(&pe, dst_off, bytes, &w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (dst_off & (bytes - 1))
        return GPURMA_ERR_MISALIGNED;
    switch (pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_dev__store_value(pe.base + dst_off, value, bytes);
        return GPURMA_SUCCESS;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        return gpurma_dev__host_put_value(&w, peer, dst_off, value, bytes);
#endif
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_submit(&w, (unsigned)pe.port,
                                       gpurma_port_desc_put_value(peer, dst_off, value, bytes), 0,
                                       (uint64_t *)0);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

/* ------------------------------------------------------------------ signals */

/* Through the proxy, or into the peer's slots where they are mapped (the
 * load/store and host-call paths both map signals). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__signal_to(const gpurma_dev_win_t *w,
                                                    const gpurma_dev_peer_t *pe, int peer,
                                                    uint32_t sig, gpurma_signal_op_t op,
                                                    uint64_t value)
{
    switch (pe->path) {
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_submit(w, (unsigned)pe->port,
                                       gpurma_port_desc_signal(peer, sig, op, value), 0,
                                       (uint64_t *)0);
    default:
        return gpurma_dev__mem_signal(pe, (uint32_t)w->rank, sig, op, value);
    }
}

/* Release: puts this thread issued earlier to peer are visible when the peer
 * observes the signal. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_signal(gpurma_dev_win_t w, int peer, uint32_t sig,
                                                gpurma_signal_op_t op, uint64_t value)
{
    gpurma_status_t rc = gpurma_dev__check_peer(&w, peer);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dev__check_signal_args(&w, sig, op);
    if (rc != GPURMA_SUCCESS)
        return rc;
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
    gpurma_status_t rc = gpurma_dev__check_coop(w, peer, tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (gpurma_dev__check_signal_args(w, sig, op) != GPURMA_SUCCESS ||
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
    rc = gpurma_dev__check_peer_range(&pe, dst_off, bytes, src);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        if (one_word && pe.signals) {
            *(uint64_t *)(pe.base + dst_off) = word;
            gpurma_dev__count_local(w, counter, 0);
            gpurma_dev__signal_slot(&pe.signals[sig], (uint32_t)w->rank, op, value);
            return GPURMA_SUCCESS;
        }
        gpurma_sh_copy(pe.base + dst_off, src, bytes, tid, nthreads);
        break;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        rc = gpurma_dev__host_put(w, peer, dst_off, src, bytes, tid);
        break;
#endif
    case GPURMA_DEV_PATH_FIFO:
        if (nthreads == 1) /* data and signal in one descriptor */
            return gpurma_dev__port_put_signal(w, (unsigned)pe.port, peer, dst_off, src, bytes,
                                               sig, op, value, counter);
        /* the team synchronizes, then one member signals */
        return gpurma_dev__port_put(w, (unsigned)pe.port, peer, dst_off, src, bytes, counter,
                                    tid);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
    if (rc == GPURMA_SUCCESS)
        gpurma_dev__count_local(w, counter, tid);
    if (rc != GPURMA_SUCCESS || nthreads > 1)
        return rc; /* the team synchronizes, then one member signals */
    return gpurma_dev__mem_signal(&pe, (uint32_t)w->rank, sig, op, value);
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

/* 0 for a bad id or handle, or a freed window. */
GPURMA_DEVICE uint64_t gpurma_dev_signal_read(gpurma_dev_win_t w, uint32_t sig)
{
    if (gpurma_dev__check_win(&w) != GPURMA_SUCCESS || sig >= w.num_signals)
        return 0;
    return gpurma_sh_load_acquire_u64(&w.signals[sig].value);
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

/* Local completion: load/store and host calls complete in place; port
 * operations when the proxy context serving the peer (every context, for
 * GPURMA_ALL_PEERS) has executed everything pushed to it so far. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_flush(gpurma_dev_win_t w, int peer)
{
    gpurma_status_t rc = peer == GPURMA_ALL_PEERS ? gpurma_dev__check_win(&w)
                                                  : gpurma_dev__check_peer(&w, peer);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (peer == GPURMA_ALL_PEERS)
        return gpurma_dev__port_flush(&w, 0, w.nports);
    gpurma_dev_peer_t pe = w.peers[peer];
    switch (pe.path) {
    case GPURMA_DEV_PATH_FIFO:
        return gpurma_dev__port_flush(&w, (unsigned)pe.port, (unsigned)pe.port + 1);
    default:
        return GPURMA_SUCCESS;
    }
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_quiet(gpurma_dev_win_t w)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_sh_fence_system();
    return gpurma_dev__port_all(&w, GPURMA_PORT_OP_QUIET, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_fence(gpurma_dev_win_t w)
{
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_sh_fence_system();
    return gpurma_dev__port_all(&w, GPURMA_PORT_OP_FENCE, 0);
}

/* ------------------------------------------------------------------ atomics */

/* kind is a GPURMA_DEV__ATOMIC_*. With via_port 0 (the host engines, and
 * the proxy executing a descriptor), a peer on the FIFO path is
 * UNSUPPORTED rather than pushed to the proxy again. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__atomic_to(const gpurma_dev_win_t *w, int kind,
                                                    int peer, size_t off, uint64_t value,
                                                    uint64_t compare, uint64_t *old, int via_port)
{
    gpurma_status_t rc = gpurma_dev__check_peer(w, peer);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_dev_peer_t pe = w->peers[peer];
    rc = gpurma_dev__check_atomic_at(w, &pe, off);
    if (rc != GPURMA_SUCCESS)
        return rc;
    uint64_t prev = 0;
    switch (pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        prev = gpurma_dev__atomic_at((uint64_t *)(pe.base + off), kind, value, compare);
        break;
#if !GPURMA_DEV_GPU
    case GPURMA_DEV_PATH_HOSTCALL:
        rc = gpurma_dev__host_atomic(w, kind, peer, off, value, compare, &prev);
        break;
#endif
    case GPURMA_DEV_PATH_FIFO:
        if (!via_port)
            return GPURMA_ERR_UNSUPPORTED;
        rc = gpurma_dev__port_submit(w, (unsigned)pe.port,
                                     gpurma_port_desc_atomic(peer, kind, off, value, compare), 1,
                                     &prev);
        break;
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
    if (rc == GPURMA_SUCCESS && old)
        *old = prev;
    return rc;
}

/* The atomic on a peer reached by load/store or a host call. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__atomic(const gpurma_dev_win_t *w, int kind, int peer,
                                                 size_t off, uint64_t value, uint64_t compare,
                                                 uint64_t *old)
{
    return gpurma_dev__atomic_to(w, kind, peer, off, value, compare, old, 0);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_fetch_add(gpurma_dev_win_t w, int peer,
                                                          size_t off, uint64_t value,
                                                          uint64_t *old)
{
    return gpurma_dev__atomic_to(&w, GPURMA_DEV__ATOMIC_FETCH_ADD, peer, off, value, 0, old, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_swap(gpurma_dev_win_t w, int peer, size_t off,
                                                     uint64_t value, uint64_t *old)
{
    return gpurma_dev__atomic_to(&w, GPURMA_DEV__ATOMIC_SWAP, peer, off, value, 0, old, 1);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_atomic_compare_swap(gpurma_dev_win_t w, int peer,
                                                             size_t off, uint64_t expected,
                                                             uint64_t desired, uint64_t *old)
{
    return gpurma_dev__atomic_to(&w, GPURMA_DEV__ATOMIC_CAS, peer, off, desired, expected, old,
                                 1);
}

/* ----------------------------------------------------------------- counters */

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_counted(gpurma_dev_win_t w, int peer, size_t dst_off,
                                                     const void *src, size_t bytes,
                                                     uint32_t counter)
{
    gpurma_status_t rc = gpurma_dev__check_peer(&w, peer);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (counter >= w.num_counters)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_dev_peer_t pe = w.peers[peer];
    return gpurma_dev__put_to(&w, &pe, peer, dst_off, src, bytes, counter, 0, 1);
}

/* 0 for a bad id or handle, or a freed window. */
GPURMA_DEVICE uint64_t gpurma_dev_counter_read(gpurma_dev_win_t w, uint32_t counter)
{
    if (gpurma_dev__check_win(&w) != GPURMA_SUCCESS || counter >= w.num_counters)
        return 0;
    return gpurma_sh_load_acquire_u64(&w.counters[counter]);
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
GPURMA_DEVICE gpurma_status_t gpurma_dev__put_packets(const gpurma_dev_win_t *w, int peer,
                                                      size_t dst_off, const void *src,
                                                      size_t bytes, uint32_t flag, int psize,
                                                      unsigned tid, unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_peer(w, peer);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_dev_peer_t pe = w->peers[peer];
    rc = gpurma_dev__check_packets(&pe, dst_off, bytes, src, psize, tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    switch (pe.path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_dev__store_packets((uint64_t *)(pe.base + dst_off), src, bytes, flag, psize, tid,
                                  nthreads);
        return GPURMA_SUCCESS;
    case GPURMA_DEV_PATH_FIFO: /* one thread hands the payload to the proxy */
        return gpurma_dev__port_packets(w, (unsigned)pe.port, peer, dst_off, src, bytes, flag,
                                        psize, tid);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

/* Packets land in this rank's own window, which is always mapped here. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__read_packets(const gpurma_dev_win_t *w, size_t src_off,
                                                       void *dst, size_t bytes, uint32_t flag,
                                                       int psize, unsigned tid,
                                                       unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_peer(w, w->rank);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_dev_peer_t me = w->peers[w->rank];
    rc = gpurma_dev__check_packets(&me, src_off, bytes, dst, psize, tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (!me.base)
        return GPURMA_ERR_UNSUPPORTED;
    return gpurma_dev__mem_read_packets((const uint64_t *)(me.base + src_off), dst, bytes, flag,
                                        psize, w->timeout_ns, tid, nthreads);
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
        /* What gpurma_dev_signal rejects, every thread checks up front, so that               \
         * the one thread that signals cannot fail where the others succeeded. */              \
        gpurma_status_t rc = gpurma_dev__check_peer(&w, peer);                                 \
        if (rc == GPURMA_SUCCESS)                                                              \
            rc = gpurma_dev__check_signal_args(&w, sig, op);                                   \
        if (rc != GPURMA_SUCCESS)                                                              \
            return rc;                                                                         \
        gpurma_dev_peer_t pe = w.peers[peer];                                                  \
        switch (pe.path) {                                                                     \
        case GPURMA_DEV_PATH_FIFO:                                                             \
            /* The copy engine reads the source: every thread's part of it must                \
             * be visible system-wide before one descriptor carries data and                   \
             * signal. */                                                                      \
            gpurma_sh_fence_system();                                                          \
            SYNC;                                                                              \
            if ((TID) == 0) {                                                                  \
                rc = gpurma_dev__check_peer_range(&pe, dst_off, bytes, src);                   \
                if (rc == GPURMA_SUCCESS)                                                      \
                    rc = gpurma_dev__port_put_signal(&w, (unsigned)pe.port, peer, dst_off,     \
                                                     src, bytes, sig, op, value, UINT32_MAX);  \
            }                                                                                  \
            SYNC;                                                                              \
            return rc;                                                                         \
        case GPURMA_DEV_PATH_LOADSTORE:                                                        \
            if (!pe.signals)                                                                   \
                return GPURMA_ERR_UNSUPPORTED;                                                 \
            rc = gpurma_dev__check_peer_range(&pe, dst_off, bytes, src);                       \
            if (rc == GPURMA_SUCCESS)                                                          \
                gpurma_sh_copy(pe.base + dst_off, src, bytes, TID, NTHREADS);                  \
            break;                                                                             \
        default:                                                                               \
            if (!pe.signals)                                                                   \
                return GPURMA_ERR_UNSUPPORTED;                                                 \
            rc = gpurma_dev__check_peer_range(&pe, dst_off, bytes, src);                       \
            if (rc == GPURMA_SUCCESS)                                                          \
                rc = GPURMA_ERR_UNSUPPORTED;                                                   \
            break;                                                                             \
        }                                                                                      \
        SYNC;                                                                                  \
        if (rc == GPURMA_SUCCESS && (TID) == 0) {                                              \
            gpurma_sh_fence_release_system();                                                  \
            rc = gpurma_dev__mem_signal(&pe, (uint32_t)w.rank, sig, op, value);                \
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
