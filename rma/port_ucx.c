/*
 * port_ucx.c - the port engine's UCX transport: RMA and 64-bit atomics with
 * ucp_put_nbx, ucp_get_nbx and ucp_atomic_op_nbx, ordered by
 * ucp_worker_fence, completed by waiting on requests (local) and by
 * ucp_worker_flush_nbx (remote). Worker addresses and rkeys are exchanged
 * through the window's team when a window is created.
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
 * Descriptors are executed under the port's exec_lock (the proxy thread,
 * or a waiting thread of the host backend). Window creation and release run
 * in application threads, several at once when windows of different teams
 * are made in different threads: they take exec_lock too for their UCX
 * calls (addresses, registrations, endpoints, rkeys) and for the endpoint
 * table, so that two of them never make two endpoints to one peer and the
 * worker is never entered by two threads, even where UCX was built without
 * thread support (the worker still asks for UCS_THREAD_MODE_MULTI). The
 * exchange between those steps runs without it: it may need the proxy.
 * Endpoints use peer error handling: a dead peer fails the requests to it
 * instead of hanging them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Every peer this node does not map (window.c: other nodes, and private
 * memory on a team spanning nodes); without UCX the transport takes them
 * too, to say why the window cannot reach them. */
static int ucx_reach(const struct gpurma_win_s *w, int peer)
{
    return w->peers[peer].path == GPURMA_DEV_PATH_NONE;
}

#ifndef HAVE_UCX

static int no_ucx_connect(gpurma_port_t *port, void **state, struct gpurma_win_s *w,
                          const gpurma_exchange_t *ex, int rc, void **wstate)
{
    (void)port, (void)state, (void)ex, (void)wstate;
    if (!w->spans_nodes || rc)
        return rc;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "peers on other nodes need UCX, which this build lacks "
                            "(configure --with-ucx)");
}

const gpurma_port_xport_t gpurma_port_xport_ucx = {
    .name    = "UCX",
    .reach   = ucx_reach,
    .connect = no_ucx_connect,
};

#else /* HAVE_UCX */

#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

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
    AM_BYE /* the sender is in finalize: its endpoint closing next is no death */
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

/* This transport's place in the port engine's list: where its state is
 * kept per context (port->xstate) and per window (xwin). */
static int ucx_wait_local(gpurma_port_t *port);

static int ucx_slot(void)
{
    static int slot = -1;
    if (slot < 0)
        for (int i = 0; i < gpurma_port_nxports; i++)
            if (gpurma_port_xports[i] == &gpurma_port_xport_ucx)
                slot = i;
    return slot;
}

/* The context's UCX, or NULL: window creation opens it in an application
 * thread while the proxy thread is already running. */
static struct gpurma_port_ucx *ucx_of(const gpurma_port_t *port)
{
    return (struct gpurma_port_ucx *)__atomic_load_n(&port->xstate[ucx_slot()], __ATOMIC_ACQUIRE);
}

static struct gpurma_port_ucx_win *ucx_win(const struct gpurma_win_s *w)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    return pw ? (struct gpurma_port_ucx_win *)pw->xwin[ucx_slot()] : NULL;
}


static int ucx_error(ucs_status_t st, const char *what)
{
    return gpurma_set_error(st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
                                    st == UCS_ERR_UNREACHABLE
                                ? GPURMA_ERR_PEER_FAILED
                                : GPURMA_ERR_TRANSPORT,
                            "UCX %s: %s", what, ucs_status_string(st));
}

/* ------------------------------------------------------ active messages */

/* An eager active message: never rendezvous, which would need the target
 * to fetch the data in a second step. */
static ucp_request_param_t eager_params(void)
{
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
    return p;
}

/* What a send returns once this context is stuck (ucx_wait_local). */
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
        !am_target_ok(ucx_of(port), h.data_addr, len, with_sig, h.sig_addr))
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
    struct gpurma_port_ucx *u = ucx_of(port);
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
    __atomic_fetch_add(&ucx_of(port)->replies, 1, __ATOMIC_RELEASE);
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
    struct gpurma_port_ucx *u = ucx_of(port);
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
    ucp_request_param_t p = eager_params();
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
    struct gpurma_port_ucx *u = ucx_of(port);
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
    struct gpurma_port_ucx *u = ucx_of(port);
    if (!(__atomic_fetch_or(&u->peer_flags[origin], PEER_FINISHED, __ATOMIC_RELEASE) &
          PEER_FINISHED))
        __atomic_fetch_add(&u->nfinished, 1, __ATOMIC_RELEASE);
    return UCS_OK;
}

