/*
 * port_ucx.c - the port engine's UCX transport: RMA and 64-bit atomics with
 * ucp_put_nbx, ucp_get_nbx and ucp_atomic_op_nbx, ordered by
 * ucp_worker_fence, completed by waiting on requests (local) and by
 * ucp_worker_flush_nbx (remote). Worker addresses and rkeys are exchanged
 * through the window's team when a window is created.
 *
 * Signals travel as active messages: a put_signal of up to AM_MAX_PAYLOAD
 * bytes into host memory is one message carrying payload, target addresses
 * and signal; the target lands the payload, then updates the slot, from
 * whichever thread progresses its worker (the proxy, or a thread waiting
 * on a signal). One message per hop instead of a put, a fence and an atomic
 * with their acknowledgements, which is what makes emulated RMA (TCP) slow.
 * Fences order them after earlier RMA, and quiet confirms them with a
 * probe each target answers once it has handled everything before it. The
 * target checks that both addresses fall in one of its registered windows
 * before it writes.
 *
 * Descriptors are executed under the port's exec_lock (the proxy thread,
 * or a waiting thread of the host backend); window creation (application
 * thread) creates endpoints and unpacks rkeys, so the worker is created
 * thread-safe. Endpoints use peer error handling: a dead peer fails the
 * requests to it instead of hanging them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#ifndef HAVE_UCX

int gpurma_port_ucx_available(void) { return 0; }
int gpurma_port_ucx_win_connect(gpurma_port_t *port, struct gpurma_win_s *w,
                                const gpurma_exchange_t *ex, int local_failure)
{
    (void)port, (void)w, (void)ex, (void)local_failure;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "peers on other nodes need UCX, which this build lacks "
                            "(configure --with-ucx)");
}
void gpurma_port_ucx_win_release(gpurma_port_t *port, struct gpurma_win_s *w) { (void)port, (void)w; }
void gpurma_port_ucx_close(gpurma_port_t *port) { (void)port; }
#define GPURMA_NO_UCX_OP(...) { return GPURMA_ERR_UNSUPPORTED; }
int gpurma_port_ucx_put(gpurma_port_t *p, struct gpurma_win_s *w, int peer, const void *src,
                        uint64_t dst_off, size_t n) GPURMA_NO_UCX_OP()
int gpurma_port_ucx_get(gpurma_port_t *p, struct gpurma_win_s *w, int peer, void *dst,
                        uint64_t src_off, size_t n) GPURMA_NO_UCX_OP()
int gpurma_port_ucx_put_signal(gpurma_port_t *p, struct gpurma_win_s *w, int peer,
                               const void *src, uint64_t dst_off, size_t n, uint32_t sig,
                               gpurma_signal_op_t op, const uint64_t *value) GPURMA_NO_UCX_OP()
int gpurma_port_ucx_atomic(gpurma_port_t *p, struct gpurma_win_s *w, int peer,
                           gpurma_atomic_kind_t kind, uint64_t off, const uint64_t *value,
                           const uint64_t *compare, uint64_t *old) GPURMA_NO_UCX_OP()
int gpurma_port_ucx_fence(gpurma_port_t *p) GPURMA_NO_UCX_OP()
int gpurma_port_ucx_wait_local(gpurma_port_t *p) GPURMA_NO_UCX_OP()
int gpurma_port_ucx_quiet(gpurma_port_t *p) GPURMA_NO_UCX_OP()
int gpurma_port_ucx_progress(gpurma_port_t *p) { (void)p; return 0; }

#else /* HAVE_UCX */

#include <ucp/api/ucp.h>

#define BLOB_SIZE 4096

/* Active messages: ids, and the largest payload a put_signal carries. */
enum { AM_PUT_SIGNAL = 0x6701, AM_QUIET_PROBE, AM_QUIET_REPLY };
#define AM_MAX_PAYLOAD 8192
#define AM_HDR_RING 256

