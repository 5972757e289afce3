/*
 * test_error_model.c - one error model: the thread's message belongs to the
 * last failed status call, queries never touch it, and values that are
 * legal results on success have a _checked form that tells an error apart.
 *
 * 1. Before init: an init that fails (a future API version) leaves its
 *    message; every query on the NULL context and NULL handles returns its
 *    documented value and leaves the message word for word (the pattern of
 *    examples/put_demo's CHECK: print rank and message after a failed init).
 * 2. After init: a failed put (peer out of range) leaves its message;
 *    successful queries and queries on bad handles or peers leave it.
 * 3. _checked forms on a window of a different size per rank, 0 on every
 *    fourth rank: the exact size of every peer (0 included, with
 *    GPURMA_SUCCESS), errors for peers out of range, NULL outputs, forged
 *    and freed handles, with a message of their own and the output left
 *    as the caller poisoned it. Device forms (host backend) the same way.
 */
#include "common.h"

#include "gpurma_device.h"

enum { EM_DATA = 80 };

#define SIZE_POISON ((size_t)0xA5A5A5A5A5A5A5A5ull)
#define PTR_POISON  ((void *)(uintptr_t)0xA5A5A5A5A5A5A5A5ull)
#define U64_POISON  0xA5A5A5A5A5A5A5A5ull

static size_t size_of(int rank)
{
    if (rank % 4 == 1)
        return 0;
    return 1 + (size_t)rank * 1237 + (rank % 2 ? 0 : 4099);
}

/* The message is what it was when `saved` was taken, byte for byte. */
static void expect_message_kept(const char *saved, const char *after)
{
    const char *now = gpurma_last_error_message(t_ctx);
    T_ASSERT(now && !strcmp(now, saved), "after %s the message is \"%s\", expected \"%s\"", after,
             now ? now : "(null)", saved);
}

static void before_init(void)
{
    gpurma_ctx_t ctx = (gpurma_ctx_t)PTR_POISON;
    int rc = gpurma_init_version(0xFFFF0000u, NULL, &ctx);
    T_ASSERT(rc == GPURMA_ERR_UNSUPPORTED && ctx == NULL,
             "init with a future API version returned %d, ctx %p", rc, (void *)ctx);
    char saved[512];
    snprintf(saved, sizeof(saved), "%s", gpurma_last_error_message(NULL));
    T_ASSERT(strstr(saved, "API") != NULL, "init's message does not name the API: \"%s\"", saved);

    T_ASSERT(gpurma_rank(ctx) == -1, "rank of the NULL context is not -1");
    expect_message_kept(saved, "gpurma_rank(NULL)");
    T_ASSERT(gpurma_size(ctx) == -1 && gpurma_node_rank(ctx) == -1 && gpurma_node_size(ctx) == -1,
             "size/node_rank/node_size of the NULL context are not -1");
    T_ASSERT(gpurma_bootstrap_name(ctx) == NULL && gpurma_team_world(ctx) == NULL &&
                 gpurma_team_node(ctx) == NULL,
             "bootstrap name or teams of the NULL context are not NULL");
    T_ASSERT(gpurma_team_rank(NULL) == -1 && gpurma_team_size(NULL) == -1 &&
                 gpurma_team_world_rank(NULL, 0) == -1,
             "team queries on NULL are not -1");
    T_ASSERT(gpurma_win_size(NULL, 0) == 0 && gpurma_win_base(NULL) == NULL &&
                 gpurma_win_engine(NULL, 0) == GPURMA_ENGINE_NONE &&
                 gpurma_win_peer_ptr(NULL, 0) == NULL && gpurma_win_team(NULL) == NULL &&
                 gpurma_win_num_signals(NULL) == 0 && gpurma_win_num_counters(NULL) == 0,
             "window queries on NULL do not give their documented values");
    expect_message_kept(saved, "every query on NULL handles");
}

static void queries_after_failure(gpurma_win_t w)
{
    unsigned char buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int rc = gpurma_put(w, t_size + 3, 0, buf, sizeof(buf));
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG, "put to peer %d returned %d", t_size + 3, rc);
    char saved[512];
    snprintf(saved, sizeof(saved), "%s", gpurma_last_error_message(t_ctx));
    T_ASSERT(saved[0] != '\0', "failed put left no message");

    T_ASSERT(gpurma_rank(t_ctx) == t_rank && gpurma_size(t_ctx) == t_size,
             "rank/size changed");
    T_ASSERT(gpurma_team_rank(t_world) == t_rank && gpurma_team_size(t_world) == t_size,
             "team rank/size differ from the world's");
    T_ASSERT(gpurma_win_size(w, t_rank) == size_of(t_rank), "own win_size is wrong");
    T_ASSERT(gpurma_win_num_signals(w) > 0, "window has no signals");
    expect_message_kept(saved, "successful queries");

    int forged_bytes[16] = {0};
    gpurma_win_t forged = (gpurma_win_t)(void *)forged_bytes;
    T_ASSERT(gpurma_win_size(w, -1) == 0 && gpurma_win_size(w, t_size) == 0 &&
                 gpurma_win_engine(w, t_size) == GPURMA_ENGINE_NONE &&
                 gpurma_win_size(forged, 0) == 0 && gpurma_win_base(forged) == NULL &&
                 gpurma_team_world_rank(t_world, t_size) == -1 &&
                 gpurma_team_rank((gpurma_team_t)(void *)forged_bytes) == -1 &&
                 gpurma_rank((gpurma_ctx_t)(void *)forged_bytes) == -1,
             "failing queries do not give their documented values");
    expect_message_kept(saved, "failing queries");
}

