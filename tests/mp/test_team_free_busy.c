/*
 * test_team_free_busy.c - gpurma_team_free on a team whose collective of
 * another thread is inside its call (the API does not allow it; issue 16):
 * the free is refused with a message and changes nothing, the running
 * allreduce ends with exactly the right sum, and the team then frees as
 * usual on every rank; a kept copy of the handle gives GPURMA_ERR_FREED.
 * Rank 0's second thread starts the allreduce; the other ranks join it
 * 500 ms later, so it is still waiting when rank 0's main thread tries the
 * free. With one rank there is nobody to wait for: only the plain free.
 */
#include <pthread.h>
#include <unistd.h>

#include "common.h"
#include "gpurma_coll.h"

#define COUNT 1001

static gpurma_team_t team;
static int32_t in[COUNT], out[COUNT], want[COUNT];
static int entering;
static gpurma_status_t call_rc = GPURMA_ERR_INTERNAL;

static void *allreduce_thread(void *arg)
{
    (void)arg;
    __atomic_store_n(&entering, 1, __ATOMIC_RELEASE);
    call_rc = gpurma_allreduce(team, in, out, COUNT, GPURMA_INT32, GPURMA_SUM, NULL);
    return NULL;
}

int main(void)
{
    t_init("test_team_free_busy", 0);
    CHECK(gpurma_team_split(t_world, 0, t_rank, &team));
    memset(want, 0, sizeof want);
    for (int r = 0; r < t_size; r++) {
        t_fill(in, sizeof in, t_seed(16, (uint64_t)r, 0));
        for (int i = 0; i < COUNT; i++)
            want[i] = (int32_t)((uint32_t)want[i] + (uint32_t)in[i]);
    }
    t_fill(in, sizeof in, t_seed(16, (uint64_t)t_rank, 0));
    memset(out, T_POISON, sizeof out);
    if (t_size > 1 && t_rank == 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, allreduce_thread, NULL))
            T_FAIL("pthread_create");
        while (!__atomic_load_n(&entering, __ATOMIC_ACQUIRE))
            usleep(1000);
        usleep(50 * 1000); /* inside its call: the peers come after 500 ms */
        gpurma_team_t kept = team;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_free(&team));
        T_ASSERT(team == kept, "a refused team_free changed the handle");
        T_ASSERT(strstr(gpurma_last_error_message(t_ctx), "another thread") != NULL,
                 "team_free's refusal does not say why: %s", gpurma_last_error_message(t_ctx));
        pthread_join(th, NULL);
        T_ASSERT(call_rc == GPURMA_SUCCESS, "the allreduce beside the refused free: %d (%s): %s",
                 (int)call_rc, gpurma_strerror(call_rc), gpurma_last_error_message(t_ctx));
    } else {
        if (t_size > 1)
            usleep(500 * 1000);
        CHECK(gpurma_allreduce(team, in, out, COUNT, GPURMA_INT32, GPURMA_SUM, NULL));
    }
    t_verify(out, want, sizeof out, "allreduce beside a refused team_free", t_rank, 0);
    gpurma_team_t kept = team;
    CHECK(gpurma_team_free(&team));
    T_ASSERT(team == NULL, "team_free left the handle set");
    EXPECT_ERR(GPURMA_ERR_FREED,
               gpurma_allreduce(kept, in, out, COUNT, GPURMA_INT32, GPURMA_SUM, NULL));
    return t_finish(NULL);
}
