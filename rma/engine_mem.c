/*
 * engine_mem.c - the mem engine on the host: the device API's load/store
 * code, run by the calling CPU thread. Peers of created windows are reached
 * through the same code, which hands the data movement to cma.c.
 */
#include "rma.h"

static void count_completion(struct gpurma_win_s *w, uint32_t counter)
{
    if (counter != GPURMA_NO_COUNTER)
        __atomic_fetch_add(&w->counters[counter], 1, __ATOMIC_RELEASE);
}

static int mem_put(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                   uint32_t counter)
{
    int rc = gpurma_dev_put(w->dev, peer, off, src, n);
    if (!rc) /* the copy is done: the source may be reused */
        count_completion(w, counter);
    return rc;
}

static int mem_get(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n)
{
    return gpurma_dev_get(w->dev, peer, dst, off, n);
}

static int mem_put_value(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n)
{
    return gpurma_dev_put_value(w->dev, peer, off, v, n);
}

static int mem_signal(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                      uint64_t v)
{
    return gpurma_dev_signal(w->dev, peer, sig, op, v);
}

static int mem_put_signal(struct gpurma_win_s *w, int peer, size_t off, const void *src,
                          size_t n, uint32_t sig, gpurma_signal_op_t op, uint64_t v,
                          uint32_t counter)
{
    int rc = gpurma_dev_put_signal(w->dev, peer, off, src, n, sig, op, v);
    if (!rc)
        count_completion(w, counter);
    return rc;
}

static int mem_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                      uint64_t v, uint64_t compare, uint64_t *old)
{
    return gpurma_dev__atomic(&w->dev, (int)kind, peer, off, v, compare, old);
}

/* Stores and kernel copies have completed when the call returned. */
static int mem_flush(struct gpurma_win_s *w, int peer)
{
    (void)w;
    (void)peer;
    return GPURMA_SUCCESS;
}

static int mem_quiet(struct gpurma_win_s *w) { return gpurma_dev_quiet(w->dev); }
static int mem_fence(struct gpurma_win_s *w) { return gpurma_dev_fence(w->dev); }

const gpurma_engine_ops_t gpurma_engine_mem_ops = {
    .size       = sizeof(gpurma_engine_ops_t),
    .name       = "mem",
    .kind       = GPURMA_ENGINE_MEM,
    .caps       = GPURMA_ENGINE_CAP_HOST_OPS | GPURMA_ENGINE_CAP_DEVICE_OPS,
    .put        = mem_put,
    .get        = mem_get,
    .put_value  = mem_put_value,
    .signal     = mem_signal,
    .put_signal = mem_put_signal,
    .atomic     = mem_atomic,
    .flush      = mem_flush,
    .quiet      = mem_quiet,
    .fence      = mem_fence,
};
