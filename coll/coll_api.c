/*
 * coll_api.c - the collectives of gpurma_coll.h: argument checks (bad
 * input returns GPURMA_ERR_INVALID_ARG with a message before anything is
 * written or sent), the algorithm from the selector, and the run: on the
 * host (stream NULL) by the calling thread through the device collectives
 * of gpurma_coll_device.h on the team's host scratch window; on a stream
 * by a kernel running the same functions (coll_stream.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "coll_internal.h"
#include "gpu.h"
#include "gpurma_internal.h"

static const char *const kind_names[GPURMA_COLL_KINDS] = {
    "allreduce", "allgather", "reduce_scatter", "broadcast", "reduce", "alltoall", "alltoallv"};

static int bad(const coll_call_t *a, const char *what, const char *detail)
{
    return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: %s%s", a->team->ctx->rank,
                            kind_names[a->kind], what, detail ? detail : "");
}

/* The checks every collective shares: team, dtype, op, root, sizes,
 * buffers present, overlap only in the in-place form. send_n and recv_n
 * are how many blocks of `bytes` each buffer holds (0: not used here). */
static int check_call(coll_call_t *a, size_t send_n, size_t recv_n, int check_op)
{
    int rc = gpurma_team_check(a->team);
    if (rc)
        return rc;
    size_t es = gpurma_dev_dtype_size(a->dtype);
    if (!es)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: unknown dtype %d",
                                a->team->ctx->rank, kind_names[a->kind], (int)a->dtype);
    if (check_op && !gpurma_dev_redop_valid(a->dtype, a->op))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: unknown operator %d",
                                a->team->ctx->rank, kind_names[a->kind], (int)a->op);
    if (a->root < 0 || a->root >= a->team->size)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: root %d is not a rank of the team (size %d)",
                                a->team->ctx->rank, kind_names[a->kind], a->root,
                                a->team->size);
    size_t send_bytes, recv_bytes;
    if (gpurma_size_mul(a->count, es, &a->bytes) ||
        gpurma_size_mul(a->bytes, send_n, &send_bytes) ||
        gpurma_size_mul(a->bytes, recv_n, &recv_bytes))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: count %zu of %zu-byte elements for %d ranks "
                                "overflows a size_t",
                                a->team->ctx->rank, kind_names[a->kind], a->count, es,
                                a->team->size);
    if (send_bytes && !a->send)
        return bad(a, "send is NULL with count > 0", NULL);
    if (recv_bytes && !a->recv)
        return bad(a, "recv is NULL with count > 0", NULL);
    if (gpurma_coll_wraps(a->send, send_bytes) || gpurma_coll_wraps(a->recv, recv_bytes))
        return bad(a, "a buffer runs past the end of the address space", NULL);
    /* In place: send == recv, or for allgather send at this rank's slot. */
    const char *in_place = a->kind == GPURMA_COLL_ALLGATHER
                               ? (const char *)a->recv + (size_t)a->team->rank * a->bytes
                               : (const char *)a->recv;
    if (gpurma_coll_overlaps(a->send, send_bytes, a->recv, recv_bytes) &&
        (const char *)a->send != in_place)
        return bad(a, "send and recv overlap without being the in-place form ",
                   a->kind == GPURMA_COLL_ALLGATHER ? "(send = recv + rank * count)"
                                                    : "(send == recv)");
    return GPURMA_SUCCESS;
}

/* Host buffers for the host path; the stream path takes GPU memory. */
static int check_memory(const coll_call_t *a, size_t send_bytes, size_t recv_bytes)
{
    if (a->team->ctx->device < 0)
        return GPURMA_SUCCESS; /* host backend: no GPU memory, the stream call says so later */
    int on_gpu = !a->stream;
    if ((send_bytes && gpurma_gpu_is_device_ptr(a->send) == on_gpu) ||
        (recv_bytes && gpurma_gpu_is_device_ptr(a->recv) == on_gpu))
        return bad(a, a->stream ? "host memory with a stream; stream collectives take GPU memory"
                                : "GPU memory with stream NULL; pass the stream the buffers "
                                  "belong to",
                   NULL);
    /* Kernels load and store whole elements: a misaligned buffer would stop
     * the kernel with a misaligned-address error on the stream. */
    const uintptr_t es = gpurma_dev_dtype_size(a->dtype);
    if (a->stream && (((uintptr_t)a->send | (uintptr_t)a->recv) % es))
        return bad(a, "a GPU buffer is not aligned to its element size", NULL);
    return GPURMA_SUCCESS;
}

