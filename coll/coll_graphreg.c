/*
 * coll_graphreg.c - graph registration: a collective captured into a CUDA
 * graph runs zero-copy (algo_direct.c) on the user's buffers in place,
 * whether or not they were registered with gpurma_coll_register.
 *
 * At capture time (host work costs nothing then: the graph replays
 * without it) the members tell each other, in one exchange over the team,
 * which allocation holds each buffer the peers touch (its CUDA IPC handle
 * and buffer id) and at what offset. Every member then maps the peers'
 * allocations it has not mapped yet, keyed by (owner process, buffer id):
 * an allocation freed and another made at the same address never meet
 * the first one's mapping. A second exchange says whether every member
 * managed; if any did not (memory CUDA IPC cannot share, GPUs without peer
 * access, another node), all of them take the scratch path, as they do
 * when a buffer is host memory. Both exchanges give every member the same
 * facts, so all decide alike.
 *
 * Mappings live as long as the graphs that use them: each captured call
 * pins the mappings it uses with a CUDA user object that the graph (and
 * every instance of it) holds. The runtime says when the last of them is
 * gone, on a thread of its own; the pin is then marked released, and the
 * team's next collective (or its end) closes what no live pin uses. The
 * team must outlive its graphs, as a NCCL communicator must. A member whose
 * call cannot go zero-copy (in place) says so in the first exchange, so
 * that its peers do not wait for it there or in the kernel.
 *
 * Eager calls (not captured) keep to registered buffers: mapping a buffer
 * at each call would cost more than the copies it saves, and a mapping
 * kept after the call would pin memory the owner may free.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "gpu.h"
#include "gpurma_internal.h"
#include "graphreg_wire.h"

/* One peer allocation mapped here. */
typedef struct gr_map {
    gpurma_gpu_alloc_t alloc; /* as its owner described it */
    char *base;               /* its start in this process */
    unsigned uses;            /* live pins that hold it    */
    struct gr_map *next;
} gr_map_t;

/* The mappings one captured call uses, held until its graph is gone. refs:
 * one for the team's list, one for the runtime's callback; the last frees. */
typedef struct gr_pin {
    int released; /* set by the callback (atomic) */
    int refs;     /* atomic                       */
    int n;
    gr_map_t *maps[2 * GPURMA_DCOLL_DIRECT_MAX];
    struct gr_pin *next;
} gr_pin_t;

/* Collectives on a team never run at once (coll_busy.c): the lists need
 * no lock; the callback touches a pin's two atomics only. */
typedef struct gr_state {
    int device;
    gr_map_t *maps;
    gr_pin_t *pins;
} gr_state_t;

