/*
 * dev_mem.h - the load/store (mem) engine behind gpurma_device.h: argument
 * checks, signal slots, bounded waits, atomics and LL packets on mapped
 * memory. Included by gpurma_device.h only; not ABI.
 */
#ifndef GPURMA_DETAIL_DEV_MEM_H
#define GPURMA_DETAIL_DEV_MEM_H

/* Valid peer, buffer present, [off, off+bytes) inside the peer's window. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_range(const gpurma_dev_win_t *w, int peer,
                                                      size_t off, size_t bytes, const void *buf)
{
    if (peer < 0 || peer >= w->size || (bytes && !buf))
        return GPURMA_ERR_INVALID_ARG;
    uint64_t size = w->peers[peer].size;
    if (off > size || bytes > size - off)
        return GPURMA_ERR_OUT_OF_BOUNDS;
    return GPURMA_SUCCESS;
}

/* The same, against a peer entry the caller has loaded. */
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


/* Polls with acquire loads; the clock is read only every 256 polls. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__wait_u64(const uint64_t *p, gpurma_cmp_t cmp,
                                                   uint64_t value, uint64_t timeout_ns)
{
    uint64_t start = 0;
    for (uint64_t iter = 0;; iter++) {
        if (gpurma_dev_compare(gpurma_sh_load_acquire_u64(p), cmp, value))
            return GPURMA_SUCCESS;
        if ((iter & 255) == 0) {
            uint64_t now = gpurma_sh_now_ns();
            if (!start)
                start = now;
            else if (timeout_ns && now - start > timeout_ns)
                return GPURMA_ERR_TIMEOUT;
        }
        gpurma_sh_pause_n(iter);
    }
}

enum { GPURMA_DEV__ATOMIC_FETCH_ADD = 0, GPURMA_DEV__ATOMIC_SWAP, GPURMA_DEV__ATOMIC_CAS };

/* One 64-bit atomic on mapped memory; returns the old value. */
GPURMA_DEVICE uint64_t gpurma_dev__atomic_at(uint64_t *a, int kind, uint64_t value,
                                             uint64_t compare)
{
    if (kind == GPURMA_DEV__ATOMIC_FETCH_ADD)
        return gpurma_sh_fetch_add_u64(a, value);
    if (kind == GPURMA_DEV__ATOMIC_SWAP)
        return gpurma_sh_exchange_u64(a, value);
    return gpurma_sh_cas_u64(a, compare, value);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev__atomic(const gpurma_dev_win_t *w, int kind, int peer,
                                                 size_t off, uint64_t value, uint64_t compare,
                                                 uint64_t *old)
{
    gpurma_status_t rc = gpurma_dev__check_range(w, peer, off, 8, w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (off & 7)
        return GPURMA_ERR_MISALIGNED;
    const gpurma_dev_peer_t *p = &w->peers[peer];
    uint64_t prev;
    if (p->path == GPURMA_DEV_PATH_LOADSTORE) {
        prev = gpurma_dev__atomic_at((uint64_t *)(p->base + off), kind, value, compare);
    }
#if !GPURMA_DEV_GPU
    else if (p->path == GPURMA_DEV_PATH_HOSTCALL) {
        static const int ops[] = {GPURMA_DEV_OP_FETCH_ADD, GPURMA_DEV_OP_SWAP, GPURMA_DEV_OP_CAS};
        rc = gpurma_dev_host_call(w, ops[kind], peer, off, (void *)0, 8, value, compare, &prev);
        if (rc != GPURMA_SUCCESS)
            return rc;
    }
#endif
    else {
        return GPURMA_ERR_UNSUPPORTED;
    }
    if (old)
        *old = prev;
    return GPURMA_SUCCESS;
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

GPURMA_DEVICE gpurma_status_t gpurma_dev__port_packets(const gpurma_dev_win_t *w, unsigned ctx,
                                                       int peer, size_t dst_off, const void *src,
                                                       size_t bytes, uint32_t flag, int psize);

/* Bytes that `bytes` of payload occupy as packets of psize (8 or 16). */
GPURMA_HOST_DEVICE size_t gpurma_dev__packet_bytes(size_t bytes, int psize)
{
    return psize == 8 ? (bytes + 3) / 4 * 8 : (bytes + 7) / 8 * 16;
}

/* Packs bytes of src with flag and stores the packets at dst, each in one
 * store; the group of nthreads shares the packets. */
GPURMA_DEVICE void gpurma_dev__store_packets(uint64_t *dst, const void *src, size_t bytes,
                                             uint32_t flag, int psize, unsigned tid,
                                             unsigned nthreads)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t nwords = (bytes + 3) / 4;
    size_t npk = gpurma_dev__packet_bytes(bytes, psize) / (size_t)psize;
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

/* psize is 8 (one data word per packet) or 16 (two). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__put_packets(const gpurma_dev_win_t *w, int peer,
                                                      size_t dst_off, const void *src,
                                                      size_t bytes, uint32_t flag, int psize,
                                                      unsigned tid, unsigned nthreads)
{
    gpurma_status_t rc = gpurma_dev__check_range(w, peer, dst_off,
                                                 gpurma_dev__packet_bytes(bytes, psize), src);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (dst_off & ((size_t)psize - 1))
        return GPURMA_ERR_MISALIGNED;
    const gpurma_dev_peer_t *p = &w->peers[peer];
    switch (p->path) {
    case GPURMA_DEV_PATH_LOADSTORE:
        gpurma_dev__store_packets((uint64_t *)(p->base + dst_off), src, bytes, flag, psize, tid,
                                  nthreads);
        return GPURMA_SUCCESS;
    case GPURMA_DEV_PATH_FIFO: /* one thread hands the payload to the proxy */
        if (bytes && !gpurma_sh_proxy_readable(src))
            return GPURMA_ERR_UNSUPPORTED;
        return tid ? GPURMA_SUCCESS
                   : gpurma_dev__port_packets(w, (unsigned)p->port, peer, dst_off, src, bytes,
                                              flag, psize);
    default:
        return GPURMA_ERR_UNSUPPORTED;
    }
}

GPURMA_DEVICE gpurma_status_t gpurma_dev__read_packets(const gpurma_dev_win_t *w, size_t src_off,
                                                       void *dst, size_t bytes, uint32_t flag,
                                                       int psize, unsigned tid,
                                                       unsigned nthreads)
{
    size_t nwords = (bytes + 3) / 4;
    size_t npk = gpurma_dev__packet_bytes(bytes, psize) / (size_t)psize;
    gpurma_status_t rc = gpurma_dev__check_range(w, w->rank, src_off, npk * (size_t)psize, dst);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (src_off & ((size_t)psize - 1))
        return GPURMA_ERR_MISALIGNED;
    const uint64_t *src = (const uint64_t *)(w->peers[w->rank].base + src_off);
    if (!w->peers[w->rank].base)
        return GPURMA_ERR_UNSUPPORTED;
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
            if ((iter & 255) == 0) {
                uint64_t now = gpurma_sh_now_ns();
                if (!start)
                    start = now;
                else if (w->timeout_ns && now - start > w->timeout_ns)
                    return GPURMA_ERR_TIMEOUT;
            }
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
