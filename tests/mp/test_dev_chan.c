/*
 * test_dev_chan.c - per-peer channels of the device API (gpurma_dev_chan_t)
 * driven from CPU threads on the host backend; tests/mp/test_dev_chan.sh
 * runs it on the mem and the port engine.
 *
 * 1. A ring of rounds: each rank sends to the next through a channel made
 *    once, before the loop, every channel operation in turn (put + signal,
 *    put_signal, put_coop and put_signal_coop by a team of pthreads,
 *    put_counted + counter_wait, put + flush, packets of 8 and 16 bytes read
 *    through the channel to oneself, put_value) over every size class with odd sizes and offsets; random
 *    data, poisoned destinations. Sources are overwritten as soon as the
 *    operation says they may be (flush, counter), so a proxy that read
 *    them later would deliver the wrong bytes.
 * 2. get and get_coop from the next rank, atomics through channels.
 * 3. The host-call path (a window over malloc'd memory).
 * 4. Channels for bad peers, a zeroed channel, and a channel kept past
 *    gpurma_win_free: every operation refuses, nothing is written.
 */
#include <limits.h>
#include <pthread.h>

#include "common.h"

#include "gpurma_device.h"

enum { DEV_CHAN_DATA = 120 };
enum { SIG_DATA = 0, SIG_ACK = 1 };
enum {
    OP_PUT_SIGNAL_SEPARATE = 0, /* chan_put, then chan_signal          */
    OP_PUT_SIGNAL,              /* chan_put_signal, one thread         */
    OP_PUT_COOP,                /* team chan_put_coop, then a signal   */
    OP_PUT_SIGNAL_COOP,         /* team chan_put_signal_coop, then one */
    OP_PUT_COUNTED,             /* counter says the source is free     */
    OP_PUT_FLUSH,               /* flush says the source is free       */
    OP_PACKETS8,                /* chan_put_packets, read_packets      */
    OP_PACKETS16_COOP,          /* team chan_put_packets16_coop        */
    OP_PUT_VALUE,               /* chan_put_value of 1, 2, 4, 8 bytes  */
    NOPS
};

#define TEAM        3
#define RING_LEN    ((1u << 20) + 8192)
#define OFF_ATOMIC  (RING_LEN) /* 4 slots of 8 bytes after the ring area */
#define WIN_LEN     (RING_LEN + 64)
#define PACKET_MAX  65537 /* payload; its 16-byte packets take 131088 bytes */
#define COUNTER     1

static const size_t size_classes[] = {1, 3, 7, 8, 64, 65, 4095, 4097, 65537, (1u << 20) + 3};
#define NCLASSES (sizeof(size_classes) / sizeof(size_classes[0]))

static gpurma_win_t win;
static gpurma_dev_win_t dw;
static unsigned char *mem; /* this rank's window */
static unsigned char *src, *dst, *want;
static int next_rank, prev_rank;

static int op_is_packets(int op) { return op == OP_PACKETS8 || op == OP_PACKETS16_COOP; }

/* What round i moves: op, bytes and window offset (odd ones included). */
static void round_shape(uint64_t i, int *op, size_t *bytes, size_t *off)
{
    *op = (int)(i % NOPS);
    *bytes = size_classes[(i / NOPS) % NCLASSES];
    *off = 64 + (size_t)(i * 53) % 4000;
    if (op_is_packets(*op)) {
        *bytes = *bytes > PACKET_MAX ? PACKET_MAX : *bytes;
        *off &= ~(size_t)15;
    } else if (*op == OP_PUT_VALUE) {
        *bytes = (size_t)1 << (i / NOPS) % 4; /* 1, 2, 4, 8 */
        *off &= ~(*bytes - 1);
    }
}

/* --------------------------------------------------- a team of pthreads */

struct team_job {
    gpurma_dev_chan_t chan;
    int op;
    size_t off, bytes;
    uint32_t flag;
};

