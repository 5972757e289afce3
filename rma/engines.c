/*
 * engines.c - the engines a window may use, listed once.
 *
 * Adding an engine: its own files, one line in `registered` below and the
 * build list. The table is completed once: slots an engine leaves NULL get
 * the defaults here (nothing to set up; data operations it does not have
 * return GPURMA_ERR_UNSUPPORTED naming the engine and the operation), so
 * nothing that calls an engine tests for NULL.
 */
#include <pthread.h>
#include <string.h>

#include "rma.h"

extern const gpurma_engine_ops_t gpurma_engine_mem_ops;     /* engine_mem.c */
extern const gpurma_engine_ops_t gpurma_engine_mem_gpu_ops; /* engine_gpu.c */
extern const gpurma_engine_ops_t gpurma_engine_port_ops;    /* port_engine.c */
extern const gpurma_engine_ops_t gpurma_engine_switch_ops;  /* switch/      */

/* In the order engines are asked for a peer (a forced one goes first).
 * A forced kind is looked up by gpurma_engine_of_kind, which gives its
 * first entry: when that one is for the other kind of memory, it reaches
 * no peer and the peers go to the best entry, the kind's other one. */
static const gpurma_engine_ops_t *const registered[] = {
    &gpurma_engine_mem_ops,     /* windows in host memory */
    &gpurma_engine_mem_gpu_ops, /* windows in GPU memory  */
    &gpurma_engine_port_ops,
    &gpurma_engine_switch_ops,
};
#define NENGINES ((int)(sizeof(registered) / sizeof(registered[0])))

static gpurma_engine_ops_t completed[NENGINES];
static pthread_once_t completed_once = PTHREAD_ONCE_INIT;

static int unsupported(const struct gpurma_win_s *w, int peer, const char *op)
{
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "rank %d: %s to peer %d: engine %s cannot",
                            w->ctx->rank, op, peer,
                            gpurma_engine_name(w->engines[peer]->kind));
}

static int no_reach(const struct gpurma_win_s *w, int peer, int forced)
{
    (void)w, (void)peer, (void)forced;
    return 0;
}
static int no_connect(struct gpurma_win_s *w, const gpurma_exchange_t *ex, int rc)
{
    (void)w, (void)ex;
    return rc;
}
static void no_release(struct gpurma_win_s *w) { (void)w; }
static int no_put(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                  uint32_t counter)
{
    (void)off, (void)src, (void)n, (void)counter;
    return unsupported(w, peer, "put");
}
static int no_get(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n)
{
    (void)dst, (void)off, (void)n;
    return unsupported(w, peer, "get");
}
static int no_put_value(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n)
{
    (void)off, (void)v, (void)n;
    return unsupported(w, peer, "put_value");
}
static int no_signal(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                     uint64_t v)
{
    (void)sig, (void)op, (void)v;
    return unsupported(w, peer, "signal");
}
static int no_put_signal(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                         uint32_t sig, gpurma_signal_op_t op, uint64_t v, uint32_t counter)
{
    (void)off, (void)src, (void)n, (void)sig, (void)op, (void)v, (void)counter;
    return unsupported(w, peer, "put_signal");
}
static int no_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                     uint64_t v, uint64_t compare, uint64_t *old)
{
    (void)kind, (void)off, (void)v, (void)compare, (void)old;
    return unsupported(w, peer, "atomic");
}
/* This rank's own slots: named by the window's home engine, which the
 * caller asked. */
static int unsupported_here(const struct gpurma_win_s *w, uint32_t sig, const char *op)
{
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "rank %d: %s on signal %u: engine %s cannot",
                            w->ctx->rank, op, sig, gpurma_engine_name(w->home->kind));
}
static int no_wait(struct gpurma_win_s *w, uint32_t sig, gpurma_cmp_t cmp, uint64_t value)
{
    (void)cmp, (void)value;
    return unsupported_here(w, sig, "wait");
}
static int no_signal_read(struct gpurma_win_s *w, uint32_t sig, uint64_t *value)
{
    (void)value;
    return unsupported_here(w, sig, "signal_read");
}
static int no_signal_reset(struct gpurma_win_s *w, uint32_t sig)
{
    return unsupported_here(w, sig, "signal_reset");
}
/* Completion and ordering: an engine without them has nothing pending. */
static int nothing_pending(struct gpurma_win_s *w)
{
    (void)w;
    return GPURMA_SUCCESS;
}
static int nothing_to_flush(struct gpurma_win_s *w, int peer)
{
    (void)w, (void)peer;
    return GPURMA_SUCCESS;
}

/* Remote completion to one peer: everything, when the engine cannot tell
 * peers apart (quiet is its remote completion of everything). */
static int flush_remote_by_quiet(struct gpurma_win_s *w, int peer);

#define DEFAULT(slot, fn) if (!e->slot) e->slot = fn
static void complete_table(void)
{
    for (int i = 0; i < NENGINES; i++) {
        gpurma_engine_ops_t *e = &completed[i];
        memcpy(e, registered[i], registered[i]->size < sizeof(*e) ? registered[i]->size
                                                                 : sizeof(*e));
        e->size = sizeof(*e);
        DEFAULT(reach, no_reach);
        DEFAULT(connect, no_connect);
        DEFAULT(release, no_release);
        DEFAULT(put, no_put);
        DEFAULT(get, no_get);
        DEFAULT(put_value, no_put_value);
        DEFAULT(signal, no_signal);
        DEFAULT(put_signal, no_put_signal);
        DEFAULT(atomic, no_atomic);
        DEFAULT(flush, nothing_to_flush);
        DEFAULT(quiet, nothing_pending);
        DEFAULT(fence, nothing_pending);
        DEFAULT(flush_remote, flush_remote_by_quiet);
        DEFAULT(wait, no_wait);
        DEFAULT(signal_read, no_signal_read);
        DEFAULT(signal_reset, no_signal_reset);
    }
}

static int flush_remote_by_quiet(struct gpurma_win_s *w, int peer)
{
    return w->engines[peer]->quiet(w);
}
#undef DEFAULT

int gpurma_engine_count(void) { return NENGINES; }

const gpurma_engine_ops_t *gpurma_engine_at(int i)
{
    pthread_once(&completed_once, complete_table);
    return i >= 0 && i < NENGINES ? &completed[i] : NULL;
}

const gpurma_engine_ops_t *gpurma_engine_of_kind(gpurma_engine_t kind)
{
    for (int i = 0; i < NENGINES; i++)
        if (gpurma_engine_at(i)->kind == kind)
            return &completed[i];
    return NULL;
}

const gpurma_engine_ops_t *gpurma_engine_home(int on_gpu)
{
    pthread_once(&completed_once, complete_table);
    for (int i = 0; i < NENGINES; i++)
        if (registered[i] == (on_gpu ? &gpurma_engine_mem_gpu_ops : &gpurma_engine_mem_ops))
            return &completed[i];
    return NULL; /* not reached: both are registered */
}

GPURMA_API const char *gpurma_engine_name(gpurma_engine_t engine)
{
    static const char *const names[] = {GPURMA_ENGINE_NAMES};
    return (int)engine >= 0 && (int)engine < (int)(sizeof(names) / sizeof(names[0]))
               ? names[engine]
               : "none";
}
