/*
 * prims.h - the few primitives every NVSHMEM call is built from, each with
 * one dispatch: in device code through gpurma's device API on the unit's
 * state; in host code through libgpurma_nvshmem's primitives (gpurma's host
 * API); in plain C on the host backend (heap in host memory) through the
 * same device API from the calling CPU thread, which is what lets the
 * NVSHMEM-style tests run without a GPU.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_PRIMS_H
#define GPURMA_NVSHMEM_DETAIL_PRIMS_H

#include "gpurma/nvshmem/detail/fast.h"

/* Whether this code reaches the heap through the device API: always in
 * device code, in plain C when the heap is host memory. */
#define GPURMA_NVSHMEMI_HAS_DEVPATH (GPURMA_NVSHMEMI_DEVICE_PASS || !GPURMA_DEV_GPU)

#if GPURMA_NVSHMEMI_CUDA
/* Never returns: every check of every call branches to one call here
 * instead of carrying printf's argument setup inline. */
GPURMA_NVSHMEMI_COLD void gpurma_nvshmemi__fail_device(const char *call, int status,
                                                       const char *why)
{
    printf("gpurma nvshmem: PE %d: %s: %s (gpurma status %d)\n", (int)gpurma_nvshmemi_st.my_pe,
           call, why, status);
    __trap();
}
#endif

GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__fail(const char *call, int status, const char *why)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi__fail_device(call, status, why);
    __builtin_unreachable();
#else
    gpurma_nvshmemi_fail(call, status, why);
#endif
}

/* A kernel that runs before nvshmem_init filled the state stops here. (Also
 * defined for the host pass of nvcc, which parses device functions.) */
GPURMA_NVSHMEMI_D int gpurma_nvshmemi__devpath(const char *call)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    if (gpurma_nvshmemi_st.magic != GPURMA_NVSHMEMI_STATE_LIVE)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_NOT_INITIALIZED,
                              "called in a kernel before nvshmem_init (or in a unit the "
                              "library has not filled)");
    return 1;
#elif !GPURMA_DEV_GPU
    (void)call;
    return gpurma_nvshmemi_st.magic == GPURMA_NVSHMEMI_STATE_LIVE && gpurma_nvshmemi_st.heap_host;
#else
    (void)call;
    return 0;
#endif
}

GPURMA_NVSHMEMI_D void gpurma_nvshmemi__check(const char *call, gpurma_status_t rc)
{
    if (rc != GPURMA_SUCCESS)
        gpurma_nvshmemi__fail(call, rc,
                              rc == GPURMA_ERR_OUT_OF_BOUNDS ? "outside the peer's heap"
                              : rc == GPURMA_ERR_INVALID_ARG ? "invalid PE or argument"
                              : rc == GPURMA_ERR_TIMEOUT     ? "timed out"
                                                             : "the operation failed");
}

/* The segment k + 1 of segments[k] that holds a, or -1 (out of line; it
 * returns no offset through memory, which would put the caller's on the
 * stack). A segment that holds a wins over one that ends at a: two
 * buffers registered side by side meet there, and the address is the
 * second's first byte. */
GPURMA_NVSHMEMI_COLD int gpurma_nvshmemi__find_segment(uintptr_t a)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    int ends_here = -1;
    for (uint32_t k = 0; k < s->nsegments && k < GPURMA_NVSHMEMI_MAX_SEGMENTS; k++) {
        uintptr_t base = (uintptr_t)s->segments[k].base;
        if (!base || a < base || a - base > s->segments[k].size)
            continue;
        if (a - base < s->segments[k].size)
            return (int)k + 1;
        if (ends_here < 0)
            ends_here = (int)k + 1;
    }
    return ends_here;
}
/* The segment (0: the heap; k: segments[k - 1]) whose memory holds addr,
 * with addr's offset in it, or -1. An address at a segment's end belongs
 * to it (a zero-byte access there is fine) unless another holds it. */
