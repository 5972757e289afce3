/*
 * heap.c - the symmetric heap's allocator.
 *
 * nvshmem_malloc and friends are collective: every PE makes the same calls
 * in the same order, so a deterministic first-fit over the same block list
 * yields the same offset everywhere, and an address on one PE names the
 * same object on all. No metadata lives in the heap itself (it may be GPU
 * memory): the block list is host memory of each PE.
 */
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "nvshmem_internal.h"

static int blocks_reserve(size_t n)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (n <= L->blocks_cap)
        return 0;
    size_t cap = L->blocks_cap ? L->blocks_cap : 16, bytes;
    while (cap < n)
        if (gpurma_size_mul(cap, 2, &cap))
            return -1;
    if (gpurma_size_mul(cap, sizeof *L->blocks, &bytes))
        return -1;
    gpurma_nvshmemi_block_t *b = realloc(L->blocks, bytes);
    if (!b)
        return -1;
    L->blocks = b;
    L->blocks_cap = cap;
    return 0;
}

int gpurma_nvshmemi_heap_setup(size_t user_bytes)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    L->nblocks = 0;
    if (blocks_reserve(1))
        return -1;
    L->blocks[0] = (gpurma_nvshmemi_block_t){L->st.sync_bytes, user_bytes, 0};
    L->nblocks = 1;
    return 0;
}

void gpurma_nvshmemi_heap_teardown(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    free(L->blocks);
    L->blocks = NULL;
    L->nblocks = L->blocks_cap = 0;
}

/* Splits block i at off (inside it): i keeps [start, off), i + 1 gets the rest. */
static int split_block(size_t i, size_t off)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (blocks_reserve(L->nblocks + 1))
        return -1;
    memmove(&L->blocks[i + 2], &L->blocks[i + 1], (L->nblocks - i - 1) * sizeof *L->blocks);
    gpurma_nvshmemi_block_t *b = &L->blocks[i];
    L->blocks[i + 1] = (gpurma_nvshmemi_block_t){off, b->off + b->size - off, b->used};
    b->size = off - b->off;
    L->nblocks++;
    return 0;
}

/* First fit of size bytes at a multiple of align; the heap offset, or
 * SIZE_MAX when nothing fits. */
static size_t heap_alloc(size_t align, size_t size)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    size_t need;
    if (gpurma_size_round_up(size ? size : 1, GPURMA_NVSHMEMI_MIN_ALIGN, &need))
        return SIZE_MAX;
    for (size_t i = 0; i < L->nblocks; i++) {
        gpurma_nvshmemi_block_t b = L->blocks[i];
        size_t start, end;
        if (b.used || gpurma_size_round_up(b.off, align, &start) ||
            gpurma_size_add(start, need, &end) || end > b.off + b.size)
            continue;
        if (start > b.off) { /* the gap before stays free */
            if (split_block(i, start))
                return SIZE_MAX;
            i++;
        }
        if (end < L->blocks[i].off + L->blocks[i].size && split_block(i, end))
            return SIZE_MAX;
        L->blocks[i].used = 1;
        return start;
    }
    return SIZE_MAX;
}

/* Frees the block at off and merges it with free neighbours; -1 when no
 * block in use starts there. */
static int heap_free(size_t off)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    size_t i = 0;
    while (i < L->nblocks && !(L->blocks[i].off == off && L->blocks[i].used))
        i++;
    if (i == L->nblocks)
        return -1;
    L->blocks[i].used = 0;
    if (i + 1 < L->nblocks && !L->blocks[i + 1].used) {
        L->blocks[i].size += L->blocks[i + 1].size;
        memmove(&L->blocks[i + 1], &L->blocks[i + 2], (L->nblocks - i - 2) * sizeof *L->blocks);
        L->nblocks--;
    }
    if (i > 0 && !L->blocks[i - 1].used) {
        L->blocks[i - 1].size += L->blocks[i].size;
        memmove(&L->blocks[i], &L->blocks[i + 1], (L->nblocks - i - 1) * sizeof *L->blocks);
        L->nblocks--;
    }
    return 0;
}