typedef struct am_hdr {
    uint64_t data_addr; /* target address of the payload                 */
    uint64_t sig_addr;  /* target address of the signal slot             */
    uint64_t value;
    uint32_t origin;    /* team rank of the sender (the slot's last_origin) */
    uint32_t op;        /* gpurma_signal_op_t                            */
} am_hdr_t;

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
    /* Headers of messages in flight: live until their request completes
     * (wait_local, after which the ring starts over). */
    am_hdr_t      hdr[AM_HDR_RING];
    int           nhdr;
    uint32_t      me;        /* world rank: the quiet probe's header      */
    uint64_t      scratch;   /* reply of SET signals on device windows   */
    unsigned char *am_sent;  /* [world size] messages since the last quiet */
    uint64_t      replies;   /* quiet probes answered                  */
    uint64_t      am_errors; /* messages this rank refused             */
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

int gpurma_port_ucx_available(void) { return 1; }

static int ucx_error(ucs_status_t st, const char *what)
{
    return gpurma_set_error(st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
                                    st == UCS_ERR_UNREACHABLE
                                ? GPURMA_ERR_PEER_FAILED
                                : GPURMA_ERR_TRANSPORT,
                            "UCX %s: %s", what, ucs_status_string(st));
}

/* ------------------------------------------------------ active messages */

/* Whether [data, data + len) and the signal slot at sig lie in one window
 * this rank registered (what a message may write). */
static int am_target_ok(struct gpurma_port_ucx *u, uint64_t data, size_t len, uint64_t sig)
{
    int ok = 0;
    pthread_mutex_lock(&u->region_lock);
    for (int i = 0; i < u->nregions && !ok; i++) {
        const am_region_t *r = &u->regions[i];
        ok = sig >= r->sig && sig - r->sig < r->sig_len &&
             (sig - r->sig) % sizeof(gpurma_dev_signal_slot_t) == 0 &&
             (!len || (data >= r->data && data - r->data <= r->data_len &&
                       len <= r->data_len - (data - r->data)));
    }
    pthread_mutex_unlock(&u->region_lock);
    return ok;
}

static ucs_status_t am_refuse(gpurma_port_t *port, const char *why)
{
    snprintf(port->last_error, sizeof(port->last_error),
             "rank %d refused a UCX active message: %s", port->ctx->rank, why);
    GPURMA_LOG(GPURMA_LOG_ERROR, GPURMA_SUB_PORT, "%s", port->last_error);
    __atomic_fetch_add(&port->fifo->errors, 1, __ATOMIC_RELEASE);
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
    if ((h.op != GPURMA_SIGNAL_SET && h.op != GPURMA_SIGNAL_ADD) ||
        !am_target_ok(port->ucx, h.data_addr, len, h.sig_addr))
        return am_refuse(port, "put_signal outside this rank's windows, or a bad signal op");
    if (len)
        memcpy((void *)(uintptr_t)h.data_addr, data, len);
    gpurma_dev__signal_slot((gpurma_dev_signal_slot_t *)(uintptr_t)h.sig_addr, h.origin,
                            (gpurma_signal_op_t)h.op, h.value);
    return UCS_OK;
}

