/*
 * algo_ce.c - allgather, alltoall, alltoallv and broadcast through the
 * port engine and the copy engines: no kernel moves data, so no SM is taken
 * from the application's kernels (the point the CCCL paper makes about SM
 * contention). GPURMA_COLL_ALGO=ce forces it.
 *
 * Each team gets, on first use, its own window (apart from the scratch
 * window of the other algorithms, whose signals follow the epoch protocol):
 * one slot per source, and signals
 *     0 .. n-1    "peer p's slot for my data is free" (p signals ADD 1)
 *     n .. 2n-1   "source s's data is in my slot s"   (s signals ADD 1)
 * Every signal is set to the call's word (ce_word: its fingerprint, never
 * 0), waited for and then reset to 0 by its owner, so a replayed CUDA
 * graph finds them as the capture did, and nothing on the host counts
 * epochs. A piece larger than a slot goes in steps; each step:
 *     1. tell every source its slot is free (the last step's copy-out is
 *        done: it is ordered before);
 *     2. wait until every destination's slot for me is free, reset;
 *     3. per destination: put my piece of this step there with the data
 *        signal;
 *     4. local completion of the puts (in place, recv is their source);
 *     5. per source: wait for its data, reset, copy slot -> recv.
 * A signal is never raised twice before its owner resets it: the next
 * "free" needs the data this step's reset preceded, and the next data
 * needs the next "free".
 *
 * The word makes a call that meets another one fail instead of moving the
 * wrong bytes: a rank that passed another collective, count, dtype or root
 * raises its signals with another word. On the host the waiter reads the
 * word and refuses (INVALID_ARG); on a stream it waits for its own word
 * only, so it times out. Both directions carry it, and step 2 waits for
 * every destination before sending anything: a rank that learns of a
 * mismatch has sent nothing yet, so its peers fail too (refused or timed
 * out) instead of one of them, a broadcast root for instance, returning
 * success.
 *
 * Host path (stream NULL): a host-memory window on the port engine: puts
 * and signals are descriptors the proxy executes (memcpy on the host
 * backend), waits are gpurma_wait_until (timeouts, dead peers). Stream
 * path: a device window and the gpurma_*_on_stream calls: puts are
 * cudaMemcpyAsync into the peer's mapping (copy engine), signals, waits
 * and resets one-thread kernels; copies out and the own block are
 * cudaMemcpyAsync too. Stream-ordered, no host synchronization.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "coll.h"
#include "coll_internal.h"
#include "gpu.h"
#include "gpurma_internal.h"

/* The team's window for this algorithm in one kind of memory; in the
 * team's slot GPURMA_TEAM_SLOT_CE_HOST or _GPU. */
typedef struct ce_window {
    struct gpurma_win_s *win;
    size_t               slot; /* bytes per source and step */
} ce_window_t;

static void ce_window_release(void *state)
{
    ce_window_t *w = state;
    gpurma_win_destroy(w->win);
    free(w->win);
    free(w);
}

/* Collective over team; arg: the device flag (0 host memory through the
 * port engine, 1 GPU memory). */
static int ce_window_create(struct gpurma_team_s *team, void *arg, void **state)
{
    const int device = *(const int *)arg;
    struct gpurma_ctx_s *ctx = team->ctx;
    int rc = device ? gpurma_team_need_gpu(team) : GPURMA_SUCCESS;
    if (rc)
        return rc;
    const size_t n = (size_t)team->size;
    /* As many bytes per step as the scratch path's parts hold together
     * (GPURMA_COLL_SCRATCH_PARTS on a GPU, 2 on the host), within 32 MiB
     * per rank. */
    size_t slot = (size_t)gpurma_config()->coll_slot_bytes *
                  (device ? (size_t)GPURMA_COLL_SCRATCH_PARTS : 2);
    size_t fair = ((size_t)32 << 20) / n;
    if (slot > fair)
        slot = fair > 1024 ? fair : 1024;
    slot &= ~(size_t)15;
    size_t bytes;
    if (gpurma_size_mul(n, slot, &bytes) || n > UINT32_MAX / 2)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY,
                                "rank %d: ce collectives: %zu slots of %zu bytes do not fit",
                                ctx->rank, n, slot);
    ce_window_t *w = calloc(1, sizeof(*w));
    if (!w)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "ce collectives: out of memory");
    /* Host memory goes through the port engine (the proxy moves it); on the
     * GPU the stream calls copy through the peers' mappings whatever the
     * engine, so the automatic choice stands. */
    gpurma_win_params_t p = {GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                                 GPURMA_WIN_FIELD_NUM_COUNTERS | GPURMA_WIN_FIELD_ENGINE,
                             device ? GPURMA_MEM_DEVICE : GPURMA_MEM_HOST, 2u * (uint32_t)n, 0,
                             device ? GPURMA_ENGINE_AUTO : GPURMA_ENGINE_PORT, 0};
    /* It may be made while a graph is captured: the setup runs outside. */
    int saved = 0;
    if (device)
        gpurma_gpu_capture_relax(&saved);
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    rc = gpurma_win_build(team, &ex, GPURMA_WIN_ALLOCATED, NULL, bytes, &p, 1, &w->win);
    if (device)
        gpurma_gpu_capture_restore(saved);
    if (rc) {
        free(w);
        return rc;
    }
    w->slot = slot;
    *state = w;
    return GPURMA_SUCCESS;
}

