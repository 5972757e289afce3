/*
 * test_wild_handles.c - handles the library never made, and handles it
 * made and released, are refused with a clear error before any of their
 * bytes are read; zero-count alltoallv blocks take any displacement.
 *
 *   near     addresses a few bytes off real handles, and 20,000 random
 *            values (half of them aligned user-space addresses): refused
 *   wild     0x10, 0x1000, an odd address, readable garbage (random bytes),
 *            look-alikes that begin with each live magic word, memory
 *            already returned to malloc (ASan reports any read of it), and
 *            a handle of one kind passed as another: contexts give
 *            GPURMA_ERR_NOT_INITIALIZED, teams and windows
 *            GPURMA_ERR_INVALID_ARG, from queries, one-sided calls,
 *            barriers, collectives and frees, and nothing is written
 *   forged   device handles (window, channel, collective) copied from real
 *            ones with their host pointer replaced by 0x10, garbage that
 *            begins with the live word, freed memory or a pointer inside
 *            the real struct: GPURMA_ERR_INVALID_ARG, nothing written
 *   tampered device handles copied from real ones with the host pointer
 *            right and another field changed (peer table, team size, signal
 *            count, rank; a channel's base or size; a collective handle's
 *            regions, channels, rank or slot): GPURMA_ERR_INVALID_ARG,
 *            nothing written anywhere
 *   dcoll    a device-collective handle kept after gpurma_team_free gives
 *            GPURMA_ERR_FREED (the team's scratch window is a tombstone),
 *            and writes nothing
 *   v-zero   alltoallv where some blocks have count 0 and displacements
 *            near SIZE_MAX or 2^63: accepted, the other blocks exact, the
 *            gaps and the tail still poisoned
 */
#include "common.h"

#include <stdint.h>

#include "gpurma_coll.h"
#include "gpurma_coll_device.h"

#define NWILD 9

/* Memory that was malloc'd and freed (ASan reports any read of it). */
static __attribute__((noinline)) uintptr_t freed_address(void)
{
    unsigned char *p = t_malloc(512);
    memset(p, 0x5a, 512);
    uintptr_t at = (uintptr_t)p;
    free(p);
    return at;
}

/* Pointers that are no handle of the library (bufs: room for the fakes). */
static void wild_pointers(void *out[NWILD], unsigned char bufs[][256])
{
    static const uint32_t magics[] = {0x43545852u /* ctx */, 0x5445414du /* team */,
                                      0x57494e44u /* window */};
    out[0] = (void *)(uintptr_t)0x10;
    out[1] = (void *)(uintptr_t)0x1000;
    out[2] = (void *)(uintptr_t)0x7fff12345677ull;
    t_fill(bufs[0], 256, t_seed(90, (uint64_t)t_rank, 0));
    out[3] = bufs[0];
    for (int k = 0; k < 3; k++) { /* a live magic word, then garbage */
        t_fill(bufs[1 + k], 256, t_seed(91, (uint64_t)t_rank, (uint64_t)k));
        memcpy(bufs[1 + k], &magics[k], sizeof(magics[k]));
        out[4 + k] = bufs[1 + k];
    }
    out[7] = (void *)freed_address(); /* the library must not even look */
    out[8] = bufs[0] + 1;
}