GPURMA_NVSHMEMI_D int gpurma_nvshmemi__find(const void *addr, size_t *off)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    uintptr_t a = (uintptr_t)addr, base = (uintptr_t)s->heap_base;
    if (a >= base && a - base < s->heap_size) {
        *off = (size_t)(a - base);
        return 0;
    }
    int k = gpurma_nvshmemi__find_segment(a); /* heaps that grew, registered buffers */
    size_t in_k = k > 0 ? (size_t)(a - (uintptr_t)s->segments[k - 1].base) : 0;
    if (a >= base && a - base == s->heap_size && (k < 0 || in_k == s->segments[k - 1].size)) {
        *off = (size_t)s->heap_size; /* the heap's end, inside no segment */
        return 0;
    }
    if (k > 0)
        *off = in_k;
    return k;
}

/* The device window of segment seg. */
GPURMA_NVSHMEMI_D const gpurma_dev_win_t *gpurma_nvshmemi__win(int seg)
{
    return seg > 0 ? &gpurma_nvshmemi_st.segments[seg - 1].win : &gpurma_nvshmemi_st.win;
}

/* Offset of [addr, addr + bytes) in its segment (*seg, when seg is not
 * NULL), which must hold all of it; in the heap, it must lie inside the
 * part nvshmem_malloc hands out: the layer's own words below it (barrier
 * counters, team handles) are no program's to write, and a put there would
 * let a barrier return early. */
GPURMA_NVSHMEMI_D size_t gpurma_nvshmemi__offset(const char *call, const void *addr,
                                                  size_t bytes, int *seg)
{
    size_t off = 0;
    int k = gpurma_nvshmemi__find(addr, &off);
    if (k < 0)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              "the address is not in the symmetric heap");
    uint64_t size = k ? gpurma_nvshmemi_st.segments[k - 1].size : gpurma_nvshmemi_st.heap_size;
    /* (the first test also tells the compiler that no copy after this
     * runs past the largest object, which it warns of otherwise) */
    if (bytes > (size_t)PTRDIFF_MAX || bytes > size - off)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              "the access runs past the end of the symmetric heap");
    if (!k && off < gpurma_nvshmemi_st.sync_bytes)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              "the address is below the first nvshmem_malloc (the layer's own "
                              "barrier and team words)");
    if (seg)
        *seg = k;
    return off;
}

/* Kinds of gpurma_nvshmemi__each. */
enum { GPURMA_NVSHMEMI_FLUSH_LOCAL, GPURMA_NVSHMEMI_FENCE, GPURMA_NVSHMEMI_QUIET };

/* One completion call on the heap's window and every live segment's (a
 * program with one heap, the usual case, makes one call); only where some
 * window has port peers, hence out of line. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__each(const char *call, int kind, int pe)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    for (uint32_t k = 0; k <= s->nsegments && k <= GPURMA_NVSHMEMI_MAX_SEGMENTS; k++) {
        if (k && !s->segments[k - 1].base)
            continue;
        const gpurma_dev_win_t *w = gpurma_nvshmemi__win((int)k);
        gpurma_status_t rc = kind == GPURMA_NVSHMEMI_FLUSH_LOCAL ? gpurma_dev_flush_local(*w, pe)
                             : kind == GPURMA_NVSHMEMI_FENCE   ? gpurma_dev_fence(*w)
                                                               : gpurma_dev_quiet(*w);
        gpurma_nvshmemi__check(call, rc);
    }
}
GPURMA_NVSHMEMI_COLD void gpurma_nvshmemi__each_cold(const char *call, int kind, int pe)
{
    gpurma_nvshmemi__each(call, kind, pe);
}

/* A blocking operation's completion: local (the source may be reused, a
 * get's data is here), which is all NVSHMEM's blocking calls promise. */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__flush(const char *call, int pe)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (gpurma_nvshmemi__devpath(call)) {
        if (gpurma_nvshmemi_st.any_port) /* else every operation completed in place */
            gpurma_nvshmemi__each_cold(call, GPURMA_NVSHMEMI_FLUSH_LOCAL, pe);
        return;
    }
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_flush(call, pe);
#endif
}