/* A quiet probe: everything the sender sent before it has been handled. */
static ucs_status_t am_quiet_probe(void *arg, const void *header, size_t header_len, void *data,
                                   size_t len, const ucp_am_recv_param_t *param)
{
    gpurma_port_t *port = arg;
    struct gpurma_port_ucx *u = port->ucx;
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
    __atomic_fetch_add(&port->ucx->replies, 1, __ATOMIC_RELEASE);
    return UCS_OK;
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

static void region_add(struct gpurma_port_ucx *u, const struct gpurma_win_s *w, void *data,
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

static void region_remove(struct gpurma_port_ucx *u, const struct gpurma_win_s *w)
{
    pthread_mutex_lock(&u->region_lock);
    for (int i = 0; i < u->nregions;)
        if (u->regions[i].win == w)
            u->regions[i] = u->regions[--u->nregions];
        else
            i++;
    pthread_mutex_unlock(&u->region_lock);
}

/* ------------------------------------------------------------ lifecycle */

static int ucx_open(gpurma_port_t *port)
{
    struct gpurma_ctx_s *ctx = port->ctx;
    struct gpurma_port_ucx *u = calloc(1, sizeof(*u));
    if (!u || !(u->eps = calloc((size_t)ctx->size, sizeof(ucp_ep_h))) ||
        !(u->am_sent = calloc((size_t)ctx->size, 1))) {
        if (u)
            free(u->eps);
        free(u);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX: out of memory");
    }
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_AM;
    params.mt_workers_shared = 1;
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st == UCS_OK) {
        st = ucp_init(&params, config, &u->context);
        ucp_config_release(config);
    }
    if (st != UCS_OK) {
        free(u->eps);
        free(u);
        return ucx_error(st, "init");
    }
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_MULTI;
    st = ucp_worker_create(u->context, &wp, &u->worker);
    if (st == UCS_OK &&
        ((st = set_handler(u->worker, AM_PUT_SIGNAL, am_put_signal, port)) != UCS_OK ||
         (st = set_handler(u->worker, AM_QUIET_PROBE, am_quiet_probe, port)) != UCS_OK ||
         (st = set_handler(u->worker, AM_QUIET_REPLY, am_quiet_reply, port)) != UCS_OK))
        ucp_worker_destroy(u->worker);
    if (st != UCS_OK) {
        ucp_cleanup(u->context);
        free(u->eps);
        free(u->am_sent);
        free(u);
        return ucx_error(st, "worker_create");
    }
    pthread_mutex_init(&u->region_lock, NULL);
    u->me = (uint32_t)ctx->rank;
    port->ucx = u;
    GPURMA_INFO(GPURMA_SUB_PORT, "UCX transport opened (UCX %s)", ucp_get_version_string());
    return GPURMA_SUCCESS;
}

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    (void)ep;
    gpurma_port_t *port = arg;
    /* Also seen when a peer finalizes first; real failures reach the
     * requests, which report them. */
    GPURMA_INFO(GPURMA_SUB_PORT, "rank %d: UCX endpoint closed: %s", port->ctx->rank,
                ucs_status_string(st));
}

static int map_region(struct gpurma_port_ucx *u, void *addr, size_t len, ucp_mem_h *memh,
                      void **key, size_t *key_len)
{
    ucp_mem_map_params_t mp;
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = addr;
    mp.length = len;
    ucs_status_t st = ucp_mem_map(u->context, &mp, memh);
    if (st == UCS_OK)
        st = ucp_rkey_pack(u->context, *memh, key, key_len);
    return st == UCS_OK ? GPURMA_SUCCESS : ucx_error(st, "mem_map");
}

/* Fills this rank's blob: worker address and rkeys of data and signals. */
static int publish(gpurma_port_t *port, struct gpurma_win_s *w, ucx_blob_t *b)
{
    struct gpurma_port_ucx *u = port->ucx;
    struct gpurma_port_ucx_win *uw = w->ucx;
    ucp_address_t *addr;
    size_t addr_len, dkey_len = 0, skey_len = 0;
    void *dkey = NULL, *skey = NULL;
    ucs_status_t st = ucp_worker_get_address(u->worker, &addr, &addr_len);
    if (st != UCS_OK)
        return ucx_error(st, "worker_get_address");
    /* The window is still being built: its own entries are in the tables. */
    void *data = w->kind == GPURMA_WIN_ALLOCATED ? (void *)w->peers[w->rank].base
                                                 : (void *)(uintptr_t)w->remote_base[w->rank];
    void *signals = w->peers[w->rank].signals;
    size_t sig_len = (size_t)w->num_signals * sizeof(gpurma_dev_signal_slot_t);
    int rc = GPURMA_SUCCESS;
    if (w->bytes)
        rc = map_region(u, data, w->bytes, &uw->data_memh, &dkey, &dkey_len);
    if (!rc && sig_len)
        rc = map_region(u, signals, sig_len, &uw->sig_memh, &skey, &skey_len);
    if (!rc)
        region_add(u, w, data, w->bytes, signals, sig_len);
    if (!rc && addr_len + dkey_len + skey_len > sizeof(b->bytes))
        rc = gpurma_set_error(GPURMA_ERR_TRANSPORT,
                              "UCX address and keys take %zu bytes; at most %zu fit",
                              addr_len + dkey_len + skey_len, sizeof(b->bytes));
    if (!rc) {
        b->addr_len = (uint32_t)addr_len;
        b->data_key_len = (uint32_t)dkey_len;
        b->sig_key_len = (uint32_t)skey_len;
        b->data_addr = (uint64_t)(uintptr_t)data;
        b->sig_addr = (uint64_t)(uintptr_t)signals;
        memcpy(b->bytes, addr, addr_len);
        if (dkey_len)
            memcpy(b->bytes + addr_len, dkey, dkey_len);
        if (skey_len)
            memcpy(b->bytes + addr_len + dkey_len, skey, skey_len);
    }
    if (dkey)
        ucp_rkey_buffer_release(dkey);
    if (skey)
        ucp_rkey_buffer_release(skey);
    ucp_worker_release_address(u->worker, addr);
    return rc;
}

