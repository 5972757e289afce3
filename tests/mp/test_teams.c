/*
 * test_teams.c - world and node teams, team_split (colors, keys, ties,
 * GPURMA_TEAM_UNDEFINED, nested splits) and windows over split teams.
 *
 * Every rank computes what each split must give from the colors and keys
 * alone, then checks ranks, sizes and team_world_rank for every member.
 * Windows over a split team are addressed by team rank: a put/signal ring
 * inside each team checks that the data lands in the window of the right
 * world rank (the payload names its world origin).
 */
#include "common.h"
#include "gpurma_coll.h"

enum { TEAM_DATA = 70 };

#define MSG 1031

/* Expected members of the team with my color: parent ranks sorted by
 * (key, parent rank). Returns the count; fills order[]. */
static int expected_members(int n, const int *color, const int *key, int mine, int *order)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (color[i] != mine)
            continue;
        int at = m++;
        while (at > 0 && key[order[at - 1]] > key[i]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    return m;
}

static void check_team(gpurma_team_t team, gpurma_team_t parent, int n, const int *color,
                       const int *key, int my_parent_rank, const char *what)
{
    int order[64];
    int m = expected_members(n, color, key, color[my_parent_rank], order);
    T_ASSERT(gpurma_team_size(team) == m, "%s: size %d, expected %d", what, gpurma_team_size(team),
             m);
    int me = -1;
    for (int i = 0; i < m; i++) {
        if (order[i] == my_parent_rank)
            me = i;
        int wr = gpurma_team_world_rank(team, i);
        int want = gpurma_team_world_rank(parent, order[i]);
        T_ASSERT(wr == want, "%s: team rank %d is world rank %d, expected %d", what, i, wr, want);
    }
    T_ASSERT(gpurma_team_rank(team) == me, "%s: my team rank %d, expected %d", what,
             gpurma_team_rank(team), me);
    T_ASSERT(gpurma_team_world_rank(team, -1) == -1 && gpurma_team_world_rank(team, m) == -1,
             "%s: team_world_rank out of range is not -1", what);
}

/* A put_signal ring by team rank; the payload is seeded by the world rank. */
static void ring_over(gpurma_team_t team, int round, const char *what)
{
    int tr = gpurma_team_rank(team), ts = gpurma_team_size(team);
    int next = (tr + 1) % ts, prev = (tr - 1 + ts) % ts;
    size_t len = MSG + (size_t)tr * 7; /* asymmetric on purpose */
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(team, len, NULL, &base, &w));
    T_ASSERT(gpurma_win_team(w) == team, "%s: win_team", what);
    for (int p = 0; p < ts; p++)
        T_ASSERT(gpurma_win_size(w, p) == MSG + (size_t)p * 7, "%s: win_size(%d) = %zu", what, p,
                 gpurma_win_size(w, p));
    T_ASSERT(gpurma_win_size(w, ts) == 0, "%s: win_size past the team", what);
    memset(base, T_POISON, len);
    CHECK(gpurma_barrier(team));

    unsigned char src[MSG], want[MSG];
    t_fill(src, MSG, t_seed(TEAM_DATA, (uint64_t)t_rank, (uint64_t)round));
    CHECK(gpurma_put_signal(w, next, 3, src, MSG - 3, 0, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_wait_until(w, 0, GPURMA_CMP_EQ, 1));
    int from_world = gpurma_team_world_rank(team, prev);
    t_fill(want, MSG, t_seed(TEAM_DATA, (uint64_t)from_world, (uint64_t)round));
    t_verify_window((unsigned char *)base, len, 3, want, MSG - 3, what, from_world);
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put(w, ts, 0, src, 1));
    CHECK(gpurma_win_free(&w));
}

