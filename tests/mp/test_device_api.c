/*
 * test_device_api.c - the device API (gpurma_device.h compiled as plain C)
 * driven from CPU threads, as the host backend runs kernels.
 *
 * 1. One thread: dev_put/get/put_value/signal/put_signal/wait_until/
 *    signal_read/put_counted/counter_*, flush/quiet/fence, atomics.
 * 2. Several pthreads per rank act as one cooperative team: they split each
 *    put with (tid, nthreads) (_coop forms), meet at a pthread barrier, and
 *    one of them signals; the receiver's threads read the message back with
 *    get_coop. Meanwhile every thread also does atomics on shared slots.
 * 3. The same calls on a window over malloc'd memory (the host-call path).
 * 4. Bad arguments return their codes from the device functions and write
 *    nothing (checked by the owners after a barrier), cooperative calls
 *    from a thread outside its team (tid >= nthreads, nthreads 0) included.
 */
#include <pthread.h>

#include "common.h"

#include "gpurma_device.h"

enum { DEV_DATA = 90 };
enum { SIG_DATA = 0, SIG_ACK = 1, SIG_ONE = 2 };

#define NTHREADS              4
#define ROUNDS                300
#define RING_LEN              ((1u << 20) + 8192)
#define OFF_ATOMIC            (RING_LEN) /* 8 slots of 8 bytes after the ring area */
#define WIN_LEN               (RING_LEN + 64)
#define ADDS_PER_THREAD_ROUND 3

static gpurma_win_t win;
static gpurma_dev_win_t dw;
static unsigned char *mem; /* this rank's window */
static unsigned char *src, *dst, *want;
static pthread_barrier_t team_barrier;
static int next_rank, prev_rank;

static void round_shape(uint64_t i, size_t *bytes, size_t *off)
{
    static const size_t classes[] = {1, 3, 7, 64, 65, 4095, 4097, 65537, (1u << 20) + 3};
    *bytes = classes[i % 9] + (size_t)(i / 9) % 5;
    *off = 64 + (size_t)(i * 53) % 4000;
}

/* ------------------------------------------------------- 1. single thread */

