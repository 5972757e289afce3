/*
 * strided.c - subarray (2-D/3-D) and strided (iput/iget) transfers.
 *
 * Mapped peers of the mem engine (host memory) are copied row by row here,
 * with one typed store per element for rows of one 1/2/4/8-byte element (a
 * halo column), so nothing is packed or staged. Peers of the port engine
 * get the whole shape as one descriptor (port_engine.c), which the proxy
 * executes with its transport's 2-D/3-D copy. Every other peer gets one
 * engine put (or get) per row. The shape is checked whole first. A rank's
 * transfer to itself whose sides overlap is staged (move_staged).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"
#include "rma.h"

int gpurma_check_shape(gpurma_win_t w, const char *op, int peer, size_t off, const void *buf,
                       const gpurma_subarray_t *s, int is_put, size_t *win_extent)
{
    int rc = gpurma_check_peer(w, op, peer);
    if (rc)
        return rc;
    if (!s)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: shape is NULL",
                                w->ctx->rank, op);
    size_t buf_extent;
    const size_t *win_pitch = is_put ? s->dst_pitch : s->src_pitch;
    const size_t *buf_pitch = is_put ? s->src_pitch : s->dst_pitch;
    if (gpurma_dev__shape_extent(s, win_pitch, win_extent) ||
        gpurma_dev__shape_extent(s, buf_pitch, &buf_extent))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: shape of %zu x %zu x %zu elements of %zu bytes "
                                "with pitches %zu/%zu (target side) and %zu/%zu: zero element "
                                "size, rows or planes that overlap, or a size that overflows",
                                w->ctx->rank, op, s->count[0], s->count[1], s->count[2],
                                s->elem_bytes, win_pitch[0], win_pitch[1], buf_pitch[0],
                                buf_pitch[1]);
    return gpurma_check_range(w, op, peer, off, *win_extent, *win_extent ? buf : w);
}

static char *mapped(gpurma_win_t w, int peer)
{
    const gpurma_dev_peer_t *pe = &w->peers[peer];
    return !w->gpu && w->engines[peer]->kind == GPURMA_ENGINE_MEM &&
                   pe->path == GPURMA_DEV_PATH_LOADSTORE
               ? pe->base
               : NULL;
}

/* Mapped peer: plain loops, the row size switched on once (a halo column
 * is rows of one double: one 8-byte store each, no call per row). */
#define COPY_ROWS(T)                                                                         \
    for (size_t z = 0; z < s->count[2]; z++) {                                               \
        char *d = dst + z * dp[1];                                                           \
        const char *f = src + z * sp[1];                                                     \
        for (size_t y = 0; y < s->count[1]; y++, d += dp[0], f += sp[0]) {                   \
            T v;                                                                             \
            memcpy(&v, f, sizeof(T));                                                        \
            memcpy(d, &v, sizeof(T));                                                        \
        }                                                                                    \
    }
static void copy_mapped(char *dst, const size_t dp[2], const char *src, const size_t sp[2],
                        const gpurma_subarray_t *s)
{
    size_t row = s->count[0] * s->elem_bytes;
    switch (row) {
    case 8: COPY_ROWS(uint64_t); return;
    case 4: COPY_ROWS(uint32_t); return;
    case 2: COPY_ROWS(uint16_t); return;
    case 1: COPY_ROWS(uint8_t); return;
    default: break;
    }
    for (size_t z = 0; z < s->count[2]; z++) {
        char *d = dst + z * dp[1];
        const char *f = src + z * sp[1];
        for (size_t y = 0; y < s->count[1]; y++, d += dp[0], f += sp[0])
            memcpy(d, f, row);
    }
}
#undef COPY_ROWS

/* Whether a transfer from a rank to itself has its local buffer's extent
 * overlap the window range it writes or reads (host memory). */
static int self_overlap(gpurma_win_t w, int peer, size_t off, const char *buf,
                        const gpurma_subarray_t *s, const size_t *win_pitch,
                        const size_t *buf_pitch)
{
    size_t wext, bext;
    if (peer != w->rank || w->gpu || gpurma_dev__shape_extent(s, win_pitch, &wext) ||
        gpurma_dev__shape_extent(s, buf_pitch, &bext) || !wext || !bext)
        return 0;
    const uintptr_t a = (uintptr_t)w->base + off, b = (uintptr_t)buf;
    return a - b < bext || b - a < wext;
}

static int move_rows(gpurma_win_t w, int peer, int is_put, size_t off, char *buf,
                     const gpurma_subarray_t *s);

/* Such a transfer moves as memmove does (README: a put or get from a rank
 * to itself whose sides overlap): the source is read whole into a packed
 * buffer first, then written out, on whatever engine serves the rank
 * itself. Row by row, later rows read bytes that earlier rows wrote. */
static int move_staged(gpurma_win_t w, int peer, int is_put, size_t off, char *buf,
                       const gpurma_subarray_t *s)
{
    const size_t row = s->count[0] * s->elem_bytes, packed[2] = {row, row * s->count[1]};
    char *tmp = malloc(packed[1] * s->count[2]); /* within the checked extents */
    if (!tmp)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "rank %d: subarray to itself: out of "
                                "memory for the %zu bytes it stages",
                                w->ctx->rank, packed[1] * s->count[2]);
    /* tmp takes the local buffer's side of the shape */
    gpurma_subarray_t p = *s;
    memcpy(is_put ? p.src_pitch : p.dst_pitch, packed, sizeof(packed));
    if (is_put)
        copy_mapped(tmp, packed, buf, s->src_pitch, s);
    int rc = move_rows(w, peer, is_put, off, tmp, &p);
    if (!rc) /* the engine may still be reading or writing tmp */
        rc = w->engines[peer]->flush(w, peer);
    if (!rc && !is_put)
        copy_mapped(buf, s->dst_pitch, tmp, packed, s);
    free(tmp);
    return rc;
}

