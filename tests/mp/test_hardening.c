/*
 * test_hardening.c - what a careless or hostile caller does must not wrap,
 * corrupt or crash:
 *
 *   sizes     win_allocate / win_create with sizes near SIZE_MAX (on every
 *             rank, or on one rank only) fail on every rank with
 *             INVALID_ARG or NO_MEMORY, allocate nothing (no segment is
 *             left in /dev/shm, the handle stays NULL), and the team still
 *             works afterwards; unknown field_mask bits, mem_kind 42 and
 *             timeouts that overflow in nanoseconds are refused;
 *   overlap   a put or get from a rank to itself whose source and
 *             destination overlap moves the bytes as memmove would;
 *   teams     a team with windows is not freed under them, and a window's
 *             switch objects go with the window;
 *   after     every call on a window (freed or not), a team, a device
 *             handle or the context after gpurma_finalize returns
 *             NOT_INITIALIZED or FREED, reads no freed memory (the ASan
 *             build checks that), and a second finalize is refused.
 */
#include <limits.h>

#include "common.h"
#include "../shm_segments.h"

#include "gpurma_device.h"
#include "gpurma_switch.h"

#define WIN_LEN 4096

/* A window whose creation must fail with one of two codes on every rank. */
#define EXPECT_NO_WINDOW(call, win)                                                           \
    do {                                                                                      \
        int before_ = t_own_segments();                                                         \
        gpurma_status_t rc_ = (call);                                                         \
        T_ASSERT(rc_ == GPURMA_ERR_INVALID_ARG || rc_ == GPURMA_ERR_NO_MEMORY,                \
                 "%s returned %d (%s), want INVALID_ARG or NO_MEMORY", #call, (int)rc_,        \
                 gpurma_strerror(rc_));                                                       \
        T_ASSERT((win) == NULL, "%s left a window handle", #call);                           \
        T_ASSERT(t_own_segments() == before_, "%s left %d segment(s) in /dev/shm", #call,       \
                 t_own_segments() - before_);                                                   \
        t_checks++;                                                                           \
    } while (0)

static void huge_sizes(void)
{
    const size_t sizes[] = {SIZE_MAX,          SIZE_MAX - 1,  SIZE_MAX - 63,
                            SIZE_MAX - 4096,   SIZE_MAX / 2 + 1, (size_t)1 << 63,
                            ((size_t)1 << 62) + 3};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        gpurma_win_t w = NULL;
        void *base = (void *)&w;
        EXPECT_NO_WINDOW(gpurma_win_allocate(t_world, sizes[i], NULL, &base, &w), w);
        /* Only one rank asks for too much: everyone fails, nobody hangs. */
        size_t mine = t_rank == t_size - 1 ? sizes[i] : WIN_LEN;
        EXPECT_NO_WINDOW(gpurma_win_allocate(t_world, mine, NULL, NULL, &w), w);
        /* Created windows: a real buffer, a size that runs past the end of
         * the address space (2^62 bytes from a stack address do not: that
         * window is the caller's claim, as with MPI_Win_create). */
        unsigned char buf[64];
        if (sizes[i] > SIZE_MAX / 2)
            EXPECT_NO_WINDOW(gpurma_win_create(t_world, buf, sizes[i], NULL, &w), w);
    }
    /* Parameters that are not what the header defines. */
    gpurma_win_t w = NULL;
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = (uint64_t)1 << 40;
    EXPECT_NO_WINDOW(gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w), w);
    p.field_mask = GPURMA_WIN_FIELD_MEM_KIND;
    p.mem_kind = (gpurma_mem_kind_t)42;
    EXPECT_NO_WINDOW(gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w), w);
    p.field_mask = GPURMA_WIN_FIELD_NUM_SIGNALS;
    p.num_signals = UINT32_MAX;
    EXPECT_NO_WINDOW(gpurma_win_allocate(t_world, WIN_LEN, &p, NULL, &w), w);

    /* The team is intact: a real window works after all that. */
    unsigned char *base = NULL;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, (void **)&base, &w));
    T_ASSERT(gpurma_win_size(w, t_rank) == WIN_LEN, "window size %zu", gpurma_win_size(w, t_rank));
    unsigned char src[WIN_LEN];
    t_fill(src, sizeof(src), t_seed(1, (uint64_t)t_rank, 0));
    memset(base, T_POISON, WIN_LEN);
    CHECK(gpurma_barrier(t_world));
    int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    CHECK(gpurma_put_signal(w, next, 0, src, WIN_LEN, 0, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_wait_until(w, 0, GPURMA_CMP_GE, 1));
    unsigned char want[WIN_LEN];
    t_fill(want, sizeof(want), t_seed(1, (uint64_t)prev, 0));
    t_verify(base, want, WIN_LEN, "window after refused creations", prev, 0);
    CHECK(gpurma_win_free(&w));
}

/* Init parameters are checked before anything is started. */
static void bad_init_params(void)
{
    gpurma_ctx_t ctx = (gpurma_ctx_t)&ctx;
    gpurma_init_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = (uint64_t)1 << 33;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_init(&p, &ctx));
    T_ASSERT(ctx == NULL, "a refused init left a context");
    const int64_t timeouts[] = {0, -1, INT64_MAX, 18446744073710ll, 604800001ll};
    for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
        p.field_mask = GPURMA_INIT_FIELD_TIMEOUT_MS;
        p.timeout_ms = timeouts[i];
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_init(&p, &ctx));
    }
}

/* Rank to itself, source and destination in its own window, overlapping
 * in both directions; the reference is memmove on a copy. */
