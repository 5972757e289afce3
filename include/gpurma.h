/*
 * gpurma.h - public host API of gpurma, a one-sided RMA library for GPUs.
 *
 * Plain C, usable from C++. Every call that can fail returns a gpurma_status_t:
 * GPURMA_SUCCESS (0) or a negative code; gpurma_last_error_message() then holds
 * the detailed text (rank, peer, offset, size). The library never exits.
 *
 * Errors: the message is per thread and belongs to the last call that
 * returned a status other than GPURMA_SUCCESS (read it right after that
 * call; a later status call may replace it even when it succeeds, as some
 * retry internally). Queries, the calls that return a value instead of a
 * status (gpurma_rank, gpurma_size, gpurma_team_rank, gpurma_win_size,
 * gpurma_win_base, ...), never touch it: they report a bad handle or
 * argument by their documented value (-1, 0, NULL, GPURMA_ENGINE_NONE),
 * so a program may call them between a failed call and printing its
 * message. Where that value is also a legal result (gpurma_win_size 0,
 * gpurma_win_base NULL) use the _checked form, which returns a status and
 * sets the message.
 *
 * Peers are ranks of the team a window was created over. Offsets are in bytes
 * from the start of the target's window.
 */
#ifndef GPURMA_H
#define GPURMA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GPURMA_API __attribute__((visibility("default")))
#else
#define GPURMA_API
#endif

#define GPURMA_VERSION_MAJOR 0
#define GPURMA_VERSION_MINOR 1
#define GPURMA_VERSION_PATCH 0
/* The API version the caller was compiled against; gpurma_init() passes it. */
#define GPURMA_API_VERSION ((GPURMA_VERSION_MAJOR << 16) | GPURMA_VERSION_MINOR)

typedef enum {
    GPURMA_SUCCESS             = 0,
    GPURMA_ERR_INVALID_ARG     = -1,
    GPURMA_ERR_OUT_OF_BOUNDS   = -2,
    GPURMA_ERR_NO_MEMORY       = -3,
    GPURMA_ERR_UNSUPPORTED     = -4,
    GPURMA_ERR_TIMEOUT         = -5,
    GPURMA_ERR_PEER_FAILED     = -6,
    GPURMA_ERR_BOOTSTRAP       = -7,
    GPURMA_ERR_TRANSPORT       = -8,
    GPURMA_ERR_GPU             = -9,
    GPURMA_ERR_NOT_INITIALIZED = -10,
    GPURMA_ERR_AGAIN           = -11,
    GPURMA_ERR_INTERNAL        = -12,
    GPURMA_ERR_FREED           = -13, /* handle of a freed window or team */
    GPURMA_ERR_MISALIGNED      = -14
} gpurma_status_t;

typedef struct gpurma_ctx_s  *gpurma_ctx_t;
typedef struct gpurma_team_s *gpurma_team_t;
typedef struct gpurma_win_s  *gpurma_win_t;

/* ---------------------------------------------------------------- setup */

#define GPURMA_DEVICE_AUTO (-1) /* node-local rank modulo the number of GPUs */
#define GPURMA_DEVICE_HOST (-2) /* host backend: windows in host memory      */

enum {
    GPURMA_INIT_FIELD_BOOTSTRAP  = 1u << 0,
    GPURMA_INIT_FIELD_MPI_COMM   = 1u << 1,
    GPURMA_INIT_FIELD_DEVICE     = 1u << 2,
    GPURMA_INIT_FIELD_TIMEOUT_MS = 1u << 3,
    GPURMA_INIT_FIELD_UNIQUE_ID  = 1u << 4  /* unique_id, rank, size */
};

/* Names one job for the uid bootstrap without a launch environment: one
 * process makes it (gpurma_get_unique_id, on the host of the job's rank 0),
 * hands it to the others by any means, and each passes it to init with its
 * rank and the job's size. A process may join several such jobs. */
#define GPURMA_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[GPURMA_UNIQUE_ID_BYTES];
} gpurma_unique_id_t;

