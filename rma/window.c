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

#include "checked.h"
#include "gpu.h"
#include "rma.h"


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

/* The segment of one rank: [data, rounded to 64][signal slots][lock]. The
 * sizes were bounded by resolve_params, but every step is checked anyway. */
static int seg_layout(gpurma_win_kind_t kind, size_t size, uint32_t num_signals,
                      gpurma_seg_layout_t *l)
{
    size_t sig_len, lock_len;
    if ((kind == GPURMA_WIN_ALLOCATED ? gpurma_size_round_up(size, 64, &l->data_len)
                                      : (l->data_len = 0, 0)) ||
        gpurma_size_array(num_signals, sizeof(gpurma_dev_signal_slot_t), 64, &sig_len) ||
        gpurma_size_round_up(sizeof(pthread_mutex_t), 64, &lock_len) ||
        gpurma_size_add(l->data_len, sig_len, &l->lock_off) ||
        gpurma_size_add(l->lock_off, lock_len, &l->total))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "window of %zu bytes with %u signals: the segment size overflows",
                                size, num_signals);
    l->signals_off = l->data_len;
    return GPURMA_SUCCESS;
}

/* Settles the parameters; any failure is reported through the exchange. */
static int resolve_params(const gpurma_win_params_t *p, gpurma_win_kind_t kind, void *user_base,
                          size_t size, int have_gpu, uint32_t *nsig, uint32_t *ncnt,
                          gpurma_engine_t *engine, uint32_t *ncontexts)
{
    const gpurma_config_t *cfg = gpurma_config();
    uint64_t mask = p ? p->field_mask : 0;
    if (mask & ~(uint64_t)GPURMA_WIN_FIELDS_KNOWN)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "window parameters: field_mask 0x%llx has unknown bits 0x%llx",
                                (unsigned long long)mask,
                                (unsigned long long)(mask & ~(uint64_t)GPURMA_WIN_FIELDS_KNOWN));
    if ((mask & GPURMA_WIN_FIELD_MEM_KIND) && p->mem_kind != GPURMA_MEM_AUTO &&
        p->mem_kind != GPURMA_MEM_HOST && p->mem_kind != GPURMA_MEM_DEVICE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "window parameters: mem_kind %d is not AUTO, HOST or DEVICE",
                                (int)p->mem_kind);
    /* Half the address space: no layout of data, slots and tables built on
     * such a size can wrap, and nothing larger could ever be mapped. */
    if (size > GPURMA_WIN_MAX_BYTES)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "window of %zu bytes: at most %zu bytes per rank", size,
                                (size_t)GPURMA_WIN_MAX_BYTES);
    if (kind == GPURMA_WIN_CREATED && user_base && (uintptr_t)user_base > UINTPTR_MAX - size)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "win_create: %zu bytes at %p run past the end of the address space",
                                size, user_base);
    *nsig = (mask & GPURMA_WIN_FIELD_NUM_SIGNALS) ? p->num_signals : (uint32_t)cfg->num_signals;
    *ncnt = (mask & GPURMA_WIN_FIELD_NUM_COUNTERS) ? p->num_counters : (uint32_t)cfg->num_counters;
    if (*nsig > (1u << 20) || *ncnt > (1u << 20))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "num_signals %u / num_counters %u: at most 1048576 each", *nsig,
                                *ncnt);
    /* GPURMA_ENGINE's allowed values are in gpurma_engine_t's order. */
    *engine = (gpurma_engine_t)cfg->engine_index;
    if (mask & GPURMA_WIN_FIELD_ENGINE)
        *engine = p->engine;
    *ncontexts = (mask & GPURMA_WIN_FIELD_CONTEXTS) ? p->contexts : (uint32_t)cfg->port_contexts;
    if (*ncontexts < 1 || *ncontexts > GPURMA_DEV_MAX_PORTS)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "contexts %u: a window spreads over 1 to %d proxy contexts",
                                *ncontexts, GPURMA_DEV_MAX_PORTS);
    if ((int)*engine < GPURMA_ENGINE_AUTO || *engine >= GPURMA_ENGINE_KINDS)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "unknown engine %d", (int)*engine);
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
    /* Also after a failed creation: an engine may have set up its part. */
    for (int k = gpurma_engine_count(); k-- > 0;)
        gpurma_engine_at(k)->release(w);
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

int gpurma_team_spans_nodes(const struct gpurma_team_s *team)
{
    const int *node_of = team->ctx->bs->node_of;
    for (int i = 1; i < team->size; i++)
        if (node_of[team->world_ranks[i]] != node_of[team->world_ranks[0]])
            return 1;
    return 0;
}

