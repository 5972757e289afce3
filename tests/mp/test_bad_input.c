/*
 * test_bad_input.c - every kind of bad argument is refused with the right
 * status and a message of its own, and writes nothing.
 *
 * Each rank aims its bad calls at the next rank's window (poisoned, signals
 * and counters at zero); after a barrier every owner checks that all of its
 * bytes, signals and counters are untouched. The context runs with a short
 * timeout (GPURMA_INIT_FIELD_TIMEOUT_MS, 300 ms; GPURMA_TEST_SHORT_TIMEOUT_MS
 * overrides it on a very loaded machine, since barriers share that bound) so
 * that wait_until and counter_wait can be shown to time out with a message
 * naming the rank and the signal.
 */
#include <limits.h>

#include "common.h"

#include "gpurma_device.h" /* gpurma_win_device */

#define WIN_LEN 256
#define NSIG    8
#define NCNT    2

/* Like EXPECT_ERR, and the message must also contain needle. */
#define EXPECT_ERR_MSG(want, needle, call)                                                         \
    do {                                                                                           \
        EXPECT_ERR(want, call);                                                                    \
        T_ASSERT(strstr(gpurma_last_error_message(t_ctx), needle) != NULL,                         \
                 "%s: message \"%s\" does not mention \"%s\"", #call,                              \
                 gpurma_last_error_message(t_ctx), needle);                                        \
    } while (0)

static int64_t short_timeout_ms(void)
{
    const char *s = getenv("GPURMA_TEST_SHORT_TIMEOUT_MS");
    return s && atoll(s) > 0 ? atoll(s) : 300;
}

static void bad_peers(gpurma_win_t w, const unsigned char *src)
{
    const int peers[] = {
        -2, -1 /* GPURMA_ALL_PEERS: not a target */, t_size, t_size + 1, INT_MIN, INT_MAX};
    unsigned char dst[16];
    uint64_t old;
    for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
        int p = peers[i];
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put(w, p, 0, src, 4));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_get(w, p, dst, 0, 4));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_value(w, p, 0, 1, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_signal(w, p, 0, GPURMA_SIGNAL_ADD, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_put_signal(w, p, 0, src, 4, 0, GPURMA_SIGNAL_ADD, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_atomic_fetch_add(w, p, 0, 1, &old));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_atomic_swap(w, p, 0, 1, &old));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_atomic_compare_swap(w, p, 0, 0, 1, &old));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_counted(w, p, 0, src, 4, 0));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_put_signal_counted(w, p, 0, src, 4, 0, GPURMA_SIGNAL_ADD, 1, 0));
        if (p != GPURMA_ALL_PEERS)
            EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_flush(w, p));
    }
    CHECK(gpurma_flush(w, GPURMA_ALL_PEERS));
    EXPECT_ERR_MSG(GPURMA_ERR_INVALID_ARG, "peer", gpurma_put(w, t_size, 0, src, 4));
}

static void bad_ranges(gpurma_win_t w, int next, const unsigned char *src)
{
    unsigned char dst[16];
    const struct {
        size_t off, bytes;
    } r[] = {{WIN_LEN - 3, 4}, {WIN_LEN, 1},  {WIN_LEN + 1, 0},  {0, WIN_LEN + 1},
             {SIZE_MAX, 1},    {1, SIZE_MAX}, {SIZE_MAX - 2, 4}, {WIN_LEN / 2, SIZE_MAX / 2 + 2}};
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
        /* Sizes that big never reach a copy: a NULL-free pointer is enough. */
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, next, r[i].off, src, r[i].bytes));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_get(w, next, dst, r[i].off, r[i].bytes));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
                   gpurma_put_signal(w, next, r[i].off, src, r[i].bytes, 0, GPURMA_SIGNAL_SET, 7));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
                   gpurma_put_counted(w, next, r[i].off, src, r[i].bytes, 0));
    }
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put_value(w, next, WIN_LEN, 1, 1));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put_value(w, next, WIN_LEN - 4, 1, 8));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_atomic_fetch_add(w, next, WIN_LEN, 1, NULL));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_atomic_swap(w, next, WIN_LEN - 4, 1, NULL));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
               gpurma_atomic_compare_swap(w, next, SIZE_MAX - 7, 0, 1, NULL));
    char at[32];
    snprintf(at, sizeof(at), "%d", WIN_LEN - 3);
    EXPECT_ERR_MSG(GPURMA_ERR_OUT_OF_BOUNDS, at, gpurma_put(w, next, WIN_LEN - 3, src, 4));
}

