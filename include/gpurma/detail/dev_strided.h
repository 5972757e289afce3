/*
 * dev_strided.h - subarray shapes (gpurma_subarray_t): their checks and
 * extents, shared by the host calls (rma/strided.c) and the device API's
 * strided forms below: row by row through a channel (load/store copies,
 * host calls), and on the port engine the whole shape as one descriptor with
 * its shape slot, as the host calls push it. Included at the end of
 * gpurma_device.h; not ABI.
 */
#ifndef GPURMA_DETAIL_DEV_STRIDED_H
#define GPURMA_DETAIL_DEV_STRIDED_H

/* Bytes from the first byte of a shape to one past its last, on one side
 * (pitch: that side's), in *extent; INVALID_ARG for a zero element size,
 * overlapping rows or planes, or a size that overflows. An empty shape
 * (a zero count) has extent 0. */
GPURMA_HOST_DEVICE gpurma_status_t gpurma_dev__shape_extent(const gpurma_subarray_t *s,
                                                            const size_t pitch[2],
                                                            size_t *extent)
{
    *extent = 0;
    if (!s || !s->elem_bytes)
        return GPURMA_ERR_INVALID_ARG;
    if (!s->count[0] || !s->count[1] || !s->count[2])
        return GPURMA_SUCCESS;
    if (s->count[0] > SIZE_MAX / s->elem_bytes)
        return GPURMA_ERR_INVALID_ARG;
    size_t row = s->count[0] * s->elem_bytes;
    if (s->count[1] > 1 && pitch[0] < row)
        return GPURMA_ERR_INVALID_ARG;
    if (s->count[1] - 1 > (SIZE_MAX - row) / (pitch[0] ? pitch[0] : 1))
        return GPURMA_ERR_INVALID_ARG;
    size_t plane = (s->count[1] - 1) * pitch[0] + row;
    if (s->count[2] > 1 && pitch[1] < plane)
        return GPURMA_ERR_INVALID_ARG;
    if (s->count[2] - 1 > (SIZE_MAX - plane) / (pitch[1] ? pitch[1] : 1))
        return GPURMA_ERR_INVALID_ARG;
    *extent = (s->count[2] - 1) * pitch[1] + plane;
    return GPURMA_SUCCESS;
}

/* The shape of an iput/iget: one element per row, strides in elements. */
GPURMA_HOST_DEVICE gpurma_status_t gpurma_dev__strided_shape(size_t dst_stride, size_t src_stride,
                                                             size_t elem_bytes, size_t nelems,
                                                             gpurma_subarray_t *s)
{
    s->elem_bytes = elem_bytes;
    s->count[0] = 1;
    s->count[1] = nelems;
    s->count[2] = 1;
    s->dst_pitch[1] = s->src_pitch[1] = 0;
    if (!elem_bytes || !dst_stride || !src_stride || dst_stride > SIZE_MAX / elem_bytes ||
        src_stride > SIZE_MAX / elem_bytes)
        return GPURMA_ERR_INVALID_ARG;
    s->dst_pitch[0] = dst_stride * elem_bytes;
    s->src_pitch[0] = src_stride * elem_bytes;
    return GPURMA_SUCCESS;
}

/* Row r (0 .. count[1]*count[2]-1) of a side starts at this byte. */
GPURMA_HOST_DEVICE size_t gpurma_dev__shape_row(const gpurma_subarray_t *s, const size_t pitch[2],
                                                size_t r)
{
    return (r / s->count[1]) * pitch[1] + (r % s->count[1]) * pitch[0];
}

