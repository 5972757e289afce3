/*
 * test_coll_step_mismatch.c - collective steps that a 32-bit fingerprint
 * alone could not tell apart, through the device API on CPU threads (the
 * host backend runs the same protocol code as a GPU), with the algorithm
 * fixed so that every rank takes the same slots. No rank may return
 * SUCCESS; every error is INVALID_ARG (a piece of another call refused)
 * or TIMEOUT (waiting for a piece or an acknowledgement never sent).
 *
 * 1. Counts that differ together with the dtype and op so that the print
 *    (gpurma_dcoll__print) of both calls is the same: rank 0 passes one
 *    int8 with SUM, the others 433050 float16 with MIN. The pair was found
 *    by a search over dtypes and ops for the smallest count whose print
 *    equals that of a one-element call; main() checks that it still
 *    collides, since a pair that does not would test nothing. Before the
 *    fix (the slot trailer carried the print only) rank 0 took its peers'
 *    first piece as its own and returned SUCCESS (shown with the print of
 *    then, for which 1 float16 MAX and 680339 bfloat16 MAX collided, and
 *    with today's print on the trailer of then).
 * 2. A barrier on one rank beside a collective on the others: when the
 *    device barrier was bare data signals, which a peer's step raises
 *    too, the barrier returned SUCCESS. Now it has signals of its own,
 *    refuses a peer's piece of its epoch, and the collective times out.
 *    The host API's barrier runs on the team's system window and never
 *    meets a collective: both time out (that case passed before too).
 * 3. A barrier on one rank that comes late, beside peers whose call at
 *    that epoch was a reduce (refused: the late rank sends nothing) and
 *    who then entered their next barrier: the late rank finds their
 *    arrival at a later epoch, whose word names their previous barrier,
 *    not its own, and refuses it. Counting arrivals alone (or comparing
 *    epochs with >=) would pair the two barriers and return SUCCESS. The
 *    same with an LL16 allreduce in place of the reduce: LL16 keeps a
 *    counter of its own and moves no epoch, so a barrier word that held
 *    epochs alone would let the peers' next barrier pass for this one.
 * 4. An LL16 allreduce cut into 2 parts on rank 0 and 1 on the others
 *    (GPURMA_COLL_LL16_PART_BYTES set differently on a GPU): part p covers
 *    other elements on each side.
 *    The headers carry the part count in their print, so every rank
 *    refuses the first part at once (INVALID_ARG), recv untouched; before,
 *    each waited out the timeout for units the others never sent. Through
 *    the port engine LL16 declines and the shared code times out.
 *
 * Each case on a team of its own: the team is out of step after it.
 */
#include "common.h"
#include "gpurma_coll.h"
#include "gpurma_coll_device.h"
#include "settle.h"

#define TIMEOUT_MS 1000
#define GUARD 64

/* The colliding calls: (kind, dtype, op, count) on rank 0 and on the
 * others. */
typedef struct {
    const char    *name;
    int            kind; /* GPURMA_DCOLL__K_ALLREDUCE or _REDUCE (root 0) */
    int            algo;
    gpurma_dtype_t dtype[2];
    gpurma_redop_t op[2];
    size_t         count[2];
} collide_t;

static const collide_t collide[] = {
    {"allreduce, oneshot", GPURMA_DCOLL__K_ALLREDUCE, GPURMA_COLL_ALGO_ONESHOT,
     {GPURMA_INT8, GPURMA_FLOAT16}, {GPURMA_SUM, GPURMA_MIN}, {1, 433050}},
    {"allreduce, oneshot LL", GPURMA_DCOLL__K_ALLREDUCE, GPURMA_COLL_ALGO_ONESHOT_LL,
     {GPURMA_INT8, GPURMA_FLOAT16}, {GPURMA_SUM, GPURMA_MIN}, {1, 433050}},
    {"reduce to 0, oneshot", GPURMA_DCOLL__K_REDUCE, GPURMA_COLL_ALGO_ONESHOT,
     {GPURMA_INT8, GPURMA_FLOAT16}, {GPURMA_SUM, GPURMA_MIN}, {1, 433050}},
};
#define N_COLLIDE (sizeof(collide) / sizeof(collide[0]))

static gpurma_dev_coll_t team_handle(void)
{
    gpurma_team_t t;
    gpurma_dev_coll_t c;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    CHECK(gpurma_coll_device(t, GPURMA_MEM_HOST, &c));
    return c;
}

static void expect_refused(gpurma_status_t rc, const char *what)
{
    T_ASSERT(rc != GPURMA_SUCCESS, "%s: SUCCESS beside a rank that made another call", what);
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT, "%s: %d (%s)", what,
             (int)rc, gpurma_strerror(rc));
    t_checks++;
}

