/*
 * coll_register.c - buffers registered with a team (gpurma_coll_register).
 * GPU buffers get a window each (the peers map them), which allreduce on a
 * stream uses zero-copy (algo_direct.c); other collectives, and host
 * buffers, still copy through the scratch windows. The team's list lives
 * in its slot GPURMA_TEAM_SLOT_REGS and goes with the team.
 */
#include <pthread.h>
#include <stdlib.h>

#include "coll_internal.h"
#include "gpurma_internal.h"

typedef struct coll_reg {
    void *buf;
    size_t bytes;
    uint64_t seq;                     /* the same on every member */
    gpurma_coll_direct_reg_t *direct; /* GPU memory, else NULL     */
    struct coll_reg *next;
} coll_reg_t;

/* The lock guards the list against a lookup by a collective on another
 * thread while a registration is added or taken out. */
typedef struct coll_regs {
    pthread_mutex_t lock;
    coll_reg_t *list;
} coll_regs_t;

static void regs_release(void *state)
{
    coll_regs_t *regs = state;
    while (regs->list) {
        coll_reg_t *dead = regs->list;
        regs->list = dead->next;
        gpurma_coll_direct_release(dead->direct);
        free(dead);
    }
    pthread_mutex_destroy(&regs->lock);
    free(regs);
}

/* Not collective: the list starts empty on every member. */
static int regs_create(struct gpurma_team_s *team, void *arg, void **state)
{
    (void)team, (void)arg;
    coll_regs_t *regs = calloc(1, sizeof(*regs));
    if (!regs)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "coll_register: out of memory");
    if (pthread_mutex_init(&regs->lock, NULL)) {
        free(regs);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "coll_register: no mutex");
    }
    *state = regs;
    return GPURMA_SUCCESS;
}

static int do_register(struct gpurma_team_s *team, void *buf, size_t bytes);
static int do_deregister(struct gpurma_team_s *team, void *buf);

/* Both take the team's in-use flag (coll_busy.c), as a collective does:
 * a registration that raced a collective of another thread on the team
 * would change, or free, the registrations that collective looks up and
 * pair its own exchange with the peers' in an order nobody chose. */
GPURMA_API gpurma_status_t gpurma_coll_register(gpurma_team_t team, void *buf, size_t bytes)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return (gpurma_status_t)rc;
    rc = gpurma_coll_team_enter(team, "coll_register");
    if (!rc)
        rc = gpurma_coll_team_leave(team, "coll_register", do_register(team, buf, bytes));
    return (gpurma_status_t)rc;
}

GPURMA_API gpurma_status_t gpurma_coll_deregister(gpurma_team_t team, void *buf)
{
    int rc = gpurma_team_check(team);
    if (!rc)
        rc = gpurma_coll_team_enter(team, "coll_deregister");
    if (!rc)
        rc = gpurma_coll_team_leave(team, "coll_deregister", do_deregister(team, buf));
    return (gpurma_status_t)rc;
}

/* Every member's verdict on a registration or deregistration, exchanged
 * before anything changes: a member's refusal (its own arguments or list)
 * is every member's, no member's list changes, and the team stays in step
 * (a member that refused alone left its peers' lists changed and their
 * calls returning SUCCESS). The sizes are not compared: each member
 * registers its own buffer, and an alltoallv's send buffers differ. */
typedef struct {
    int32_t  status; /* this member's own check */
    uint32_t what;   /* 1: register, 2: deregister */
} reg_vote_t;

static int agree(struct gpurma_team_s *team, const char *call, int mine, uint32_t what)
{
    reg_vote_t vote = {mine, what}, *all = calloc((size_t)team->size, sizeof(*all));
    if (!all)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "%s: out of memory", call);
    int rc = gpurma_team_allgather(team, &vote, all, sizeof(vote));
    for (int i = 0; !rc && i < team->size; i++)
        if (all[i].status || all[i].what != what)
            rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                  "rank %d: %s: team rank %d %s; every rank refuses",
                                  team->ctx->rank, call, i,
                                  all[i].status ? "refused it (its own message says why)"
                                                : "made the other call (register or "
                                                  "deregister)");
    free(all);
    return mine ? mine : rc;
}

/* This member's checks of a registration: 0, or an error with a message;
 * *seq the registration's number when they pass. */
