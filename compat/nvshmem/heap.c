/*
 * heap.c - the symmetric heap's allocator, its growth, and buffers the
 * program registers as symmetric.
 *
 * nvshmem_malloc and friends are collective: every PE makes the same calls
 * in the same order, so a deterministic first-fit over the same block list
 * yields the same offset everywhere, and an address on one PE names the
 * same object on all. No metadata lives in the heap itself (it may be GPU
 * memory): the block list is host memory of each PE.
 *
 * When nothing fits, the heap grows as NVSHMEM's does (NVSHMEM_SYMMETRIC_SIZE
 * is where it starts, not a limit): a new window on the world team, a
 * segment (types.h) that kernels find by address. Growth happens on every
 * PE at the same call, since the block lists agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "gpurma_coll.h"
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

/* The largest power of two modulo which every PE's base is the same
 * (collective over the world team, as every caller is): an object at an
 * offset aligned to at most that in bases aligned the same way is aligned
 * on every PE. Page-aligned shared memory gives 4 KiB at least, cudaMalloc's
 * large allocations 2 MiB; the minimum alignment if the exchange fails. */
static size_t shared_alignment(const char *base)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    uint64_t mine = (uint64_t)(uintptr_t)base, differ = 0;
    uint64_t *all = calloc((size_t)L->st.n_pes, sizeof *all);
    if (!all || gpurma_allgather(L->teams[NVSHMEM_TEAM_WORLD], &mine, all, 1, GPURMA_UINT64,
                                 NULL) != GPURMA_SUCCESS) {
        free(all);
        return GPURMA_NVSHMEMI_MIN_ALIGN;
    }
    for (int i = 0; i < L->st.n_pes; i++)
        differ |= all[i] ^ mine;
    free(all);
    /* the lowest bit in which some base differs from the others */
    return differ ? (size_t)(differ & -differ) : (SIZE_MAX >> 1) + 1;
}

int gpurma_nvshmemi_heap_setup(size_t user_bytes)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    memset(L->seg_align, 0, sizeof L->seg_align);
    L->seg_align[0] = shared_alignment(L->st.heap_base);
    L->nblocks = 0;
    if (blocks_reserve(1))
        return -1;
    L->blocks[0] = (gpurma_nvshmemi_block_t){L->st.sync_bytes, user_bytes, 0, 0};
    L->nblocks = 1;
    L->st.nsegments = 0;
    memset(L->st.segments, 0, sizeof L->st.segments);
    memset(L->seg_wins, 0, sizeof L->seg_wins);
    memset(L->seg_registered, 0, sizeof L->seg_registered);
    return 0;
}

void gpurma_nvshmemi_heap_teardown(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    for (int k = 0; k < GPURMA_NVSHMEMI_MAX_SEGMENTS; k++)
        if (L->seg_wins[k])
            gpurma_nvshmemi_check_rc("nvshmem_finalize", gpurma_win_free(&L->seg_wins[k]));
    L->st.nsegments = 0;
    memset(L->st.segments, 0, sizeof L->st.segments);
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
    L->blocks[i + 1] = (gpurma_nvshmemi_block_t){off, b->off + b->size - off, b->seg, b->used};
    b->size = off - b->off;
    L->nblocks++;
    return 0;
}

/* Where an object aligned to align may start in block b: the first offset
 * whose address is a multiple of align, the same on every PE as long as
 * the PEs' bases agree modulo align (seg_align); -1 where they do not. */
static int block_start(gpurma_nvshmemi_block_t b, size_t align, size_t *start)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (align > L->seg_align[b.seg])
        return -1;
    uintptr_t base = (uintptr_t)(b.seg ? L->st.segments[b.seg - 1].base : L->st.heap_base);
    size_t at;
    if (gpurma_size_add((size_t)base, b.off, &at) || gpurma_size_round_up(at, align, &at))
        return -1;
    *start = at - (size_t)base;
    return 0;
}

/* First fit of size bytes at a multiple of align; the offset in segment
 * *seg, or SIZE_MAX when nothing fits. */