static void collide_case(const collide_t *k, int round)
{
    const int me = t_rank == 0 ? 0 : 1;
    const size_t es = k->dtype[me] == GPURMA_INT8 ? 1 : 2; /* the table's: int8, float16 */
    const size_t count = k->count[me], bytes = count * es;
    unsigned char *in = t_malloc(bytes), *out = t_malloc(bytes + 2 * GUARD);
    t_fill(in, bytes, t_seed(31, (uint64_t)t_rank, (uint64_t)round));
    memset(out, T_POISON, bytes + 2 * GUARD);
    gpurma_dev_coll_t c = team_handle();
    CHECK(gpurma_barrier(t_world));
    gpurma_status_t rc =
        k->kind == GPURMA_DCOLL__K_ALLREDUCE
            ? gpurma_dev_coll_allreduce_algo(c, out + GUARD, in, count, k->dtype[me], k->op[me],
                                             k->algo)
            : gpurma_dev_coll_reduce_algo(c, out + GUARD, in, count, k->dtype[me], k->op[me], 0,
                                          k->algo);
    char what[160];
    snprintf(what, sizeof what, "%s (%zu elements here, %zu on rank %s)", k->name, count,
             k->count[!me], me ? "0" : "1");
    expect_refused(rc, what);
    t_verify_fill(out, T_POISON, GUARD, "head", t_rank, 0);
    t_verify_fill(out + GUARD + bytes, T_POISON, GUARD, "tail", t_rank, bytes);
    /* Peers may still wait out a timeout; no rank goes on before every
     * rank is out of its call (see test_coll_mismatch.c). */
    t_settle(4.0 * TIMEOUT_MS / 1000.0);
    free(in), free(out);
}

/* Barrier on team rank `lone`, allreduce (count elements of int32,
 * algo) on the others. */
static void barrier_case(int lone, size_t count, int algo, int round)
{
    const size_t cap = count ? count * 4 : 4;
    int32_t *in = t_malloc(cap), *out = t_malloc(cap);
    t_fill(in, cap, t_seed(37, (uint64_t)t_rank, (uint64_t)round));
    memset(out, T_POISON, cap);
    gpurma_dev_coll_t c = team_handle();
    CHECK(gpurma_barrier(t_world));
    gpurma_status_t rc = t_rank == lone ? gpurma_dev_coll_barrier(c)
                                        : gpurma_dev_coll_allreduce_algo(c, out, in, count,
                                                                         GPURMA_INT32, GPURMA_SUM,
                                                                         algo);
    char what[160];
    snprintf(what, sizeof what, "%s beside %s of %zu (%s) on the other ranks",
             t_rank == lone ? "barrier" : "allreduce", t_rank == lone ? "allreduce" : "a barrier",
             count, algo == GPURMA_COLL_ALGO_ONESHOT_LL ? "oneshot LL" : "oneshot");
    expect_refused(rc, what);
    t_settle(4.0 * TIMEOUT_MS / 1000.0);
    free(in), free(out);
}

/* The host API: gpurma_barrier on team rank 0 (the team's system
 * window), gpurma_allreduce on the others (the scratch window or
 * another algorithm's): they never meet, so both wait out the timeout. */
static void host_barrier_case(int round)
{
    const size_t count = 1001;
    int32_t *in = t_malloc(count * 4), *out = t_malloc(count * 4);
    t_fill(in, count * 4, t_seed(41, (uint64_t)t_rank, (uint64_t)round));
    memset(out, T_POISON, count * 4);
    gpurma_team_t t;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    CHECK(gpurma_barrier(t_world));
    gpurma_status_t rc = t_rank == 0 ? gpurma_barrier(t)
                                     : gpurma_allreduce(t, in, out, count, GPURMA_INT32,
                                                        GPURMA_SUM, NULL);
    expect_refused(rc, t_rank == 0 ? "gpurma_barrier beside gpurma_allreduce"
                                   : "gpurma_allreduce beside gpurma_barrier");
    t_settle(4.0 * TIMEOUT_MS / 1000.0);
    free(in), free(out);
}

/* Rank 0 enters a barrier after its peers have been refused in a reduce
 * to team rank 1 (oneshot: the root waits for rank 0's piece, the others
 * for the root's acknowledgement), or in an LL16 allreduce (each waits for
 * rank 0's packets), and have entered their next barrier. */
