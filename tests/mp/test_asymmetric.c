/*
 * test_asymmetric.c - windows whose size differs per rank, zero included.
 *
 * Every rank sees every peer's size through gpurma_win_size. Each rank fills
 * the whole of every peer's window (puts that end exactly at the end
 * succeed); puts, gets, put_values and atomics one byte past the end fail
 * with GPURMA_ERR_OUT_OF_BOUNDS and write nothing, which the owner checks
 * byte by byte, signals included, after a barrier.
 */
#include "common.h"

enum { ASYM_DATA = 50 };

/* Odd sizes, a zero every fourth rank (rank 1, 5, ...), a large one every
 * other rank. */
static size_t size_of(int rank)
{
    if (rank % 4 == 1)
        return 0;
    return 1 + (size_t)rank * 3001 + (rank % 2 ? 0 : 65536);
}

int main(void)
{
    t_init("test_asymmetric", 0);
    const size_t mine = size_of(t_rank);
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, mine, NULL, &base, &w));
    T_ASSERT(mine == 0 || base != NULL, "window of %zu bytes has no base", mine);
    for (int p = 0; p < t_size; p++)
        T_ASSERT(gpurma_win_size(w, p) == size_of(p), "win_size(peer %d) = %zu, expected %zu", p,
                 gpurma_win_size(w, p), size_of(p));
    T_ASSERT(gpurma_win_size(w, -1) == 0 && gpurma_win_size(w, t_size) == 0,
             "win_size of a peer out of range is not 0");
    unsigned char *win = base;
    if (mine)
        memset(win, T_POISON, mine);
    CHECK(gpurma_barrier(t_world));

    size_t largest = 0;
    for (int p = 0; p < t_size; p++)
        largest = size_of(p) > largest ? size_of(p) : largest;
    unsigned char *src = t_malloc(largest + 8), *back = t_malloc(largest + 8);

    /* Round k: every rank writes the whole window of rank + k, in three puts
     * (head, middle, the last byte exactly at the end), then the refused ones. */
    for (int k = 0; k < t_size; k++) {
        int peer = (t_rank + k) % t_size, from = (t_rank - k + t_size) % t_size;
        size_t len = size_of(peer);
        t_fill(src, len, t_seed(ASYM_DATA, (uint64_t)t_rank, (uint64_t)k));
        if (len) {
            size_t head = len / 3;
            CHECK(gpurma_put(w, peer, 0, src, head));
            CHECK(gpurma_put(w, peer, head, src + head, len - head - 1));
            CHECK(gpurma_put(w, peer, len - 1, src + len - 1, 1));
        }
        CHECK(gpurma_put(w, peer, len, src, 0)); /* empty, at the end: fine */
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, peer, len, src, 1));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, peer, 0, src, len + 1));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, peer, len + 1, src, 0));
        if (len >= 8)
            EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, peer, len - 7, src, 8));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, peer, SIZE_MAX - 2, src, 4));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, peer, 2, src, SIZE_MAX - 1));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put_value(w, peer, len, 0xEE, 1));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
                   gpurma_put_signal(w, peer, len, src, 1, 0, GPURMA_SIGNAL_ADD, 1));
        size_t last8 = len / 8 * 8; /* first 8-aligned offset with no room for 8 bytes */
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_atomic_fetch_add(w, peer, last8, 1, NULL));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_atomic_swap(w, peer, last8 + 8, 1, NULL));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_get(w, peer, back, len, 1));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_get(w, peer, back, 0, len + 1));
        CHECK(gpurma_quiet(w));
        CHECK(gpurma_barrier(t_world));

        /* Owner: everything is what `from` sent, and nothing more. */
        unsigned char *want = back;
        t_fill(want, mine, t_seed(ASYM_DATA, (uint64_t)from, (uint64_t)k));
        if (mine)
            t_verify(win, want, mine, "whole-window put", from, 0);
        for (uint32_t s = 0; s < gpurma_win_num_signals(w); s++) {
            uint64_t v;
            CHECK(gpurma_signal_read(w, s, &v));
            T_ASSERT(v == 0, "signal %u is %" PRIu64 " after refused put_signals", s, v);
        }
        CHECK(gpurma_barrier(t_world));

        /* Origin: read it all back, the last byte on its own. */
        if (len) {
            memset(back, T_POISON, len + 8);
            CHECK(gpurma_get(w, peer, back, 0, len - 1));
            CHECK(gpurma_get(w, peer, back + len - 1, len - 1, 1));
            t_verify(back, src, len, "whole-window get", peer, 0);
            t_verify_fill(back + len, T_POISON, 8, "get: past the destination", peer, len);
        }
        CHECK(gpurma_barrier(t_world));
        if (mine)
            memset(win, T_POISON, mine);
        CHECK(gpurma_barrier(t_world));
    }

    /* Atomics right at the end: the last aligned 8 bytes are reachable. */
    int peer = (t_rank + 1) % t_size;
    size_t len = size_of(peer);
    if (len >= 8) {
        size_t at = (len - 8) / 8 * 8;
        uint64_t old;
        CHECK(gpurma_atomic_swap(w, peer, at, 0x1122334455667788ull, &old));
        T_ASSERT(old == 0xA5A5A5A5A5A5A5A5ull, "swap at the end saw %#" PRIx64, old);
        CHECK(gpurma_atomic_fetch_add(w, peer, at, 1, &old));
        T_ASSERT(old == 0x1122334455667788ull, "fetch_add at the end saw %#" PRIx64, old);
    }
    CHECK(gpurma_barrier(t_world));
    if (mine >= 8) {
        size_t at = (mine - 8) / 8 * 8;
        uint64_t v = 0x1122334455667789ull;
        t_verify_window(win, mine, at, &v, 8, "atomics at the end of the window",
                        (t_rank - 1 + t_size) % t_size);
    }

    free(src);
    free(back);
    CHECK(gpurma_win_free(&w));
    return t_finish(NULL);
}