static void single_thread(void)
{
    unsigned char buf[4096 + 16], back[4096 + 16];
    size_t bytes = 4093, off = 333;
    t_fill(buf, bytes, t_seed(DEV_DATA, (uint64_t)t_rank, 1));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put(dw, next_rank, off, buf, bytes));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_fence(dw));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_signal(dw, next_rank, SIG_ONE, GPURMA_SIGNAL_ADD, 5));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_ONE, GPURMA_CMP_EQ, 5));
    T_ASSERT(gpurma_dev_signal_read(dw, SIG_ONE) == 5, "dev_signal_read %" PRIu64,
             gpurma_dev_signal_read(dw, SIG_ONE));
    t_fill(want, bytes, t_seed(DEV_DATA, (uint64_t)prev_rank, 1));
    t_verify(mem + off, want, bytes, "dev_put before dev_signal", prev_rank, off);
    CHECK(gpurma_barrier(t_world)); /* everyone saw 5 before anyone SETs 100 */

    /* dev_put_value, then dev_put_signal SET; then read back with dev_get. */
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_value(dw, next_rank, 16, 0x1122334455667788ull, 8));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_value(dw, next_rank, 24, 0xAABBCCDDu, 4));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_value(dw, next_rank, 30, 0xEEFF, 2));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_value(dw, next_rank, 33, 0x1234, 1));
    EXPECT_CODE(GPURMA_SUCCESS,
                gpurma_dev_put_signal(dw, next_rank, 40, buf, 7, SIG_ONE, GPURMA_SIGNAL_SET, 100));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_ONE, GPURMA_CMP_GE, 100));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_quiet(dw));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_flush(dw, next_rank));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_flush(dw, GPURMA_ALL_PEERS));
    unsigned char expect[48];
    memset(expect, T_POISON, sizeof(expect));
    const uint64_t v8 = 0x1122334455667788ull;
    const uint32_t v4 = 0xAABBCCDDu;
    const uint16_t v2 = 0xEEFF;
    memcpy(expect + 16, &v8, 8);
    memcpy(expect + 24, &v4, 4);
    memcpy(expect + 30, &v2, 2);
    expect[33] = 0x34;
    t_fill(want, 7, t_seed(DEV_DATA, (uint64_t)prev_rank, 1));
    memcpy(expect + 40, want, 7);
    t_verify(mem, expect, sizeof(expect), "dev_put_value and dev_put_signal", prev_rank, 0);
    CHECK(gpurma_barrier(t_world));
    memset(back, 0x3C, sizeof(back));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_get(dw, next_rank, back + 5, off, bytes));
    t_verify_fill(back, 0x3C, 5, "dev_get: below", next_rank, off);
    t_verify(back + 5, buf, bytes, "dev_get", next_rank, off);
    t_verify_fill(back + 5 + bytes, 0x3C, sizeof(back) - 5 - bytes, "dev_get: above", next_rank,
                  off + bytes);

    /* Counted device put: the counter of this rank's window counts it. */
    uint64_t c0 = gpurma_dev_counter_read(dw, 3);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_counted(dw, next_rank, 100, buf, 9, 3));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_counter_wait(dw, 3, c0 + 1));
    T_ASSERT(gpurma_dev_counter_read(dw, 3) == c0 + 1, "dev counter %" PRIu64,
             gpurma_dev_counter_read(dw, 3));
    uint64_t hc;
    CHECK(gpurma_counter_read(win, 3, &hc));
    T_ASSERT(hc == c0 + 1, "host counter_read %" PRIu64 " after a device put_counted", hc);
    CHECK(gpurma_barrier(t_world));
    memset(mem, T_POISON, RING_LEN);
    CHECK(gpurma_signal_reset(win, SIG_ONE));
    CHECK(gpurma_barrier(t_world));
}

/* ------------------------------------------------------ 2. thread teams */

static void *team_member(void *arg)
{
    unsigned tid = (unsigned)(uintptr_t)arg;
    for (uint64_t i = 0; i < ROUNDS; i++) {
        size_t bytes, off;
        round_shape(i, &bytes, &off);
        if (tid == 0) {
            EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_ACK, GPURMA_CMP_GE, i));
            t_fill(src, bytes, t_seed(DEV_DATA, (uint64_t)t_rank, i));
        }
        pthread_barrier_wait(&team_barrier);
        if (i % 2)
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_put_coop(dw, next_rank, off, src, bytes, tid, NTHREADS));
        else /* with several threads the fused form leaves the signal to us */
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_put_signal_coop(dw, next_rank, off, src, bytes, SIG_DATA,
                                                   GPURMA_SIGNAL_ADD, 1, tid, NTHREADS));
        for (int a = 0; a < ADDS_PER_THREAD_ROUND; a++)
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_atomic_fetch_add(dw, (int)((i + (uint64_t)a) % (uint64_t)t_size),
                                                    OFF_ATOMIC + 8 * tid, 1, NULL));
        pthread_barrier_wait(&team_barrier);
        if (tid == 0) {
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_signal(dw, next_rank, SIG_DATA, GPURMA_SIGNAL_ADD, 1));
            EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_DATA, GPURMA_CMP_EQ, i + 1));
        }
        pthread_barrier_wait(&team_barrier);
        /* All threads read this rank's own window through the device API. */
        EXPECT_CODE(GPURMA_SUCCESS,
                    gpurma_dev_get_coop(dw, t_rank, dst + 3, off, bytes, tid, NTHREADS));
        pthread_barrier_wait(&team_barrier);
        if (tid == 0) {
            t_fill(want, bytes, t_seed(DEV_DATA, (uint64_t)prev_rank, i));
            t_verify(dst + 3, want, bytes, "cooperative put, read back with get_coop", prev_rank,
                     off);
            t_verify(mem + off, want, bytes, "cooperative put after its signal", prev_rank, off);
            t_verify_fill(mem + off - 64, T_POISON, 64, "below the cooperative put", prev_rank,
                          off - 64);
            t_verify_fill(mem + off + bytes, T_POISON, 64, "above the cooperative put", prev_rank,
                          off + bytes);
            memset(mem + off, T_POISON, bytes);
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_signal(dw, prev_rank, SIG_ACK, GPURMA_SIGNAL_ADD, 1));
        }
    }
    return NULL;
}