static void bad_pointers_and_values(gpurma_win_t w, int next, const unsigned char *src)
{
    uint64_t v;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put(w, next, 0, NULL, 4));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_get(w, next, NULL, 0, 4));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_put_signal(w, next, 0, NULL, 4, 0, GPURMA_SIGNAL_ADD, 1));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_counted(w, next, 0, NULL, 4, 0));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_signal_read(w, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_counter_read(w, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_device(w, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put(NULL, next, 0, src, 4));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_free(NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_barrier(NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_split(t_world, 0, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_win_allocate(t_world, WIN_LEN, NULL, NULL, (gpurma_win_t *)NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_init(NULL, (gpurma_ctx_t *)NULL));
    gpurma_team_t world = t_world;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_free(&world));

    /* Misaligned atomics and put_values; bad put_value sizes. */
    const size_t mis[] = {1, 2, 4, 7, 12};
    for (size_t i = 0; i < sizeof(mis) / sizeof(mis[0]); i++) {
        EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_atomic_fetch_add(w, next, mis[i], 1, &v));
        EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_atomic_swap(w, next, mis[i], 1, &v));
        EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_atomic_compare_swap(w, next, mis[i], 0, 1, &v));
    }
    EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_put_value(w, next, 1, 0xFFFF, 2));
    EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_put_value(w, next, 2, 0xFFFFFFFF, 4));
    EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_put_value(w, next, 4, ~0ull, 8));
    const size_t bad_sizes[] = {0, 3, 5, 6, 7, 9, 16};
    for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++)
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_value(w, next, 0, ~0ull, bad_sizes[i]));

    /* Signals: bad ids, unknown ops, unknown comparisons. */
    const uint32_t bad_sig[] = {NSIG, NSIG + 1, UINT32_MAX};
    for (size_t i = 0; i < 3; i++) {
        uint32_t s = bad_sig[i];
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_signal(w, next, s, GPURMA_SIGNAL_ADD, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_put_signal(w, next, 0, src, 4, s, GPURMA_SIGNAL_SET, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_put_signal_counted(w, next, 0, src, 4, s, GPURMA_SIGNAL_SET, 1, 0));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_wait_until(w, s, GPURMA_CMP_GE, 0));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_signal_read(w, s, &v));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_signal_reset(w, s));
    }
    const int bad_ops[] = {2, 3, -1, 1000};
    for (size_t i = 0; i < 4; i++) {
        gpurma_signal_op_t op = (gpurma_signal_op_t)bad_ops[i];
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_signal(w, next, 0, op, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_signal(w, next, 0, src, 4, 0, op, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_put_signal_counted(w, next, 0, src, 4, 0, op, 1, 0));
    }
    const int bad_cmps[] = {6, 7, -1, 1000};
    for (size_t i = 0; i < 4; i++)
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_wait_until(w, 0, (gpurma_cmp_t)bad_cmps[i], 0));

    /* Counters: bad ids. */
    const uint32_t bad_cnt[] = {NCNT, NCNT + 7, UINT32_MAX};
    for (size_t i = 0; i < 3; i++) {
        uint32_t c = bad_cnt[i];
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_counted(w, next, 0, src, 4, c));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_put_signal_counted(w, next, 0, src, 4, 0, GPURMA_SIGNAL_ADD, 1, c));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_counter_wait(w, c, 0));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_counter_read(w, c, &v));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_counter_reset(w, c));
    }
}