static int run_part(const coll_call_t *a, gpurma_dev_coll_t c, gpurma_coll_algo_t algo)
{
    switch (a->kind) {
    case GPURMA_COLL_ALLREDUCE:
        return gpurma_dev_coll_allreduce_algo(c, a->recv, a->send, a->count, a->dtype, a->op,
                                              algo);
    case GPURMA_COLL_ALLGATHER:
        return gpurma_dev_coll_allgather_algo(c, a->recv, a->send, a->count, a->dtype, algo);
    case GPURMA_COLL_REDUCE_SCATTER:
        return gpurma_dev_coll_reduce_scatter_algo(c, a->recv, a->send, a->count, a->dtype,
                                                   a->op, algo);
    case GPURMA_COLL_BROADCAST:
        return gpurma_dev_coll_broadcast_algo(c, a->recv, a->send, a->count, a->dtype, a->root,
                                              algo);
    case GPURMA_COLL_REDUCE:
        return gpurma_dev_coll_reduce_algo(c, a->recv, a->send, a->count, a->dtype, a->op,
                                           a->root, algo);
    case GPURMA_COLL_ALLTOALL:
        return gpurma_dev_coll_alltoall_algo(c, a->recv, a->send, a->count, a->dtype, algo);
    case GPURMA_COLL_ALLTOALLV:
        return gpurma_dev_coll_alltoallv_algo(c, a->recv, a->recv_counts, a->recv_displs,
                                              a->send, a->send_counts, a->send_displs,
                                              a->max_count, a->dtype, algo);
    default:
        return GPURMA_ERR_INTERNAL;
    }
}

/* The parts one after the other (each completes on every rank before the
 * next starts, so the order is the same everywhere). */
static int run_host(const coll_call_t *a, gpurma_dev_coll_t c, gpurma_coll_algo_t algo,
                    unsigned parts)
{
    int rc = GPURMA_SUCCESS;
    for (unsigned p = 0; p < parts && rc == GPURMA_SUCCESS; p++)
        rc = run_part(a, gpurma_dev_coll_part(c, p, parts), algo);
    return rc;
}

/* This thread's message before a run: run_error appends the message only
 * when the run wrote a new one (a wait that timed out in the device code
 * writes none, and an unrelated older message would mislead). */
typedef struct {
    char text[96];
} msg_mark_t;

static msg_mark_t mark_message(void)
{
    msg_mark_t m;
    snprintf(m.text, sizeof m.text, "%s", gpurma_error_text());
    return m;
}

/* Say which collective failed; a host wait (a timeout, a dead peer) left
 * its own message, which follows. */
static int run_error(const coll_call_t *a, gpurma_coll_algo_t algo, int rc,
                     const msg_mark_t *before)
{
    const struct gpurma_ctx_s *ctx = a->team->ctx;
    char cause[400] = "";
    const char *text = gpurma_error_text();
    if (text && *text && strncmp(text, before->text, sizeof before->text - 1))
        snprintf(cause, sizeof(cause), " (%s)", text);
    if (rc == GPURMA_ERR_INVALID_ARG) /* the arguments were checked: the protocol's refusal */
        return gpurma_set_error(rc,
                                "rank %d: %s (%s): refused: a peer passed another collective, "
                                "count, dtype, op or root, or runs another algorithm "
                                "(GPURMA_COLL_ALGO), or a peer gave up this call (it failed "
                                "or timed out there before this rank came), or another "
                                "collective runs on this team at the same time (another thread "
                                "or stream); the team's collectives may fail from now on%s",
                                ctx->rank, kind_names[a->kind], gpurma_coll_algo_name(algo), cause);
    if (rc == GPURMA_ERR_TIMEOUT)
        return gpurma_set_error(rc,
                                "rank %d: %s (%s): a peer did not take part within the timeout "
                                "(GPURMA_TIMEOUT_MS): every rank of the team must call the same "
                                "collectives in the same order%s",
                                ctx->rank, kind_names[a->kind], gpurma_coll_algo_name(algo), cause);
    return gpurma_set_error(rc, "rank %d: %s (%s) failed: %s%s", ctx->rank,
                            kind_names[a->kind], gpurma_coll_algo_name(algo),
                            gpurma_strerror((gpurma_status_t)rc), cause);
}

