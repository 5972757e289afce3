/*
 * window.c - collective window creation and destruction, and queries.
 *
 * Creation is two exchanges over the team: first every rank publishes how
 * to reach its window (segment name, sizes, pid, status); after mapping its
 * peers every rank publishes whether that worked. A rank that fails locally
 * still takes part in both, so an error anywhere fails the call everywhere
 * instead of leaving the others waiting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gpu.h"
#include "port.h"

#define ROUND_UP(x, a) (((x) + (a)-1) / (a) * (a))

typedef struct win_wire {
    uint64_t size;
    uint64_t seg_len;
    uint64_t remote_base;
    int32_t  pid;
    int32_t  status;
    uint32_t num_signals;
    int32_t  engine;
    uint32_t kind;
    uint32_t pad;
    char     shm_name[GPURMA_SHM_NAME_MAX];
    int32_t  on_gpu; /* the window lives in device memory (gpu below) */
    int32_t  pad2;
    gpurma_gpu_export_t gpu; /* CUDA IPC handles and offsets */
} win_wire_t;

static gpurma_seg_layout_t seg_layout(gpurma_win_kind_t kind, size_t size, uint32_t num_signals)
{
    gpurma_seg_layout_t l;
    l.data_len    = kind == GPURMA_WIN_ALLOCATED ? ROUND_UP(size, 64) : 0;
    l.signals_off = l.data_len;
    l.lock_off    = l.signals_off + ROUND_UP((size_t)num_signals * sizeof(gpurma_dev_signal_slot_t), 64);
    l.total       = l.lock_off + ROUND_UP(sizeof(pthread_mutex_t), 64);
    return l;
}

static int parse_engine(const char *s, gpurma_engine_t *out)
{
    static const char *const names[] = {"auto", "mem", "port", "switch"};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i])) {
            *out = (gpurma_engine_t)i;
            return GPURMA_SUCCESS;
        }
    return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                            "GPURMA_ENGINE=%s is not one of auto, mem, port, switch", s);
}

/* The switch engine drives NVLink multicast, which must stay off wherever a
 * site or another library has said so. */
static int switch_refusal(void)
{
    const char *v;
    if ((v = getenv("NCCL_NVLS_ENABLE")) && !strcmp(v, "0"))
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch engine refused: NCCL_NVLS_ENABLE=0 is set");
    if ((v = getenv("NVSHMEM_DISABLE_NVLS")) && strcmp(v, "0"))
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch engine refused: NVSHMEM_DISABLE_NVLS=%s is set", v);
    if (gpurma_config()->disable_switch)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch engine refused: GPURMA_DISABLE_SWITCH is set");
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "switch engine needs NVLink multicast, which this build does not use");
}

/* Settles the parameters; any failure is reported through the exchange. */
static int resolve_params(const gpurma_win_params_t *p, gpurma_win_kind_t kind, void *user_base,
                          size_t size, int have_gpu, uint32_t *nsig, uint32_t *ncnt,
                          gpurma_engine_t *engine, uint32_t *ncontexts)
{
    const gpurma_config_t *cfg = gpurma_config();
    uint64_t mask = p ? p->field_mask : 0;
    *nsig = (mask & GPURMA_WIN_FIELD_NUM_SIGNALS) ? p->num_signals : (uint32_t)cfg->num_signals;
    *ncnt = (mask & GPURMA_WIN_FIELD_NUM_COUNTERS) ? p->num_counters : (uint32_t)cfg->num_counters;
    if (*nsig > (1u << 20) || *ncnt > (1u << 20))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "num_signals %u / num_counters %u: at most 1048576 each", *nsig,
                                *ncnt);
    int rc = parse_engine(cfg->engine, engine);
    if (rc)
        return rc;
    if (mask & GPURMA_WIN_FIELD_ENGINE)
        *engine = p->engine;
    *ncontexts = (mask & GPURMA_WIN_FIELD_CONTEXTS) ? p->contexts : (uint32_t)cfg->port_contexts;
    if (*ncontexts < 1 || *ncontexts > GPURMA_DEV_MAX_PORTS)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "contexts %u: a window spreads over 1 to %d proxy contexts",
                                *ncontexts, GPURMA_DEV_MAX_PORTS);
    if ((int)*engine < GPURMA_ENGINE_AUTO || *engine > GPURMA_ENGINE_SWITCH)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "unknown engine %d", (int)*engine);
    if (*engine == GPURMA_ENGINE_SWITCH)
        return switch_refusal();
    if ((mask & GPURMA_WIN_FIELD_MEM_KIND) && p->mem_kind == GPURMA_MEM_DEVICE && !have_gpu)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "device memory requested but no GPU is in use (host backend)");
    if (kind == GPURMA_WIN_CREATED && size && !user_base)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_create: base is NULL for %zu bytes",
                                size);
    return GPURMA_SUCCESS;
}

