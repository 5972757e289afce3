/*
 * port.h - the port engine: a proxy thread per context that executes 64-byte
 * descriptors from a FIFO (include/gpurma/detail/dev_port.h) with a
 * transport per peer (memcpy into mapped memory, the copy engine for GPU
 * memory on the node, UCX for any node; port_xports.c). Not installed.
 *
 * port_engine.c is the window engine (it builds and pushes descriptors,
 * flushes, quiets); port_proxy.c the proxy (it consumes, checks and decodes
 * them, and hands each transport a gpurma_port_decoded_t).
 */
#ifndef GPURMA_PORT_H
#define GPURMA_PORT_H

#include <pthread.h>

#include "rma.h"

struct gpurma_port;

/* At most this many transports (port_xports.c lists them). */
#define GPURMA_PORT_MAX_XPORTS 4

/* What the port engine keeps for one window (its engine_state): the proxy
 * contexts it spreads its peers over and its id at each, the transport of
 * each peer (an index into the transport list) and what each transport
 * keeps for the window. peers[i].port says which context serves peer i. */
typedef struct gpurma_port_win {
    struct gpurma_port *ports[GPURMA_DEV_MAX_PORTS];
    uint32_t            ids[GPURMA_DEV_MAX_PORTS];
    uint32_t            nports;
    uint8_t            *xport; /* [size] */
    void               *xwin[GPURMA_PORT_MAX_XPORTS];
} gpurma_port_win_t;

static inline gpurma_port_win_t *gpurma_port_win(const struct gpurma_win_s *w)
{
    return (gpurma_port_win_t *)w->engine_state[GPURMA_ENGINE_PORT];
}

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
    uint64_t                waiter_polls; /* polls by waiting threads (gpurma_port_poll) */
    uint64_t                descriptors;  /* operations executed (a subarray is one) */
    uint64_t                spin_ns;      /* the proxy's spin budget; 0: it shares a core */
    /* The last error found while executing (any thread may execute), for
     * the next flush or quiet to report; error_lock guards both. */
    pthread_mutex_t         error_lock;
    char                    last_error[256];
    int                     last_status;
    uint64_t                repeats; /* errors of last_status since it was logged */
    /* What each transport keeps for this context (its place in the
     * transport list), published with a release store. */
    void                   *xstate[GPURMA_PORT_MAX_XPORTS];
} gpurma_port_t;

/* One descriptor as the proxy decoded and checked it (port_proxy.c), which
 * is all a transport executes: the local side resolved to an address, the
 * remote side as the peer and an offset in its window (with the address
 * where this node maps it), and a shape. Transports never look at the
 * descriptor itself. Lives until the batch has completed locally: UCX may
 * hold pointers into it (value, compare) until then; a transport with
 * complete_async (the batch ends before its work does) takes nothing from
 * it by address past exec. */
typedef struct gpurma_port_decoded {
    struct gpurma_win_s *win;
    int                  op;     /* gpurma_port_op_t (a data operation)       */
    int                  peer;   /* team rank of the target                   */
    const void          *src;    /* PUT, PUT_SIGNAL: the local source          */
    void                *dst;    /* GET: the local destination                 */
    uint64_t             remote; /* offset in the peer's window: the target of
                                    puts, put_value and atomics; a get's source */
    char                *mapped; /* the peer's window at remote where this node
                                    maps it (memcpy, copy engine), else NULL    */
    uint64_t             size;   /* bytes of one row (the whole of a plain op) */
    /* The shape: planes of rows of `size` bytes; 1 and 1 for a plain op.
     * Pitches in bytes, between rows ([0]) and planes ([1]) of each side. */
    uint64_t             rows, planes;
    uint64_t             remote_pitch[2], local_pitch[2];
    uint64_t             value;   /* signal value, atomic operand, put_value   */
    uint64_t             compare; /* CAS expected value                         */
    uint32_t             signal;  /* PUT_SIGNAL, SIGNAL: the slot              */
    gpurma_signal_op_t   signal_op;
    int                  packet_size; /* LL packets (PUT): 8 or 16; 0: none    */
    uint32_t             packet_flag;
    uint64_t            *result;  /* atomics: where the old value goes          */
} gpurma_port_decoded_t;

