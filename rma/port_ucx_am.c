/*
 * port_ucx_am.c - the active messages of the port engine's UCX transport,
 * sender and target side.
 *
 * Into host memory, puts and signals travel as active messages: a put is
 * messages of up to AM_MAX_PAYLOAD bytes carrying payload and target
 * address, and a put_signal's last message also carries the signal; the
 * target lands the payload, then updates the slot, from whichever thread
 * progresses its worker (the proxy, or a thread waiting on a signal). One
 * message per hop instead of a put, a fence and an atomic with their
 * acknowledgements, which is what makes emulated RMA (TCP) slow; and no
 * acknowledgement at all, whose send to an origin that has just died ends
 * the target's process inside UCX 1.13's emulated put.
 * A message carries up to AM_MAX_PAYLOAD bytes, so a put of up to 64 KiB is
 * one message and puts pipeline without a round trip each.
 * Fences order them after earlier RMA, and quiet confirms them with a
 * probe each target answers once it has handled everything before it. The
 * target checks that both addresses fall in one of its registered windows
 * before it writes.
 *
 * Atomics use UCX's own where an endpoint has a lane with atomics in the
 * network (ucp_ep_print_info lists an "amo" lane); elsewhere (TCP) UCX
 * would emulate them, and here they are one active message each way
 * instead: the target's CPU does the atomic on its window (as its own CPU
 * atomics do) and replies with the old value, which lands in the FIFO's
 * result slot; the batch completes once every reply is in.
 *
 * A subarray put of up to AM_MAX_PAYLOAD bytes is one message: the shape,
 * then its rows packed; the target unpacks them (a halo column of N
 * elements is one message, not N).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_ucx.h"

/* An eager active message: never rendezvous, which would need the target
 * to fetch the data in a second step. */
ucp_request_param_t gpurma_ucx_eager_params(void)
{
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
    return p;
}

/* What a send returns once this context is stuck (gpurma_ucx_wait_local). */
static int stuck_error(void)
{
    return gpurma_set_error(GPURMA_ERR_TIMEOUT, "UCX: earlier requests of this rank never "
                                                "completed (timeout); its UCX sends no more");
}

/* Whether [data, data + len) and (with_sig) the signal slot at sig lie in
 * one window this rank registered (what a message may write). */
static int am_target_ok(struct gpurma_port_ucx *u, uint64_t data, size_t len, int with_sig,
                        uint64_t sig)
{
    int ok = 0;
    pthread_mutex_lock(&u->region_lock);
    for (int i = 0; i < u->nregions && !ok; i++) {
        const am_region_t *r = &u->regions[i];
        ok = (!with_sig || (sig >= r->sig && sig - r->sig < r->sig_len &&
                            (sig - r->sig) % sizeof(gpurma_dev_signal_slot_t) == 0)) &&
             (!len || (data >= r->data && data - r->data <= r->data_len &&
                       len <= r->data_len - (data - r->data)));
    }
    pthread_mutex_unlock(&u->region_lock);
    return ok;
}

static ucs_status_t am_refuse(gpurma_port_t *port, const char *why)
{
    gpurma_port_error(port, GPURMA_ERR_TRANSPORT, "rank %d refused a UCX active message: %s",
                      port->ctx->rank, why);
    return UCS_OK; /* dropped */
}

