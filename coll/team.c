/*
 * team.c - teams, and the barrier and allgather they run on their system
 * window.
 *
 * Every team owns a small internal window: one slot of SYS_SLOT bytes per
 * member for allgather data (each piece headed by the call's length), and
 * two signals per member (allgather and barrier arrivals, counted per
 * origin). Running collectives over ordinary
 * window operations means they work over every engine and notice dead
 * peers like any other wait. A split builds the new team's window with an
 * allgather over a subset of the parent's members, so ranks of other colors
 * are not involved. Windows (rma/, below) reach the exchange and the
 * barrier through the team's sync table, set here.
 *
 * The other files of coll/ keep their per-team state in the team's slots
 * (gpurma_team_slot), which this file releases with the team: it calls
 * none of them, they all stand on it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_internal.h"
#include "gpu.h"  /* gpurma_gpu_host_alloc: the team's gone word */
#include "port.h" /* gpurma_port_quiet_all */

#define SYS_SLOT 2048
/* Each piece of an allgather carries, before its bytes, the call's whole
 * length (SYS_HEAD bytes), so that members whose calls are different
 * exchanges (one rank's split beside another's collective, say) find it
 * at the first piece instead of taking each other's bytes. */
#define SYS_HEAD 8
#define SYS_DATA (SYS_SLOT - SYS_HEAD)

static int sys_barrier(struct gpurma_team_s *owner, const int *members, int n, int me);

static int member(const int *members, int i) { return members ? members[i] : i; }

static int sys_wait(struct gpurma_team_s *owner, uint32_t sig, uint64_t expect, int from,
                    const char *what)
{
    const uint64_t *slot = &owner->sys->dev.signals[sig].value;
    if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) >= expect)
        return GPURMA_SUCCESS;
    char text[96];
    snprintf(text, sizeof(text), "%s (waiting for team rank %d)", what, from);
    return gpurma_wait_u64(owner, &owner->sys->dev.signals[sig].value, GPURMA_CMP_GE, expect,
                           text, from);
}

/* Dissemination barrier: log2(n) rounds, each a signal to one member and a
 * wait for another. */
static int sys_barrier(struct gpurma_team_s *owner, const int *members, int n, int me)
{
    struct gpurma_win_s *w = owner->sys;
    uint32_t base = (uint32_t)owner->size;
    for (int dist = 1; dist < n; dist <<= 1) {
        int to = member(members, (me + dist) % n);
        int from = member(members, (me - dist + n) % n);
        int rc = w->engines[to]->signal(w, to, base + (uint32_t)w->rank, GPURMA_SIGNAL_ADD, 1);
        if (rc)
            return rc;
        rc = sys_wait(owner, base + (uint32_t)from, ++owner->barrier_expect[from], from,
                      "barrier");
        if (rc)
            return rc;
    }
    return GPURMA_SUCCESS;
}

/* When the members' lengths are not all alike, each member's differs from
 * some peer's, so every member refuses at the first piece, after taking
 * that piece from every peer and before the barrier: all stay in step. */
static int sys_allgather(struct gpurma_team_s *owner, const int *members, int n, int me,
                         const void *mine, void *all, size_t len)
{
    struct gpurma_win_s *w = owner->sys;
    const char *src = mine;
    char *dst = all;
    const uint64_t total = len;
    unsigned char piece[SYS_SLOT];
    memcpy(piece, &total, SYS_HEAD);
    size_t chunk_off = 0;
    do {
        size_t clen = len - chunk_off < SYS_DATA ? len - chunk_off : SYS_DATA;
        size_t my_slot = (size_t)w->rank * SYS_SLOT;
        memcpy(piece + SYS_HEAD, src + chunk_off, clen);
        for (int j = 0; j < n; j++) {
            int peer = member(members, j);
            if (j == me)
                continue;
            int rc = w->engines[peer]->put_signal(w, peer, my_slot, piece, SYS_HEAD + clen,
                                                  (uint32_t)w->rank, GPURMA_SIGNAL_ADD, 1,
                                                  GPURMA_NO_COUNTER);
            if (rc)
                return rc;
        }
        memcpy(dst + (size_t)me * len + chunk_off, src + chunk_off, clen);
        int other = -1;
        uint64_t theirs = 0;
        for (int j = 0; j < n; j++) {
            int peer = member(members, j);
            if (j == me)
                continue;
            int rc = sys_wait(owner, (uint32_t)peer, ++owner->gather_expect[peer], peer,
                              "allgather");
            if (rc)
                return rc;
            const char *slot = (const char *)w->base + (size_t)peer * SYS_SLOT;
            uint64_t head;
            memcpy(&head, slot, SYS_HEAD);
            if (head != total) {
                if (other < 0)
                    other = peer, theirs = head;
                continue;
            }
            memcpy(dst + (size_t)j * len + chunk_off, slot + SYS_HEAD, clen);
        }
        if (other >= 0)
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                    "rank %d: team rank %d made another collective call at the "
                                    "same time (an exchange of %llu bytes, this rank's %zu; a "
                                    "split, a window or a collective call on one rank beside "
                                    "another on the others?); every rank's call fails",
                                    owner->ctx->rank, other, (unsigned long long)theirs, len);
        /* Slots are reused by the next chunk or call: all must have read. */
        int rc = sys_barrier(owner, members, n, me);
        if (rc)
            return rc;
        chunk_off += clen;
    } while (chunk_off < len);
    return GPURMA_SUCCESS;
}

