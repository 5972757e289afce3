/*
 * stream.c - host-initiated operations ordered on a CUDA stream
 * (gpurma_*_on_stream). Each call checks its arguments exactly like the
 * plain host call (ops.c), then enqueues copies and small kernels on the
 * caller's stream through src/gpu (gpu.h) and returns: nothing here waits for
 * the GPU, so the calls can be captured into CUDA graphs.
 *
 * Only device windows whose peers are mapped on this GPU qualify, and the
 * operations go straight to the mapping whichever engine serves the
 * window's other calls (the stream is their order and completion); host
 * windows, host-backend contexts and builds without CUDA get
 * GPURMA_ERR_UNSUPPORTED (after the argument checks, so that bad input is
 * reported the same way everywhere).
 *
 * What runs on the stream:
 *   put, get          cudaMemcpyAsync to or from the peer's IPC mapping
 *   put_signal        one kernel for small device-readable sources (the
 *                     block copies, one thread signals), else a copy and
 *                     the signal kernel
 *   signal            a one-thread kernel: system fence, then the slot
 *   put_value         a one-thread kernel (the value is a kernel argument,
 *                     so a replayed graph stores the value of the capture)
 *   wait_until        a one-thread kernel polling this rank's slot; on
 *                     timeout it records why and traps (src/gpu/gpu_kernels.cu)
 *   signal_reset      a one-thread kernel storing 0
 *   flush             nothing: stream order is local completion
 *   quiet             a system-scope fence kernel
 *
 * The team barrier on a stream is a collective: coll/stream_barrier.c.
 */
#include <stdio.h>

#include "gpu.h"
#include "rma.h"

/* --------------------------------------------------------------- checks */

/* Argument checks are those of ops.c (gpurma_check_*), so that a call fails
 * identically on a stream. */

/* The window is in device memory and (peer >= 0) the GPU reaches the
 * peer's window by load/store; then makes the window's GPU current and
 * checks that the stream is one of its streams. */
static int check_device(const struct gpurma_win_s *w, const char *op, int peer, void *stream)
{
    if (!w->gpu)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: %s: the window is in host memory (%s); stream-ordered "
                                "operations need a device window",
                                w->ctx->rank, op,
                                w->ctx->device < 0 ? "this context uses no GPU"
                                                   : "allocated as GPURMA_MEM_HOST or created "
                                                     "on host memory");
    if (peer >= 0 && (w->peers[peer].path != GPURMA_DEV_PATH_LOADSTORE ||
                      !w->peers[peer].signals))
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: %s to peer %d: the peer is served by engine %s, not "
                                "mapped on this GPU; stream-ordered operations need peers whose "
                                "memory the GPU reaches by load/store",
                                w->ctx->rank, op, peer, gpurma_engine_name(w->engines[peer]->kind));
    return gpurma_gpu_stream_begin(w->gpu->device, stream);
}

/* ------------------------------------------------------------ data, signals */