/* A handle kept from before gpurma_win_free is refused everywhere. */
static void freed_window(int next, const unsigned char *src)
{
    gpurma_win_t w;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, NULL, &w));
    gpurma_win_t stale = w;
    CHECK(gpurma_win_free(&w));
    T_ASSERT(w == NULL, "win_free left the handle set");
    unsigned char dst[8];
    uint64_t v;
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_put(stale, next, 0, src, 4));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_get(stale, next, dst, 0, 4));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_put_value(stale, next, 0, 1, 1));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_signal(stale, next, 0, GPURMA_SIGNAL_ADD, 1));
    EXPECT_ERR(GPURMA_ERR_FREED,
               gpurma_put_signal(stale, next, 0, src, 4, 0, GPURMA_SIGNAL_ADD, 1));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_wait_until(stale, 0, GPURMA_CMP_GE, 0));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_signal_read(stale, 0, &v));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_signal_reset(stale, 0));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_flush(stale, next));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_flush(stale, GPURMA_ALL_PEERS));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_quiet(stale));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_fence(stale));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_atomic_fetch_add(stale, next, 0, 1, &v));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_atomic_swap(stale, next, 0, 1, &v));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_atomic_compare_swap(stale, next, 0, 0, 1, &v));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_put_counted(stale, next, 0, src, 4, 0));
    EXPECT_ERR(GPURMA_ERR_FREED,
               gpurma_put_signal_counted(stale, next, 0, src, 4, 0, GPURMA_SIGNAL_ADD, 1, 0));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_counter_wait(stale, 0, 0));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_counter_read(stale, 0, &v));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_counter_reset(stale, 0));
    gpurma_dev_win_t dw;
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_win_device(stale, &dw));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_win_free(&stale));
    T_ASSERT(gpurma_win_size(stale, next) == 0 && gpurma_win_base(stale) == NULL &&
                 gpurma_win_peer_ptr(stale, next) == NULL &&
                 gpurma_win_engine(stale, next) == GPURMA_ENGINE_NONE &&
                 gpurma_win_team(stale) == NULL && gpurma_win_num_signals(stale) == 0,
             "queries on a freed window answer as if it were live");
}

/* Collective creation errors: every rank gets the error, none hangs. */
static void bad_windows(void)
{
    gpurma_win_t w = NULL;
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_ENGINE;
    p.engine = (gpurma_engine_t)42;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w));
    p.field_mask = GPURMA_WIN_FIELD_MEM_KIND;
    p.mem_kind = GPURMA_MEM_DEVICE;
    EXPECT_ERR(GPURMA_ERR_UNSUPPORTED, gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_create(t_world, NULL, WIN_LEN, NULL, &w));
    p.field_mask = GPURMA_WIN_FIELD_CONTEXTS; /* 1 to 4 proxy contexts */
    p.contexts = 0;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w));
    p.contexts = 5;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w));
    if (t_size > 1) { /* signal counts must agree over the team */
        p.field_mask = GPURMA_WIN_FIELD_NUM_SIGNALS;
        p.num_signals = t_rank == 0 ? 8 : 9;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w));
    }
    T_ASSERT(w == NULL, "a failed creation returned a window");
    gpurma_team_t t = NULL;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_split(t_world, -5, 0, &t));
    T_ASSERT(t == NULL, "a failed split returned a team");
    CHECK(gpurma_barrier(t_world)); /* the team still works */
}

/* gpurma_dev_host_call, which the inline device code calls for windows on
 * private memory (win_create on malloc'd memory), is exported: it refuses
 * what the API refuses, with nothing written past the window. */
