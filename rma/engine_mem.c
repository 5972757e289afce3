/*
 * engine_mem.c - the mem engine on windows in host memory: the device API's
 * load/store code, run by the calling CPU thread. Peers of created windows
 * are reached through the same code, which hands the data movement to
 * cma.c. Windows in GPU memory have the mem engine's other variant
 * (engine_gpu.c): the host cannot load and store there.
 *
 * It serves every peer whose memory this node maps (window.c decides which:
 * not private memory on a team spanning nodes, whose atomics must all be
 * the network's). It also serves this rank's own signal slots (wait, read,
 * reset) on every host window, whichever engine serves its peers.
 */
#include <stdio.h>

#include "rma.h"

static int mem_reach(const struct gpurma_win_s *w, int peer, int forced)
{
    (void)forced;
    if (w->gpu || w->peers[peer].path == GPURMA_DEV_PATH_NONE)
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

static int mem_quiet(struct gpurma_win_s *w) { return gpurma_dev_quiet(w->dev); }
static int mem_fence(struct gpurma_win_s *w) { return gpurma_dev_fence(w->dev); }

/* ------------------------------------------- this rank's signal slots */

static int mem_wait(struct gpurma_win_s *w, uint32_t sig, gpurma_cmp_t cmp, uint64_t value)
{
    gpurma_dev_signal_slot_t *slot = &w->dev.signals[sig];
    /* Already there: no need to build the text that only errors use. */
    if (gpurma_dev_compare(__atomic_load_n(&slot->value, __ATOMIC_ACQUIRE), cmp, value))
        return GPURMA_SUCCESS;
    char what[GPURMA_WAIT_WHAT_MAX];
    gpurma_wait_what(what, sizeof(what), sig, cmp, value);
    int rc = gpurma_wait_u64(w->team, &slot->value, cmp, value, what, -1);
    if (rc == GPURMA_ERR_TIMEOUT) {
        uint32_t origin = __atomic_load_n(&slot->last_origin, __ATOMIC_RELAXED);
        char text[512];
        snprintf(text, sizeof(text), "%s", gpurma_error_text());
        if (origin == UINT32_MAX)
            gpurma_set_error(rc, "%s; no rank has signalled it yet", text);
        else
            gpurma_set_error(rc, "%s; last signalled by team rank %u", text, origin);
    }
    return rc;
}

static int mem_signal_read(struct gpurma_win_s *w, uint32_t sig, uint64_t *value)
{
    *value = __atomic_load_n(&w->dev.signals[sig].value, __ATOMIC_ACQUIRE);
    return GPURMA_SUCCESS;
}

static int mem_signal_reset(struct gpurma_win_s *w, uint32_t sig)
{
    __atomic_store_n(&w->dev.signals[sig].value, 0, __ATOMIC_RELEASE);
    return GPURMA_SUCCESS;
}

const gpurma_engine_ops_t gpurma_engine_mem_ops = {
    .size         = sizeof(gpurma_engine_ops_t),
    .kind         = GPURMA_ENGINE_MEM,
    .caps         = 0,
    .reach        = mem_reach,
    .put          = mem_put,
    .get          = mem_get,
    .put_value    = mem_put_value,
    .signal       = mem_signal,
    .put_signal   = mem_put_signal,
    .atomic       = mem_atomic,
    .quiet        = mem_quiet,
    .fence        = mem_fence,
    .wait         = mem_wait,
    .signal_read  = mem_signal_read,
    .signal_reset = mem_signal_reset,
};