/* A copy between this PE's memory and a mapped PE's (to, from: one of each),
 * shared by a group of nthreads; the local side must not be NULL (the
 * symmetric side passed the heap check). Load/store: the bytes are where
 * they go once the copy returns, so nothing is left to flush. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__copy_direct(const char *call, void *to,
                                                    const void *from, size_t bytes,
                                                    unsigned tid, unsigned nthreads)
{
    if (bytes && (!to || !from))
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "the local buffer is NULL");
    gpurma_sh_copy(to, from, bytes, tid, nthreads);
}

#if GPURMA_NVSHMEMI_HAS_DEVPATH
/* The general path of put where the device API reaches the heap (heap
 * segments, PEs on the port engine, errors): 1 once done, 0 where it does
 * not (plain C beside a GPU heap). Out of line, as the other _dev paths. */
/* Its body, inline in other general paths: a call from code already out
 * of line costs registers the kernel must hold too. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__put_body(const char *call, void *dst, const void *src,
                                                 size_t bytes, int pe, int nbi)
{
    int seg;
    size_t off = gpurma_nvshmemi__offset(call, dst, bytes, &seg);
    char *d = gpurma_nvshmemi__direct(seg, pe, off, bytes);
    if (d) {
        gpurma_nvshmemi__copy_direct(call, d, src, bytes, 0, 1);
        return;
    }
    gpurma_nvshmemi__check(call, gpurma_dev_put(*gpurma_nvshmemi__win(seg), pe, off, src, bytes));
    if (!nbi && gpurma_nvshmemi_st.any_port)
        gpurma_nvshmemi__each(call, GPURMA_NVSHMEMI_FLUSH_LOCAL, pe);
}
GPURMA_NVSHMEMI_COLD int gpurma_nvshmemi__put_dev(const char *call, void *dst, const void *src,
                                                  size_t bytes, int pe, int nbi)
{
    if (!gpurma_nvshmemi__devpath(call))
        return 0;
    gpurma_nvshmemi__put_body(call, dst, src, bytes, pe, nbi);
    return 1;
}
#endif

/* nbi 0: the source may be reused on return. */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__put(const char *call, void *dst, const void *src,
                                             size_t bytes, int pe, int nbi)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    char *fast = gpurma_nvshmemi__heap_peer(dst, bytes, pe);
    if (fast && (src || !bytes)) { /* stores, complete (source reusable) once issued */
        gpurma_nvshmemi__copy(fast, src, bytes, 0, 1, 1);
        return;
    }
    if (gpurma_nvshmemi__put_dev(call, dst, src, bytes, pe, nbi))
        return;
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_put(call, dst, src, bytes, pe, nbi);
#endif
}

#if GPURMA_NVSHMEMI_HAS_DEVPATH
/* A get from a PE that is not mapped here. */
GPURMA_NVSHMEMI_COLD void gpurma_nvshmemi__get_slow(const char *call, void *dst, int seg,
                                                    size_t off, size_t bytes, int pe, int nbi)
{
    gpurma_nvshmemi__check(call, gpurma_dev_get(*gpurma_nvshmemi__win(seg), pe, dst, off, bytes));
    if (!nbi)
        gpurma_nvshmemi__flush(call, pe);
}
#endif