static void host_call(gpurma_win_t mapped, const unsigned char *src)
{
    const int me = t_rank; /* reached by host calls also where peers are other nodes */
    gpurma_dev_win_t dm;
    CHECK(gpurma_win_device(mapped, &dm));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_dev_host_call(&dm, GPURMA_DEV_OP_PUT, me, 0, (void *)src, 8, 0, 0, NULL));
    unsigned char *mem = t_malloc(128);
    memset(mem, T_POISON, 128);
    gpurma_win_t w;
    CHECK(gpurma_win_create(t_world, mem, 64, NULL, &w));
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(w, &dw));
    uint64_t old = 0;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_dev_host_call(&dw, GPURMA_DEV_OP_PUT, t_size, 0, (void *)src, 8, 0, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_dev_host_call(&dw, GPURMA_DEV_OP_PUT, INT_MIN, 0, (void *)src, 8, 0, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
               gpurma_dev_host_call(&dw, GPURMA_DEV_OP_PUT, me, 60, (void *)src, 8, 0, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_host_call(&dw, GPURMA_DEV_OP_GET, me,
                                                              SIZE_MAX - 3, mem + 64, 8, 0, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_dev_host_call(&dw, GPURMA_DEV_OP_PUT, me, 0, NULL, 8, 0, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_MISALIGNED,
               gpurma_dev_host_call(&dw, GPURMA_DEV_OP_FETCH_ADD, me, 4, NULL, 8, 1, 0, &old));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
               gpurma_dev_host_call(&dw, GPURMA_DEV_OP_SWAP, me, 64, NULL, 8, 1, 0, &old));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_dev_host_call(&dw, GPURMA_DEV_OP_CAS, me, 0, NULL, 8, 1, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_dev_host_call(&dw, 99, me, 0, (void *)src, 8, 0, 0, NULL));
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(mem, T_POISON, 128, "private window after refused host calls", t_rank, 0);
    CHECK(gpurma_win_free(&w));
    free(mem);
}

static void timeouts(gpurma_win_t w, int64_t timeout_ms)
{
    char needle[32];
    double t0 = t_now();
    snprintf(needle, sizeof(needle), "rank %d", t_rank);
    EXPECT_ERR_MSG(GPURMA_ERR_TIMEOUT, needle, gpurma_wait_until(w, 3, GPURMA_CMP_EQ, 1));
    T_ASSERT(strstr(gpurma_last_error_message(t_ctx), "signal 3") != NULL,
             "timeout message \"%s\" does not name signal 3", gpurma_last_error_message(t_ctx));
    double waited = t_now() - t0;
    T_ASSERT(waited >= timeout_ms * 1e-3 * 0.95 && waited < timeout_ms * 1e-3 + 5.0,
             "wait_until timed out after %.3f s with a timeout of %" PRId64 " ms", waited,
             timeout_ms);
    EXPECT_ERR_MSG(GPURMA_ERR_TIMEOUT, "counter 1", gpurma_counter_wait(w, 1, 1));
    uint64_t v;
    CHECK(gpurma_signal_read(w, 3, &v));
    T_ASSERT(v == 0, "signal 3 is %" PRIu64 " after the timeout", v);
}

int main(void)
{
    int64_t timeout_ms = short_timeout_ms();
    t_init("test_bad_input", timeout_ms);
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_NUM_SIGNALS | GPURMA_WIN_FIELD_NUM_COUNTERS;
    p.num_signals = NSIG;
    p.num_counters = NCNT;
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, &p, &base, &w));
    unsigned char *win = base;
    memset(win, T_POISON, WIN_LEN);
    unsigned char src[64];
    t_fill(src, sizeof(src), t_seed(60, (uint64_t)t_rank, 0));
    int next = (t_rank + 1) % t_size;
    CHECK(gpurma_barrier(t_world));

    bad_peers(w, src);
    bad_ranges(w, next, src);
    bad_pointers_and_values(w, next, src);
    freed_window(next, src);
    bad_windows();
    host_call(w, src);
    timeouts(w, timeout_ms);

    /* Nothing of the above reached any window, signal or counter. */
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(win, T_POISON, WIN_LEN, "window after refused calls", t_rank, 0);
    for (uint32_t s = 0; s < NSIG; s++) {
        uint64_t v;
        CHECK(gpurma_signal_read(w, s, &v));
        T_ASSERT(v == 0, "signal %u is %" PRIu64 " after refused calls", s, v);
    }
    for (uint32_t c = 0; c < NCNT; c++) {
        uint64_t v;
        CHECK(gpurma_counter_read(w, c, &v));
        T_ASSERT(v == 0, "counter %u is %" PRIu64 " after refused calls", c, v);
    }

    /* And the window still works. */
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_put_signal(w, next, WIN_LEN - 64, src, 64, 1, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_wait_until(w, 1, GPURMA_CMP_EQ, 1));
    unsigned char want[64];
    t_fill(want, sizeof(want), t_seed(60, (uint64_t)((t_rank - 1 + t_size) % t_size), 0));
    t_verify_window(win, WIN_LEN, WIN_LEN - 64, want, 64, "put after the refused calls",
                    (t_rank - 1 + t_size) % t_size);

    CHECK(gpurma_win_free(&w));
    return t_finish(NULL);
}
