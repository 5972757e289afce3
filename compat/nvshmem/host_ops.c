/*
 * host_ops.c - the primitives host code reaches through the header: each
 * is one call of gpurma's host API on the heap's window, with the address
 * turned into a heap offset.
 */
#include "nvshmem_internal.h"

#define L (&gpurma_nvshmemi_lib)

GPURMA_API void gpurma_nvshmemi_put(const char *call, void *dst, const void *src, size_t bytes,
                                    int pe, int nbi)
{
    gpurma_nvshmemi_require_init(call);
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes);
    gpurma_nvshmemi_check_rc(call, gpurma_put(L->win, pe, off, src, bytes));
    if (!nbi) /* the source may be reused on return */
        gpurma_nvshmemi_check_rc(call, gpurma_flush_local(L->win, pe));
}

GPURMA_API void gpurma_nvshmemi_get(const char *call, void *dst, const void *src, size_t bytes,
                                    int pe, int nbi)
{
    gpurma_nvshmemi_require_init(call);
    size_t off = gpurma_nvshmemi_heap_offset(call, src, bytes);
    gpurma_nvshmemi_check_rc(call, gpurma_get(L->win, pe, dst, off, bytes));
    if (!nbi) /* the data is here on return */
        gpurma_nvshmemi_check_rc(call, gpurma_flush_local(L->win, pe));
}

GPURMA_API void gpurma_nvshmemi_put_value(const char *call, void *dst, uint64_t value,
                                          size_t bytes, int pe)
{
    gpurma_nvshmemi_require_init(call);
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes);
    gpurma_nvshmemi_check_rc(call, gpurma_put_value(L->win, pe, off, value, bytes));
}

GPURMA_API uint64_t gpurma_nvshmemi_amo64(const char *call, int kind, void *addr,
                                          uint64_t value, uint64_t compare, int pe)
{
    gpurma_nvshmemi_require_init(call);
    size_t off = gpurma_nvshmemi_heap_offset(call, addr, 8);
    uint64_t old = 0;
    gpurma_status_t rc;
    switch (kind) {
    case GPURMA_DEV__ATOMIC_FETCH_ADD:
        rc = gpurma_atomic_fetch_add(L->win, pe, off, value, &old);
        break;
    case GPURMA_DEV__ATOMIC_SWAP:
        rc = gpurma_atomic_swap(L->win, pe, off, value, &old);
        break;
    case GPURMA_DEV__ATOMIC_CAS:
        rc = gpurma_atomic_compare_swap(L->win, pe, off, compare, value, &old);
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
    gpurma_nvshmemi_check_rc(call, gpurma_flush_local(L->win, pe));
}

GPURMA_API void gpurma_nvshmemi_fence(const char *call)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_nvshmemi_check_rc(call, gpurma_fence(L->win));
}

GPURMA_API void gpurma_nvshmemi_quiet(const char *call)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_nvshmemi_check_rc(call, gpurma_quiet(L->win));
}

GPURMA_API void gpurma_nvshmemi_barrier(const char *call, nvshmem_team_t team, int quiet)
{
    gpurma_team_t t = gpurma_nvshmemi_gteam(call, team);
    if (quiet)
        gpurma_nvshmemi_check_rc(call, gpurma_quiet(L->win));
    gpurma_nvshmemi_check_rc(call, gpurma_barrier(t));
}

GPURMA_API void *gpurma_nvshmemi_ptr(const void *addr, int pe)
{
    if (L->status < NVSHMEM_STATUS_IS_INITIALIZED || pe < 0 || pe >= L->st.n_pes)
        return NULL;
    uintptr_t base = (uintptr_t)L->st.heap_base, a = (uintptr_t)addr;
    if (a < base || a - base >= L->st.heap_size || a - base < L->st.sync_bytes)
        return NULL;
    char *peer = gpurma_win_peer_ptr(L->win, pe);
    return peer ? peer + (a - base) : NULL;
}

/* ---------------------------------------------------------- on a stream */

GPURMA_API void gpurma_nvshmemi_put_on_stream(const char *call, void *dst, const void *src,
                                              size_t bytes, int pe, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes);
    gpurma_nvshmemi_check_rc(call, gpurma_put_on_stream(L->win, pe, off, src, bytes, stream));
}

GPURMA_API void gpurma_nvshmemi_get_on_stream(const char *call, void *dst, const void *src,
                                              size_t bytes, int pe, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    size_t off = gpurma_nvshmemi_heap_offset(call, src, bytes);
    gpurma_nvshmemi_check_rc(call, gpurma_get_on_stream(L->win, pe, dst, off, bytes, stream));
}

GPURMA_API void gpurma_nvshmemi_put_value_on_stream(const char *call, void *dst, uint64_t value,
                                                    size_t bytes, int pe, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    size_t off = gpurma_nvshmemi_heap_offset(call, dst, bytes);
    gpurma_nvshmemi_check_rc(call,
                             gpurma_put_value_on_stream(L->win, pe, off, value, bytes, stream));
}

GPURMA_API void gpurma_nvshmemi_quiet_on_stream(const char *call, void *stream)
{
    gpurma_nvshmemi_require_init(call);
    gpurma_nvshmemi_check_rc(call, gpurma_quiet_on_stream(L->win, stream));
}

GPURMA_API void gpurma_nvshmemi_barrier_on_stream(const char *call, nvshmem_team_t team,
                                                  void *stream)
{
    gpurma_nvshmemi_check_rc(call,
                             gpurma_barrier_on_stream(gpurma_nvshmemi_gteam(call, team), stream));
}
