/*
 * port_engine.c - the port engine as a window engine: host-initiated
 * operations build descriptors (dev_port.h, the builders kernels use too)
 * and push them to the proxy context serving the peer (port_proxy.c);
 * flush waits for them to be done, quiet and fence travel as descriptors
 * of their own. Also the engine's life with a window: which peers it
 * reaches, the proxy contexts it registers with, and each transport's
 * window setup.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"

/* A transport's state on a proxy context (NULL: none yet). */
static void *xstate(const gpurma_port_t *port, int i)
{
    return __atomic_load_n(&port->xstate[i], __ATOMIC_ACQUIRE);
}

/* Descriptors to one peer go through one proxy context, in order. */
static int ctx_of(const struct gpurma_win_s *w, int peer) { return w->peers[peer].port; }

static int push_to(struct gpurma_win_s *w, int k, gpurma_port_desc_t *d, uint64_t *pos)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    d->win_id = pw->ids[k];
    int rc = gpurma_port_push(pw->ports[k]->fifo, d, pos);
    if (rc)
        return gpurma_set_error(rc, "rank %d: the port FIFO stayed full for %llu ms",
                                w->ctx->rank, (unsigned long long)(w->ctx->timeout_ns / 1000000));
    return GPURMA_SUCCESS;
}

static int push(struct gpurma_win_s *w, gpurma_port_desc_t *d, uint64_t *pos)
{
    return push_to(w, ctx_of(w, d->peer), d, pos);
}

/* Waits until pos is complete, executing it here when the proxy is not
 * (gpurma_port_poll). Spins for the context's spin budget first (the proxy
 * answers in microseconds when it has a core; when it has none, a wait
 * for what it executes yields at once); past it, while the proxy is
 * executing pos (a large copy), only yields, since a sleep (timer slack,
 * about 50 us) would be a tenth of a 256 MiB transfer; otherwise backs off
 * like any wait. */
static int port_wait(gpurma_port_t *port, uint64_t pos)
{
    gpurma_port_fifo_t *f = port->fifo;
    uint64_t start = 0, spin = port->ctx->spin_ns, slow = 0;
    int spinning = 1;
    /* The clock is first read after 64 polls: most waits (a flush this
     * thread executes itself) end before, and a clock read costs as much
     * as the rest of a small put's round trip on a VM. */
    for (uint64_t i = 0; __atomic_load_n(&f->done, __ATOMIC_ACQUIRE) <= pos; i++) {
        if (gpurma_port_poll(port->ctx)) {
            slow = 0;
            continue;
        }
        if ((i & 63) == 63) {
            uint64_t now = gpurma_now_ns();
            if (!start)
                start = now;
            uint64_t t = now - start;
            if (f->timeout_ns && t > f->timeout_ns)
                return GPURMA_ERR_TIMEOUT;
            spinning = t <= spin;
        }
        /* Taken: the proxy (or another waiter) executes it; a proxy
         * without a core of its own needs this one. */
        int taken = __atomic_load_n(&f->tail, __ATOMIC_ACQUIRE) > pos;
        if (taken && !__atomic_load_n(&port->spin_ns, __ATOMIC_RELAXED))
            sched_yield();
        else if (spinning)
            gpurma_backoff(0);
        else if (taken)
            sched_yield();
        else
            gpurma_backoff(slow++);
    }
    return GPURMA_SUCCESS;
}

static int wait_done(struct gpurma_win_s *w, int k, uint64_t pos)
{
    gpurma_port_t *port = gpurma_port_win(w)->ports[k];
    int rc = port_wait(port, pos);
    if (rc)
        return gpurma_set_error(rc, "rank %d: port operation %llu (context %d) not completed "
                                    "after %llu ms",
                                w->ctx->rank, (unsigned long long)pos, k,
                                (unsigned long long)(w->ctx->timeout_ns / 1000000));
    return gpurma_port_take_errors(port);
}

static int port_put(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                    uint32_t counter)
{
    gpurma_port_desc_t d = gpurma_port_desc_put(peer, off, src, n, counter);
    return push(w, &d, NULL);
}

static int port_get(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n)
{
    gpurma_port_desc_t d = gpurma_port_desc_get(peer, dst, off, n);
    uint64_t pos;
    int rc = push(w, &d, &pos);
    return rc ? rc : wait_done(w, ctx_of(w, peer), pos); /* the data is there on return */
}