typedef struct {
    uint64_t    field_mask; /* GPURMA_INIT_FIELD_* that are set            */
    const char *bootstrap;  /* "pmix" "uid" "mpi" "single"; NULL = auto     */
    void       *mpi_comm;   /* pointer to an MPI_Comm, for bootstrap "mpi"  */
    int         device;     /* GPU ordinal, GPURMA_DEVICE_AUTO or _HOST     */
    int64_t     timeout_ms; /* waits, barriers, bootstrap; overrides env    */
    const gpurma_unique_id_t *unique_id; /* with rank and size: the job  */
    int         rank, size;
} gpurma_init_params_t;

/* p may be NULL for defaults. Collective over the job. */
GPURMA_API gpurma_status_t gpurma_init_version(unsigned api_version,
                                               const gpurma_init_params_t *p,
                                               gpurma_ctx_t *ctx);
#define gpurma_init(p, ctx) gpurma_init_version(GPURMA_API_VERSION, (p), (ctx))
GPURMA_API gpurma_status_t gpurma_finalize(gpurma_ctx_t ctx);
/* Rank 0 of the job listens on GPURMA_UID_ADDR, MASTER_ADDR or this host's
 * name, at a port free when the id is made. */
GPURMA_API gpurma_status_t gpurma_get_unique_id(gpurma_unique_id_t *id);
/* Ends every process of the job (through the bootstrap); does not return. */
GPURMA_API void gpurma_abort(gpurma_ctx_t ctx, int code, const char *why);

GPURMA_API int gpurma_rank(gpurma_ctx_t ctx);
GPURMA_API int gpurma_size(gpurma_ctx_t ctx);
GPURMA_API int gpurma_node_rank(gpurma_ctx_t ctx);
GPURMA_API int gpurma_node_size(gpurma_ctx_t ctx);
/* Name of the bootstrap in use ("pmix", "uid", "mpi", "single"). */
GPURMA_API const char *gpurma_bootstrap_name(gpurma_ctx_t ctx);
/* The GPU this context uses: *device receives its ordinal, or
 * GPURMA_DEVICE_HOST for the host backend (what GPURMA_DEVICE or the init
 * parameter chose, resolved: never GPURMA_DEVICE_AUTO). */
GPURMA_API gpurma_status_t gpurma_device_in_use(gpurma_ctx_t ctx, int *device);

GPURMA_API const char *gpurma_strerror(gpurma_status_t status);
/* Detailed text of the last error status returned to the calling thread
 * (empty if none). Messages are per thread, not per context: ctx is not
 * used and may be NULL or invalid (after a failed gpurma_init, pass the
 * NULL context). */
GPURMA_API const char *gpurma_last_error_message(gpurma_ctx_t ctx);
GPURMA_API const char *gpurma_version_string(void);

/* ---------------------------------------------------------------- teams */

#define GPURMA_TEAM_UNDEFINED (-1) /* color that yields no team */

GPURMA_API gpurma_team_t gpurma_team_world(gpurma_ctx_t ctx);
/* Ranks that share this node (reachable by load/store). */
GPURMA_API gpurma_team_t gpurma_team_node(gpurma_ctx_t ctx);
/* Collective over parent. Ranks ordered by (key, parent rank); *out is NULL
 * for color GPURMA_TEAM_UNDEFINED. */
GPURMA_API gpurma_status_t gpurma_team_split(gpurma_team_t parent, int color, int key,
                                             gpurma_team_t *out);
GPURMA_API gpurma_status_t gpurma_team_free(gpurma_team_t *team);
GPURMA_API int gpurma_team_rank(gpurma_team_t team);
GPURMA_API int gpurma_team_size(gpurma_team_t team);
/* World rank of a team rank, or -1. */
GPURMA_API int gpurma_team_world_rank(gpurma_team_t team, int team_rank);
GPURMA_API gpurma_status_t gpurma_barrier(gpurma_team_t team);
/* Local and cheap (looks again at most once per GPURMA_LIVENESS_MS):
 * GPURMA_ERR_PEER_FAILED, with a message naming the rank, once a member of
 * the team is known dead; GPURMA_SUCCESS otherwise. */
GPURMA_API gpurma_status_t gpurma_team_check_peers(gpurma_team_t team);