static int ce_window(struct gpurma_team_s *team, int device, ce_window_t **out)
{
    void *state;
    int rc = gpurma_team_slot(team, device ? GPURMA_TEAM_SLOT_CE_GPU : GPURMA_TEAM_SLOT_CE_HOST,
                              ce_window_create, &device, ce_window_release, &state);
    if (rc == GPURMA_SUCCESS)
        *out = state;
    return rc;
}

/* ------------------------------------------------------------ one call */

typedef struct {
    const coll_call_t *a;
    struct gpurma_win_s *win;
    void *stream; /* NULL: host path */
    size_t slot, es;
    int me, n;
    uint64_t word; /* every signal's value in this call (ce_word) */
} ce_t;

/* The value of this call's signals: which collective, count, dtype and
 * root (alltoallv: the team's largest count, agreed before), never 0: the
 * print over the count's low 32 bits, so that two calls whose counts
 * differ together with another field share a word only if their prints
 * collide and their counts are a multiple of 2^32 apart too (a 32-bit
 * print alone lets such pairs of modest counts meet). */
static uint64_t ce_word(const coll_call_t *a)
{
    const size_t count = a->kind == GPURMA_COLL_ALLTOALLV ? a->max_count : a->count;
    const int root = a->kind == GPURMA_COLL_BROADCAST ? a->root : 0;
    return (uint64_t)gpurma_dcoll__print(GPURMA_DCOLL__K_BARRIER + 1 + (int)a->kind, count,
                                         a->dtype, GPURMA_SUM, root)
               << 32 |
           (uint32_t)count;
}

/* The block this rank sends peer p (len 0: none) and receives from s. */
static const char *send_block(const ce_t *x, int p, size_t *len)
{
    const coll_call_t *a = x->a;
    const char *s = a->send;
    switch (a->kind) {
    case GPURMA_COLL_ALLGATHER:
        *len = a->bytes;
        return s;
    case GPURMA_COLL_ALLTOALL:
        *len = a->bytes;
        return s + (size_t)p * a->bytes;
    case GPURMA_COLL_ALLTOALLV: /* products checked by the API (extent) */
        *len = a->send_counts[p] * x->es;
        return s + a->send_displs[p] * x->es;
    default: /* broadcast */
        *len = x->me == a->root ? a->bytes : 0;
        return s;
    }
}

static char *recv_block(const ce_t *x, int s, size_t *len)
{
    const coll_call_t *a = x->a;
    char *r = a->recv;
    switch (a->kind) {
    case GPURMA_COLL_ALLGATHER:
    case GPURMA_COLL_ALLTOALL:
        *len = a->bytes;
        return r + (size_t)s * a->bytes;
    case GPURMA_COLL_ALLTOALLV:
        *len = a->recv_counts[s] * x->es;
        return r + a->recv_displs[s] * x->es;
    default: /* broadcast */
        *len = s == a->root ? a->bytes : 0;
        return r;
    }
}

/* Whether this rank sends to p / receives from s at all (broadcast: only
 * the root sends); the same answer on both ends, so waits always match. */
static int sends_to(const ce_t *x, int p)
{
    return p != x->me && (x->a->kind != GPURMA_COLL_BROADCAST || x->me == x->a->root);
}

static int receives_from(const ce_t *x, int s)
{
    return s != x->me && (x->a->kind != GPURMA_COLL_BROADCAST || s == x->a->root);
}

/* The part of a len-byte block that step k moves: [k * slot, ...). */
static size_t step_len(const ce_t *x, size_t len, size_t k, size_t *off)
{
    *off = k * x->slot;
    return *off >= len ? 0 : len - *off < x->slot ? len - *off : x->slot;
}

static int ce_signal(const ce_t *x, int peer, uint32_t sig)
{
    return x->stream
               ? gpurma_signal_on_stream(x->win, peer, sig, GPURMA_SIGNAL_SET, x->word, x->stream)
               : gpurma_signal(x->win, peer, sig, GPURMA_SIGNAL_SET, x->word);
}