static int port_put_value(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n)
{
    gpurma_port_desc_t d = gpurma_port_desc_put_value(peer, off, v, n);
    return push(w, &d, NULL);
}

static int port_signal(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                       uint64_t v)
{
    gpurma_port_desc_t d = gpurma_port_desc_signal(peer, sig, op, v);
    return push(w, &d, NULL);
}

static int port_put_signal(struct gpurma_win_s *w, int peer, size_t off, const void *src,
                           size_t n, uint32_t sig, gpurma_signal_op_t op, uint64_t v,
                           uint32_t counter)
{
    gpurma_port_desc_t d = gpurma_port_desc_put_signal(peer, off, src, n, sig, op, v, counter);
    return push(w, &d, NULL);
}

/* One descriptor and its shape slot (gpurma_port_desc_subarray, which
 * kernels push too) for the whole subarray, pushed together. */
int gpurma_port_subarray(struct gpurma_win_s *w, int peer, int is_put, size_t off, void *buf,
                         const gpurma_subarray_t *s, int with_signal, uint32_t sig,
                         gpurma_signal_op_t op, uint64_t value)
{
    gpurma_port_desc_t d, e;
    gpurma_port_desc_subarray(peer, is_put, off, buf, s, with_signal, sig, op, value, &d, &e);
    int k = ctx_of(w, peer);
    gpurma_port_win_t *pw = gpurma_port_win(w);
    d.win_id = e.win_id = pw->ids[k];
    uint64_t pos;
    if (gpurma_port_push_shaped(pw->ports[k]->fifo, &d, &e, &pos))
        return gpurma_set_error(GPURMA_ERR_TIMEOUT, "rank %d: the port FIFO stayed full for %llu ms",
                                w->ctx->rank, (unsigned long long)(w->ctx->timeout_ns / 1000000));
    return is_put ? GPURMA_SUCCESS : wait_done(w, k, pos); /* a get's data is there on return */
}

/* Without old (a non-fetching atomic) returns once pushed, as a put does:
 * flush and quiet complete it. */
static int port_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                       uint64_t v, uint64_t compare, uint64_t *old)
{
    uint64_t pos;
    gpurma_port_desc_t d = gpurma_port_desc_atomic(peer, (int)kind, off, v, compare);
    if (!old)
        d.flags |= GPURMA_PORT_F_NO_RESULT;
    int rc = push(w, &d, &pos);
    if (rc || !old)
        return rc;
    int k = ctx_of(w, peer);
    gpurma_port_fifo_t *f = gpurma_port_win(w)->ports[k]->fifo;
    rc = wait_done(w, k, pos);
    /* Once executed, the slot is freed even when the proxy reported an
     * error; not executed in time, it goes back to the proxy. */
    if (__atomic_load_n(&f->done, __ATOMIC_ACQUIRE) > pos) {
        uint64_t result = gpurma_port_take_result(f, pos);
        if (!rc)
            *old = result;
    } else {
        gpurma_port_abandon_result(f, pos);
    }
    return rc;
}

/* Everything pushed to context k so far is complete. */
static int flush_ctx(struct gpurma_win_s *w, int k)
{
    gpurma_port_t *port = gpurma_port_win(w)->ports[k];
    uint64_t head = __atomic_load_n(port->fifo->head_ptr, __ATOMIC_ACQUIRE);
    return head ? wait_done(w, k, head - 1) : gpurma_port_take_errors(port);
}

static int port_flush(struct gpurma_win_s *w, int peer)
{
    if (peer != GPURMA_ALL_PEERS)
        return flush_ctx(w, ctx_of(w, peer));
    int rc = GPURMA_SUCCESS;
    for (uint32_t k = 0; k < gpurma_port_win(w)->nports && !rc; k++)
        rc = flush_ctx(w, (int)k);
    return rc;
}