int main(void)
{
    t_init("test_teams", 0);
    int n = t_size;
    T_ASSERT(n <= 64, "this test handles at most 64 ranks");

    /* World: the identity. */
    T_ASSERT(gpurma_team_size(t_world) == n && gpurma_team_rank(t_world) == t_rank,
             "world team %d/%d", gpurma_team_rank(t_world), gpurma_team_size(t_world));
    for (int i = 0; i < n; i++)
        T_ASSERT(gpurma_team_world_rank(t_world, i) == i, "world rank of %d", i);

    /* Node: every rank of a single-host run, in node-rank order. */
    gpurma_team_t node = gpurma_team_node(t_ctx);
    T_ASSERT(node && gpurma_team_size(node) == gpurma_node_size(t_ctx) &&
                 gpurma_team_rank(node) == gpurma_node_rank(t_ctx),
             "node team %d/%d vs node rank %d/%d", gpurma_team_rank(node), gpurma_team_size(node),
             gpurma_node_rank(t_ctx), gpurma_node_size(t_ctx));
    T_ASSERT(gpurma_team_world_rank(node, gpurma_team_rank(node)) == t_rank,
             "node team maps me to world rank %d",
             gpurma_team_world_rank(node, gpurma_team_rank(node)));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_free(&node));
    ring_over(node, 0, "window over the node team");

    /* Split 1: three colors, keys reverse the order, the last rank opts out. */
    int color[64], key[64];
    for (int i = 0; i < n; i++) {
        color[i] = n > 1 && i == n - 1 ? GPURMA_TEAM_UNDEFINED : i % 3;
        key[i] = -i;
    }
    gpurma_team_t t1;
    CHECK(gpurma_team_split(t_world, color[t_rank], key[t_rank], &t1));
    if (color[t_rank] == GPURMA_TEAM_UNDEFINED) {
        T_ASSERT(t1 == NULL, "color UNDEFINED gave a team");
    } else {
        check_team(t1, t_world, n, color, key, t_rank, "split by rank % 3, reversed");
        ring_over(t1, 1, "window over split 1");
    }

    /* Split 2: one color, keys tie in pairs: ties keep the parent order. */
    for (int i = 0; i < n; i++) {
        color[i] = 7;
        key[i] = (n - i) / 2;
    }
    gpurma_team_t t2;
    CHECK(gpurma_team_split(t_world, 7, key[t_rank], &t2));
    check_team(t2, t_world, n, color, key, t_rank, "split with tied keys");

    /* Split 3: split t2 again by parity of its team rank (nested split). */
    int n2 = gpurma_team_size(t2), r2 = gpurma_team_rank(t2);
    int color2[64], key2[64];
    for (int i = 0; i < n2; i++) {
        color2[i] = i % 2;
        key2[i] = i;
    }
    gpurma_team_t t3;
    CHECK(gpurma_team_split(t2, color2[r2], key2[r2], &t3));
    check_team(t3, t2, n2, color2, key2, r2, "nested split");

    /* Windows over overlapping teams, alive at the same time. */
    gpurma_win_t ww, w3;
    void *bw, *b3;
    CHECK(gpurma_win_allocate(t_world, 64, NULL, &bw, &ww));
    CHECK(gpurma_win_allocate(t3, 64, NULL, &b3, &w3));
    memset(bw, T_POISON, 64);
    memset(b3, T_POISON, 64);
    CHECK(gpurma_barrier(t_world));
    int r3 = gpurma_team_rank(t3), n3 = gpurma_team_size(t3);
    CHECK(gpurma_put_value(w3, (r3 + 1) % n3, 8, 0x3300 + (uint64_t)t_rank, 8));
    CHECK(gpurma_put_value(ww, (t_rank + 1) % n, 16, 0x7700 + (uint64_t)t_rank, 8));
    CHECK(gpurma_barrier(t_world));
    uint64_t from3 = 0x3300 + (uint64_t)gpurma_team_world_rank(t3, (r3 - 1 + n3) % n3);
    uint64_t fromw = 0x7700 + (uint64_t)((t_rank - 1 + n) % n);
    t_verify_window((unsigned char *)b3, 64, 8, &from3, 8, "put_value over the nested team", -1);
    t_verify_window((unsigned char *)bw, 64, 16, &fromw, 8, "put_value over the world", -1);
    CHECK(gpurma_win_free(&w3));
    CHECK(gpurma_win_free(&ww));
    ring_over(t3, 3, "window over the nested split");

    CHECK(gpurma_barrier(t2));
    CHECK(gpurma_team_free(&t3));
    T_ASSERT(t3 == NULL, "team_free left the handle");
    CHECK(gpurma_team_free(&t2));
    if (t1) {
        CHECK(gpurma_barrier(t1));
        CHECK(gpurma_team_free(&t1));
    }
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_split(t_world, -7, 0, &t1));
    /* One rank's bad arguments: every rank refuses the split, and the
     * parent stays in step (a rank that refused alone left its peers
     * waiting, and the world team's next collectives failed). */
    t1 = (gpurma_team_t)&t1;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_team_split(t_world, t_rank == n - 1 ? -7 : 3, 0, &t1));
    T_ASSERT(t1 == NULL, "a refused split left *out set");
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
               gpurma_team_split(t_world, 3, 0, t_rank == 0 ? NULL : &t1));
    CHECK(gpurma_team_split(t_world, 3, -t_rank, &t1));
    for (int i = 0; i < n; i++)
        color[i] = 3, key[i] = -i;
    check_team(t1, t_world, n, color, key, t_rank, "split after a refused one");
    CHECK(gpurma_team_free(&t1));
    /* A split on rank 0 beside another collective call on the others (a
     * registration, whose agreement is an exchange of another length):
     * every rank refuses at the first exchange instead of taking the other
     * call's bytes, and the team stays in step. Color 0 and key 1 make the
     * split's entry begin as a valid vote of the registration ({0, 1}), and
     * the votes read as valid entries: before the exchanges carried their
     * length, both calls went on, each with the other's bytes. */
    if (n > 1) {
        static char reg[64];
        t1 = (gpurma_team_t)&t1;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, t_rank == 0
                                               ? gpurma_team_split(t_world, 0, 1, &t1)
                                               : gpurma_coll_register(t_world, reg, sizeof reg));
        T_ASSERT(t_rank != 0 || t1 == NULL, "a refused split left *out set");
        CHECK(gpurma_barrier(t_world));
        CHECK(gpurma_team_split(t_world, 5, t_rank, &t1));
        CHECK(gpurma_team_free(&t1));
    }
    return t_finish(NULL);
}
