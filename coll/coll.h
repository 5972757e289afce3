/*
 * coll.h - teams and the collectives over them. Not installed.
 *
 * Layer 5, coll/: may include rma/, src/core/, src/gpu/, bootstrap/,
 * src/common/ and include/; only api/context.c (init and finalize) is
 * above it. Windows reach the team collectives they need through the
 * team's sync table (src/core/context.h), which teams fill in here.
 */
#ifndef GPURMA_COLL_H
#define GPURMA_COLL_H

#include "rma.h"

/* Team creation from an explicit member list (team.c); the world team is
 * built over the bootstrap's exchange, every later one over its parent's. */
int gpurma_team_create(struct gpurma_ctx_s *ctx, const int *world_ranks, int n, int my_rank,
                       int builtin, const gpurma_exchange_t *ex, struct gpurma_team_s **out);
int gpurma_team_split_internal(struct gpurma_team_s *parent, int color, int key, int builtin,
                               struct gpurma_team_s **out);
/* Releases everything but the handle itself, which is marked dead. */
void gpurma_team_destroy(struct gpurma_team_s *team);
/* The team-scoped exchange, over the team's system window. */
int gpurma_team_allgather(struct gpurma_team_s *team, const void *mine, void *all, size_t len);
gpurma_exchange_t gpurma_team_exchange(struct gpurma_team_s *team);

/* Per-team state of the files of coll/, one slot each (the team's slots,
 * src/core/context.h). gpurma_team_destroy calls the release hooks in this
 * order: registered buffers' windows before the scratch windows, and
 * these last, since the device handles made from them keep pointers to
 * their windows (which are then buried, not freed). */
typedef enum {
    GPURMA_TEAM_SLOT_STREAM_BARRIER, /* stream_barrier.c: the device window      */
    GPURMA_TEAM_SLOT_REGS,           /* coll_register.c: registered buffers       */
    GPURMA_TEAM_SLOT_GRAPHREG,       /* coll_graphreg.c: peers' buffers mapped    */
    GPURMA_TEAM_SLOT_CE_HOST,        /* algo_ce.c: its window in host memory      */
    GPURMA_TEAM_SLOT_CE_GPU,         /*            and in GPU memory              */
    GPURMA_TEAM_SLOT_SCRATCH_HOST,   /* coll_scratch.c: scratch in host memory    */
    GPURMA_TEAM_SLOT_SCRATCH_GPU,    /*                 and in GPU memory         */
    GPURMA_TEAM_SLOTS
} gpurma_team_slot_id_t;

/* Makes the state of a slot (often collectively over team); 0 and *state
 * set, or an error with nothing kept. */
typedef int (*gpurma_team_slot_make_t)(struct gpurma_team_s *team, void *arg, void **state);

/* The state in team's slot id: made by make(team, arg, ...) on the first
 * call, kept with release as its hook. A thread that asks while another
 * makes it waits for that one, so a collective making is never run twice
 * at once. */
int gpurma_team_slot(struct gpurma_team_s *team, gpurma_team_slot_id_t id,
                     gpurma_team_slot_make_t make, void *arg, void (*release)(void *state),
                     void **out);
/* The state in the slot, NULL while none was made. */
void *gpurma_team_slot_peek(struct gpurma_team_s *team, gpurma_team_slot_id_t id);

/* 0 when team's context uses a GPU, else an UNSUPPORTED error for the
 * stream-ordered collectives (whose GPU state a slot is about to make). */
int gpurma_team_need_gpu(const struct gpurma_team_s *team);

#endif
