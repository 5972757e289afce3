/*
 * test_counters.c - local-completion counters count exactly.
 *
 * put_counted and put_signal_counted add one to the named counter of the
 * origin's window per completed op, and to no other counter; a refused op
 * adds nothing. counter_wait returns once the count is reached; counter_read
 * and counter_reset see and clear exact values. The data and the signals of
 * counted ops arrive like those of plain ones.
 */
#include "common.h"

enum { CNT_DATA = 30 };
enum { SIG_DATA = 5 };

#define SLOT 4160 /* per-origin slot in every window */
#define OPS  300

static unsigned char *win;

static void expect_counters(gpurma_win_t w, const uint64_t *want, uint32_t n, const char *when)
{
    for (uint32_t c = 0; c < n; c++) {
        uint64_t v;
        CHECK(gpurma_counter_read(w, c, &v));
        T_ASSERT(v == want[c], "%s: counter %u is %" PRIu64 ", expected %" PRIu64, when, c, v,
                 want[c]);
    }
}

int main(void)
{
    t_init("test_counters", 0);
    size_t win_len = (size_t)t_size * SLOT;
    gpurma_win_params_t params = {0};
    params.field_mask = GPURMA_WIN_FIELD_NUM_COUNTERS | GPURMA_WIN_FIELD_NUM_SIGNALS;
    params.num_counters = 5;
    params.num_signals = 8;
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, win_len, &params, &base, &w));
    T_ASSERT(gpurma_win_num_counters(w) == 5, "num_counters %u", gpurma_win_num_counters(w));
    win = base;
    memset(win, T_POISON, win_len);
    uint64_t want[5] = {0};
    expect_counters(w, want, 5, "fresh window");
    CHECK(gpurma_barrier(t_world));

    unsigned char *src = t_malloc(SLOT), *expect = t_malloc(SLOT);
    int next = (t_rank + 1) % t_size, prev = (t_rank - 1 + t_size) % t_size;
    size_t my_slot = (size_t)t_rank * SLOT;

    /* Counter c counts the ops sent to peer (rank + c) with counter c. */
    for (int i = 0; i < OPS; i++) {
        uint32_t c = (uint32_t)(i % 4);
        int peer = (t_rank + (int)c) % t_size;
        size_t bytes = 1 + (size_t)(i * 37) % (SLOT - 1);
        t_fill(src, bytes, t_seed(CNT_DATA, (uint64_t)t_rank, (uint64_t)i));
        if (i % 2)
            CHECK(gpurma_put_counted(w, peer, my_slot + SLOT - bytes, src, bytes, c));
        else
            CHECK(gpurma_put_signal_counted(w, peer, my_slot, src, bytes, SIG_DATA,
                                            GPURMA_SIGNAL_ADD, 1, c));
        want[c]++;
        /* A refused op must not count. */
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
                   gpurma_put_counted(w, peer, win_len - bytes + 1, src, bytes, c));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_signal_counted(w, peer, my_slot, src, bytes,
                                                                     99, GPURMA_SIGNAL_ADD, 1, c));
        CHECK(gpurma_counter_wait(w, c, want[c]));
        if (i % 50 == 0)
            expect_counters(w, want, 5, "during the puts");
    }
    expect_counters(w, want, 5, "after the puts");

    /* Op i goes to rank + i % 4; the even ones were put_signals. */
    uint64_t signals_expected = 0;
    for (int o = 0; o < t_size; o++)
        for (int i = 0; i < OPS; i += 2)
            signals_expected += (o + i % 4) % t_size == t_rank;
    CHECK(gpurma_wait_until(w, SIG_DATA, GPURMA_CMP_EQ, signals_expected));
    CHECK(gpurma_barrier(t_world));

    /* Each slot holds what its origin's ops sent here, replayed in order:
     * put_signals fill from the start of the slot, puts end at its end. */
    for (int o = 0; o < t_size; o++) {
        unsigned char *slot = win + (size_t)o * SLOT;
        memset(expect, T_POISON, SLOT);
        for (int i = 0; i < OPS; i++) {
            if ((o + i % 4) % t_size != t_rank)
                continue;
            size_t bytes = 1 + (size_t)(i * 37) % (SLOT - 1);
            t_fill(src, bytes, t_seed(CNT_DATA, (uint64_t)o, (uint64_t)i));
            memcpy(expect + (i % 2 ? SLOT - bytes : 0), src, bytes);
        }
        t_verify(slot, expect, SLOT, "counted puts", o, (size_t)o * SLOT);
    }

    CHECK(gpurma_barrier(t_world)); /* before anyone writes a slot again */

    /* reset clears one counter and leaves the others. */
    CHECK(gpurma_counter_reset(w, 2));
    want[2] = 0;
    expect_counters(w, want, 5, "after counter_reset(2)");
    CHECK(gpurma_counter_wait(w, 2, 0));
    t_fill(src, 17, t_seed(CNT_DATA, (uint64_t)t_rank, 999999));
    CHECK(gpurma_put_counted(w, next, my_slot, src, 17, 4));
    want[4]++;
    CHECK(gpurma_put_counted(w, prev, my_slot, src, 17, 4));
    want[4]++;
    CHECK(gpurma_counter_wait(w, 4, 2));
    expect_counters(w, want, 5, "after the last puts");
    CHECK(gpurma_barrier(t_world));
    const int senders[2] = {prev, next};
    for (int k = 0; k < 2; k++) {
        t_fill(expect, 17, t_seed(CNT_DATA, (uint64_t)senders[k], 999999));
        t_verify(win + (size_t)senders[k] * SLOT, expect, 17, "last counted put", senders[k],
                 (size_t)senders[k] * SLOT);
    }
    for (uint32_t c = 0; c < 5; c++) {
        CHECK(gpurma_counter_reset(w, c));
        want[c] = 0;
    }
    expect_counters(w, want, 5, "after resetting all");

    free(src);
    free(expect);
    CHECK(gpurma_win_free(&w));
    return t_finish(NULL);
}