static int ce_put_signal(const ce_t *x, int peer, size_t off, const void *src, size_t len,
                         uint32_t sig)
{
    if (!len)
        return ce_signal(x, peer, sig);
    if (!x->stream)
        return gpurma_put_signal(x->win, peer, off, src, len, sig, GPURMA_SIGNAL_SET, x->word);
    /* Not put_signal_on_stream: it copies small pieces with a kernel. */
    int rc = gpurma_put_on_stream(x->win, peer, off, src, len, x->stream);
    return rc ? rc : ce_signal(x, peer, sig);
}

/* Waits for one raise of this rank's signal sig (from peer) and takes it
 * back; INVALID_ARG when peer raised it for another call. */
static int ce_take(const ce_t *x, uint32_t sig, int peer)
{
    if (x->stream) {
        int rc = gpurma_wait_until_on_stream(x->win, sig, GPURMA_CMP_EQ, x->word, x->stream);
        return rc ? rc : gpurma_signal_reset_on_stream(x->win, sig, x->stream);
    }
    uint64_t got = 0;
    int rc = gpurma_wait_until(x->win, sig, GPURMA_CMP_NE, 0);
    if (!rc)
        rc = gpurma_signal_read(x->win, sig, &got);
    if (!rc && got != x->word)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: rank %d of the team passed another collective, count, "
                                "dtype or root",
                                x->me, peer);
    return rc ? rc : gpurma_signal_reset(x->win, sig);
}

/* A local copy: stream-ordered on the stream path. */
static int ce_copy(const ce_t *x, void *dst, const void *src, size_t len)
{
    if (!len || dst == src)
        return GPURMA_SUCCESS;
    if (x->stream)
        return gpurma_gpu_stream_copy(x->stream, dst, src, len);
    memcpy(dst, src, len);
    return GPURMA_SUCCESS;
}

static int ce_step(const ce_t *x, size_t k)
{
    const uint32_t n = (uint32_t)x->n, me = (uint32_t)x->me;
    int rc = GPURMA_SUCCESS;
    for (int s = 0; s < x->n && !rc; s++)
        if (receives_from(x, s))
            rc = ce_signal(x, s, me);
    for (int p = 0; p < x->n && !rc; p++)
        if (sends_to(x, p))
            rc = ce_take(x, (uint32_t)p, p);
    for (int p = 0; p < x->n && !rc; p++) {
        if (!sends_to(x, p))
            continue;
        size_t len, off;
        const char *src = send_block(x, p, &len);
        len = step_len(x, len, k, &off);
        rc = ce_put_signal(x, p, (size_t)me * x->slot, len ? src + off : NULL, len, n + me);
    }
    /* In place, recv is the puts' source: they must be done before the
     * copies out overwrite it (stream order gives that on a stream). */
    if (!rc && !x->stream)
        rc = gpurma_flush_local(x->win, GPURMA_ALL_PEERS);
    const char *base = gpurma_win_base(x->win);
    for (int s = 0; s < x->n && !rc; s++) {
        if (!receives_from(x, s))
            continue;
        size_t len, off;
        char *dst = recv_block(x, s, &len);
        len = step_len(x, len, k, &off);
        rc = ce_take(x, n + (uint32_t)s, s);
        if (!rc)
            rc = ce_copy(x, dst + off, base + (size_t)s * x->slot, len);
    }
    return rc;
}

int gpurma_coll_ce_run(const coll_call_t *a)
{
    ce_window_t *w = NULL;
    int rc = ce_window(a->team, a->stream != NULL, &w);
    if (rc)
        return rc;
    if (a->stream && (rc = gpurma_gpu_stream_begin(a->team->ctx->device, a->stream)))
        return rc; /* the local copies below come before any window call */
    ce_t x = {a, w->win, a->stream, w->slot, gpurma_dev_dtype_size(a->dtype), a->team->rank,
              a->team->size, ce_word(a)};
    /* This rank's own block: a local copy (none in place; none but the
     * root's in a broadcast, where own_len is 0 elsewhere). */
    size_t own_len, in_len;
    char *own = recv_block(&x, x.me, &own_len);
    const char *in = send_block(&x, x.me, &in_len);
    rc = ce_copy(&x, own, in, own_len);
    /* a->bytes: the largest block any rank sends one peer (alltoallv: agreed
     * by the team), so every rank takes the same steps; one step of empty
     * pieces when it is 0, so that a rank passing a count of 0 raises its
     * signals with its word and meets its peers' (an error on every rank
     * beside peers that passed more, not a success at once). */
    const size_t steps = a->bytes ? a->bytes / x.slot + (a->bytes % x.slot != 0) : 1;
    for (size_t k = 0; k < steps && !rc; k++)
        rc = ce_step(&x, k);
    return rc;
}
