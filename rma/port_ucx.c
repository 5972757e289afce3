/*
 * port_ucx.c - the port engine's UCX transport, execution: RMA and 64-bit
 * atomics with ucp_put_nbx, ucp_get_nbx and ucp_atomic_op_nbx, ordered by
 * ucp_worker_fence, completed by waiting on requests (local) and by
 * ucp_worker_flush_nbx (remote); what UCX lacks goes as active messages
 * (port_ucx_am.c), and windows are wired up in port_ucx_wire.c. A subarray
 * into host memory of up to AM_MAX_PAYLOAD bytes is one packed active
 * message (its signal included); others are their rows, issued back to
 * back, and the signal after the last.
 *
 * The state and request tracking every part shares are in port_ucx_base.c.
 *
 * Operations are executed under the port's exec_lock (the proxy thread,
 * or a waiting thread of the host backend). Built only with UCX: the
 * transport's entry in port_xports.c comes with this file.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_ucx.h"

static int ucx_put(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const void *src,
                        uint64_t dst_off, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    if (!w->gpu) {
        size_t rest;
        int rc = gpurma_ucx_am_put_body(port, w, peer, src, dst_off, n, &rest);
        return rc ? rc
                  : gpurma_ucx_am_send(port, w, peer, (const char *)src + (n - rest),
                                       dst_off + (n - rest), rest, 0, AM_NO_SIGNAL, 0);
    }
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    return gpurma_ucx_track(gpurma_ucx_of(port),
                            ucp_put_nbx(gpurma_ucx_ep_of(port, w, peer), src, n,
                                        gpurma_ucx_win(w)->data_raddr[peer] + dst_off,
                                        gpurma_ucx_win(w)->data_rkey[peer], &p),
                            "put");
}

static int ucx_get(gpurma_port_t *port, struct gpurma_win_s *w, int peer, void *dst,
                        uint64_t src_off, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    return gpurma_ucx_track(gpurma_ucx_of(port),
                            ucp_get_nbx(gpurma_ucx_ep_of(port, w, peer), dst, n,
                                        gpurma_ucx_win(w)->data_raddr[peer] + src_off,
                                        gpurma_ucx_win(w)->data_rkey[peer], &p),
                            "get");
}

static ucs_status_ptr_t atomic_op(ucp_ep_h ep, ucp_atomic_op_t op, const uint64_t *operand,
                                  uint64_t raddr, ucp_rkey_h rkey, uint64_t *reply)
{
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    p.datatype = ucp_dt_make_contig(8);
    if (reply) {
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        p.reply_buffer = reply;
    }
    return ucp_atomic_op_nbx(ep, op, operand, 1, raddr, rkey, &p);
}

static int ucx_put_signal(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                               const void *src, uint64_t dst_off, size_t n, uint32_t sig,
                               gpurma_signal_op_t op, const uint64_t *value)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    /* The signal must land after the puts issued before it. */
    ucs_status_t st = ucp_worker_fence(u->worker);
    if (st != UCS_OK)
        return gpurma_ucx_error(st, "worker_fence");
    int rc = GPURMA_SUCCESS;
    if (w->gpu) {
        /* The target's CPU does not write device windows: an RMA put,
         * fenced, then the signal as a UCX atomic. */
        if (n && !(rc = ucx_put(port, w, peer, src, dst_off, n)) &&
            (st = ucp_worker_fence(u->worker)) != UCS_OK)
            rc = gpurma_ucx_error(st, "worker_fence");
        if (rc)
            return rc;
        uint64_t raddr =
            gpurma_ucx_win(w)->sig_raddr[peer] + (uint64_t)sig * sizeof(gpurma_dev_signal_slot_t);
        ucp_ep_h ep = gpurma_ucx_ep_of(port, w, peer);
        ucp_rkey_h rkey = gpurma_ucx_win(w)->sig_rkey[peer];
        if (op == GPURMA_SIGNAL_ADD)
            return gpurma_ucx_track(u, atomic_op(ep, UCP_ATOMIC_OP_ADD, value, raddr, rkey, NULL),
                                    "signal add");
        return gpurma_ucx_track(
            u, atomic_op(ep, UCP_ATOMIC_OP_SWAP, value, raddr, rkey, &u->scratch), "signal set");
    }
    /* The last message carries the tail of the payload and the signal. */
    size_t rest = 0;
    if (n && (rc = gpurma_ucx_am_put_body(port, w, peer, src, dst_off, n, &rest)))
        return rc;
    return gpurma_ucx_am_send(port, w, peer, (const char *)src + (n - rest), dst_off + (n - rest),
                              rest, sig, (uint32_t)op, *value);
}