static void win_release(struct gpurma_win_s *w)
{
    /* Descriptors naming the window (a barrier's last signal, say) are
     * executed before it leaves the proxy's table. */
    if (w->nports)
        gpurma_port_flush_all(w->ctx);
    for (uint32_t k = 0; k < w->nports; k++)
        gpurma_port_win_unregister(w->ports[k], w);
    gpurma_port_ucx_win_release(w->ctx->ports[0], w);
    free(w->xport);
    free(w->dev_peers);
    gpurma_gpu_win_close(w->gpu);
    w->gpu = NULL;
    if (w->maps)
        for (int i = 0; i < w->size; i++)
            gpurma_shm_detach(w->maps[i].addr, w->maps[i].len);
    free(w->peers);
    free(w->engines);
    free(w->maps);
    free(w->pids);
    free(w->remote_base);
    free(w->atomic_locks);
    free(w->counters);
}

/* Cross-memory attach may be forbidden (ptrace scope, seccomp); find out at
 * creation rather than on the first put. */
static int probe_cma(struct gpurma_win_s *w, int peer)
{
    char byte;
    struct iovec local = {&byte, 1}, remote = {(void *)(uintptr_t)w->remote_base[peer], 1};
    if (!w->peers[peer].size || w->pids[peer] == getpid())
        return GPURMA_SUCCESS;
    if (process_vm_readv(w->pids[peer], &local, 1, &remote, 1, 0) == 1)
        return GPURMA_SUCCESS;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "win_create on private memory reaches peers with process_vm_writev, "
                            "which failed for team rank %d (pid %d): %s; use gpurma_win_allocate "
                            "or allow ptrace between the job's processes",
                            peer, (int)w->pids[peer], strerror(errno));
}

/* The same on every rank of the team, so all take part in the UCX exchange. */
static int team_spans_nodes(const struct gpurma_team_s *team)
{
    const int *node_of = team->ctx->bs->node_of;
    for (int i = 1; i < team->size; i++)
        if (node_of[team->world_ranks[i]] != node_of[team->world_ranks[0]])
            return 1;
    return 0;
}