/* -------------------------------------------------------------- windows */

/* Every engine kind, X(KIND, name, value) in value order: the enum below,
 * gpurma_engine_name() and the words GPURMA_ENGINE accepts are made from
 * this one list. */
#define GPURMA_ENGINE_LIST(X)                                                   \
    X(AUTO,   auto,   0) /* chosen per peer                   */                 \
    X(MEM,    mem,    1) /* load/store into mapped peer memory */                \
    X(PORT,   port,   2) /* descriptor FIFO + proxy thread     */                \
    X(SWITCH, switch, 3) /* forced only: the node's peers through mem's mappings;  \
                            switch objects (gpurma_switch.h), multicast opt-in */

#define GPURMA_ENGINE_KIND_VALUE(kind, name, value) GPURMA_ENGINE_##kind = value,
typedef enum {
    GPURMA_ENGINE_LIST(GPURMA_ENGINE_KIND_VALUE)
    GPURMA_ENGINE_NONE = -1 /* returned for an invalid query */
} gpurma_engine_t;
#undef GPURMA_ENGINE_KIND_VALUE

typedef enum {
    GPURMA_MEM_AUTO   = 0, /* device memory when a GPU is in use, else host */
    GPURMA_MEM_HOST   = 1,
    GPURMA_MEM_DEVICE = 2
} gpurma_mem_kind_t;

enum {
    GPURMA_WIN_FIELD_MEM_KIND     = 1u << 0,
    GPURMA_WIN_FIELD_NUM_SIGNALS  = 1u << 1,
    GPURMA_WIN_FIELD_NUM_COUNTERS = 1u << 2,
    GPURMA_WIN_FIELD_ENGINE       = 1u << 3,
    GPURMA_WIN_FIELD_CONTEXTS     = 1u << 4
};

typedef struct {
    uint64_t          field_mask;
    gpurma_mem_kind_t mem_kind;
    uint32_t          num_signals;  /* default GPURMA_NUM_SIGNALS (64); same on all ranks */
    uint32_t          num_counters; /* default GPURMA_NUM_COUNTERS (16) */
    gpurma_engine_t   engine;       /* default GPURMA_ENGINE or auto     */
    uint32_t          contexts;     /* port proxy contexts, 1-4 (GPURMA_PORT_CONTEXTS) */
} gpurma_win_params_t;

/* Collective over team. size may differ per rank (0 allowed). */
GPURMA_API gpurma_status_t gpurma_win_allocate(gpurma_team_t team, size_t size,
                                               const gpurma_win_params_t *p,
                                               void **base, gpurma_win_t *win);
/* Registers memory the caller owns; it must outlive the window. */
GPURMA_API gpurma_status_t gpurma_win_create(gpurma_team_t team, void *base, size_t size,
                                             const gpurma_win_params_t *p, gpurma_win_t *win);
/* Collective; sets *win to NULL. Later use of the old handle gives GPURMA_ERR_FREED. */
GPURMA_API gpurma_status_t gpurma_win_free(gpurma_win_t *win);

/* Queries: 0 and NULL for a bad handle or peer as well (see the top of
 * this file); the _checked forms tell the two apart. */
GPURMA_API size_t          gpurma_win_size(gpurma_win_t win, int peer);
GPURMA_API void           *gpurma_win_base(gpurma_win_t win);
/* Size of peer's window (0 is legal) or an error: bad or freed handle, peer
 * out of range, size NULL. */
GPURMA_API gpurma_status_t gpurma_win_size_checked(gpurma_win_t win, int peer, size_t *size);
/* This rank's window base (NULL is possible for a 0-byte window) or an error. */
GPURMA_API gpurma_status_t gpurma_win_base_checked(gpurma_win_t win, void **base);
GPURMA_API gpurma_engine_t gpurma_win_engine(gpurma_win_t win, int peer);
GPURMA_API const char     *gpurma_engine_name(gpurma_engine_t engine);
/* Address of the peer's window in this process, NULL if not load/store reachable. */
GPURMA_API void           *gpurma_win_peer_ptr(gpurma_win_t win, int peer);
GPURMA_API gpurma_team_t   gpurma_win_team(gpurma_win_t win);
GPURMA_API uint32_t        gpurma_win_num_signals(gpurma_win_t win);
GPURMA_API uint32_t        gpurma_win_num_counters(gpurma_win_t win);

