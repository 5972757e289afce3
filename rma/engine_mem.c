/*
 * engine_mem.c - the mem engine on the host: the device API's load/store
 * code, run by the calling CPU thread. Peers of created windows are reached
 * through the same code, which hands the data movement to cma.c. Windows in
 * GPU memory go to engine_gpu.c (the host cannot load and store there).
 *
 * It serves every peer whose memory this node maps (window.c decides which:
 * not private memory on a team spanning nodes, whose atomics must all be
 * the network's).
 */
#include "rma.h"

static int mem_reach(const struct gpurma_win_s *w, int peer, int forced)
{
    (void)forced;
    if (w->peers[peer].path == GPURMA_DEV_PATH_NONE)
        return 0;
    return 100; /* nothing is faster than the memory itself */
}

static void count_completion(struct gpurma_win_s *w, uint32_t counter)
{
    if (counter != GPURMA_NO_COUNTER)
        __atomic_fetch_add(&w->counters[counter], 1, __ATOMIC_RELEASE);
}

static int mem_put(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                   uint32_t counter)
{
    if (w->gpu) /* device memory: engine_gpu.c */
        return gpurma_engine_gpu_ops.put(w, peer, off, src, n, counter);
    int rc = gpurma_dev_put(w->dev, peer, off, src, n);
    if (!rc) /* the copy is done: the source may be reused */
        count_completion(w, counter);
    return rc;
}

static int mem_get(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n)
{
    if (w->gpu) /* device memory: engine_gpu.c */
        return gpurma_engine_gpu_ops.get(w, peer, dst, off, n);
    return gpurma_dev_get(w->dev, peer, dst, off, n);
}

static int mem_put_value(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n)
{
    if (w->gpu) /* device memory: engine_gpu.c */
        return gpurma_engine_gpu_ops.put_value(w, peer, off, v, n);
    return gpurma_dev_put_value(w->dev, peer, off, v, n);
}

static int mem_signal(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                      uint64_t v)
{
    if (w->gpu) /* device memory: engine_gpu.c */
        return gpurma_engine_gpu_ops.signal(w, peer, sig, op, v);
    return gpurma_dev_signal(w->dev, peer, sig, op, v);
}

static int mem_put_signal(struct gpurma_win_s *w, int peer, size_t off, const void *src,
                          size_t n, uint32_t sig, gpurma_signal_op_t op, uint64_t v,
                          uint32_t counter)
{
    if (w->gpu) /* device memory: engine_gpu.c */
        return gpurma_engine_gpu_ops.put_signal(w, peer, off, src, n, sig, op, v, counter);
    int rc = gpurma_dev_put_signal(w->dev, peer, off, src, n, sig, op, v);
    if (!rc)
        count_completion(w, counter);
    return rc;
}

static int mem_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                      uint64_t v, uint64_t compare, uint64_t *old)
{
    if (w->gpu) /* device memory: engine_gpu.c */
        return gpurma_engine_gpu_ops.atomic(w, peer, kind, off, v, compare, old);
    return gpurma_dev__atomic(&w->dev, (int)kind, peer, off, v, compare, old);
}

/* Stores and kernel copies have completed when the call returned. */
/* Device windows: every host call returned complete (engine_gpu.c). */
static int mem_quiet(struct gpurma_win_s *w) { return w->gpu ? 0 : gpurma_dev_quiet(w->dev); }
static int mem_fence(struct gpurma_win_s *w) { return w->gpu ? 0 : gpurma_dev_fence(w->dev); }

const gpurma_engine_ops_t gpurma_engine_mem_ops = {
    .size       = sizeof(gpurma_engine_ops_t),
    .kind       = GPURMA_ENGINE_MEM,
    .caps       = 0,
    .reach      = mem_reach,
    .put        = mem_put,
    .get        = mem_get,
    .put_value  = mem_put_value,
    .signal     = mem_signal,
    .put_signal = mem_put_signal,
    .atomic     = mem_atomic,
    .quiet      = mem_quiet,
    .fence      = mem_fence,
};
