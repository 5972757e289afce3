/*
 * context.h - the library context, teams and node liveness. Not installed.
 *
 * Layer 3, src/core/: includes only src/common/, bootstrap/ and include/.
 * It holds the structs the layers above share (context, team) and the calls
 * they need from below; what windows (rma/) or teams (coll/) implement is
 * reached through tables they fill in (gpurma_ctx_hooks_t,
 * gpurma_team_sync_t), never declared here.
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
#define GPURMA_GONE_MAGIC 0x474f4e45u /* handle of a finalized context */

struct gpurma_win_s;
struct gpurma_ctx_s;
struct gpurma_team_s;

/* Calls that layers above the context (engines, windows) ask it to make,
 * so that the context never names them: progress from every wait (work
 * done, or 0), shutdown at finalize before the bootstrap closes, and the
 * news that a rank has died. Any slot may be NULL. */
typedef struct gpurma_ctx_hooks {
    int (*progress)(struct gpurma_ctx_s *ctx);
    void (*shutdown)(struct gpurma_ctx_s *ctx);
    void (*peer_failed)(struct gpurma_ctx_s *ctx, int world_rank);
} gpurma_ctx_hooks_t;
#define GPURMA_CTX_MAX_HOOKS 8

/* Exchange of one fixed-size block per member of the team being built:
 * all receives team_size blocks of len bytes, in team rank order. */
typedef struct gpurma_exchange {
    int (*allgather)(const struct gpurma_exchange *ex, const void *mine, void *all, size_t len);
    void *arg;          /* bootstrap, or the team whose system window carries it */
    const int *members; /* ranks (in that team) of the team being built; NULL: all */
    int nmembers, me;   /* me: this rank's index in members                       */
} gpurma_exchange_t;

/* Collectives over a team that windows and engines need (exchange at
 * window creation, allgather at switch setup, barrier at free), filled in
 * by the layer that builds teams (coll/), so that rma/ never names it.
 * Every slot is set on every team. */
typedef struct gpurma_team_sync {
    /* The exchange over the whole team, for window creation. */
    gpurma_exchange_t (*exchange)(struct gpurma_team_s *team);
    /* len bytes from every member into all, in team rank order. */
    int (*allgather)(struct gpurma_team_s *team, const void *mine, void *all, size_t len);
    /* gpurma_barrier: this rank's operations complete, then all arrive. */
    gpurma_status_t (*barrier)(struct gpurma_team_s *team);
} gpurma_team_sync_t;

/* State a layer above keeps per team (coll/: scratch windows, registered
 * buffers, ...), in a slot whose id that layer names: made on first use,
 * released once by its hook when the team goes. The team's slot_lock
 * guards the array; `making` marks a slot whose state a thread is making. */
typedef struct gpurma_team_slot {
    void *state;
    void (*release)(void *state);
    int   making;
} gpurma_team_slot_t;
#define GPURMA_TEAM_MAX_SLOTS 8

struct gpurma_team_s {
    uint32_t             magic;
    int                  builtin; /* world and node teams are freed by finalize */
    const gpurma_team_sync_t *sync; /* set by coll/ when it builds the team */
    struct gpurma_ctx_s *ctx;
    int                  rank, size;
    int                 *world_ranks;    /* [size]                                */
    struct gpurma_win_s *sys;            /* internal window: barrier, allgather   */
    /* Messages expected so far from each rank on the system window; subsets
     * of the team (splits) use it too, so the count is kept per origin. */
    uint64_t            *gather_expect;  /* [size] */
    uint64_t            *barrier_expect; /* [size] */
    struct gpurma_team_s *next_live; /* ctx->teams: split teams not freed */
    /* Set to 1 once a member is known dead (gpurma_peer_failed); pinned
     * host memory the GPU maps when the context has one: the team's
     * collective kernels read it (gpurma_dev_coll_t.gone). */
    uint64_t            *gone;
    int                  nwins;          /* user windows on it (ctx->lock)      */
    /* coll/coll_busy.c: 1 while a call of gpurma_coll.h (a collective,
     * coll_register, coll_deregister) runs on the team here; misused: 1
     * for good once two ran at the same time. */
    int                  coll_busy, coll_misused;
    pthread_mutex_t      slot_lock;
    pthread_cond_t       slot_made;      /* a slot's making ended               */
    gpurma_team_slot_t   slots[GPURMA_TEAM_MAX_SLOTS];
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
    /* What the user created and has not freed yet: finalize releases it.
     * Released handles become tombstones (gpurma_handle_bury). */
    struct gpurma_win_s  *wins;
    struct gpurma_team_s *teams;
    pthread_mutex_t      lock;      /* wins, teams                          */
    int                  device;    /* GPU ordinal or GPURMA_DEVICE_HOST   */
    /* Ranks known dead (any source: process gone, UCX endpoint, bootstrap),
     * never cleared; ndead counts them so the common case is one load. */
    uint8_t             *dead;      /* [size] */
    int                  ndead;
    uint64_t             next_liveness; /* next full check by non-waiting calls */
    int                  finalizing;    /* peers may close their connections now */
    /* Port engine proxy contexts, each started on first use. */
    struct gpurma_port  *ports[GPURMA_DEV_MAX_PORTS];
    /* What layers above registered (gpurma_ctx_add_hooks); read without
     * the lock up to nhooks (release-published). */
    const struct gpurma_ctx_hooks *hooks[GPURMA_CTX_MAX_HOOKS];
    int                  nhooks;
};

/* Validation of public handles (validate.c): sets the error message and
 * returns status. */
int gpurma_ctx_check(const struct gpurma_ctx_s *ctx);
int gpurma_team_check(const struct gpurma_team_s *team);
/* Message and status for a handle whose magic is dead or gone. */
int gpurma_handle_dead(uint32_t magic, const char *what, const void *h);

/* Peer death. Returns the world rank of a dead rank among the members,
 * GPURMA_RANK_UNKNOWN when the bootstrap reports a death in the job without
 * saying whose, or -1 if all are alive. */
#define GPURMA_RANK_UNKNOWN (-2)
int gpurma_liveness_check(struct gpurma_ctx_s *ctx, const int *world_ranks, int n);

/* Registers hooks once (a second call with the same pointer does
 * nothing); thread-safe. GPURMA_ERR_NO_MEMORY when the table is full. */
int gpurma_ctx_add_hooks(struct gpurma_ctx_s *ctx, const gpurma_ctx_hooks_t *hooks);
/* Runs every progress hook; the work done. */
int gpurma_ctx_progress(struct gpurma_ctx_s *ctx);

/* Records that a rank has died (how: for the log). Idempotent; safe from
 * any thread, including a transport's progress callback. Removes the
 * shared-memory segments it may have left on this node. */
void gpurma_peer_failed(struct gpurma_ctx_s *ctx, int world_rank, const char *how);

/* For calls that do not wait (flush, quiet): GPURMA_ERR_PEER_FAILED, with a
 * message naming the dead rank, when team rank peer (or any member, peer
 * -1) is known dead; looks for new deaths at most every liveness period. */
int gpurma_team_check_alive(struct gpurma_team_s *team, int peer, const char *what);

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
