/*
 * test_threads.c - what the README promises about threads, with exact
 * results: NT threads per rank (default 8) make their calls at the same time.
 *
 * 1. One window shared by every thread. Thread t of each rank runs a ring of
 *    its own: in round r it sends a message of random size, offset and bytes
 *    to rank me+1+r, into the region of the target's window that belongs to
 *    (origin, t), through one of ten ways (host put + flush + signal,
 *    put_signal + flush(ALL), counted put + counter_wait, pieces + fence,
 *    put_value pieces + quiet, put_signal_counted, and the device API's
 *    dev_put + dev_fence + dev_signal, dev_put_signal + dev_flush,
 *    dev_put_counted + dev_counter_wait, dev_put_coop + dev_quiet), scribbles
 *    over its source as soon as the call says the source is free, and
 *    receives the message of rank me-1-r: wait_until (host or device) on the
 *    signal of (origin, t), checks the region byte for byte with the poison
 *    around it, poisons it again and acknowledges. Each round every thread
 *    also adds a random value to one signal slot of a peer (SIG_TOTAL, hit by
 *    every thread of every rank), gets random ranges of a peer's read-only
 *    area, takes a ticket with fetch_add (the old values of a slot, over all
 *    threads and ranks, must be exactly 0..N-1: checked by count, sum and
 *    sum of squares), swaps a slot of its own on a peer (each old value is
 *    the one it swapped in last), and now and then increments a shared slot
 *    with a compare_swap loop. Some rounds fail a call on purpose and check
 *    that the thread's error message is its own.
 * 2. Collectives on different teams at the same time: thread t owns team t
 *    (gpurma_team_split of the world, same color, made before the threads
 *    start, in the same order on every rank). Every few rounds it allocates
 *    a window on it (asymmetric sizes; some forced through the port engine
 *    with 1-4 proxy contexts, which start them lazily from several threads),
 *    sends a message around the team, does fetch_adds on team rank 0,
 *    barriers, checks and frees it; every other time also a window made with
 *    win_create on malloc'd memory; once a split of team t and its free.
 * 3. At the end (threads joined, barrier): every signal, counter, atomic slot
 *    and the whole window hold exactly what the traffic implies.
 *
 * Bounded: a watchdog ends the rank after GPURMA_TEST_THREAD_DEADLINE_S
 * (default 100) seconds, printing where each thread was. GPURMA_TEST_THREADS
 * (default 8) and GPURMA_TEST_THREAD_ROUNDS (default 512 on one node, 256
 * with more than 4 ranks, 32 across nodes) change the thread and round counts.
 */
#include <pthread.h>
#include <sched.h>

#include "common.h"

#include "gpurma_device.h"

enum { P_MSG = 300, P_DATA, P_GET, P_GET_RANGE, P_TOTAL, P_SWAP, P_TEAM, P_SCRIBBLE };

#define MAX_THREADS 16
#define REGION      (32u * 1024u)   /* per (origin, thread) in every window */
#define GET_AREA    (64u * 1024u)   /* read-only random bytes, for gets     */
#define TEAM_EVERY  16              /* rounds between team window cycles   */
#define NVARIANTS   10

static int nt = 8, rounds = 64;
static gpurma_win_t win;
static gpurma_dev_win_t dw;
static unsigned char *mem;
static size_t data_off, atom_off, win_len;
static gpurma_team_t teams[MAX_THREADS];
static uint64_t counted[MAX_THREADS]; /* counted puts of thread t (its counter) */
/* Where each thread is, for the watchdog's message. */
static int progress_round[MAX_THREADS], progress_step[MAX_THREADS];
static void at_step(int t, int step)
{
    __atomic_store_n(&progress_step[t], step, __ATOMIC_RELAXED);
}
static int all_done;

/* Atomic slots of a window, after the traffic regions. */
enum { A_TICKET = 0, A_OLDSUM, A_OLDSQ, A_CAS, A_SWAP0 };