/* ------------------------------------------- data types and reductions */

/* Element types and reduction operators of the switch engine's reduce (and
 * of the collectives). */
typedef enum {
    GPURMA_INT8, GPURMA_UINT8, GPURMA_INT32, GPURMA_UINT32, GPURMA_INT64, GPURMA_UINT64,
    GPURMA_FLOAT16, GPURMA_BFLOAT16, GPURMA_FLOAT32, GPURMA_FLOAT64
} gpurma_dtype_t;
typedef enum { GPURMA_SUM, GPURMA_PROD, GPURMA_MIN, GPURMA_MAX, GPURMA_AVG } gpurma_redop_t;
/* Operators of the accumulate calls (MPI_Op's meaning): BAND/BOR/BXOR on
 * integer types only. */
typedef enum {
    GPURMA_ACC_SUM, GPURMA_ACC_PROD, GPURMA_ACC_MIN, GPURMA_ACC_MAX, GPURMA_ACC_REPLACE,
    GPURMA_ACC_NO_OP, GPURMA_ACC_BAND, GPURMA_ACC_BOR, GPURMA_ACC_BXOR
} gpurma_acc_op_t;

/* --------------------------------------------------- one-sided operations */

#define GPURMA_ALL_PEERS (-1)

typedef enum { GPURMA_SIGNAL_SET = 0, GPURMA_SIGNAL_ADD = 1 } gpurma_signal_op_t;

typedef enum {
    GPURMA_CMP_EQ = 0, GPURMA_CMP_NE = 1, GPURMA_CMP_GT = 2,
    GPURMA_CMP_GE = 3, GPURMA_CMP_LT = 4, GPURMA_CMP_LE = 5
} gpurma_cmp_t;

/* src may be reused once the call returns only after gpurma_flush_local (or
 * gpurma_flush, or the counter of a counted put) says the op completed locally. */
GPURMA_API gpurma_status_t gpurma_put(gpurma_win_t win, int peer, size_t dst_off,
                                      const void *src, size_t bytes);
GPURMA_API gpurma_status_t gpurma_get(gpurma_win_t win, int peer, void *dst,
                                      size_t src_off, size_t bytes);
/* One store of 1, 2, 4 or 8 bytes; dst_off aligned to bytes. */
GPURMA_API gpurma_status_t gpurma_put_value(gpurma_win_t win, int peer, size_t dst_off,
                                            uint64_t value, size_t bytes);
/* When the target observes the signal, every put this origin issued earlier
 * to the same target on this window is visible. */
GPURMA_API gpurma_status_t gpurma_signal(gpurma_win_t win, int peer, uint32_t sig,
                                         gpurma_signal_op_t op, uint64_t value);
GPURMA_API gpurma_status_t gpurma_put_signal(gpurma_win_t win, int peer, size_t dst_off,
                                             const void *src, size_t bytes, uint32_t sig,
                                             gpurma_signal_op_t op, uint64_t value);
/* Waits on this rank's own signal slot, with acquire semantics. Gives
 * GPURMA_ERR_TIMEOUT after the configured timeout and GPURMA_ERR_PEER_FAILED
 * when a rank of the window's team dies. */
GPURMA_API gpurma_status_t gpurma_wait_until(gpurma_win_t win, uint32_t sig,
                                             gpurma_cmp_t cmp, uint64_t value);
/* Several of this rank's slots at once (OpenSHMEM's wait_until_all/any/some
 * and test forms). sigs lists n slot ids (NULL: slots 0..n-1); status, when
 * not NULL, marks entries to skip (nonzero). Same acquire semantics, bounds
 * and errors as gpurma_wait_until. Indices are positions in the list.
 *   all:  every active entry satisfies cmp value.
 *   any:  one does; *index = the lowest such position (SIZE_MAX when no
 *         entry is active).
 *   some: one does; every satisfied position in indices (room for n), their
 *         number in *count.
 * test forms look once and never wait: *satisfied 1/0, *index SIZE_MAX or
 * *count 0 when nothing is satisfied yet. */