static void test_wild(void)
{
    unsigned char bufs[4][256];
    void *wild[NWILD];
    wild_pointers(wild, bufs);
    unsigned char before[4][256];
    memcpy(before, bufs, sizeof(bufs));
    gpurma_win_t win;
    unsigned char *base;
    CHECK(gpurma_win_allocate(t_world, 256, NULL, (void **)&base, &win));
    memset(base, T_POISON, 256);
    unsigned char src[64], dst[64];
    t_fill(src, sizeof(src), t_seed(92, (uint64_t)t_rank, 0));
    memset(dst, T_POISON, sizeof(dst));
    uint32_t one = 1, out = 0x5a5a5a5au;
    size_t counts[1] = {1}, displs[1] = {0};
    CHECK(gpurma_barrier(t_world));
    /* each wild pointer, plus a real handle of the wrong kind */
    for (int i = 0; i <= NWILD; i++) {
        gpurma_ctx_t c = i < NWILD ? (gpurma_ctx_t)wild[i] : (gpurma_ctx_t)(void *)t_world;
        gpurma_team_t t = i < NWILD ? (gpurma_team_t)wild[i] : (gpurma_team_t)(void *)win;
        gpurma_win_t w = i < NWILD ? (gpurma_win_t)wild[i] : (gpurma_win_t)(void *)t_world;
        T_ASSERT(gpurma_rank(c) == -1 && gpurma_size(c) == -1 && !gpurma_team_world(c) &&
                     !gpurma_bootstrap_name(c),
                 "context queries accepted %p", (void *)c);
        EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_finalize(c));
        T_ASSERT(gpurma_team_size(t) == -1 && gpurma_team_rank(t) == -1,
                 "team queries accepted %p", (void *)t);
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_barrier(t));
        gpurma_team_t sub = NULL;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_split(t, 0, 0, &sub));
        T_ASSERT(!sub, "team_split on %p gave a team", (void *)t);
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_allreduce(t, &one, &out, 1, GPURMA_UINT32, GPURMA_SUM, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_broadcast(t, &one, &out, 1, GPURMA_UINT32, 0, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_reduce(t, &one, &out, 1, GPURMA_UINT32, GPURMA_SUM, 0, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_allgather(t, &one, &out, 1, GPURMA_UINT32, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_alltoall(t, &one, &out, 1, GPURMA_UINT32, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_reduce_scatter(t, &one, &out, 1, GPURMA_UINT32, GPURMA_SUM, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG,
                   gpurma_alltoallv(t, &one, counts, displs, &out, counts, displs, GPURMA_UINT32,
                                    NULL));
        gpurma_dev_coll_t dc;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_coll_device(t, GPURMA_MEM_HOST, &dc));
        gpurma_win_t nw = NULL;
        void *nb = NULL;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_allocate(t, 64, NULL, &nb, &nw));
        T_ASSERT(!nw, "win_allocate on %p gave a window", (void *)t);
        T_ASSERT(gpurma_win_size(w, 0) == 0 && !gpurma_win_base(w) && !gpurma_win_team(w),
                 "window queries accepted %p", (void *)w);
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put(w, 0, 0, src, sizeof(src)));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_get(w, 0, dst, 0, sizeof(dst)));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_signal(w, 0, 0, GPURMA_SIGNAL_ADD, 1));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_atomic_fetch_add(w, 0, 0, 1, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_flush(w, GPURMA_ALL_PEERS));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_quiet(w));
        gpurma_dev_win_t dw;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_device(w, &dw));
        gpurma_win_t wcopy = w;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_free(&wcopy));
        gpurma_team_t tcopy = t;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_team_free(&tcopy));
    }
    T_ASSERT(out == 0x5a5a5a5au, "a collective on a wild team wrote its recv");
    t_verify_fill(dst, T_POISON, sizeof(dst), "get through a wild window wrote", t_rank, 0);
    T_ASSERT(!memcmp(before, bufs, sizeof(bufs)), "a call wrote into a fake handle");
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(base, T_POISON, 256, "a wild call wrote into a real window", t_rank, 0);
    CHECK(gpurma_win_free(&win));
}

/* Addresses near real handles (inside the library's own structs) and
 * random 64-bit values: every one refused, none read. */
