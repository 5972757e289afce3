/*
 * test_coll_reg_race.c - gpurma_coll_register and gpurma_coll_deregister
 * called by one thread while another thread's collective runs on the same
 * team, which the API does not allow: the registration must be refused at
 * once (INVALID_ARG, with its own message), and the collective that ran
 * beside it must not return SUCCESS on that rank (the team's calls fail
 * from then on), instead of the registration joining a team exchange its
 * peers never make (a timeout) or freeing a registration under the
 * collective.
 *
 * The overlap is forced: rank 0 joins the collective LATE_MS after the
 * others, so their collective (an allgather on a helper thread) is still
 * waiting for it when their main thread calls register (first team) or
 * deregister (second team, where every rank registered the buffer
 * before). Rank 0's own allgather meets complete calls and may succeed,
 * with the exact data. Then the other order (third team): an allgather
 * called while the rank's registration waits for rank 0's is refused at
 * once, writes nothing, and the registration fails. Before the fix the registration went ahead: its
 * barrier waited for rank 0, which never called it (TIMEOUT), and the
 * allgather returned SUCCESS.
 */
#include <pthread.h>

#include "common.h"
#include "gpurma_coll.h"

#define TIMEOUT_MS 4000
#define LATE_MS 800
#define COUNT 333 /* elements; odd */

typedef struct {
    gpurma_team_t team;
    int32_t *in, *out;
    int entered;
    gpurma_status_t rc;
} gather_t;

static void *gather(void *arg)
{
    gather_t *g = arg;
    __atomic_store_n(&g->entered, 1, __ATOMIC_RELEASE);
    g->rc = gpurma_allgather(g->team, g->in, g->out, COUNT, GPURMA_INT32, NULL);
    return NULL;
}

/* One round on a team of its own: what = 0 register, 1 deregister. */
static void race(int what, unsigned char *buf, size_t bytes)
{
    const char *name = what ? "coll_deregister" : "coll_register";
    const size_t n = (size_t)t_size;
    gpurma_team_t t;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    if (what)
        CHECK(gpurma_coll_register(t, buf, bytes));
    gather_t g = {t, t_malloc(COUNT * 4), t_malloc(n * COUNT * 4), 0, GPURMA_SUCCESS};
    int32_t *want = t_malloc(n * COUNT * 4);
    for (int r = 0; r < t_size; r++)
        t_fill(want + (size_t)r * COUNT, COUNT * 4, t_seed(12, (uint64_t)r, (uint64_t)what));
    memcpy(g.in, want + (size_t)t_rank * COUNT, COUNT * 4);
    memset(g.out, T_POISON, n * COUNT * 4);
    CHECK(gpurma_barrier(t_world));
    if (t_rank == 0) {
        usleep(LATE_MS * 1000);
        gather(&g);
    } else {
        pthread_t th;
        if (pthread_create(&th, NULL, gather, &g))
            T_FAIL("pthread_create");
        while (!__atomic_load_n(&g.entered, __ATOMIC_ACQUIRE))
            usleep(1000);
        usleep(LATE_MS * 1000 / 4); /* inside the allgather, waiting for rank 0 */
        t_arm_message();
        const double r0 = t_now();
        gpurma_status_t rc =
            what ? gpurma_coll_deregister(t, buf) : gpurma_coll_register(t, buf, bytes);
        const double took = t_now() - r0;
        T_ASSERT(rc == GPURMA_ERR_INVALID_ARG, "%s beside a running allgather: %d (%s): %s",
                 name, (int)rc, gpurma_strerror(rc), gpurma_last_error_message(t_ctx));
        const char *m = gpurma_last_error_message(t_ctx);
        T_ASSERT(strstr(m, name) && strcmp(m, t_stale_message),
                 "%s refused without a message of its own: %s", name, m);
        T_ASSERT(took < LATE_MS / 2000.0, "%s took %.3f s to be refused", name, took);
        pthread_join(th, NULL);
        T_ASSERT(g.rc != GPURMA_SUCCESS, "allgather beside %s returned SUCCESS", name);
        T_ASSERT(g.rc == GPURMA_ERR_INVALID_ARG, "allgather beside %s: %d (%s)", name,
                 (int)g.rc, gpurma_strerror(g.rc));
        t_checks += 3;
    }
    if (t_rank == 0 && g.rc == GPURMA_SUCCESS)
        t_verify(g.out, want, n * COUNT * 4, "allgather of the late rank", 0, 0);
    /* No wait on t outlives the allgather (every rank called it), so the
     * world barrier below meets every rank in time; t stays: its calls
     * are refused from now on. */
    free(g.in), free(g.out), free(want);
}