static size_t heap_alloc(size_t align, size_t size, int *seg)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    size_t need;
    if (gpurma_size_round_up(size ? size : 1, GPURMA_NVSHMEMI_MIN_ALIGN, &need))
        return SIZE_MAX;
    for (size_t i = 0; i < L->nblocks; i++) {
        gpurma_nvshmemi_block_t b = L->blocks[i];
        size_t start, end;
        if (b.used || block_start(b, align, &start) ||
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
        *seg = L->blocks[i].seg;
        return start;
    }
    return SIZE_MAX;
}

/* Frees the block at off of segment seg and merges it with free
 * neighbours of the same segment; -1 when no block in use starts there. */
static int heap_free(int seg, size_t off)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    size_t i = 0;
    while (i < L->nblocks &&
           !(L->blocks[i].seg == seg && L->blocks[i].off == off && L->blocks[i].used))
        i++;
    if (i == L->nblocks)
        return -1;
    L->blocks[i].used = 0;
    if (i + 1 < L->nblocks && !L->blocks[i + 1].used && L->blocks[i + 1].seg == seg) {
        L->blocks[i].size += L->blocks[i + 1].size;
        memmove(&L->blocks[i + 1], &L->blocks[i + 2], (L->nblocks - i - 2) * sizeof *L->blocks);
        L->nblocks--;
    }
    if (i > 0 && !L->blocks[i - 1].used && L->blocks[i - 1].seg == seg) {
        L->blocks[i - 1].size += L->blocks[i].size;
        memmove(&L->blocks[i], &L->blocks[i + 1], (L->nblocks - i - 1) * sizeof *L->blocks);
        L->nblocks--;
    }
    return 0;
}

/* A free segment slot, or -1. */
static int free_segment_slot(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    for (int k = 0; k < GPURMA_NVSHMEMI_MAX_SEGMENTS; k++)
        if (!L->seg_wins[k])
            return k;
    return -1;
}

/* Puts window win (this PE's part at base, size bytes) into segment slot k
 * and tells every unit (lib.lock held). */
static gpurma_status_t publish_segment(int k, gpurma_win_t win, void *base, size_t size)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_nvshmemi_segment_t seg = {(char *)base, size, {0}};
    gpurma_status_t rc = gpurma_win_device(win, &seg.win);
    if (rc != GPURMA_SUCCESS)
        return rc;
    L->seg_wins[k] = win;
    L->st.segments[k] = seg;
    if ((uint32_t)k >= L->st.nsegments)
        L->st.nsegments = (uint32_t)k + 1;
    gpurma_nvshmemi_push_state();
    return GPURMA_SUCCESS;
}

/* Bytes of a new segment for an object of need bytes aligned to align: at
 * least a quarter of what the heap holds so far (so that a program of many
 * small objects makes few segments), in 2 MiB units. SIZE_MAX on overflow. */
static size_t growth_bytes(size_t need, size_t align)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    size_t total = L->st.heap_size, bytes;
    for (uint32_t k = 0; k < L->st.nsegments; k++)
        if (L->seg_wins[k] && !L->seg_registered[k] &&
            gpurma_size_add(total, L->st.segments[k].size, &total))
            return SIZE_MAX;
    if (gpurma_size_round_up(need ? need : 1, GPURMA_NVSHMEMI_MIN_ALIGN, &bytes) ||
        gpurma_size_add(bytes, align - GPURMA_NVSHMEMI_MIN_ALIGN, &bytes))
        return SIZE_MAX;
    if (bytes < total / 4)
        bytes = total / 4;
    return gpurma_size_round_up(bytes, (size_t)2 << 20, &bytes) ? SIZE_MAX : bytes;
}

/* A new segment for an object of size bytes (collective: every PE's
 * allocator fails at the same call). 0, or -1 when the size overflows, no
 * slot is left or the window could not be made: every PE alike (the block
 * lists agree, window creation is collective), and each says why on
 * stderr, since a program that goes on with the NULL fails far from here
 * (in a kernel, then in whatever CUDA call comes next). */
