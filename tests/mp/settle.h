/*
 * settle.h - for tests whose calls may leave peers waiting out a timeout
 * (collectives that ranks call with different arguments, on a team that is
 * out of step afterwards): t_settle() returns once every rank of the job
 * has come out of its call, so that the next step, on the world team,
 * meets no rank that is still waiting. A fixed sleep past the longest
 * wait a case might cause would do the same, but costs that bound on
 * every case, also on the many where every rank is refused at once.
 *
 *   t_settle_init()      once, after t_init, on every rank (collective)
 *   t_settle(bound_s)    every rank; fails the test when some rank has
 *                        not come out within bound_s seconds
 *
 * Each rank adds 1 to one signal slot of every peer, in a window of its
 * own on the world team (never the team out of step), and polls its own
 * slot until each peer's add of this round is there.
 */
#ifndef GPURMA_TESTS_MP_SETTLE_H
#define GPURMA_TESTS_MP_SETTLE_H

#include "common.h"

static gpurma_win_t t_settle_win;
static uint64_t t_settle_round;

static inline void t_settle_init(void)
{
    void *base;
    CHECK(gpurma_win_allocate(t_world, 8, NULL, &base, &t_settle_win));
}

static inline void t_settle(double bound_s)
{
    const uint64_t want = ++t_settle_round * (uint64_t)(t_size - 1);
    for (int p = 0; p < t_size; p++)
        if (p != t_rank)
            CHECK(gpurma_signal(t_settle_win, p, 0, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_quiet(t_settle_win));
    /* Polled, not gpurma_wait_until: the wait would time out (after the
     * library's bound, which these tests keep short) while a peer is still
     * legitimately waiting out its own. */
    const double deadline = t_now() + bound_s;
    uint64_t v = 0;
    for (;;) {
        CHECK(gpurma_signal_read(t_settle_win, 0, &v));
        if (v >= want)
            return;
        if (t_now() > deadline)
            T_FAIL("settle round %llu: %llu of %llu peers came out of the call within %.1f s",
                   (unsigned long long)t_settle_round,
                   (unsigned long long)(v - (want - (uint64_t)(t_size - 1))),
                   (unsigned long long)(t_size - 1), bound_s);
        usleep(2000);
    }
}

#endif