/* Allocation is collective: the barrier makes every PE's object exist
 * before any PE may access a peer's. NULL (on every PE alike) when the
 * heap has no room; size 0 gives NULL too, as in NVSHMEM. */
static void *collective_alloc(const char *call, size_t align, size_t size)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_nvshmemi_require_init(call);
    if (!size)
        return NULL;
    if (!align || (align & (align - 1)))
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG,
                             "the alignment is not a power of two");
    if (align < GPURMA_NVSHMEMI_MIN_ALIGN)
        align = GPURMA_NVSHMEMI_MIN_ALIGN;
    pthread_mutex_lock(&L->lock);
    size_t off = heap_alloc(align, size);
    pthread_mutex_unlock(&L->lock);
    gpurma_nvshmemi_check_rc(call, gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    return off == SIZE_MAX ? NULL : L->st.heap_base + off;
}

GPURMA_API void *nvshmem_malloc(size_t size)
{
    return collective_alloc("nvshmem_malloc", GPURMA_NVSHMEMI_MIN_ALIGN, size);
}

GPURMA_API void *nvshmem_align(size_t alignment, size_t size)
{
    return collective_alloc("nvshmem_align", alignment, size);
}

GPURMA_API void *nvshmem_calloc(size_t count, size_t size)
{
    size_t bytes;
    if (gpurma_size_mul(count, size, &bytes))
        gpurma_nvshmemi_fail("nvshmem_calloc", GPURMA_ERR_INVALID_ARG,
                             "count * size overflows");
    void *p = collective_alloc("nvshmem_calloc", GPURMA_NVSHMEMI_MIN_ALIGN, bytes);
    if (p) {
        /* Zero this PE's copy through the window (the heap may be GPU
         * memory), then let nobody read a peer's copy before it is zero. */
        gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
        size_t off = (size_t)((char *)p - L->st.heap_base);
        if (L->st.heap_host) {
            memset(p, 0, bytes);
        } else {
            static const char zeros[65536];
            for (size_t done = 0; done < bytes;) {
                size_t n = bytes - done < sizeof zeros ? bytes - done : sizeof zeros;
                gpurma_nvshmemi_check_rc("nvshmem_calloc",
                                         gpurma_put(L->win, L->st.my_pe, off + done, zeros, n));
                done += n;
            }
            gpurma_nvshmemi_check_rc("nvshmem_calloc", gpurma_quiet(L->win));
        }
        gpurma_nvshmemi_check_rc("nvshmem_calloc", gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    }
    return p;
}

GPURMA_API void nvshmem_free(void *ptr)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_nvshmemi_require_init("nvshmem_free");
    if (!ptr)
        return;
    size_t off = gpurma_nvshmemi_heap_offset("nvshmem_free", ptr, 0);
    /* Nobody may still be accessing the object on any PE. */
    gpurma_nvshmemi_check_rc("nvshmem_free", gpurma_quiet(L->win));
    gpurma_nvshmemi_check_rc("nvshmem_free", gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    pthread_mutex_lock(&L->lock);
    int rc = heap_free(off);
    pthread_mutex_unlock(&L->lock);
    if (rc)
        gpurma_nvshmemi_fail("nvshmem_free", GPURMA_ERR_INVALID_ARG,
                             "the pointer is not the start of a live allocation");
}

/* Registering memory the program allocated itself as symmetric would make
 * it part of the heap's window; gpurma windows cannot grow, so this is a
 * documented gap: a run-time error naming the call. */
GPURMA_API void *nvshmemx_buffer_register_symmetric(void *buf, size_t size, int flags)
{
    (void)buf, (void)size, (void)flags;
    gpurma_nvshmemi_fail("nvshmemx_buffer_register_symmetric", GPURMA_ERR_UNSUPPORTED,
                         "not supported by gpurma's NVSHMEM layer (allocate with "
                         "nvshmem_malloc instead)");
}

GPURMA_API int nvshmemx_buffer_unregister_symmetric(void *mapped, size_t size)
{
    (void)mapped, (void)size;
    gpurma_nvshmemi_fail("nvshmemx_buffer_unregister_symmetric", GPURMA_ERR_UNSUPPORTED,
                         "not supported by gpurma's NVSHMEM layer");
}