static int connect_peer(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                        const ucx_blob_t *b)
{
    struct gpurma_port_ucx *u = port->ucx;
    struct gpurma_port_ucx_win *uw = w->ucx;
    int world = w->team->world_ranks[peer];
    ucs_status_t st = UCS_OK;
    if (!u->eps[world]) {
        ucp_ep_params_t ep;
        memset(&ep, 0, sizeof(ep));
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.address = (const ucp_address_t *)b->bytes;
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = ep_failed;
        ep.err_handler.arg = port;
        st = ucp_ep_create(u->worker, &ep, &u->eps[world]);
        if (st != UCS_OK)
            return ucx_error(st, "ep_create");
    }
    uw->data_raddr[peer] = b->data_addr;
    uw->sig_raddr[peer] = b->sig_addr;
    if (b->data_key_len)
        st = ucp_ep_rkey_unpack(u->eps[world], b->bytes + b->addr_len, &uw->data_rkey[peer]);
    if (st == UCS_OK && b->sig_key_len)
        st = ucp_ep_rkey_unpack(u->eps[world], b->bytes + b->addr_len + b->data_key_len,
                                &uw->sig_rkey[peer]);
    return st == UCS_OK ? GPURMA_SUCCESS : ucx_error(st, "rkey_unpack");
}

int gpurma_port_ucx_win_connect(gpurma_port_t *port, struct gpurma_win_s *w,
                                const gpurma_exchange_t *ex, int local_failure)
{
    int rc = local_failure;
    pthread_mutex_lock(&w->ctx->lock);
    if (!rc && !port->ucx)
        rc = ucx_open(port);
    pthread_mutex_unlock(&w->ctx->lock);
    struct gpurma_port_ucx_win *uw = calloc(1, sizeof(*uw));
    if (uw) {
        uw->data_rkey = calloc((size_t)w->size, sizeof(ucp_rkey_h));
        uw->sig_rkey = calloc((size_t)w->size, sizeof(ucp_rkey_h));
        uw->data_raddr = calloc((size_t)w->size, sizeof(uint64_t));
        uw->sig_raddr = calloc((size_t)w->size, sizeof(uint64_t));
    }
    w->ucx = uw;
    if (!rc && (!uw || !uw->data_rkey || !uw->sig_rkey || !uw->data_raddr || !uw->sig_raddr))
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX window: out of memory");
    ucx_blob_t *mine = calloc(1, sizeof(*mine));
    ucx_blob_t *all = calloc((size_t)w->size, sizeof(*all));
    if (!mine || !all) {
        free(mine);
        free(all);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX window: out of memory");
    }
    if (!rc)
        rc = publish(port, w, mine);
    mine->status = rc;
    int xrc = ex->allgather(ex, mine, all, sizeof(*mine));
    if (xrc && !rc)
        rc = xrc;
    for (int i = 0; !rc && i < w->size; i++) {
        if (all[i].status)
            rc = gpurma_set_error(all[i].status, "UCX setup failed on team rank %d", i);
        else if (w->xport[i] == GPURMA_XPORT_UCX)
            rc = connect_peer(port, w, i, &all[i]);
    }
    free(mine);
    free(all);
    return rc;
}

void gpurma_port_ucx_win_release(gpurma_port_t *port, struct gpurma_win_s *w)
{
    struct gpurma_port_ucx_win *uw = w->ucx;
    if (!uw)
        return;
    for (int i = 0; i < w->size; i++) {
        if (uw->data_rkey && uw->data_rkey[i])
            ucp_rkey_destroy(uw->data_rkey[i]);
        if (uw->sig_rkey && uw->sig_rkey[i])
            ucp_rkey_destroy(uw->sig_rkey[i]);
    }
    if (port && port->ucx)
        region_remove(port->ucx, w);
    if (port && port->ucx && uw->data_memh)
        ucp_mem_unmap(port->ucx->context, uw->data_memh);
    if (port && port->ucx && uw->sig_memh)
        ucp_mem_unmap(port->ucx->context, uw->sig_memh);
    free(uw->data_rkey);
    free(uw->sig_rkey);
    free(uw->data_raddr);
    free(uw->sig_raddr);
    free(uw);
    w->ucx = NULL;
}

