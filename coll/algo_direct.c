/*
 * algo_direct.c - zero-copy collectives on a stream (allreduce, allgather,
 * reduce-scatter, alltoall, alltoallv, broadcast, reduce), for buffers
 * registered with
 * gpurma_coll_register: the registration makes a window over the user's
 * GPU buffer (CUDA IPC: every member maps every other member's registered
 * buffer once), and a call whose send and recv lie in registered buffers
 * runs one kernel that reads the peers' send buffers and writes their
 * recv buffers directly (include/gpurma/detail/coll_direct.h), with no
 * scratch slot and no step protocol in between.
 *
 * As with NCCL's symmetric buffers, every member passes buffers at the same
 * offsets of the same registrations (made in the same order); the kernel
 * checks that (a fingerprint every member publishes) and stops with an
 * error, never a wrong result, when a member passed something else. A
 * member that runs another algorithm for the call (its buffers are not
 * registered) makes the others time out.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_internal.h"
#include "gpu.h"
#include "gpurma_internal.h"

/* The zero-copy kernel's shape (GPURMA_COLL_DIRECT_*, config_table.h).
 * The smallest call (coll_api.c's direct_wanted): below it the LL
 * packets win, since the kernel's two meetings of every member cost more
 * than the copies; every member must take the same side of it, or the
 * call times out.
 * Blocks: a block's reads of remote memory are bound by their latency
 * (2-4 16-byte loads per source and thread in flight, dev_reduce.h), so a
 * call takes one block per block_bytes it moves, at most max_blocks: few
 * enough that every member's blocks fit on the GPU together when several
 * members share it (a member whose first block cannot start holds up
 * every member). docs/collectives.md has the measurements behind the
 * defaults. */

struct gpurma_coll_direct_reg {
    struct gpurma_win_s *win; /* over the registered buffer            */
    uint64_t             seq; /* registration number on this team        */
};

int gpurma_coll_direct_register(struct gpurma_team_s *team, void *buf, size_t bytes,
                                uint64_t seq, gpurma_coll_direct_reg_t **out)
{
    *out = NULL;
    if (team->ctx->device < 0 || !gpurma_gpu_is_device_ptr(buf))
        return GPURMA_SUCCESS; /* host memory: recorded only, the collectives copy */
    gpurma_coll_direct_reg_t *r = calloc(1, sizeof(*r));
    if (!r)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "coll_register: out of memory");
    gpurma_win_params_t p = {GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                                 GPURMA_WIN_FIELD_NUM_COUNTERS,
                             GPURMA_MEM_DEVICE, 1, 0, GPURMA_ENGINE_AUTO, 0};
    int saved = 0;
    gpurma_gpu_capture_relax(&saved);
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    int rc = gpurma_win_build(team, &ex, GPURMA_WIN_CREATED, buf, bytes, &p, 1, &r->win);
    gpurma_gpu_capture_restore(saved);
    if (rc) {
        free(r);
        return rc;
    }
    r->seq = seq;
    *out = r;
    return GPURMA_SUCCESS;
}

void gpurma_coll_direct_release(gpurma_coll_direct_reg_t *r)
{
    if (!r)
        return;
    gpurma_win_destroy(r->win);
    free(r->win);
    free(r);
}

/* Every member mapped here by load/store (one node, IPC), so that the
 * kernel can read and write its buffer. */
static int all_mapped(const struct gpurma_win_s *w)
{
    for (int p = 0; p < w->size; p++)
        if (w->peers[p].path != GPURMA_DEV_PATH_LOADSTORE || !w->peers[p].base)
            return 0;
    return 1;
}

/* The device kind of a collective that can go zero-copy, and the sides
 * of it that peers touch (their registrations are needed there: *sbytes
 * of send that peers read, *rbytes of recv that peers write; 0 where only
 * this rank does, which then passes its own pointer); 0 for the others.
 * *ropt: the recv side helps but is not needed (a reduce's: when every
 * member's recv is the same registration at the same offset, each member
 * reduces a share straight into the root's recv; the kernel compares the
 * identities they publish, so all choose alike; else the root reads every
 * send whole, and a non-root's recv, NULL or anything, is not touched).
 * In place, alltoall and reduce-scatter stay on the scratch path (*stay):
 * a member's stores would land in blocks of its send that a peer has yet
 * to read (reduce-scatter's result goes to block 0, which member 0 reads).
 * A member may pass them in place while its peers do not. */