/* Whether world rank r will never answer: dead, or finished (said bye:
 * a peer in finalize answers no probe and no atomic, and a healthy job
 * has none in flight to it by then). */
static int peer_gone(const gpurma_port_t *port, const struct gpurma_port_ucx *u, int r)
{
    return __atomic_load_n(&port->ctx->dead[r], __ATOMIC_ACQUIRE) ||
           (__atomic_load_n(&u->peer_flags[r], __ATOMIC_ACQUIRE) & PEER_FINISHED);
}

/* Whether any peer may be gone (the cheap test before a scan). */
static int any_gone(const gpurma_port_t *port, const struct gpurma_port_ucx *u)
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

/* UCX's transports listen on every device they use: keep them to the one
 * the job already talks over (GPURMA_UCX_NET_DEVICES, else the uid
 * bootstrap's address), unless the user chose with UCX_NET_DEVICES. */
static void choose_net_devices(gpurma_port_t *port, ucp_config_t *config)
{
    const char *want = gpurma_config()->ucx_net_devices;
    char ifname[IF_NAMESIZE + 1] = "";
    if (!*want && !getenv("UCX_NET_DEVICES") && !strcmp(port->ctx->bs->ops->name, "uid")) {
        const char *addr = *gpurma_config()->uid_iface ? gpurma_config()->uid_iface
                                                       : getenv("MASTER_ADDR");
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
         (st = set_handler(u->worker, AM_QUIET_REPLY, am_quiet_reply, port)) != UCS_OK ||
         (st = set_handler(u->worker, AM_ATOMIC, am_atomic, port)) != UCS_OK ||
         (st = set_handler(u->worker, AM_ATOMIC_REPLY, am_atomic_reply, port)) != UCS_OK ||
         (st = set_handler(u->worker, AM_BYE, am_bye, port)) != UCS_OK))
        ucp_worker_destroy(u->worker);
    if (st != UCS_OK) {
        ucp_cleanup(u->context);
        free(u->eps);
        free(u->am_sent);
        free(u->peer_flags);
        free(u);
        return ucx_error(st, "worker_create");
    }
    pthread_mutex_init(&u->region_lock, NULL);
    u->me = (uint32_t)ctx->rank;
    for (int i = 0; i < AM_HDR_RING; i++)
        u->aslot[i].world = -1;
    /* The proxy thread is running and looks at the state without a lock. */
    __atomic_store_n(&port->xstate[ucx_slot()], u, __ATOMIC_RELEASE);
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
        if (ucx_of(port) && ucx_of(port)->eps[r] == ep)
            world = r;
    if (__atomic_load_n(&ctx->finalizing, __ATOMIC_ACQUIRE) || world < 0 ||
        (__atomic_load_n(&ucx_of(port)->peer_flags[world], __ATOMIC_ACQUIRE) & PEER_FINISHED)) {
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
    return st == UCS_OK ? GPURMA_SUCCESS : ucx_error(st, "mem_map");
}

/* Fills this rank's blob: worker address and rkeys of data and signals. */
static int publish(gpurma_port_t *port, struct gpurma_win_s *w, ucx_blob_t *b)
{
    struct gpurma_port_ucx *u = ucx_of(port);
    struct gpurma_port_ucx_win *uw = ucx_win(w);
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
    struct gpurma_port_ucx *u = ucx_of(port);
    struct gpurma_port_ucx_win *uw = ucx_win(w);
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
    return st == UCS_OK ? GPURMA_SUCCESS : ucx_error(st, "rkey_unpack");
}