GPURMA_API gpurma_status_t gpurma_wait_until_all(gpurma_win_t win, const uint32_t *sigs,
                                                 size_t n, const int *status, gpurma_cmp_t cmp,
                                                 uint64_t value);
GPURMA_API gpurma_status_t gpurma_wait_until_any(gpurma_win_t win, const uint32_t *sigs,
                                                 size_t n, const int *status, gpurma_cmp_t cmp,
                                                 uint64_t value, size_t *index);
GPURMA_API gpurma_status_t gpurma_wait_until_some(gpurma_win_t win, const uint32_t *sigs,
                                                  size_t n, const int *status, gpurma_cmp_t cmp,
                                                  uint64_t value, size_t *indices,
                                                  size_t *count);
GPURMA_API gpurma_status_t gpurma_test(gpurma_win_t win, uint32_t sig, gpurma_cmp_t cmp,
                                       uint64_t value, int *satisfied);
GPURMA_API gpurma_status_t gpurma_test_all(gpurma_win_t win, const uint32_t *sigs, size_t n,
                                           const int *status, gpurma_cmp_t cmp, uint64_t value,
                                           int *satisfied);
GPURMA_API gpurma_status_t gpurma_test_any(gpurma_win_t win, const uint32_t *sigs, size_t n,
                                           const int *status, gpurma_cmp_t cmp, uint64_t value,
                                           size_t *index);
GPURMA_API gpurma_status_t gpurma_test_some(gpurma_win_t win, const uint32_t *sigs, size_t n,
                                            const int *status, gpurma_cmp_t cmp, uint64_t value,
                                            size_t *indices, size_t *count);
GPURMA_API gpurma_status_t gpurma_signal_read(gpurma_win_t win, uint32_t sig, uint64_t *value);
GPURMA_API gpurma_status_t gpurma_signal_reset(gpurma_win_t win, uint32_t sig);

/*
 * Completion and ordering, named as MPI-3 names them (docs/mpi-rma.md has the
 * table beside MPI, OpenSHMEM, NVSHMEM and NCCL GIN):
 *   gpurma_flush(win, peer)        remote completion of every operation this
 *                                  process issued to peer (GPURMA_ALL_PEERS: to
 *                                  all): MPI_Win_flush / MPI_Win_flush_all.
 *   gpurma_flush_local(win, peer)  local completion: sources reusable, gets
 *                                  landed: MPI_Win_flush_local(_all); GIN's and
 *                                  the old gpurma_flush.
 *   gpurma_quiet(win)              = gpurma_flush(win, GPURMA_ALL_PEERS)
 *                                  (shmem_quiet).
 *   gpurma_order(win)              operations to a peer issued before it are
 *                                  applied before those issued after it; waits
 *                                  for nothing (shmem_fence). No MPI counterpart.
 *   gpurma_win_fence(win)          collective over the window's team, as
 *                                  MPI_Win_fence: every operation issued before
 *                                  it by any member is complete at its target,
 *                                  and the members' own stores are visible.
 */
GPURMA_API gpurma_status_t gpurma_flush(gpurma_win_t win, int peer);
GPURMA_API gpurma_status_t gpurma_flush_local(gpurma_win_t win, int peer);
GPURMA_API gpurma_status_t gpurma_quiet(gpurma_win_t win);
GPURMA_API gpurma_status_t gpurma_order(gpurma_win_t win);
GPURMA_API gpurma_status_t gpurma_win_fence(gpurma_win_t win);
/* Deprecated: the name of gpurma_order before 0.2. Kept because OpenSHMEM and
 * NVSHMEM code ports map shmem_fence onto it; it is NOT MPI_Win_fence. */
GPURMA_API gpurma_status_t gpurma_fence(gpurma_win_t win);

/* 64-bit atomics on 8-byte aligned window offsets; old may be NULL (a
 * non-fetching atomic: on the port engine it returns once issued, and
 * flush or quiet complete it, as for a put). */