/* Put (is_put) or get of a shape through a channel; rows split over tid of
 * nthreads, except on the port engine, where thread 0 pushes the whole shape
 * (with the signal after its last row when with_signal: the caller checked
 * sig and op). Local side: buf; window side: off. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__chan_subarray(gpurma_dev_chan_t c, int is_put,
                                                        size_t off, void *buf,
                                                        const gpurma_subarray_t *s, unsigned tid,
                                                        unsigned nthreads, int with_signal,
                                                        uint32_t sig, gpurma_signal_op_t op,
                                                        uint64_t value)
{
    gpurma_status_t rc = gpurma_dev__check_chan(&c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_team(tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    const size_t *win_pitch = is_put ? s->dst_pitch : s->src_pitch;
    const size_t *buf_pitch = is_put ? s->src_pitch : s->dst_pitch;
    size_t win_extent, buf_extent;
    rc = gpurma_dev__shape_extent(s, win_pitch, &win_extent);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__shape_extent(s, buf_pitch, &buf_extent);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_peer_range(&c.pe, off, win_extent, buf);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (c.pe.path == GPURMA_DEV_PATH_FIFO) {
        rc = gpurma_dev__port_readable(buf, buf_extent); /* the same answer in every thread */
        if (rc != GPURMA_SUCCESS || tid || (!win_extent && !with_signal))
            return rc;
        if (!win_extent) /* nothing to move: the signal alone */
            return gpurma_dev__chan_signal_to(&c, sig, op, value);
        return gpurma_dev__port_subarray(c.fifo, c.port_win_id, c.peer, is_put, off, buf,
                                         buf_extent, s, with_signal, sig, op, value);
    }
    if (!win_extent)
        return with_signal && !tid ? gpurma_dev_chan_signal(c, sig, op, value) : GPURMA_SUCCESS;
    size_t rows = s->count[1] * s->count[2], row = s->count[0] * s->elem_bytes;
    for (size_t r = tid; r < rows && rc == GPURMA_SUCCESS; r += nthreads) {
        size_t w_at = off + gpurma_dev__shape_row(s, win_pitch, r);
        char *b_at = (char *)buf + gpurma_dev__shape_row(s, buf_pitch, r);
        rc = is_put ? gpurma_dev_chan_put(c, w_at, b_at, row)
                    : gpurma_dev_chan_get(c, b_at, w_at, row);
    }
    return rc != GPURMA_SUCCESS || !with_signal ? rc : gpurma_dev_chan_signal(c, sig, op, value);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_subarray(gpurma_dev_win_t w, int peer,
                                                      size_t dst_off, const void *src,
                                                      const gpurma_subarray_t *shape)
{
    return gpurma_dev__chan_subarray(gpurma_dev__chan_of(&w, peer), 1, dst_off, (void *)src,
                                     shape, 0, 1, 0, 0, GPURMA_SIGNAL_SET, 0);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_put_subarray_coop(gpurma_dev_win_t w, int peer,
                                                           size_t dst_off, const void *src,
                                                           const gpurma_subarray_t *shape,
                                                           unsigned tid, unsigned nthreads)
{
    return gpurma_dev__chan_subarray(gpurma_dev__chan_of(&w, peer), 1, dst_off, (void *)src,
                                     shape, tid, nthreads, 0, 0, GPURMA_SIGNAL_SET, 0);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_get_subarray(gpurma_dev_win_t w, int peer, void *dst,
                                                      size_t src_off,
                                                      const gpurma_subarray_t *shape)
{
    return gpurma_dev__chan_subarray(gpurma_dev__chan_of(&w, peer), 0, src_off, dst, shape, 0,
                                     1, 0, 0, GPURMA_SIGNAL_SET, 0);
}

/* One thread: the rows, then the signal (released after them; one
 * descriptor on the port engine, whose transport signals after the last
 * row). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_put_subarray_signal(gpurma_dev_win_t w, int peer,
                                                             size_t dst_off, const void *src,
                                                             const gpurma_subarray_t *shape,
                                                             uint32_t sig, gpurma_signal_op_t op,
                                                             uint64_t value)
{
    gpurma_dev_chan_t c = gpurma_dev__chan_of(&w, peer);
    if (sig >= c.num_signals || (op != GPURMA_SIGNAL_SET && op != GPURMA_SIGNAL_ADD))
        return c.status != GPURMA_SUCCESS ? (gpurma_status_t)c.status : GPURMA_ERR_INVALID_ARG;
    return gpurma_dev__chan_subarray(c, 1, dst_off, (void *)src, shape, 0, 1, 1, sig, op, value);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_iput(gpurma_dev_win_t w, int peer, size_t dst_off,
                                              size_t dst_stride, const void *src,
                                              size_t src_stride, size_t elem_bytes,
                                              size_t nelems)
{
    gpurma_subarray_t s;
    gpurma_status_t rc = gpurma_dev__strided_shape(dst_stride, src_stride, elem_bytes, nelems, &s);
    return rc != GPURMA_SUCCESS ? rc : gpurma_dev_put_subarray(w, peer, dst_off, src, &s);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_iget(gpurma_dev_win_t w, int peer, void *dst,
                                              size_t dst_stride, size_t src_off,
                                              size_t src_stride, size_t elem_bytes,
                                              size_t nelems)
{
    gpurma_subarray_t s;
    gpurma_status_t rc = gpurma_dev__strided_shape(dst_stride, src_stride, elem_bytes, nelems, &s);
    return rc != GPURMA_SUCCESS ? rc : gpurma_dev_get_subarray(w, peer, dst, src_off, &s);
}

#endif
