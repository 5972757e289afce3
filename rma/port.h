/*
 * port.h - the port engine: a proxy thread per context that executes 64-byte
 * descriptors from a FIFO (include/gpurma/detail/dev_port.h) with a
 * transport per peer: memcpy into mapped memory (same node), or UCX (any
 * node). Not installed.
 */
#ifndef GPURMA_PORT_H
#define GPURMA_PORT_H

#include <pthread.h>

#include "rma.h"

typedef enum {
    GPURMA_XPORT_MEMCPY = 0, /* peer memory mapped here (or CMA for created windows) */
    GPURMA_XPORT_UCX    = 1,
    GPURMA_XPORT_CE     = 2  /* GPU memory on this node: cudaMemcpyAsync  */
} gpurma_xport_t;

struct gpurma_port_ucx;     /* port_ucx.c: context, worker, endpoints */
struct gpurma_port_ucx_win; /* port_ucx.c: registrations and rkeys    */

typedef struct gpurma_port {
    struct gpurma_ctx_s    *ctx;
    gpurma_port_fifo_t     *fifo;     /* host pushers                      */
    gpurma_port_fifo_t     *dev_fifo; /* kernels (GPU contexts), or NULL   */
    pthread_t               thread;
    int                     stop;
    /* Held by whoever executes descriptors: the proxy thread, or (host
     * backend) a thread waiting on the port that executes them itself. */
    pthread_mutex_t         exec_lock;
    /* Windows by id; the proxy holds the read lock while it executes. */
    pthread_rwlock_t        reg_lock;
    struct gpurma_win_s   **wins;
    uint32_t                nwins;
    uint64_t                errors_seen; /* fifo->errors already reported */
    char                    last_error[256];
    struct gpurma_port_ucx *ucx;
    void                   *ce_stream; /* copy engine: the proxy's CUDA stream */
} gpurma_port_t;

extern const gpurma_engine_ops_t gpurma_engine_port_ops;

/* Proxy context k of ctx (0 <= k < GPURMA_DEV_MAX_PORTS), started on first
 * use (creation is not collective). */
int gpurma_port_get(struct gpurma_ctx_s *ctx, int k, gpurma_port_t **out);
void gpurma_port_shutdown(struct gpurma_ctx_s *ctx);

/* Remote completion of everything this process pushed (barriers use it). */
int gpurma_port_quiet_all(struct gpurma_ctx_s *ctx);

/* Everything this process's host threads pushed so far has been executed
 * (local completion only: no peer needs to answer, so it is safe while
 * peers tear down). */
void gpurma_port_flush_all(struct gpurma_ctx_s *ctx);

/* For threads that wait (on signals, counters, the port): executes pending
 * descriptors and progresses UCX here when no one else is doing it, so the
 * wait does not depend on the proxy thread getting a core. Host backend
 * only (the copy engine stays with the proxy thread). Returns the work done. */
int gpurma_port_poll(struct gpurma_ctx_s *ctx);

/* Window registration: gives the window an id the descriptors name. */
int gpurma_port_win_register(gpurma_port_t *port, struct gpurma_win_s *w, uint32_t *win_id);
void gpurma_port_win_unregister(gpurma_port_t *port, struct gpurma_win_s *w);

/* Copy-engine transport and FIFO memory (port_ce.c; without CUDA the
 * memory is plain and exec fails). The proxy thread starts and stops it. */
void *gpurma_port_ce_alloc(struct gpurma_ctx_s *ctx, size_t len);
void gpurma_port_ce_free(struct gpurma_ctx_s *ctx, void *p);
uint64_t *gpurma_port_ce_alloc_counter(void); /* zeroed, in device memory */
void gpurma_port_ce_free_counter(uint64_t *p);
int gpurma_port_ce_start(gpurma_port_t *port);
void gpurma_port_ce_stop(gpurma_port_t *port);
int gpurma_port_ce_sync(gpurma_port_t *port);
/* result: where an atomic leaves the old value (mapped, pinned memory). */
int gpurma_port_ce_exec(gpurma_port_t *port, struct gpurma_win_s *w, const gpurma_port_desc_t *d,
                        uint64_t *result);
/* Adds 1 to a counter in GPU memory after the operations queued so far. */
int gpurma_port_ce_count(gpurma_port_t *port, uint64_t *counter);

/* UCX transport (port_ucx.c; stubs when UCX is not built). Connecting is
 * collective over the window's team: it exchanges worker addresses and
 * rkeys through ex. */
int gpurma_port_ucx_available(void);
int gpurma_port_ucx_win_connect(gpurma_port_t *port, struct gpurma_win_s *w,
                                const gpurma_exchange_t *ex, int local_failure);
void gpurma_port_ucx_win_release(gpurma_port_t *port, struct gpurma_win_s *w);
void gpurma_port_ucx_close(gpurma_port_t *port);
/* Executed by the proxy thread only. */
int gpurma_port_ucx_put(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const void *src,
                        uint64_t dst_off, size_t n);
int gpurma_port_ucx_get(gpurma_port_t *port, struct gpurma_win_s *w, int peer, void *dst,
                        uint64_t src_off, size_t n);
/* The signal after the puts before it, carrying n bytes of src to dst_off
 * (n may be 0). Operands are read until the request completes: they must
 * outlive the batch. */
int gpurma_port_ucx_put_signal(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                               const void *src, uint64_t dst_off, size_t n, uint32_t sig,
                               gpurma_signal_op_t op, const uint64_t *value);
int gpurma_port_ucx_atomic(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                           gpurma_atomic_kind_t kind, uint64_t off, const uint64_t *value,
                           const uint64_t *compare, uint64_t *old);
int gpurma_port_ucx_fence(gpurma_port_t *port);
int gpurma_port_ucx_wait_local(gpurma_port_t *port); /* requests issued so far */
int gpurma_port_ucx_quiet(gpurma_port_t *port);      /* remote completion      */
int gpurma_port_ucx_progress(gpurma_port_t *port);   /* nonzero if it did work */

#endif
