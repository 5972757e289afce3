/*
 * rma.h - windows and the engine interface. Not installed.
 *
 * The host API (ops.c) validates every call, then dispatches to the engine
 * chosen for the peer through an ops table. Engines never see bad input.
 */
#ifndef GPURMA_RMA_H
#define GPURMA_RMA_H

#include <pthread.h>

#include "context.h"
#include "gpurma_device.h"

#define GPURMA_WIN_MAGIC  0x57494e44u /* live window */
#define GPURMA_NO_COUNTER UINT32_MAX

typedef enum { GPURMA_WIN_ALLOCATED = 0, GPURMA_WIN_CREATED = 1 } gpurma_win_kind_t;

/* Capability bits of an engine. */
enum {
    GPURMA_ENGINE_CAP_HOST_OPS   = 1u << 0, /* host-initiated operations   */
    GPURMA_ENGINE_CAP_DEVICE_OPS = 1u << 1, /* kernel-initiated operations */
    GPURMA_ENGINE_CAP_REMOTE     = 1u << 2  /* reaches other nodes         */
};

typedef enum {
    GPURMA_ATOMIC_FETCH_ADD = GPURMA_DEV__ATOMIC_FETCH_ADD,
    GPURMA_ATOMIC_SWAP      = GPURMA_DEV__ATOMIC_SWAP,
    GPURMA_ATOMIC_CAS       = GPURMA_DEV__ATOMIC_CAS
} gpurma_atomic_kind_t;

struct gpurma_win_s;

/* Unsupported slots are NULL and give GPURMA_ERR_UNSUPPORTED. counter is
 * GPURMA_NO_COUNTER or a validated counter index to bump at local completion. */
typedef struct gpurma_engine_ops {
    size_t          size;
    const char     *name;
    gpurma_engine_t kind;
    uint64_t        caps;
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
    int (*flush)(struct gpurma_win_s *w, int peer);
    int (*quiet)(struct gpurma_win_s *w);
    int (*fence)(struct gpurma_win_s *w);
} gpurma_engine_ops_t;

extern const gpurma_engine_ops_t gpurma_engine_mem_ops;
/* The mem engine's host side for windows in GPU memory (engine_gpu.c). */
extern const gpurma_engine_ops_t gpurma_engine_gpu_ops;

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
    gpurma_win_map_t          *maps;       /* [size]               */
    pid_t                     *pids;       /* [size]               */
    uint64_t                  *remote_base;/* [size] created windows: owner's address */
    pthread_mutex_t          **atomic_locks; /* [size] created windows */
    uint64_t                  *counters;   /* [num_counters]       */
    gpurma_dev_win_t           dev;        /* host-side handle     */
    /* Device windows (GPU memory, src/gpu.h), else NULL. peers[] then holds
     * device addresses (IPC mappings) and dev.peers/signals/counters point
     * to device memory: the handle is for kernels only. */
    struct gpurma_gpu_win     *gpu;
    /* Port engine (port.h): the proxy contexts, this window's id at each,
     * the transport of each peer, UCX state (context 0), and the kernels'
     * peer table when it differs from peers[] (peers reached through the
     * FIFO; peers[i].port says which context serves peer i). */
    struct gpurma_port        *ports[GPURMA_DEV_MAX_PORTS];
    uint32_t                   port_ids[GPURMA_DEV_MAX_PORTS];
    uint32_t                   nports;
    uint8_t                   *xport;
    struct gpurma_port_ucx_win *ucx;
    gpurma_dev_peer_t         *dev_peers;
    struct gpurma_win_s       *next_freed;
};

/* Window creation with an explicit exchange (teams use it for their own
 * system window before they can gather). base is NULL for allocation. */
int gpurma_win_build(struct gpurma_team_s *team, const gpurma_exchange_t *ex,
                     gpurma_win_kind_t kind, void *user_base, size_t size,
                     const gpurma_win_params_t *p, int internal, struct gpurma_win_s **out);
int gpurma_win_destroy(struct gpurma_win_s *w);
int gpurma_win_check(const struct gpurma_win_s *w);

/* Argument checks of the host calls (ops.c), shared by the stream-ordered
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

/* Host memory engine, also used for the created-window (CMA) path. */
int gpurma_cma_xfer(struct gpurma_win_s *w, int peer, int is_put, size_t off, void *buf,
                    size_t n);
int gpurma_cma_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                      uint64_t v, uint64_t compare, uint64_t *old);

/* This rank's signal slots of a device window (engine_gpu.c). */
int gpurma_gpu_win_wait(struct gpurma_win_s *w, uint32_t sig, gpurma_cmp_t cmp, uint64_t value,
                        const char *what);
int gpurma_gpu_win_signal_read(struct gpurma_win_s *w, uint32_t sig, uint64_t *value);
int gpurma_gpu_win_signal_reset(struct gpurma_win_s *w, uint32_t sig);

/* POSIX shared memory: segments 0600 with unguessable names. */
#define GPURMA_SHM_NAME_MAX 48
int  gpurma_shm_create(size_t len, char name[GPURMA_SHM_NAME_MAX], void **addr);
int  gpurma_shm_attach(const char *name, size_t len, void **addr);
void gpurma_shm_unlink(const char *name);
void gpurma_shm_detach(void *addr, size_t len);

#endif