static size_t region_off(int origin, int t)
{
    return data_off + ((size_t)origin * (size_t)nt + (size_t)t) * REGION;
}
static uint32_t sig_msg(int origin, int t) { return (uint32_t)(origin * nt + t); }
static uint32_t sig_ack(int t) { return (uint32_t)(t_size * nt + t); }
static uint32_t sig_total(void) { return (uint32_t)(t_size * nt + nt); }
static size_t atom(int slot) { return atom_off + 8 * (size_t)slot; }

/* ------------------------------------------------------------ the rounds */

typedef struct {
    size_t bytes, off;
    int variant;
} shape_t;

/* What (origin, t) sends in round r: a function of the three, so that the
 * receiver regenerates it. */
static shape_t msg_shape(int origin, int t, int r)
{
    uint64_t s = t_seed(P_MSG, (uint64_t)(origin * nt + t), (uint64_t)r);
    static const size_t caps[] = {8, 64, 1024, 9000, REGION};
    shape_t m;
    m.variant = (int)t_below(&s, NVARIANTS);
    size_t cap = caps[t_below(&s, 5)];
    if (m.variant == 4) /* put_value pieces: small messages */
        cap = 64;
    m.bytes = 1 + t_below(&s, cap);
    m.off = t_below(&s, REGION - m.bytes + 1);
    return m;
}

static int target_of(int me, int r) { return (me + 1 + r) % t_size; }
static int origin_of(int me, int r) { return ((me - 1 - r) % t_size + t_size) % t_size; }
static int ticket_target(int me, int t, int r) { return (me + r + t) % t_size; }
static int swap_target(int me, int t, int r) { return (me + 2 * r + t + 1) % t_size; }
static int cas_target(int me, int t, int r) { return (me + r / 4 + t) % t_size; }
static int cas_round(int r) { return r % 4 == 3; }
static uint64_t total_add(int origin, int t, int r)
{
    uint64_t s = t_seed(P_TOTAL, (uint64_t)(origin * nt + t), (uint64_t)r);
    return 1 + t_below(&s, 1000);
}
static uint64_t swap_value(int origin, int t, int r)
{
    uint64_t s = t_seed(P_SWAP, (uint64_t)(origin * nt + t), (uint64_t)r);
    return t_splitmix64(&s) | 1; /* never 0, the slot's first value */
}

/* Writes src[0..bytes) at (peer, off) in naturally aligned 8/4/2/1-byte
 * stores, host or device API. */
static void put_values(int peer, size_t off, const unsigned char *src, size_t bytes, int dev)
{
    for (size_t i = 0; i < bytes;) {
        size_t n = 8;
        while (n > 1 && (((off + i) % n) || i + n > bytes))
            n /= 2;
        uint64_t v = 0;
        memcpy(&v, src + i, n);
        if (dev)
            EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_value(dw, peer, off + i, v, n));
        else
            CHECK(gpurma_put_value(win, peer, off + i, v, n));
        i += n;
    }
}

/* Sends the message of round r to target; src holds its bytes. Returns with
 * the signal issued; where the call says the source is free again, the
 * source is overwritten at once (the target must still see the message). */