/* Whether GPURMA_COLL_ALGO leaves zero-copy to be tried (auto or direct). */
static int direct_allowed(void)
{
    gpurma_coll_algo_t forced = (gpurma_coll_algo_t)gpurma_config()->coll_algo_index;
    return forced == GPURMA_COLL_ALGO_AUTO || forced == GPURMA_COLL_ALGO_DIRECT;
}

/* Whether zero-copy is to be tried: allowed, and the call is not one the
 * selected LL algorithm keeps. It keeps those whose busiest rank moves
 * fewer than GPURMA_COLL_DIRECT_MIN bytes (piece, the most one rank sends
 * one peer, to n - 1 peers, or from them: a reduce's root): there one
 * step of packets, at half the link's payload, costs less than zero-copy's
 * two meetings of every member. Every member decides alike: the same
 * arguments and settings. */
static int direct_wanted(const coll_call_t *a, gpurma_coll_algo_t algo, size_t piece)
{
    if (!direct_allowed())
        return 0;
    if (algo != GPURMA_COLL_ALGO_LL16 && algo != GPURMA_COLL_ALGO_ONESHOT_LL)
        return 1;
    size_t moved;
    const size_t peers = a->team->size > 1 ? (size_t)a->team->size - 1 : 1;
    return gpurma_size_mul(piece, peers, &moved) ||
           moved >= (size_t)gpurma_config()->coll_direct_min;
}

/* A zero-copy run when the sides of the call that peers touch lie in
 * registered buffers (algo_direct.c), or in a graph capture wherever they
 * are (coll_graphreg.c): 1 when it was tried (*rc its status), 0 when the
 * call takes the scratch path. */
static int try_direct(const coll_call_t *a, const gpurma_dev_coll_t *c, int *rc)
{
    size_t sbytes, rbytes, os = 0, orr = 0;
    int ropt, stay;
    const int kind = gpurma_coll_direct_sides(a, &sbytes, &rbytes, &ropt, &stay);
    if (!kind)
        return 0;
    const int g = gpurma_coll_graphreg_try(a, c, kind, sbytes, rbytes, ropt, stay, rc);
    if (g >= 0)
        return g;
    if (stay)
        return 0;
    const gpurma_coll_direct_reg_t *s =
        sbytes ? gpurma_coll_registered(a->team, a->send, sbytes, &os) : NULL;
    const gpurma_coll_direct_reg_t *r = rbytes && (a->recv || !ropt)
                                            ? gpurma_coll_registered(a->team, a->recv, rbytes, &orr)
                                            : NULL;
    if ((sbytes && !s) || (rbytes && !r && !ropt))
        return 0;
    gpurma_coll_side_t sx, rx;
    if (s && !gpurma_coll_direct_side(s, os, &sx))
        return 0;
    if (r && !gpurma_coll_direct_side(r, orr, &rx)) {
        if (!ropt)
            return 0;
        r = NULL; /* optional: the root then reads every send */
    }
    return gpurma_coll_direct_try(a, c, kind, s ? &sx : NULL, r ? &rx : NULL, rc);
}