/* A read of a mapped PE's bytes: g and other aligned single words one
 * load, more a copy. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__get_mapped(void *dst, const char *from, size_t bytes)
{
    if ((bytes == 8 || bytes == 4 || bytes == 2 || bytes == 1) &&
        !(((uintptr_t)from | (uintptr_t)dst) & (bytes - 1))) {
        if (bytes == 8)
            *(uint64_t *)dst = *(const volatile uint64_t *)from;
        else if (bytes == 4)
            *(uint32_t *)dst = *(const volatile uint32_t *)from;
        else if (bytes == 2)
            *(uint16_t *)dst = *(const volatile uint16_t *)from;
        else
            *(uint8_t *)dst = *(const volatile uint8_t *)from;
        return;
    }
    gpurma_nvshmemi__copy(dst, from, bytes, 0, 1, 1);
}

#if GPURMA_NVSHMEMI_HAS_DEVPATH
GPURMA_NVSHMEMI_COLD int gpurma_nvshmemi__get_dev(const char *call, void *dst, const void *src,
                                                  size_t bytes, int pe, int nbi)
{
    if (!gpurma_nvshmemi__devpath(call))
        return 0;
    int seg;
    size_t off = gpurma_nvshmemi__offset(call, src, bytes, &seg);
    const char *from = gpurma_nvshmemi__direct(seg, pe, off, bytes);
    if (from) {
        if (bytes && !dst)
            gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "the local buffer is NULL");
        gpurma_nvshmemi__get_mapped(dst, from, bytes);
        return 1;
    }
    gpurma_nvshmemi__get_slow(call, dst, seg, off, bytes, pe, nbi);
    return 1;
}
#endif

GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__get(const char *call, void *dst, const void *src,
                                             size_t bytes, int pe, int nbi)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    const char *fast = gpurma_nvshmemi__heap_peer(src, bytes, pe);
    if (fast && (dst || !bytes)) {
        gpurma_nvshmemi__get_mapped(dst, fast, bytes);
        return;
    }
    if (gpurma_nvshmemi__get_dev(call, dst, src, bytes, pe, nbi))
        return;
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_get(call, dst, src, bytes, pe, nbi);
#endif
}

/* p's store of 1, 2, 4 or 8 bytes at an aligned mapped address. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__store_word(char *d, uint64_t value, size_t bytes)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    /* One plain store, as NVSHMEM's p: p promises nothing until a fence,
     * quiet or signal (each an asm the compiler does not move stores
     * across), and a volatile one would be a strong system-scope store,
     * ordered with every other volatile access of the thread, which p does
     * not need. */
    if (bytes == 8)
        *(uint64_t *)d = value;
    else if (bytes == 4)
        *(uint32_t *)d = (uint32_t)value;
    else if (bytes == 2)
        *(uint16_t *)d = (uint16_t)value;
    else
        *(uint8_t *)d = (uint8_t)value;
#else
    /* The host backend's C compilers: volatile, so that a store a peer
     * process polls for is not kept in a register. */
    if (bytes == 8)
        *(volatile uint64_t *)d = value;
    else if (bytes == 4)
        *(volatile uint32_t *)d = (uint32_t)value;
    else if (bytes == 2)
        *(volatile uint16_t *)d = (uint16_t)value;
    else
        *(volatile uint8_t *)d = (uint8_t)value;
#endif
}

#if GPURMA_NVSHMEMI_HAS_DEVPATH
/* p to a heap segment, a PE not mapped here, an unaligned address. */
GPURMA_NVSHMEMI_COLD int gpurma_nvshmemi__put_value_dev(const char *call, void *dst,
                                                        uint64_t value, size_t bytes, int pe)
{
    if (!gpurma_nvshmemi__devpath(call))
        return 0;
    int seg;
    size_t off = gpurma_nvshmemi__offset(call, dst, bytes, &seg);
    char *d = gpurma_nvshmemi__direct(seg, pe, off, bytes);
    if (d && !(off & (bytes - 1)))
        gpurma_nvshmemi__store_word(d, value, bytes);
    else
        gpurma_nvshmemi__check(call, gpurma_dev_put_value(*gpurma_nvshmemi__win(seg), pe, off,
                                                          value, bytes));
    return 1;
}
#endif

/* One store of 1, 2, 4 or 8 bytes (the low bytes of value). */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__put_value(const char *call, void *dst, uint64_t value,
                                                   size_t bytes, int pe)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    char *fast = gpurma_nvshmemi__heap_peer(dst, bytes, pe);
    if (fast && !((uintptr_t)dst & (bytes - 1))) {
        gpurma_nvshmemi__store_word(fast, value, bytes);
        return;
    }
    if (gpurma_nvshmemi__put_value_dev(call, dst, value, bytes, pe))
        return;
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_put_value(call, dst, value, bytes, pe);
#endif
}

