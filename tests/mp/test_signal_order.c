/*
 * test_signal_order.c - a put followed by a signal is visible when the
 * target observes the signal (the library's ordering rule), under stress.
 *
 * Ring: each round every rank sends a message of changing size and offset
 * to the next rank and signals it, in one of several ways (put + signal ADD,
 * put_signal SET, put_signal ADD, two puts + fence + signal SET, put + quiet
 * + signal ADD). The receiver waits (with a varying comparison), checks every
 * byte, re-poisons the range and returns a credit. Since the range is
 * re-poisoned before the sender may write again, a signal seen before its
 * data shows up as poison in the check.
 *
 * All-to-one: every rank puts into its own slot at rank 0 and adds 1 to one
 * shared signal; rank 0 waits for the exact count, checks all slots, then
 * releases everyone with a SET.
 */
#include "common.h"

enum { SIG_DATA = 0, SIG_ACK = 1, SIG_GATHER = 2, SIG_GO = 3 };
enum { RING_DATA = 10, GATHER_DATA = 11 };

#define RING_ROUNDS   5000
#define GATHER_ROUNDS 1000
#define RING_LEN      (128u << 10) /* receive area for the ring */
#define SLOT_LEN      4224         /* per-origin slot at rank 0 */
#define GUARD         64

static unsigned char *win, *src, *want;
static size_t win_len;

/* Mostly small messages, now and then a large one, always odd offsets too. */
static void ring_shape(uint64_t round, size_t *bytes, size_t *off)
{
    static const size_t classes[] = {1, 3, 8, 17, 64, 255, 1000, 4097, 16384, 65537, 100003};
    uint64_t s = t_seed(RING_DATA, 0xFFFF, round);
    size_t c = (size_t)t_below(&s, 100);
    size_t k = c < 60 ? c % 6 : c < 90 ? 6 + c % 3 : 9 + c % 2;
    *bytes = classes[k] + (size_t)t_below(&s, 4);
    *off = GUARD + (size_t)t_below(&s, RING_LEN - 2 * GUARD - *bytes);
}

static void ring(gpurma_win_t w)
{
    int next = (t_rank + 1) % t_size, prev = (t_rank - 1 + t_size) % t_size;
    for (uint64_t i = 0; i < RING_ROUNDS; i++) {
        size_t bytes, off;
        ring_shape(i, &bytes, &off);

        /* Send round i once the next rank has consumed round i-1. */
        CHECK(gpurma_wait_until(w, SIG_ACK, GPURMA_CMP_GE, i));
        t_fill(src, bytes, t_seed(RING_DATA, (uint64_t)t_rank, i));
        switch (i % 5) {
        case 0:
            CHECK(gpurma_put(w, next, off, src, bytes));
            CHECK(gpurma_signal(w, next, SIG_DATA, GPURMA_SIGNAL_ADD, 1));
            break;
        case 1:
            CHECK(gpurma_put_signal(w, next, off, src, bytes, SIG_DATA, GPURMA_SIGNAL_SET, i + 1));
            break;
        case 2:
            CHECK(gpurma_put_signal(w, next, off, src, bytes, SIG_DATA, GPURMA_SIGNAL_ADD, 1));
            break;
        case 3: /* the tail first: the fence must order both before the signal */
            CHECK(gpurma_put(w, next, off + bytes / 2, src + bytes / 2, bytes - bytes / 2));
            CHECK(gpurma_put(w, next, off, src, bytes / 2));
            CHECK(gpurma_fence(w));
            CHECK(gpurma_signal(w, next, SIG_DATA, GPURMA_SIGNAL_SET, i + 1));
            break;
        default:
            CHECK(gpurma_put(w, next, off, src, bytes));
            CHECK(gpurma_quiet(w));
            CHECK(gpurma_signal(w, next, SIG_DATA, GPURMA_SIGNAL_ADD, 1));
            break;
        }

        /* Receive round i: only prev writes SIG_DATA, so it is exactly i before. */
        static const gpurma_cmp_t cmps[] = {GPURMA_CMP_GE, GPURMA_CMP_EQ, GPURMA_CMP_GT,
                                            GPURMA_CMP_NE};
        gpurma_cmp_t cmp = cmps[i % 4];
        uint64_t ref = cmp == GPURMA_CMP_GT || cmp == GPURMA_CMP_NE ? i : i + 1;
        CHECK(gpurma_wait_until(w, SIG_DATA, cmp, ref));
        uint64_t v;
        CHECK(gpurma_signal_read(w, SIG_DATA, &v));
        T_ASSERT(v == i + 1, "round %" PRIu64 ": signal %d is %" PRIu64 ", expected %" PRIu64, i,
                 SIG_DATA, v, i + 1);
        t_fill(want, bytes, t_seed(RING_DATA, (uint64_t)prev, i));
        t_verify(win + off, want, bytes, "ring data after its signal", prev, off);
        t_verify_fill(win + off - GUARD, T_POISON, GUARD, "ring: below the message", prev,
                      off - GUARD);
        t_verify_fill(win + off + bytes, T_POISON, GUARD, "ring: above the message", prev,
                      off + bytes);
        memset(win + off, T_POISON, bytes);
        if (i % 2)
            CHECK(gpurma_signal(w, prev, SIG_ACK, GPURMA_SIGNAL_ADD, 1));
        else
            CHECK(gpurma_signal(w, prev, SIG_ACK, GPURMA_SIGNAL_SET, i + 1));
    }
    /* Drain the last credit, so the next phase starts from quiet slots. */
    CHECK(gpurma_wait_until(w, SIG_ACK, GPURMA_CMP_EQ, RING_ROUNDS));
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(win, T_POISON, RING_LEN, "ring area after the ring", t_rank, 0);
    CHECK(gpurma_signal_reset(w, SIG_DATA));
    CHECK(gpurma_signal_reset(w, SIG_ACK));
    uint64_t v;
    CHECK(gpurma_signal_read(w, SIG_DATA, &v));
    T_ASSERT(v == 0, "signal_reset left %" PRIu64, v);
    CHECK(gpurma_barrier(t_world));
}