static void self_overlap(void)
{
    unsigned char *base = NULL;
    gpurma_win_t w = NULL;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, (void **)&base, &w));
    static const struct { size_t src, dst, n; } cases[] = {
        {0, 8, 1000}, {8, 0, 1000}, {1, 2, 4093}, {2, 1, 4093}, {100, 37, 3000}, {37, 100, 3000}};
    unsigned char ref[WIN_LEN];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* put: dst offset in the window, src a pointer into it */
        t_fill(base, WIN_LEN, t_seed(2, (uint64_t)t_rank, i));
        memcpy(ref, base, WIN_LEN);
        memmove(ref + cases[i].dst, ref + cases[i].src, cases[i].n);
        CHECK(gpurma_put(w, t_rank, cases[i].dst, base + cases[i].src, cases[i].n));
        CHECK(gpurma_flush(w, t_rank));
        t_verify(base, ref, WIN_LEN, "overlapping put to self", t_rank, 0);
        /* get: src offset in the window, dst a pointer into it */
        t_fill(base, WIN_LEN, t_seed(3, (uint64_t)t_rank, i));
        memcpy(ref, base, WIN_LEN);
        memmove(ref + cases[i].dst, ref + cases[i].src, cases[i].n);
        CHECK(gpurma_get(w, t_rank, base + cases[i].dst, cases[i].src, cases[i].n));
        t_verify(base, ref, WIN_LEN, "overlapping get from self", t_rank, 0);
    }
    CHECK(gpurma_win_free(&w));
}

/* A team is not freed under its windows: their calls read its members. */
static void team_with_windows(void)
{
    gpurma_team_t team = NULL;
    gpurma_win_t w = NULL;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &team));
    CHECK(gpurma_win_allocate(team, WIN_LEN, NULL, NULL, &w));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_free(&team));
    T_ASSERT(team != NULL, "a refused team_free cleared the handle");
    CHECK(gpurma_signal(w, (t_rank + 1) % t_size, 0, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_wait_until(w, 0, GPURMA_CMP_GE, 1));
    CHECK(gpurma_win_free(&w));
    CHECK(gpurma_team_free(&team));
    t_checks += 3;
}

/* A switch goes with its window: afterwards its handle says so. */
static void switch_with_window(void)
{
    gpurma_win_t w = NULL;
    gpurma_switch_t sw = NULL;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, NULL, &w));
    gpurma_status_t rc = gpurma_switch_create(w, 0, 1024, NULL, &sw);
    if (rc == GPURMA_ERR_UNSUPPORTED) { /* members not mapped (port engine forced) */
        CHECK(gpurma_win_free(&w));
        return;
    }
    CHECK(rc);
    gpurma_switch_info_t info;
    CHECK(gpurma_switch_query(sw, &info));
    CHECK(gpurma_win_free(&w));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_switch_query(sw, &info));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_switch_free(&sw));
    t_checks += 3;
}

static void after_finalize(void)
{
    unsigned char *base = NULL;
    gpurma_win_t kept = NULL, freed = NULL;
    gpurma_team_t team = NULL, world = t_world;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, (void **)&base, &kept));
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, NULL, &freed));
    CHECK(gpurma_team_split(t_world, 0, t_rank, &team));
    gpurma_dev_win_t dev;
    CHECK(gpurma_win_device(kept, &dev));
    gpurma_win_t stale = freed;
    CHECK(gpurma_win_free(&freed));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_put_value(stale, 0, 0, 1, 8));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_finalize(t_ctx));

    unsigned char buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint64_t v = 0;
    /* The window and team nobody freed went with the context. */
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_put(kept, 0, 0, buf, 8));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_get(kept, 0, buf, 0, 8));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_wait_until(kept, 0, GPURMA_CMP_GE, 1));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_signal(kept, 0, 0, GPURMA_SIGNAL_ADD, 1));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_atomic_fetch_add(kept, 0, 0, 1, &v));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_flush(kept, GPURMA_ALL_PEERS));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_quiet(kept));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_signal_read(kept, 0, &v));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_win_free(&kept));
    T_ASSERT(gpurma_win_size(kept, 0) == 0 && gpurma_win_base(kept) == NULL,
             "queries on a finalized window answer");
    /* The one freed before keeps saying so. */
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_put(stale, 0, 0, buf, 8));
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_win_free(&stale));
    /* Teams, built-in or split, and the context. */
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_barrier(team));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_barrier(world));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_team_free(&team));
    T_ASSERT(gpurma_team_size(world) == -1, "team_size of a finalized team");
    gpurma_team_t sub = NULL;
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_team_split(world, 0, 0, &sub));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_win_allocate(world, 64, NULL, NULL, &kept));
    T_ASSERT(gpurma_rank(t_ctx) == -1 && gpurma_team_world(t_ctx) == NULL,
             "queries on a finalized context answer");
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_finalize(t_ctx));
    /* The device handle of a window that is gone (host backend: the calls
     * look at the window first). */
    T_ASSERT(gpurma_dev_put(dev, 0, 0, buf, 8) != GPURMA_SUCCESS, "device put after finalize");
    T_ASSERT(gpurma_dev_signal(dev, 0, 0, GPURMA_SIGNAL_ADD, 1) != GPURMA_SUCCESS,
             "device signal after finalize");
    t_checks += 24;
}

int main(void)
{
    t_name = "test_hardening";
    bad_init_params();
    t_init("test_hardening", 0);
    huge_sizes();
    self_overlap();
    team_with_windows();
    switch_with_window();
    after_finalize();
    if (t_rank == 0)
        printf("PASS %s: %d ranks, %.2f s, %" PRIu64 " checks on rank 0\n", t_name, t_size,
               t_now() - t_start, t_checks);
    return 0;
}
