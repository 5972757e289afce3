/*
 * test_atomics_nofetch.c - non-fetching atomics (old NULL) from several
 * threads of every rank, through the host API and the device API, then
 * completed by quiet alone (no barrier, which would quiet everything
 * itself): on the port engine they wait for no reply, so flush and quiet
 * are all that completes them.
 *
 * Each thread adds random values with high and low bits to word ADD of
 * every rank, swaps a sequence of its own values into its own word of every
 * rank (the last one must be what stays: one context executes a peer's
 * descriptors in order), and takes fetch-add tickets on word FETCH between
 * them (which must rise: their result slots share the ring with the
 * descriptors that have none). Then it quiets, and signals every rank; a
 * rank that has every signal checks its words exactly.
 */
#include <pthread.h>

#include "common.h"
#include "gpurma_device.h"

enum { PURPOSE = 90, NT = 4, N_ADD = 1500, FETCH_EVERY = 25, SIG = 1 };
enum { OFF_ADD = 0, OFF_FETCH = 8, OFF_SETS = 16 };

static gpurma_win_t win;
static gpurma_dev_win_t dwin;

/* The value thread t of rank r adds in its i-th add to target p. */
static uint64_t add_value(int r, int t, int p, int i)
{
    uint64_t s = t_seed(PURPOSE, (uint64_t)(r * NT + t), (uint64_t)p * N_ADD + (uint64_t)i);
    return (t_splitmix64(&s) & 0x00FFFF00FFFF00FFull) | 1;
}

/* The i-th value thread t of rank r sets into its own word. */
static uint64_t set_value(int r, int t, int i)
{
    return 0xC0DE000000000000ull | (uint64_t)(r * NT + t) << 32 | (uint64_t)i;
}

/* Even threads use the device API, odd ones the host API. */
static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, dev = t % 2 == 0;
    uint64_t last[64];
    for (int p = 0; p < t_size; p++)
        last[p] = UINT64_MAX;
    size_t set_at = OFF_SETS + (size_t)(t_rank * NT + t) * 8;
    for (int i = 0; i < N_ADD; i++)
        for (int p = 0; p < t_size; p++) {
            uint64_t v = add_value(t_rank, t, p, i);
            if (dev) {
                EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_atomic_fetch_add(dwin, p, OFF_ADD, v, NULL));
                EXPECT_CODE(GPURMA_SUCCESS,
                            gpurma_dev_atomic_swap(dwin, p, set_at, set_value(t_rank, t, i), NULL));
            } else {
                CHECK(gpurma_atomic_fetch_add(win, p, OFF_ADD, v, NULL));
                CHECK(gpurma_atomic_swap(win, p, set_at, set_value(t_rank, t, i), NULL));
            }
            if (i % FETCH_EVERY == 0) {
                uint64_t old = 0;
                if (dev)
                    EXPECT_CODE(GPURMA_SUCCESS,
                                gpurma_dev_atomic_fetch_add(dwin, p, OFF_FETCH, 1, &old));
                else
                    CHECK(gpurma_atomic_fetch_add(win, p, OFF_FETCH, 1, &old));
                T_ASSERT(last[p] == UINT64_MAX || old > last[p],
                         "thread %d: fetch-add ticket %" PRIu64 " from rank %d after %" PRIu64, t,
                         old, p, last[p]);
                last[p] = old;
            }
        }
    /* Quiet alone completes them; then each rank hears from this thread. */
    if (dev)
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_quiet(dwin));
    else
        CHECK(gpurma_quiet(win));
    for (int p = 0; p < t_size; p++) {
        if (dev)
            EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_signal(dwin, p, SIG, GPURMA_SIGNAL_ADD, 1));
        else
            CHECK(gpurma_signal(win, p, SIG, GPURMA_SIGNAL_ADD, 1));
    }
    return NULL;
}

int main(void)
{
    t_init("test_atomics_nofetch", 0);
    T_ASSERT(t_size <= 64, "at most 64 ranks");
    size_t len = OFF_SETS + (size_t)t_size * NT * 8;
    uint64_t *base;
    CHECK(gpurma_win_allocate(t_world, len, NULL, (void **)&base, &win));
    CHECK(gpurma_win_device(win, &dwin));
    /* Start values that carry into the high word early, and poisoned set words. */
    const uint64_t add_start = 0x00000000FFFFFF00ull;
    base[OFF_ADD / 8] = add_start;
    base[OFF_FETCH / 8] = 0;
    for (size_t k = OFF_SETS / 8; k < len / 8; k++)
        base[k] = 0xA5A5A5A5A5A5A5A5ull;
    CHECK(gpurma_barrier(t_world));
    double t0 = t_now();
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        T_ASSERT(!pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), "pthread_create");
    /* Every thread of every rank quieted before it signalled: the words are
     * final once all signals are in, before any barrier. */
    CHECK(gpurma_wait_until(win, SIG, GPURMA_CMP_GE, (uint64_t)t_size * NT));
    uint64_t want = add_start;
    for (int r = 0; r < t_size; r++)
        for (int t = 0; t < NT; t++)
            for (int i = 0; i < N_ADD; i++)
                want += add_value(r, t, t_rank, i);
    uint64_t got = __atomic_load_n(&base[OFF_ADD / 8], __ATOMIC_ACQUIRE);
    T_ASSERT(got == want, "non-fetching adds: word holds %#" PRIx64 ", expected %#" PRIx64, got,
             want);
    uint64_t fetches = (uint64_t)t_size * NT * ((N_ADD + FETCH_EVERY - 1) / FETCH_EVERY);
    got = __atomic_load_n(&base[OFF_FETCH / 8], __ATOMIC_ACQUIRE);
    T_ASSERT(got == fetches, "fetch-add word %" PRIu64 ", expected %" PRIu64, got, fetches);
    for (int r = 0; r < t_size; r++)
        for (int t = 0; t < NT; t++) {
            got = __atomic_load_n(&base[OFF_SETS / 8 + (size_t)(r * NT + t)], __ATOMIC_ACQUIRE);
            T_ASSERT(got == set_value(r, t, N_ADD - 1),
                     "word of rank %d thread %d holds %#" PRIx64 ", not its last set %#" PRIx64,
                     r, t, got, set_value(r, t, N_ADD - 1));
        }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    double dt = t_now() - t0;
    /* On the port engine each context that served a peer took them as
     * atomics without a result (GPURMA_PORT_F_NO_RESULT): their old values,
     * never 0 here (odd adds on nonzero words, sets over poison), went to the
     * FIFO's discard word, not to result slots the pushers would wait on. */
    for (int p = 0; p < t_size; p++) {
        const gpurma_dev_peer_t *pe = &dwin.peers[p];
        if (pe->path != GPURMA_DEV_PATH_FIFO || (uint32_t)pe->port >= dwin.nports)
            continue;
        const gpurma_port_fifo_t *f = (const gpurma_port_fifo_t *)dwin.ports[pe->port];
        T_ASSERT(__atomic_load_n(&f->discard, __ATOMIC_ACQUIRE) != 0,
                 "port context %d (serving rank %d) never took a non-fetching atomic", pe->port,
                 p);
    }
    const char *engine = gpurma_engine_name(gpurma_win_engine(win, (t_rank + 1) % t_size));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&win));
    char detail[160];
    snprintf(detail, sizeof(detail),
             "%d ranks x %d threads x %d non-fetching add+swap pairs per rank, exact after "
             "quiet (%.2f s, engine %s)",
             t_size, NT, N_ADD, dt, engine);
    return t_finish(detail);
}
