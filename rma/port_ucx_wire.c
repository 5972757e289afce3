/*
 * port_ucx_wire.c - wire-up of the port engine's UCX transport: the UCX
 * context and worker of a proxy context, endpoints to peers, and per
 * window the registrations and rkeys, exchanged through the window's team
 * when the window is created; then bye and close at shutdown.
 *
 * Window creation and release run in application threads, several at once
 * when windows of different teams are made in different threads: they take
 * the port's exec_lock for their UCX calls (addresses, registrations,
 * endpoints, rkeys) and for the endpoint table, so that two of them never
 * make two endpoints to one peer and the worker is never entered by two
 * threads, even where UCX was built without thread support (the worker
 * still asks for UCS_THREAD_MODE_MULTI). The exchange between those steps
 * runs without it: it may need the proxy.
 * Endpoints use peer error handling: a dead peer fails the requests to it
 * instead of hanging them.
 */
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "port_ucx.h"

/* The interface this host reaches addr (a name or an address) through, in
 * ifname; 0 on success. A connected UDP socket sends nothing: it only asks
 * the routing table for the local address. */
static int interface_toward(const char *addr, char *ifname, size_t len)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(addr, "9", &hints, &ai) || !ai)
        return -1;
    struct sockaddr_storage local;
    socklen_t llen = sizeof(local);
    int fd = socket(ai->ai_family, SOCK_DGRAM, 0), rc = -1;
    if (fd >= 0 && !connect(fd, ai->ai_addr, ai->ai_addrlen) &&
        !getsockname(fd, (struct sockaddr *)&local, &llen)) {
        struct ifaddrs *ifs = NULL;
        if (!getifaddrs(&ifs)) {
            for (struct ifaddrs *i = ifs; i && rc; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != local.ss_family)
                    continue;
                int same = local.ss_family == AF_INET
                               ? !memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr,
                                         &((struct sockaddr_in *)&local)->sin_addr,
                                         sizeof(struct in_addr))
                               : !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
                                         &((struct sockaddr_in6 *)&local)->sin6_addr,
                                         sizeof(struct in6_addr));
                if (same && snprintf(ifname, len, "%s", i->ifa_name) < (int)len)
                    rc = 0;
            }
            freeifaddrs(ifs);
        }
    }
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    return rc;
}

/* The address the job's bootstrap reaches its ranks through, where it
 * knows one (bootstrap.h: job_address; uid: its rendezvous address). */
static const char *job_address(const gpurma_bootstrap_t *bs)
{
    const gpurma_bootstrap_ops_t *ops = bs->ops;
    if (ops->size < offsetof(gpurma_bootstrap_ops_t, job_address) + sizeof(ops->job_address) ||
        !ops->job_address)
        return NULL;
    return ops->job_address((gpurma_bootstrap_t *)bs);
}

/* UCX's transports listen on every device they use: keep them to the one
 * the job already talks over (GPURMA_UCX_NET_DEVICES, else the interface
 * toward the bootstrap's job address), unless the user chose with UCX's
 * own UCX_NET_DEVICES (UCX reads it; here it is only looked at). */
static void choose_net_devices(gpurma_port_t *port, ucp_config_t *config)
{
    const char *want = gpurma_config()->ucx_net_devices;
    char ifname[IF_NAMESIZE + 1] = "";
    if (!*want && !getenv("UCX_NET_DEVICES")) {
        const char *addr = job_address(port->ctx->bs);
        if (addr && !interface_toward(addr, ifname, sizeof(ifname)))
            want = ifname;
    }
    if (!*want || !strcmp(want, "all"))
        return;
    ucs_status_t st = ucp_config_modify(config, "NET_DEVICES", want);
    if (st != UCS_OK)
        GPURMA_WARN(GPURMA_SUB_PORT, "UCX net devices %s: %s", want, ucs_status_string(st));
    else
        GPURMA_INFO(GPURMA_SUB_PORT, "UCX uses network device(s) %s", want);
}

static int ucx_open(gpurma_port_t *port)
{
    struct gpurma_ctx_s *ctx = port->ctx;
    struct gpurma_port_ucx *u = calloc(1, sizeof(*u));
    if (!u || !(u->eps = calloc((size_t)ctx->size, sizeof(ucp_ep_h))) ||
        !(u->am_sent = calloc((size_t)ctx->size, 1)) ||
        !(u->peer_flags = calloc((size_t)ctx->size, 1))) {
        if (u) {
            free(u->eps);
            free(u->am_sent);
        }
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
        choose_net_devices(port, config);
        st = ucp_init(&params, config, &u->context);
        ucp_config_release(config);
    }
    if (st != UCS_OK) {
        free(u->eps);
        free(u->am_sent);
        free(u->peer_flags);
        free(u);
        return gpurma_ucx_error(st, "init");
    }
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_MULTI;
    st = ucp_worker_create(u->context, &wp, &u->worker);
    if (st == UCS_OK && (st = gpurma_ucx_am_listen(u->worker, port)) != UCS_OK)
        ucp_worker_destroy(u->worker);
    if (st != UCS_OK) {
        ucp_cleanup(u->context);
        free(u->eps);
        free(u->am_sent);
        free(u->peer_flags);
        free(u);
        return gpurma_ucx_error(st, "worker_create");
    }
    pthread_mutex_init(&u->region_lock, NULL);
    u->me = (uint32_t)ctx->rank;
    for (int i = 0; i < AM_HDR_RING; i++)
        u->aslot[i].world = -1;
    /* The proxy thread is running and looks at the state without a lock. */
    __atomic_store_n(&port->xstate[gpurma_ucx_slot()], u, __ATOMIC_RELEASE);
    GPURMA_INFO(GPURMA_SUB_PORT, "UCX transport opened (UCX %s)", ucp_get_version_string());
    return GPURMA_SUCCESS;
}