static void send_message(int t, int r, int target, unsigned char *src, uint64_t count)
{
    shape_t m = msg_shape(t_rank, t, r);
    size_t dst = region_off(t_rank, t) + m.off;
    uint32_t sig = sig_msg(t_rank, t);
    uint32_t ctr = (uint32_t)t;
    uint64_t scribble = t_seed(P_SCRIBBLE, (uint64_t)(t_rank * nt + t), (uint64_t)r);
    switch (m.variant) {
    case 0:
        CHECK(gpurma_put(win, target, dst, src, m.bytes));
        CHECK(gpurma_flush(win, target));
        t_fill(src, m.bytes, scribble);
        CHECK(gpurma_signal(win, target, sig, GPURMA_SIGNAL_ADD, 1));
        break;
    case 1:
        CHECK(gpurma_put_signal(win, target, dst, src, m.bytes, sig, GPURMA_SIGNAL_ADD, 1));
        CHECK(gpurma_flush(win, GPURMA_ALL_PEERS));
        t_fill(src, m.bytes, scribble);
        break;
    case 2:
        CHECK(gpurma_put_counted(win, target, dst, src, m.bytes, ctr));
        CHECK(gpurma_counter_wait(win, ctr, ++counted[t]));
        t_fill(src, m.bytes, scribble);
        CHECK(gpurma_signal(win, target, sig, GPURMA_SIGNAL_SET, count));
        break;
    case 3: { /* three pieces, fenced before the signal; src untouched until the ack */
        size_t a = m.bytes / 3, b = 2 * m.bytes / 3;
        CHECK(gpurma_put(win, target, dst + b, src + b, m.bytes - b));
        CHECK(gpurma_put(win, target, dst, src, a));
        CHECK(gpurma_put(win, target, dst + a, src + a, b - a));
        CHECK(gpurma_fence(win));
        CHECK(gpurma_signal(win, target, sig, GPURMA_SIGNAL_ADD, 1));
        break;
    }
    case 4:
        put_values(target, dst, src, m.bytes, r % 2);
        CHECK(gpurma_quiet(win));
        CHECK(gpurma_signal(win, target, sig, GPURMA_SIGNAL_SET, count));
        break;
    case 5:
        CHECK(gpurma_put_signal_counted(win, target, dst, src, m.bytes, sig, GPURMA_SIGNAL_SET,
                                        count, ctr));
        CHECK(gpurma_counter_wait(win, ctr, ++counted[t]));
        t_fill(src, m.bytes, scribble);
        break;
    case 6: /* src untouched until the ack */
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put(dw, target, dst, src, m.bytes));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_fence(dw));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_signal(dw, target, sig, GPURMA_SIGNAL_ADD, 1));
        break;
    case 7:
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_signal(dw, target, dst, src, m.bytes, sig,
                                                          GPURMA_SIGNAL_ADD, 1));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_flush(dw, target));
        t_fill(src, m.bytes, scribble);
        break;
    case 8:
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_counted(dw, target, dst, src, m.bytes, ctr));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_counter_wait(dw, ctr, ++counted[t]));
        t_fill(src, m.bytes, scribble);
        EXPECT_CODE(GPURMA_SUCCESS,
                    gpurma_dev_signal(dw, target, sig, GPURMA_SIGNAL_SET, count));
        break;
    default: /* one thread plays both members of a cooperative pair */
        for (unsigned tid = 0; tid < 2; tid++)
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_put_coop(dw, target, dst, src, m.bytes, tid, 2));
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_quiet(dw));
        t_fill(src, m.bytes, scribble);
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_signal(dw, target, sig, GPURMA_SIGNAL_ADD, 1));
        break;
    }
}

/* The message of round r from origin: wait for its signal, check it and the
 * poison around it, poison it again, acknowledge. */
static void receive_message(int t, int r, int origin, uint64_t count, unsigned char *want)
{
    uint32_t sig = sig_msg(origin, t);
    if (r % 2)
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until(dw, sig, GPURMA_CMP_GE, count));
    else
        CHECK(gpurma_wait_until(win, sig, GPURMA_CMP_GE, count));
    uint64_t v;
    CHECK(gpurma_signal_read(win, sig, &v));
    T_ASSERT(v == count, "thread %d round %d: signal of (rank %d, thread %d) is %" PRIu64
             ", expected exactly %" PRIu64, t, r, origin, t, v, count);
    shape_t m = msg_shape(origin, t, r);
    t_fill(want, m.bytes, t_seed(P_DATA, (uint64_t)(origin * nt + t), (uint64_t)r));
    unsigned char *region = mem + region_off(origin, t);
    t_verify_window(region, REGION, m.off, want, m.bytes, "message in its region", origin);
    memset(region + m.off, T_POISON, m.bytes);
    if (r % 3 == 1)
        EXPECT_CODE(GPURMA_SUCCESS,
                    gpurma_dev_signal(dw, origin, sig_ack(t), GPURMA_SIGNAL_ADD, 1));
    else
        CHECK(gpurma_signal(win, origin, sig_ack(t), GPURMA_SIGNAL_ADD, 1));
}