GPURMA_API gpurma_status_t gpurma_atomic_fetch_add(gpurma_win_t win, int peer, size_t off,
                                                   uint64_t value, uint64_t *old);
GPURMA_API gpurma_status_t gpurma_atomic_swap(gpurma_win_t win, int peer, size_t off,
                                              uint64_t value, uint64_t *old);
GPURMA_API gpurma_status_t gpurma_atomic_compare_swap(gpurma_win_t win, int peer, size_t off,
                                                      uint64_t expected, uint64_t desired,
                                                      uint64_t *old);

/*
 * Strided and subarray transfers. A shape moves count[2] planes of count[1]
 * rows of count[0] contiguous elements of elem_bytes (a 2-D subarray has
 * count[2] = 1; count[1] = count[2] = 1 is a plain put). Pitches are in bytes
 * (as cudaMemcpy3D's): from one row to the next, and one plane to the next,
 * on each side; rows and planes may not overlap (pitch[0] >= the row's
 * bytes, pitch[1] >= the last row's end). The call is checked whole (sizes
 * overflow-checked, the last byte inside the target's window) before
 * anything moves. Same completion and ordering as gpurma_put / put_signal:
 * the signal of the _signal form is observed after every element.
 */
typedef struct gpurma_subarray {
    size_t elem_bytes;
    size_t count[3];     /* elements per row, rows per plane, planes          */
    size_t dst_pitch[2]; /* target: bytes between rows, between planes         */
    size_t src_pitch[2]; /* origin (put) or local buffer (get): the same        */
} gpurma_subarray_t;
GPURMA_API gpurma_status_t gpurma_put_subarray(gpurma_win_t win, int peer, size_t dst_off,
                                               const void *src, const gpurma_subarray_t *shape);
GPURMA_API gpurma_status_t gpurma_put_subarray_signal(gpurma_win_t win, int peer, size_t dst_off,
                                                      const void *src,
                                                      const gpurma_subarray_t *shape,
                                                      uint32_t sig, gpurma_signal_op_t op,
                                                      uint64_t value);
/* shape->dst_pitch describes the local buffer dst, src_pitch the target. */
GPURMA_API gpurma_status_t gpurma_get_subarray(gpurma_win_t win, int peer, void *dst,
                                               size_t src_off, const gpurma_subarray_t *shape);
/* Stream-ordered forms (device windows, peers mapped on the GPU, as the
 * other *_on_stream calls): one cudaMemcpy2DAsync per plane, so the copy
 * engine walks the rows; the _signal form adds the signal after them. */
GPURMA_API gpurma_status_t gpurma_put_subarray_on_stream(gpurma_win_t win, int peer,
                                                         size_t dst_off, const void *src,
                                                         const gpurma_subarray_t *shape,
                                                         void *stream);
GPURMA_API gpurma_status_t gpurma_get_subarray_on_stream(gpurma_win_t win, int peer, void *dst,
                                                         size_t src_off,
                                                         const gpurma_subarray_t *shape,
                                                         void *stream);
GPURMA_API gpurma_status_t gpurma_put_subarray_signal_on_stream(
    gpurma_win_t win, int peer, size_t dst_off, const void *src, const gpurma_subarray_t *shape,
    uint32_t sig, gpurma_signal_op_t op, uint64_t value, void *stream);
/* OpenSHMEM's iput/iget: nelems elements of elem_bytes, strides in elements
 * (>= 1) on each side: element i goes from src + i*src_stride*elem_bytes to
 * dst_off + i*dst_stride*elem_bytes. */
GPURMA_API gpurma_status_t gpurma_iput(gpurma_win_t win, int peer, size_t dst_off,
                                       size_t dst_stride, const void *src, size_t src_stride,
                                       size_t elem_bytes, size_t nelems);
GPURMA_API gpurma_status_t gpurma_iget(gpurma_win_t win, int peer, void *dst, size_t dst_stride,
                                       size_t src_off, size_t src_stride, size_t elem_bytes,
                                       size_t nelems);

