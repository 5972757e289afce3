/*
 * port_ucx.h - what the four files of the port engine's UCX transport
 * share (built only with UCX, Makefile.am), each calling only those
 * listed after it:
 *   port_ucx.c       execution: RMA, atomics, completion, fence, quiet, and
 *                    the transport's entry in the port engine's list;
 *   port_ucx_wire.c  wire-up: the UCX context and worker, endpoints, the
 *                    window's registrations and rkeys, and close;
 *   port_ucx_am.c    active messages: what UCX lacks or emulates slowly
 *                    (puts and signals into host memory, atomics without
 *                    network atomics, quiet probes, bye), both sides, and
 *                    local completion (wait_local);
 *   port_ucx_base.c  where the state lives, error mapping, the requests in
 *                    flight.
 * Not installed.
 */
#ifndef GPURMA_PORT_UCX_H
#define GPURMA_PORT_UCX_H

#include <ucp/api/ucp.h>

#include "port.h"

/* The transport's name in the port engine's list (port_ucx_base.c finds its slot by it). */
#define GPURMA_UCX_XPORT_NAME "UCX"

#define BLOB_SIZE 4096

/* Active messages: ids, and the largest payload a put_signal carries. UCX
 * sends larger eager messages in fragments of its own; each of ours costs
 * a header, a request and a handler call, and 8 KiB messages held 8-64 KiB
 * puts to a third of the bandwidth of 64 KiB ones (docs/benchmarks.md).
 * The target buffers a whole eager message: the bound keeps that small. */
enum {
    AM_PUT_SIGNAL = 0x6701,
    AM_QUIET_PROBE,
    AM_QUIET_REPLY,
    AM_ATOMIC,
    AM_ATOMIC_REPLY,
    AM_BYE, /* the sender is in finalize: its endpoint closing next is no death */
    AM_PUT_SHAPED
};
#define AM_MAX_PAYLOAD (64u << 10)
#define AM_HDR_RING 256
#define AM_PROBED   2 /* am_sent[r] while quiet waits for r's answer */

typedef struct am_hdr {
    uint64_t data_addr; /* target address of the payload                 */
    uint64_t sig_addr;  /* target address of the signal slot             */
    uint64_t value;
    uint32_t origin;    /* team rank of the sender (the slot's last_origin) */
    uint32_t op;        /* gpurma_signal_op_t, or AM_NO_SIGNAL           */
} am_hdr_t;
#define AM_NO_SIGNAL 0xffu /* a put: payload only */

/* A subarray put into host memory of up to AM_MAX_PAYLOAD bytes: one
 * message whose payload is this, then the rows packed back to back; the
 * target unpacks them with its side's pitches, then signals (unless op is
 * AM_NO_SIGNAL). In the payload, not the header: UCX bounds headers. */
typedef struct am_shape_hdr {
    uint64_t data_addr; /* target address of the first row              */
    uint64_t sig_addr;  /* target address of the signal slot            */
    uint64_t value;
    uint64_t row, rows, planes; /* bytes per row, rows per plane, planes */
    uint64_t pitch[2];  /* target side: between rows, between planes    */
    uint32_t origin;    /* team rank of the sender                       */
    uint32_t op;        /* gpurma_signal_op_t, or AM_NO_SIGNAL           */
} am_shape_hdr_t;

/* An atomic request and its reply; slot and seq name the origin's entry in
 * its table of atomics in flight (atomic_slot_t), checked on the way back. */
typedef struct am_atomic {
    uint64_t addr;    /* target address of the 64-bit word             */
    uint64_t value;   /* operand; the reply: the old value             */
    uint64_t compare; /* compare-swap's expected value                 */
    uint64_t seq;
    uint32_t slot;
    uint32_t origin;  /* world rank to reply to                        */
    uint32_t kind;    /* gpurma_atomic_kind_t; the reply: 0, or 1 refused */
    uint32_t pad;
} am_atomic_t;

/* What this rank knows of a peer (peer_flags). */
#define PEER_NATIVE_AMO 0x1 /* its endpoint has a lane with network atomics */
#define PEER_FINISHED   0x2 /* it said bye: it is in finalize */

/* An atomic in flight: where its old value goes. */
typedef struct atomic_slot {
    uint64_t *result;
    uint64_t  seq;
    int       world; /* target's world rank; -1: free */
} atomic_slot_t;

/* Memory of this rank that active messages may write. */
typedef struct am_region {
    const struct gpurma_win_s *win;
    uintptr_t data, data_len, sig, sig_len;
} am_region_t;