/* A random range of a random peer's read-only area, with poison around it. */
static void get_check(int t, int r, unsigned char *buf, unsigned char *want)
{
    uint64_t s = t_seed(P_GET_RANGE, (uint64_t)(t_rank * nt + t), (uint64_t)r);
    int peer = (int)t_below(&s, (uint64_t)t_size);
    size_t len = 1 + t_below(&s, r % 5 ? 512 : GET_AREA);
    size_t off = t_below(&s, GET_AREA - len + 1);
    memset(buf, 0x3C, len + 16);
    if (r % 2)
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_get(dw, peer, buf + 8, off, len));
    else
        CHECK(gpurma_get(win, peer, buf + 8, off, len));
    t_fill(want, GET_AREA, t_seed(P_GET, (uint64_t)peer, 0));
    t_verify_fill(buf, 0x3C, 8, "get: below", peer, off);
    t_verify(buf + 8, want + off, len, "get of the read-only area", peer, off);
    t_verify_fill(buf + 8 + len, 0x3C, 8, "get: above", peer, off + len);
}

typedef struct {
    uint64_t sum, sq; /* of the old values of the tickets taken from one rank */
} tickets_t;

static void atomics(int t, int r, tickets_t *tk, uint64_t *swapped)
{
    int p = ticket_target(t_rank, t, r);
    uint64_t old = UINT64_MAX;
    if (r % 2)
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_atomic_fetch_add(dw, p, atom(A_TICKET), 1, &old));
    else
        CHECK(gpurma_atomic_fetch_add(win, p, atom(A_TICKET), 1, &old));
    tk[p].sum += old;
    tk[p].sq += old * old;

    /* A slot of this thread's own on the peer: each old value is the last
     * value this thread swapped in there. */
    p = swap_target(t_rank, t, r);
    uint64_t v = swap_value(t_rank, t, r);
    size_t slot = atom(A_SWAP0 + t_rank * nt + t);
    if (r % 3 == 2)
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_atomic_swap(dw, p, slot, v, &old));
    else
        CHECK(gpurma_atomic_swap(win, p, slot, v, &old));
    T_ASSERT(old == swapped[p], "thread %d round %d: swap on rank %d returned %#" PRIx64
             ", the slot held %#" PRIx64, t, r, p, old, swapped[p]);
    swapped[p] = v;

    if (cas_round(r)) { /* one increment of a slot every thread increments */
        p = cas_target(t_rank, t, r);
        uint64_t guess = 0;
        for (int tries = 0;; tries++) {
            if (r % 8 == 7)
                EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_atomic_compare_swap(
                                                dw, p, atom(A_CAS), guess, guess + 1, &old));
            else
                CHECK(gpurma_atomic_compare_swap(win, p, atom(A_CAS), guess, guess + 1, &old));
            if (old == guess)
                break;
            T_ASSERT(old > guess, "compare_swap counter went back: %" PRIu64 " after %" PRIu64,
                     old, guess);
            guess = old;
            if (tries > 100000)
                T_FAIL("thread %d: compare_swap never succeeded", t);
        }
    }
}

/* This thread's error message is its own, whatever the others do: the
 * peer named by the failing call is unique to (rank, thread, round). */
static void own_message(int t, int r)
{
    int bad = t_size + 1 + (t_rank * nt + t) * 100000 + r;
    unsigned char b = 1;
    int rc = gpurma_put(win, bad, 0, &b, 1);
    T_ASSERT(rc == GPURMA_ERR_INVALID_ARG, "put to peer %d returned %d", bad, rc);
    sched_yield();
    uint64_t v;
    CHECK(gpurma_signal_read(win, 0, &v)); /* a call that succeeds keeps the message */
    char needle[48];
    snprintf(needle, sizeof(needle), "to peer %d:", bad);
    T_ASSERT(strstr(gpurma_last_error_message(t_ctx), needle),
             "thread %d: message \"%s\" is not about its own call (peer %d)", t,
             gpurma_last_error_message(t_ctx), bad);
}