static int coll_run(const coll_call_t *a, size_t piece)
{
    gpurma_coll_graphreg_sweep(a->team);
    gpurma_dev_coll_t c;
    gpurma_dcoll__ll16_bases_t ll16;
    int rc = gpurma_coll_scratch_ll16(a->team, a->stream != NULL, &c, &ll16);
    if (rc)
        return rc;
    msg_mark_t before = mark_message();
    gpurma_coll_algo_t algo = gpurma_coll_select(a->kind, &c, piece);
    if (direct_wanted(a, algo, piece) && try_direct(a, &c, &rc))
        return rc == GPURMA_SUCCESS ? rc : run_error(a, GPURMA_COLL_ALGO_DIRECT, rc, &before);
    GPURMA_DEBUG(GPURMA_SUB_RMA, "rank %d: %s of %zu bytes per peer: %s", a->team->ctx->rank,
                 kind_names[a->kind], piece, gpurma_coll_algo_name(algo));
    unsigned parts = gpurma_coll_parts(&c, piece, algo, a->stream != NULL);
    if (algo == GPURMA_COLL_ALGO_CE)
        rc = gpurma_coll_ce_run(a);
    else if (a->stream)
        rc = gpurma_coll_stream_run(a, &c, &ll16, algo, parts);
    else
        rc = run_host(a, c, algo, parts);
    return rc == GPURMA_SUCCESS ? rc : run_error(a, algo, rc, &before);
}

/* The team's in-use flag (coll_busy.c), named after the collective. */
static int team_enter(const coll_call_t *a)
{
    return gpurma_coll_team_enter(a->team, kind_names[a->kind]);
}

static int team_leave(const coll_call_t *a, int rc)
{
    return gpurma_coll_team_leave(a->team, kind_names[a->kind], rc);
}

/* Checks, then runs; the piece one rank sends one peer decides the algorithm. */
static gpurma_status_t coll(coll_call_t *a, size_t send_n, size_t recv_n, int check_op)
{
    int rc = check_call(a, send_n, recv_n, check_op);
    if (!rc)
        rc = check_memory(a, send_n * a->bytes, recv_n * a->bytes);
    if (!rc)
        rc = team_enter(a);
    if (!rc)
        rc = team_leave(a, coll_run(a, a->bytes));
    return (gpurma_status_t)rc;
}

#define TEAM_N(team) ((team) && gpurma_team_check(team) == GPURMA_SUCCESS ? (size_t)(team)->size : 1)

GPURMA_API gpurma_status_t gpurma_allreduce(gpurma_team_t team, const void *send, void *recv,
                                            size_t count, gpurma_dtype_t dtype,
                                            gpurma_redop_t op, void *stream)
{
    coll_call_t a = {.kind = GPURMA_COLL_ALLREDUCE, .team = team, .send = send, .recv = recv,
                     .count = count, .dtype = dtype, .op = op, .stream = stream};
    return coll(&a, 1, 1, 1);
}

GPURMA_API gpurma_status_t gpurma_allgather(gpurma_team_t team, const void *send, void *recv,
                                            size_t count, gpurma_dtype_t dtype, void *stream)
{
    coll_call_t a = {.kind = GPURMA_COLL_ALLGATHER, .team = team, .send = send, .recv = recv,
                     .count = count, .dtype = dtype, .stream = stream};
    return coll(&a, 1, TEAM_N(team), 0);
}

GPURMA_API gpurma_status_t gpurma_reduce_scatter(gpurma_team_t team, const void *send,
                                                 void *recv, size_t count, gpurma_dtype_t dtype,
                                                 gpurma_redop_t op, void *stream)
{
    coll_call_t a = {.kind = GPURMA_COLL_REDUCE_SCATTER, .team = team, .send = send,
                     .recv = recv, .count = count, .dtype = dtype, .op = op, .stream = stream};
    return coll(&a, TEAM_N(team), 1, 1);
}

GPURMA_API gpurma_status_t gpurma_broadcast(gpurma_team_t team, const void *send, void *recv,
                                            size_t count, gpurma_dtype_t dtype, int root,
                                            void *stream)
{
    coll_call_t a = {.kind = GPURMA_COLL_BROADCAST, .team = team, .send = send, .recv = recv,
                     .count = count, .dtype = dtype, .root = root, .stream = stream};
    /* Only the root's send is read. */
    int is_root = team && gpurma_team_check(team) == GPURMA_SUCCESS && team->rank == root;
    return coll(&a, is_root, 1, 0);
}

