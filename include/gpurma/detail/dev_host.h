/*
 * dev_host.h - the host-call path behind gpurma_device.h, host backend
 * only: peers whose memory is not mapped in this process (windows made by
 * gpurma_win_create on private memory) are reached through a library call
 * (a CMA copy). Not ABI.
 */
#ifndef GPURMA_DETAIL_DEV_HOST_H
#define GPURMA_DETAIL_DEV_HOST_H

#include "gpurma/detail/dev_common.h"

#if !GPURMA_DEV_GPU

#ifdef __cplusplus
extern "C" {
#endif

enum {
    GPURMA_DEV_OP_PUT = 0, GPURMA_DEV_OP_GET, GPURMA_DEV_OP_FETCH_ADD,
    GPURMA_DEV_OP_SWAP, GPURMA_DEV_OP_CAS
};
GPURMA_API gpurma_status_t gpurma_dev_host_call(const gpurma_dev_win_t *w, int op, int peer,
                                                size_t off, void *buf, size_t bytes, uint64_t a,
                                                uint64_t b, uint64_t *old);

#ifdef __cplusplus
}
#endif

/* The library call reads only the handle's host_win: channels keep that
 * pointer and lend it through a handle made here. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__host_call(void *host_win, int op, int peer, size_t off,
                                                    void *buf, size_t bytes, uint64_t a,
                                                    uint64_t b, uint64_t *old)
{
    gpurma_dev_win_t w;
    memset(&w, 0, sizeof(w));
    w.host_win = host_win;
    w.magic = GPURMA_DEV_WIN_MAGIC;
    return gpurma_dev_host_call(&w, op, peer, off, buf, bytes, a, b, old);
}

/* One thread of the team moves the bytes; the call has completed them. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__host_put(void *host_win, int peer, size_t dst_off,
                                                   const void *src, size_t bytes, unsigned tid)
{
    return tid ? GPURMA_SUCCESS
               : gpurma_dev__host_call(host_win, GPURMA_DEV_OP_PUT, peer, dst_off, (void *)src,
                                       bytes, 0, 0, (uint64_t *)0);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev__host_get(void *host_win, int peer, void *dst,
                                                   size_t src_off, size_t bytes, unsigned tid)
{
    return tid ? GPURMA_SUCCESS
               : gpurma_dev__host_call(host_win, GPURMA_DEV_OP_GET, peer, src_off, dst, bytes, 0,
                                       0, (uint64_t *)0);
}

/* Little-endian: the low `bytes` bytes of value are the value. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__host_put_value(void *host_win, int peer,
                                                         size_t dst_off, uint64_t value,
                                                         size_t bytes)
{
    return gpurma_dev__host_call(host_win, GPURMA_DEV_OP_PUT, peer, dst_off, &value, bytes, 0, 0,
                                 (uint64_t *)0);
}

/* kind is a GPURMA_DEV__ATOMIC_*; the old value goes to *prev. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__host_atomic(void *host_win, int kind, int peer,
                                                      size_t off, uint64_t value,
                                                      uint64_t compare, uint64_t *prev)
{
    static const int ops[] = {GPURMA_DEV_OP_FETCH_ADD, GPURMA_DEV_OP_SWAP, GPURMA_DEV_OP_CAS};
    return gpurma_dev__host_call(host_win, ops[kind], peer, off, (void *)0, 8, value, compare,
                                 prev);
}

#endif /* !GPURMA_DEV_GPU */

#endif