/* A 64-bit atomic (kind: GPURMA_DEV__ATOMIC_*) on an aligned symmetric word.
 * fetch 0 (add, inc, set, signals): the old value is not asked for, so a PE
 * on the port engine gets a descriptor that waits for no reply (returns 0);
 * quiet completes it, as NVSHMEM's memory model has it. */
GPURMA_NVSHMEMI_HD uint64_t gpurma_nvshmemi__amo64(const char *call, int kind, void *addr,
                                                   uint64_t value, uint64_t compare, int pe,
                                                   int fetch)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (gpurma_nvshmemi__devpath(call)) {
        int seg;
        size_t off = gpurma_nvshmemi__offset(call, addr, 8, &seg);
        uint64_t old = 0, *want = fetch ? &old : (uint64_t *)0;
        gpurma_dev_win_t w = *gpurma_nvshmemi__win(seg);
        gpurma_status_t rc;
        if (kind == GPURMA_DEV__ATOMIC_CAS)
            rc = gpurma_dev_atomic_compare_swap(w, pe, off, compare, value, want);
        else if (kind == GPURMA_DEV__ATOMIC_SWAP)
            rc = gpurma_dev_atomic_swap(w, pe, off, value, want);
        else
            rc = gpurma_dev_atomic_fetch_add(w, pe, off, value, want);
        gpurma_nvshmemi__check(call, rc);
        return old;
    }
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    return gpurma_nvshmemi_amo64(call, fetch ? kind : kind | GPURMA_NVSHMEMI_AMO_NO_FETCH, addr,
                                 value, compare, pe);
#else
    return 0;
#endif
}

/* fence and quiet without port peers: everything was load/store, and one
 * system-scope fence orders and completes it, as gpurma_dev_fence and
 * gpurma_dev_quiet do for each window (the port engine's part is all they
 * add). */
#if GPURMA_NVSHMEMI_HAS_DEVPATH
/* fence where the device API reaches the heap, inline in general paths. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__fence_body(const char *call)
{
    if (gpurma_nvshmemi_st.any_port)
        gpurma_nvshmemi__each(call, GPURMA_NVSHMEMI_FENCE, 0);
    else
        gpurma_sh_fence_system();
}
#endif

GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__fence(const char *call)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (gpurma_nvshmemi__devpath(call)) {
        if (gpurma_nvshmemi_st.any_port)
            gpurma_nvshmemi__each(call, GPURMA_NVSHMEMI_FENCE, 0);
        else
            gpurma_sh_fence_system();
        return;
    }
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_fence(call);
#endif
}

GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__quiet(const char *call)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (gpurma_nvshmemi__devpath(call)) {
        if (gpurma_nvshmemi_st.any_port)
            gpurma_nvshmemi__each(call, GPURMA_NVSHMEMI_QUIET, 0);
        else
            gpurma_sh_fence_system();
        return;
    }
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_quiet(call);
#endif
}

/* Address of a peer's copy of addr when this processor can load and store
 * it, else NULL. */
GPURMA_NVSHMEMI_HD void *gpurma_nvshmemi__ptr(const void *addr, int pe)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (gpurma_nvshmemi__devpath("nvshmem_ptr")) {
        size_t off = 0;
        int seg = gpurma_nvshmemi__find(addr, &off);
        const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
        if (seg < 0 || (!seg && (off < s->sync_bytes || off >= s->heap_size)) ||
            (seg && off >= s->segments[seg - 1].size))
            return NULL;
        if (pe == s->my_pe) /* this PE's own copy, however its window reaches it */
            return (void *)addr;
        return gpurma_nvshmemi__direct(seg, pe, off, 1);
    }
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    return gpurma_nvshmemi_ptr(addr, pe);
#else
    return NULL;
#endif
}

/* ------------------------------------------------ element-count helpers */