static void test_near_and_random(void)
{
    gpurma_win_t win;
    void *base;
    CHECK(gpurma_win_allocate(t_world, 64, NULL, &base, &win));
    const uintptr_t real[3] = {(uintptr_t)(void *)t_ctx, (uintptr_t)(void *)t_world,
                               (uintptr_t)(void *)win};
    for (int k = 0; k < 3; k++)
        for (intptr_t d = -48; d <= 48; d += 4) { /* inside the struct: no other handle */
            if (!d)
                continue;
            void *p = (void *)(real[k] + (uintptr_t)d);
            T_ASSERT(gpurma_rank((gpurma_ctx_t)p) == -1, "context %p + %ld accepted",
                     (void *)real[k], (long)d);
            T_ASSERT(gpurma_team_size((gpurma_team_t)p) == -1, "team %p + %ld accepted",
                     (void *)real[k], (long)d);
            T_ASSERT(gpurma_win_size((gpurma_win_t)p, 0) == 0, "window %p + %ld accepted",
                     (void *)real[k], (long)d);
        }
    uint64_t st = t_seed(94, (uint64_t)t_rank, 0);
    for (int i = 0; i < 20000; i++) {
        uint64_t v = t_splitmix64(&st);
        if (i & 1) /* canonical user-space addresses, 16-byte aligned */
            v &= 0x00007ffffffffff0ull;
        if (v == real[0] || v == real[1] || v == real[2])
            continue;
        T_ASSERT(gpurma_win_size((gpurma_win_t)(uintptr_t)v, 0) == 0 &&
                     gpurma_team_size((gpurma_team_t)(uintptr_t)v) == -1 &&
                     gpurma_rank((gpurma_ctx_t)(uintptr_t)v) == -1,
                 "random handle 0x%llx accepted", (unsigned long long)v);
    }
    T_ASSERT(gpurma_win_size(win, t_rank) == 64, "the real window stopped working");
    CHECK(gpurma_win_free(&win));
}

/* By-value device handles copied from real ones, their host pointer
 * replaced by garbage: refused by the library's lookup, never followed. */
static void test_forged_device_handles(void)
{
    gpurma_win_t win;
    unsigned char *base;
    CHECK(gpurma_win_allocate(t_world, 64, NULL, (void **)&base, &win));
    memset(base, T_POISON, 64);
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(win, &dw));
    gpurma_dev_coll_t dc;
    CHECK(gpurma_coll_device(t_world, GPURMA_MEM_HOST, &dc));
    CHECK(gpurma_barrier(t_world));
    unsigned char garbage[256], src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    t_fill(garbage, sizeof(garbage), t_seed(95, (uint64_t)t_rank, 0));
    uint32_t live = 0x57494e44u; /* the live window word, then garbage */
    memcpy(garbage, &live, sizeof(live));
    void *fakes[] = {(void *)(uintptr_t)0x10, garbage, (void *)(uintptr_t)freed_address(),
                     (unsigned char *)(void *)win + 8};
    for (size_t i = 0; i < sizeof(fakes) / sizeof(fakes[0]); i++) {
        gpurma_dev_win_t f = dw;
        f.host_win = fakes[i];
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put(f, 0, 0, src, sizeof(src)));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_signal(f, 0, 0, GPURMA_SIGNAL_ADD, 1));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_chan_put(gpurma_dev_win_chan(f, 0), 0, src, sizeof(src)));
        gpurma_dev_coll_t fc = dc;
        fc.win.host_win = fakes[i];
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_coll_barrier(fc));
    }
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(base, T_POISON, 64, "a forged device handle wrote into the window", t_rank,
                  0);
    T_ASSERT(dw.magic && gpurma_dev_put(dw, t_rank, 0, src, sizeof(src)) == GPURMA_SUCCESS,
             "the real device handle stopped working");
    /* through the port engine the put is asynchronous: complete it first */
    CHECK(gpurma_dev_flush(dw, t_rank));
    t_verify(base, src, sizeof(src), "device put through the real handle", t_rank, 0);
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&win));
}

/* By-value device handles copied from real ones with the host pointer
 * left right and another field changed (a peer table of the caller's
 * that points at a victim buffer, a larger team, a channel aimed at the
 * victim, a collective handle with moved regions, channels or rank): the
 * library compares the whole handle with its own (host backend), so each
 * is refused and the victim, the window and the scratch stay untouched. */