/* A put_signal arrives: payload first, then the slot, with release order. */
static ucs_status_t am_put_signal(void *arg, const void *header, size_t header_len, void *data,
                                  size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    am_hdr_t h;
    if (header_len != sizeof(h) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
        return am_refuse(port, "malformed put_signal");
    memcpy(&h, header, sizeof(h));
    int with_sig = h.op != AM_NO_SIGNAL;
    if ((with_sig && h.op != GPURMA_SIGNAL_SET && h.op != GPURMA_SIGNAL_ADD) ||
        !am_target_ok(gpurma_ucx_of(port), h.data_addr, len, with_sig, h.sig_addr))
        return am_refuse(port, "put_signal outside this rank's windows, or a bad signal op");
    if (len)
        memcpy((void *)(uintptr_t)h.data_addr, data, len);
    if (with_sig)
        gpurma_dev__signal_slot((gpurma_dev_signal_slot_t *)(uintptr_t)h.sig_addr, h.origin,
                                (gpurma_signal_op_t)h.op, h.value);
    return UCS_OK;
}

/* A quiet probe: everything the sender sent before it has been handled. */
static ucs_status_t am_quiet_probe(void *arg, const void *header, size_t header_len, void *data,
                                   size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    uint32_t origin;
    (void)data, (void)len, (void)param;
    if (header_len != sizeof(origin))
        return am_refuse(port, "malformed quiet probe");
    memcpy(&origin, header, sizeof(origin));
    if (origin >= (uint32_t)port->ctx->size || !u->eps[origin])
        return am_refuse(port, "quiet probe from an unknown rank");
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    ucs_status_ptr_t r = ucp_am_send_nbx(u->eps[origin], AM_QUIET_REPLY, NULL, 0, NULL, 0, &p);
    if (UCS_PTR_IS_PTR(r))
        ucp_request_free(r); /* UCX completes it */
    return UCS_OK;
}

static ucs_status_t am_quiet_reply(void *arg, const void *header, size_t header_len, void *data,
                                   size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    (void)header, (void)header_len, (void)data, (void)len, (void)param;
    __atomic_fetch_add(&gpurma_ucx_of(port)->replies, 1, __ATOMIC_RELEASE);
    return UCS_OK;
}

/* Frees the reply header once UCX is done with it. */
static void reply_sent(void *request, ucs_status_t status, void *user_data)
{
    (void)status;
    free(user_data);
    ucp_request_free(request);
}

/* An atomic on this rank's window: done by this CPU, the old value sent
 * back. A request outside the windows is refused, and the reply says so. */
static ucs_status_t am_atomic(void *arg, const void *header, size_t header_len, void *data,
                              size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    am_atomic_t a;
    (void)data, (void)param;
    if (header_len != sizeof(a) || len)
        return am_refuse(port, "malformed atomic");
    memcpy(&a, header, sizeof(a));
    if (a.origin >= (uint32_t)port->ctx->size || !u->eps[a.origin])
        return am_refuse(port, "atomic from an unknown rank");
    int ok = !(a.addr & 7) && a.kind <= GPURMA_ATOMIC_CAS && am_target_ok(u, a.addr, 8, 0, 0);
    if (ok)
        a.value = gpurma_dev__atomic_at((uint64_t *)(uintptr_t)a.addr, (int)a.kind, a.value,
                                        a.compare);
    else
        am_refuse(port, "atomic outside this rank's windows, misaligned, or of unknown kind");
    a.kind = !ok;
    am_atomic_t *reply = malloc(sizeof(*reply));
    if (!reply) /* the origin's wait times out: better than a wrong value */
        return am_refuse(port, "out of memory for an atomic's reply");
    *reply = a;
    ucp_request_param_t p = gpurma_ucx_eager_params();
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = reply_sent;
    p.user_data = reply;
    ucs_status_ptr_t r =
        ucp_am_send_nbx(u->eps[a.origin], AM_ATOMIC_REPLY, reply, sizeof(*reply), NULL, 0, &p);
    if (!UCS_PTR_IS_PTR(r))
        free(reply); /* done (or failed: the origin is gone) */
    return UCS_OK;
}

static ucs_status_t am_atomic_reply(void *arg, const void *header, size_t header_len,
                                    void *data, size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    am_atomic_t a;
    (void)data, (void)param;
    if (header_len != sizeof(a) || len)
        return am_refuse(port, "malformed atomic reply");
    memcpy(&a, header, sizeof(a));
    atomic_slot_t *s = a.slot < AM_HDR_RING ? &u->aslot[a.slot] : NULL;
    if (!s || s->world < 0 || s->seq != a.seq)
        return am_refuse(port, "reply to no atomic in flight");
    if (a.kind)
        gpurma_port_error(port, GPURMA_ERR_TRANSPORT,
                          "rank %d: world rank %d refused an atomic (outside its windows)",
                          port->ctx->rank, s->world);
    else
        *s->result = a.value;
    s->world = -1;
    u->aopen--;
    return UCS_OK;
}

/* A peer in finalize: its endpoint is about to close. */
static ucs_status_t am_bye(void *arg, const void *header, size_t header_len, void *data,
                           size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    uint32_t origin;
    (void)data, (void)len, (void)param;
    if (header_len != sizeof(origin))
        return am_refuse(port, "malformed bye");
    memcpy(&origin, header, sizeof(origin));
    if (origin >= (uint32_t)port->ctx->size)
        return am_refuse(port, "bye from an unknown rank");
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    if (!(__atomic_fetch_or(&u->peer_flags[origin], PEER_FINISHED, __ATOMIC_RELEASE) &
          PEER_FINISHED))
        __atomic_fetch_add(&u->nfinished, 1, __ATOMIC_RELEASE);
    return UCS_OK;
}

/* Whether world rank r will never answer: dead, or finished (said bye:
 * a peer in finalize answers no probe and no atomic, and a healthy job
 * has none in flight to it by then). */
int gpurma_ucx_peer_gone(const gpurma_port_t *port, const struct gpurma_port_ucx *u, int r)
{
    return __atomic_load_n(&port->ctx->dead[r], __ATOMIC_ACQUIRE) ||
           (__atomic_load_n(&u->peer_flags[r], __ATOMIC_ACQUIRE) & PEER_FINISHED);
}

/* Whether any peer may be gone (the cheap test before a scan). */
int gpurma_ucx_any_gone(const gpurma_port_t *port, const struct gpurma_port_ucx *u)
{
    return __atomic_load_n(&port->ctx->ndead, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&u->nfinished, __ATOMIC_ACQUIRE);
}

static ucs_status_t set_handler(ucp_worker_h worker, unsigned id, ucp_am_recv_callback_t cb,
                                void *arg)
{
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = id;
    hp.cb = cb;
    hp.arg = arg;
    return ucp_worker_set_am_recv_handler(worker, &hp);
}

/* A packed subarray put arrives (am_shape_hdr_t): the rows, each where
 * the target side's pitches put it, then the slot, with release order.
 * Refused unless the whole extent lies in one of this rank's windows. */
static ucs_status_t am_put_shaped(void *arg, const void *header, size_t header_len, void *data,
                                  size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    am_shape_hdr_t h;
    (void)header;
    if (header_len || len < sizeof(h) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
        return am_refuse(port, "malformed subarray put");
    memcpy(&h, data, sizeof(h));
    const char *rows = (const char *)data + sizeof(h);
    size_t bytes = len - sizeof(h), extent = 0;
    gpurma_subarray_t s = {.elem_bytes = 1,
                           .count = {h.row, h.rows, h.planes},
                           .dst_pitch = {h.pitch[0], h.pitch[1]}};
    int with_sig = h.op != AM_NO_SIGNAL;
    if (!h.row || !h.rows || !h.planes || h.rows > bytes / h.row ||
        h.planes > bytes / h.row / h.rows || h.row * h.rows * h.planes != bytes ||
        gpurma_dev__shape_extent(&s, s.dst_pitch, &extent))
        return am_refuse(port, "subarray put whose shape does not match its bytes");
    if ((with_sig && h.op != GPURMA_SIGNAL_SET && h.op != GPURMA_SIGNAL_ADD) ||
        !am_target_ok(gpurma_ucx_of(port), h.data_addr, extent, with_sig, h.sig_addr))
        return am_refuse(port, "subarray put outside this rank's windows, or a bad signal op");
    char *dst = (char *)(uintptr_t)h.data_addr;
    for (uint64_t z = 0; z < h.planes; z++)
        for (uint64_t y = 0; y < h.rows; y++, rows += h.row)
            memcpy(dst + z * h.pitch[1] + y * h.pitch[0], rows, h.row);
    if (with_sig)
        gpurma_dev__signal_slot((gpurma_dev_signal_slot_t *)(uintptr_t)h.sig_addr, h.origin,
                                (gpurma_signal_op_t)h.op, h.value);
    return UCS_OK;
}

/* A subarray put (with its signal, for PUT_SIGNAL) as one message: the
 * shape and the rows packed behind it, in a buffer kept until wait_local. */
int gpurma_ucx_am_put_shaped(gpurma_port_t *port, const gpurma_port_decoded_t *op)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    struct gpurma_win_s *w = op->win;
    if (u->stuck)
        return stuck_error();
    if (u->nstaged == u->staged_cap) {
        int cap = u->staged_cap ? 2 * u->staged_cap : 64;
        void **p = realloc(u->staged, (size_t)cap * sizeof(void *));
        if (!p)
            return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX: out of memory");
        u->staged = p;
        u->staged_cap = cap;
    }
    size_t bytes = op->size * op->rows * op->planes; /* at most AM_MAX_PAYLOAD */
    am_shape_hdr_t *h = malloc(sizeof(*h) + bytes);
    if (!h)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX: out of memory for a subarray");
    u->staged[u->nstaged++] = h;
    char *packed = (char *)(h + 1);
    const char *src = op->src;
    for (uint64_t z = 0; z < op->planes; z++)
        for (uint64_t y = 0; y < op->rows; y++, packed += op->size)
            memcpy(packed, src + z * op->local_pitch[1] + y * op->local_pitch[0], op->size);
    int with_sig = op->op == GPURMA_PORT_OP_PUT_SIGNAL;
    struct gpurma_port_ucx_win *uw = gpurma_ucx_win(w);
    *h = (am_shape_hdr_t){
        .data_addr = uw->data_raddr[op->peer] + op->remote,
        .sig_addr = with_sig ? uw->sig_raddr[op->peer] +
                                   (uint64_t)op->signal * sizeof(gpurma_dev_signal_slot_t)
                             : 0,
        .value = op->value, .row = op->size, .rows = op->rows, .planes = op->planes,
        .pitch = {op->remote_pitch[0], op->remote_pitch[1]}, .origin = (uint32_t)w->rank,
        .op = with_sig ? (uint32_t)op->signal_op : AM_NO_SIGNAL};
    u->am_sent[w->team->world_ranks[op->peer]] = 1;
    ucp_request_param_t p = gpurma_ucx_eager_params();
    return gpurma_ucx_track(u,
                            ucp_am_send_nbx(gpurma_ucx_ep_of(port, w, op->peer), AM_PUT_SHAPED,
                                            NULL, 0, h, sizeof(*h) + bytes, &p),
                            with_sig ? "put_subarray_signal" : "put_subarray");
}

/* The handlers of every message above, on the context's worker. */
ucs_status_t gpurma_ucx_am_listen(ucp_worker_h worker, gpurma_port_t *port)
{
    ucs_status_t st;
    if ((st = set_handler(worker, AM_PUT_SIGNAL, am_put_signal, port)) != UCS_OK ||
        (st = set_handler(worker, AM_QUIET_PROBE, am_quiet_probe, port)) != UCS_OK ||
        (st = set_handler(worker, AM_QUIET_REPLY, am_quiet_reply, port)) != UCS_OK ||
        (st = set_handler(worker, AM_ATOMIC, am_atomic, port)) != UCS_OK ||
        (st = set_handler(worker, AM_ATOMIC_REPLY, am_atomic_reply, port)) != UCS_OK ||
        (st = set_handler(worker, AM_PUT_SHAPED, am_put_shaped, port)) != UCS_OK)
        return st;
    return set_handler(worker, AM_BYE, am_bye, port);
}

void gpurma_ucx_region_add(struct gpurma_port_ucx *u, const struct gpurma_win_s *w, void *data,
                       size_t data_len, void *sig, size_t sig_len)
{
    pthread_mutex_lock(&u->region_lock);
    if (u->nregions == u->region_cap) {
        int cap = u->region_cap ? 2 * u->region_cap : 16;
        am_region_t *r = realloc(u->regions, (size_t)cap * sizeof(*r));
        if (r) {
            u->regions = r;
            u->region_cap = cap;
        }
    }
    /* Without room the window only refuses messages (an error, not a hang). */
    if (u->nregions < u->region_cap)
        u->regions[u->nregions++] = (am_region_t){w, (uintptr_t)data, data_len, (uintptr_t)sig,
                                                  sig_len};
    pthread_mutex_unlock(&u->region_lock);
}

void gpurma_ucx_region_remove(struct gpurma_port_ucx *u, const struct gpurma_win_s *w)
{
    pthread_mutex_lock(&u->region_lock);
    for (int i = 0; i < u->nregions;)
        if (u->regions[i].win == w)
            u->regions[i] = u->regions[--u->nregions];
        else
            i++;
    pthread_mutex_unlock(&u->region_lock);
}


/* One active message: n <= AM_MAX_PAYLOAD bytes to dst_off of the peer's
 * window and, unless op is AM_NO_SIGNAL, a signal after them. The header
 * lives in the ring until the message completes locally. */
int gpurma_ucx_am_send(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const void *src,
                   uint64_t dst_off, size_t n, uint32_t sig, uint32_t op, uint64_t value)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    int rc;
    if (u->stuck)
        return stuck_error();
    if (u->nhdr == AM_HDR_RING && (rc = gpurma_ucx_wait_local(port)))
        return rc;
    am_hdr_t *h = &u->hdr[u->nhdr++];
    h->data_addr = n ? gpurma_ucx_win(w)->data_raddr[peer] + dst_off : 0;
    h->sig_addr = op == AM_NO_SIGNAL ? 0
                                     : gpurma_ucx_win(w)->sig_raddr[peer] +
                                           (uint64_t)sig * sizeof(gpurma_dev_signal_slot_t);
    h->value = value;
    h->origin = (uint32_t)w->rank;
    h->op = op;
    u->am_sent[w->team->world_ranks[peer]] = 1;
    ucp_request_param_t p = gpurma_ucx_eager_params();
    return gpurma_ucx_track(
        u,
        ucp_am_send_nbx(gpurma_ucx_ep_of(port, w, peer), AM_PUT_SIGNAL, h, sizeof(*h), src, n, &p),
        op == AM_NO_SIGNAL ? "put" : "put_signal");
}