GPURMA_API gpurma_status_t gpurma_put_on_stream(gpurma_win_t w, int peer, size_t off,
                                                const void *src, size_t bytes, void *stream)
{
    int rc = gpurma_check_range(w, "put_on_stream", peer, off, bytes, src);
    if (!rc)
        rc = check_device(w, "put_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_copy(stream, w->peers[peer].base + off, src, bytes);
}

GPURMA_API gpurma_status_t gpurma_get_on_stream(gpurma_win_t w, int peer, void *dst, size_t off,
                                                size_t bytes, void *stream)
{
    int rc = gpurma_check_range(w, "get_on_stream", peer, off, bytes, dst);
    if (!rc)
        rc = check_device(w, "get_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_copy(stream, dst, w->peers[peer].base + off, bytes);
}

GPURMA_API gpurma_status_t gpurma_put_value_on_stream(gpurma_win_t w, int peer, size_t off,
                                                      uint64_t value, size_t bytes, void *stream)
{
    int rc = gpurma_check_put_value(w, "put_value_on_stream", peer, off, bytes);
    if (rc)
        return rc;
    rc = check_device(w, "put_value_on_stream", peer, stream);
    return rc ? rc
              : gpurma_gpu_stream_put_value(stream, w->peers[peer].base + off, value, bytes);
}

GPURMA_API gpurma_status_t gpurma_signal_on_stream(gpurma_win_t w, int peer, uint32_t sig,
                                                   gpurma_signal_op_t op, uint64_t value,
                                                   void *stream)
{
    int rc = gpurma_check_peer(w, "signal_on_stream", peer);
    if (!rc)
        rc = gpurma_check_signal_op(w, "signal_on_stream", sig, op);
    if (!rc)
        rc = check_device(w, "signal_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_signal(stream, &w->peers[peer].signals[sig], (uint32_t)w->rank,
                                    (int)op, value);
}

GPURMA_API gpurma_status_t gpurma_put_signal_on_stream(gpurma_win_t w, int peer, size_t off,
                                                       const void *src, size_t bytes,
                                                       uint32_t sig, gpurma_signal_op_t op,
                                                       uint64_t value, void *stream)
{
    int rc = gpurma_check_range(w, "put_signal_on_stream", peer, off, bytes, src);
    if (!rc)
        rc = gpurma_check_signal_op(w, "put_signal_on_stream", sig, op);
    if (!rc)
        rc = check_device(w, "put_signal_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_put_signal(w->gpu->device, stream, w->peers[peer].base + off, src,
                                        bytes, &w->peers[peer].signals[sig], (uint32_t)w->rank,
                                        (int)op, value);
}

/* A subarray: one 2-D copy per plane on the stream (the copy engine walks
 * the rows; narrow rows within one GPU go to a kernel), between the peer's
 * mapping and buf. */
static int subarray_on_stream(gpurma_win_t w, const char *op, int peer, size_t off, char *buf,
                              const gpurma_subarray_t *s, int is_put, void *stream)
{
    size_t extent;
    int rc = gpurma_check_shape(w, op, peer, off, buf, s, is_put, &extent);
    if (!rc)
        rc = check_device(w, op, peer, stream);
    if (rc || !extent)
        return rc;
    const size_t *wp = is_put ? s->dst_pitch : s->src_pitch;
    const size_t *bp = is_put ? s->src_pitch : s->dst_pitch;
    size_t row = s->count[0] * s->elem_bytes;
    /* A single row's pitch is free (even 0); CUDA wants at least its width. */
    size_t wpitch = s->count[1] > 1 ? wp[0] : row, bpitch = s->count[1] > 1 ? bp[0] : row;
    char *win = w->peers[peer].base + off;
    const int dev = w->gpu->device;
    for (size_t z = 0; z < s->count[2] && !rc; z++) {
        char *wz = win + z * wp[1], *bz = buf + z * bp[1];
        rc = is_put ? gpurma_gpu_stream_copy_2d(dev, stream, wz, wpitch, bz, bpitch, row,
                                                s->count[1], 0)
                    : gpurma_gpu_stream_copy_2d(dev, stream, bz, bpitch, wz, wpitch, row,
                                                s->count[1], 1);
    }
    return rc;
}

GPURMA_API gpurma_status_t gpurma_put_subarray_on_stream(gpurma_win_t w, int peer, size_t off,
                                                         const void *src,
                                                         const gpurma_subarray_t *s,
                                                         void *stream)
{
    return subarray_on_stream(w, "put_subarray_on_stream", peer, off, (char *)src, s, 1, stream);
}

GPURMA_API gpurma_status_t gpurma_get_subarray_on_stream(gpurma_win_t w, int peer, void *dst,
                                                         size_t off, const gpurma_subarray_t *s,
                                                         void *stream)
{
    return subarray_on_stream(w, "get_subarray_on_stream", peer, off, dst, s, 0, stream);
}

/* The copies, then a signal kernel: stream order puts it after them. */
GPURMA_API gpurma_status_t gpurma_put_subarray_signal_on_stream(
    gpurma_win_t w, int peer, size_t off, const void *src, const gpurma_subarray_t *s,
    uint32_t sig, gpurma_signal_op_t op, uint64_t value, void *stream)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal_op(w, "put_subarray_signal_on_stream", sig, op);
    if (!rc)
        rc = subarray_on_stream(w, "put_subarray_signal_on_stream", peer, off, (char *)src, s, 1,
                                stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_signal(stream, &w->peers[peer].signals[sig], (uint32_t)w->rank,
                                    (int)op, value);
}

GPURMA_API gpurma_status_t gpurma_wait_until_on_stream(gpurma_win_t w, uint32_t sig,
                                                       gpurma_cmp_t cmp, uint64_t value,
                                                       void *stream)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal(w, "wait_until_on_stream", sig);
    if (rc)
        return rc;
    if ((unsigned)cmp > GPURMA_CMP_LE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: wait_until_on_stream: unknown compare %d", w->ctx->rank,
                                (int)cmp);
    rc = check_device(w, "wait_until_on_stream", -1, stream);
    return rc ? rc : gpurma_gpu_stream_wait(stream, &w->dev, sig, (int)cmp, value);
}

GPURMA_API gpurma_status_t gpurma_signal_reset_on_stream(gpurma_win_t w, uint32_t sig,
                                                         void *stream)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal(w, "signal_reset_on_stream", sig);
    if (!rc)
        rc = check_device(w, "signal_reset_on_stream", -1, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_store_u64(stream, &w->gpu->signals[sig].value, 0);
}

/* ----------------------------------------------------------- completion */

static int check_flush_on_stream(gpurma_win_t w, const char *op, int peer, void *stream)
{
    int rc = peer == GPURMA_ALL_PEERS ? gpurma_win_check(w) : gpurma_check_peer(w, op, peer);
    return rc ? rc : check_device(w, op, peer, stream);
}

GPURMA_API gpurma_status_t gpurma_flush_local_on_stream(gpurma_win_t w, int peer, void *stream)
{
    /* Copies and kernels complete in stream order: the work enqueued after
     * this point already starts after the earlier operations completed. */
    return check_flush_on_stream(w, "flush_local_on_stream", peer, stream);
}

/* Remote completion: the same system-scope fence as quiet, whatever the
 * peer (one fence covers every peer's stores). */
GPURMA_API gpurma_status_t gpurma_flush_on_stream(gpurma_win_t w, int peer, void *stream)
{
    int rc = check_flush_on_stream(w, "flush_on_stream", peer, stream);
    return rc ? rc : gpurma_gpu_stream_fence(stream);
}

GPURMA_API gpurma_status_t gpurma_quiet_on_stream(gpurma_win_t w, void *stream)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = check_device(w, "quiet_on_stream", -1, stream);
    return rc ? rc : gpurma_gpu_stream_fence(stream);
}
