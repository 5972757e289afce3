/*
 * test_put_get.c - gpurma_put / gpurma_get / gpurma_put_value move exactly the
 * bytes asked for, at every size class and at odd sizes, offsets and source
 * alignments, and touch nothing else.
 *
 * Every window starts fully poisoned. In each round every rank puts random
 * bytes into one peer (the shift changes every round; with one rank the
 * peer is itself), then each target checks its whole window: the data where
 * it belongs and poison everywhere else. Each origin then gets the range
 * back (with some poison on either side) into a poisoned local buffer.
 */
#include "common.h"

enum { PUT_DATA = 1, ALL_DATA = 2, VALUE_DATA = 3 };

static const size_t sizes[] = {
    1, 2, 3, 7, 8, 15, 16, 17, 63, 64, 65, 255, 4095, 4096, 4097, 65537, (1u << 20) + 3, 4u << 20};
#define NSIZES  (sizeof(sizes) / sizeof(sizes[0]))
#define WIN_LEN ((4u << 20) + 8192)
#define GUARD   64 /* poison bytes around every local get destination */

static unsigned char *win; /* this rank's window */
static unsigned char *src, *want, *dst;

/* Each size is tried at offset 0 and at an odd offset, with a source
 * address that is misaligned by a varying amount. */
static void one_round(gpurma_win_t w, size_t round, size_t bytes, size_t off)
{
    int shift = t_size > 1 ? 1 + (int)(round % (size_t)(t_size - 1)) : 0;
    int to = (t_rank + shift) % t_size, from = (t_rank - shift + t_size) % t_size;
    size_t mis = round % 8;

    t_fill(src + mis, bytes, t_seed(PUT_DATA, (uint64_t)t_rank, round));
    CHECK(gpurma_put(w, to, off, src + mis, bytes));
    CHECK(gpurma_flush(w, to));
    CHECK(gpurma_quiet(w));
    CHECK(gpurma_barrier(t_world));

    /* Target side: exactly [off, off+bytes) changed, to what `from` sent. */
    t_fill(want, bytes, t_seed(PUT_DATA, (uint64_t)from, round));
    t_verify_window(win, WIN_LEN, off, want, bytes, "put", from);

    /* Origin side: read the range back, widened into the poison around it. */
    size_t lo = off < 13 ? off : 13, hi = WIN_LEN - off - bytes < 11 ? WIN_LEN - off - bytes : 11;
    size_t span = lo + bytes + hi;
    unsigned char *d = dst + GUARD + mis;
    memset(dst, T_POISON ^ 0xFF, span + 2 * GUARD + 8);
    CHECK(gpurma_get(w, to, d, off - lo, span));
    t_verify_fill(dst, T_POISON ^ 0xFF, GUARD + mis, "get: before the destination", to, 0);
    t_verify_fill(d, T_POISON, lo, "get: poison below the put", to, off - lo);
    t_fill(want, bytes, t_seed(PUT_DATA, (uint64_t)t_rank, round));
    t_verify(d + lo, want, bytes, "get", to, off);
    t_verify_fill(d + lo + bytes, T_POISON, hi, "get: poison above the put", to, off + bytes);
    t_verify_fill(d + span, T_POISON ^ 0xFF, GUARD, "get: after the destination", to, off);

    /* Nobody may read my window while I restore it, nor write it before. */
    CHECK(gpurma_barrier(t_world));
    memset(win + off, T_POISON, bytes);
    CHECK(gpurma_barrier(t_world));
}

/* Every rank writes its own slot of every window at once. */
static void all_to_all(gpurma_win_t w, size_t round, size_t bytes)
{
    size_t slot = bytes + 5; /* odd slot starts */
    for (int k = 0; k < t_size; k++) {
        int peer = (t_rank + k) % t_size;
        t_fill(src, bytes, t_seed(ALL_DATA, (uint64_t)t_rank * 1000 + (uint64_t)peer, round));
        CHECK(gpurma_put(w, peer, 3 + (size_t)t_rank * slot, src, bytes));
        CHECK(gpurma_flush(w, peer)); /* src is refilled next: it must be reusable */
    }
    CHECK(gpurma_quiet(w));
    CHECK(gpurma_barrier(t_world));
    for (int o = 0; o < t_size; o++) {
        size_t at = 3 + (size_t)o * slot;
        t_fill(want, bytes, t_seed(ALL_DATA, (uint64_t)o * 1000 + (uint64_t)t_rank, round));
        t_verify(win + at, want, bytes, "all-to-all put", o, at);
        t_verify_fill(win + at + bytes, T_POISON, 5, "all-to-all gap", o, at + bytes);
    }
    t_verify_fill(win, T_POISON, 3, "all-to-all head", t_rank, 0);
    size_t end = 3 + (size_t)t_size * slot;
    t_verify_fill(win + end, T_POISON, WIN_LEN - end, "all-to-all tail", t_rank, end);
    CHECK(gpurma_barrier(t_world));
    memset(win, T_POISON, end);
    CHECK(gpurma_barrier(t_world));
}