void gpurma_port_ucx_close(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = port->ucx;
    if (!u)
        return;
    gpurma_port_ucx_wait_local(port);
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE; /* a dead peer must not hold up finalize */
    for (int i = 0; i < port->ctx->size; i++) {
        if (!u->eps[i])
            continue;
        void *req = ucp_ep_close_nbx(u->eps[i], &p);
        if (UCS_PTR_IS_PTR(req)) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS)
                ucp_worker_progress(u->worker);
            ucp_request_free(req);
        }
    }
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->context);
    pthread_mutex_destroy(&u->region_lock);
    free(u->regions);
    free(u->eps);
    free(u->am_sent);
    free(u->pending);
    free(u);
    port->ucx = NULL;
}

/* Keeps a request until wait_local; reports immediate failures. */
static int track(struct gpurma_port_ucx *u, ucs_status_ptr_t req, const char *what)
{
    if (req == NULL)
        return GPURMA_SUCCESS;
    if (UCS_PTR_IS_ERR(req))
        return ucx_error(UCS_PTR_STATUS(req), what);
    if (u->npending == u->cap) {
        int cap = u->cap ? 2 * u->cap : 256;
        void **p = realloc(u->pending, (size_t)cap * sizeof(void *));
        if (!p) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS)
                ucp_worker_progress(u->worker);
            ucp_request_free(req);
            return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX: out of memory");
        }
        u->pending = p;
        u->cap = cap;
    }
    u->pending[u->npending++] = req;
    return GPURMA_SUCCESS;
}

static ucp_ep_h ep_of(gpurma_port_t *port, struct gpurma_win_s *w, int peer)
{
    return port->ucx->eps[w->team->world_ranks[peer]];
}

int gpurma_port_ucx_put(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const void *src,
                        uint64_t dst_off, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    return track(port->ucx,
                 ucp_put_nbx(ep_of(port, w, peer), src, n, w->ucx->data_raddr[peer] + dst_off,
                             w->ucx->data_rkey[peer], &p),
                 "put");
}