/* QUIET through each of the given contexts, then waits for all of them. */
static int quiet_ports(struct gpurma_ctx_s *ctx, gpurma_port_t *const *ports, int n)
{
    uint64_t pos[GPURMA_DEV_MAX_PORTS];
    int rc = GPURMA_SUCCESS;
    for (int k = 0; k < n; k++) {
        gpurma_port_desc_t d = gpurma_port_desc_sync(GPURMA_PORT_OP_QUIET);
        if (ports[k] && gpurma_port_push(ports[k]->fifo, &d, &pos[k]))
            return gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                    "rank %d: the FIFO of port context %d stayed full", ctx->rank,
                                    k);
    }
    for (int k = 0; k < n && !rc; k++) {
        if (!ports[k])
            continue;
        if (port_wait(ports[k], pos[k]))
            return gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                    "rank %d: port operations of context %d not completed after "
                                    "%llu ms",
                                    ctx->rank, k,
                                    (unsigned long long)(ctx->timeout_ns / 1000000));
        rc = gpurma_port_take_errors(ports[k]);
    }
    return rc;
}

static int port_quiet(struct gpurma_win_s *w)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    return quiet_ports(w->ctx, pw->ports, (int)pw->nports);
}

/* Remote completion to one peer: QUIET through the one context serving it. */
static int port_flush_remote(struct gpurma_win_s *w, int peer)
{
    gpurma_port_t *port = gpurma_port_win(w)->ports[ctx_of(w, peer)];
    return quiet_ports(w->ctx, &port, 1);
}

int gpurma_port_quiet_all(struct gpurma_ctx_s *ctx)
{
    gpurma_port_t *ports[GPURMA_DEV_MAX_PORTS];
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS; k++)
        ports[k] = __atomic_load_n(&ctx->ports[k], __ATOMIC_ACQUIRE);
    return quiet_ports(ctx, ports, GPURMA_DEV_MAX_PORTS);
}

void gpurma_port_flush_all(struct gpurma_ctx_s *ctx)
{
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS; k++) {
        gpurma_port_t *port = __atomic_load_n(&ctx->ports[k], __ATOMIC_ACQUIRE);
        uint64_t head = port ? __atomic_load_n(port->fifo->head_ptr, __ATOMIC_ACQUIRE) : 0;
        if (head && port_wait(port, head - 1))
            GPURMA_LOG(GPURMA_LOG_WARN, GPURMA_SUB_PORT,
                       "rank %d: port context %d did not finish its operations", ctx->rank, k);
    }
}

/* Each context executes in order, and one peer is served by one context;
 * the transport is told to keep that order. */
static int port_fence(struct gpurma_win_s *w)
{
    int rc = GPURMA_SUCCESS;
    for (uint32_t k = 0; k < gpurma_port_win(w)->nports && !rc; k++) {
        gpurma_port_desc_t d = gpurma_port_desc_sync(GPURMA_PORT_OP_FENCE);
        rc = push_to(w, (int)k, &d, NULL);
    }
    return rc;
}

/* ---------------------------------------------------- the engine's life */

/* Peers this node does not map (other nodes; every peer of private memory
 * on a team spanning nodes) are only reached here (UCX); peers on the node
 * only when the engine is forced (the mem engine is faster). */
static int port_reach(const struct gpurma_win_s *w, int peer, int forced)
{
    if (w->peers[peer].path == GPURMA_DEV_PATH_NONE && w->gpu)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: team rank %d is on another node: windows in GPU "
                                "memory reach only this node (copy engine) in this version",
                                w->ctx->rank, peer);
    if (w->peers[peer].path == GPURMA_DEV_PATH_NONE)
        return 10;
    return forced ? 10 : 1;
}

/* The transport that prefers peer most (earlier ones win ties), or -1. */
static int transport_of(const struct gpurma_win_s *w, int peer)
{
    int best = -1, best_pref = 0;
    for (int i = 0; i < gpurma_port_nxports; i++) {
        const gpurma_port_xport_t *t = gpurma_port_xports[i];
        int pref = t->reach ? t->reach(w, peer) : 0;
        if (pref > best_pref) {
            best = i;
            best_pref = pref;
        }
    }
    return best;
}

static int is_port_peer(const struct gpurma_win_s *w, int i)
{
    return w->engines && w->engines[i] && w->engines[i]->kind == GPURMA_ENGINE_PORT;
}

/* Registers the window with its proxy contexts, spreads its peers over
 * them, and exchanges UCX addresses and keys when the team spans nodes
 * (collective: entered by every rank of such a team, with its failure so
 * far). Also fills the kernels' view of the FIFOs in the device handle. */