static void skipped_barrier_case(int algo, int round)
{
    gpurma_dev_coll_t c = team_handle();
    CHECK(gpurma_barrier(t_world));
    if (t_rank == 0) {
        usleep(3 * TIMEOUT_MS * 1000); /* past the peers' timeout and their next barrier's signal */
        gpurma_status_t rc = gpurma_dev_coll_barrier(c);
        T_ASSERT(rc == GPURMA_ERR_INVALID_ARG,
                 "a barrier beside peers whose call was %s, then a barrier: %d (%s)",
                 algo == GPURMA_COLL_ALGO_ONESHOT ? "a reduce" : "an LL16 allreduce", (int)rc,
                 gpurma_strerror(rc));
        t_checks++;
    } else {
        int64_t in = (int64_t)t_seed(43, (uint64_t)t_rank, (uint64_t)round), out = 0;
        expect_refused(algo == GPURMA_COLL_ALGO_ONESHOT
                           ? gpurma_dev_coll_reduce_algo(c, &out, &in, 1, GPURMA_INT64, GPURMA_SUM,
                                                         1, algo)
                           : gpurma_dev_coll_allreduce_algo(c, &out, &in, 1, GPURMA_INT64,
                                                            GPURMA_SUM, algo),
                       "a collective beside a late barrier");
        expect_refused(gpurma_dev_coll_barrier(c), "barrier after that reduce");
    }
    t_settle(6.0 * TIMEOUT_MS / 1000.0);
}

/* Rank 0 runs an LL16 allreduce as 2 parts, the others as 1, one part
 * after the other on this thread (each part is a channel of its own; a
 * host team has two). */
static void parts_case(int round)
{
    const size_t count = 1001; /* fits one part: both sides take LL16 */
    const unsigned parts = t_rank == 0 ? 2 : 1;
    int32_t *in = t_malloc(count * 4), *out = t_malloc(count * 4);
    t_fill(in, count * 4, t_seed(47, (uint64_t)t_rank, (uint64_t)round));
    memset(out, T_POISON, count * 4);
    gpurma_dev_coll_t c = team_handle();
    CHECK(gpurma_barrier(t_world));
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (unsigned p = 0; p < parts && rc == GPURMA_SUCCESS; p++)
        rc = gpurma_dev_coll_allreduce_algo(gpurma_dev_coll_part(c, p, parts), out, in, count,
                                            GPURMA_INT32, GPURMA_SUM, GPURMA_COLL_ALGO_LL16);
    /* LL16 runs where every peer is mapped by load/store (the mem engine);
     * elsewhere it declines and the shared code runs the parts, whose
     * fingerprint has no part count: part 0 may complete (both sides cut
     * it from element 0), the next meets no one and times out. */
    int ll16 = c.win.nports == 0;
    for (int q = 0; q < c.size; q++)
        ll16 &= c.win.peers[q].path == GPURMA_DEV_PATH_LOADSTORE;
    char what[120];
    snprintf(what, sizeof what, "an LL16 allreduce in %s beside %s on the other ranks",
             parts == 2 ? "2 parts" : "1 part", parts == 2 ? "1 part" : "2 parts");
    if (ll16) {
        T_ASSERT(rc == GPURMA_ERR_INVALID_ARG, "%s: %d (%s), not refused at once", what, (int)rc,
                 gpurma_strerror(rc));
        t_checks++;
        t_verify_fill(out, T_POISON, count * 4, "recv", t_rank, 0);
    } else {
        expect_refused(rc, what);
    }
    t_settle(4.0 * TIMEOUT_MS / 1000.0);
    free(in), free(out);
}

int main(void)
{
    t_init("test_coll_step_mismatch", TIMEOUT_MS);
    t_settle_init();
    for (size_t i = 0; i < N_COLLIDE; i++) {
        const collide_t *k = &collide[i];
        /* The premise: both calls' prints are the same. If the print
         * changes, search again for a pair (smallest count whose print
         * equals a one-element call's of another dtype or op). */
        T_ASSERT(gpurma_dcoll__print(k->kind, k->count[0], k->dtype[0], k->op[0], 0) ==
                     gpurma_dcoll__print(k->kind, k->count[1], k->dtype[1], k->op[1], 0),
                 "%s: the pair no longer collides on the print; find another", k->name);
    }
    if (t_size > 1) {
        int round = 0;
        for (size_t i = 0; i < N_COLLIDE; i++)
            collide_case(&collide[i], round++);
        barrier_case(0, 1001, GPURMA_COLL_ALGO_ONESHOT, round++);
        barrier_case(0, 1001, GPURMA_COLL_ALGO_ONESHOT_LL, round++);
        barrier_case(t_size - 1, 0, GPURMA_COLL_ALGO_ONESHOT, round++);
        barrier_case(t_size - 1, 3, GPURMA_COLL_ALGO_ONESHOT_LL, round++);
        host_barrier_case(round++);
        skipped_barrier_case(GPURMA_COLL_ALGO_ONESHOT, round++);
        skipped_barrier_case(GPURMA_COLL_ALGO_LL16, round++);
        parts_case(round++);
    }
    return t_finish("");
}