static void pin_unref(gr_pin_t *pin)
{
    if (__atomic_sub_fetch(&pin->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(pin);
}

/* The runtime's callback: the graph and its instances are gone. */
static void pin_released(void *arg)
{
    gr_pin_t *pin = arg;
    __atomic_store_n(&pin->released, 1, __ATOMIC_RELEASE);
    pin_unref(pin);
}

static void pin_drop_maps(gr_pin_t *pin)
{
    for (int i = 0; i < pin->n; i++)
        pin->maps[i]->uses--;
    pin->n = 0;
}

/* Closes what no live pin uses; with all set, every mapping and pin. The
 * closes may run while the thread captures: they are no captured work. */
static void sweep(gr_state_t *st, int all)
{
    for (gr_pin_t **pp = &st->pins; *pp;) {
        gr_pin_t *pin = *pp;
        if (all || __atomic_load_n(&pin->released, __ATOMIC_ACQUIRE)) {
            pin_drop_maps(pin);
            *pp = pin->next;
            pin_unref(pin);
        } else {
            pp = &pin->next;
        }
    }
    int closing = 0;
    for (gr_map_t *m = st->maps; m && !closing; m = m->next)
        closing = all || !m->uses;
    if (!closing)
        return;
    int saved = 0;
    gpurma_gpu_capture_relax(&saved);
    for (gr_map_t **mp = &st->maps; *mp;) {
        gr_map_t *m = *mp;
        if (all || !m->uses) {
            gpurma_gpu_alloc_close(st->device, &m->alloc, m->base);
            *mp = m->next;
            free(m);
        } else {
            mp = &m->next;
        }
    }
    gpurma_gpu_capture_restore(saved);
}

/* At every collective's start: a return on teams without a GPU, a lock and
 * no GPU call on teams that never captured one. */
void gpurma_coll_graphreg_sweep(struct gpurma_team_s *team)
{
    if (team->ctx->device < 0)
        return;
    gr_state_t *st = gpurma_team_slot_peek(team, GPURMA_TEAM_SLOT_GRAPHREG);
    if (st && st->pins)
        sweep(st, 0);
}

static void state_release(void *state)
{
    sweep(state, 1);
    free(state);
}

static int state_create(struct gpurma_team_s *team, void *arg, void **state)
{
    (void)arg;
    gr_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "graph registration: out of memory");
    st->device = team->ctx->device;
    *state = st;
    return GPURMA_SUCCESS;
}

/* Peer allocation a mapped here (once per allocation), pinned by pin. */
static int map_peer(gr_state_t *st, gr_pin_t *pin, const gpurma_gpu_alloc_t *a, char **base)
{
    gr_map_t *m = st->maps;
    while (m && !(m->alloc.owner == a->owner && m->alloc.id == a->id))
        m = m->next;
    if (!m) {
        m = calloc(1, sizeof(*m));
        if (!m)
            return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "graph registration: out of memory");
        int rc = gpurma_gpu_alloc_import(st->device, a, &m->base);
        if (rc) {
            free(m);
            return rc;
        }
        m->alloc = *a;
        m->next = st->maps;
        st->maps = m;
    }
    m->uses++;
    pin->maps[pin->n++] = m;
    *base = m->base;
    return GPURMA_SUCCESS;
}

/* Whether the call is one for graph registration: the same answer on
 * every member (the arguments and settings are), but for the capture,
 * which every member must do alike, as with NCCL. */
static int applies(const coll_call_t *a, int kind, void **graph)
{
    const struct gpurma_team_s *t = a->team;
    if (!gpurma_config()->coll_graph_register || t->ctx->device < 0 ||
        kind == GPURMA_DCOLL__K_ALLTOALLV || t->size > GPURMA_DCOLL_DIRECT_MAX ||
        gpurma_team_spans_nodes(t))
        return 0;
    return gpurma_gpu_capture_graph(a->stream, graph);
}

/* This member's side k: its buffer p, of which peers touch need bytes. */
static void describe(int device, const void *p, size_t need, gr_wire_t *w, int k)
{
    if (!need || !p || gpurma_gpu_alloc_export(device, p, &w->alloc[k]))
        return;
    w->off[k] = (uint64_t)((uintptr_t)p - (uintptr_t)w->alloc[k].va);
    w->ok[k] = 1;
    if (!gr_side_fits(w, k, need)) /* the test every member repeats on it */
        w->ok[k] = 0;
}

/* Maps side k of every peer (all said ok) into x, pinned by pin. */
static int map_side(gr_state_t *st, gr_pin_t *pin, const coll_call_t *a, const gr_wire_t *all,
                    int k, gpurma_coll_side_t *x)
{
    const int n = a->team->size, me = a->team->rank;
    uint64_t h = 0x6772617068726567ull; /* "graphreg" */
    for (int p = 0; p < n; p++) {
        h = gpurma_coll_mix(gpurma_coll_mix(h, all[p].alloc[k].owner), all[p].alloc[k].id);
        h = gpurma_coll_mix(h, all[p].off[k]);
        char *base = NULL;
        if (p == me) {
            x->at[p] = k ? (const void *)a->recv : a->send;
            continue;
        }
        int rc = map_peer(st, pin, &all[p].alloc[k], &base);
        if (rc)
            return rc;
        x->at[p] = base + all[p].off[k];
    }
    x->id = h | 1;
    return GPURMA_SUCCESS;
}