/* Maps every peer's segment (on this node) and fills the peer table. */
static int connect_peers(struct gpurma_win_s *w, const win_wire_t *wire, gpurma_engine_t engine,
                         void *own_seg, int spans_nodes)
{
    /* Atomics on private memory take a lock on the node, which UCX atomics
     * from other nodes would not: when those exist, every peer, this rank
     * included, is reached through UCX. */
    int all_ucx = spans_nodes && w->kind == GPURMA_WIN_CREATED;
    gpurma_bootstrap_t *bs = w->ctx->bs;
    int my_node = bs->node_of[w->ctx->rank];
    for (int i = 0; i < w->size; i++) {
        const win_wire_t *pw = &wire[i];
        int world = w->team->world_ranks[i];
        /* Device windows keep only signals and lock in the host segment. */
        gpurma_seg_layout_t l =
            seg_layout(w->gpu ? GPURMA_WIN_CREATED : w->kind, pw->size, pw->num_signals);
        int remote = bs->node_of[world] != my_node || all_ucx;
        gpurma_dev_peer_t *p = &w->peers[i];
        w->pids[i] = pw->pid;
        w->remote_base[i] = pw->remote_base;
        if (remote && w->gpu)
            return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                    "rank %d is on another node: windows in GPU memory reach "
                                    "only this node (copy engine) in this version",
                                    world);
        if (remote) {
            /* Only the proxy reaches it, over UCX. */
            p->size = pw->size;
            p->base = NULL;
            /* This rank's own slots are where its waits look. */
            p->signals = i == w->rank ? (gpurma_dev_signal_slot_t *)((char *)own_seg + l.signals_off)
                                      : NULL;
            p->engine = GPURMA_ENGINE_PORT;
            p->path = GPURMA_DEV_PATH_FIFO;
            w->engines[i] = &gpurma_engine_port_ops;
            w->xport[i] = GPURMA_XPORT_UCX;
            continue;
        }
        char *seg = own_seg;
        if (i != w->rank) {
            int rc = gpurma_shm_attach(pw->shm_name, l.total, (void **)&seg);
            if (rc)
                return rc;
            w->maps[i].addr = seg;
            w->maps[i].len  = l.total;
        }
        p->size    = pw->size;
        p->signals = (gpurma_dev_signal_slot_t *)(seg + l.signals_off);
        p->engine  = GPURMA_ENGINE_MEM;
        w->engines[i] = &gpurma_engine_mem_ops;
        if (w->gpu) {
            /* Device window: IPC mappings, reached by loads and stores from
             * kernels and by copies from the host. */
            char *data;
            gpurma_dev_signal_slot_t *signals;
            int rc = gpurma_gpu_win_map(w->gpu, &pw->gpu, i == w->rank, &data, &signals);
            if (rc)
                return rc;
            p->base = data;
            p->signals = signals;
            p->path = GPURMA_DEV_PATH_LOADSTORE;
            w->engines[i] = &gpurma_engine_gpu_ops;
        } else if (w->kind == GPURMA_WIN_ALLOCATED) {
            p->base = seg;
            p->path = GPURMA_DEV_PATH_LOADSTORE;
        } else {
            /* Every rank, this one included, goes through the library so that
             * atomics on the window all take the owner's lock. */
            p->base = NULL;
            p->path = GPURMA_DEV_PATH_HOSTCALL;
            w->atomic_locks[i] = (pthread_mutex_t *)(seg + l.lock_off);
            int rc = probe_cma(w, i);
            if (rc)
                return rc;
        }
        if (engine == GPURMA_ENGINE_PORT) {
            /* Forced through the proxy, which copies into the mapping above:
             * with the copy engine for GPU memory, memcpy for host memory. */
            p->engine = GPURMA_ENGINE_PORT;
            w->engines[i] = &gpurma_engine_port_ops;
            w->xport[i] = w->gpu ? GPURMA_XPORT_CE : GPURMA_XPORT_MEMCPY;
        }
    }
    /* Kernels read the peer table: give them a copy in device memory. */
    return w->gpu ? gpurma_gpu_win_publish(w->gpu, w->peers, w->size) : GPURMA_SUCCESS;
}

/* Registers the window with the context's proxy, exchanges UCX addresses and
 * keys when peers are on other nodes (collective: called by every rank, with
 * this rank's failure so far), and gives kernels a peer table in which the
 * proxy's peers are reached through the FIFO. */
static int connect_port(struct gpurma_win_s *w, const gpurma_exchange_t *ex, int rc, int ucx,
                        uint32_t ncontexts)
{
    for (uint32_t k = 0; !rc && k < ncontexts; k++) {
        gpurma_port_t *port = NULL;
        rc = gpurma_port_get(w->ctx, (int)k, &port);
        if (!rc)
            rc = gpurma_port_win_register(port, w, &w->port_ids[k]);
        if (!rc) {
            w->ports[k] = port;
            w->dev.ports[k] = port->dev_fifo ? port->dev_fifo : port->fifo;
            w->dev.port_win_ids[k] = w->port_ids[k];
            w->nports = w->dev.nports = k + 1;
        }
    }
    /* Peers on this node spread over the contexts; UCX peers stay with
     * context 0, which owns the UCX worker. */
    for (int i = 0, next = 0; i < w->size && w->nports; i++)
        if (w->engines[i] == &gpurma_engine_port_ops)
            w->peers[i].port =
                (int16_t)(w->xport[i] == GPURMA_XPORT_UCX ? 0 : next++ % (int)w->nports);
    if (ucx) {
        int urc = gpurma_port_ucx_win_connect(w->ports[0], w, ex, rc);
        if (!rc)
            rc = urc;
    }
    if (rc)
        return rc;
    w->dev_peers = malloc((size_t)w->size * sizeof(*w->dev_peers));
    if (!w->dev_peers)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "window: out of memory");
    for (int i = 0; i < w->size; i++) {
        w->dev_peers[i] = w->peers[i];
        if (w->engines[i] != &gpurma_engine_port_ops)
            continue;
        /* Only the proxy touches a port peer's memory: no pointers that a
         * kernel could write through behind the FIFO's back. This rank's
         * own entry keeps them for local reads (waits, LL reads). */
        w->dev_peers[i].path = GPURMA_DEV_PATH_FIFO;
        if (i != w->rank) {
            w->dev_peers[i].base = NULL;
            w->dev_peers[i].signals = NULL;
        }
    }
    /* Kernels of a GPU window read their own copy of the table. */
    return w->gpu ? gpurma_gpu_win_publish(w->gpu, w->dev_peers, w->size) : GPURMA_SUCCESS;
}