typedef struct {
    gpurma_team_t team;
    unsigned char *buf;
    size_t bytes;
    int entered;
    gpurma_status_t rc;
} reg_t;

static void *reg(void *arg)
{
    reg_t *r = arg;
    __atomic_store_n(&r->entered, 1, __ATOMIC_RELEASE);
    r->rc = gpurma_coll_register(r->team, r->buf, r->bytes);
    return NULL;
}

/* The other order: a collective called while this rank's registration
 * (waiting for rank 0's, LATE_MS later) runs on another thread: the
 * collective is refused at once with nothing sent, the registration
 * fails when it ends. Rank 0 only registers. */
static void collective_beside_register(unsigned char *buf, size_t bytes)
{
    const size_t n = (size_t)t_size;
    gpurma_team_t t;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    reg_t r = {t, buf, bytes, 0, GPURMA_SUCCESS};
    CHECK(gpurma_barrier(t_world));
    if (t_rank == 0) {
        usleep(LATE_MS * 1000);
        reg(&r);
        T_ASSERT(r.rc == GPURMA_SUCCESS || r.rc == GPURMA_ERR_INVALID_ARG ||
                     r.rc == GPURMA_ERR_TIMEOUT,
                 "coll_register of the late rank: %d (%s)", (int)r.rc, gpurma_strerror(r.rc));
        return;
    }
    int32_t *in = t_malloc(COUNT * 4), *out = t_malloc(n * COUNT * 4);
    t_fill(in, COUNT * 4, t_seed(12, (uint64_t)t_rank, 2));
    memset(out, T_POISON, n * COUNT * 4);
    pthread_t th;
    if (pthread_create(&th, NULL, reg, &r))
        T_FAIL("pthread_create");
    while (!__atomic_load_n(&r.entered, __ATOMIC_ACQUIRE))
        usleep(1000);
    usleep(LATE_MS * 1000 / 4); /* inside the registration, waiting for rank 0 */
    t_arm_message();
    const double r0 = t_now();
    gpurma_status_t rc = gpurma_allgather(t, in, out, COUNT, GPURMA_INT32, NULL);
    const double took = t_now() - r0;
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG, "allgather beside a running coll_register: %d (%s): %s",
             (int)rc, gpurma_strerror(rc), gpurma_last_error_message(t_ctx));
    T_ASSERT(strcmp(gpurma_last_error_message(t_ctx), t_stale_message),
             "allgather refused without a message of its own");
    T_ASSERT(took < LATE_MS / 2000.0, "allgather took %.3f s to be refused", took);
    t_verify_fill(out, T_POISON, n * COUNT * 4, "refused allgather wrote", t_rank, 0);
    pthread_join(th, NULL);
    T_ASSERT(r.rc == GPURMA_ERR_INVALID_ARG, "coll_register beside an allgather: %d (%s)",
             (int)r.rc, gpurma_strerror(r.rc));
    t_checks += 4;
    free(in), free(out);
}

int main(void)
{
    t_init("test_coll_reg_race", TIMEOUT_MS);
    if (t_size > 1) {
        const size_t bytes = 4099;
        unsigned char *buf = t_malloc(bytes);
        race(0, buf, bytes);
        race(1, buf, bytes);
        collective_beside_register(buf, bytes);
        CHECK(gpurma_barrier(t_world));
        free(buf);
    }
    return t_finish("");
}