static void test_tampered_device_handles(void)
{
    gpurma_win_t win;
    unsigned char *base, victim[256], src[8] = {9, 8, 7, 6, 5, 4, 3, 2};
    CHECK(gpurma_win_allocate(t_world, 64, NULL, (void **)&base, &win));
    memset(base, T_POISON, 64);
    memset(victim, T_POISON, sizeof(victim));
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(win, &dw));
    gpurma_dev_coll_t dc;
    CHECK(gpurma_coll_device(t_world, GPURMA_MEM_HOST, &dc));
    CHECK(gpurma_barrier(t_world));
    /* the caller's peer table: every peer's memory is the victim */
    gpurma_dev_peer_t fake_peers[64];
    for (int p = 0; p < 64; p++) {
        fake_peers[p] = dw.peers[p < t_size ? p : 0];
        fake_peers[p].base = (char *)victim;
        fake_peers[p].size = sizeof(victim);
        fake_peers[p].path = GPURMA_DEV_PATH_LOADSTORE;
    }
    gpurma_dev_win_t f[4];
    for (int i = 0; i < 4; i++)
        f[i] = dw;
    f[0].peers = fake_peers;
    f[1].size = 64; /* peers past the real table */
    f[2].num_signals = dw.num_signals + 1000;
    f[3].rank = (dw.rank + 1) % 64;
    for (int i = 0; i < 4; i++) {
        int peer = i == 1 ? 63 : t_rank;
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put(f[i], peer, 0, src, sizeof(src)));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_signal(f[i], t_rank, dw.num_signals + 10 * (i == 2),
                                      GPURMA_SIGNAL_ADD, 1));
    }
    gpurma_dev_chan_t ch = gpurma_dev_win_chan(dw, t_rank);
    gpurma_dev_chan_t c2 = ch, c3 = ch;
    c2.pe.base = (char *)victim;
    c3.pe.size = ch.pe.size + 4096; /* past the window */
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_chan_put(c2, 0, src, sizeof(src)));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_chan_put(c3, 4000, src, sizeof(src)));
    gpurma_dev_coll_t fc[5];
    for (int i = 0; i < 5; i++)
        fc[i] = dc;
    fc[0].state_off += 64;
    fc[1].data_off += 8;
    fc[2].nchannels += 1;
    fc[3].rank = (dc.rank + 1) % t_size == dc.rank ? dc.rank + 1 : (dc.rank + 1) % t_size;
    fc[4].slot *= 2;
    uint64_t one = 1, got[64];
    memset(got, T_POISON, sizeof(got));
    for (int i = 0; i < 5; i++) {
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_coll_barrier(fc[i]));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                    gpurma_dev_coll_allgather(fc[i], got, &one, 1, GPURMA_UINT64));
    }
    t_verify_fill(victim, T_POISON, sizeof(victim), "a tampered device handle wrote here",
                  t_rank, 0);
    t_verify_fill(got, T_POISON, sizeof(got), "a tampered collective handle wrote here", t_rank,
                  0);
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(base, T_POISON, 64, "a tampered device handle wrote into the window", t_rank,
                  0);
    /* the real handles still work, the scratch in step */
    CHECK(gpurma_dev_coll_barrier(dc));
    CHECK(gpurma_dev_chan_put(ch, 0, src, sizeof(src)));
    CHECK(gpurma_dev_flush(dw, t_rank));
    t_verify(base, src, sizeof(src), "put through the real channel", t_rank, 0);
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&win));
}

/* A device-collective handle outlives its team: FREED, nothing written. */
static void test_dcoll_after_free(void)
{
    gpurma_team_t t = NULL;
    CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
    gpurma_dev_coll_t c;
    CHECK(gpurma_coll_device(t, GPURMA_MEM_HOST, &c));
    uint64_t one = 1, sum = 0;
    CHECK(gpurma_dev_coll_allreduce(c, &sum, &one, 1, GPURMA_UINT64, GPURMA_SUM));
    T_ASSERT(sum == (uint64_t)t_size, "device allreduce gave %llu", (unsigned long long)sum);
    CHECK(gpurma_dev_coll_barrier(c));
    CHECK(gpurma_team_free(&t));
    unsigned char recv[64];
    memset(recv, T_POISON, sizeof(recv));
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_coll_barrier(c));
    EXPECT_CODE(GPURMA_ERR_FREED,
                gpurma_dev_coll_allreduce(c, recv, &one, 1, GPURMA_UINT64, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_coll_broadcast(c, recv, &one, 1, GPURMA_UINT64, 0));
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_coll_allgather(c, recv, &one, 1, GPURMA_UINT64));
    t_verify_fill(recv, T_POISON, sizeof(recv), "a freed team's device collective wrote", t_rank,
                  0);
    /* and the device handle of a GPU-less host window: same rule */
    gpurma_win_t w;
    void *b;
    CHECK(gpurma_win_allocate(t_world, 64, NULL, &b, &w));
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(w, &dw));
    CHECK(gpurma_win_free(&w));
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_put(dw, 0, 0, recv, 8));
}