/* UCX notices a peer's process or node going away (its connection closes,
 * or keepalive times out) faster than any timeout: before finalize, that
 * is the peer's death. Once every rank is in finalize, or once the peer
 * said bye (it left finalize's barrier while this rank is still in it),
 * it is a peer that finished first. */
static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    gpurma_port_t *port = arg;
    struct gpurma_ctx_s *ctx = port->ctx;
    int world = -1;
    for (int r = 0; r < ctx->size && world < 0; r++)
        if (gpurma_ucx_of(port) && gpurma_ucx_of(port)->eps[r] == ep)
            world = r;
    if (__atomic_load_n(&ctx->finalizing, __ATOMIC_ACQUIRE) || world < 0 ||
        (__atomic_load_n(&gpurma_ucx_of(port)->peer_flags[world], __ATOMIC_ACQUIRE) &
         PEER_FINISHED)) {
        GPURMA_INFO(GPURMA_SUB_PORT, "rank %d: UCX endpoint to rank %d closed: %s", ctx->rank,
                    world, ucs_status_string(st));
        return;
    }
    char how[96];
    snprintf(how, sizeof(how), "its UCX endpoint failed: %s", ucs_status_string(st));
    gpurma_peer_failed(ctx, world, how);
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
    return st == UCS_OK ? GPURMA_SUCCESS : gpurma_ucx_error(st, "mem_map");
}

/* Fills this rank's blob: worker address and rkeys of data and signals. */
static int publish(gpurma_port_t *port, struct gpurma_win_s *w, ucx_blob_t *b)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    struct gpurma_port_ucx_win *uw = gpurma_ucx_win(w);
    ucp_address_t *addr;
    size_t addr_len, dkey_len = 0, skey_len = 0;
    void *dkey = NULL, *skey = NULL;
    ucs_status_t st = ucp_worker_get_address(u->worker, &addr, &addr_len);
    if (st != UCS_OK)
        return gpurma_ucx_error(st, "worker_get_address");
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
        gpurma_ucx_region_add(u, w, data, w->bytes, signals, sig_len);
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

/* Whether UCX gave the endpoint a lane with atomics of the network; UCX
 * 1.13 says so only in its description of the endpoint ("amo#" beside a
 * lane; without one it would emulate atomics with messages). */
static int has_amo_lane(ucp_ep_h ep)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return 0;
    ucp_ep_print_info(ep, f);
    fclose(f);
    int found = text && strstr(text, " amo#") != NULL;
    free(text);
    return found;
}

static int connect_peer(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                        const ucx_blob_t *b)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    struct gpurma_port_ucx_win *uw = gpurma_ucx_win(w);
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
            return gpurma_ucx_error(st, "ep_create");
        int native = has_amo_lane(u->eps[world]);
        if (native)
            __atomic_or_fetch(&u->peer_flags[world], PEER_NATIVE_AMO, __ATOMIC_RELAXED);
        GPURMA_INFO(GPURMA_SUB_PORT, "UCX atomics to rank %d: %s", world,
                    native ? "UCX's (a lane with network atomics)"
                           : "active message request and reply");
    }
    uw->data_raddr[peer] = b->data_addr;
    uw->sig_raddr[peer] = b->sig_addr;
    if (b->data_key_len)
        st = ucp_ep_rkey_unpack(u->eps[world], b->bytes + b->addr_len, &uw->data_rkey[peer]);
    if (st == UCS_OK && b->sig_key_len)
        st = ucp_ep_rkey_unpack(u->eps[world], b->bytes + b->addr_len + b->data_key_len,
                                &uw->sig_rkey[peer]);
    return st == UCS_OK ? GPURMA_SUCCESS : gpurma_ucx_error(st, "rkey_unpack");
}

