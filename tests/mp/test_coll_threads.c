/*
 * test_coll_threads.c - two threads per rank calling collectives on one
 * team at the same time, which the API does not allow: every call must
 * return either SUCCESS with data some peer call really sent or an error
 * (INVALID_ARG: the team is busy, or a peer's piece belongs to another
 * call; TIMEOUT: a peer's thread was refused and never sent), never
 * SUCCESS with torn or mixed data. Two pairs of threads, each pair on a
 * team of its own:
 *   - allreduce with a different count per thread, 200 calls each, free
 *     running: a call of one thread paired with the other thread's call on
 *     a peer cannot look right (the fingerprint refuses it), so a SUCCESS
 *     must hold exactly the sum of this thread's call on every rank;
 *   - allgather with one count on both threads (which GPURMA_COLL_ALGO=ce
 *     runs through its own window and signals, tests/mp/test_coll-algos.sh),
 *     where only the team's in-use flag can tell. Timing must not decide
 *     the case (a thread that starts late, after its twin's call ended,
 *     is a correct caller the library cannot tell from the other), so the
 *     overlap is built: the last rank holds back until every other rank
 *     has seen one of its two calls refused, and the other, which cannot
 *     end before the last rank joins, must then fail too, as must every
 *     later call on that team. The last rank calls from one thread: it
 *     may match either thread of a peer, so a peer's block is that peer's
 *     thread 0 or thread 1 input, whole.
 * A thread stops at its first error (the team is out of step then); the
 * rest of the job runs on the world team, which stays in step.
 */
#include <pthread.h>

#include "common.h"
#include "gpurma_coll.h"
#include "settle.h"

#define CALLS 200
#define TIMEOUT_S 3 /* each wait's bound */

static gpurma_team_t shared_team[2];

typedef struct {
    int id;
    int gather; /* 0: allreduce, a count per thread; 1: allgather, one count */
    long ok, refused;
    int first;       /* the allgather pair: this thread's call returned first */
    int twin_called; /* ... and the other thread had called when it returned */
} worker_t;

/* The allgather pair: both threads of a rank make one call with one count;
 * the last rank makes it from thread 0 only, once gather_go is set. */
#define GATHER_COUNT 129
static int gather_returned, gather_go, gather_called[2]; /* atomics */
static gpurma_status_t gather_rc[2];

/* Rank r's input on thread id. */
static void gather_input(int32_t *buf, int r, int id)
{
    t_fill(buf, GATHER_COUNT * 4, t_seed(10, (uint64_t)(r * 2 + id), 0));
}

static void gather_verify(const int32_t *out, int id)
{
    int32_t *want = t_malloc(GATHER_COUNT * 4);
    for (int r = 0; r < t_size; r++) {
        const int32_t *got = out + (size_t)r * GATHER_COUNT;
        /* its own block is this thread's; a peer's is one thread's, whole */
        gather_input(want, r, r == t_rank ? id : 0);
        if (r != t_rank && memcmp(got, want, GATHER_COUNT * 4))
            gather_input(want, r, 1);
        t_verify(got, want, GATHER_COUNT * 4, "allgather beside another thread", r, 0);
    }
    free(want);
}

static void *gather_worker(worker_t *w)
{
    const int last = t_rank == t_size - 1;
    if (last && w->id == 1)
        return NULL;
    while (last && !__atomic_load_n(&gather_go, __ATOMIC_ACQUIRE))
        usleep(1000);
    int32_t *in = t_malloc(GATHER_COUNT * 4), *out = t_malloc((size_t)t_size * GATHER_COUNT * 4);
    gather_input(in, t_rank, w->id);
    memset(out, T_POISON, (size_t)t_size * GATHER_COUNT * 4);
    __atomic_store_n(&gather_called[w->id], 1, __ATOMIC_RELEASE);
    gpurma_status_t rc = gpurma_allgather(shared_team[1], in, out, GATHER_COUNT, GPURMA_INT32, NULL);
    gather_rc[w->id] = rc;
    /* the first to return is the refused one, unless its wait ran out
     * before its twin called */
    w->twin_called = __atomic_load_n(&gather_called[!w->id], __ATOMIC_ACQUIRE);
    if (__atomic_fetch_add(&gather_returned, 1, __ATOMIC_ACQ_REL) == 0)
        w->first = 1;
    if (rc == GPURMA_SUCCESS) {
        gather_verify(out, w->id);
        w->ok++;
    } else {
        T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT,
                 "gather thread %d: %d (%s): %s", w->id, (int)rc, gpurma_strerror(rc),
                 gpurma_last_error_message(t_ctx));
        w->refused++;
    }
    free(in), free(out);
    return NULL;
}

