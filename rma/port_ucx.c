/*
 * port_ucx.c - the port engine's UCX transport: RMA and 64-bit atomics with
 * ucp_put_nbx, ucp_get_nbx and ucp_atomic_op_nbx, ordered by
 * ucp_worker_fence, completed by waiting on requests (local) and by
 * ucp_worker_flush_nbx (remote). Worker addresses and rkeys are exchanged
 * through the window's team when a window is created.
 *
 * Only the proxy thread issues operations; window creation (application
 * thread) creates endpoints and unpacks rkeys, so the worker is created
 * thread-safe. Endpoints use peer error handling: a dead peer fails the
 * requests to it instead of hanging them.
 */
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
int gpurma_port_ucx_signal(gpurma_port_t *p, struct gpurma_win_s *w, int peer, uint32_t sig,
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

struct gpurma_port_ucx {
    ucp_context_h context;
    ucp_worker_h  worker;
    ucp_ep_h     *eps;       /* [world size], created on first need */
    void        **pending;   /* requests not yet complete           */
    int           npending, cap;
    uint64_t      scratch;   /* reply of SET signals, never read    */
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

static int ucx_open(gpurma_port_t *port)
{
    struct gpurma_ctx_s *ctx = port->ctx;
    struct gpurma_port_ucx *u = calloc(1, sizeof(*u));
    if (!u || !(u->eps = calloc((size_t)ctx->size, sizeof(ucp_ep_h)))) {
        free(u);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX: out of memory");
    }
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64;
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
    if (st != UCS_OK) {
        ucp_cleanup(u->context);
        free(u->eps);
        free(u);
        return ucx_error(st, "worker_create");
    }
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
    free(u->eps);
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

int gpurma_port_ucx_signal(gpurma_port_t *port, struct gpurma_win_s *w, int peer, uint32_t sig,
                           gpurma_signal_op_t op, const uint64_t *value)
{
    struct gpurma_port_ucx *u = port->ucx;
    /* The signal must land after the puts issued before it. */
    ucs_status_t st = ucp_worker_fence(u->worker);
    if (st != UCS_OK)
        return ucx_error(st, "worker_fence");
    uint64_t raddr = w->ucx->sig_raddr[peer] + (uint64_t)sig * sizeof(gpurma_dev_signal_slot_t);
    ucp_rkey_h rkey = w->ucx->sig_rkey[peer];
    if (op == GPURMA_SIGNAL_ADD)
        return track(u, atomic_op(ep_of(port, w, peer), UCP_ATOMIC_OP_ADD, value, raddr, rkey, NULL),
                     "signal add");
    return track(u, atomic_op(ep_of(port, w, peer), UCP_ATOMIC_OP_SWAP, value, raddr, rkey,
                              &u->scratch),
                 "signal set");
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
    return rc;
}

int gpurma_port_ucx_quiet(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = port->ucx;
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    int rc = track(u, ucp_worker_flush_nbx(u->worker, &p), "worker_flush");
    return rc ? rc : gpurma_port_ucx_wait_local(port);
}

int gpurma_port_ucx_progress(gpurma_port_t *port)
{
    return (int)ucp_worker_progress(port->ucx->worker);
}

#endif /* HAVE_UCX */