/*
 * Accumulate (MPI-3 semantics): count elements of dtype at dst_off on peer,
 * each combined with the origin's element by op, element-wise atomic: with
 * respect to every other accumulate, fetch_and_op and compare_and_swap on
 * the same element (from any rank, any engine), not to plain puts. dst_off
 * is aligned to the element size, and the aligned 8-byte word holding each
 * element lies inside the target's window (round window sizes up to a
 * multiple of 8). The calls complete at the target before they return
 * (stronger than MPI, which waits for a flush), and result, when asked
 * for, holds the values the elements had just before (get_accumulate,
 * fetch_and_op; NO_OP reads atomically, src may then be NULL).
 * compare_and_swap: the element becomes *desired when it equals *compare;
 * *result gets its old value. Where peers are mapped (host memory) the
 * element's own CPU atomics are used; elsewhere a compare-and-swap loop on
 * the 64-bit word through the engine (UCX atomics, copy-engine kernels).
 */
GPURMA_API gpurma_status_t gpurma_accumulate(gpurma_win_t win, int peer, size_t dst_off,
                                             const void *src, size_t count, gpurma_dtype_t dtype,
                                             gpurma_acc_op_t op);
GPURMA_API gpurma_status_t gpurma_get_accumulate(gpurma_win_t win, int peer, size_t dst_off,
                                                 const void *src, void *result, size_t count,
                                                 gpurma_dtype_t dtype, gpurma_acc_op_t op);
GPURMA_API gpurma_status_t gpurma_fetch_and_op(gpurma_win_t win, int peer, size_t dst_off,
                                               const void *value, void *result,
                                               gpurma_dtype_t dtype, gpurma_acc_op_t op);
GPURMA_API gpurma_status_t gpurma_compare_and_swap(gpurma_win_t win, int peer, size_t dst_off,
                                                   const void *compare, const void *desired,
                                                   void *result, gpurma_dtype_t dtype);

/*
 * Passive-target synchronisation (MPI-3): lock/unlock one target, shared or
 * exclusive, or every target (lock_all: shared). Operations issued between
 * lock and unlock are complete at the target when unlock returns (unlock
 * flushes first); an exclusive lock keeps every other lock of that target
 * out. Locks are advisory, as in MPI: they order only with other locks.
 * Lock words live in a small companion window made with each user window.
 * win_sync: the caller's stores and loads of its own window are ordered
 * with the window's one-sided operations (a full memory barrier; the
 * memory model is unified, see docs/mpi-rma.md). Waits for a lock are
 * bounded by GPURMA_TIMEOUT_MS and notice a dead holder's node peers.
 */
typedef enum { GPURMA_LOCK_SHARED = 1, GPURMA_LOCK_EXCLUSIVE = 2 } gpurma_lock_type_t;
GPURMA_API gpurma_status_t gpurma_win_lock(gpurma_win_t win, gpurma_lock_type_t type, int peer);
GPURMA_API gpurma_status_t gpurma_win_unlock(gpurma_win_t win, int peer);
GPURMA_API gpurma_status_t gpurma_win_lock_all(gpurma_win_t win);
GPURMA_API gpurma_status_t gpurma_win_unlock_all(gpurma_win_t win);
GPURMA_API gpurma_status_t gpurma_win_sync(gpurma_win_t win);

/* Local-completion counters: counter is incremented by one when the op has
 * completed locally (its source may be reused). */
GPURMA_API gpurma_status_t gpurma_put_counted(gpurma_win_t win, int peer, size_t dst_off,
                                              const void *src, size_t bytes, uint32_t counter);
GPURMA_API gpurma_status_t gpurma_put_signal_counted(gpurma_win_t win, int peer, size_t dst_off,
                                                     const void *src, size_t bytes, uint32_t sig,
                                                     gpurma_signal_op_t op, uint64_t value,
                                                     uint32_t counter);
GPURMA_API gpurma_status_t gpurma_counter_wait(gpurma_win_t win, uint32_t counter, uint64_t value);
GPURMA_API gpurma_status_t gpurma_counter_read(gpurma_win_t win, uint32_t counter, uint64_t *value);
GPURMA_API gpurma_status_t gpurma_counter_reset(gpurma_win_t win, uint32_t counter);

/* ------------------------------------------ stream-ordered operations (GPU) */