/* After both threads: what the allgather pair's outcome must be. */
static void gather_check(const worker_t *w)
{
    if (t_rank == t_size - 1)
        return; /* its call was alone on its rank: checked in gather_worker */
    const worker_t *first = w[0].first ? &w[0] : &w[1], *second = first == w ? &w[1] : &w[0];
    if (gather_rc[first->id] == GPURMA_ERR_TIMEOUT) {
        /* Its twin came only after this wait ran out (a thread held off
         * the CPU for the whole bound): no overlap to check. */
        T_ASSERT(!first->twin_called,
                 "both allgathers ran on the team at once, neither was refused: the first "
                 "ended in a timeout");
        return;
    }
    T_ASSERT(gather_rc[first->id] == GPURMA_ERR_INVALID_ARG,
             "the allgather called while its twin's was in the team: %d, not refused",
             (int)gather_rc[first->id]);
    T_ASSERT(gather_rc[second->id] != GPURMA_SUCCESS,
             "the allgather that ran while its twin was refused returned SUCCESS");
    int32_t in[4] = {1, 2, 3, 4}, out[64];
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_allgather(shared_team[1], in, out, 1, GPURMA_INT32, NULL));
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    if (w->gather)
        return gather_worker(w);
    const size_t count = 100 + 37 * (size_t)w->id; /* differs per thread */
    int32_t *in = t_malloc(count * 4), *out = t_malloc(count * 4), *want = t_malloc(count * 4);
    for (int k = 0; k < CALLS; k++) {
        /* every rank's input of this thread and call, for the exact sum */
        memset(want, 0, count * 4);
        for (int r = 0; r < t_size; r++) {
            t_fill(in, count * 4, t_seed(9, (uint64_t)(r * 2 + w->id), (uint64_t)k));
            for (size_t i = 0; i < count; i++)
                want[i] = (int32_t)((uint32_t)want[i] + (uint32_t)in[i]);
        }
        t_fill(in, count * 4, t_seed(9, (uint64_t)(t_rank * 2 + w->id), (uint64_t)k));
        memset(out, T_POISON, count * 4);
        gpurma_status_t rc =
            gpurma_allreduce(shared_team[0], in, out, count, GPURMA_INT32, GPURMA_SUM, NULL);
        if (rc == GPURMA_SUCCESS) {
            t_verify(out, want, count * 4, "allreduce beside another thread", t_rank, 0);
            w->ok++;
            continue;
        }
        T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT,
                 "thread %d call %d: %d (%s): %s", w->id, k, (int)rc, gpurma_strerror(rc),
                 gpurma_last_error_message(t_ctx));
        w->refused++;
        break;
    }
    free(in), free(out), free(want);
    return NULL;
}

int main(void)
{
    t_init("test_coll_threads", TIMEOUT_S * 1000);
    t_settle_init();
    for (int i = 0; i < 2; i++)
        CHECK(gpurma_team_split(t_world, 0, t_rank, &shared_team[i]));
    worker_t w[4] = {{.id = 0}, {.id = 1}, {.id = 0, .gather = 1}, {.id = 1, .gather = 1}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, worker, &w[i]))
            T_FAIL("pthread_create");
    /* The last rank's allgather joins once every other rank has one of its
     * two calls back (refused: the other holds the team until then). */
    const double deadline = t_now() + 10.0 * TIMEOUT_S;
    while (t_rank != t_size - 1 && !__atomic_load_n(&gather_returned, __ATOMIC_ACQUIRE))
        if (t_now() > deadline)
            T_FAIL("neither allgather came back within %d s", 10 * TIMEOUT_S);
        else
            usleep(1000);
    t_settle(10.0 * TIMEOUT_S);
    __atomic_store_n(&gather_go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    gather_check(w + 2);
    /* Peers may still wait out a timeout on the shared team (each thread
     * at most one): no rank goes on to the closing barrier on the world
     * team before every rank's threads are done. The bound leaves room for
     * a rank whose threads made all their calls. */
    t_settle(10.0 * TIMEOUT_S);
    char detail[160];
    snprintf(detail, sizeof detail,
             "rank 0: allreduce %ld + %ld right, %ld + %ld refused; allgather %ld + %ld right, "
             "%ld + %ld refused",
             w[0].ok, w[1].ok, w[0].refused, w[1].refused, w[2].ok, w[3].ok, w[2].refused,
             w[3].refused);
    /* shared_team[] stay: freeing is collective over a team out of step */
    return t_finish(detail);
}