static int direct_kind(const coll_call_t *a, size_t *sbytes, size_t *rbytes, int *ropt,
                       int *stay)
{
    const size_t n = (size_t)a->team->size, all = a->bytes * n; /* checked by the API */
    *sbytes = *rbytes = 0;
    *ropt = *stay = 0;
    switch (a->kind) {
    case GPURMA_COLL_ALLREDUCE:
        *sbytes = *rbytes = a->bytes;
        return GPURMA_DCOLL__K_ALLREDUCE;
    case GPURMA_COLL_ALLGATHER:
        *rbytes = all;
        return GPURMA_DCOLL__K_ALLGATHER;
    case GPURMA_COLL_REDUCE_SCATTER:
        *sbytes = all;
        *stay = a->send == a->recv;
        return GPURMA_DCOLL__K_REDUCE_SCATTER;
    case GPURMA_COLL_ALLTOALL:
        *rbytes = all;
        *stay = a->send == a->recv;
        return GPURMA_DCOLL__K_ALLTOALL;
    case GPURMA_COLL_BROADCAST: /* the root writes every recv; others forward shares */
        *rbytes = a->bytes;
        return GPURMA_DCOLL__K_BROADCAST;
    case GPURMA_COLL_REDUCE: /* every send is read; the root's recv may be written */
        *sbytes = *rbytes = a->bytes;
        *ropt = 1;
        return GPURMA_DCOLL__K_REDUCE;
    case GPURMA_COLL_ALLTOALLV: /* every member pulls; only if all agreed to */
        *sbytes = a->v_send_bytes ? a->v_send_bytes : 1;
        return a->v_peer_displs ? GPURMA_DCOLL__K_ALLTOALLV : 0;
    default:
        return 0;
    }
}

int gpurma_coll_direct_side(const gpurma_coll_direct_reg_t *g, size_t off,
                            gpurma_coll_side_t *out)
{
    if (g->win->size > GPURMA_DCOLL_DIRECT_MAX || !all_mapped(g->win))
        return 0;
    for (int p = 0; p < g->win->size; p++)
        out->at[p] = (const char *)g->win->peers[p].base + off;
    const uint64_t reg = gpurma_coll_mix(0x7265676973746572ull /* "register" */, g->seq);
    out->id = gpurma_coll_mix(reg, off) | 1;
    return 1;
}

/* Whether every member's buffer of side x holds whole elements (every
 * member sees the same offsets' alignment: all decide alike). */
static int side_aligned(const gpurma_coll_side_t *x, int n, size_t es)
{
    for (int p = 0; p < n; p++)
        if ((uintptr_t)x->at[p] % es)
            return 0;
    return 1;
}

/* Enqueues the kernel; s and r: every member's buffer of the sides peers
 * touch, NULL for a side only this rank uses. */