static int init_atomic_lock(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    /* A rank that dies holding the lock must not wedge the others. */
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    int err = pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return err ? gpurma_set_error(GPURMA_ERR_INTERNAL, "pthread_mutex_init: %s", strerror(err))
               : GPURMA_SUCCESS;
}

/* Agrees on one status over the team; the message of a failing rank is
 * named in the others' error. */
static int agree(const gpurma_exchange_t *ex, struct gpurma_win_s *w, int mine, const char *stage)
{
    int32_t *all = calloc((size_t)w->size, sizeof(*all));
    if (!all)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "window %s: out of memory", stage);
    int32_t me = mine;
    int rc = ex->allgather(ex, &me, all, sizeof(me));
    for (int i = 0; !rc && i < w->size; i++)
        if (all[i]) {
            rc = all[i];
            if (!mine)
                gpurma_set_error(rc, "window %s failed on team rank %d: %s", stage, i,
                                 gpurma_strerror(rc));
        }
    if (rc && mine)
        rc = mine; /* keep this rank's own, more precise message */
    free(all);
    return rc;
}

int gpurma_win_build(struct gpurma_team_s *team, const gpurma_exchange_t *ex,
                     gpurma_win_kind_t kind, void *user_base, size_t size,
                     const gpurma_win_params_t *p, int internal, struct gpurma_win_s **out)
{
    struct gpurma_ctx_s *ctx = team->ctx;
    uint32_t nsig = 0, ncnt = 0;
    gpurma_engine_t engine = GPURMA_ENGINE_AUTO;
    char own_name[GPURMA_SHM_NAME_MAX] = "";
    char *own_seg = NULL;
    gpurma_seg_layout_t l = {0, 0, 0, 0};
    win_wire_t *wire = NULL;

    struct gpurma_win_s *w = calloc(1, sizeof(*w));
    if (!w) /* cannot take part in the exchange: the peers will time out */
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "window: out of memory");
    uint32_t ncontexts = 1;
    int rc = resolve_params(p, kind, user_base, size, ctx->device >= 0, &nsig, &ncnt, &engine,
                            &ncontexts);
    /* GPU memory when the context uses a GPU, unless the caller asks for host
     * memory; win_create follows the buffer it is given. Team-internal
     * windows are read by the host and stay in host memory. */
    int on_gpu = 0;
    if (!rc && !internal && ctx->device >= 0) {
        int want_host = p && (p->field_mask & GPURMA_WIN_FIELD_MEM_KIND) &&
                        p->mem_kind == GPURMA_MEM_HOST;
        if (kind == GPURMA_WIN_ALLOCATED)
            on_gpu = !want_host;
        else
            on_gpu = size ? gpurma_gpu_is_device_ptr(user_base) : !want_host;
    }
    w->ctx = ctx;
    w->team = team;
    w->rank = team->rank;
    w->size = team->size;
    w->kind = kind;
    w->internal = internal;
    w->num_signals = nsig;
    w->num_counters = ncnt;
    w->bytes = size;
    if (!rc) {
        w->peers = calloc((size_t)w->size, sizeof(*w->peers));
        w->engines = calloc((size_t)w->size, sizeof(*w->engines));
        w->maps = calloc((size_t)w->size, sizeof(*w->maps));
        w->pids = calloc((size_t)w->size, sizeof(*w->pids));
        w->remote_base = calloc((size_t)w->size, sizeof(*w->remote_base));
        w->atomic_locks = calloc((size_t)w->size, sizeof(*w->atomic_locks));
        w->xport = calloc((size_t)w->size, sizeof(*w->xport));
        w->counters = calloc(ncnt ? ncnt : 1, sizeof(*w->counters));
        if (!w->peers || !w->engines || !w->maps || !w->pids || !w->remote_base ||
            !w->atomic_locks || !w->xport || !w->counters)
            rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "window tables: out of memory");
    }
    if (!rc) {
        l = seg_layout(on_gpu ? GPURMA_WIN_CREATED : kind, size, nsig);
        rc = gpurma_shm_create(l.total, own_name, (void **)&own_seg);
    }
    if (!rc) {
        gpurma_dev_signal_slot_t *slots = (gpurma_dev_signal_slot_t *)(own_seg + l.signals_off);
        for (uint32_t s = 0; s < nsig; s++)
            slots[s].last_origin = UINT32_MAX; /* "never signalled", for messages */
    }
    if (!rc && kind == GPURMA_WIN_CREATED)
        rc = init_atomic_lock((pthread_mutex_t *)(own_seg + l.lock_off));
    gpurma_gpu_export_t gpu_export;
    memset(&gpu_export, 0, sizeof(gpu_export));
    if (!rc && on_gpu)
        rc = gpurma_gpu_win_open(ctx->device, kind == GPURMA_WIN_CREATED ? user_base : NULL, size,
                                 nsig, ncnt, team->size, &w->gpu, &gpu_export);

    wire = calloc((size_t)team->size, sizeof(*wire));
    if (!wire) {
        if (own_seg) {
            gpurma_shm_detach(own_seg, l.total);
            gpurma_shm_unlink(own_name);
        }
        win_release(w);
        free(w);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "window exchange: out of memory");
    }
    win_wire_t mine = {0};
    mine.size = size;
    mine.seg_len = l.total;
    mine.remote_base = (uint64_t)(uintptr_t)user_base;
    mine.pid = (int32_t)getpid();
    mine.status = rc;
    mine.num_signals = nsig;
    mine.engine = engine;
    mine.kind = kind;
    snprintf(mine.shm_name, sizeof(mine.shm_name), "%s", own_name);
    mine.on_gpu = on_gpu;
    mine.gpu = gpu_export;

    int xrc = ex->allgather(ex, &mine, wire, sizeof(mine));
    if (xrc) {
        rc = xrc;
    } else {
        for (int i = 0; i < team->size && !rc; i++) {
            if (wire[i].status)
                rc = gpurma_set_error(wire[i].status, "window creation failed on team rank %d: %s",
                                      i, gpurma_strerror(wire[i].status));
            else if (wire[i].num_signals != nsig || wire[i].engine != engine ||
                     wire[i].kind != kind)
                rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                      "window parameters differ: team rank %d has %u signals, "
                                      "engine %d; this rank has %u, engine %d",
                                      i, wire[i].num_signals, wire[i].engine, nsig, engine);
            else if (wire[i].on_gpu != on_gpu)
                rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                      "window memory differs: team rank %d has %s memory, this "
                                      "rank %s (win_create needs cudaMalloc buffers on every "
                                      "rank, or host buffers on every rank)",
                                      i, wire[i].on_gpu ? "device" : "host",
                                      on_gpu ? "device" : "host");
        }
        int spans_nodes = team_spans_nodes(team);
        if (!rc)
            rc = connect_peers(w, wire, engine, own_seg, spans_nodes);
        if (engine == GPURMA_ENGINE_PORT || spans_nodes)
            rc = connect_port(w, ex, rc, spans_nodes, ncontexts);
        int arc = agree(ex, w, rc, "mapping");
        if (!rc)
            rc = arc;
    }
    /* Every peer has mapped the segment (or given up): the name can go. */
    if (own_name[0])
        gpurma_shm_unlink(own_name);
    free(wire);
    if (rc) {
        if (own_seg)
            gpurma_shm_detach(own_seg, l.total);
        win_release(w);
        free(w);
        return rc;
    }
    w->maps[w->rank].addr = own_seg;
    w->maps[w->rank].len = l.total;
    if (w->gpu)
        w->base = kind == GPURMA_WIN_ALLOCATED ? (size ? w->gpu->data : NULL) : user_base;
    else
        w->base = kind == GPURMA_WIN_ALLOCATED ? (size ? own_seg : NULL) : user_base;
    w->magic = GPURMA_WIN_MAGIC;

    w->dev.peers = w->gpu ? w->gpu->dev_peers : w->dev_peers ? w->dev_peers : w->peers;
    w->dev.signals = w->peers[w->rank].signals;
    w->dev.counters = w->gpu ? w->gpu->counters : w->counters;
    w->dev.host_win = w;
    w->dev.timeout_ns = ctx->timeout_ns;
    w->dev.rank = w->rank;
    w->dev.size = w->size;
    w->dev.num_signals = nsig;
    w->dev.num_counters = ncnt;
    w->dev.magic = GPURMA_DEV_WIN_MAGIC;
    if (!internal)
        GPURMA_INFO(GPURMA_SUB_WIN, "window %p: %zu bytes (%s), %u signals, %u counters, engine %s",
                    (void *)w, size, kind == GPURMA_WIN_ALLOCATED ? "allocated" : "created", nsig,
                    ncnt, w->nports ? "port" : "mem");
    if (!internal && w->gpu)
        GPURMA_INFO(GPURMA_SUB_WIN, "window %p: device memory of GPU %d (CUDA IPC)", (void *)w,
                    w->gpu->device);
    *out = w;
    return GPURMA_SUCCESS;
}