static int port_connect(struct gpurma_win_s *w, const gpurma_exchange_t *ex, int rc)
{
    int any = 0;
    for (int i = 0; i < w->size; i++)
        any |= is_port_peer(w, i);
    if (!any && !w->spans_nodes)
        return rc;
    gpurma_port_win_t *pw = calloc(1, sizeof(*pw));
    if (pw && !(pw->xport = calloc((size_t)w->size, 1))) {
        free(pw);
        pw = NULL;
    }
    if (!pw && !rc)
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "port engine: out of memory");
    w->engine_state[GPURMA_ENGINE_PORT] = pw;
    for (uint32_t k = 0; !rc && any && k < w->contexts; k++) {
        gpurma_port_t *port = NULL;
        rc = gpurma_port_get(w->ctx, (int)k, &port);
        if (!rc)
            rc = gpurma_port_win_register(port, w, &pw->ids[k]);
        if (!rc) {
            pw->ports[k] = port;
            w->dev.ports[k] = port->dev_fifo ? port->dev_fifo : port->fifo;
            w->dev.port_win_ids[k] = pw->ids[k];
            pw->nports = w->dev.nports = k + 1;
        }
    }
    /* Peers on this node spread over the contexts; peers of transports
     * with state of their own (UCX's worker) stay with context 0. */
    for (int i = 0, next = 0; !rc && i < w->size; i++) {
        if (!is_port_peer(w, i))
            continue;
        int x = transport_of(w, i);
        if (x < 0) {
            rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                  "rank %d: no port transport reaches team rank %d%s",
                                  w->ctx->rank, i,
                                  w->peers[i].path == GPURMA_DEV_PATH_NONE
                                      ? " (another node: this build has no network "
                                        "transport; configure --with-ucx)"
                                      : "");
            break;
        }
        pw->xport[i] = (uint8_t)x;
        w->peers[i].port =
            (int16_t)(gpurma_port_xports[x]->connect ? 0 : next++ % (int)pw->nports);
    }
    /* Every transport's window setup, entered by every rank (some are
     * collective); context 0 holds their state. */
    gpurma_port_t *port0 = pw ? pw->ports[0] : NULL;
    for (int x = 0; x < gpurma_port_nxports; x++) {
        const gpurma_port_xport_t *t = gpurma_port_xports[x];
        if (t->connect) {
            int xrc = t->connect(port0, port0 ? &port0->xstate[x] : NULL, w, ex, rc,
                                 pw ? &pw->xwin[x] : NULL);
            if (!rc)
                rc = xrc;
        }
    }
    return rc;
}

static void port_release(struct gpurma_win_s *w)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    if (!pw)
        return;
    /* Descriptors naming the window (a barrier's last signal, say) are
     * executed before it leaves the proxy's table. */
    if (pw->nports)
        gpurma_port_flush_all(w->ctx);
    for (uint32_t k = 0; k < pw->nports; k++)
        gpurma_port_win_unregister(pw->ports[k], w);
    for (int x = gpurma_port_nxports; x-- > 0;)
        if (gpurma_port_xports[x]->release)
            gpurma_port_xports[x]->release(pw->ports[0], pw->ports[0] ? xstate(pw->ports[0], x)
                                                                     : NULL,
                                           w, pw->xwin[x]);
    free(pw->xport);
    free(pw);
    w->engine_state[GPURMA_ENGINE_PORT] = NULL;
}


const gpurma_engine_ops_t gpurma_engine_port_ops = {
    .size       = sizeof(gpurma_engine_ops_t),
    .kind       = GPURMA_ENGINE_PORT,
    .caps       = GPURMA_ENGINE_CAP_REMOTE | GPURMA_ENGINE_CAP_PROXIED,
    .reach      = port_reach,
    .connect    = port_connect,
    .release    = port_release,
    .hooks      = &gpurma_port_hooks,
    .put        = port_put,
    .get        = port_get,
    .put_value  = port_put_value,
    .signal     = port_signal,
    .put_signal = port_put_signal,
    .atomic     = port_atomic,
    .flush      = port_flush,
    .flush_remote = port_flush_remote,
    .quiet      = port_quiet,
    .fence      = port_fence,
};