static struct team_job job;
static void *team_member(void *arg)
{
    unsigned tid = (unsigned)(uintptr_t)arg;
    switch (job.op) {
    case OP_PUT_COOP:
        EXPECT_CODE(GPURMA_SUCCESS,
                    gpurma_dev_chan_put_coop(job.chan, job.off, src, job.bytes, tid, TEAM));
        break;
    case OP_PUT_SIGNAL_COOP: /* several threads: nobody signals here */
        EXPECT_CODE(GPURMA_SUCCESS,
                    gpurma_dev_chan_put_signal_coop(job.chan, job.off, src, job.bytes, SIG_DATA,
                                                    GPURMA_SIGNAL_ADD, 1, tid, TEAM));
        break;
    case OP_PACKETS16_COOP:
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put_packets16_coop(job.chan, job.off, src,
                                                                       job.bytes, job.flag, tid,
                                                                       TEAM));
        break;
    default: /* the get phase */
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_get_coop(job.chan, dst + 3, job.off,
                                                             job.bytes, tid, TEAM));
        break;
    }
    return NULL;
}

/* Runs the job on TEAM threads, this one as tid 0, and joins them: the
 * join is the team's synchronization. */
static void run_team(void)
{
    pthread_t th[TEAM];
    for (unsigned t = 1; t < TEAM; t++)
        if (pthread_create(&th[t], NULL, team_member, (void *)(uintptr_t)t))
            T_FAIL("pthread_create failed");
    team_member((void *)(uintptr_t)0);
    for (unsigned t = 1; t < TEAM; t++)
        pthread_join(th[t], NULL);
}

/* ------------------------------------------------------ 1. ring of rounds */

static void send_round(gpurma_dev_chan_t to, uint64_t i)
{
    int op;
    size_t bytes, off;
    round_shape(i, &op, &bytes, &off);
    t_fill(src, bytes, t_seed(DEV_CHAN_DATA, (uint64_t)t_rank, i));
    int signal_after = 1;
    switch (op) {
    case OP_PUT_SIGNAL_SEPARATE:
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put(to, off, src, bytes));
        break;
    case OP_PUT_SIGNAL:
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put_signal(to, off, src, bytes, SIG_DATA,
                                                               GPURMA_SIGNAL_ADD, 1));
        signal_after = 0;
        break;
    case OP_PUT_COOP:
    case OP_PUT_SIGNAL_COOP:
    case OP_PACKETS16_COOP:
        job = (struct team_job){to, op, off, bytes, (uint32_t)i + 1};
        run_team();
        break;
    case OP_PUT_COUNTED: {
        uint64_t c0 = gpurma_dev_counter_read(dw, COUNTER);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put_counted(to, off, src, bytes, COUNTER));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_counter_wait(dw, COUNTER, c0 + 1));
        memset(src, 0x5C, bytes); /* locally complete: the source is ours again */
        break;
    }
    case OP_PUT_FLUSH:
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put(to, off, src, bytes));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_flush(to));
        memset(src, 0x5C, bytes);
        break;
    case OP_PACKETS8:
        EXPECT_CODE(GPURMA_SUCCESS,
                    gpurma_dev_chan_put_packets(to, off, src, bytes, (uint32_t)i + 1));
        break;
    case OP_PUT_VALUE: {
        uint64_t v = 0;
        memcpy(&v, src, bytes);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put_value(to, off, v, bytes));
        break;
    }
    }
    if (signal_after)
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_signal(to, SIG_DATA, GPURMA_SIGNAL_ADD, 1));
}