static void thread_teams(void)
{
    pthread_t th[NTHREADS];
    pthread_barrier_init(&team_barrier, NULL, NTHREADS);
    for (unsigned t = 1; t < NTHREADS; t++)
        if (pthread_create(&th[t], NULL, team_member, (void *)(uintptr_t)t))
            T_FAIL("pthread_create failed");
    team_member((void *)(uintptr_t)0);
    for (unsigned t = 1; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&team_barrier);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_ACK, GPURMA_CMP_EQ, ROUNDS));
    CHECK(gpurma_barrier(t_world));

    /* Slot tid of rank r got ADDS adds from every rank's thread tid in the
     * rounds where (i + a) % size == r. */
    uint64_t per = 0;
    for (uint64_t i = 0; i < ROUNDS; i++)
        for (uint64_t a = 0; a < ADDS_PER_THREAD_ROUND; a++)
            per += (i + a) % (uint64_t)t_size == (uint64_t)t_rank;
    for (unsigned t = 0; t < NTHREADS; t++) {
        uint64_t v;
        memcpy(&v, mem + OFF_ATOMIC + 8 * t, 8);
        T_ASSERT(v == per * (uint64_t)t_size, "atomic slot %u: %" PRIu64 ", expected %" PRIu64, t,
                 v, per * (uint64_t)t_size);
    }
    t_verify_fill(mem, T_POISON, RING_LEN, "ring area after the thread teams", t_rank, 0);
}

/* ------------------------------------------------- 3. the host-call path */

static void *created_member(void *arg)
{
    gpurma_dev_win_t *cw = arg;
    /* Every thread of the team passes; how the work is split is the
     * library's business, the result must be the whole message. */
    static unsigned next_tid;
    unsigned tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED) % 3;
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_coop(*cw, next_rank, 11, src, 70001, tid, 3));
    return NULL;
}

static void created_window(void)
{
    const size_t len = 80000;
    unsigned char *user = t_malloc(len + 8);
    memset(user, T_POISON, len + 8);
    gpurma_win_t cwin;
    CHECK(gpurma_win_create(t_world, user, len, NULL, &cwin));
    gpurma_dev_win_t cw;
    CHECK(gpurma_win_device(cwin, &cw));
    CHECK(gpurma_barrier(t_world));

    t_fill(src, 70001, t_seed(DEV_DATA + 1, (uint64_t)t_rank, 0));
    pthread_t th[3];
    for (int t = 0; t < 3; t++)
        if (pthread_create(&th[t], NULL, created_member, &cw))
            T_FAIL("pthread_create failed");
    for (int t = 0; t < 3; t++)
        pthread_join(th[t], NULL);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_signal(cw, next_rank, 0, GPURMA_SIGNAL_ADD, 1));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(cw, 0, GPURMA_CMP_EQ, 1));
    t_fill(want, 70001, t_seed(DEV_DATA + 1, (uint64_t)prev_rank, 0));
    t_verify_window(user, len, 11, want, 70001, "device put into a created window", prev_rank);

    /* put_value, get and atomics through the host-call path. */
    CHECK(gpurma_barrier(t_world));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_value(cw, next_rank, 70016, 0xCAFEF00Du, 4));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_atomic_fetch_add(cw, 0, 70024, 3, NULL));
    uint64_t old;
    EXPECT_CODE(GPURMA_SUCCESS,
                gpurma_dev_atomic_compare_swap(cw, next_rank, 70032, 0xA5A5A5A5A5A5A5A5ull,
                                               (uint64_t)t_rank, &old));
    T_ASSERT(old == 0xA5A5A5A5A5A5A5A5ull, "dev compare_swap on a created window saw %#" PRIx64,
             old);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_atomic_swap(cw, next_rank, 70040, 7, &old));
    T_ASSERT(old == 0xA5A5A5A5A5A5A5A5ull, "dev swap saw %#" PRIx64, old);
    CHECK(gpurma_barrier(t_world));
    uint32_t v4;
    uint64_t v8;
    memcpy(&v4, user + 70016, 4);
    T_ASSERT(v4 == 0xCAFEF00Du, "dev_put_value on a created window: %#x", v4);
    memcpy(&v8, user + 70032, 8);
    T_ASSERT(v8 == (uint64_t)prev_rank, "dev compare_swap result %" PRIu64, v8);
    memcpy(&v8, user + 70040, 8);
    T_ASSERT(v8 == 7, "dev swap result %" PRIu64, v8);
    if (t_rank == 0) {
        memcpy(&v8, user + 70024, 8);
        T_ASSERT(v8 == 0xA5A5A5A5A5A5A5A5ull + 3ull * (uint64_t)t_size,
                 "dev fetch_add on a created window: %#" PRIx64, v8);
    }
    unsigned char back[64];
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_get(cw, next_rank, back, 11, 64));
    t_verify(back, src, 64, "dev_get from a created window", next_rank, 11);
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&cwin));
    free(user);
}