int gpurma_win_destroy(struct gpurma_win_s *w)
{
    win_release(w);
    w->magic = GPURMA_DEAD_MAGIC;
    return GPURMA_SUCCESS;
}

int gpurma_win_check(const struct gpurma_win_s *w)
{
    if (!w)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "window handle is NULL");
    if (w->magic == GPURMA_DEAD_MAGIC)
        return gpurma_set_error(GPURMA_ERR_FREED, "window %p was freed", (const void *)w);
    if (w->magic != GPURMA_WIN_MAGIC)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%p is not a window handle",
                                (const void *)w);
    return GPURMA_SUCCESS;
}

/* ------------------------------------------------------------- public API */

GPURMA_API gpurma_status_t gpurma_win_allocate(gpurma_team_t team, size_t size,
                                               const gpurma_win_params_t *p, void **base,
                                               gpurma_win_t *win)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return rc;
    if (!win)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_allocate: win is NULL");
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    rc = gpurma_win_build(team, &ex, GPURMA_WIN_ALLOCATED, NULL, size, p, 0, win);
    if (!rc && base)
        *base = (*win)->base;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_win_create(gpurma_team_t team, void *base, size_t size,
                                             const gpurma_win_params_t *p, gpurma_win_t *win)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return rc;
    if (!win)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_create: win is NULL");
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    return gpurma_win_build(team, &ex, GPURMA_WIN_CREATED, base, size, p, 0, win);
}