/* Elements rank i sends rank j: 0 for some pairs (the sender's and the
 * receiver's arrays agree by construction). */
static size_t v_count(int i, int j) { return (size_t)((i * 7 + j * 3 + 1) % 4); }

static void test_alltoallv_zero_blocks(void)
{
    const int n = t_size;
    const size_t huge[] = {SIZE_MAX, SIZE_MAX - 3, (size_t)1 << 63, SIZE_MAX / 4 + 1};
    size_t *sc = t_malloc((size_t)n * sizeof(size_t)), *sd = t_malloc((size_t)n * sizeof(size_t));
    size_t *rc = t_malloc((size_t)n * sizeof(size_t)), *rd = t_malloc((size_t)n * sizeof(size_t));
    size_t stot = 0, rtot = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = v_count(t_rank, j);
        rc[j] = v_count(j, t_rank);
        /* packed with one element of gap; empty blocks point anywhere */
        sd[j] = sc[j] ? stot : huge[j % 4];
        rd[j] = rc[j] ? rtot : huge[(j + 1) % 4];
        stot += sc[j] + 1;
        rtot += rc[j] + 1;
    }
    uint32_t *send = t_malloc((stot + 1) * 4), *recv = t_malloc((rtot + 1) * 4);
    for (int j = 0; j < n; j++)
        if (sc[j])
            t_fill(send + sd[j], sc[j] * 4, t_seed(93, (uint64_t)t_rank, (uint64_t)j));
    memset(recv, T_POISON, (rtot + 1) * 4);
    CHECK(gpurma_alltoallv(t_world, send, sc, sd, recv, rc, rd, GPURMA_UINT32, NULL));
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (rc[i]) {
            uint32_t *want = t_malloc(rc[i] * 4);
            t_fill(want, rc[i] * 4, t_seed(93, (uint64_t)i, (uint64_t)t_rank));
            t_verify(recv + rd[i], want, rc[i] * 4, "alltoallv block", i, rd[i] * 4);
            free(want);
        }
        at += rc[i];
        t_verify_fill(recv + at, T_POISON, 4, "alltoallv gap", i, at * 4);
        at++;
    }
    t_verify_fill(recv + rtot, T_POISON, 4, "alltoallv tail", t_rank, rtot * 4);
    /* every block empty, every displacement huge: nothing to do, no error */
    for (int j = 0; j < n; j++)
        sc[j] = rc[j] = 0, sd[j] = rd[j] = SIZE_MAX;
    CHECK(gpurma_alltoallv(t_world, NULL, sc, sd, NULL, rc, rd, GPURMA_UINT32, NULL));
    free(sc), free(sd), free(rc), free(rd), free(send), free(recv);
}

int main(void)
{
    t_init("test_wild_handles", 0);
    test_wild();
    test_near_and_random();
    test_forged_device_handles();
    test_tampered_device_handles();
    test_dcoll_after_free();
    test_alltoallv_zero_blocks();
    /* after finalize the kept handles are refused the same way */
    gpurma_team_t kept = t_world;
    CHECK(gpurma_barrier(t_world));
    gpurma_ctx_t ctx = t_ctx;
    int r = t_rank, n = t_size;
    CHECK(gpurma_finalize(ctx));
    uint32_t one = 1, out = 0;
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED,
               gpurma_allreduce(kept, &one, &out, 1, GPURMA_UINT32, GPURMA_SUM, NULL));
    EXPECT_ERR(GPURMA_ERR_NOT_INITIALIZED, gpurma_finalize(ctx));
    if (r == 0)
        printf("PASS test_wild_handles: %d ranks, %.2f s, %" PRIu64 " checks on rank 0\n", n,
               t_now() - t_start, t_checks);
    return 0;
}
