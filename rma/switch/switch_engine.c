/*
 * switch_engine.c - the switch engine as a window's engine (GPURMA_ENGINE=
 * switch, or the window's engine parameter).
 *
 * A switch reaches exactly the members the mem engine maps: those on this
 * node. Point-to-point operations gain nothing from multicast, so they go
 * through the mem engine's mappings, with the mem engine's code for the
 * window's memory (its home engine, chosen when the window was created);
 * the switch's own operations, reduce and broadcast over a range of the
 * window (gpurma_switch_create, switch.c), load from and store to every
 * member's mapping, or use NVLink multicast where it is opted in and
 * nothing refuses it. Kernels reach these peers by load/store: the peer
 * table keeps their pointers.
 *
 * Asked only when forced: unforced, the mem engine serves the same peers
 * without the indirection. Peers it cannot reach (other nodes) go to the
 * engine that prefers them, as with any forced engine.
 */
#include "switch.h"

static int switch_reach(const struct gpurma_win_s *w, int peer, int forced)
{
    if (!forced || w->peers[peer].path == GPURMA_DEV_PATH_NONE)
        return 0;
    return 100;
}

static int switch_put(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                      uint32_t counter)
{
    return w->home->put(w, peer, off, src, n, counter);
}

static int switch_get(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n)
{
    return w->home->get(w, peer, dst, off, n);
}

static int switch_put_value(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n)
{
    return w->home->put_value(w, peer, off, v, n);
}

static int switch_signal(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                         uint64_t v)
{
    return w->home->signal(w, peer, sig, op, v);
}

static int switch_put_signal(struct gpurma_win_s *w, int peer, size_t off, const void *src,
                             size_t n, uint32_t sig, gpurma_signal_op_t op, uint64_t v,
                             uint32_t counter)
{
    return w->home->put_signal(w, peer, off, src, n, sig, op, v, counter);
}

static int switch_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                         uint64_t v, uint64_t compare, uint64_t *old)
{
    return w->home->atomic(w, peer, kind, off, v, compare, old);
}

static int switch_flush(struct gpurma_win_s *w, int peer) { return w->home->flush(w, peer); }
static int switch_flush_remote(struct gpurma_win_s *w, int peer)
{
    return w->home->flush_remote(w, peer);
}
static int switch_quiet(struct gpurma_win_s *w) { return w->home->quiet(w); }
static int switch_fence(struct gpurma_win_s *w) { return w->home->fence(w); }

const gpurma_engine_ops_t gpurma_engine_switch_ops = {
    .size         = sizeof(gpurma_engine_ops_t),
    .kind         = GPURMA_ENGINE_SWITCH,
    .reach        = switch_reach,
    .release      = gpurma_switch_release_win,
    .put          = switch_put,
    .get          = switch_get,
    .put_value    = switch_put_value,
    .signal       = switch_signal,
    .put_signal   = switch_put_signal,
    .atomic       = switch_atomic,
    .flush        = switch_flush,
    .flush_remote = switch_flush_remote,
    .quiet        = switch_quiet,
    .fence        = switch_fence,
};