/*
 * Host-initiated operations on a CUDA stream (`stream` is a cudaStream_t;
 * NULL is the legacy default stream). The call checks its arguments like
 * the plain call (bad input: an error, nothing enqueued), enqueues the
 * operation and returns without waiting: it runs when the stream reaches
 * it, after the work enqueued before it, and the work enqueued after it
 * waits for it. No host synchronisation happens inside, so the calls can
 * be captured into CUDA graphs; arguments are taken by value when the call
 * is made (a replayed graph repeats the same offsets, values and compares).
 *
 * Device windows only (the stream must belong to the window's GPU): other
 * windows, and builds or contexts without a GPU, give GPURMA_ERR_UNSUPPORTED.
 * Buffers are device memory or pinned host memory, read or written when the
 * stream gets there (pageable host memory works outside graph capture, at
 * the cost of CUDA staging it). A wait that exceeds the timeout
 * (GPURMA_TIMEOUT_MS) stops its kernel with a device trap: the stream then
 * reports a CUDA error and the next gpurma error message says which wait
 * timed out.
 */
GPURMA_API gpurma_status_t gpurma_put_on_stream(gpurma_win_t win, int peer, size_t dst_off,
                                                const void *src, size_t bytes, void *stream);
GPURMA_API gpurma_status_t gpurma_get_on_stream(gpurma_win_t win, int peer, void *dst,
                                                size_t src_off, size_t bytes, void *stream);
GPURMA_API gpurma_status_t gpurma_put_value_on_stream(gpurma_win_t win, int peer,
                                                      size_t dst_off, uint64_t value,
                                                      size_t bytes, void *stream);
/* Data of the puts enqueued earlier on the stream is visible at the peer
 * when it observes the signal. */
GPURMA_API gpurma_status_t gpurma_signal_on_stream(gpurma_win_t win, int peer, uint32_t sig,
                                                   gpurma_signal_op_t op, uint64_t value,
                                                   void *stream);
GPURMA_API gpurma_status_t gpurma_put_signal_on_stream(gpurma_win_t win, int peer,
                                                       size_t dst_off, const void *src,
                                                       size_t bytes, uint32_t sig,
                                                       gpurma_signal_op_t op, uint64_t value,
                                                       void *stream);
/* The stream waits (on the GPU) until this rank's signal sig satisfies
 * cmp value; acquire: data announced by the signal is readable by the
 * work enqueued after it. */
GPURMA_API gpurma_status_t gpurma_wait_until_on_stream(gpurma_win_t win, uint32_t sig,
                                                       gpurma_cmp_t cmp, uint64_t value,
                                                       void *stream);
/* Sets this rank's signal sig to 0 when the stream gets there (e.g. after
 * the wait that consumed it, so that a replayed graph waits again). */
GPURMA_API gpurma_status_t gpurma_signal_reset_on_stream(gpurma_win_t win, uint32_t sig,
                                                         void *stream);
/* Remote completion (peer or GPURMA_ALL_PEERS) of the stream's earlier
 * operations, as gpurma_flush: the work enqueued after it starts once they
 * are visible to every observer. */
GPURMA_API gpurma_status_t gpurma_flush_on_stream(gpurma_win_t win, int peer, void *stream);
/* Local completion: stream order already gives it, so this only checks its
 * arguments and enqueues nothing. */
GPURMA_API gpurma_status_t gpurma_flush_local_on_stream(gpurma_win_t win, int peer,
                                                        void *stream);
/* Remote completion of the stream's earlier operations, for every observer. */
GPURMA_API gpurma_status_t gpurma_quiet_on_stream(gpurma_win_t win, void *stream);
/* Barrier over team executed by the GPU: work enqueued after it on any
 * member's stream starts once every member's stream has reached it, and
 * sees what the members' earlier stream work wrote. Collective; the first
 * call on a team sets up its device signals (collectively, on the host).
 * Stream barriers of one team must be ordered on each member (one stream,
 * or streams ordered with events), like any collective. */
GPURMA_API gpurma_status_t gpurma_barrier_on_stream(gpurma_team_t team, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* GPURMA_H */