static int exchange_over_team(const gpurma_exchange_t *ex, const void *mine, void *all,
                              size_t len)
{
    struct gpurma_team_s *owner = ex->arg;
    return sys_allgather(owner, ex->members, ex->nmembers, ex->me, mine, all, len);
}

gpurma_exchange_t gpurma_team_exchange(struct gpurma_team_s *team)
{
    gpurma_exchange_t ex = {exchange_over_team, team, NULL, team->size, team->rank};
    return ex;
}

int gpurma_team_allgather(struct gpurma_team_s *team, const void *mine, void *all, size_t len)
{
    return sys_allgather(team, NULL, team->size, team->rank, mine, all, len);
}

/* What windows call through team->sync (src/core/context.h). */
static const gpurma_team_sync_t team_sync = {gpurma_team_exchange, gpurma_team_allgather,
                                              gpurma_barrier};

int gpurma_team_create(struct gpurma_ctx_s *ctx, const int *world_ranks, int n, int my_rank,
                       int builtin, const gpurma_exchange_t *ex, struct gpurma_team_s **out)
{
    struct gpurma_team_s *t = calloc(1, sizeof(*t));
    if (!t)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "team: out of memory");
    /* Before anything can fail: gpurma_team_destroy takes them down. */
    if (pthread_mutex_init(&t->slot_lock, NULL)) {
        free(t);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "team: no mutex");
    }
    if (pthread_cond_init(&t->slot_made, NULL)) {
        pthread_mutex_destroy(&t->slot_lock);
        free(t);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "team: no condition variable");
    }
    t->sync = &team_sync;
    t->ctx = ctx;
    t->rank = my_rank;
    t->size = n;
    t->builtin = builtin;
    t->world_ranks = malloc((size_t)n * sizeof(int));
    t->gather_expect = calloc((size_t)n, sizeof(uint64_t));
    t->barrier_expect = calloc((size_t)n, sizeof(uint64_t));
    t->gone = ctx->device >= 0 ? gpurma_gpu_host_alloc(sizeof(*t->gone))
                               : calloc(1, sizeof(*t->gone));
    if (t->gone)
        *t->gone = 0;
    if (!t->world_ranks || !t->gather_expect || !t->barrier_expect || !t->gone) {
        gpurma_team_destroy(t);
        free(t);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "team: out of memory");
    }
    memcpy(t->world_ranks, world_ranks, (size_t)n * sizeof(int));
    /* Read by the host: in host memory even when a GPU is in use. */
    gpurma_win_params_t p = {GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                                 GPURMA_WIN_FIELD_NUM_COUNTERS | GPURMA_WIN_FIELD_ENGINE,
                             GPURMA_MEM_HOST, 2u * (uint32_t)n, 0, GPURMA_ENGINE_AUTO, 0};
    int rc = gpurma_win_build(t, ex, GPURMA_WIN_ALLOCATED, NULL, (size_t)n * SYS_SLOT, &p, 1,
                              &t->sys);
    if (rc) {
        gpurma_team_destroy(t);
        free(t);
        return rc;
    }
    rc = gpurma_handle_register(t, GPURMA_HANDLE_TEAM);
    if (rc) {
        gpurma_team_destroy(t);
        free(t);
        return rc;
    }
    t->magic = GPURMA_TEAM_MAGIC;
    if (!builtin) { /* finalize releases what the user does not */
        pthread_mutex_lock(&ctx->lock);
        t->next_live = ctx->teams;
        ctx->teams = t;
        pthread_mutex_unlock(&ctx->lock);
    }
    *out = t;
    return GPURMA_SUCCESS;
}

/* ------------------------------------------------------------ slots */

_Static_assert(GPURMA_TEAM_SLOTS <= GPURMA_TEAM_MAX_SLOTS, "raise GPURMA_TEAM_MAX_SLOTS");