/* A put into host memory as full messages, all but the last (at most
 * AM_MAX_PAYLOAD) bytes, whose count is left in *rest for the caller. */
int gpurma_ucx_am_put_body(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const char *src,
                       uint64_t dst_off, size_t n, size_t *rest)
{
    size_t done = 0;
    int rc = GPURMA_SUCCESS;
    while (!rc && n - done > AM_MAX_PAYLOAD) {
        rc = gpurma_ucx_am_send(port, w, peer, src + done, dst_off + done, AM_MAX_PAYLOAD, 0,
                                AM_NO_SIGNAL, 0);
        done += AM_MAX_PAYLOAD;
    }
    *rest = n - done;
    return rc;
}

/* An atomic as a request message; the reply fills *old (am_atomic_reply)
 * before wait_local returns. */
int gpurma_ucx_am_atomic_send(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                          gpurma_atomic_kind_t kind, uint64_t off, uint64_t value,
                          uint64_t compare, uint64_t *old)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    int rc;
    if (u->stuck)
        return stuck_error();
    if (u->natomic == AM_HDR_RING && (rc = gpurma_ucx_wait_local(port)))
        return rc;
    if (u->natomic >= AM_HDR_RING) /* wait_local frees the entries; never past the table */
        return gpurma_set_error(GPURMA_ERR_INTERNAL, "UCX atomic: no free entry after a wait");
    int i = u->natomic++, world = w->team->world_ranks[peer];
    u->aslot[i] = (atomic_slot_t){old, ++u->aseq, world};
    u->aopen++;
    u->areq[i] = (am_atomic_t){.addr = gpurma_ucx_win(w)->data_raddr[peer] + off,
                               .value = value,
                               .compare = compare,
                               .seq = u->aseq,
                               .slot = (uint32_t)i,
                               .origin = u->me,
                               .kind = (uint32_t)kind};
    ucp_request_param_t p = gpurma_ucx_eager_params();
    rc = gpurma_ucx_track(
        u, ucp_am_send_nbx(u->eps[world], AM_ATOMIC, &u->areq[i], sizeof(u->areq[i]), NULL, 0, &p),
        "atomic");
    if (rc) { /* no reply will come */
        u->aslot[i].world = -1;
        u->aopen--;
    }
    return rc;
}