static int direct_run(const coll_call_t *a, int kind, const gpurma_dev_coll_t *c,
                      const gpurma_coll_side_t *s, const gpurma_coll_side_t *r)
{
#ifdef HAVE_CUDA
    gpurma_dcoll__direct_t d;
    memset(&d, 0, sizeof(d));
    /* A reduce's recv (optional, direct_kind) is published, not in the
     * fingerprint: members whose recvs differ still agree (on the root
     * reading every send). */
    const int ropt = kind == GPURMA_DCOLL__K_REDUCE;
    if (ropt && r)
        d.recv_id = gpurma_coll_mix(0x7265647563650000ull /* "reduce" */, r->id) | 1;
    const int n = a->team->size, me = a->team->rank;
    for (int p = 0; p < n; p++) {
        if (s)
            d.send[p] = s->at[p];
        if (r)
            d.recv[p] = (void *)(uintptr_t)r->at[p];
    }
    if (!s)
        d.send[me] = a->send;
    if (!r)
        d.recv[me] = a->recv;
    const size_t es = gpurma_dev_dtype_size(a->dtype);
    size_t pulled = 0;
    if (kind == GPURMA_DCOLL__K_ALLTOALLV) /* s is there: the members agreed on it */
        for (int p = 0; p < n; p++) {
            /* every product is within a buffer whose extent its owner checked */
            d.send[p] = (const char *)d.send[p] + a->v_peer_displs[p] * es;
            d.recv[p] = (char *)a->recv + a->recv_displs[p] * es;
            d.bytes[p] = a->recv_counts[p] * es;
            pulled += d.bytes[p];
        }
    /* Peers' buffers are used where this member says: the fingerprint
     * holds the identities of the sides peers touch. */
    uint64_t h = 0x6469726563740000ull; /* "direct" */
    h = gpurma_coll_mix(h, (uint64_t)kind), h = gpurma_coll_mix(h, (uint64_t)a->root);
    if (s)
        h = gpurma_coll_mix(h, s->id);
    if (r && !ropt)
        h = gpurma_coll_mix(h, r->id);
    h = gpurma_coll_mix(h, a->count), h = gpurma_coll_mix(h, (uint64_t)a->dtype);
    h = gpurma_coll_mix(h, (uint64_t)a->op), h = gpurma_coll_mix(h, a->max_count);
    d.fingerprint = h;
    /* Blocks by the bytes this member moves (above): an allreduce member
     * reduces its n-th, a reduce's member but the root its (n - 1)-th when
     * they share it out (a reduce whose members turn out not to share
     * keeps these blocks); the others move a block per member or one
     * block. */
    const int shared = kind == GPURMA_DCOLL__K_ALLREDUCE || d.recv_id;
    const size_t among = kind == GPURMA_DCOLL__K_REDUCE && n > 1 ? (size_t)n - 1 : (size_t)n;
    const size_t moved = shared                              ? a->bytes / among
                         : kind == GPURMA_DCOLL__K_ALLTOALLV ? pulled
                                                             : a->bytes;
    const size_t per = (size_t)gpurma_config()->coll_direct_block_bytes;
    size_t most = (size_t)gpurma_config()->coll_direct_blocks;
    /* Every member's kernel must fit on the GPU beside those of the
     * members that share it: a member whose first block never starts
     * holds up every member until the timeout. */
    const size_t fit = gpurma_coll_direct_resident(a->team->ctx->device) /
                       (size_t)gpurma_coll_gpu_sharers(a->team);
    if (fit && most > fit)
        most = fit;
    size_t blocks = moved / per;
    blocks = blocks < 1 ? 1 : blocks > most ? most : blocks;
    int rc = gpurma_gpu_stream_begin(a->team->ctx->device, a->stream);
    if (rc)
        return rc;
    return gpurma_coll_launch_direct(a->stream, c, (unsigned)blocks, &d, kind, a->count,
                                     (int)a->dtype, (int)a->op, a->root);
#else
    (void)kind, (void)c, (void)s, (void)r;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "rank %d: collectives on a stream need a build with CUDA",
                            a->team->ctx->rank);
#endif
}

uint64_t gpurma_coll_direct_v_identity(const coll_call_t *a, const gpurma_coll_direct_reg_t *s,
                                       size_t os)
{
    gpurma_coll_side_t x;
    if (!a->stream || !s || a->team->size > GPURMA_DCOLL_DIRECT_MAX ||
        !gpurma_coll_direct_side(s, os, &x) ||
        !side_aligned(&x, a->team->size, gpurma_dev_dtype_size(a->dtype)))
        return 0;
    return gpurma_coll_mix(0x616c6c746f616c6cull /* "alltoall" */, x.id) | 1;
}

int gpurma_coll_direct_sides(const coll_call_t *a, size_t *sbytes, size_t *rbytes, int *ropt,
                             int *stay)
{
    *sbytes = *rbytes = 0;
    *ropt = *stay = 0;
    return a->stream ? direct_kind(a, sbytes, rbytes, ropt, stay) : 0;
}

int gpurma_coll_direct_try(const coll_call_t *a, const gpurma_dev_coll_t *c, int kind,
                           const gpurma_coll_side_t *s, const gpurma_coll_side_t *r, int *rc)
{
    const int n = a->team->size;
    const size_t es = gpurma_dev_dtype_size(a->dtype);
    if (kind == GPURMA_DCOLL__K_REDUCE && r && !side_aligned(r, n, es))
        r = NULL; /* optional (direct_kind): the root then reads every send */
    if (n > GPURMA_DCOLL_DIRECT_MAX || (s && !side_aligned(s, n, es)) ||
        (r && !side_aligned(r, n, es)))
        return 0;
    *rc = direct_run(a, kind, c, s, r);
    return 1;
}