/* A lock per team and a flag per slot, not a compare-and-swap of the
 * state: making a slot's state is collective (a window over the team), so
 * a second thread of this process asking for it meanwhile (two threads on
 * one team, which the API forbids but must survive) has to wait for the
 * first; two makings would interleave their exchanges with the peers'
 * one. The lock is never held while a state is made, so other teams and
 * other slots of this team go on, and it is per team, so teams of other
 * contexts in this process (the NCCL layer makes several) never meet. */
int gpurma_team_slot(struct gpurma_team_s *team, gpurma_team_slot_id_t id,
                     gpurma_team_slot_make_t make, void *arg, void (*release)(void *state),
                     void **out)
{
    gpurma_team_slot_t *s = &team->slots[id];
    pthread_mutex_lock(&team->slot_lock);
    while (!s->state && s->making)
        pthread_cond_wait(&team->slot_made, &team->slot_lock);
    if (s->state) {
        *out = s->state;
        pthread_mutex_unlock(&team->slot_lock);
        return GPURMA_SUCCESS;
    }
    s->making = 1;
    pthread_mutex_unlock(&team->slot_lock);
    void *state = NULL;
    int rc = make(team, arg, &state);
    pthread_mutex_lock(&team->slot_lock);
    s->making = 0;
    if (rc == GPURMA_SUCCESS) {
        s->state = state;
        s->release = release;
        *out = state;
    }
    pthread_cond_broadcast(&team->slot_made);
    pthread_mutex_unlock(&team->slot_lock);
    return rc;
}

void *gpurma_team_slot_peek(struct gpurma_team_s *team, gpurma_team_slot_id_t id)
{
    pthread_mutex_lock(&team->slot_lock);
    void *state = team->slots[id].state;
    pthread_mutex_unlock(&team->slot_lock);
    return state;
}

/* Each hook once, in slot order (coll.h says why that order). */
static void slots_release(struct gpurma_team_s *t)
{
    for (int id = 0; id < GPURMA_TEAM_SLOTS; id++) {
        pthread_mutex_lock(&t->slot_lock);
        gpurma_team_slot_t s = t->slots[id];
        t->slots[id].state = NULL;
        t->slots[id].release = NULL;
        pthread_mutex_unlock(&t->slot_lock);
        if (s.state && s.release)
            s.release(s.state);
    }
}

void gpurma_team_destroy(struct gpurma_team_s *t)
{
    slots_release(t);
    if (t->sys) {
        gpurma_win_destroy(t->sys);
        free(t->sys);
    }
    free(t->world_ranks);
    free(t->gather_expect);
    free(t->barrier_expect);
    if (t->ctx->device >= 0)
        gpurma_gpu_host_free(t->gone);
    else
        free(t->gone);
    t->gone = NULL;
    t->sys = NULL;
    t->world_ranks = NULL;
    t->gather_expect = t->barrier_expect = NULL;
    t->magic = GPURMA_DEAD_MAGIC;
    /* Calls on the dead handle stop at gpurma_team_check, before the lock. */
    pthread_cond_destroy(&t->slot_made);
    pthread_mutex_destroy(&t->slot_lock);
    /* The caller frees the struct or buries it (which makes it known again). */
    gpurma_handle_forget(t);
}

typedef struct split_entry {
    int32_t color, key;
    int32_t refused; /* this rank's arguments are bad: every rank refuses */
} split_entry_t;

/* out may be NULL (the public call's bad argument): the rank still takes
 * part in the exchange, so that every rank refuses the split together and
 * the parent stays in step for its next call. */
int gpurma_team_split_internal(struct gpurma_team_s *parent, int color, int key, int builtin,
                               struct gpurma_team_s **out)
{
    if (out)
        *out = NULL;
    split_entry_t mine = {color, key, !out || (color < 0 && color != GPURMA_TEAM_UNDEFINED)};
    split_entry_t *all = malloc((size_t)parent->size * sizeof(*all));
    int *members = malloc((size_t)parent->size * sizeof(int));
    int *world = malloc((size_t)parent->size * sizeof(int));
    if (!all || !members || !world) {
        free(all);
        free(members);
        free(world);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "team_split: out of memory");
    }
    /* Colors must be agreed on even by ranks that fail later. */
    int rc = gpurma_team_allgather(parent, &mine, all, sizeof(mine));
    for (int i = 0; !rc && i < parent->size; i++)
        if (all[i].refused)
            rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                  "team_split: team rank %d%s passed %s; every rank refuses", i,
                                  i == parent->rank ? " (this rank)" : "",
                                  all[i].color < 0 && all[i].color != GPURMA_TEAM_UNDEFINED
                                      ? "a negative color"
                                      : "out NULL");
    if (!rc && color != GPURMA_TEAM_UNDEFINED) {
        int n = 0, me = -1;
        /* Insertion by (key, parent rank): stable and small. */
        for (int i = 0; i < parent->size; i++) {
            if (all[i].color != color)
                continue;
            int at = n++;
            while (at > 0 && all[members[at - 1]].key > all[i].key) {
                members[at] = members[at - 1];
                at--;
            }
            members[at] = i;
        }
        for (int i = 0; i < n; i++) {
            world[i] = parent->world_ranks[members[i]];
            if (members[i] == parent->rank)
                me = i;
        }
        gpurma_exchange_t ex = {exchange_over_team, parent, members, n, me};
        rc = gpurma_team_create(parent->ctx, world, n, me, builtin, &ex, out);
    }
    free(all);
    free(members);
    free(world);
    return rc;
}