/* The replies of the atomics in flight. A target that dies takes its
 * replies with it: its atomics fail at once, the others are still waited
 * for. Past the timeout every one fails, and this context sends no more
 * (a late reply would find its entry reused). */
int gpurma_ucx_wait_atomics(gpurma_port_t *port, struct gpurma_port_ucx *u, uint64_t start, int rc)
{
    struct gpurma_ctx_s *ctx = port->ctx;
    int dead = -1;
    while (u->aopen) {
        if (ucp_worker_progress(u->worker))
            continue;
        for (int i = 0; gpurma_ucx_any_gone(port, u) && i < u->natomic; i++) {
            atomic_slot_t *s = &u->aslot[i];
            if (s->world >= 0 && gpurma_ucx_peer_gone(port, u, s->world)) {
                dead = s->world;
                s->world = -1;
                u->aopen--;
            }
        }
        if (u->aopen && gpurma_now_ns() - start > ctx->timeout_ns) {
            /* Replies may still come; their result slots are the FIFO's,
             * handed to later operations (of other transports too) once
             * these have failed: a late reply must not write there. */
            for (int i = 0; i < u->natomic; i++)
                if (u->aslot[i].world >= 0)
                    u->aslot[i].result = &u->late_reply;
            u->stuck = 1;
            return rc ? rc
                      : gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                         "UCX: %d atomic(s) not answered in %llu ms", u->aopen,
                                         (unsigned long long)(ctx->timeout_ns / 1000000));
        }
    }
    u->natomic = 0;
    if (dead >= 0 && !rc)
        rc = gpurma_set_error(GPURMA_ERR_PEER_FAILED,
                              "UCX atomic: rank %d has died or finished before it answered",
                              dead);
    return rc;
}