/* Maps what this node holds of every peer's window and says how the
 * calling processor reaches it (peers[i].path): loads and stores (shared
 * memory, or CUDA IPC for device windows), a library call (created
 * windows: cross-memory attach), or not at all (another node). Private
 * memory on a team spanning nodes counts as reached by no one here, this
 * rank included: atomics on it must all be the network's, which a lock on
 * the node would not exclude. This rank's own slots are always mapped:
 * its waits look there. */
static int map_node(struct gpurma_win_s *w, const win_wire_t *wire, void *own_seg)
{
    gpurma_bootstrap_t *bs = w->ctx->bs;
    int my_node = bs->node_of[w->ctx->rank];
    int none_here = w->kind == GPURMA_WIN_CREATED && !w->gpu && w->spans_nodes;
    for (int i = 0; i < w->size; i++) {
        const win_wire_t *pw = &wire[i];
        gpurma_dev_peer_t *p = &w->peers[i];
        /* Device windows keep only signals and lock in the host segment. */
        gpurma_seg_layout_t l;
        int rc = seg_layout(w->gpu ? GPURMA_WIN_CREATED : w->kind, pw->size, pw->num_signals, &l);
        if (rc)
            return rc;
        w->pids[i] = pw->pid;
        w->remote_base[i] = pw->remote_base;
        p->size = pw->size;
        p->path = GPURMA_DEV_PATH_NONE;
        if (none_here || bs->node_of[w->team->world_ranks[i]] != my_node) {
            if (i == w->rank)
                p->signals = (gpurma_dev_signal_slot_t *)((char *)own_seg + l.signals_off);
            continue;
        }
        char *seg = own_seg;
        if (i != w->rank) {
            rc = gpurma_shm_attach(pw->shm_name, l.total, (void **)&seg);
            if (rc)
                return rc;
            w->maps[i].addr = seg;
            w->maps[i].len = l.total;
        }
        p->signals = (gpurma_dev_signal_slot_t *)(seg + l.signals_off);
        if (w->gpu) {
            char *data;
            gpurma_dev_signal_slot_t *signals;
            rc = gpurma_gpu_win_map(w->gpu, &pw->gpu, i == w->rank, &data, &signals);
            if (rc)
                return rc;
            p->base = data;
            p->signals = signals;
            p->path = GPURMA_DEV_PATH_LOADSTORE;
        } else if (w->kind == GPURMA_WIN_ALLOCATED) {
            p->base = seg;
            p->path = GPURMA_DEV_PATH_LOADSTORE;
        } else {
            /* Private memory: only the library reaches it (cross-memory
             * attach, which may be forbidden: found out now, not on the
             * first put), and atomics on it take the owner's lock. */
            p->path = GPURMA_DEV_PATH_HOSTCALL;
            w->atomic_locks[i] = (pthread_mutex_t *)(seg + l.lock_off);
            rc = gpurma_cma_probe(w, i);
            if (rc)
                return rc;
        }
    }
    return GPURMA_SUCCESS;
}

/* Gives every peer to an engine: the forced one when it reaches the peer,
 * else the one that prefers it most. */
static int choose_engines(struct gpurma_win_s *w, gpurma_engine_t forced)
{
    const gpurma_engine_ops_t *first = gpurma_engine_of_kind(forced);
    gpurma_bootstrap_t *bs = w->ctx->bs;
    for (int i = 0; i < w->size; i++) {
        const gpurma_engine_ops_t *e = NULL;
        int pref = first ? first->reach(w, i, 1) : 0;
        if (pref < 0)
            return pref;
        if (pref > 0)
            e = first;
        else
            for (int k = 0, best = 0; k < gpurma_engine_count(); k++) {
                int p = gpurma_engine_at(k)->reach(w, i, 0);
                if (p < 0)
                    return p;
                if (p > best) {
                    best = p;
                    e = gpurma_engine_at(k);
                }
            }
        w->engines[i] = e;
        int remote = bs->node_of[w->team->world_ranks[i]] != bs->node_of[w->ctx->rank];
        if (!e || (remote && !(e->caps & GPURMA_ENGINE_CAP_REMOTE)))
            return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                    "rank %d: no engine of this build reaches team rank %d%s",
                                    w->ctx->rank, i, remote ? " on another node" : "");
        w->peers[i].engine = e->kind;
    }
    return GPURMA_SUCCESS;
}

