/*
 * test_coll_threads.c - two threads per rank calling collectives on one
 * team at the same time, which the API does not allow: every call must
 * return either SUCCESS with exactly the right result or an error
 * (INVALID_ARG: the team is busy, or a peer's piece belongs to another
 * call; TIMEOUT: a peer's thread was refused and never sent), never
 * SUCCESS with wrong data. Two pairs of threads, each pair on a team of
 * its own: one pair calls allreduce with a different count per thread, so
 * that a call of one thread paired with the other thread's call on a peer
 * cannot look right (the fingerprint refuses it); the other calls
 * allgather (which GPURMA_COLL_ALGO=ce runs through its own window and
 * signals, tests/mp/test_coll-algos.sh) with the same count on both
 * threads, where only the team's in-use flag can tell: both threads of a
 * rank start their first call together (it cannot end before every peer
 * has joined), the second is refused and the first fails when it ends.
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
} worker_t;

/* allgather with one count on both threads of a rank: data of every rank
 * and thread tells which peer call was matched. */
static void *gather_worker(worker_t *w)
{
    const size_t count = 129, n = (size_t)t_size;
    int32_t *in = t_malloc(count * 4), *out = t_malloc(n * count * 4),
            *want = t_malloc(n * count * 4);
    for (int k = 0; k < CALLS; k++) {
        for (int r = 0; r < t_size; r++)
            t_fill(want + (size_t)r * count, count * 4,
                   t_seed(10, (uint64_t)(r * 2 + w->id), (uint64_t)k));
        t_fill(in, count * 4, t_seed(10, (uint64_t)(t_rank * 2 + w->id), (uint64_t)k));
        memset(out, T_POISON, n * count * 4);
        gpurma_status_t rc = gpurma_allgather(shared_team[1], in, out, count, GPURMA_INT32, NULL);
        if (rc == GPURMA_SUCCESS) {
            t_verify(out, want, n * count * 4, "allgather beside another thread", t_rank, 0);
            w->ok++;
            continue;
        }
        T_ASSERT(rc == GPURMA_ERR_INVALID_ARG || rc == GPURMA_ERR_TIMEOUT,
                 "gather thread %d call %d: %d (%s): %s", w->id, k, (int)rc, gpurma_strerror(rc),
                 gpurma_last_error_message(t_ctx));
        w->refused++;
        break;
    }
    free(in), free(out), free(want);
    return NULL;
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
    worker_t w[4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 1, 0, 0}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, worker, &w[i]))
            T_FAIL("pthread_create");
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
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