static int heap_grow(const char *call, size_t align, size_t size)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    size_t bytes = growth_bytes(size, align);
    int k = free_segment_slot();
    if (bytes == SIZE_MAX || k < 0) {
        fprintf(stderr, "gpurma NVSHMEM layer: PE %d: %s of %zu bytes returns NULL: %s\n",
                L->st.my_pe, call, size,
                k < 0 ? "the heap cannot grow further (15 segments in use)"
                      : "the size is past what the heap can hold");
        return -1;
    }
    /* A PE that stopped here alone would leave the others in the window's
     * collective creation: this one ends the job instead. */
    if (blocks_reserve(L->nblocks + 1))
        gpurma_nvshmemi_fail(call, GPURMA_ERR_NO_MEMORY, "out of host memory for the heap's "
                                                         "block list");
    gpurma_win_params_t p = {.field_mask = GPURMA_WIN_FIELD_MEM_KIND,
                             .mem_kind = L->st.heap_host ? GPURMA_MEM_HOST : GPURMA_MEM_DEVICE};
    void *base = NULL;
    gpurma_win_t win = NULL;
    gpurma_status_t wrc = gpurma_win_allocate(L->teams[NVSHMEM_TEAM_WORLD], bytes, &p, &base, &win);
    if (wrc != GPURMA_SUCCESS) {
        fprintf(stderr, "gpurma NVSHMEM layer: PE %d: %s of %zu bytes returns NULL: the heap "
                        "could not grow by %zu bytes (%s: %s)\n",
                L->st.my_pe, call, size, bytes, gpurma_strerror(wrc),
                gpurma_last_error_message(L->ctx));
        return -1;
    }
    size_t shared = shared_alignment(base);
    pthread_mutex_lock(&L->lock);
    L->seg_align[k + 1] = shared;
    gpurma_status_t rc = publish_segment(k, win, base, bytes);
    if (rc == GPURMA_SUCCESS) /* a segment's blocks stay together: it is never freed */
        L->blocks[L->nblocks++] = (gpurma_nvshmemi_block_t){0, bytes, k + 1, 0};
    pthread_mutex_unlock(&L->lock);
    if (rc != GPURMA_SUCCESS)
        gpurma_nvshmemi_fail_after(call, rc, "describing a new heap segment failed");
    return 0;
}