static void receive_round(gpurma_dev_chan_t back, gpurma_dev_chan_t self, uint64_t i)
{
    int op;
    size_t bytes, off;
    round_shape(i, &op, &bytes, &off);
    t_fill(want, bytes, t_seed(DEV_CHAN_DATA, (uint64_t)prev_rank, i));
    if (op_is_packets(op)) {
        int psize = op == OP_PACKETS8 ? 8 : 16;
        size_t span = psize == 8 ? gpurma_dev_packet8_bytes(bytes) : gpurma_dev_packet16_bytes(bytes);
        memset(dst, T_POISON, bytes + 8);
        if (psize == 8) /* the channel form; the window form below */
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_chan_read_packets(self, off, dst, bytes, (uint32_t)i + 1));
        else
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_read_packets16(dw, off, dst, bytes, (uint32_t)i + 1));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_DATA, GPURMA_CMP_EQ, i + 1));
        t_verify(dst, want, bytes, "packets through a channel", prev_rank, off);
        t_verify_fill(dst + bytes, T_POISON, 8, "past the packets' payload", prev_rank, off);
        t_verify_fill(mem + off - 64, T_POISON, 64, "below the packets", prev_rank, off - 64);
        t_verify_fill(mem + off + span, T_POISON, 64, "above the packets", prev_rank, off + span);
        memset(mem + off, T_POISON, span);
    } else {
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_DATA, GPURMA_CMP_EQ, i + 1));
        static const char *names[NOPS] = {"chan_put then chan_signal", "chan_put_signal",
                                          "chan_put_coop", "chan_put_signal_coop",
                                          "chan_put_counted", "chan_put then chan_flush",
                                          "", "", "chan_put_value"};
        t_verify(mem + off, want, bytes, names[op], prev_rank, off);
        t_verify_fill(mem + off - 64, T_POISON, 64, names[op], prev_rank, off - 64);
        t_verify_fill(mem + off + bytes, T_POISON, 64, names[op], prev_rank, off + bytes);
        memset(mem + off, T_POISON, bytes);
    }
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_signal(back, SIG_ACK, GPURMA_SIGNAL_ADD, 1));
}

static void ring_rounds(void)
{
    /* Made once, outside the loop, as a kernel would. */
    gpurma_dev_chan_t to = gpurma_dev_win_chan(dw, next_rank);
    gpurma_dev_chan_t back = gpurma_dev_win_chan(dw, prev_rank);
    gpurma_dev_chan_t self = gpurma_dev_win_chan(dw, t_rank);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_status(to));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_status(back));
    const uint64_t rounds = (uint64_t)NOPS * NCLASSES;
    for (uint64_t i = 0; i < rounds; i++) {
        /* The previous message to next has been read and its area poisoned again. */
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_ACK, GPURMA_CMP_GE, i));
        send_round(to, i);
        receive_round(back, self, i);
    }
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, SIG_ACK, GPURMA_CMP_EQ, rounds));
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(mem, T_POISON, RING_LEN, "ring area after the rounds", t_rank, 0);
    CHECK(gpurma_barrier(t_world));
}

/* ------------------------------------------------- 2. get and atomics */