int gpurma_ucx_win_connect(gpurma_port_t *port, struct gpurma_win_s *w,
                           const gpurma_exchange_t *ex, int local_failure)
{
    int rc = local_failure;
    pthread_mutex_lock(&w->ctx->lock);
    if (!rc && !gpurma_ucx_of(port))
        rc = ucx_open(port);
    pthread_mutex_unlock(&w->ctx->lock);
    struct gpurma_port_ucx_win *uw = gpurma_port_win(w) ? calloc(1, sizeof(*uw)) : NULL;
    if (uw) {
        uw->data_rkey = calloc((size_t)w->size, sizeof(ucp_rkey_h));
        uw->sig_rkey = calloc((size_t)w->size, sizeof(ucp_rkey_h));
        uw->data_raddr = calloc((size_t)w->size, sizeof(uint64_t));
        uw->sig_raddr = calloc((size_t)w->size, sizeof(uint64_t));
    }
    if (gpurma_port_win(w))
        gpurma_port_win(w)->xwin[gpurma_ucx_slot()] = uw;
    if (!rc && (!uw || !uw->data_rkey || !uw->sig_rkey || !uw->data_raddr || !uw->sig_raddr))
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX window: out of memory");
    ucx_blob_t *mine = calloc(1, sizeof(*mine));
    ucx_blob_t *all = calloc((size_t)w->size, sizeof(*all));
    if (!mine || !all) {
        free(mine);
        free(all);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX window: out of memory");
    }
    if (!rc) {
        pthread_mutex_lock(&port->exec_lock);
        rc = publish(port, w, mine);
        pthread_mutex_unlock(&port->exec_lock);
    }
    mine->status = rc;
    int xrc = ex->allgather(ex, mine, all, sizeof(*mine));
    if (xrc && !rc)
        rc = xrc;
    if (!rc) {
        pthread_mutex_lock(&port->exec_lock);
        for (int i = 0; !rc && i < w->size; i++) {
            if (all[i].status)
                rc = gpurma_set_error(all[i].status, "UCX setup failed on team rank %d", i);
            else if (gpurma_port_xports[gpurma_port_win(w)->xport[i]] == &gpurma_port_xport_ucx)
                rc = connect_peer(port, w, i, &all[i]);
        }
        pthread_mutex_unlock(&port->exec_lock);
    }
    free(mine);
    free(all);
    return rc;
}

void gpurma_ucx_win_release(gpurma_port_t *port, struct gpurma_win_s *w)
{
    struct gpurma_port_ucx_win *uw = gpurma_ucx_win(w);
    if (!uw)
        return;
    /* rkeys and registrations exist only where the port (and its UCX) did. */
    if (port)
        pthread_mutex_lock(&port->exec_lock);
    for (int i = 0; i < w->size; i++) {
        if (uw->data_rkey && uw->data_rkey[i])
            ucp_rkey_destroy(uw->data_rkey[i]);
        if (uw->sig_rkey && uw->sig_rkey[i])
            ucp_rkey_destroy(uw->sig_rkey[i]);
    }
    if (port && gpurma_ucx_of(port))
        gpurma_ucx_region_remove(gpurma_ucx_of(port), w);
    if (port && gpurma_ucx_of(port) && uw->data_memh)
        ucp_mem_unmap(gpurma_ucx_of(port)->context, uw->data_memh);
    if (port && gpurma_ucx_of(port) && uw->sig_memh)
        ucp_mem_unmap(gpurma_ucx_of(port)->context, uw->sig_memh);
    if (port)
        pthread_mutex_unlock(&port->exec_lock);
    free(uw->data_rkey);
    free(uw->sig_rkey);
    free(uw->data_raddr);
    free(uw->sig_raddr);
    free(uw);
    gpurma_port_win(w)->xwin[gpurma_ucx_slot()] = NULL;
}

/* Before the endpoints close: every live peer is told (AM_BYE), so that
 * one still in finalize's barrier does not take the close for a death.
 * Waits for the messages at most BYE_WAIT_NS: the dead hold nothing up. */
#define BYE_WAIT_NS 100000000ull

static void say_bye(gpurma_port_t *port, struct gpurma_port_ucx *u)
{
    struct gpurma_ctx_s *ctx = port->ctx;
    void **reqs = calloc((size_t)ctx->size, sizeof(void *));
    ucp_request_param_t p = gpurma_ucx_eager_params();
    for (int r = 0; reqs && r < ctx->size; r++) {
        if (!u->eps[r] || __atomic_load_n(&ctx->dead[r], __ATOMIC_ACQUIRE))
            continue;
        ucs_status_ptr_t req =
            ucp_am_send_nbx(u->eps[r], AM_BYE, &u->me, sizeof(u->me), NULL, 0, &p);
        reqs[r] = UCS_PTR_IS_PTR(req) ? req : NULL;
    }
    uint64_t start = gpurma_now_ns();
    for (int r = 0; reqs && r < ctx->size; r++) {
        while (reqs[r] && ucp_request_check_status(reqs[r]) == UCS_INPROGRESS &&
               gpurma_now_ns() - start < BYE_WAIT_NS)
            ucp_worker_progress(u->worker);
        if (reqs[r])
            ucp_request_free(reqs[r]); /* UCX releases it when it is done */
    }
    free(reqs);
}

void gpurma_ucx_close(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = gpurma_ucx_of(port);
    if (!u)
        return;
    gpurma_ucx_wait_local(port);
    say_bye(port, u);
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
    free(u->peer_flags);
    free(u->pending);
    free(u->staged); /* its buffers went with wait_local, or leak with a stuck UCX */
    /* Unpublished before it goes, so that nothing that looks finds it freed. */
    __atomic_store_n(&port->xstate[gpurma_ucx_slot()], NULL, __ATOMIC_RELEASE);
    free(u);
}