/* Every engine sets up what its peers need; collective (each engine's
 * connect is entered by every rank, with its failure so far). */
static int connect_engines(struct gpurma_win_s *w, const gpurma_exchange_t *ex, int rc)
{
    for (int k = 0; k < gpurma_engine_count(); k++) {
        int erc = gpurma_engine_at(k)->connect(w, ex, rc);
        if (!rc)
            rc = erc;
    }
    return rc;
}

/* The peer table kernels (and device-API CPU threads) read: peers of
 * proxied engines are reached through the FIFO only, with no pointer a
 * kernel could write through behind the proxy's back (this rank's own
 * entry keeps them for local reads: waits, LL reads). GPU windows get it
 * in device memory. */
static int publish_peers(struct gpurma_win_s *w)
{
    int proxied = 0;
    for (int i = 0; i < w->size; i++)
        proxied |= !!(w->engines[i]->caps & GPURMA_ENGINE_CAP_PROXIED);
    if (proxied) {
        w->dev_peers = malloc((size_t)w->size * sizeof(*w->dev_peers));
        if (!w->dev_peers)
            return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "window: out of memory");
        for (int i = 0; i < w->size; i++) {
            w->dev_peers[i] = w->peers[i];
            if (!(w->engines[i]->caps & GPURMA_ENGINE_CAP_PROXIED))
                continue;
            w->dev_peers[i].path = GPURMA_DEV_PATH_FIFO;
            if (i != w->rank) {
                w->dev_peers[i].base = NULL;
                w->dev_peers[i].signals = NULL;
            }
        }
    }
    const gpurma_dev_peer_t *table = w->dev_peers ? w->dev_peers : w->peers;
    return w->gpu ? gpurma_gpu_win_publish(w->gpu, table, w->size) : GPURMA_SUCCESS;
}

/* The window learns of deaths to clean up after them on this node. */
static void window_peer_failed(struct gpurma_ctx_s *ctx, int world_rank)
{
    if (ctx->bs->node_of[world_rank] == ctx->bs->node_of[ctx->rank])
        gpurma_shm_remove_of(ctx->pids[world_rank]);
}
static const gpurma_ctx_hooks_t window_hooks = {.peer_failed = window_peer_failed};

/* Progress and shutdown of the engines a window uses run from the
 * context's waits and finalize. */