static int move_rows(gpurma_win_t w, int peer, int is_put, size_t off, char *buf,
                     const gpurma_subarray_t *s)
{
    const size_t *win_pitch = is_put ? s->dst_pitch : s->src_pitch;
    const size_t *buf_pitch = is_put ? s->src_pitch : s->dst_pitch;
    if (self_overlap(w, peer, off, buf, s, win_pitch, buf_pitch))
        return move_staged(w, peer, is_put, off, buf, s);
    char *base = mapped(w, peer);
    if (base) {
        if (is_put)
            copy_mapped(base + off, win_pitch, buf, buf_pitch, s);
        else
            copy_mapped(buf, buf_pitch, base + off, win_pitch, s);
        return GPURMA_SUCCESS;
    }
    const gpurma_engine_ops_t *e = w->engines[peer];
    if (e->kind == GPURMA_ENGINE_PORT)
        return gpurma_port_subarray(w, peer, is_put, off, buf, s, 0, 0, GPURMA_SIGNAL_SET, 0);
    size_t row = s->count[0] * s->elem_bytes;
    for (size_t z = 0; z < s->count[2]; z++)
        for (size_t y = 0; y < s->count[1]; y++) {
            size_t at = off + z * win_pitch[1] + y * win_pitch[0];
            char *b = buf + z * buf_pitch[1] + y * buf_pitch[0];
            int rc = is_put ? e->put(w, peer, at, b, row, GPURMA_NO_COUNTER)
                            : e->get(w, peer, b, at, row);
            if (rc)
                return rc;
        }
    return GPURMA_SUCCESS;
}

/* Checked under the name of the call the user made (iput and iget come
 * here too), then moved. */
static int subarray(gpurma_win_t w, const char *op, int is_put, int peer, size_t off, char *buf,
                    const gpurma_subarray_t *s)
{
    size_t extent;
    int rc = gpurma_check_shape(w, op, peer, off, buf, s, is_put, &extent);
    return rc || !extent ? rc : move_rows(w, peer, is_put, off, buf, s);
}

GPURMA_API gpurma_status_t gpurma_put_subarray(gpurma_win_t w, int peer, size_t off,
                                               const void *src, const gpurma_subarray_t *s)
{
    return subarray(w, "put_subarray", 1, peer, off, (char *)src, s);
}

GPURMA_API gpurma_status_t gpurma_get_subarray(gpurma_win_t w, int peer, void *dst, size_t off,
                                               const gpurma_subarray_t *s)
{
    return subarray(w, "get_subarray", 0, peer, off, dst, s);
}

/* The rows, then the signal through the same engine: the ordering rule
 * (a signal is observed after the origin's earlier puts to the target)
 * covers every row. The port engine carries both in one descriptor, whose
 * transport issues the signal after the last row. */
GPURMA_API gpurma_status_t gpurma_put_subarray_signal(gpurma_win_t w, int peer, size_t off,
                                                      const void *src,
                                                      const gpurma_subarray_t *s, uint32_t sig,
                                                      gpurma_signal_op_t op, uint64_t value)
{
    size_t extent;
    int rc = gpurma_check_shape(w, "put_subarray_signal", peer, off, src, s, 1, &extent);
    if (!rc)
        rc = gpurma_check_signal_op(w, "put_subarray_signal", sig, op);
    if (!rc && extent && w->engines[peer]->kind == GPURMA_ENGINE_PORT &&
        !self_overlap(w, peer, off, src, s, s->dst_pitch, s->src_pitch))
        return gpurma_port_subarray(w, peer, 1, off, (void *)src, s, 1, sig, op, value);
    if (!rc && extent)
        rc = move_rows(w, peer, 1, off, (char *)src, s);
    return rc ? rc : w->engines[peer]->signal(w, peer, sig, op, value);
}

static int strided_shape(gpurma_win_t w, const char *op, size_t dst_stride, size_t src_stride,
                         size_t elem_bytes, size_t nelems, gpurma_subarray_t *s)
{
    int rc = gpurma_win_check(w);
    if (!rc && gpurma_dev__strided_shape(dst_stride, src_stride, elem_bytes, nelems, s))
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                              "rank %d: %s: strides %zu/%zu and element size %zu must be >= 1 "
                              "(and their product fit a size_t)",
                              w->ctx->rank, op, dst_stride, src_stride, elem_bytes);
    return rc;
}

GPURMA_API gpurma_status_t gpurma_iput(gpurma_win_t w, int peer, size_t dst_off,
                                       size_t dst_stride, const void *src, size_t src_stride,
                                       size_t elem_bytes, size_t nelems)
{
    gpurma_subarray_t s;
    int rc = strided_shape(w, "iput", dst_stride, src_stride, elem_bytes, nelems, &s);
    return rc ? rc : subarray(w, "iput", 1, peer, dst_off, (char *)src, &s);
}

GPURMA_API gpurma_status_t gpurma_iget(gpurma_win_t w, int peer, void *dst, size_t dst_stride,
                                       size_t src_off, size_t src_stride, size_t elem_bytes,
                                       size_t nelems)
{
    gpurma_subarray_t s;
    int rc = strided_shape(w, "iget", dst_stride, src_stride, elem_bytes, nelems, &s);
    return rc ? rc : subarray(w, "iget", 0, peer, src_off, dst, &s);
}