GPURMA_API gpurma_status_t gpurma_reduce(gpurma_team_t team, const void *send, void *recv,
                                         size_t count, gpurma_dtype_t dtype, gpurma_redop_t op,
                                         int root, void *stream)
{
    coll_call_t a = {.kind = GPURMA_COLL_REDUCE, .team = team, .send = send, .recv = recv,
                     .count = count, .dtype = dtype, .op = op, .root = root, .stream = stream};
    /* Only the root's recv is written. */
    int is_root = team && gpurma_team_check(team) == GPURMA_SUCCESS && team->rank == root;
    return coll(&a, 1, is_root, 1);
}

GPURMA_API gpurma_status_t gpurma_alltoall(gpurma_team_t team, const void *send, void *recv,
                                           size_t count, gpurma_dtype_t dtype, void *stream)
{
    coll_call_t a = {.kind = GPURMA_COLL_ALLTOALL, .team = team, .send = send, .recv = recv,
                     .count = count, .dtype = dtype, .stream = stream};
    return coll(&a, TEAM_N(team), TEAM_N(team), 0);
}

/* The end (in bytes) of the furthest block of counts/displs, and the
 * largest count; 1 on overflow. */
static int extent(const size_t *counts, const size_t *displs, int n, size_t es, size_t *end,
                  size_t *max_count)
{
    *end = 0;
    for (int r = 0; r < n; r++) {
        size_t e;
        if (!counts[r]) /* nothing moves: its displacement is never used */
            continue;
        if (gpurma_size_add(counts[r], displs[r], &e) || gpurma_size_mul(e, es, &e))
            return 1;
        if (e > *end)
            *end = e;
        if (counts[r] > *max_count)
            *max_count = counts[r];
    }
    return 0;
}

/* Orders blocks [start, end) by start. */
static int block_cmp(const void *x, const void *y)
{
    const uintptr_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* alltoallv's non-empty blocks, send's and recv's (counts/displs, es-byte
 * elements; extent and wraps checked their ends): RECV_TWICE when two of
 * recv's share a byte (two peers would write the same bytes, and which one
 * lands last would be a race), CROSSED when a send block shares one with a
 * recv block (alltoallv has no in-place form), 0 when neither: send and
 * recv blocks may interleave in one buffer. -1 on no memory. */
enum { RECV_TWICE = 1, CROSSED = 2 };
static int blocks_clash(const char *send, const size_t *sc, const size_t *sd, const char *recv,
                        const size_t *rc, const size_t *rd, int n, size_t es)
{
    uintptr_t (*b)[3] = calloc(2 * (size_t)n, sizeof *b); /* start, end, is_recv */
    size_t k = 0;
    if (!b)
        return -1;
    for (int r = 0; r < n; r++) {
        if (sc[r])
            b[k][0] = (uintptr_t)send + sd[r] * es, b[k][1] = b[k][0] + sc[r] * es,
            b[k++][2] = 0;
        if (rc[r])
            b[k][0] = (uintptr_t)recv + rd[r] * es, b[k][1] = b[k][0] + rc[r] * es,
            b[k++][2] = 1;
    }
    qsort(b, k, sizeof *b, block_cmp);
    /* In order of start, each block against the furthest end of each kind
     * so far: every overlapping pair is found at its later block. */
    uintptr_t end[2] = {0, 0};
    int hit = 0;
    for (size_t i = 0; i < k && !hit; i++) {
        const int is_recv = (int)b[i][2];
        if (b[i][0] < end[!is_recv])
            hit = CROSSED;
        else if (is_recv && b[i][0] < end[1])
            hit = RECV_TWICE;
        if (b[i][1] > end[is_recv])
            end[is_recv] = b[i][1];
    }
    free(b);
    return hit;
}

/* Before any data moves: what each peer sends this rank must be what
 * this rank expects from it (a peer sending more would be cut short
 * without a word, one sending less would leave stale bytes), and every
 * rank steps through the largest block of the team (*max_count, in and
 * out). v_id: this rank's zero-copy identity (gpurma_coll_direct_v_identity,
 * 0: none); when every member brought the same nonzero one, *peer_displs
 * receives (allocated, the caller frees) where each peer's block for this
 * rank starts in its send, else NULL. Costs one alltoall of the counts and
 * displacements and one allreduce. */