static void gets_and_atomics(void)
{
    /* Every rank's ring area holds its own random bytes. */
    t_fill(mem, RING_LEN, t_seed(DEV_CHAN_DATA + 1, (uint64_t)t_rank, 0));
    t_fill(want, RING_LEN, t_seed(DEV_CHAN_DATA + 1, (uint64_t)next_rank, 0));
    CHECK(gpurma_barrier(t_world));
    gpurma_dev_chan_t from = gpurma_dev_win_chan(dw, next_rank);
    for (size_t k = 0; k < 2 * NCLASSES; k++) {
        size_t bytes = size_classes[k % NCLASSES], off = 1 + (k * 977) % 5000;
        memset(dst, 0x3C, bytes + 16);
        if (k < NCLASSES) {
            EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_get(from, dst + 3, off, bytes));
        } else {
            job = (struct team_job){from, -1, off, bytes, 0};
            run_team();
        }
        const char *what = k < NCLASSES ? "chan_get" : "chan_get_coop";
        t_verify_fill(dst, 0x3C, 3, what, next_rank, off);
        t_verify(dst + 3, want + off, bytes, what, next_rank, off);
        t_verify_fill(dst + 3 + bytes, 0x3C, 13, what, next_rank, off + bytes);
    }
    CHECK(gpurma_barrier(t_world));
    memset(mem, T_POISON, RING_LEN);

    /* Atomics: add, then compare-swap and swap what was added. */
    uint64_t old = 1;
    EXPECT_CODE(GPURMA_SUCCESS,
                gpurma_dev_chan_atomic_fetch_add(from, OFF_ATOMIC, (uint64_t)t_rank + 1, &old));
    T_ASSERT(old == 0, "chan_atomic_fetch_add saw %" PRIu64 ", expected 0", old);
    CHECK(gpurma_barrier(t_world));
    uint64_t v;
    memcpy(&v, mem + OFF_ATOMIC, 8);
    T_ASSERT(v == (uint64_t)prev_rank + 1, "slot after fetch_add: %" PRIu64, v);
    CHECK(gpurma_barrier(t_world));
    EXPECT_CODE(GPURMA_SUCCESS,
                gpurma_dev_chan_atomic_compare_swap(from, OFF_ATOMIC, 999, 5, &old)); /* fails */
    T_ASSERT(old == (uint64_t)t_rank + 1, "failed compare_swap saw %" PRIu64, old);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_atomic_compare_swap(
                                    from, OFF_ATOMIC, (uint64_t)t_rank + 1,
                                    1000 + (uint64_t)t_rank, &old));
    T_ASSERT(old == (uint64_t)t_rank + 1, "compare_swap saw %" PRIu64, old);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_atomic_swap(from, OFF_ATOMIC + 8, 7, &old));
    T_ASSERT(old == 0, "chan_atomic_swap saw %" PRIu64, old);
    CHECK(gpurma_barrier(t_world));
    memcpy(&v, mem + OFF_ATOMIC, 8);
    T_ASSERT(v == 1000 + (uint64_t)prev_rank, "slot after compare_swap: %" PRIu64, v);
    memcpy(&v, mem + OFF_ATOMIC + 8, 8);
    T_ASSERT(v == 7, "slot after swap: %" PRIu64, v);
    CHECK(gpurma_barrier(t_world));
}

/* --------------------------------------------- 3. the host-call path */

static void created_window(void)
{
    const size_t len = 80000, bytes = 70001, off = 11;
    unsigned char *user = t_malloc(len);
    memset(user, T_POISON, len);
    gpurma_win_t cwin;
    CHECK(gpurma_win_create(t_world, user, len, NULL, &cwin));
    gpurma_dev_win_t cw;
    CHECK(gpurma_win_device(cwin, &cw));
    gpurma_dev_chan_t to = gpurma_dev_win_chan(cw, next_rank);
    CHECK(gpurma_barrier(t_world));
    t_fill(src, bytes, t_seed(DEV_CHAN_DATA + 2, (uint64_t)t_rank, 0));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put_signal(to, off, src, bytes, 0,
                                                           GPURMA_SIGNAL_ADD, 1));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(cw, 0, GPURMA_CMP_EQ, 1));
    t_fill(want, bytes, t_seed(DEV_CHAN_DATA + 2, (uint64_t)prev_rank, 0));
    t_verify_window(user, len, off, want, bytes, "chan_put_signal into a created window",
                    prev_rank);
    CHECK(gpurma_barrier(t_world));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_put_value(to, 70016, 0xCAFEF00Du, 4));
    uint64_t old = 0;
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_atomic_swap(to, 70024, 9, &old));
    T_ASSERT(old == 0xA5A5A5A5A5A5A5A5ull, "chan swap on a created window saw %#" PRIx64, old);
    memset(dst, 0x3C, 80);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_get(to, dst + 1, off + 5, 64));
    t_verify(dst + 1, src + 5, 64, "chan_get from a created window", next_rank, off + 5);
    t_verify_fill(dst + 65, 0x3C, 15, "past chan_get from a created window", next_rank, off + 69);
    CHECK(gpurma_barrier(t_world));
    uint32_t v4;
    uint64_t v8;
    memcpy(&v4, user + 70016, 4);
    memcpy(&v8, user + 70024, 8);
    T_ASSERT(v4 == 0xCAFEF00Du && v8 == 9, "created window: put_value %#x, swap %" PRIu64, v4, v8);
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&cwin));
    free(user);
}

/* ------------------------------------------------ 4. refused channels */

