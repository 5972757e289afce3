/*
 * stream.c - host-initiated operations ordered on a CUDA stream
 * (gpurma_*_on_stream). Each call checks its arguments exactly like the
 * plain host call (ops.c), then enqueues copies and small kernels on the
 * caller's stream through src/gpu.c and returns: nothing here waits for
 * the GPU, so the calls can be captured into CUDA graphs.
 *
 * Only device windows whose peers are mapped on this GPU qualify, and the
 * operations go straight to the mapping whichever engine serves the
 * window's other calls (the stream is their order and completion); host
 * windows, host-backend contexts and builds without CUDA get
 * GPURMA_ERR_UNSUPPORTED (after the argument checks, so that bad input is
 * reported the same way everywhere).
 *
 * What runs on the stream:
 *   put, get          cudaMemcpyAsync to or from the peer's IPC mapping
 *   put_signal        one kernel for small device-readable sources (the
 *                     block copies, one thread signals), else a copy and
 *                     the signal kernel
 *   signal            a one-thread kernel: system fence, then the slot
 *   put_value         a one-thread kernel (the value is a kernel argument,
 *                     so a replayed graph stores the value of the capture)
 *   wait_until        a one-thread kernel polling this rank's slot; on
 *                     timeout it records why and traps (src/gpu_kernels.cu)
 *   signal_reset      a one-thread kernel storing 0
 *   flush             nothing: stream order is local completion
 *   quiet             a system-scope fence kernel
 *   barrier           a one-thread dissemination barrier over a small
 *                     device window made for the team on first use
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"
#include "rma.h"

/* --------------------------------------------------------------- checks */

/* Argument checks are those of ops.c (gpurma_check_*), so that a call fails
 * identically on a stream. */

/* The window is in device memory and (peer >= 0) the GPU reaches the
 * peer's window by load/store; then makes the window's GPU current and
 * checks that the stream is one of its streams. */
static int check_device(const struct gpurma_win_s *w, const char *op, int peer, void *stream)
{
    if (!w->gpu)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: %s: the window is in host memory (%s); stream-ordered "
                                "operations need a device window",
                                w->ctx->rank, op,
                                w->ctx->device < 0 ? "this context uses no GPU"
                                                   : "allocated as GPURMA_MEM_HOST or created "
                                                     "on host memory");
    if (peer >= 0 && (w->peers[peer].path != GPURMA_DEV_PATH_LOADSTORE ||
                      !w->peers[peer].signals))
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: %s to peer %d: the peer is served by engine %s, not "
                                "mapped on this GPU; stream-ordered operations need peers whose "
                                "memory the GPU reaches by load/store",
                                w->ctx->rank, op, peer, w->engines[peer]->name);
    return gpurma_gpu_stream_begin(w->gpu->device, stream);
}

/* ------------------------------------------------------------ data, signals */

GPURMA_API gpurma_status_t gpurma_put_on_stream(gpurma_win_t w, int peer, size_t off,
                                                const void *src, size_t bytes, void *stream)
{
    int rc = gpurma_check_range(w, "put_on_stream", peer, off, bytes, src);
    if (!rc)
        rc = check_device(w, "put_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_copy(stream, w->peers[peer].base + off, src, bytes);
}

GPURMA_API gpurma_status_t gpurma_get_on_stream(gpurma_win_t w, int peer, void *dst, size_t off,
                                                size_t bytes, void *stream)
{
    int rc = gpurma_check_range(w, "get_on_stream", peer, off, bytes, dst);
    if (!rc)
        rc = check_device(w, "get_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_copy(stream, dst, w->peers[peer].base + off, bytes);
}

GPURMA_API gpurma_status_t gpurma_put_value_on_stream(gpurma_win_t w, int peer, size_t off,
                                                      uint64_t value, size_t bytes, void *stream)
{
    int rc = gpurma_check_put_value(w, "put_value_on_stream", peer, off, bytes);
    if (rc)
        return rc;
    rc = check_device(w, "put_value_on_stream", peer, stream);
    return rc ? rc
              : gpurma_gpu_stream_put_value(stream, w->peers[peer].base + off, value, bytes);
}

GPURMA_API gpurma_status_t gpurma_signal_on_stream(gpurma_win_t w, int peer, uint32_t sig,
                                                   gpurma_signal_op_t op, uint64_t value,
                                                   void *stream)
{
    int rc = gpurma_check_peer(w, "signal_on_stream", peer);
    if (!rc)
        rc = gpurma_check_signal_op(w, "signal_on_stream", sig, op);
    if (!rc)
        rc = check_device(w, "signal_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_signal(stream, &w->peers[peer].signals[sig], (uint32_t)w->rank,
                                    (int)op, value);
}

GPURMA_API gpurma_status_t gpurma_put_signal_on_stream(gpurma_win_t w, int peer, size_t off,
                                                       const void *src, size_t bytes,
                                                       uint32_t sig, gpurma_signal_op_t op,
                                                       uint64_t value, void *stream)
{
    int rc = gpurma_check_range(w, "put_signal_on_stream", peer, off, bytes, src);
    if (!rc)
        rc = gpurma_check_signal_op(w, "put_signal_on_stream", sig, op);
    if (!rc)
        rc = check_device(w, "put_signal_on_stream", peer, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_put_signal(w->gpu->device, stream, w->peers[peer].base + off, src,
                                        bytes, &w->peers[peer].signals[sig], (uint32_t)w->rank,
                                        (int)op, value);
}

GPURMA_API gpurma_status_t gpurma_wait_until_on_stream(gpurma_win_t w, uint32_t sig,
                                                       gpurma_cmp_t cmp, uint64_t value,
                                                       void *stream)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal(w, "wait_until_on_stream", sig);
    if (rc)
        return rc;
    if ((unsigned)cmp > GPURMA_CMP_LE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: wait_until_on_stream: unknown compare %d", w->ctx->rank,
                                (int)cmp);
    rc = check_device(w, "wait_until_on_stream", -1, stream);
    return rc ? rc : gpurma_gpu_stream_wait(stream, &w->dev, sig, (int)cmp, value);
}

GPURMA_API gpurma_status_t gpurma_signal_reset_on_stream(gpurma_win_t w, uint32_t sig,
                                                         void *stream)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal(w, "signal_reset_on_stream", sig);
    if (!rc)
        rc = check_device(w, "signal_reset_on_stream", -1, stream);
    if (rc)
        return rc;
    return gpurma_gpu_stream_store_u64(stream, &w->gpu->signals[sig].value, 0);
}

/* ----------------------------------------------------------- completion */

GPURMA_API gpurma_status_t gpurma_flush_on_stream(gpurma_win_t w, int peer, void *stream)
{
    int rc = peer == GPURMA_ALL_PEERS ? gpurma_win_check(w)
                                      : gpurma_check_peer(w, "flush_on_stream", peer);
    if (!rc)
        rc = check_device(w, "flush_on_stream", peer, stream);
    /* Copies and kernels complete in stream order: the work enqueued after
     * this point already starts after the earlier operations completed. */
    return rc;
}

GPURMA_API gpurma_status_t gpurma_quiet_on_stream(gpurma_win_t w, void *stream)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = check_device(w, "quiet_on_stream", -1, stream);
    return rc ? rc : gpurma_gpu_stream_fence(stream);
}