int gpurma_port_ucx_get(gpurma_port_t *port, struct gpurma_win_s *w, int peer, void *dst,
                        uint64_t src_off, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    return track(port->ucx,
                 ucp_get_nbx(ep_of(port, w, peer), dst, n, w->ucx->data_raddr[peer] + src_off,
                             w->ucx->data_rkey[peer], &p),
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

int gpurma_port_ucx_put_signal(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                               const void *src, uint64_t dst_off, size_t n, uint32_t sig,
                               gpurma_signal_op_t op, const uint64_t *value)
{
    struct gpurma_port_ucx *u = port->ucx;
    /* The signal must land after the puts issued before it. */
    ucs_status_t st = ucp_worker_fence(u->worker);
    if (st != UCS_OK)
        return ucx_error(st, "worker_fence");
    int rc = GPURMA_SUCCESS;
    /* Large payloads (and device windows, which the target's CPU does not
     * write) go as a put of their own, fenced before the signal. */
    if (n && (n > AM_MAX_PAYLOAD || w->gpu)) {
        rc = gpurma_port_ucx_put(port, w, peer, src, dst_off, n);
        if (!rc && (st = ucp_worker_fence(u->worker)) != UCS_OK)
            rc = ucx_error(st, "worker_fence");
        n = 0;
    }
    if (rc)
        return rc;
    uint64_t raddr = w->ucx->sig_raddr[peer] + (uint64_t)sig * sizeof(gpurma_dev_signal_slot_t);
    ucp_ep_h ep = ep_of(port, w, peer);
    if (w->gpu) {
        ucp_rkey_h rkey = w->ucx->sig_rkey[peer];
        if (op == GPURMA_SIGNAL_ADD)
            return track(u, atomic_op(ep, UCP_ATOMIC_OP_ADD, value, raddr, rkey, NULL),
                         "signal add");
        return track(u, atomic_op(ep, UCP_ATOMIC_OP_SWAP, value, raddr, rkey, &u->scratch),
                     "signal set");
    }
    if (u->nhdr == AM_HDR_RING && (rc = gpurma_port_ucx_wait_local(port)))
        return rc;
    am_hdr_t *h = &u->hdr[u->nhdr++];
    h->data_addr = n ? w->ucx->data_raddr[peer] + dst_off : 0;
    h->sig_addr = raddr;
    h->value = *value;
    h->origin = (uint32_t)w->rank;
    h->op = (uint32_t)op;
    u->am_sent[w->team->world_ranks[peer]] = 1;
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
    return track(u, ucp_am_send_nbx(ep, AM_PUT_SIGNAL, h, sizeof(*h), src, n, &p), "put_signal");
}

int gpurma_port_ucx_atomic(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                           gpurma_atomic_kind_t kind, uint64_t off, const uint64_t *value,
                           const uint64_t *compare, uint64_t *old)
{
    struct gpurma_port_ucx *u = port->ucx;
    uint64_t raddr = w->ucx->data_raddr[peer] + off;
    ucp_rkey_h rkey = w->ucx->data_rkey[peer];
    ucp_ep_h ep = ep_of(port, w, peer);
    switch (kind) {
    case GPURMA_ATOMIC_FETCH_ADD:
        return track(u, atomic_op(ep, UCP_ATOMIC_OP_ADD, value, raddr, rkey, old), "fetch_add");
    case GPURMA_ATOMIC_SWAP:
        return track(u, atomic_op(ep, UCP_ATOMIC_OP_SWAP, value, raddr, rkey, old), "swap");
    case GPURMA_ATOMIC_CAS:
        /* UCX takes the expected value as operand and swaps in the reply buffer's. */
        *old = *value;
        return track(u, atomic_op(ep, UCP_ATOMIC_OP_CSWAP, compare, raddr, rkey, old),
                     "compare_swap");
    }
    return GPURMA_ERR_INTERNAL;
}

int gpurma_port_ucx_fence(gpurma_port_t *port)
{
    ucs_status_t st = ucp_worker_fence(port->ucx->worker);
    return st == UCS_OK ? GPURMA_SUCCESS : ucx_error(st, "worker_fence");
}

int gpurma_port_ucx_wait_local(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = port->ucx;
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
            rc = ucx_error(st, "request");
        if (st != UCS_ERR_TIMED_OUT)
            ucp_request_free(u->pending[i]);
    }
    u->npending = 0;
    u->nhdr = 0;
    return rc;
}

int gpurma_port_ucx_quiet(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = port->ucx;
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    int rc = track(u, ucp_worker_flush_nbx(u->worker, &p), "worker_flush");
    if (!rc)
        rc = gpurma_port_ucx_wait_local(port);
    /* Flush covers RMA and atomics; active messages are confirmed by a
     * probe, fenced behind them, that each target answers. */
    uint64_t want = __atomic_load_n(&u->replies, __ATOMIC_ACQUIRE);
    ucs_status_t st = rc ? UCS_OK : ucp_worker_fence(u->worker);
    if (st != UCS_OK)
        rc = ucx_error(st, "worker_fence");
    for (int r = 0; !rc && r < port->ctx->size; r++) {
        if (!u->am_sent[r] || !u->eps[r])
            continue;
        u->am_sent[r] = 0;
        want++;
        rc = track(u, ucp_am_send_nbx(u->eps[r], AM_QUIET_PROBE, &u->me, sizeof(u->me), NULL, 0,
                                      &p),
                   "quiet probe");
    }
    if (!rc)
        rc = gpurma_port_ucx_wait_local(port);
    uint64_t start = gpurma_now_ns();
    while (!rc && __atomic_load_n(&u->replies, __ATOMIC_ACQUIRE) < want) {
        ucp_worker_progress(u->worker);
        if (gpurma_now_ns() - start > port->ctx->timeout_ns)
            rc = gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                  "UCX quiet: a target did not confirm its messages in %llu ms",
                                  (unsigned long long)(port->ctx->timeout_ns / 1000000));
    }
    return rc;
}

int gpurma_port_ucx_progress(gpurma_port_t *port)
{
    return (int)ucp_worker_progress(port->ucx->worker);
}

#endif /* HAVE_UCX */