static void gather(gpurma_win_t w)
{
    for (uint64_t i = 0; i < GATHER_ROUNDS; i++) {
        uint64_t s = t_seed(GATHER_DATA, (uint64_t)t_rank, i);
        size_t bytes = 1 + (size_t)t_below(&s, SLOT_LEN - 2 * GUARD);
        size_t at = RING_LEN + (size_t)t_rank * SLOT_LEN + GUARD;
        t_fill(src, bytes, s);
        if (i % 2) {
            CHECK(gpurma_put_signal(w, 0, at, src, bytes, SIG_GATHER, GPURMA_SIGNAL_ADD, 1));
        } else {
            CHECK(gpurma_put(w, 0, at, src, bytes));
            CHECK(gpurma_fence(w));
            CHECK(gpurma_signal(w, 0, SIG_GATHER, GPURMA_SIGNAL_ADD, 1));
        }
        if (t_rank == 0) {
            uint64_t total = (uint64_t)t_size * (i + 1);
            CHECK(gpurma_wait_until(w, SIG_GATHER, GPURMA_CMP_EQ, total));
            for (int o = 0; o < t_size; o++) {
                uint64_t os = t_seed(GATHER_DATA, (uint64_t)o, i);
                size_t ob = 1 + (size_t)t_below(&os, SLOT_LEN - 2 * GUARD);
                size_t oat = RING_LEN + (size_t)o * SLOT_LEN + GUARD;
                t_fill(want, ob, os);
                t_verify(win + oat, want, ob, "gathered data after the count", o, oat);
                t_verify_fill(win + oat + ob, T_POISON, SLOT_LEN - GUARD - ob, "gather: slot tail",
                              o, oat + ob);
                memset(win + oat, T_POISON, ob);
            }
            for (int p = 0; p < t_size; p++)
                CHECK(gpurma_signal(w, p, SIG_GO, GPURMA_SIGNAL_SET, i + 1));
        }
        CHECK(gpurma_wait_until(w, SIG_GO, GPURMA_CMP_GE, i + 1));
    }
}

int main(void)
{
    t_init("test_signal_order", 0);
    win_len = RING_LEN + (size_t)t_size * SLOT_LEN;
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, win_len, NULL, &base, &w));
    T_ASSERT(gpurma_win_num_signals(w) >= 4, "window has %u signals", gpurma_win_num_signals(w));
    win = base;
    memset(win, T_POISON, win_len);
    for (uint32_t s = 0; s < gpurma_win_num_signals(w); s++) {
        uint64_t v;
        CHECK(gpurma_signal_read(w, s, &v));
        T_ASSERT(v == 0, "signal %u starts at %" PRIu64, s, v);
    }
    src = t_malloc(RING_LEN);
    want = t_malloc(RING_LEN);
    CHECK(gpurma_barrier(t_world));

    double t0 = t_now();
    ring(w);
    double t1 = t_now();
    gather(w);
    double t2 = t_now();

    CHECK(gpurma_win_free(&w));
    free(src);
    free(want);
    char detail[128];
    snprintf(detail, sizeof(detail), "%d ring rounds in %.2f s, %d gather rounds in %.2f s",
             RING_ROUNDS, t1 - t0, GATHER_ROUNDS, t2 - t1);
    return t_finish(detail);
}