static int agree_counts(const coll_call_t *a, size_t *max_count, uint64_t v_id,
                        uint64_t **peer_displs)
{
    const struct gpurma_team_s *team = a->team;
    const int n = team->size;
    /* two words per peer each way: the count, then the displacement */
    uint64_t *mine = calloc(4 * (size_t)n, sizeof *mine), *theirs = mine + 2 * (size_t)n;
    *peer_displs = NULL;
    if (!mine)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "rank %d: alltoallv: out of memory",
                                team->ctx->rank);
    for (int r = 0; r < n; r++) {
        mine[2 * r] = a->send_counts[r];
        mine[2 * r + 1] = a->send_counts[r] ? a->send_displs[r] : 0; /* any value if empty */
    }
    gpurma_dev_coll_t c;
    const gpurma_dcoll__grp_t one = {0, 1, 0};
    msg_mark_t before = mark_message();
    int rc = gpurma_coll_scratch(a->team, 0, &c);
    /* Both steps carry fingerprints of their own (roots no call can
     * pass): as a plain alltoall and allreduce they would pair with a
     * peer's gpurma_alltoall of two uint64 or allreduce of four (a peer
     * that called another collective), which would return SUCCESS with
     * this rank's counts as its data. */
    const int ll = GPURMA_DCOLL__LL(GPURMA_COLL_ALGO_AUTO, &c, 4, GPURMA_UINT64);
    if (!rc) {
        const gpurma_dcoll__layout_t l = {2, 1, 0, 0, 0, 0};
        gpurma_dcoll__set_call(&c, GPURMA_DCOLL__K_ALLTOALLV, 2, GPURMA_UINT64, GPURMA_SUM, -1);
        rc = gpurma_dcoll__exchange(&c, &one, theirs, mine, &l, 2, GPURMA_UINT64, ll);
    }
    int peer = -1;
    for (int r = 0; r < n && !rc && peer < 0; r++)
        if (theirs[2 * r] != a->recv_counts[r])
            peer = r;
    /* [0]: the largest count, [1]: whether any rank met a mismatch, [2]
     * and [3]: the largest identity and complement (all alike when the
     * largest of each is the other's complement) */
    uint64_t local[4] = {*max_count, peer >= 0, v_id, ~v_id}, team_[4] = {0, 0, 0, 0};
    if (!rc) {
        gpurma_dcoll__set_call(&c, GPURMA_DCOLL__K_ALLTOALLV, 4, GPURMA_UINT64, GPURMA_MAX, -2);
        rc = gpurma_dcoll__reduce_push(&c, &one, team_, local, 4, GPURMA_UINT64, GPURMA_MAX, 0, 1,
                                       ll);
    }
    if (rc) {
        free(mine);
        return run_error(a, GPURMA_COLL_ALGO_AUTO, rc, &before);
    }
    if (peer >= 0)
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                              "rank %d: alltoallv: team rank %d sends %" PRIu64
                              " elements here, recv_counts[%d] is %zu; nothing was moved",
                              team->ctx->rank, peer, theirs[2 * peer], peer,
                              a->recv_counts[peer]);
    else if (team_[1])
        rc = bad(a, "another rank's recv_counts disagree with its peers' send_counts; nothing "
                    "was moved",
                 NULL);
    else if (team_[2] && team_[2] == ~team_[3]) {
        /* the displacements, in place of the counts (the array stays) */
        for (int r = 0; r < n; r++)
            mine[r] = theirs[2 * r + 1];
        *peer_displs = mine;
        mine = NULL;
    }
    free(mine);
    *max_count = (size_t)team_[0];
    return rc;
}

/* This rank's part in the agreement on a zero-copy alltoallv: its send
 * (send_end bytes) registered, on a stream, algorithm auto or direct. */
static uint64_t v_identity(const coll_call_t *a, size_t send_end)
{
    size_t os = 0;
    if (!a->stream || !a->send || !direct_allowed())
        return 0;
    const gpurma_coll_direct_reg_t *s =
        gpurma_coll_registered(a->team, a->send, send_end ? send_end : 1, &os);
    return s ? gpurma_coll_direct_v_identity(a, s, os) : 0;
}

/* The algorithms compute every block's address, empty ones too: an empty
 * block's displacement (any value is accepted, nothing moves) is given to
 * them as 0, in copies of the arrays (*copy, freed by the caller). */