static inline int gpurma_port_decoded_shaped(const gpurma_port_decoded_t *op)
{
    return op->rows != 1 || op->planes != 1;
}

/* A transport: how the proxy moves data for the peers it serves. They are
 * listed once (port_xports.c); the proxy and the window name none. state is
 * the transport's own per context (port->xstate[i]: created by start, or
 * by a connect, which then publishes it), wstate its own per window; slots
 * may be NULL, and a transport with no state yet has nothing pending. */
typedef struct gpurma_port_xport {
    const char *name;
    /* Preference for serving peer of w (0: cannot); w->peers[peer].path
     * says how this node reaches it. */
    int (*reach)(const struct gpurma_win_s *w, int peer);
    /* On the proxy thread when it starts; stop after it has ended. */
    int (*start)(gpurma_port_t *port, void **state);
    void (*stop)(gpurma_port_t *port, void *state);
    /* A window whose peers it serves (on context 0). Collective when the
     * window's team spans nodes: every rank calls it, with its failure so
     * far (rc), whether or not it serves a peer itself. */
    int (*connect)(gpurma_port_t *port, void **state, struct gpurma_win_s *w,
                   const gpurma_exchange_t *ex, int rc, void **wstate);
    void (*release)(gpurma_port_t *port, void *state, struct gpurma_win_s *w, void *wstate);
    /* One decoded, checked operation for a peer it serves (op->win); an
     * atomic leaves the old value in *op->result once complete. */
    int (*exec)(gpurma_port_t *port, void *state, void *wstate,
                const gpurma_port_decoded_t *op);
    /* A counter in GPU memory gets +1 after what exec queued so far. */
    int (*count)(gpurma_port_t *port, void *state, uint64_t *counter);
    int (*complete)(gpurma_port_t *port, void *state); /* local completion    */
    /* Optional: arranges, without waiting, for *done to become value once
     * everything exec queued so far has completed (the copy engine queues
     * the store behind its copies), so the proxy goes on to the next batch
     * while this one runs; nonzero: not arranged, complete is waited for. */
    int (*complete_async)(gpurma_port_t *port, void *state, uint64_t *done, uint64_t value);
    int (*fence)(gpurma_port_t *port, void *state);
    int (*quiet)(gpurma_port_t *port, void *state);    /* remote completion   */
    int (*progress)(gpurma_port_t *port, void *state); /* nonzero: work done  */
} gpurma_port_xport_t;

/* The transports, in the order they are asked (port_xports.c). */
extern const gpurma_port_xport_t *const gpurma_port_xports[];
extern const int gpurma_port_nxports;

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

/* Records an error found while executing, for the pusher's next flush or
 * quiet, which returns status with this message; also logged. */
void gpurma_port_error(gpurma_port_t *port, int status, const char *fmt, ...)
    GPURMA_PRINTF(3, 4);

/* Errors the proxy found since the last report, as a status (message
 * set); each is reported once, to whichever thread asks first. */
int gpurma_port_take_errors(gpurma_port_t *port);

/* Data operations (not quiet or fence) the proxy contexts of ctx executed
 * so far, rejected ones included; a subarray with its shape slot counts
 * once. For tests (test_strided checks one per subarray). */
uint64_t gpurma_port_descriptors(struct gpurma_ctx_s *ctx);

/* Registered with a context as soon as its first proxy runs. */
extern const gpurma_ctx_hooks_t gpurma_port_hooks;

/* A subarray as one descriptor (dev_port.h: GPURMA_PORT_F_SHAPE), checked
 * by the caller (rma/strided.c): rows of shape->count[0] * elem_bytes
 * bytes; with_signal adds the signal after every row. */
int gpurma_port_subarray(struct gpurma_win_s *w, int peer, int is_put, size_t off, void *buf,
                         const gpurma_subarray_t *shape, int with_signal, uint32_t sig,
                         gpurma_signal_op_t op, uint64_t value);

/* Window registration: gives the window an id the descriptors name. */
int gpurma_port_win_register(gpurma_port_t *port, struct gpurma_win_s *w, uint32_t *win_id);
void gpurma_port_win_unregister(gpurma_port_t *port, struct gpurma_win_s *w);

#endif