/* Allocation is collective: the barrier makes every PE's object exist
 * before any PE may access a peer's. NULL (on every PE alike) when neither
 * the heap nor a new segment has room; size 0 gives NULL too, as in
 * NVSHMEM. */
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
    int seg = 0;
    pthread_mutex_lock(&L->lock);
    size_t off = heap_alloc(align, size, &seg);
    pthread_mutex_unlock(&L->lock);
    if (off == SIZE_MAX && !heap_grow(call, align, size)) {
        pthread_mutex_lock(&L->lock);
        off = heap_alloc(align, size, &seg);
        pthread_mutex_unlock(&L->lock);
        if (off == SIZE_MAX) /* the new segment's bases differ below align */
            fprintf(stderr, "gpurma NVSHMEM layer: PE %d: %s of %zu bytes aligned to %zu returns "
                            "NULL: the PEs' heap windows are not placed alike modulo %zu (the "
                            "heap's are modulo %zu)\n",
                    L->st.my_pe, call, size, align, align, L->seg_align[0]);
    }
    gpurma_nvshmemi_check_rc(call, gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    if (off == SIZE_MAX)
        return NULL;
    return (seg ? L->st.segments[seg - 1].base : L->st.heap_base) + off;
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
        gpurma_win_t w;
        size_t off = gpurma_nvshmemi_heap_offset("nvshmem_calloc", p, bytes, &w);
        if (L->st.heap_host) {
            memset(p, 0, bytes);
        } else {
            static const char zeros[65536];
            for (size_t done = 0; done < bytes;) {
                size_t n = bytes - done < sizeof zeros ? bytes - done : sizeof zeros;
                gpurma_nvshmemi_check_rc("nvshmem_calloc",
                                         gpurma_put(w, L->st.my_pe, off + done, zeros, n));
                done += n;
            }
            gpurma_nvshmemi_check_rc("nvshmem_calloc", gpurma_quiet(w));
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
    gpurma_win_t w;
    size_t off = gpurma_nvshmemi_heap_offset("nvshmem_free", ptr, 0, &w);
    int seg = gpurma_nvshmemi_find_segment(ptr, &off);
    /* Nobody may still be accessing the object on any PE. */
    gpurma_nvshmemi_check_rc("nvshmem_free", gpurma_quiet(w));
    gpurma_nvshmemi_check_rc("nvshmem_free", gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    pthread_mutex_lock(&L->lock);
    int rc = heap_free(seg, off);
    pthread_mutex_unlock(&L->lock);
    if (rc)
        gpurma_nvshmemi_fail("nvshmem_free", GPURMA_ERR_INVALID_ARG,
                             "the pointer is not the start of a live allocation");
}

/* The program's own buffer becomes symmetric: a window over it on the
 * world team (collective, like NVSHMEM's), a segment kernels find by
 * address. The address to use is the buffer's own. GPU buffers must be
 * cudaMalloc memory (gpurma's windows share GPU memory by CUDA IPC, which
 * memory from cuMemCreate does not support: win_create refuses it, and
 * this call ends the job naming itself). */
GPURMA_API void *nvshmemx_buffer_register_symmetric(void *buf, size_t size, int flags)
{
    const char *call = "nvshmemx_buffer_register_symmetric";
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_nvshmemi_require_init(call);
    (void)flags; /* NVSHMEM defines none */
    if (!buf || !size)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG, "the buffer is NULL or empty");
    uintptr_t lo = (uintptr_t)buf, hi = lo + size;
    if (hi < lo)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG, "the buffer wraps the address space");
    int overlaps = (uintptr_t)L->st.heap_base < hi && lo < (uintptr_t)L->st.heap_base + L->st.heap_size;
    pthread_mutex_lock(&L->lock);
    for (int k = 0; k < GPURMA_NVSHMEMI_MAX_SEGMENTS; k++) {
        uintptr_t b = (uintptr_t)L->st.segments[k].base;
        if (L->seg_wins[k] && b < hi && lo < b + L->st.segments[k].size)
            overlaps = 1;
    }
    pthread_mutex_unlock(&L->lock);
    if (overlaps)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG,
                             "the buffer overlaps symmetric memory already");
    pthread_mutex_lock(&L->lock);
    int k = free_segment_slot();
    pthread_mutex_unlock(&L->lock);
    if (k < 0)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_NO_MEMORY,
                             "too many symmetric segments (heap growth and registered buffers "
                             "share 15 slots)");
    gpurma_win_t win = NULL;
    gpurma_nvshmemi_check_rc(call, gpurma_win_create(L->teams[NVSHMEM_TEAM_WORLD], buf, size,
                                                     NULL, &win));
    pthread_mutex_lock(&L->lock);
    gpurma_status_t rc = publish_segment(k, win, buf, size);
    if (rc == GPURMA_SUCCESS)
        L->seg_registered[k] = 1;
    pthread_mutex_unlock(&L->lock);
    gpurma_nvshmemi_check_rc(call, rc);
    gpurma_nvshmemi_check_rc(call, gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    return buf;
}

GPURMA_API int nvshmemx_buffer_unregister_symmetric(void *mapped, size_t size)
{
    const char *call = "nvshmemx_buffer_unregister_symmetric";
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_nvshmemi_require_init(call);
    int k = -1;
    pthread_mutex_lock(&L->lock);
    for (int i = 0; i < GPURMA_NVSHMEMI_MAX_SEGMENTS && k < 0; i++)
        if (L->seg_wins[i] && L->seg_registered[i] && L->st.segments[i].base == (char *)mapped &&
            L->st.segments[i].size == size)
            k = i;
    pthread_mutex_unlock(&L->lock);
    if (k < 0)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG,
                             "no buffer of this address and size is registered");
    /* Nobody may still be accessing it on any PE; then units forget it
     * before the window goes. */
    gpurma_nvshmemi_check_rc(call, gpurma_quiet(L->seg_wins[k]));
    gpurma_nvshmemi_check_rc(call, gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    pthread_mutex_lock(&L->lock);
    gpurma_win_t win = L->seg_wins[k];
    L->seg_wins[k] = NULL;
    L->seg_registered[k] = 0;
    memset(&L->st.segments[k], 0, sizeof L->st.segments[k]);
    gpurma_nvshmemi_push_state();
    pthread_mutex_unlock(&L->lock);
    gpurma_nvshmemi_check_rc(call, gpurma_win_free(&win));
    return 0;
}