static int ucx_win_connect(gpurma_port_t *port, struct gpurma_win_s *w,
                           const gpurma_exchange_t *ex, int local_failure)
{
    int rc = local_failure;
    pthread_mutex_lock(&w->ctx->lock);
    if (!rc && !ucx_of(port))
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
        gpurma_port_win(w)->xwin[ucx_slot()] = uw;
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

static void ucx_win_release(gpurma_port_t *port, struct gpurma_win_s *w)
{
    struct gpurma_port_ucx_win *uw = ucx_win(w);
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
    if (port && ucx_of(port))
        region_remove(ucx_of(port), w);
    if (port && ucx_of(port) && uw->data_memh)
        ucp_mem_unmap(ucx_of(port)->context, uw->data_memh);
    if (port && ucx_of(port) && uw->sig_memh)
        ucp_mem_unmap(ucx_of(port)->context, uw->sig_memh);
    if (port)
        pthread_mutex_unlock(&port->exec_lock);
    free(uw->data_rkey);
    free(uw->sig_rkey);
    free(uw->data_raddr);
    free(uw->sig_raddr);
    free(uw);
    gpurma_port_win(w)->xwin[ucx_slot()] = NULL;
}

/* Before the endpoints close: every live peer is told (AM_BYE), so that
 * one still in finalize's barrier does not take the close for a death.
 * Waits for the messages at most BYE_WAIT_NS: the dead hold nothing up. */
#define BYE_WAIT_NS 100000000ull
static void say_bye(gpurma_port_t *port, struct gpurma_port_ucx *u)
{
    struct gpurma_ctx_s *ctx = port->ctx;
    void **reqs = calloc((size_t)ctx->size, sizeof(void *));
    ucp_request_param_t p = eager_params();
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

static void ucx_close(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = ucx_of(port);
    if (!u)
        return;
    ucx_wait_local(port);
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
    free(u);
    __atomic_store_n(&port->xstate[ucx_slot()], NULL, __ATOMIC_RELEASE);
}

/* Keeps a request until wait_local; reports immediate failures. */
static int track(struct gpurma_port_ucx *u, ucs_status_ptr_t req, const char *what)
{
    if (u->stuck && UCS_PTR_IS_PTR(req)) {
        ucp_request_free(req); /* released by UCX when it completes */
        return gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                "UCX %s: earlier requests of this rank never completed (timeout); "
                                "its UCX sends no more", what);
    }
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
    return ucx_of(port)->eps[w->team->world_ranks[peer]];
}

/* One active message: n <= AM_MAX_PAYLOAD bytes to dst_off of the peer's
 * window and, unless op is AM_NO_SIGNAL, a signal after them. The header
 * lives in the ring until the message completes locally. */
static int am_send(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const void *src,
                   uint64_t dst_off, size_t n, uint32_t sig, uint32_t op, uint64_t value)
{
    struct gpurma_port_ucx *u = ucx_of(port);
    int rc;
    if (u->stuck)
        return stuck_error();
    if (u->nhdr == AM_HDR_RING && (rc = ucx_wait_local(port)))
        return rc;
    am_hdr_t *h = &u->hdr[u->nhdr++];
    h->data_addr = n ? ucx_win(w)->data_raddr[peer] + dst_off : 0;
    h->sig_addr = op == AM_NO_SIGNAL
                      ? 0
                      : ucx_win(w)->sig_raddr[peer] + (uint64_t)sig * sizeof(gpurma_dev_signal_slot_t);
    h->value = value;
    h->origin = (uint32_t)w->rank;
    h->op = op;
    u->am_sent[w->team->world_ranks[peer]] = 1;
    ucp_request_param_t p = eager_params();
    return track(u, ucp_am_send_nbx(ep_of(port, w, peer), AM_PUT_SIGNAL, h, sizeof(*h), src, n, &p),
                 op == AM_NO_SIGNAL ? "put" : "put_signal");
}

/* A put into host memory as full messages, all but the last (at most
 * AM_MAX_PAYLOAD) bytes, whose count is left in *rest for the caller. */
static int am_put_body(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const char *src,
                       uint64_t dst_off, size_t n, size_t *rest)
{
    size_t done = 0;
    int rc = GPURMA_SUCCESS;
    while (!rc && n - done > AM_MAX_PAYLOAD) {
        rc = am_send(port, w, peer, src + done, dst_off + done, AM_MAX_PAYLOAD, 0, AM_NO_SIGNAL,
                     0);
        done += AM_MAX_PAYLOAD;
    }
    *rest = n - done;
    return rc;
}

static int ucx_put(gpurma_port_t *port, struct gpurma_win_s *w, int peer, const void *src,
                        uint64_t dst_off, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    if (!w->gpu) {
        size_t rest;
        int rc = am_put_body(port, w, peer, src, dst_off, n, &rest);
        return rc ? rc
                  : am_send(port, w, peer, (const char *)src + (n - rest), dst_off + (n - rest),
                            rest, 0, AM_NO_SIGNAL, 0);
    }
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    return track(ucx_of(port),
                 ucp_put_nbx(ep_of(port, w, peer), src, n, ucx_win(w)->data_raddr[peer] + dst_off,
                             ucx_win(w)->data_rkey[peer], &p),
                 "put");
}

static int ucx_get(gpurma_port_t *port, struct gpurma_win_s *w, int peer, void *dst,
                        uint64_t src_off, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    return track(ucx_of(port),
                 ucp_get_nbx(ep_of(port, w, peer), dst, n, ucx_win(w)->data_raddr[peer] + src_off,
                             ucx_win(w)->data_rkey[peer], &p),
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
    struct gpurma_port_ucx *u = ucx_of(port);
    /* The signal must land after the puts issued before it. */
    ucs_status_t st = ucp_worker_fence(u->worker);
    if (st != UCS_OK)
        return ucx_error(st, "worker_fence");
    int rc = GPURMA_SUCCESS;
    if (w->gpu) {
        /* The target's CPU does not write device windows: an RMA put,
         * fenced, then the signal as a UCX atomic. */
        if (n && !(rc = ucx_put(port, w, peer, src, dst_off, n)) &&
            (st = ucp_worker_fence(u->worker)) != UCS_OK)
            rc = ucx_error(st, "worker_fence");
        if (rc)
            return rc;
        uint64_t raddr =
            ucx_win(w)->sig_raddr[peer] + (uint64_t)sig * sizeof(gpurma_dev_signal_slot_t);
        ucp_ep_h ep = ep_of(port, w, peer);
        ucp_rkey_h rkey = ucx_win(w)->sig_rkey[peer];
        if (op == GPURMA_SIGNAL_ADD)
            return track(u, atomic_op(ep, UCP_ATOMIC_OP_ADD, value, raddr, rkey, NULL),
                         "signal add");
        return track(u, atomic_op(ep, UCP_ATOMIC_OP_SWAP, value, raddr, rkey, &u->scratch),
                     "signal set");
    }
    /* The last message carries the tail of the payload and the signal. */
    size_t rest = 0;
    if (n && (rc = am_put_body(port, w, peer, src, dst_off, n, &rest)))
        return rc;
    return am_send(port, w, peer, (const char *)src + (n - rest), dst_off + (n - rest), rest, sig,
                   (uint32_t)op, *value);
}

/* An atomic as a request message; the reply fills *old (am_atomic_reply)
 * before wait_local returns. */
static int am_atomic_send(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                          gpurma_atomic_kind_t kind, uint64_t off, uint64_t value,
                          uint64_t compare, uint64_t *old)
{
    struct gpurma_port_ucx *u = ucx_of(port);
    int rc;
    if (u->stuck)
        return stuck_error();
    if (u->natomic == AM_HDR_RING && (rc = ucx_wait_local(port)))
        return rc;
    if (u->natomic >= AM_HDR_RING) /* wait_local frees the entries; never past the table */
        return gpurma_set_error(GPURMA_ERR_INTERNAL, "UCX atomic: no free entry after a wait");
    int i = u->natomic++, world = w->team->world_ranks[peer];
    u->aslot[i] = (atomic_slot_t){old, ++u->aseq, world};
    u->aopen++;
    u->areq[i] = (am_atomic_t){.addr = ucx_win(w)->data_raddr[peer] + off, .value = value,
                               .compare = compare, .seq = u->aseq, .slot = (uint32_t)i,
                               .origin = u->me, .kind = (uint32_t)kind};
    ucp_request_param_t p = eager_params();
    rc = track(u, ucp_am_send_nbx(u->eps[world], AM_ATOMIC, &u->areq[i], sizeof(u->areq[i]),
                                  NULL, 0, &p),
               "atomic");
    if (rc) { /* no reply will come */
        u->aslot[i].world = -1;
        u->aopen--;
    }
    return rc;
}

static int ucx_atomic(gpurma_port_t *port, struct gpurma_win_s *w, int peer,
                           gpurma_atomic_kind_t kind, uint64_t off, const uint64_t *value,
                           const uint64_t *compare, uint64_t *old)
{
    struct gpurma_port_ucx *u = ucx_of(port);
    if (!w->gpu && !(u->peer_flags[w->team->world_ranks[peer]] & PEER_NATIVE_AMO))
        return am_atomic_send(port, w, peer, kind, off, *value, *compare, old);
    uint64_t raddr = ucx_win(w)->data_raddr[peer] + off;
    ucp_rkey_h rkey = ucx_win(w)->data_rkey[peer];
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

static int ucx_fence(gpurma_port_t *port, void *state)
{
    (void)state;
    ucs_status_t st = ucp_worker_fence(ucx_of(port)->worker);
    return st == UCS_OK ? GPURMA_SUCCESS : ucx_error(st, "worker_fence");
}

/* The replies of the atomics in flight. A target that dies takes its
 * replies with it: its atomics fail at once, the others are still waited
 * for. Past the timeout every one fails, and this context sends no more
 * (a late reply would find its entry reused). */
static int wait_atomics(gpurma_port_t *port, struct gpurma_port_ucx *u, uint64_t start, int rc)
{
    struct gpurma_ctx_s *ctx = port->ctx;
    int dead = -1;
    while (u->aopen) {
        if (ucp_worker_progress(u->worker))
            continue;
        for (int i = 0; any_gone(port, u) && i < u->natomic; i++) {
            atomic_slot_t *s = &u->aslot[i];
            if (s->world >= 0 && peer_gone(port, u, s->world)) {
                dead = s->world;
                s->world = -1;
                u->aopen--;
            }
        }
        if (u->aopen && gpurma_now_ns() - start > ctx->timeout_ns) {
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

static int ucx_wait_local(gpurma_port_t *port)
{
    struct gpurma_port_ucx *u = ucx_of(port);
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
    /* The entries are free again once no reply is awaited, also when none
     * was (every send failed at once, as to a target that is gone): left
     * counted, the next atomics ran past the table into the fields after
     * it (peer_flags), and later reads of those crashed. */
    if (u->aopen)
        rc = wait_atomics(port, u, start, rc);
    else
        u->natomic = 0;
    return rc;
}

static int ucx_quiet(gpurma_port_t *port, void *state)
{
    (void)state;
    struct gpurma_port_ucx *u = ucx_of(port);
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    int rc = track(u, ucp_worker_flush_nbx(u->worker, &p), "worker_flush");
    if (!rc)
        rc = ucx_wait_local(port);
    /* Flush covers RMA and atomics; active messages are confirmed by a
     * probe, fenced behind them, that each target answers. */
    uint64_t want = __atomic_load_n(&u->replies, __ATOMIC_ACQUIRE);
    ucs_status_t st = rc ? UCS_OK : ucp_worker_fence(u->worker);
    if (st != UCS_OK)
        rc = ucx_error(st, "worker_fence");
    int dead = -1;
    for (int r = 0; !rc && r < port->ctx->size; r++) {
        if (!u->am_sent[r] || !u->eps[r])
            continue;
        u->am_sent[r] = 0;
        if (peer_gone(port, u, r)) {
            dead = r; /* its messages are lost with it: no probe to wait for */
            continue;
        }
        u->am_sent[r] = AM_PROBED;
        want++;
        rc = track(u, ucp_am_send_nbx(u->eps[r], AM_QUIET_PROBE, &u->me, sizeof(u->me), NULL, 0,
                                      &p),
                   "quiet probe");
    }
    if (!rc)
        rc = ucx_wait_local(port);
    uint64_t start = gpurma_now_ns();
    while (!rc && dead < 0 && __atomic_load_n(&u->replies, __ATOMIC_ACQUIRE) < want) {
        ucp_worker_progress(u->worker);
        if (any_gone(port, u))
            for (int r = 0; r < port->ctx->size && dead < 0; r++)
                if (u->am_sent[r] == AM_PROBED && peer_gone(port, u, r))
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
    return (int)ucp_worker_progress(ucx_of(port)->worker);
}

/* ------------------------------------------------------------ transport */

/* Collective over a team that spans nodes; nothing to do otherwise. */
static int ucx_connect(gpurma_port_t *port, void **state, struct gpurma_win_s *w,
                       const gpurma_exchange_t *ex, int rc, void **wstate)
{
    (void)state, (void)wstate; /* ucx_open publishes, connect fills xwin */
    return w->spans_nodes ? ucx_win_connect(port, w, ex, rc) : rc;
}

static void ucx_release(gpurma_port_t *port, void *state, struct gpurma_win_s *w, void *wstate)
{
    (void)state;
    if (wstate)
        ucx_win_release(port, w);
}

static void ucx_stop(gpurma_port_t *port, void *state)
{
    if (state)
        ucx_close(port);
}

/* The network keeps aligned 8-byte words whole (as LL over RDMA relies on):
 * packed here, then one put, complete before the staging goes. */
static int put_packets(gpurma_port_t *port, struct gpurma_win_s *w, const gpurma_port_desc_t *d)
{
    size_t len = gpurma_dev__packet_bytes(d->size, gpurma_port_packet_size(d));
    uint64_t *staging = malloc(len ? len : 1);
    if (!staging)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "port: LL packet staging");
    gpurma_dev__store_packets(staging, gpurma_port_src(w, d), d->size, (uint32_t)d->value,
                              gpurma_port_packet_size(d), 0, 1);
    int rc = ucx_put(port, w, d->peer, staging, d->dst, len);
    if (!rc)
        rc = ucx_wait_local(port);
    if (!ucx_of(port)->stuck) /* else UCX may still read it: left to leak */
        free(staging);
    return rc;
}

static int ucx_exec(gpurma_port_t *port, void *state, struct gpurma_win_s *w, void *wstate,
                    const gpurma_port_desc_t *d, uint64_t *result)
{
    (void)state, (void)wstate;
    switch (d->op) {
    case GPURMA_PORT_OP_PUT:
        if (d->flags & GPURMA_PORT_F_PACKETS)
            return put_packets(port, w, d);
        return ucx_put(port, w, d->peer, gpurma_port_src(w, d), d->dst, d->size);
    case GPURMA_PORT_OP_PUT_SIGNAL:
    case GPURMA_PORT_OP_SIGNAL:
        return ucx_put_signal(port, w, d->peer, gpurma_port_src(w, d), d->dst,
                              d->op == GPURMA_PORT_OP_SIGNAL ? 0 : d->size, d->signal,
                              (gpurma_signal_op_t)d->signal_op, &d->value);
    case GPURMA_PORT_OP_GET:
        return ucx_get(port, w, d->peer, gpurma_port_get_dst(w, d), d->src, d->size);
    case GPURMA_PORT_OP_PUT_VALUE: /* little-endian: the low bytes are the value */
        return ucx_put(port, w, d->peer, &d->value, d->dst, d->size);
    case GPURMA_PORT_OP_FETCH_ADD:
    case GPURMA_PORT_OP_SWAP:
    case GPURMA_PORT_OP_CAS:
        return ucx_atomic(port, w, d->peer,
                          (gpurma_atomic_kind_t)(d->op - GPURMA_PORT_OP_FETCH_ADD), d->dst,
                          &d->value, &d->compare, result);
    }
    return GPURMA_ERR_INTERNAL;
}

static int ucx_complete(gpurma_port_t *port, void *state)
{
    (void)state;
    return ucx_wait_local(port);
}
const gpurma_port_xport_t gpurma_port_xport_ucx = {
    .name     = "UCX",
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

#endif /* HAVE_UCX */