static int register_hooks(struct gpurma_win_s *w)
{
    int rc = gpurma_ctx_add_hooks(w->ctx, &window_hooks);
    for (int i = 0; !rc && i < w->size; i++)
        if (w->engines[i]->hooks)
            rc = gpurma_ctx_add_hooks(w->ctx, w->engines[i]->hooks);
    return rc;
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

/* Which engine serves how many peers: the question users ask first. */
static void log_window(const struct gpurma_win_s *w)
{
    if (!GPURMA_LOG_ENABLED(GPURMA_LOG_INFO, GPURMA_SUB_WIN))
        return;
    char text[160] = "";
    size_t len = 0;
    for (int k = 0; k < gpurma_engine_count(); k++) {
        const gpurma_engine_ops_t *e = gpurma_engine_at(k);
        int n = 0;
        for (int i = 0; i < w->size; i++)
            n += w->engines[i] == e;
        if (n && len < sizeof(text))
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s for %d peer(s)",
                                    len ? ", " : "", gpurma_engine_name(e->kind), n);
    }
    GPURMA_INFO(GPURMA_SUB_WIN, "window %p: %zu bytes (%s), %u signals, %u counters; %s",
                (const void *)w, w->bytes, w->kind == GPURMA_WIN_ALLOCATED ? "allocated" : "created",
                w->num_signals, w->num_counters, text);
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
     * memory (a team's system window does); win_create follows the buffer
     * it is given. */
    int on_gpu = 0;
    if (!rc && ctx->device >= 0) {
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
    w->contexts = ncontexts;
    w->bytes = size;
    w->home = gpurma_engine_home(on_gpu);
    if (!rc) {
        w->peers = calloc((size_t)w->size, sizeof(*w->peers));
        w->engines = calloc((size_t)w->size, sizeof(*w->engines));
        w->maps = calloc((size_t)w->size, sizeof(*w->maps));
        w->pids = calloc((size_t)w->size, sizeof(*w->pids));
        w->remote_base = calloc((size_t)w->size, sizeof(*w->remote_base));
        w->atomic_locks = calloc((size_t)w->size, sizeof(*w->atomic_locks));
        w->counters = calloc(ncnt ? ncnt : 1, sizeof(*w->counters));
        if (!w->peers || !w->engines || !w->maps || !w->pids || !w->remote_base ||
            !w->atomic_locks || !w->counters)
            rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "window tables: out of memory");
    }
    if (!rc)
        rc = seg_layout(on_gpu ? GPURMA_WIN_CREATED : kind, size, nsig, &l);
    if (!rc)
        rc = gpurma_shm_create(l.total, own_name, (void **)&own_seg);
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
                                      "engine %d, from %s; this rank has %u, engine %d, from %s",
                                      i, wire[i].num_signals, wire[i].engine,
                                      wire[i].kind == GPURMA_WIN_ALLOCATED ? "win_allocate"
                                                                           : "win_create",
                                      nsig, engine,
                                      kind == GPURMA_WIN_ALLOCATED ? "win_allocate"
                                                                   : "win_create");
            else if (wire[i].on_gpu != on_gpu)
                rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                      "window memory differs: team rank %d has %s memory, this "
                                      "rank %s (win_create needs cudaMalloc buffers on every "
                                      "rank, or host buffers on every rank)",
                                      i, wire[i].on_gpu ? "device" : "host",
                                      on_gpu ? "device" : "host");
        }
        w->spans_nodes = gpurma_team_spans_nodes(team);
        if (!rc)
            rc = map_node(w, wire, own_seg);
        if (!rc)
            rc = choose_engines(w, engine);
        rc = connect_engines(w, ex, rc); /* collective */
        if (!rc)
            rc = publish_peers(w);
        if (!rc)
            rc = register_hooks(w);
        if (!rc) /* before the agreement: its failure is every rank's */
            rc = gpurma_handle_register(w, GPURMA_HANDLE_WIN);
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
        gpurma_handle_forget(w);
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
        log_window(w);
    if (!internal && w->gpu)
        GPURMA_INFO(GPURMA_SUB_WIN, "window %p: device memory of GPU %d (CUDA IPC)", (void *)w,
                    w->gpu->device);
    if (!internal) { /* finalize releases what the user does not */
        pthread_mutex_lock(&ctx->lock);
        w->next_live = ctx->wins;
        ctx->wins = w;
        team->nwins++;
        pthread_mutex_unlock(&ctx->lock);
    }
    *out = w;
    return GPURMA_SUCCESS;
}

void gpurma_win_unlink(struct gpurma_win_s *w)
{
    struct gpurma_ctx_s *ctx = w->ctx;
    pthread_mutex_lock(&ctx->lock);
    for (struct gpurma_win_s **at = &ctx->wins; *at; at = &(*at)->next_live)
        if (*at == w) {
            *at = w->next_live;
            break;
        }
    w->team->nwins--;
    pthread_mutex_unlock(&ctx->lock);
}

int gpurma_win_destroy(struct gpurma_win_s *w)
{
    /* Dead before anything goes: a copied device handle checked from
     * another thread sees it first (freeing under use is still an error). */
    __atomic_store_n(&w->magic, GPURMA_DEAD_MAGIC, __ATOMIC_RELEASE);
    if (w->on_destroy)
        w->on_destroy(w);
    win_release(w);
    /* The caller frees the struct or buries it (which makes it known again). */
    gpurma_handle_forget(w);
    return GPURMA_SUCCESS;
}

/* ------------------------------------------------------------- public API */

GPURMA_API gpurma_status_t gpurma_dev_host_win_state(const void *p)
{
    if (!p || !gpurma_handle_is(p, GPURMA_HANDLE_WIN))
        return GPURMA_ERR_INVALID_ARG;
    return __atomic_load_n(&((const struct gpurma_win_s *)p)->magic, __ATOMIC_RELAXED) ==
                   GPURMA_WIN_MAGIC
               ? GPURMA_SUCCESS
               : GPURMA_ERR_FREED;
}

/* A by-value handle is the window's own (gpurma_win_device's copy) when
 * every field is; compared field by field, since a copy need not carry
 * the padding. A handle whose host pointer is right but whose tables,
 * rank or sizes were changed would have the device code read and write
 * memory the library does not own. */
static int dev_win_same(const gpurma_dev_win_t *h, const gpurma_dev_win_t *d)
{
    int same = h->peers == d->peers && h->signals == d->signals && h->counters == d->counters &&
               h->nports == d->nports && h->host_win == d->host_win &&
               h->timeout_ns == d->timeout_ns && h->rank == d->rank && h->size == d->size &&
               h->num_signals == d->num_signals && h->num_counters == d->num_counters &&
               h->magic == d->magic;
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS && same; k++)
        same = h->ports[k] == d->ports[k] && h->port_win_ids[k] == d->port_win_ids[k];
    return same;
}