struct gpurma_port_ucx {
    ucp_context_h context;
    ucp_worker_h  worker;
    ucp_ep_h     *eps;       /* [world size], created on first need */
    void        **pending;   /* requests not yet complete           */
    int           npending, cap;
    /* Packed subarray messages (am_shape_hdr_t and rows): live until
     * wait_local, like the requests that send them. */
    void        **staged;
    int           nstaged, staged_cap;
    /* Headers of messages in flight: live until their request completes
     * (wait_local, after which the ring starts over). */
    am_hdr_t      hdr[AM_HDR_RING];
    int           nhdr;
    /* Atomics as active messages: the requests (headers live like hdr's)
     * and their entries until the reply; one per ring slot, reused after
     * wait_local. */
    am_atomic_t   areq[AM_HDR_RING];
    atomic_slot_t aslot[AM_HDR_RING];
    int           natomic;   /* entries used since wait_local          */
    int           aopen;     /* replies still to come                  */
    uint64_t      aseq;
    uint64_t      late_reply; /* where replies after a timeout land        */
    unsigned char *peer_flags; /* [world size] PEER_* */
    int           nfinished; /* peers that said bye                   */
    uint32_t      me;        /* world rank: the quiet probe's header      */
    uint64_t      scratch;   /* reply of SET signals on device windows   */
    unsigned char *am_sent;  /* [world size] messages since the last quiet (1) */
    uint64_t      replies;   /* quiet probes answered                  */
    uint64_t      am_errors; /* messages this rank refused             */
    int           stuck;     /* requests outlived the timeout (wait_local) */
    pthread_mutex_t region_lock;
    am_region_t  *regions;
    int           nregions, region_cap;
};

struct gpurma_port_ucx_win {
    ucp_mem_h   data_memh, sig_memh;
    ucp_rkey_h *data_rkey, *sig_rkey; /* [team size] */
    uint64_t   *data_raddr, *sig_raddr;
};

/* What a rank publishes for a window: its worker address and two rkeys. */
typedef struct ucx_blob {
    int32_t  status;
    uint32_t addr_len, data_key_len, sig_key_len;
    uint64_t data_addr, sig_addr;
    unsigned char bytes[BLOB_SIZE - 32];
} ucx_blob_t;

extern const gpurma_port_xport_t gpurma_port_xport_ucx;

/* port_ucx.c */
int gpurma_ucx_slot(void);
struct gpurma_port_ucx *gpurma_ucx_of(const gpurma_port_t *port);
struct gpurma_port_ucx_win *gpurma_ucx_win(const struct gpurma_win_s *w);
int gpurma_ucx_error(ucs_status_t st, const char *what);
int gpurma_ucx_track(struct gpurma_port_ucx *u, ucs_status_ptr_t req, const char *what);
ucp_ep_h gpurma_ucx_ep_of(gpurma_port_t *port, struct gpurma_win_s *w, int peer);
int gpurma_ucx_wait_local(gpurma_port_t *port);

/* port_ucx_am.c */
ucp_request_param_t gpurma_ucx_eager_params(void);
int gpurma_ucx_peer_gone(const gpurma_port_t *port, const struct gpurma_port_ucx *u, int r);
int gpurma_ucx_any_gone(const gpurma_port_t *port, const struct gpurma_port_ucx *u);
ucs_status_t gpurma_ucx_am_listen(ucp_worker_h worker, gpurma_port_t *port);
void gpurma_ucx_region_add(struct gpurma_port_ucx *u, const struct gpurma_win_s *w, void *data,
                       size_t data_len, void *sig, size_t sig_len);
void gpurma_ucx_region_remove(struct gpurma_port_ucx *u, const struct gpurma_win_s *w);
int gpurma_ucx_am_send(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const void *src,
                   uint64_t dst_off, size_t n, uint32_t sig, uint32_t op, uint64_t value);
int gpurma_ucx_am_put_body(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const char *src,
                       uint64_t dst_off, size_t n, size_t *rest);
int gpurma_ucx_am_atomic_send(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                          gpurma_atomic_kind_t kind, uint64_t off, uint64_t value,
                          uint64_t compare, uint64_t *old);
int gpurma_ucx_wait_atomics(gpurma_port_t *port, struct gpurma_port_ucx *u, uint64_t start, int rc);

int gpurma_ucx_am_put_shaped(gpurma_port_t *port, const gpurma_port_decoded_t *op);

/* port_ucx_wire.c */
int gpurma_ucx_win_connect(gpurma_port_t *port, struct gpurma_win_s *w,
                           const gpurma_exchange_t *ex, int local_failure);
void gpurma_ucx_win_release(gpurma_port_t *port, struct gpurma_win_s *w);
void gpurma_ucx_close(gpurma_port_t *port);

#endif
