/*
 * rma.h - windows and the engine interface. Not installed.
 *
 * The host API (ops.c) validates every call, then dispatches to the engine
 * chosen for the peer through an ops table. Engines never see bad input.
 *
 * Layer 4, rma/: may include src/core/, src/gpu/, bootstrap/, src/common/
 * and include/. Team collectives (coll/, above) are reached through the
 * team's sync table, never by name.
 */
#ifndef GPURMA_RMA_H
#define GPURMA_RMA_H

#include <pthread.h>

#include "context.h"
#include "gpurma_device.h"

/* The first member of a window, also read through gpurma_dev_win_t's
 * host_win by the host backend's device API. */
#define GPURMA_WIN_MAGIC  GPURMA_DEV_HOST_WIN_LIVE /* live window */
#define GPURMA_NO_COUNTER UINT32_MAX

/* gpurma_engine_t values, from gpurma.h's list of kinds. */
#define GPURMA_ENGINE_COUNT_ONE(kind, name, value) +1
#define GPURMA_ENGINE_KINDS (0 GPURMA_ENGINE_LIST(GPURMA_ENGINE_COUNT_ONE))

/* Every GPURMA_WIN_FIELD_* bit; others in a field_mask are refused. */
#define GPURMA_WIN_FIELDS_KNOWN                                                        \
    (GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |                        \
     GPURMA_WIN_FIELD_NUM_COUNTERS | GPURMA_WIN_FIELD_ENGINE | GPURMA_WIN_FIELD_CONTEXTS)
/* Largest window per rank: half the address space, so that no size derived
 * from it (rounding, slots, tables) can wrap. */
#define GPURMA_WIN_MAX_BYTES (SIZE_MAX >> 1)

typedef enum { GPURMA_WIN_ALLOCATED = 0, GPURMA_WIN_CREATED = 1 } gpurma_win_kind_t;

/* Capability bits of an engine, read by the window core. */
enum {
    GPURMA_ENGINE_CAP_REMOTE = 1u << 0, /* may serve peers on other nodes            */
    /* Kernels reach its peers through the port FIFO, not through pointers:
     * their entries in the kernels' peer table carry the FIFO path. */
    GPURMA_ENGINE_CAP_PROXIED = 1u << 1
};

typedef enum {
    GPURMA_ATOMIC_FETCH_ADD = GPURMA_DEV__ATOMIC_FETCH_ADD,
    GPURMA_ATOMIC_SWAP      = GPURMA_DEV__ATOMIC_SWAP,
    GPURMA_ATOMIC_CAS       = GPURMA_DEV__ATOMIC_CAS
} gpurma_atomic_kind_t;

struct gpurma_win_s;

/* An engine: how it reaches peers and its whole life with a window, then
 * the data operations. The engines are listed once (engines.c); slots left
 * NULL get defaults there (lifecycle: nothing to do; data operations:
 * GPURMA_ERR_UNSUPPORTED), so callers never test for NULL.
 *
 * Creating a window: the core maps what it can of every peer on the node
 * (peers[i].path LOADSTORE or HOSTCALL; NONE for peers on other nodes),
 * then asks each engine reach() for each peer and gives the peer to the
 * engine with the highest preference (a forced engine is asked first and
 * keeps every peer it reaches); then every engine's connect() is called,
 * on every rank, in table order (it may be collective: it gets the team's
 * exchange and this rank's failure so far); release() undoes it, also
 * after a failed or partial connect.
 *
 * Data operations get checked arguments only (ops.c); counter is
 * GPURMA_NO_COUNTER or a counter index to bump at local completion.
 *
 * One kind may have several entries, each for one kind of window memory
 * (the mem engine: host memory, engine_mem.c; GPU memory, engine_gpu.c):
 * reach() says 0 for windows of the other kind, so the choice is made once
 * per window and never on the data path. */
