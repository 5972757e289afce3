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

/* Frees the device window the team's stream barriers ran on
 * (stream_barrier.c), if any; for gpurma_team_destroy, before the team
 * goes. Not collective. */
void gpurma_stream_team_release(struct gpurma_team_s *team);
/* Frees the collectives' scratch windows of the team (coll_team.c) and
 * forgets its registered buffers; for gpurma_team_destroy. Not collective. */
void gpurma_coll_team_release(struct gpurma_team_s *team);

#endif