/* ------------------------------------------------- windows on own teams */

static void team_cycle(int t, int k)
{
    gpurma_team_t team = teams[t];
    int n = gpurma_team_size(team), tr = gpurma_team_rank(team);
    int next = (tr + 1) % n, prev = (tr - 1 + n) % n;
    int wnext = gpurma_team_world_rank(team, next), wprev = gpurma_team_world_rank(team, prev);
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_NUM_SIGNALS | GPURMA_WIN_FIELD_CONTEXTS;
    p.num_signals = 2;
    p.contexts = 1 + (uint32_t)((t + k) % 4);
    if ((t + k) % 2) {
        p.field_mask |= GPURMA_WIN_FIELD_ENGINE;
        p.engine = GPURMA_ENGINE_PORT;
    }
    size_t len = 4096 + 64 * (size_t)tr, atom_at = 4088; /* rank 0 has 4096 bytes */
    unsigned char *base;
    gpurma_win_t w;
    at_step(t, 10);
    CHECK(gpurma_win_allocate(team, len, &p, (void **)&base, &w));
    T_ASSERT(gpurma_win_size(w, next) == 4096 + 64 * (size_t)next, "team window size");
    memset(base, T_POISON, len);
    CHECK(gpurma_barrier(team));

    at_step(t, 11);
    unsigned char src[4000], want[4000];
    size_t bytes = 1 + (size_t)(k * 131 + t * 17) % 3000, off = (size_t)(k * 7 + t) % 900;
    t_fill(src, bytes, t_seed(P_TEAM, (uint64_t)(t_rank * nt + t), (uint64_t)k));
    CHECK(gpurma_put_signal(w, next, off, src, bytes, 0, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_atomic_fetch_add(w, 0, atom_at, (uint64_t)t + 1, NULL));
    CHECK(gpurma_wait_until(w, 0, GPURMA_CMP_EQ, 1));
    t_fill(want, bytes, t_seed(P_TEAM, (uint64_t)(wprev * nt + t), (uint64_t)k));
    t_verify_fill(base, T_POISON, off, "team window: below", wprev, 0);
    t_verify(base + off, want, bytes, "team window message", wprev, off);
    t_verify_fill(base + off + bytes, T_POISON, atom_at - off - bytes, "team window: above",
                  wprev, off + bytes);
    at_step(t, 12);
    CHECK(gpurma_barrier(team));
    if (tr == 0) {
        uint64_t v, poison;
        memset(&poison, T_POISON, 8);
        memcpy(&v, base + atom_at, 8);
        T_ASSERT(v == poison + (uint64_t)n * ((uint64_t)t + 1),
                 "team window of thread %d: fetch_add total %#" PRIx64, t, v);
    }
    at_step(t, 13);
    CHECK(gpurma_win_free(&w));
    T_ASSERT(w == NULL, "win_free left the handle");

    if (k % 2 == 0) { /* a window on malloc'd memory */
        at_step(t, 14);
        size_t clen = 2048 + 8 * (size_t)tr;
        unsigned char *user = t_malloc(clen);
        memset(user, T_POISON, clen);
        gpurma_win_t cw;
        p.field_mask &= ~(uint64_t)GPURMA_WIN_FIELD_CONTEXTS; /* the default */
        CHECK(gpurma_win_create(team, user, clen, &p, &cw));
        CHECK(gpurma_barrier(team));
        size_t cb = 1 + (bytes - 1) % 1500, coff = (size_t)(k + t) % 500;
        CHECK(gpurma_put(cw, next, coff, src, cb));
        CHECK(gpurma_fence(cw));
        CHECK(gpurma_signal(cw, next, 1, GPURMA_SIGNAL_ADD, 1));
        CHECK(gpurma_wait_until(cw, 1, GPURMA_CMP_EQ, 1));
        t_verify_window(user, clen, coff, want, cb, "created team window", wprev);
        unsigned char back[1500];
        CHECK(gpurma_get(cw, next, back, coff, cb));
        t_verify(back, src, cb, "get from a created team window", wnext, coff);
        CHECK(gpurma_barrier(team));
        CHECK(gpurma_win_free(&cw));
        free(user);
    }
    if (k == 0) { /* a split of this thread's team, and its free */
        at_step(t, 15);
        gpurma_team_t sub;
        CHECK(gpurma_team_split(team, tr % 2, -tr, &sub));
        int want_n = tr % 2 ? n / 2 : (n + 1) / 2;
        T_ASSERT(sub && gpurma_team_size(sub) == want_n, "split of team %d: size %d, want %d",
                 t, sub ? gpurma_team_size(sub) : -1, want_n);
        CHECK(gpurma_barrier(sub));
        CHECK(gpurma_team_free(&sub));
    }
}

/* ------------------------------------------------------------ the threads */

typedef struct {
    int t;
    tickets_t *tk;   /* [t_size] */
    uint64_t *swapped; /* [t_size] */
} thread_arg_t;

static void *worker(void *arg)
{
    thread_arg_t *a = arg;
    int t = a->t;
    unsigned char *src = t_malloc(REGION), *want = t_malloc(GET_AREA + 16);
    unsigned char *buf = t_malloc(GET_AREA + 16);
    uint64_t *sent = calloc((size_t)t_size, sizeof(uint64_t));
    uint64_t *received = calloc((size_t)t_size, sizeof(uint64_t));
    if (!sent || !received)
        T_FAIL("out of memory");
    for (int r = 0; r < rounds; r++) {
        __atomic_store_n(&progress_round[t], r, __ATOMIC_RELAXED);
        at_step(t, 1); /* waits until every earlier message of this thread was checked */
        if (r % 2)
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_wait_until(dw, sig_ack(t), GPURMA_CMP_GE, (uint64_t)r));
        else
            CHECK(gpurma_wait_until(win, sig_ack(t), GPURMA_CMP_GE, (uint64_t)r));
        at_step(t, 2);
        int target = target_of(t_rank, r);
        shape_t m = msg_shape(t_rank, t, r);
        t_fill(src, m.bytes, t_seed(P_DATA, (uint64_t)(t_rank * nt + t), (uint64_t)r));
        send_message(t, r, target, src, ++sent[target]);
        uint64_t add = total_add(t_rank, t, r);
        if (r % 2)
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_signal(dw, target, sig_total(), GPURMA_SIGNAL_ADD, add));
        else
            CHECK(gpurma_signal(win, target, sig_total(), GPURMA_SIGNAL_ADD, add));
        at_step(t, 3);
        int origin = origin_of(t_rank, r);
        receive_message(t, r, origin, ++received[origin], want);
        at_step(t, 4);
        get_check(t, r, buf, want);
        at_step(t, 5);
        atomics(t, r, a->tk, a->swapped);
        if (r % 8 == 5)
            own_message(t, r);
        if (r % TEAM_EVERY == TEAM_EVERY - 1)
            team_cycle(t, r / TEAM_EVERY);
    }
    at_step(t, 6);
    /* The tickets' old values, summed per rank where they were taken. */
    for (int p = 0; p < t_size; p++) {
        CHECK(gpurma_atomic_fetch_add(win, p, atom(A_OLDSUM), a->tk[p].sum, NULL));
        CHECK(gpurma_atomic_fetch_add(win, p, atom(A_OLDSQ), a->tk[p].sq, NULL));
    }
    CHECK(gpurma_quiet(win));
    at_step(t, 7);
    free(src);
    free(want);
    free(buf);
    free(sent);
    free(received);
    return NULL;
}

