/*
 * stream_barrier.c - gpurma_barrier_on_stream: a team barrier ordered on a
 * CUDA stream, a one-thread dissemination barrier kernel over a small
 * device window made for the team on first use. Like the other
 * *_on_stream calls it enqueues and returns, so it can be captured into a
 * CUDA graph; host-backend contexts get GPURMA_ERR_UNSUPPORTED.
 */
#include <stdlib.h>

#include "coll.h"
#include "gpu.h"

/* The device window each team's stream barriers run on: one signal slot
 * per dissemination round and counter 0 for the epoch; in the team's slot
 * GPURMA_TEAM_SLOT_STREAM_BARRIER. */
static void barrier_window_release(void *state)
{
    struct gpurma_win_s *w = state;
    gpurma_win_destroy(w);
    free(w);
}

/* Collective over team (every member is in its first barrier_on_stream). */
static int barrier_window_create(struct gpurma_team_s *team, void *arg, void **state)
{
    (void)arg;
    uint32_t rounds = 0;
    for (int d = 1; d < team->size; d <<= 1)
        rounds++;
    gpurma_win_params_t p = {GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                                 GPURMA_WIN_FIELD_NUM_COUNTERS | GPURMA_WIN_FIELD_ENGINE,
                             GPURMA_MEM_DEVICE, rounds ? rounds : 1, 1, GPURMA_ENGINE_MEM, 0};
    /* The first call may come while the thread captures a graph: the setup
     * (device allocation, IPC mapping, host exchanges) runs now, outside
     * the graph, which only gets the barrier kernel. */
    int saved;
    gpurma_gpu_capture_relax(&saved);
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    struct gpurma_win_s *w = NULL;
    int rc = gpurma_win_build(team, &ex, GPURMA_WIN_ALLOCATED, NULL, 0, &p, 1, &w);
    gpurma_gpu_capture_restore(saved);
    if (rc)
        return rc;
    for (int i = 0; i < w->size && !rc; i++)
        if (!w->gpu || w->peers[i].path != GPURMA_DEV_PATH_LOADSTORE || !w->peers[i].signals)
            rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                  "rank %d: barrier_on_stream: team rank %d is not mapped on "
                                  "this GPU (engine %s); stream barriers need a team whose "
                                  "members' GPUs reach each other by load/store",
                                  team->ctx->rank, i, gpurma_engine_name(w->engines[i]->kind));
    if (rc) {
        barrier_window_release(w);
        return rc;
    }
    *state = w;
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_barrier_on_stream(gpurma_team_t team, void *stream)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return rc;
    struct gpurma_ctx_s *ctx = team->ctx;
    if (ctx->device < 0)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: barrier_on_stream: this context uses no GPU (host "
                                "backend); use gpurma_barrier",
                                ctx->rank);
    rc = gpurma_gpu_stream_begin(ctx->device, stream);
    if (rc || team->size == 1)
        return rc; /* alone: the stream is already in order */
    void *state = NULL;
    rc = gpurma_team_slot(team, GPURMA_TEAM_SLOT_STREAM_BARRIER, barrier_window_create, NULL,
                          barrier_window_release, &state);
    if (rc)
        return rc;
    struct gpurma_win_s *w = state;
    rc = gpurma_gpu_stream_begin(ctx->device, stream); /* setup may switch GPUs */
    return rc ? rc : gpurma_gpu_stream_barrier(stream, &w->dev);
}