/* Every operation of channel c returns want and writes nothing. */
static void refused_everywhere(gpurma_dev_chan_t c, gpurma_status_t want_rc, const char *what)
{
    unsigned char buf[32];
    memset(buf, 0x11, sizeof(buf));
    uint64_t old = 0x77;
    T_ASSERT(gpurma_dev_chan_status(c) == want_rc, "%s: chan_status %d, expected %d", what,
             (int)gpurma_dev_chan_status(c), (int)want_rc);
    EXPECT_CODE(want_rc, gpurma_dev_chan_put(c, 0, buf, 8));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_coop(c, 0, buf, 8, 0, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_get(c, buf, 0, 8));
    EXPECT_CODE(want_rc, gpurma_dev_chan_get_coop(c, buf, 0, 8, 0, 2));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_value(c, 0, 1, 8));
    EXPECT_CODE(want_rc, gpurma_dev_chan_signal(c, 0, GPURMA_SIGNAL_ADD, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_signal(c, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1));
    EXPECT_CODE(want_rc,
                gpurma_dev_chan_put_signal_coop(c, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1, 1, 2));
    EXPECT_CODE(want_rc, gpurma_dev_chan_flush(c));
    EXPECT_CODE(want_rc, gpurma_dev_chan_atomic_fetch_add(c, 0, 1, &old));
    EXPECT_CODE(want_rc, gpurma_dev_chan_atomic_swap(c, 0, 1, &old));
    EXPECT_CODE(want_rc, gpurma_dev_chan_atomic_compare_swap(c, 0, 0, 1, &old));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_counted(c, 0, buf, 8, 0));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_packets(c, 0, buf, 8, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_packets_coop(c, 0, buf, 8, 1, 0, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_packets16(c, 0, buf, 8, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_put_packets16_coop(c, 0, buf, 8, 1, 0, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_read_packets(c, 0, buf, 8, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_read_packets_coop(c, 0, buf, 8, 1, 0, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_read_packets16(c, 0, buf, 8, 1));
    EXPECT_CODE(want_rc, gpurma_dev_chan_read_packets16_coop(c, 0, buf, 8, 1, 0, 1));
    T_ASSERT(old == 0x77, "%s: a refused atomic wrote its old value", what);
    t_verify_fill(buf, 0x11, sizeof(buf), "a refused chan_get's destination", -1, 0);
}

static void refused_channels(void)
{
    const int bad_peers[] = {-1, -2, t_size, t_size + 5, INT_MIN, INT_MAX, GPURMA_ALL_PEERS};
    for (size_t i = 0; i < sizeof(bad_peers) / sizeof(bad_peers[0]); i++) {
        gpurma_dev_chan_t c = gpurma_dev_win_chan(dw, bad_peers[i]);
        refused_everywhere(c, GPURMA_ERR_INVALID_ARG, "channel for a bad peer");
    }
    gpurma_dev_chan_t zeroed;
    memset(&zeroed, 0, sizeof(zeroed));
    refused_everywhere(zeroed, GPURMA_ERR_INVALID_ARG, "zeroed channel");
    gpurma_dev_win_t garbled = dw;
    garbled.magic ^= 1;
    refused_everywhere(gpurma_dev_win_chan(garbled, next_rank), GPURMA_ERR_INVALID_ARG,
                       "channel of a garbled handle");

    /* Bad arguments on a good channel: each refused with its own code. */
    gpurma_dev_chan_t c = gpurma_dev_win_chan(dw, next_rank);
    unsigned char buf[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    uint64_t old;
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_chan_put(c, WIN_LEN - 3, buf, 4));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_chan_put(c, SIZE_MAX, buf, 2));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_chan_get(c, buf, WIN_LEN, 1));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_chan_put_signal(c, WIN_LEN - 1, buf, 2, 0,
                                                                     GPURMA_SIGNAL_SET, 9));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_chan_put_packets(c, WIN_LEN - 8, buf, 5, 1));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_chan_put_packets16(c, 8, buf, SIZE_MAX - 3, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_chan_put(c, 0, NULL, 4));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_chan_put_coop(c, 0, buf, 4, 3, 3));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_chan_put_value(c, 0, 1, 3));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_chan_signal(c, gpurma_win_num_signals(win), GPURMA_SIGNAL_ADD, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_chan_put_signal(c, 0, buf, 8, 0, (gpurma_signal_op_t)7, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_chan_put_counted(c, 0, buf, 8, gpurma_win_num_counters(win)));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_chan_put_counted(c, 0, buf, 8, UINT32_MAX));
    if (t_size > 1) /* packets are read through the channel to oneself */
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_chan_read_packets(c, 0, buf, 8, 1));
    gpurma_dev_chan_t self = gpurma_dev_win_chan(dw, t_rank);
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_chan_read_packets(self, WIN_LEN, buf, 1, 1));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_chan_read_packets16(self, 8, buf, 1, 1));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_chan_read_packets_coop(self, 0, buf, 8, 1, 2, 2));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_chan_put_value(c, 2, 1, 4));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_chan_atomic_fetch_add(c, 12, 1, &old));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_chan_put_packets(c, 4, buf, 4, 1));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_chan_put_packets16_coop(c, 8, buf, 4, 1, 0, 1));

    CHECK(gpurma_barrier(t_world));
    t_verify_fill(mem, T_POISON, RING_LEN, "window after refused channel calls", t_rank, 0);
    uint64_t v[2];
    memcpy(v, mem + OFF_ATOMIC, sizeof(v));
    T_ASSERT(v[0] == 1000 + (uint64_t)prev_rank && v[1] == 7,
             "atomic slots changed by refused calls: %" PRIu64 " %" PRIu64, v[0], v[1]);
    const uint64_t rounds = (uint64_t)NOPS * NCLASSES;
    T_ASSERT(gpurma_dev_signal_read(dw, SIG_DATA) == rounds &&
                 gpurma_dev_signal_read(dw, SIG_ACK) == rounds,
             "signals written by refused calls: %" PRIu64 " %" PRIu64,
             gpurma_dev_signal_read(dw, SIG_DATA), gpurma_dev_signal_read(dw, SIG_ACK));

    /* A channel kept past its window's free. */
    gpurma_win_t fw;
    void *fbase;
    CHECK(gpurma_win_allocate(t_world, 256, NULL, &fbase, &fw));
    gpurma_dev_win_t fd;
    CHECK(gpurma_win_device(fw, &fd));
    gpurma_dev_chan_t kept = gpurma_dev_win_chan(fd, next_rank);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_chan_status(kept));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&fw));
    refused_everywhere(kept, GPURMA_ERR_FREED, "channel of a freed window");
    refused_everywhere(gpurma_dev_win_chan(fd, next_rank), GPURMA_ERR_FREED,
                       "channel made from a freed window's handle");
    CHECK(gpurma_barrier(t_world));
}

int main(void)
{
    t_init("test_dev_chan", 0);
    next_rank = (t_rank + 1) % t_size;
    prev_rank = (t_rank - 1 + t_size) % t_size;
    void *base;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, &base, &win));
    CHECK(gpurma_win_device(win, &dw));
    if (gpurma_win_num_signals(win) < 3 || gpurma_win_num_counters(win) <= COUNTER)
        T_FAIL("window with %u signals, %u counters", gpurma_win_num_signals(win),
               gpurma_win_num_counters(win));
    mem = base;
    memset(mem, T_POISON, RING_LEN);
    memset(mem + OFF_ATOMIC, 0, WIN_LEN - OFF_ATOMIC);
    src = t_malloc(RING_LEN);
    dst = t_malloc(RING_LEN + 16);
    want = t_malloc(RING_LEN);
    CHECK(gpurma_barrier(t_world));

    ring_rounds();
    gets_and_atomics();
    created_window();
    refused_channels();

    CHECK(gpurma_win_free(&win));
    free(src);
    free(dst);
    free(want);
    char detail[96];
    snprintf(detail, sizeof(detail), "%d rounds of %d channel operations",
             (int)(NOPS * NCLASSES), NOPS);
    return t_finish(detail);
}