static void *watchdog(void *arg)
{
    double deadline = *(double *)arg;
    while (!__atomic_load_n(&all_done, __ATOMIC_ACQUIRE)) {
        if (t_now() > deadline) {
            fprintf(stderr, "FAIL %s: rank %d of %d: not finished after the deadline; threads:",
                    t_name, t_rank, t_size);
            for (int t = 0; t < nt; t++)
                fprintf(stderr, " %d:round %d step %d", t,
                        __atomic_load_n(&progress_round[t], __ATOMIC_RELAXED),
                        __atomic_load_n(&progress_step[t], __ATOMIC_RELAXED));
            fprintf(stderr, "\n");
            fflush(stderr);
            _exit(1);
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int env_int(const char *name, int def, int lo, int hi)
{
    const char *v = getenv(name);
    int x = v && *v ? atoi(v) : def;
    return x < lo ? lo : x > hi ? hi : x;
}

/* ------------------------------------------------------------ final checks */

static void final_checks(void)
{
    char what[96];
    /* Every message of every (origin, thread) arrived and was acknowledged. */
    for (int o = 0; o < t_size; o++) {
        uint64_t n = 0;
        for (int r = 0; r < rounds; r++)
            n += origin_of(t_rank, r) == o;
        for (int t = 0; t < nt; t++) {
            uint64_t v;
            CHECK(gpurma_signal_read(win, sig_msg(o, t), &v));
            T_ASSERT(v == n, "signal of (rank %d, thread %d): %" PRIu64 ", expected %" PRIu64, o,
                     t, v, n);
        }
    }
    for (int t = 0; t < nt; t++) {
        uint64_t v, c;
        CHECK(gpurma_signal_read(win, sig_ack(t), &v));
        T_ASSERT(v == (uint64_t)rounds, "acks of thread %d: %" PRIu64 ", expected %d", t, v,
                 rounds);
        CHECK(gpurma_counter_read(win, (uint32_t)t, &c));
        T_ASSERT(c == counted[t], "counter %d: %" PRIu64 ", expected %" PRIu64, t, c, counted[t]);
    }
    /* Sums over every thread of every rank, regenerated here. */
    uint64_t total = 0, tickets = 0, cas = 0;
    for (int o = 0; o < t_size; o++)
        for (int t = 0; t < nt; t++)
            for (int r = 0; r < rounds; r++) {
                if (target_of(o, r) == t_rank)
                    total += total_add(o, t, r);
                tickets += ticket_target(o, t, r) == t_rank;
                cas += cas_round(r) && cas_target(o, t, r) == t_rank;
            }
    uint64_t v;
    CHECK(gpurma_signal_read(win, sig_total(), &v));
    T_ASSERT(v == total, "signal ADDs of every thread: %" PRIu64 ", expected %" PRIu64, v, total);
    uint64_t sum = 0, sq = 0;
    for (uint64_t i = 0; i < tickets; i++) {
        sum += i;
        sq += i * i;
    }
    const uint64_t *slots = (const uint64_t *)(mem + atom_off);
    T_ASSERT(slots[A_TICKET] == tickets, "fetch_add tickets: %" PRIu64 ", expected %" PRIu64,
             slots[A_TICKET], tickets);
    T_ASSERT(slots[A_OLDSUM] == sum && slots[A_OLDSQ] == sq,
             "fetch_add old values are not 0..%" PRIu64 " once each (sum %" PRIu64 " / %" PRIu64
             ", squares %" PRIu64 " / %" PRIu64 ")",
             tickets - 1, slots[A_OLDSUM], sum, slots[A_OLDSQ], sq);
    T_ASSERT(slots[A_CAS] == cas, "compare_swap increments: %" PRIu64 ", expected %" PRIu64,
             slots[A_CAS], cas);
    for (int o = 0; o < t_size; o++)
        for (int t = 0; t < nt; t++) {
            uint64_t last = 0;
            for (int r = 0; r < rounds; r++)
                if (swap_target(o, t, r) == t_rank)
                    last = swap_value(o, t, r);
            T_ASSERT(slots[A_SWAP0 + o * nt + t] == last,
                     "swap slot of (rank %d, thread %d): %#" PRIx64 ", expected %#" PRIx64, o, t,
                     slots[A_SWAP0 + o * nt + t], last);
        }
    /* Every region was checked and poisoned again; the read-only area kept. */
    snprintf(what, sizeof(what), "traffic regions after %d rounds", rounds);
    t_verify_fill(mem + data_off, T_POISON, atom_off - data_off, what, t_rank, data_off);
    unsigned char *want = t_malloc(GET_AREA);
    t_fill(want, GET_AREA, t_seed(P_GET, (uint64_t)t_rank, 0));
    t_verify(mem, want, GET_AREA, "read-only area", t_rank, 0);
    free(want);
}

int main(void)
{
    t_init("test_threads", 0);
    nt = env_int("GPURMA_TEST_THREADS", 8, 1, MAX_THREADS);
    /* Across nodes every operation is a UCX round trip through a proxy: fewer
     * rounds keep the run short on a loaded 2-core machine. */
    int one_node = gpurma_team_size(gpurma_team_node(t_ctx)) == t_size;
    rounds = env_int("GPURMA_TEST_THREAD_ROUNDS", !one_node ? 32 : t_size > 4 ? 256 : 512, 1,
                     1000000);
    double deadline = t_now() + env_int("GPURMA_TEST_THREAD_DEADLINE_S", 100, 1, 100000);

    data_off = GET_AREA;
    atom_off = data_off + (size_t)t_size * (size_t)nt * REGION;
    win_len = atom_off + 8 * (size_t)(A_SWAP0 + t_size * nt);
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_NUM_SIGNALS | GPURMA_WIN_FIELD_NUM_COUNTERS;
    p.num_signals = (uint32_t)(t_size * nt + nt + 1);
    p.num_counters = (uint32_t)nt;
    CHECK(gpurma_win_allocate(t_world, win_len, &p, (void **)&mem, &win));
    CHECK(gpurma_win_device(win, &dw));
    t_fill(mem, GET_AREA, t_seed(P_GET, (uint64_t)t_rank, 0));
    memset(mem + data_off, T_POISON, atom_off - data_off);
    memset(mem + atom_off, 0, win_len - atom_off);
    /* One team per thread, made here in the same order on every rank. */
    for (int t = 0; t < nt; t++) {
        CHECK(gpurma_team_split(t_world, 0, t_rank, &teams[t]));
        T_ASSERT(gpurma_team_size(teams[t]) == t_size && gpurma_team_rank(teams[t]) == t_rank,
                 "team %d: rank %d of %d", t, gpurma_team_rank(teams[t]),
                 gpurma_team_size(teams[t]));
    }
    CHECK(gpurma_barrier(t_world));

    pthread_t th[MAX_THREADS], dog;
    thread_arg_t args[MAX_THREADS];
    tickets_t *tk = calloc((size_t)nt * (size_t)t_size, sizeof(*tk));
    uint64_t *swapped = calloc((size_t)nt * (size_t)t_size, sizeof(uint64_t));
    if (!tk || !swapped)
        T_FAIL("out of memory");
    if (pthread_create(&dog, NULL, watchdog, &deadline))
        T_FAIL("pthread_create failed");
    double t0 = t_now();
    for (int t = 0; t < nt; t++) {
        args[t] = (thread_arg_t){t, tk + (size_t)t * (size_t)t_size,
                                 swapped + (size_t)t * (size_t)t_size};
        if (pthread_create(&th[t], NULL, worker, &args[t]))
            T_FAIL("pthread_create failed");
    }
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    double t1 = t_now();
    /* The last round's messages were acknowledged after their senders left. */
    for (int t = 0; t < nt; t++)
        CHECK(gpurma_wait_until(win, sig_ack(t), GPURMA_CMP_EQ, (uint64_t)rounds));
    CHECK(gpurma_barrier(t_world));
    final_checks();
    CHECK(gpurma_barrier(t_world));
    for (int t = 0; t < nt; t++)
        CHECK(gpurma_team_free(&teams[t]));
    CHECK(gpurma_win_free(&win));
    __atomic_store_n(&all_done, 1, __ATOMIC_RELEASE);
    pthread_join(dog, NULL);
    free(tk);
    free(swapped);
    char detail[128];
    snprintf(detail, sizeof(detail), "%d threads x %d rounds in %.2f s (%d team cycles each)", nt,
             rounds, t1 - t0, rounds / TEAM_EVERY);
    return t_finish(detail);
}