/* Local completion: every request in flight, then the atomics' replies. */
int gpurma_ucx_wait_local(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    if (!u)
        return GPURMA_SUCCESS;
    int rc = GPURMA_SUCCESS;
    uint64_t start = gpurma_now_ns();
    for (int i = 0; i < u->npending; i++) {
        ucs_status_t st;
        while ((st = ucp_request_check_status(u->pending[i])) == UCS_INPROGRESS) {
            ucp_worker_progress(u->worker);
            if (gpurma_now_ns() - start > port->ctx->timeout_ns) {
                /* Leave it to UCX: cancel is not possible for RMA requests. */
                st = UCS_ERR_TIMED_OUT;
                break;
            }
        }
        if (st != UCS_OK && !rc)
            rc = gpurma_ucx_error(st, "request");
        if (st == UCS_ERR_TIMED_OUT) {
            /* UCX may still read the headers and buffers of what is left:
             * nothing of them is reused, and this context's UCX sends no
             * more (the job is past its timeout anyway). */
            u->stuck = 1;
            return rc;
        }
        ucp_request_free(u->pending[i]);
    }
    u->npending = 0;
    u->nhdr = 0;
    for (int i = 0; i < u->nstaged; i++)
        free(u->staged[i]);
    u->nstaged = 0;
    /* The entries are free again once no reply is awaited, also when none
     * was (every send failed at once, as to a target that is gone): left
     * counted, the next atomics ran past the table into the fields after
     * it (natomic, aopen, aseq, then peer_flags, whose low half took an
     * entry's world rank), and the next read of peer_flags crashed:
     * peer_gone, ep_failed, am_bye or ucx_atomic, whichever came first.
     * Only a target that left while hundreds of atomics were still to be
     * sent to it got there: under CPU load, where its finalize barrier
     * timed out first (tests/fault/atomics-load.sh). */
    if (u->aopen)
        rc = gpurma_ucx_wait_atomics(port, u, start, rc);
    else
        u->natomic = 0;
    return rc;
}