GPURMA_API gpurma_status_t gpurma_win_free(gpurma_win_t *win)
{
    if (!win)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_free: NULL");
    struct gpurma_win_s *w = *win;
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if (w->internal)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "window %p is internal", (void *)w);
    /* Our port operations complete, then nobody may still be reading or
     * writing the memory we unmap. */
    if (w->nports)
        rc = gpurma_quiet(w);
    int brc = gpurma_barrier(w->team);
    if (!rc)
        rc = brc;
    struct gpurma_ctx_s *ctx = w->ctx;
    gpurma_win_destroy(w);
    pthread_mutex_lock(&ctx->lock);
    w->next_freed = ctx->graveyard;
    ctx->graveyard = w;
    pthread_mutex_unlock(&ctx->lock);
    *win = NULL;
    return rc;
}

GPURMA_API size_t gpurma_win_size(gpurma_win_t w, int peer)
{
    if (gpurma_win_check(w) || peer < 0 || peer >= w->size)
        return 0;
    return w->peers[peer].size;
}

GPURMA_API void *gpurma_win_base(gpurma_win_t w) { return gpurma_win_check(w) ? NULL : w->base; }

GPURMA_API gpurma_engine_t gpurma_win_engine(gpurma_win_t w, int peer)
{
    if (gpurma_win_check(w) || peer < 0 || peer >= w->size)
        return GPURMA_ENGINE_NONE;
    return w->engines[peer]->kind;
}

GPURMA_API const char *gpurma_engine_name(gpurma_engine_t engine)
{
    switch (engine) {
    case GPURMA_ENGINE_AUTO:   return "auto";
    case GPURMA_ENGINE_MEM:    return "mem";
    case GPURMA_ENGINE_PORT:   return "port";
    case GPURMA_ENGINE_SWITCH: return "switch";
    default:                   return "none";
    }
}

GPURMA_API void *gpurma_win_peer_ptr(gpurma_win_t w, int peer)
{
    if (gpurma_win_check(w) || peer < 0 || peer >= w->size)
        return NULL;
    return w->peers[peer].path == GPURMA_DEV_PATH_LOADSTORE ? w->peers[peer].base : NULL;
}

GPURMA_API gpurma_team_t gpurma_win_team(gpurma_win_t w)
{
    return gpurma_win_check(w) ? NULL : w->team;
}

GPURMA_API uint32_t gpurma_win_num_signals(gpurma_win_t w)
{
    return gpurma_win_check(w) ? 0 : w->num_signals;
}

GPURMA_API uint32_t gpurma_win_num_counters(gpurma_win_t w)
{
    return gpurma_win_check(w) ? 0 : w->num_counters;
}

GPURMA_API gpurma_status_t gpurma_win_device(gpurma_win_t w, gpurma_dev_win_t *out)
{
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if (!out)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_device: out is NULL");
    *out = w->dev;
    return GPURMA_SUCCESS;
}
