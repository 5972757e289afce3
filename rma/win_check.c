/*
 * win_check.c - the checks every window call starts with: the handle is a
 * live window, the peer is in its team, the range lies inside the peer's
 * window, the signal exists. They only read; every file of rma/ that
 * takes a window calls them, and they call nothing of rma/ (the bottom of
 * the folder's call graph).
 */
#include <stdio.h>

#include "rma.h"

int gpurma_win_check(const struct gpurma_win_s *w)
{
    if (!w)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "window handle is NULL");
    if (!gpurma_handle_is(w, GPURMA_HANDLE_WIN))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%p is not a window handle",
                                (const void *)w);
    if (w->magic == GPURMA_DEAD_MAGIC || w->magic == GPURMA_GONE_MAGIC)
        return gpurma_handle_dead(w->magic, "window", w);
    if (w->magic != GPURMA_WIN_MAGIC)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%p is not a window handle",
                                (const void *)w);
    return GPURMA_SUCCESS;
}

int gpurma_check_peer(const struct gpurma_win_s *w, const char *op, int peer)
{
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if (peer < 0 || peer >= w->size)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s to peer %d: the window's team has %d ranks",
                                w->ctx->rank, op, peer, w->size);
    return GPURMA_SUCCESS;
}

int gpurma_check_range(const struct gpurma_win_s *w, const char *op, int peer, size_t off,
                       size_t bytes, const void *buf)
{
    int rc = gpurma_check_peer(w, op, peer);
    if (rc)
        return rc;
    if (bytes && !buf)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s of %zu bytes: buffer is NULL",
                                w->ctx->rank, op, bytes);
    uint64_t size = w->peers[peer].size;
    if (off > size || bytes > size - off)
        return gpurma_set_error(GPURMA_ERR_OUT_OF_BOUNDS,
                                "rank %d: %s of %zu bytes at offset %zu on peer %d exceeds its "
                                "window of %llu bytes",
                                w->ctx->rank, op, bytes, off, peer, (unsigned long long)size);
    return GPURMA_SUCCESS;
}

int gpurma_check_signal(const struct gpurma_win_s *w, const char *op, uint32_t sig)
{
    if (sig >= w->num_signals)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: signal %u does not exist (window has %u)",
                                w->ctx->rank, op, sig, w->num_signals);
    return GPURMA_SUCCESS;
}

int gpurma_check_signal_op(const struct gpurma_win_s *w, const char *op, uint32_t sig,
                           gpurma_signal_op_t sop)
{
    if (sop != GPURMA_SIGNAL_SET && sop != GPURMA_SIGNAL_ADD)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: unknown signal op %d",
                                w->ctx->rank, op, (int)sop);
    return gpurma_check_signal(w, op, sig);
}
