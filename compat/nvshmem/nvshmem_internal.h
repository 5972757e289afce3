/*
 * nvshmem_internal.h - the state of libgpurma_nvshmem: one gpurma context,
 * the symmetric heap (one window on the world team), the teams, and the
 * units whose state copies the library fills. Built on gpurma's public API
 * only (it links libgpurma like any program).
 */
#ifndef GPURMA_NVSHMEM_INTERNAL_H
#define GPURMA_NVSHMEM_INTERNAL_H

#include <pthread.h>

#include "gpurma.h"
#include "gpurma_device.h"
#include "gpurma/nvshmem/detail/host_api.h"

/* Default heap size when NVSHMEM_SYMMETRIC_SIZE is unset (NVSHMEM's). */
#define GPURMA_NVSHMEMI_DEFAULT_HEAP ((size_t)1 << 30)
/* Smallest alignment of nvshmem_malloc, so that every typed access and
 * 16-byte vector copy of the device API is aligned. */
#define GPURMA_NVSHMEMI_MIN_ALIGN 256

/* A block of the heap allocator: [off, off + size) of segment seg (0: the
 * heap, k: st.segments[k - 1]), free or in use. */
typedef struct {
    size_t off, size;
    int    seg;
    int    used;
} gpurma_nvshmemi_block_t;

typedef struct {
    pthread_mutex_t lock;
    int             status; /* NVSHMEM_STATUS_* */
    int             finalized; /* by nvshmem_finalize, so that a later call says so */
    gpurma_ctx_t    ctx;
    gpurma_win_t    win;
    /* The windows of st.segments (NULL: free slot), and which of them the
     * program registered (nvshmemx_buffer_register_symmetric) rather than
     * the allocator made. */
    gpurma_win_t    seg_wins[GPURMA_NVSHMEMI_MAX_SEGMENTS];
    int             seg_registered[GPURMA_NVSHMEMI_MAX_SEGMENTS];
    /* [0] the heap, [k + 1] segment k: the largest power of two modulo
     * which every PE's base is the same (heap.c: objects aligned to at most
     * that have one offset on every PE) */
    size_t          seg_align[GPURMA_NVSHMEMI_MAX_SEGMENTS + 1];
    /* gpurma teams behind the handles (NULL: free slot); world, node and
     * shared are slots 0-2 and owned by the context. */
    gpurma_team_t   teams[GPURMA_NVSHMEMI_MAX_TEAMS];
    /* The master copy of every unit's state. */
    gpurma_nvshmemi_state_t st;
    /* Registered units. */
    gpurma_nvshmemi_update_fn *units;
    size_t          nunits, units_cap;
    /* Heap blocks covering [sync_bytes, heap_size) of the heap and every
     * segment the allocator made: a segment's blocks together, by offset. */
    gpurma_nvshmemi_block_t *blocks;
    size_t          nblocks, blocks_cap;
} gpurma_nvshmemi_lib_t;

extern gpurma_nvshmemi_lib_t gpurma_nvshmemi_lib;

/* A gpurma call of the layer failed: ends the job with its message. */
__attribute__((noreturn)) void gpurma_nvshmemi_fail_after(const char *call, gpurma_status_t rc,
                                                          const char *why);
/* Ends the job (like gpurma_nvshmemi_fail) when the library is not initialized. */
void gpurma_nvshmemi_require_init(const char *call);
/* Ends the job naming call when rc is not GPURMA_SUCCESS. */
void gpurma_nvshmemi_check_rc(const char *call, gpurma_status_t rc);
/* Copies the master state to every unit (lib.lock held). */
void gpurma_nvshmemi_push_state(void);
/* Offset of [addr, addr + bytes) in the heap or a segment, whose window
 * goes to *win (when win is not NULL), or the call fails. */
size_t gpurma_nvshmemi_heap_offset(const char *call, const void *addr, size_t bytes,
                                   gpurma_win_t *win);
/* The segment (0: the heap) holding addr with its offset, or -1. */
int gpurma_nvshmemi_find_segment(const void *addr, size_t *off);
/* The gpurma team of a handle, or the call fails. */
gpurma_team_t gpurma_nvshmemi_gteam(const char *call, nvshmem_team_t team);
/* Fills the device view of team slot i from its gpurma team. */
void gpurma_nvshmemi_describe_team(int slot);

/* Builds team's stream-barrier window now (collective over the team). */
void gpurma_nvshmemi_prepare_stream_barrier(gpurma_team_t team);

/* heap.c */
int  gpurma_nvshmemi_heap_setup(size_t user_bytes);
/* Frees every segment's window (collective, at finalize). */
void gpurma_nvshmemi_heap_teardown(void);

#endif