/* put_value stores the low 1, 2, 4 or 8 bytes of a value, nothing more. */
static void put_values(gpurma_win_t w)
{
    static const struct {
        size_t off, bytes;
    } spots[] = {{1, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 8}, {28, 4}, {34, 2}, {37, 1}, {63, 1}};
    const size_t nspots = sizeof(spots) / sizeof(spots[0]);
    int to = (t_rank + 1) % t_size, from = (t_rank - 1 + t_size) % t_size;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t s = t_seed(VALUE_DATA, (uint64_t)t_rank, (uint64_t)pass);
        for (size_t i = 0; i < nspots; i++)
            CHECK(gpurma_put_value(w, to, 128 + spots[i].off, t_splitmix64(&s), spots[i].bytes));
        CHECK(gpurma_barrier(t_world));
        unsigned char expect[64];
        memset(expect, T_POISON, sizeof(expect));
        s = t_seed(VALUE_DATA, (uint64_t)from, (uint64_t)pass);
        for (size_t i = 0; i < nspots; i++) {
            uint64_t v = t_splitmix64(&s); /* little-endian: low bytes first */
            memcpy(expect + spots[i].off, &v, spots[i].bytes);
        }
        t_verify_window(win, WIN_LEN, 128, expect, sizeof(expect), "put_value", from);
        CHECK(gpurma_barrier(t_world));
        memset(win + 128, T_POISON, sizeof(expect));
        CHECK(gpurma_barrier(t_world));
    }
}

int main(void)
{
    t_init("test_put_get", 0);
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, &base, &w));
    T_ASSERT(base != NULL && gpurma_win_base(w) == base, "window base %p / %p", base,
             gpurma_win_base(w));
    for (int p = 0; p < t_size; p++)
        T_ASSERT(gpurma_win_size(w, p) == WIN_LEN, "win_size(%d) = %zu", p, gpurma_win_size(w, p));
    win = base;
    memset(win, T_POISON, WIN_LEN);
    src = t_malloc(WIN_LEN + 16);
    want = t_malloc(WIN_LEN);
    dst = t_malloc(WIN_LEN + 2 * GUARD + 16);
    CHECK(gpurma_barrier(t_world));

    size_t round = 0;
    for (size_t i = 0; i < NSIZES; i++) {
        one_round(w, round++, sizes[i], 0);
        one_round(w, round++, sizes[i], (i * 2654435761u) % 4093 | 1);
        if (sizes[i] <= 4096) /* small ones also right at the end of the window */
            one_round(w, round++, sizes[i], WIN_LEN - sizes[i]);
    }

    /* Zero bytes is a valid no-op, even at the very end of the window. */
    CHECK(gpurma_put(w, (t_rank + 1) % t_size, WIN_LEN, src, 0));
    CHECK(gpurma_get(w, (t_rank + 1) % t_size, dst, WIN_LEN, 0));
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(win, T_POISON, WIN_LEN, "zero-byte put", t_rank, 0);
    CHECK(gpurma_barrier(t_world));

    size_t slot_max = (WIN_LEN - 3) / (size_t)t_size - 5;
    const size_t a2a[] = {3, 4097, 65537};
    for (size_t i = 0; i < 3; i++)
        all_to_all(w, i, a2a[i] < slot_max ? a2a[i] : slot_max);
    put_values(w);

    CHECK(gpurma_win_free(&w));
    T_ASSERT(w == NULL, "win_free did not clear the handle");
    free(src);
    free(want);
    free(dst);
    char detail[64];
    snprintf(detail, sizeof(detail), "%zu put/get rounds", round);
    return t_finish(detail);
}