/* ------------------------------------------------------------- public API */

GPURMA_API gpurma_team_t gpurma_team_world(gpurma_ctx_t ctx)
{
    return GPURMA_QUERY(gpurma_ctx_check(ctx)) ? NULL : ctx->world;
}

GPURMA_API gpurma_team_t gpurma_team_node(gpurma_ctx_t ctx)
{
    return GPURMA_QUERY(gpurma_ctx_check(ctx)) ? NULL : ctx->node;
}

GPURMA_API gpurma_status_t gpurma_team_split(gpurma_team_t parent, int color, int key,
                                             gpurma_team_t *out)
{
    int rc = gpurma_team_check(parent);
    if (rc)
        return rc;
    return gpurma_team_split_internal(parent, color, key, 0, out);
}

GPURMA_API gpurma_status_t gpurma_team_free(gpurma_team_t *team)
{
    if (!team)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "team_free: NULL");
    int rc = gpurma_team_check(*team);
    if (rc)
        return rc;
    if ((*team)->builtin)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "the world and node teams are freed by gpurma_finalize");
    struct gpurma_team_s *t = *team;
    struct gpurma_ctx_s *ctx = t->ctx;
    /* A collective of another thread inside its call would run on freed
     * memory: refuse, and leave that call alone (it ends as it would
     * have). Taking the in-use flag also refuses collectives from here on. */
    if (!gpurma_coll_team_claim(t))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "team_free: a collective, coll_register or coll_deregister of "
                                "another thread runs on this team; the team is not freed");
    pthread_mutex_lock(&ctx->lock);
    int nwins = t->nwins;
    pthread_mutex_unlock(&ctx->lock);
    if (nwins) { /* they would outlive the members table their calls read */
        gpurma_coll_team_unclaim(t);
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "team_free: the team still has %d window(s); free them first",
                                nwins);
    }
    rc = gpurma_barrier(t);
    pthread_mutex_lock(&ctx->lock);
    for (struct gpurma_team_s **at = &ctx->teams; *at; at = &(*at)->next_live)
        if (*at == t) {
            *at = t->next_live;
            break;
        }
    pthread_mutex_unlock(&ctx->lock);
    gpurma_team_destroy(t);
    gpurma_handle_bury(t); /* a kept copy of the handle gives ERR_FREED */
    *team = NULL;
    return rc;
}

GPURMA_API int gpurma_team_rank(gpurma_team_t t)
{
    return GPURMA_QUERY(gpurma_team_check(t)) ? -1 : t->rank;
}

GPURMA_API int gpurma_team_size(gpurma_team_t t)
{
    return GPURMA_QUERY(gpurma_team_check(t)) ? -1 : t->size;
}

GPURMA_API int gpurma_team_world_rank(gpurma_team_t t, int team_rank)
{
    if (GPURMA_QUERY(gpurma_team_check(t)) || team_rank < 0 || team_rank >= t->size)
        return -1;
    return t->world_ranks[team_rank];
}

GPURMA_API gpurma_status_t gpurma_barrier(gpurma_team_t team)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return rc;
    /* Like shmem_barrier_all: what this rank issued is complete first. The
     * quiet covers every window; a death outside this team (what was sent
     * to it is lost) is for those windows' own flush and quiet to report. */
    rc = gpurma_port_quiet_all(team->ctx);
    if (rc == GPURMA_ERR_PEER_FAILED)
        rc = gpurma_team_check_alive(team, -1, "barrier");
    if (rc)
        return rc;
    return sys_barrier(team, NULL, team->size, team->rank);
}

int gpurma_team_need_gpu(const struct gpurma_team_s *team)
{
    if (team->ctx->device >= 0)
        return GPURMA_SUCCESS;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "rank %d: collectives on a stream: this context uses no GPU "
                            "(host backend); pass stream NULL",
                            team->ctx->rank);
}
