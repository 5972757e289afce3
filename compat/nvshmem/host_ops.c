/*
 * host_ops.c - the primitives host code reaches through the header: each
 * is one call of gpurma's host API on the heap's window, with the address
 * turned into a heap offset.
 */
#include "nvshmem_internal.h"

#define L (&gpurma_nvshmemi_lib)

/* Completion kinds of each_window. */
enum { FLUSH_LOCAL, FENCE, QUIET, QUIET_ON_STREAM };

/* One completion call on the heap's window and every segment's: with one
 * heap (the usual case) one call. */
static void each_window(const char *call, int kind, int pe, void *stream)
{
    for (uint32_t k = 0; k <= L->st.nsegments; k++) {
        gpurma_win_t w = k ? L->seg_wins[k - 1] : L->win;
        if (!w)
            continue;
        gpurma_status_t rc = kind == FLUSH_LOCAL ? gpurma_flush_local(w, pe)
                             : kind == FENCE     ? gpurma_fence(w)
                             : kind == QUIET     ? gpurma_quiet(w)
                                                 : gpurma_quiet_on_stream(w, stream);
        gpurma_nvshmemi_check_rc(call, rc);
    }
}

GPURMA_API void gpurma_nvshmemi_put(const char *call, void *dst, const void *src, size_t bytes,
                                    int pe, int nbi)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes, &w);
    gpurma_nvshmemi_check_rc(call, gpurma_put(w, pe, off, src, bytes));
    if (!nbi) /* the source may be reused on return */
        gpurma_nvshmemi_check_rc(call, gpurma_flush_local(w, pe));
}

GPURMA_API void gpurma_nvshmemi_get(const char *call, void *dst, const void *src, size_t bytes,
                                    int pe, int nbi)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset(call, src, bytes, &w);
    gpurma_nvshmemi_check_rc(call, gpurma_get(w, pe, dst, off, bytes));
    if (!nbi) /* the data is here on return */
        gpurma_nvshmemi_check_rc(call, gpurma_flush_local(w, pe));
}

GPURMA_API void gpurma_nvshmemi_put_value(const char *call, void *dst, uint64_t value,
                                          size_t bytes, int pe)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes, &w);
    gpurma_nvshmemi_check_rc(call, gpurma_put_value(w, pe, off, value, bytes));
}

GPURMA_API uint64_t gpurma_nvshmemi_amo64(const char *call, int kind, void *addr,
                                          uint64_t value, uint64_t compare, int pe)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset(call, addr, 8, &w);
    uint64_t old = 0, *want = kind & GPURMA_NVSHMEMI_AMO_NO_FETCH ? NULL : &old;
    gpurma_status_t rc;
    switch (kind & ~GPURMA_NVSHMEMI_AMO_NO_FETCH) {
    case GPURMA_DEV__ATOMIC_FETCH_ADD:
        rc = gpurma_atomic_fetch_add(w, pe, off, value, want);
        break;
    case GPURMA_DEV__ATOMIC_SWAP:
        rc = gpurma_atomic_swap(w, pe, off, value, want);
        break;
    case GPURMA_DEV__ATOMIC_CAS:
        rc = gpurma_atomic_compare_swap(w, pe, off, compare, value, want);
        break;
    default:
        rc = GPURMA_ERR_INVALID_ARG;
        break;
    }
    gpurma_nvshmemi_check_rc(call, rc);
    return old;
}

GPURMA_API void gpurma_nvshmemi_flush(const char *call, int pe)
{
    gpurma_nvshmemi_require_init(call);
    each_window(call, FLUSH_LOCAL, pe, NULL);
}

GPURMA_API void gpurma_nvshmemi_fence(const char *call)
{
    gpurma_nvshmemi_require_init(call);
    each_window(call, FENCE, 0, NULL);
}

GPURMA_API void gpurma_nvshmemi_quiet(const char *call)
{
    gpurma_nvshmemi_require_init(call);
    each_window(call, QUIET, 0, NULL);
}

GPURMA_API void gpurma_nvshmemi_barrier(const char *call, nvshmem_team_t team, int quiet)
{
    gpurma_team_t t = gpurma_nvshmemi_gteam(call, team);
    if (quiet)
        each_window(call, QUIET, 0, NULL);
    gpurma_nvshmemi_check_rc(call, gpurma_barrier(t));
}

GPURMA_API void *gpurma_nvshmemi_ptr(const void *addr, int pe)
{
    if (L->status < NVSHMEM_STATUS_IS_INITIALIZED || pe < 0 || pe >= L->st.n_pes)
        return NULL;
    size_t off = 0;
    int k = gpurma_nvshmemi_find_segment(addr, &off);
    if (k < 0 || off >= (k ? L->st.segments[k - 1].size : L->st.heap_size) ||
        (!k && off < L->st.sync_bytes))
        return NULL;
    if (pe == L->st.my_pe) /* this PE's own copy, however its window reaches it */
        return (void *)addr;
    char *peer = gpurma_win_peer_ptr(k ? L->seg_wins[k - 1] : L->win, pe);
    return peer ? peer + off : NULL;
}

/* ---------------------------------------------------------- on a stream */

GPURMA_API void gpurma_nvshmemi_put_on_stream(const char *call, void *dst, const void *src,
                                              size_t bytes, int pe, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes, &w);
    gpurma_nvshmemi_check_rc(call, gpurma_put_on_stream(w, pe, off, src, bytes, stream));
}

GPURMA_API void gpurma_nvshmemi_get_on_stream(const char *call, void *dst, const void *src,
                                              size_t bytes, int pe, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset(call, src, bytes, &w);
    gpurma_nvshmemi_check_rc(call, gpurma_get_on_stream(w, pe, dst, off, bytes, stream));
}

GPURMA_API void gpurma_nvshmemi_put_value_on_stream(const char *call, void *dst, uint64_t value,
                                                    size_t bytes, int pe, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes, &w);
    gpurma_nvshmemi_check_rc(call,
                             gpurma_put_value_on_stream(w, pe, off, value, bytes, stream));
}

GPURMA_API void gpurma_nvshmemi_quiet_on_stream(const char *call, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    each_window(call, QUIET_ON_STREAM, 0, stream);
}

GPURMA_API void gpurma_nvshmemi_barrier_on_stream(const char *call, nvshmem_team_t team,
                                                  void *stream)
{
    gpurma_nvshmemi_check_rc(call,
                             gpurma_barrier_on_stream(gpurma_nvshmemi_gteam(call, team), stream));
}
