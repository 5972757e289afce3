/*
 * dev_mem.h - the load/store path behind gpurma_device.h: stores, signal
 * slots, atomics and LL packets on memory mapped in the executing
 * processor (a peer GPU's through IPC, POSIX shm on the host backend).
 * Not ABI.
 */
#ifndef GPURMA_DETAIL_DEV_MEM_H
#define GPURMA_DETAIL_DEV_MEM_H

#include "gpurma/detail/dev_common.h"

GPURMA_DEVICE void gpurma_dev__store_value(char *dst, uint64_t value, size_t bytes)
{
    switch (bytes) {
    case 1: *(volatile uint8_t *)dst = (uint8_t)value; break;
    case 2: *(volatile uint16_t *)dst = (uint16_t)value; break;
    case 4: *(volatile uint32_t *)dst = (uint32_t)value; break;
    default: *(volatile uint64_t *)dst = value; break;
    }
}

GPURMA_DEVICE void gpurma_dev__signal_slot(gpurma_dev_signal_slot_t *slot, uint32_t origin,
                                           gpurma_signal_op_t op, uint64_t value)
{
    gpurma_sh_store_relaxed_u32(&slot->last_origin, origin);
    if (op == GPURMA_SIGNAL_SET)
        gpurma_sh_store_release_u64(&slot->value, value);
    else
        gpurma_sh_red_add_release_u64(&slot->value, value);
}

/* Release: the stores this thread issued before are visible to whoever
 * observes the new value. Peers whose slots are not mapped here are
 * UNSUPPORTED. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__mem_signal(const gpurma_dev_peer_t *pe,
                                                     uint32_t origin, uint32_t sig,
                                                     gpurma_signal_op_t op, uint64_t value)
{
    if (!pe->signals)
        return GPURMA_ERR_UNSUPPORTED;
    gpurma_dev__signal_slot(&pe->signals[sig], origin, op, value);
    return GPURMA_SUCCESS;
}

/* One 64-bit atomic on mapped memory; returns the old value. */
GPURMA_DEVICE uint64_t gpurma_dev__atomic_at(uint64_t *a, int kind, uint64_t value,
                                             uint64_t compare)
{
    /* Relaxed (dev_shim.h): atomics order nothing else; fence, quiet and
     * signals do. */
    if (kind == GPURMA_DEV__ATOMIC_FETCH_ADD)
        return gpurma_sh_fetch_add_relaxed_u64(a, value);
    if (kind == GPURMA_DEV__ATOMIC_SWAP)
        return gpurma_sh_exchange_relaxed_u64(a, value);
    return gpurma_sh_cas_relaxed_u64(a, compare, value);
}

/* The 4 payload bytes of packet word i: the source may have any alignment
 * and its last word may be partial (the rest is zero). */
GPURMA_DEVICE uint32_t gpurma_dev__payload_word(const unsigned char *src, size_t bytes, size_t i)
{
    uint32_t v = 0;
    size_t at = i * 4;
    size_t n = bytes - at < 4 ? bytes - at : 4;
    if (n == 4 && ((uintptr_t)(src + at) & 3) == 0)
        return *(const uint32_t *)(src + at);
    for (size_t k = 0; k < n; k++)
        v |= (uint32_t)src[at + k] << (8 * k);
    return v;
}

GPURMA_DEVICE void gpurma_dev__store_payload_word(unsigned char *dst, size_t bytes, size_t i,
                                                  uint32_t v)
{
    size_t at = i * 4;
    size_t n = bytes - at < 4 ? bytes - at : 4;
    if (n == 4 && ((uintptr_t)(dst + at) & 3) == 0) {
        *(uint32_t *)(dst + at) = v;
        return;
    }
    for (size_t k = 0; k < n; k++)
        dst[at + k] = (unsigned char)(v >> (8 * k));
}

/* Packs bytes of src with flag and stores the packets at dst, each in one
 * store; the group of nthreads shares the packets. */
GPURMA_DEVICE void gpurma_dev__store_packets(uint64_t *dst, const void *src, size_t bytes,
                                             uint32_t flag, int psize, unsigned tid,
                                             unsigned nthreads)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t nwords = gpurma_sh_div_ceil(bytes, 4);
    size_t npk = gpurma_dev__packet_count(bytes, psize);
    for (size_t i = tid; i < npk; i += nthreads) {
        if (psize == 8) {
            gpurma_sh_store_packet8(dst + i, gpurma_dev__payload_word(s, bytes, i), flag);
        } else {
            uint32_t d0 = gpurma_dev__payload_word(s, bytes, 2 * i);
            uint32_t d1 = 2 * i + 1 < nwords ? gpurma_dev__payload_word(s, bytes, 2 * i + 1) : 0;
            gpurma_sh_store_packet16(dst + 2 * i, d0, flag, d1, flag);
        }
    }
}

/* Waits for each of the packets at src to carry flag (up to timeout_ns),
 * then stores their payload at dst; the group of nthreads shares them. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__mem_read_packets(const uint64_t *src, void *dst,
                                                           size_t bytes, uint32_t flag,
                                                           int psize, uint64_t timeout_ns,
                                                           unsigned tid, unsigned nthreads)
{
    size_t nwords = gpurma_sh_div_ceil(bytes, 4);
    size_t npk = gpurma_dev__packet_count(bytes, psize);
    unsigned char *d = (unsigned char *)dst;
    for (size_t i = tid; i < npk; i += nthreads) {
        uint32_t v[4];
        uint64_t start = 0;
        for (uint64_t iter = 0;; iter++) {
            if (psize == 8) {
                gpurma_sh_load_packet8(src + i, &v[0], &v[1]);
                if (v[1] == flag)
                    break;
            } else {
                gpurma_sh_load_packet16(src + 2 * i, v);
                if (v[1] == flag && v[3] == flag)
                    break;
            }
            if (gpurma_dev__expired(iter, &start, timeout_ns))
                return GPURMA_ERR_TIMEOUT;
            gpurma_sh_pause_n(iter);
        }
        if (psize == 8) {
            gpurma_dev__store_payload_word(d, bytes, i, v[0]);
        } else {
            gpurma_dev__store_payload_word(d, bytes, 2 * i, v[0]);
            if (2 * i + 1 < nwords)
                gpurma_dev__store_payload_word(d, bytes, 2 * i + 1, v[2]);
        }
    }
    return GPURMA_SUCCESS;
}

#endif