/* -------------------------------------------------------------- barrier */

/* The device window each team's stream barriers run on: one signal slot
 * per dissemination round and counter 0 for the epoch. Teams have no field
 * for it (context.h), so this list maps them; gpurma_stream_team_release
 * removes a team's entry when the team goes. */
typedef struct stream_barrier {
    struct gpurma_team_s  *team;
    struct gpurma_win_s   *win;
    struct stream_barrier *next;
} stream_barrier_t;

static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;
static stream_barrier_t *barriers;

static struct gpurma_win_s *barrier_lookup(const struct gpurma_team_s *team)
{
    struct gpurma_win_s *w = NULL;
    pthread_mutex_lock(&barrier_lock);
    for (stream_barrier_t *b = barriers; b && !w; b = b->next)
        if (b->team == team)
            w = b->win;
    pthread_mutex_unlock(&barrier_lock);
    return w;
}

/* Collective over team (every member is in its first barrier_on_stream). */
static int barrier_window(struct gpurma_team_s *team, struct gpurma_win_s **out)
{
    *out = barrier_lookup(team);
    if (*out)
        return GPURMA_SUCCESS;
    uint32_t rounds = 0;
    for (int d = 1; d < team->size; d <<= 1)
        rounds++;
    gpurma_win_params_t p = {GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                                 GPURMA_WIN_FIELD_NUM_COUNTERS | GPURMA_WIN_FIELD_ENGINE,
                             GPURMA_MEM_DEVICE, rounds ? rounds : 1, 1, GPURMA_ENGINE_MEM, 0};
    stream_barrier_t *b = calloc(1, sizeof(*b));
    if (!b)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "barrier_on_stream: out of memory");
    /* The first call may come while the thread captures a graph: the setup
     * (device allocation, IPC mapping, host exchanges) runs now, outside
     * the graph, which only gets the barrier kernel. */
    int saved;
    gpurma_gpu_capture_relax(&saved);
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    struct gpurma_win_s *w = NULL;
    int rc = gpurma_win_build(team, &ex, GPURMA_WIN_ALLOCATED, NULL, 0, &p, 0, &w);
    gpurma_gpu_capture_restore(saved);
    if (rc) {
        free(b);
        return rc;
    }
    for (int i = 0; i < w->size && !rc; i++)
        if (!w->gpu || w->peers[i].path != GPURMA_DEV_PATH_LOADSTORE || !w->peers[i].signals)
            rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                  "rank %d: barrier_on_stream: team rank %d is not mapped on "
                                  "this GPU (engine %s); stream barriers need a team whose "
                                  "members' GPUs reach each other by load/store",
                                  team->ctx->rank, i, w->engines[i]->name);
    if (rc) {
        gpurma_win_destroy(w);
        free(w);
        free(b);
        return rc;
    }
    b->team = team;
    b->win = w;
    pthread_mutex_lock(&barrier_lock);
    b->next = barriers;
    barriers = b;
    pthread_mutex_unlock(&barrier_lock);
    *out = w;
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
    struct gpurma_win_s *w;
    rc = barrier_window(team, &w);
    if (!rc)
        rc = gpurma_gpu_stream_begin(ctx->device, stream); /* setup may switch GPUs */
    return rc ? rc : gpurma_gpu_stream_barrier(stream, &w->dev);
}

void gpurma_stream_team_release(struct gpurma_team_s *team)
{
    stream_barrier_t *found = NULL;
    pthread_mutex_lock(&barrier_lock);
    for (stream_barrier_t **p = &barriers; *p; p = &(*p)->next) {
        if ((*p)->team == team) {
            found = *p;
            *p = found->next;
            break;
        }
    }
    pthread_mutex_unlock(&barrier_lock);
    if (found) {
        gpurma_win_destroy(found->win);
        free(found->win);
        free(found);
    }
}