typedef struct gpurma_engine_ops {
    size_t          size;
    gpurma_engine_t kind; /* the name is gpurma_engine_name(kind) */
    uint64_t        caps;
    /* >0: preference for serving peer; 0: cannot; <0: a status (message
     * set) that fails the window, e.g. a forced engine that refuses. */
    int (*reach)(const struct gpurma_win_s *w, int peer, int forced);
    int (*connect)(struct gpurma_win_s *w, const gpurma_exchange_t *ex, int rc);
    void (*release)(struct gpurma_win_s *w);
    /* Progress and shutdown (src/core/context.h), registered with the context
     * once a window uses the engine; NULL when it needs neither. */
    const gpurma_ctx_hooks_t *hooks;
    int (*put)(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
               uint32_t counter);
    int (*get)(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n);
    int (*put_value)(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n);
    int (*signal)(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                  uint64_t v);
    int (*put_signal)(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                      uint32_t sig, gpurma_signal_op_t op, uint64_t v, uint32_t counter);
    int (*atomic)(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                  uint64_t v, uint64_t compare, uint64_t *old);
    /* Local completion of what was issued to peer (or GPURMA_ALL_PEERS). */
    int (*flush)(struct gpurma_win_s *w, int peer);
    /* Remote completion of what was issued to one peer; default: quiet. */
    int (*flush_remote)(struct gpurma_win_s *w, int peer);
    int (*quiet)(struct gpurma_win_s *w);
    int (*fence)(struct gpurma_win_s *w);
    /* This rank's own signal slots, called on the window's home engine
     * (struct gpurma_win_s): sig is checked, cmp is known. */
    int (*wait)(struct gpurma_win_s *w, uint32_t sig, gpurma_cmp_t cmp, uint64_t value);
    int (*signal_read)(struct gpurma_win_s *w, uint32_t sig, uint64_t *value);
    int (*signal_reset)(struct gpurma_win_s *w, uint32_t sig);
} gpurma_engine_ops_t;

/* The registered engines (engines.c), with every slot filled: n of them,
 * in the order they are asked; by kind, or NULL. */
const gpurma_engine_ops_t *gpurma_engine_at(int i);
int gpurma_engine_count(void);
const gpurma_engine_ops_t *gpurma_engine_of_kind(gpurma_engine_t kind);
/* The engine of this rank's own memory: the mem engine's entry for host
 * (on_gpu 0) or GPU memory. */
const gpurma_engine_ops_t *gpurma_engine_home(int on_gpu);

/* What a wait on this rank's signal sig names in its messages (ops.c);
 * engines build it only once the wait does not return at once. */
#define GPURMA_WAIT_WHAT_MAX 96
void gpurma_wait_what(char *buf, size_t len, uint32_t sig, gpurma_cmp_t cmp, uint64_t value);

/* A mapping of a peer's shared segment, to undo at free. */
typedef struct gpurma_win_map {
    void  *addr;
    size_t len;
} gpurma_win_map_t;

/* Layout of the shared segment behind every rank's window on the host
 * backend: [data, rounded to 64][signal slots][atomics lock]. For created
 * windows the data part is empty and data lives in the owner's memory. */
typedef struct gpurma_seg_layout {
    size_t data_len;    /* 0 for created windows          */
    size_t signals_off;
    size_t lock_off;
    size_t total;
} gpurma_seg_layout_t;

struct gpurma_win_s {
    uint32_t                   magic;
    gpurma_win_kind_t          kind;
    int                        internal;  /* a team's system window */
    struct gpurma_ctx_s       *ctx;
    struct gpurma_team_s      *team;
    int                        rank, size; /* in team              */
    void                      *base;       /* this rank's data     */
    size_t                     bytes;      /* this rank's size     */
    uint32_t                   num_signals, num_counters;
    gpurma_dev_peer_t         *peers;      /* [size]               */
    const gpurma_engine_ops_t **engines;   /* [size]               */
    /* The engine of this rank's memory (gpurma_engine_home), chosen at
     * creation: it serves this rank's signal slots. */
    const gpurma_engine_ops_t  *home;
    gpurma_win_map_t          *maps;       /* [size]               */
    pid_t                     *pids;       /* [size]               */
    uint64_t                  *remote_base;/* [size] created windows: owner's address */
    pthread_mutex_t          **atomic_locks; /* [size] created windows */
    uint64_t                  *counters;   /* [num_counters]       */
    gpurma_dev_win_t           dev;        /* host-side handle     */
    /* Device windows (GPU memory, src/gpu/gpu.h), else NULL. peers[] then holds
     * device addresses (IPC mappings) and dev.peers/signals/counters point
     * to device memory: the handle is for kernels only. */
    struct gpurma_gpu_win     *gpu;
    int                        spans_nodes; /* team on several nodes (same on all ranks) */
    uint32_t                   contexts;    /* proxy contexts (window parameter)        */
    /* What each engine keeps for this window (by gpurma_engine_t), opaque
     * to the core; NULL when the engine has nothing. */
    void                      *engine_state[GPURMA_ENGINE_KINDS];
    /* The kernels' peer table when it differs from peers[] (peers of
     * proxied engines are reached through the FIFO), else NULL. */
    gpurma_dev_peer_t         *dev_peers;
    struct gpurma_win_s       *next_live;  /* ctx->wins              */
    /* Passive target (lock.c): the companion window of lock words (user
     * windows only, else NULL), and what this process holds per peer
     * (0, GPURMA_LOCK_SHARED or _EXCLUSIVE; negative while acquiring). */
    struct gpurma_win_s       *lockwin;
    int                       *lock_held;  /* [size]                */
    /* Set by a layer that hangs state on the window (lock.c), run by
     * gpurma_win_destroy before the window goes: window.c calls up
     * through it and knows no such layer. */
    void                     (*on_destroy)(struct gpurma_win_s *w);
};