GPURMA_API gpurma_status_t gpurma_dev_host_win_handle_state(const gpurma_dev_win_t *h)
{
    gpurma_status_t rc = h ? gpurma_dev_host_win_state(h->host_win) : GPURMA_ERR_INVALID_ARG;
    if (rc != GPURMA_SUCCESS)
        return rc;
    return dev_win_same(h, &((const struct gpurma_win_s *)h->host_win)->dev)
               ? GPURMA_SUCCESS
               : GPURMA_ERR_INVALID_ARG;
}

/* A channel is what gpurma_dev_win_chan makes of the window's handle for
 * its peer (gpurma_dev__chan_of), field by field. */
GPURMA_API gpurma_status_t gpurma_dev_host_chan_state(const gpurma_dev_chan_t *c)
{
    gpurma_status_t rc = c ? gpurma_dev_host_win_state(c->host_win) : GPURMA_ERR_INVALID_ARG;
    if (rc != GPURMA_SUCCESS)
        return rc;
    const gpurma_dev_win_t *d = &((const struct gpurma_win_s *)c->host_win)->dev;
    if (c->peer < 0 || c->peer >= d->size || c->rank != d->rank ||
        c->counters != d->counters || c->timeout_ns != d->timeout_ns ||
        c->num_signals != d->num_signals || c->num_counters != d->num_counters)
        return GPURMA_ERR_INVALID_ARG;
    const gpurma_dev_peer_t *pe = &d->peers[c->peer];
    void *fifo = NULL;
    uint32_t id = 0;
    if (pe->path == GPURMA_DEV_PATH_FIFO && (uint32_t)pe->port < d->nports)
        fifo = d->ports[pe->port], id = d->port_win_ids[pe->port];
    return c->pe.base == pe->base && c->pe.signals == pe->signals && c->pe.size == pe->size &&
                   c->pe.engine == pe->engine && c->pe.path == pe->path &&
                   c->pe.port == pe->port && c->fifo == fifo && c->port_win_id == id
               ? GPURMA_SUCCESS
               : GPURMA_ERR_INVALID_ARG;
}

GPURMA_API size_t gpurma_win_size(gpurma_win_t w, int peer)
{
    if (GPURMA_QUERY(gpurma_win_check(w)) || peer < 0 || peer >= w->size)
        return 0;
    return w->peers[peer].size;
}

GPURMA_API void *gpurma_win_base(gpurma_win_t w)
{
    return GPURMA_QUERY(gpurma_win_check(w)) ? NULL : w->base;
}

GPURMA_API gpurma_status_t gpurma_win_size_checked(gpurma_win_t w, int peer, size_t *size)
{
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if (!size)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_size_checked: size is NULL");
    if (peer < 0 || peer >= w->size)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "win_size_checked: peer %d is not a rank of the window's "
                                "team (size %d)", peer, w->size);
    *size = w->peers[peer].size;
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_win_base_checked(gpurma_win_t w, void **base)
{
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if (!base)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_base_checked: base is NULL");
    *base = w->base;
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_engine_t gpurma_win_engine(gpurma_win_t w, int peer)
{
    if (GPURMA_QUERY(gpurma_win_check(w)) || peer < 0 || peer >= w->size)
        return GPURMA_ENGINE_NONE;
    return w->engines[peer]->kind;
}

GPURMA_API void *gpurma_win_peer_ptr(gpurma_win_t w, int peer)
{
    if (GPURMA_QUERY(gpurma_win_check(w)) || peer < 0 || peer >= w->size)
        return NULL;
    return w->peers[peer].path == GPURMA_DEV_PATH_LOADSTORE ? w->peers[peer].base : NULL;
}

GPURMA_API gpurma_team_t gpurma_win_team(gpurma_win_t w)
{
    return GPURMA_QUERY(gpurma_win_check(w)) ? NULL : w->team;
}

GPURMA_API uint32_t gpurma_win_num_signals(gpurma_win_t w)
{
    return GPURMA_QUERY(gpurma_win_check(w)) ? 0 : w->num_signals;
}

GPURMA_API uint32_t gpurma_win_num_counters(gpurma_win_t w)
{
    return GPURMA_QUERY(gpurma_win_check(w)) ? 0 : w->num_counters;
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