static int zero_empty_displs(coll_call_t *a, size_t **copy)
{
    const int n = a->team->size;
    int any = 0;
    *copy = NULL;
    for (int r = 0; r < n; r++)
        any |= (!a->send_counts[r] && a->send_displs[r]) ||
               (!a->recv_counts[r] && a->recv_displs[r]);
    if (!any)
        return GPURMA_SUCCESS;
    size_t *d = malloc(2 * (size_t)n * sizeof(*d));
    if (!d)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "rank %d: alltoallv: out of memory",
                                a->team->ctx->rank);
    for (int r = 0; r < n; r++) {
        d[r] = a->send_counts[r] ? a->send_displs[r] : 0;
        d[n + r] = a->recv_counts[r] ? a->recv_displs[r] : 0;
    }
    a->send_displs = d;
    a->recv_displs = d + n;
    *copy = d;
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_alltoallv(gpurma_team_t team, const void *send,
                                            const size_t *send_counts, const size_t *send_displs,
                                            void *recv, const size_t *recv_counts,
                                            const size_t *recv_displs, gpurma_dtype_t dtype,
                                            void *stream)
{
    coll_call_t a = {.kind = GPURMA_COLL_ALLTOALLV, .team = team, .send = send, .recv = recv,
                     .dtype = dtype, .stream = stream, .send_counts = send_counts,
                     .send_displs = send_displs, .recv_counts = recv_counts,
                     .recv_displs = recv_displs};
    int rc = check_call(&a, 0, 0, 0);
    if (rc)
        return (gpurma_status_t)rc;
    if (!send_counts || !send_displs || !recv_counts || !recv_displs)
        return (gpurma_status_t)bad(&a, "a count or displacement array is NULL", NULL);
    size_t es = gpurma_dev_dtype_size(dtype), send_end, recv_end, max_count = 0;
    if (extent(send_counts, send_displs, team->size, es, &send_end, &max_count) ||
        extent(recv_counts, recv_displs, team->size, es, &recv_end, &max_count))
        return (gpurma_status_t)bad(&a, "a count plus its displacement overflows a size_t",
                                    NULL);
    if (send_end && !send)
        return (gpurma_status_t)bad(&a, "send is NULL with counts > 0", NULL);
    if (recv_end && !recv)
        return (gpurma_status_t)bad(&a, "recv is NULL with counts > 0", NULL);
    if (gpurma_coll_wraps(send, send_end) || gpurma_coll_wraps(recv, recv_end))
        return (gpurma_status_t)bad(&a, "a buffer runs past the end of the address space", NULL);
    int clash = blocks_clash(send, send_counts, send_displs, recv, recv_counts, recv_displs,
                             team->size, es);
    if (clash < 0)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "rank %d: alltoallv: out of memory",
                                team->ctx->rank);
    if (clash == CROSSED)
        return (gpurma_status_t)bad(&a, "a send block overlaps a recv block (alltoallv has no "
                                        "in-place form)",
                                    NULL);
    if (clash == RECV_TWICE)
        return (gpurma_status_t)bad(&a, "two peers' blocks overlap in recv (recv_counts and "
                                        "recv_displs)",
                                    NULL);
    rc = check_memory(&a, send_end, recv_end);
    if (rc)
        return (gpurma_status_t)rc;
    rc = team_enter(&a);
    if (rc)
        return (gpurma_status_t)rc;
    uint64_t *peer_displs = NULL;
    rc = agree_counts(&a, &max_count, v_identity(&a, send_end), &peer_displs);
    a.max_count = max_count;
    a.v_peer_displs = peer_displs;
    a.v_send_bytes = send_end;
    if (!rc && gpurma_size_mul(a.max_count, es, &a.bytes))
        rc = bad(&a, "a peer's count overflows a size_t", NULL);
    size_t *zeroed = NULL;
    if (!rc)
        rc = zero_empty_displs(&a, &zeroed);
    if (!rc)
        rc = coll_run(&a, a.bytes);
    free(zeroed);
    free(peer_displs);
    return (gpurma_status_t)team_leave(&a, rc);
}