/* Whether team's members live on more than one node: the same on every
 * rank of the team, so that what depends on it (a window's engine setup,
 * UCX addresses; zero-copy collectives) is entered by all or none. */
int gpurma_team_spans_nodes(const struct gpurma_team_s *team);

/* Window creation with an explicit exchange (teams use it for their own
 * system window before they can gather). base is NULL for allocation.
 * internal: the library's own window (a team's system window, a stream
 * barrier's), released by its owner: not the user's to free, not counted
 * as the team's, not released by finalize. */
int gpurma_win_build(struct gpurma_team_s *team, const gpurma_exchange_t *ex,
                     gpurma_win_kind_t kind, void *user_base, size_t size,
                     const gpurma_win_params_t *p, int internal, struct gpurma_win_s **out);
int gpurma_win_destroy(struct gpurma_win_s *w);
/* Removes a user window from its context's list of live windows. */
void gpurma_win_unlink(struct gpurma_win_s *w);

/* The handle is a live window (win_check.c, as the checks below). */
int gpurma_win_check(const struct gpurma_win_s *w);

/* Argument checks of the host calls (win_check.c), shared by the stream-ordered
 * calls: each sets a message naming rank, operation, peer, offset, size. */
int gpurma_check_peer(const struct gpurma_win_s *w, const char *op, int peer);
int gpurma_check_range(const struct gpurma_win_s *w, const char *op, int peer, size_t off,
                       size_t bytes, const void *buf);
int gpurma_check_signal(const struct gpurma_win_s *w, const char *op, uint32_t sig);
/* put_value: also the size (1, 2, 4 or 8) and its alignment. */
int gpurma_check_put_value(const struct gpurma_win_s *w, const char *op, int peer, size_t off,
                           size_t bytes);
int gpurma_check_signal_op(const struct gpurma_win_s *w, const char *op, uint32_t sig,
                           gpurma_signal_op_t sop);
/* A subarray shape (strided.c): sizes, overlaps, the target's range; its
 * extent on the window side in *win_extent. */
int gpurma_check_shape(struct gpurma_win_s *w, const char *op, int peer, size_t off,
                       const void *buf, const gpurma_subarray_t *s, int is_put,
                       size_t *win_extent);

/* The lock words of a user window (lock.c): collective, after the window
 * is built; destroyed with it (through on_destroy). */
int gpurma_win_locks_create(struct gpurma_win_s *w, const gpurma_win_params_t *p);

/* Host memory engine, also used for the created-window (CMA) path. */
int gpurma_cma_xfer(struct gpurma_win_s *w, int peer, int is_put, size_t off, void *buf,
                    size_t n);
/* Whether cross-memory attach to peer works (checked at creation). */
int gpurma_cma_probe(struct gpurma_win_s *w, int peer);
int gpurma_cma_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                      uint64_t v, uint64_t compare, uint64_t *old);

/* POSIX shared memory: segments 0600 with unguessable names. */
#define GPURMA_SHM_NAME_MAX 48
int  gpurma_shm_create(size_t len, char name[GPURMA_SHM_NAME_MAX], void **addr);
int  gpurma_shm_attach(const char *name, size_t len, void **addr);
void gpurma_shm_unlink(const char *name);
/* Unlinks every segment created by process pid (a dead rank on this node). */
void gpurma_shm_remove_of(pid_t pid);
void gpurma_shm_detach(void *addr, size_t len);

#endif