/* nelems * esize, or the call fails (a count whose bytes overflow). */
GPURMA_NVSHMEMI_HD size_t gpurma_nvshmemi__bytes(const char *call, size_t nelems, size_t esize)
{
    if (esize && nelems > SIZE_MAX / esize)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "the element count overflows");
    return nelems * esize;
}

/* A strided access of nelems elements of esize bytes, stride elements
 * apart, must not wrap the address space: |stride| * esize * (nelems - 1)
 * fits in a ptrdiff_t (and, for the symmetric side, in the largest
 * segment, which the per-element check then confirms element by element). */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__stride_span(const char *call, ptrdiff_t stride,
                                                     size_t nelems, size_t esize, int symmetric)
{
    if (nelems < 2)
        return;
    uint64_t mag = stride < 0 ? (uint64_t)0 - (uint64_t)stride : (uint64_t)stride;
#if GPURMA_NVSHMEMI_CUDA && !GPURMA_NVSHMEMI_DEVICE_PASS
    /* Host code of a CUDA unit has no copy of the state: no wrap, and the
     * library checks each element against the heap. */
    uint64_t limit = (uint64_t)PTRDIFF_MAX;
    (void)symmetric;
#else
    uint64_t limit = symmetric ? gpurma_nvshmemi_st.heap_size : (uint64_t)PTRDIFF_MAX;
    for (uint32_t k = 0; symmetric && k < gpurma_nvshmemi_st.nsegments &&
                         k < GPURMA_NVSHMEMI_MAX_SEGMENTS; k++)
        if (gpurma_nvshmemi_st.segments[k].size > limit)
            limit = gpurma_nvshmemi_st.segments[k].size; /* the largest one */
#endif
    if (mag && (esize > limit / mag || (uint64_t)(nelems - 1) > limit / (mag * esize)))
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              symmetric ? "the stride runs past the symmetric heap"
                                        : "the stride wraps the address space");
}

/* Strided: element i goes from source + i * sst to dest + i * dst (strides
 * in elements); one store per element. */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__iput(const char *call, void *dest, const void *source,
                                              ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                              size_t esize, int pe)
{
    gpurma_nvshmemi__stride_span(call, dst, nelems, esize, 1);
    gpurma_nvshmemi__stride_span(call, sst, nelems, esize, 0);
    for (size_t i = 0; i < nelems; i++) {
        char *d = (char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)esize;
        const char *s = (const char *)source + (ptrdiff_t)i * sst * (ptrdiff_t)esize;
        if (esize <= 8) {
            uint64_t bits = 0;
            memcpy(&bits, s, esize);
            gpurma_nvshmemi__put_value(call, d, bits, esize, pe);
        } else {
            gpurma_nvshmemi__put(call, d, s, esize, pe, 1);
        }
    }
    gpurma_nvshmemi__flush(call, pe);
}

GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__iget(const char *call, void *dest, const void *source,
                                              ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                              size_t esize, int pe)
{
    gpurma_nvshmemi__stride_span(call, sst, nelems, esize, 1);
    gpurma_nvshmemi__stride_span(call, dst, nelems, esize, 0);
    for (size_t i = 0; i < nelems; i++)
        gpurma_nvshmemi__get(call, (char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)esize,
                             (const char *)source + (ptrdiff_t)i * sst * (ptrdiff_t)esize, esize,
                             pe, 1);
    gpurma_nvshmemi__flush(call, pe);
}

/* ------------------------------------------------------ warp and block */

enum { GPURMA_NVSHMEMI_WARP = 1, GPURMA_NVSHMEMI_BLOCK = 2 };

/* Group barriers around one thread's work. */
GPURMA_NVSHMEMI_D int gpurma_nvshmemi__group_leader(int scope)
{
#if GPURMA_NVSHMEMI_CUDA
    return scope == GPURMA_NVSHMEMI_WARP ? gpurma_sh_lane() == 0 : gpurma_sh_block_tid() == 0;
#else
    (void)scope;
    return 1;
#endif
}
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__group_sync(int scope)
{
#if GPURMA_NVSHMEMI_CUDA
    if (scope == GPURMA_NVSHMEMI_WARP)
        gpurma_sh_sync_warp();
    else
        gpurma_sh_sync_block();
#else
    (void)scope;
#endif
}