static int ucx_atomic(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                           gpurma_atomic_kind_t kind, uint64_t off, const uint64_t *value,
                           const uint64_t *compare, uint64_t *old)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    if (!w->gpu && !(u->peer_flags[w->team->world_ranks[peer]] & PEER_NATIVE_AMO))
        return gpurma_ucx_am_atomic_send(port, w, peer, kind, off, *value, *compare, old);
    uint64_t raddr = gpurma_ucx_win(w)->data_raddr[peer] + off;
    ucp_rkey_h rkey = gpurma_ucx_win(w)->data_rkey[peer];
    ucp_ep_h ep = gpurma_ucx_ep_of(port, w, peer);
    switch (kind) {
    case GPURMA_ATOMIC_FETCH_ADD:
        return gpurma_ucx_track(u, atomic_op(ep, UCP_ATOMIC_OP_ADD, value, raddr, rkey, old),
                                "fetch_add");
    case GPURMA_ATOMIC_SWAP:
        return gpurma_ucx_track(u, atomic_op(ep, UCP_ATOMIC_OP_SWAP, value, raddr, rkey, old),
                                "swap");
    case GPURMA_ATOMIC_CAS:
        /* UCX takes the expected value as operand and swaps in the reply buffer's. */
        *old = *value;
        return gpurma_ucx_track(u, atomic_op(ep, UCP_ATOMIC_OP_CSWAP, compare, raddr, rkey, old),
                                "compare_swap");
    }
    return GPURMA_ERR_INTERNAL;
}

static int ucx_fence(gpurma_port_t *port, void *state)
{
    (void)state;
    ucs_status_t st = ucp_worker_fence(gpurma_ucx_of(port)->worker);
    return st == UCS_OK ? GPURMA_SUCCESS : gpurma_ucx_error(st, "worker_fence");
}

static int ucx_quiet(gpurma_port_t *port, void *state)
{
    (void)state;
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    int rc = gpurma_ucx_track(u, ucp_worker_flush_nbx(u->worker, &p), "worker_flush");
    if (!rc)
        rc = gpurma_ucx_wait_local(port);
    /* Flush covers RMA and atomics; active messages are confirmed by a
     * probe, fenced behind them, that each target answers. */
    uint64_t want = __atomic_load_n(&u->replies, __ATOMIC_ACQUIRE);
    ucs_status_t st = rc ? UCS_OK : ucp_worker_fence(u->worker);
    if (st != UCS_OK)
        rc = gpurma_ucx_error(st, "worker_fence");
    int dead = -1;
    for (int r = 0; !rc && r < port->ctx->size; r++) {
        if (!u->am_sent[r] || !u->eps[r])
            continue;
        u->am_sent[r] = 0;
        if (gpurma_ucx_peer_gone(port, u, r)) {
            dead = r; /* its messages are lost with it: no probe to wait for */
            continue;
        }
        u->am_sent[r] = AM_PROBED;
        want++;
        rc = gpurma_ucx_track(
            u, ucp_am_send_nbx(u->eps[r], AM_QUIET_PROBE, &u->me, sizeof(u->me), NULL, 0, &p),
            "quiet probe");
    }
    if (!rc)
        rc = gpurma_ucx_wait_local(port);
    uint64_t start = gpurma_now_ns();
    while (!rc && dead < 0 && __atomic_load_n(&u->replies, __ATOMIC_ACQUIRE) < want) {
        ucp_worker_progress(u->worker);
        if (gpurma_ucx_any_gone(port, u))
            for (int r = 0; r < port->ctx->size && dead < 0; r++)
                if (u->am_sent[r] == AM_PROBED && gpurma_ucx_peer_gone(port, u, r))
                    dead = r;
        if (gpurma_now_ns() - start > port->ctx->timeout_ns)
            rc = gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                  "UCX quiet: a target did not confirm its messages in %llu ms",
                                  (unsigned long long)(port->ctx->timeout_ns / 1000000));
    }
    for (int r = 0; r < port->ctx->size; r++)
        if (u->am_sent[r] == AM_PROBED)
            u->am_sent[r] = 0;
    if (!rc && dead >= 0)
        rc = gpurma_set_error(GPURMA_ERR_PEER_FAILED,
                              "UCX quiet: rank %d has died (or finished); what was sent to it "
                              "is lost",
                              dead);
    return rc;
}

static int ucx_progress(gpurma_port_t *port, void *state)
{
    (void)state;
    return (int)ucp_worker_progress(gpurma_ucx_of(port)->worker);
}


/* Every peer this node does not map (window.c: other nodes, and private
 * memory on a team spanning nodes). */
static int ucx_reach(const struct gpurma_win_s *w, int peer)
{
    return w->peers[peer].path == GPURMA_DEV_PATH_NONE;
}

/* Collective over a team that spans nodes; nothing to do otherwise. */
static int ucx_connect(gpurma_port_t *port, void **state, struct gpurma_win_s *w,
                       const gpurma_exchange_t *ex, int rc, void **wstate)
{
    (void)state, (void)wstate; /* ucx_open publishes, connect fills xwin */
    return w->spans_nodes ? gpurma_ucx_win_connect(port, w, ex, rc) : rc;
}

static void ucx_release(gpurma_port_t *port, void *state, struct gpurma_win_s *w, void *wstate)
{
    (void)state;
    if (wstate)
        gpurma_ucx_win_release(port, w);
}

static void ucx_stop(gpurma_port_t *port, void *state)
{
    if (state)
        gpurma_ucx_close(port);
}