static int check_register(struct gpurma_team_s *team, coll_regs_t *regs, void *buf,
                          size_t bytes, uint64_t *seq)
{
    if (!buf || !bytes)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: coll_register: buffer %p of %zu bytes (NULL or empty)",
                                team->ctx->rank, buf, bytes);
    if (gpurma_coll_wraps(buf, bytes))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: coll_register: %p + %zu bytes wraps the address space",
                                team->ctx->rank, buf, bytes);
    int rc = GPURMA_SUCCESS;
    *seq = 1;
    pthread_mutex_lock(&regs->lock);
    for (coll_reg_t *o = regs->list; o && !rc; o = o->next) {
        if (gpurma_coll_overlaps(o->buf, o->bytes, buf, bytes))
            rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                  "rank %d: coll_register: %p (%zu bytes) overlaps %p, "
                                  "registered already",
                                  team->ctx->rank, buf, bytes, o->buf);
        if (o->seq >= *seq)
            *seq = o->seq + 1;
    }
    pthread_mutex_unlock(&regs->lock);
    return rc;
}

static int do_register(struct gpurma_team_s *team, void *buf, size_t bytes)
{
    void *state;
    int rc = gpurma_team_slot(team, GPURMA_TEAM_SLOT_REGS, regs_create, NULL, regs_release, &state);
    if (rc)
        return rc;
    coll_regs_t *regs = state;
    uint64_t seq = 0;
    rc = agree(team, "coll_register", check_register(team, regs, buf, bytes, &seq), 1);
    if (rc)
        return rc;
    coll_reg_t *r = calloc(1, sizeof(*r));
    if (!r)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "coll_register: out of memory");
    /* Collective: every member makes its window (or none) now. */
    rc = gpurma_coll_direct_register(team, buf, bytes, seq, &r->direct);
    if (rc) {
        free(r);
        return rc;
    }
    r->buf = buf, r->bytes = bytes, r->seq = seq;
    pthread_mutex_lock(&regs->lock);
    r->next = regs->list;
    regs->list = r;
    pthread_mutex_unlock(&regs->lock);
    return team->sync->barrier(team); /* collective, like a window */
}

static int do_deregister(struct gpurma_team_s *team, void *buf)
{
    coll_regs_t *regs = gpurma_team_slot_peek(team, GPURMA_TEAM_SLOT_REGS);
    coll_reg_t *found = NULL;
    if (regs) {
        pthread_mutex_lock(&regs->lock);
        for (coll_reg_t *o = regs->list; o && !found; o = o->next)
            if (o->buf == buf)
                found = o;
        pthread_mutex_unlock(&regs->lock);
    }
    int mine = found ? GPURMA_SUCCESS
                     : gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                        "rank %d: coll_deregister: %p is not registered on this "
                                        "team",
                                        team->ctx->rank, buf);
    int rc = agree(team, "coll_deregister", mine, 2);
    if (rc)
        return rc;
    pthread_mutex_lock(&regs->lock);
    for (coll_reg_t **p = &regs->list; *p; p = &(*p)->next)
        if (*p == found) {
            *p = found->next;
            break;
        }
    pthread_mutex_unlock(&regs->lock);
    /* Every member's kernels that may map the buffer are done first. */
    rc = team->sync->barrier(team);
    gpurma_coll_direct_release(found->direct);
    free(found);
    return rc;
}

const gpurma_coll_direct_reg_t *gpurma_coll_registered(struct gpurma_team_s *team, const void *p,
                                                        size_t bytes, size_t *off)
{
    coll_regs_t *regs = gpurma_team_slot_peek(team, GPURMA_TEAM_SLOT_REGS);
    if (!regs)
        return NULL;
    const gpurma_coll_direct_reg_t *found = NULL;
    pthread_mutex_lock(&regs->lock);
    for (coll_reg_t *o = regs->list; o && !found; o = o->next)
        if (o->direct && (const char *)p >= (const char *)o->buf &&
            (size_t)((const char *)p - (const char *)o->buf) <= o->bytes &&
            bytes <= o->bytes - (size_t)((const char *)p - (const char *)o->buf)) {
            found = o->direct;
            *off = (size_t)((const char *)p - (const char *)o->buf);
        }
    pthread_mutex_unlock(&regs->lock);
    return found;
}