#if GPURMA_NVSHMEMI_CUDA
/* The general path of the group forms: heap segments, PEs on the port
 * engine, errors. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__rma_group_body(const char *call, int is_get, void *dest,
                                                        const void *source, size_t bytes,
                                                        int pe, int nbi, int scope,
                                                        unsigned tid, unsigned nthreads)
{
    gpurma_nvshmemi__devpath(call);
    int seg;
    size_t off = gpurma_nvshmemi__offset(call, is_get ? source : dest, bytes, &seg);
    char *peer = gpurma_nvshmemi__direct(seg, pe, off, bytes);
    if (peer) {
        gpurma_nvshmemi__copy_direct(call, is_get ? dest : peer,
                                     is_get ? (const void *)peer : source, bytes, tid, nthreads);
        gpurma_nvshmemi__group_sync(scope);
        return;
    }
    gpurma_dev_win_t w = *gpurma_nvshmemi__win(seg);
    gpurma_status_t rc;
    if (is_get)
        rc = scope == GPURMA_NVSHMEMI_WARP ? gpurma_dev_get_warp(w, pe, dest, off, bytes)
                                           : gpurma_dev_get_block(w, pe, dest, off, bytes);
    else
        rc = scope == GPURMA_NVSHMEMI_WARP ? gpurma_dev_put_warp(w, pe, off, source, bytes)
                                           : gpurma_dev_put_block(w, pe, off, source, bytes);
    gpurma_nvshmemi__check(call, rc);
    if (!nbi && gpurma_nvshmemi_st.any_port)
        gpurma_nvshmemi__each(call, GPURMA_NVSHMEMI_FLUSH_LOCAL, pe);
}
GPURMA_NVSHMEMI_COLD void gpurma_nvshmemi__rma_group_dev(const char *call, int is_get, void *dest,
                                                         const void *source, size_t bytes,
                                                         int pe, int nbi, int scope,
                                                         unsigned tid, unsigned nthreads)
{
    gpurma_nvshmemi__rma_group_body(call, is_get, dest, source, bytes, pe, nbi, scope, tid,
                                    nthreads);
}
#endif

/* The group shares the copy; on the host backend a group is the calling
 * thread. get: dest is complete for the whole group on return. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__rma_group(const char *call, int is_get, void *dest,
                                                  const void *source, size_t bytes, int pe,
                                                  int nbi, int scope)
{
#if GPURMA_NVSHMEMI_CUDA
    /* A mapped PE: the group copies straight to or from its address (no
     * channel to build, and no flush: load/store completes in place), then
     * meets, so that a get's dest is complete for all of it on return. */
    unsigned tid = scope == GPURMA_NVSHMEMI_WARP ? gpurma_sh_lane() : gpurma_sh_block_tid();
    unsigned nthreads = scope == GPURMA_NVSHMEMI_WARP ? 32u : gpurma_sh_block_threads();
    char *fast = gpurma_nvshmemi__heap_peer(is_get ? source : dest, bytes, pe);
    if (fast && ((is_get ? dest : source) || !bytes)) {
        gpurma_nvshmemi__copy(is_get ? dest : fast, is_get ? (const void *)fast : source, bytes,
                              tid, nthreads, scope == GPURMA_NVSHMEMI_WARP);
        gpurma_nvshmemi__group_sync(scope);
        return;
    }
    gpurma_nvshmemi__rma_group_dev(call, is_get, dest, source, bytes, pe, nbi, scope, tid,
                                   nthreads);
#else
    (void)scope;
    if (is_get)
        gpurma_nvshmemi__get(call, dest, source, bytes, pe, nbi);
    else
        gpurma_nvshmemi__put(call, dest, source, bytes, pe, nbi);
#endif
}


#endif