/* The network keeps aligned 8-byte words whole (as LL over RDMA relies on):
 * packed here, then one put, complete before the staging goes. */
static int put_packets(gpurma_port_t *port, const gpurma_port_decoded_t *op)
{
    size_t len = gpurma_dev__packet_bytes(op->size, op->packet_size);
    uint64_t *staging = malloc(len ? len : 1);
    if (!staging)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "port: LL packet staging");
    gpurma_dev__store_packets(staging, op->src, op->size, op->packet_flag, op->packet_size, 0, 1);
    int rc = ucx_put(port, op->win, op->peer, staging, op->remote, len);
    if (!rc)
        rc = gpurma_ucx_wait_local(port);
    if (!gpurma_ucx_of(port)->stuck) /* else UCX may still read it: left to leak */
        free(staging);
    return rc;
}

/* A subarray: its rows as puts (or gets) of their own, issued back to
 * back without waiting, as one batch's descriptors would be. Remote rows
 * are apart, so no one RMA call covers them (an iovec only gathers the
 * local side). */
static int move_shape(gpurma_port_t *port, const gpurma_port_decoded_t *op, int is_put)
{
    char *local = is_put ? (char *)(uintptr_t)op->src : op->dst;
    int rc = GPURMA_SUCCESS;
    for (uint64_t z = 0; z < op->planes && !rc; z++)
        for (uint64_t y = 0; y < op->rows && !rc; y++) {
            uint64_t at = op->remote + z * op->remote_pitch[1] + y * op->remote_pitch[0];
            char *buf = local + z * op->local_pitch[1] + y * op->local_pitch[0];
            rc = is_put ? ucx_put(port, op->win, op->peer, buf, at, op->size)
                        : ucx_get(port, op->win, op->peer, buf, at, op->size);
        }
    return rc;
}

/* Whether a subarray put goes as one packed active message: into host
 * memory, and small enough for one message (larger ones are rows that
 * already fill messages of their own). The bytes do not overflow: the
 * proxy checked that the source spans them. */
static int packable(const gpurma_port_decoded_t *op)
{
    return !op->win->gpu && op->size * op->rows * op->planes <= AM_MAX_PAYLOAD;
}

static int ucx_exec(gpurma_port_t *port, void *state, void *wstate,
                    const gpurma_port_decoded_t *op)
{
    (void)state, (void)wstate;
    struct gpurma_win_s *w = op->win;
    int rc;
    switch (op->op) {
    case GPURMA_PORT_OP_PUT:
        if (op->packet_size)
            return put_packets(port, op);
        if (gpurma_port_decoded_shaped(op) && packable(op))
            return gpurma_ucx_am_put_shaped(port, op);
        return move_shape(port, op, 1);
    case GPURMA_PORT_OP_PUT_SIGNAL:
        if (gpurma_port_decoded_shaped(op) && packable(op)) {
            ucs_status_t st = ucp_worker_fence(gpurma_ucx_of(port)->worker);
            return st != UCS_OK ? gpurma_ucx_error(st, "worker_fence")
                                : gpurma_ucx_am_put_shaped(port, op);
        }
        /* A subarray's rows, then the signal alone: it is fenced behind them. */
        if (gpurma_port_decoded_shaped(op))
            return (rc = move_shape(port, op, 1))
                       ? rc
                       : ucx_put_signal(port, w, op->peer, NULL, 0, 0, op->signal, op->signal_op,
                                        &op->value);
        return ucx_put_signal(port, w, op->peer, op->src, op->remote, op->size, op->signal,
                              op->signal_op, &op->value);
    case GPURMA_PORT_OP_SIGNAL:
        return ucx_put_signal(port, w, op->peer, NULL, 0, 0, op->signal, op->signal_op,
                              &op->value);
    case GPURMA_PORT_OP_GET:
        return move_shape(port, op, 0);
    case GPURMA_PORT_OP_PUT_VALUE: /* little-endian: the low bytes are the value */
        return ucx_put(port, w, op->peer, &op->value, op->remote, op->size);
    case GPURMA_PORT_OP_FETCH_ADD:
    case GPURMA_PORT_OP_SWAP:
    case GPURMA_PORT_OP_CAS:
        return ucx_atomic(port, w, op->peer,
                          (gpurma_atomic_kind_t)(op->op - GPURMA_PORT_OP_FETCH_ADD), op->remote,
                          &op->value, &op->compare, op->result);
    }
    return GPURMA_ERR_INTERNAL;
}

static int ucx_complete(gpurma_port_t *port, void *state)
{
    (void)state;
    return gpurma_ucx_wait_local(port);
}

const gpurma_port_xport_t gpurma_port_xport_ucx = {
    .name     = GPURMA_UCX_XPORT_NAME,
    .reach    = ucx_reach,
    .stop     = ucx_stop,
    .connect  = ucx_connect,
    .release  = ucx_release,
    .exec     = ucx_exec,
    .complete = ucx_complete,
    .fence    = ucx_fence,
    .quiet    = ucx_quiet,
    .progress = ucx_progress,
};