/* ------------------------------------------------------- 4. bad arguments */

static void bad_input(void)
{
    gpurma_win_t bw;
    void *bbase;
    const size_t len = 128;
    CHECK(gpurma_win_allocate(t_world, len, NULL, &bbase, &bw));
    memset(bbase, T_POISON, len);
    gpurma_dev_win_t b;
    CHECK(gpurma_win_device(bw, &b));
    uint32_t nsig = gpurma_win_num_signals(bw), ncnt = gpurma_win_num_counters(bw);
    CHECK(gpurma_barrier(t_world));

    unsigned char buf[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    uint64_t old;
    int n = next_rank;
    const int bad_peers[] = {-2, -1, t_size, t_size + 5};
    for (int i = 0; i < 4; i++) {
        int p = bad_peers[i];
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put(b, p, 0, buf, 4));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_get(b, p, buf, 0, 4));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_value(b, p, 0, 1, 1));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_signal(b, p, 0, GPURMA_SIGNAL_ADD, 1));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_put_signal(b, p, 0, buf, 4, 0, GPURMA_SIGNAL_ADD, 1));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_atomic_fetch_add(b, p, 0, 1, &old));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_atomic_swap(b, p, 0, 1, &old));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_atomic_compare_swap(b, p, 0, 0, 1, &old));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_counted(b, p, 0, buf, 4, 0));
        if (p != GPURMA_ALL_PEERS)
            EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_flush(b, p));
    }
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_put(b, n, len - 3, buf, 4));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_put(b, n, len + 1, buf, 0));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_put(b, n, SIZE_MAX, buf, 2));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_put_coop(b, n, 1, buf, SIZE_MAX, 1, 2));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_get(b, n, buf, len, 1));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_put_signal(b, n, len - 1, buf, 2, 0, GPURMA_SIGNAL_SET, 9));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_put_value(b, n, len, 1, 1));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_atomic_fetch_add(b, n, len - 4, 1, &old));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put(b, n, 0, NULL, 4));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_get(b, n, NULL, 0, 4));
    const size_t bad_sizes[] = {0, 3, 5, 16};
    for (int i = 0; i < 4; i++)
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_value(b, n, 0, ~0ull, bad_sizes[i]));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_put_value(b, n, 3, 0xFFFF, 2));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_put_value(b, n, 4, ~0ull, 8));
    const size_t mis[] = {1, 4, 7};
    for (int i = 0; i < 3; i++) {
        EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_atomic_fetch_add(b, n, mis[i], 1, &old));
        EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_atomic_swap(b, n, mis[i], 1, &old));
        EXPECT_CODE(GPURMA_ERR_MISALIGNED,
                    gpurma_dev_atomic_compare_swap(b, n, mis[i], 0, 1, &old));
    }
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_signal(b, n, nsig, GPURMA_SIGNAL_ADD, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_signal(b, n, 0, (gpurma_signal_op_t)2, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_put_signal(b, n, 0, buf, 8, nsig, GPURMA_SIGNAL_ADD, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_put_signal(b, n, 0, buf, 8, 0, (gpurma_signal_op_t)-1, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_signal_coop(b, n, 0, buf, 8, UINT32_MAX,
                                                                   GPURMA_SIGNAL_ADD, 1, 0, 2));
    /* A cooperative thread outside its team, or a team of none (whose
     * split would divide by zero or never end). */
    const unsigned teams[][2] = {{0, 0}, {1, 0}, {2, 2}, {5, 3}, {UINT32_MAX, 1}};
    for (int i = 0; i < 5; i++) {
        unsigned t = teams[i][0], nt = teams[i][1];
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_coop(b, n, 0, buf, 16, t, nt));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_get_coop(b, n, buf, 0, 16, t, nt));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_put_signal_coop(b, n, 0, buf, 16, 0, GPURMA_SIGNAL_ADD, 1, t, nt));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_put_packets_coop(b, n, 0, buf, 16, 1, t, nt));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_put_packets16_coop(b, n, 0, buf, 16, 1, t, nt));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_read_packets_coop(b, 0, buf, 16, 1, t, nt));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_read_packets16_coop(b, 0, buf, 16, 1, t, nt));
    }
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_wait_until(b, nsig, GPURMA_CMP_GE, 0));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_wait_until(b, 0, (gpurma_cmp_t)6, 0));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_wait_until(b, 0, (gpurma_cmp_t)-1, 0));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_counted(b, n, 0, buf, 8, ncnt));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_counter_wait(b, ncnt, 0));
    T_ASSERT(gpurma_dev_signal_read(b, nsig) == 0 && gpurma_dev_counter_read(b, ncnt) == 0,
             "reads of bad ids");

    CHECK(gpurma_barrier(t_world));
    t_verify_fill(bbase, T_POISON, len, "window after refused device calls", t_rank, 0);
    for (uint32_t s = 0; s < nsig; s++)
        T_ASSERT(gpurma_dev_signal_read(b, s) == 0, "signal %u is %" PRIu64, s,
                 gpurma_dev_signal_read(b, s));
    for (uint32_t c = 0; c < ncnt; c++)
        T_ASSERT(gpurma_dev_counter_read(b, c) == 0, "counter %u is %" PRIu64, c,
                 gpurma_dev_counter_read(b, c));
    CHECK(gpurma_win_free(&bw));
}

int main(void)
{
    t_init("test_device_api", 0);
    next_rank = (t_rank + 1) % t_size;
    prev_rank = (t_rank - 1 + t_size) % t_size;
    void *base;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, &base, &win));
    CHECK(gpurma_win_device(win, &dw));
    mem = base;
    memset(mem, T_POISON, RING_LEN);
    memset(mem + OFF_ATOMIC, 0, WIN_LEN - OFF_ATOMIC);
    src = t_malloc(RING_LEN);
    dst = t_malloc(RING_LEN + 8);
    want = t_malloc(RING_LEN);
    CHECK(gpurma_barrier(t_world));

    double t0 = t_now();
    single_thread();
    thread_teams();
    double t1 = t_now();
    created_window();
    bad_input();

    CHECK(gpurma_win_free(&win));
    free(src);
    free(dst);
    free(want);
    char detail[96];
    snprintf(detail, sizeof(detail), "%d threads x %d cooperative rounds in %.2f s", NTHREADS,
             ROUNDS, t1 - t0);
    return t_finish(detail);
}