int gpurma_coll_graphreg_try(const coll_call_t *a, const gpurma_dev_coll_t *c, int kind,
                             size_t sbytes, size_t rbytes, int ropt, int stay, int *rc)
{
    void *graph = NULL;
    if (!applies(a, kind, &graph))
        return -1;
    struct gpurma_team_s *team = a->team;
    const int n = team->size; /* at most GPURMA_DCOLL_DIRECT_MAX (applies) */
    void *state = NULL;
    /* A member that cannot take part (no state: out of memory) still joins
     * the exchange, as one that stays: its peers must not wait for it. */
    if (gpurma_team_slot(team, GPURMA_TEAM_SLOT_GRAPHREG, state_create, NULL, state_release,
                         &state))
        stay = 1;
    gr_state_t *st = state;
    if (st)
        sweep(st, 0);

    int saved = 0;
    gpurma_gpu_capture_relax(&saved); /* IPC calls are not captured work */
    gr_wire_t mine, all[GPURMA_DCOLL_DIRECT_MAX];
    memset(&mine, 0, sizeof(mine));
    mine.stay = (uint32_t)stay;
    if (!stay) {
        describe(st->device, a->send, sbytes, &mine, 0);
        describe(st->device, a->recv, rbytes, &mine, 1);
    }
    int err = gpurma_team_allgather(team, &mine, all, sizeof(mine));
    if (err) {
        gpurma_gpu_capture_restore(saved);
        *rc = err;
        return 1;
    }
    /* Every member sees the same wires: all decide alike. */
    int use_s, use_r;
    const int go = gr_decide(all, n, sbytes, rbytes, ropt, &use_s, &use_r);
    if (!go) {
        gpurma_gpu_capture_restore(saved);
        GPURMA_DEBUG(GPURMA_SUB_RMA, "rank %d: graph registration: a member's buffer is not "
                     "shareable GPU memory, or its call runs in place; the call copies "
                     "through scratch", team->rank);
        return 0;
    }
    int ok = 1;
    gpurma_coll_side_t sx, rx;
    gr_pin_t *pin = calloc(1, sizeof(*pin));
    if (pin) {
        pin->refs = 2;
        if ((use_s && map_side(st, pin, a, all, 0, &sx)) ||
            (use_r && map_side(st, pin, a, all, 1, &rx)))
            ok = 0;
        pin->next = st->pins;
        st->pins = pin;
        if (gpurma_gpu_graph_on_destroy(graph, pin_released, pin))
            ok = 0; /* the callback still comes: the pin stays listed till then */
    } else {
        ok = 0;
    }
    /* Whether every member mapped its peers (a member may fail alone). */
    uint32_t oks[GPURMA_DCOLL_DIRECT_MAX], me_ok = (uint32_t)ok;
    err = gpurma_team_allgather(team, &me_ok, oks, sizeof(me_ok));
    gpurma_gpu_capture_restore(saved);
    for (int p = 0; p < n && !err; p++)
        ok &= oks[p] != 0;
    if (err || !ok) {
        if (pin)
            pin_drop_maps(pin);
        sweep(st, 0);
        if (err) {
            *rc = err;
            return 1;
        }
        GPURMA_INFO(GPURMA_SUB_RMA, "rank %d: graph registration: not every member could map "
                    "the others' buffers; the call copies through scratch", team->rank);
        return 0;
    }
    GPURMA_DEBUG(GPURMA_SUB_RMA, "rank %d: graph registration: %zu bytes per member in place",
                 team->rank, a->bytes);
    return gpurma_coll_direct_try(a, c, kind, use_s ? &sx : NULL, use_r ? &rx : NULL, rc);
}