/* Poisoned outputs stay poisoned on error; the call writes its own message. */
static void checked_forms(gpurma_win_t w, void *base)
{
    for (int p = 0; p < t_size; p++) {
        size_t sz = SIZE_POISON;
        CHECK(gpurma_win_size_checked(w, p, &sz));
        T_ASSERT(sz == size_of(p), "win_size_checked(peer %d) = %zu, expected %zu", p, sz,
                 size_of(p));
    }
    void *b = PTR_POISON;
    CHECK(gpurma_win_base_checked(w, &b));
    T_ASSERT(b == base, "win_base_checked gave %p, win_allocate %p", b, base);

    int bad_peers[] = {-1, t_size, INT32_MIN};
    for (size_t i = 0; i < sizeof(bad_peers) / sizeof(bad_peers[0]); i++) {
        size_t sz = SIZE_POISON;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_size_checked(w, bad_peers[i], &sz));
        T_ASSERT(sz == SIZE_POISON, "win_size_checked(peer %d) wrote %zu", bad_peers[i], sz);
    }
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_size_checked(w, 0, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_base_checked(w, NULL));
    size_t sz = SIZE_POISON;
    b = PTR_POISON;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_size_checked(NULL, 0, &sz));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_base_checked(NULL, &b));
    T_ASSERT(sz == SIZE_POISON && b == PTR_POISON, "_checked forms wrote through a NULL handle");

    /* Device forms: the real value on a live handle (signal 3 set by the
     * left neighbour, counter 0 untouched), errors on forged ids. */
    gpurma_dev_win_t d;
    CHECK(gpurma_win_device(w, &d));
    uint64_t v = U64_POISON;
    CHECK(gpurma_dev_signal_read_checked(d, 3, &v));
    T_ASSERT(v == (uint64_t)EM_DATA + (uint64_t)((t_rank + t_size - 1) % t_size),
             "signal_read_checked gave %" PRIu64, v);
    T_ASSERT(gpurma_dev_signal_read(d, 3) == v, "signal_read and its checked form differ");
    v = U64_POISON;
    CHECK(gpurma_dev_counter_read_checked(d, 0, &v));
    T_ASSERT(v == 0, "counter 0 is %" PRIu64, v);
    v = U64_POISON;
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_signal_read_checked(d, d.num_signals, &v));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_counter_read_checked(d, d.num_counters, &v));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_signal_read_checked(d, 0, NULL));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_counter_read_checked(d, 0, NULL));
    gpurma_dev_win_t zero;
    memset(&zero, 0, sizeof(zero));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_signal_read_checked(zero, 0, &v));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_counter_read_checked(zero, 0, &v));
    T_ASSERT(v == U64_POISON, "device _checked forms wrote %" PRIu64 " on error", v);
}

static void freed_handles(gpurma_win_t stale, gpurma_dev_win_t dstale)
{
    size_t sz = SIZE_POISON;
    void *b = PTR_POISON;
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_win_size_checked(stale, 0, &sz));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_win_base_checked(stale, &b));
    T_ASSERT(sz == SIZE_POISON && b == PTR_POISON, "_checked forms wrote through a freed handle");
    char saved[512];
    snprintf(saved, sizeof(saved), "%s", gpurma_last_error_message(t_ctx));
    T_ASSERT(gpurma_win_size(stale, 0) == 0 && gpurma_win_base(stale) == NULL,
             "queries on a freed window are not 0/NULL");
    expect_message_kept(saved, "queries on a freed window");
    uint64_t v = U64_POISON;
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_signal_read_checked(dstale, 0, &v));
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_counter_read_checked(dstale, 0, &v));
    T_ASSERT(v == U64_POISON, "device _checked forms wrote through a freed handle");
}

int main(void)
{
    before_init();
    t_init("test_error_model", 0);
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, size_of(t_rank), NULL, &base, &w));
    /* Signal 3 of the right neighbour: a value each rank can predict. */
    CHECK(gpurma_signal(w, (t_rank + 1) % t_size, 3, GPURMA_SIGNAL_SET,
                        (uint64_t)EM_DATA + (uint64_t)t_rank));
    CHECK(gpurma_flush(w, GPURMA_ALL_PEERS));
    CHECK(gpurma_barrier(t_world));

    queries_after_failure(w);
    checked_forms(w, base);

    gpurma_win_t stale = w;
    gpurma_dev_win_t dstale;
    CHECK(gpurma_win_device(w, &dstale));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&w));
    freed_handles(stale, dstale);
    return t_finish("");
}
