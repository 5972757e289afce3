/*
 * context.h - the library context, teams and node liveness. Not installed.
 */
#ifndef GPURMA_CONTEXT_H
#define GPURMA_CONTEXT_H

#include <pthread.h>
#include <sys/types.h>

#include "bootstrap.h"
#include "gpurma/detail/dev_types.h"
#include "gpurma_internal.h"

#define GPURMA_CTX_MAGIC  0x43545852u /* live context */
#define GPURMA_TEAM_MAGIC 0x5445414du /* live team    */
#define GPURMA_DEAD_MAGIC 0xdeadbeefu /* freed handle */

struct gpurma_win_s;

/* Exchange of one fixed-size block per member of the team being built:
 * all receives team_size blocks of len bytes, in team rank order. */
typedef struct gpurma_exchange {
    int (*allgather)(const struct gpurma_exchange *ex, const void *mine, void *all, size_t len);
    void *arg;          /* bootstrap, or the team whose system window carries it */
    const int *members; /* ranks (in that team) of the team being built; NULL: all */
    int nmembers, me;   /* me: this rank's index in members                       */
} gpurma_exchange_t;

struct gpurma_team_s {
    uint32_t             magic;
    int                  builtin; /* world and node teams are freed by finalize */
    struct gpurma_ctx_s *ctx;
    int                  rank, size;
    int                 *world_ranks;    /* [size]                                */
    struct gpurma_win_s *sys;            /* internal window: barrier, allgather   */
    /* Messages expected so far from each rank on the system window; subsets
     * of the team (splits) use it too, so the count is kept per origin. */
    uint64_t            *gather_expect;  /* [size] */
    uint64_t            *barrier_expect; /* [size] */
    struct gpurma_team_s *next_freed;
};

struct gpurma_ctx_s {
    uint32_t             magic;
    gpurma_bootstrap_t  *bs;
    int                  rank, size;
    uint64_t             timeout_ns;
    uint64_t             liveness_ns;
    uint64_t             spin_ns;   /* waits spin this long before yielding */
    pid_t               *pids;      /* [size] process ids, meaningful on this node */
    struct gpurma_team_s *world, *node;
    struct gpurma_win_s *graveyard; /* freed windows, kept to detect reuse */
    struct gpurma_team_s *team_graveyard; /* freed teams, likewise           */
    pthread_mutex_t      lock;      /* graveyard, team list                */
    int                  device;    /* GPU ordinal or GPURMA_DEVICE_HOST   */
    /* Port engine proxy contexts, each started on first use. */
    struct gpurma_port  *ports[GPURMA_DEV_MAX_PORTS];
};

/* Validation of public handles: sets the error message and returns status. */
int gpurma_ctx_check(const struct gpurma_ctx_s *ctx);
int gpurma_team_check(const struct gpurma_team_s *team);

/* Team creation from an explicit member list, and the team-scoped exchange
 * that windows use. */
int gpurma_team_create(struct gpurma_ctx_s *ctx, const int *world_ranks, int n, int my_rank,
                       int builtin, const gpurma_exchange_t *ex, struct gpurma_team_s **out);
int gpurma_team_split_internal(struct gpurma_team_s *parent, int color, int key, int builtin,
                               struct gpurma_team_s **out);
/* Releases everything but the handle itself, which is marked dead. */
void gpurma_team_destroy(struct gpurma_team_s *team);
int gpurma_team_allgather(struct gpurma_team_s *team, const void *mine, void *all, size_t len);
gpurma_exchange_t gpurma_team_exchange(struct gpurma_team_s *team);

/* Peer death. Returns the world rank of a dead rank among the team's
 * members (or of the bootstrap's reported failure), or -1 if all are alive. */
int gpurma_liveness_check(struct gpurma_ctx_s *ctx, const int *world_ranks, int n);

/* Bounded wait on a 64-bit location of this process, with acquire ordering;
 * times out or reports a dead member of team. `what` names the wait in
 * messages ("wait_until(signal 3 >= 7)"), peer is the team rank waited for,
 * or -1 if unknown. */
int gpurma_wait_u64(struct gpurma_team_s *team, const uint64_t *p, gpurma_cmp_t cmp,
                    uint64_t value, const char *what, int peer);

/* One check of a wait in progress at time now (started at start): a dead
 * member of team or the timeout end it with an error (message as above). */
int gpurma_wait_stalled(struct gpurma_team_s *team, uint64_t start, uint64_t now,
                        uint64_t *next_check, uint64_t v, uint64_t value, const char *what,
                        int peer);

#endif
