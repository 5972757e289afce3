/*
 * test_win_create.c - windows over memory the program already has
 * (gpurma_win_create on malloc'd, odd-aligned memory; one rank offers none).
 *
 * Peers cannot map such memory, so the library moves data another way
 * (process_vm_writev on the host backend); the semantics must not change:
 * puts and gets of every size land exactly, with the poison around them
 * intact; put + signal orders data before the signal; atomics stay atomic
 * under contention from every rank, including the owner's own.
 */
#include "common.h"

enum { CREATE_DATA = 80 };

#define ROUNDS_SIGNAL 300
#define N_ADD         3000
#define N_CAS         500

static const size_t sizes[] = {
    1, 2, 3, 7, 8, 15, 16, 17, 63, 64, 65, 255, 4095, 4096, 4097, 65537, (1u << 20) + 3};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Rank 1 offers no memory at all (size 0, NULL base) when there are 3+ ranks. */
static size_t size_of(int rank, int nranks)
{
    return nranks >= 3 && rank == 1 ? 0 : (1u << 20) + 4099 + (size_t)rank * 8;
}

int main(void)
{
    t_init("test_win_create", 0);
    size_t len = size_of(t_rank, t_size);
    /* The user's memory: heap, at an odd address on purpose. */
    unsigned char *block = len ? t_malloc(len + 1) : NULL;
    unsigned char *mem = len ? block + 1 : NULL;
    if (len)
        memset(mem, T_POISON, len);
    gpurma_win_t w;
    CHECK(gpurma_win_create(t_world, mem, len, NULL, &w));
    T_ASSERT(gpurma_win_base(w) == mem, "win_base %p, expected %p", gpurma_win_base(w),
             (void *)mem);
    for (int p = 0; p < t_size; p++)
        T_ASSERT(gpurma_win_size(w, p) == size_of(p, t_size), "win_size(%d) = %zu", p,
                 gpurma_win_size(w, p));
    CHECK(gpurma_barrier(t_world));

    size_t maxlen = (1u << 20) + 4099 + 64 * 8;
    unsigned char *src = t_malloc(maxlen), *want = t_malloc(maxlen), *back = t_malloc(maxlen + 16);

    /* Puts and gets at every size class, each rank into rank + k. */
    for (size_t i = 0; i < NSIZES; i++) {
        int k = t_size > 1 ? 1 + (int)(i % (size_t)(t_size - 1)) : 0;
        int to = (t_rank + k) % t_size, from = (t_rank - k + t_size) % t_size;
        size_t to_len = size_of(to, t_size);
        size_t bytes = sizes[i];
        size_t off = (i * 131 + 5) % 3001;
        t_fill(src, bytes, t_seed(CREATE_DATA, (uint64_t)t_rank, i));
        if (to_len)
            CHECK(gpurma_put(w, to, off, src, bytes));
        else
            EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, to, off, src, bytes));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put(w, to, to_len - bytes + 1, src, bytes));
        CHECK(gpurma_barrier(t_world));
        if (len) {
            t_fill(want, bytes, t_seed(CREATE_DATA, (uint64_t)from, i));
            t_verify_window(mem, len, off, want, bytes, "put into created window", from);
        }
        if (to_len) {
            memset(back, 0x11, bytes + 16);
            CHECK(gpurma_get(w, to, back + 8, off, bytes));
            t_verify_fill(back, 0x11, 8, "get: below the destination", to, off);
            t_verify(back + 8, src, bytes, "get from created window", to, off);
            t_verify_fill(back + 8 + bytes, 0x11, 8, "get: above the destination", to, off);
        }
        CHECK(gpurma_barrier(t_world));
        if (len)
            memset(mem + off, T_POISON, bytes);
        CHECK(gpurma_barrier(t_world));
    }

    /* put + signal ring over the created window (signals live in the
     * library's memory, the data in the user's), among the ranks that
     * offered memory. */
    if (len) {
        int next = t_rank, prev = t_rank;
        do
            next = (next + 1) % t_size;
        while (!size_of(next, t_size));
        do
            prev = (prev - 1 + t_size) % t_size;
        while (!size_of(prev, t_size));
        for (uint64_t i = 0; i < ROUNDS_SIGNAL; i++) {
            size_t bytes = 1 + (size_t)(i * 977) % 70001, off = (size_t)(i * 31) % 4096;
            CHECK(gpurma_wait_until(w, 1, GPURMA_CMP_GE, i)); /* credit from next */
            t_fill(src, bytes, t_seed(CREATE_DATA + 1, (uint64_t)t_rank, i));
            if (i % 2) {
                CHECK(gpurma_put_signal(w, next, off, src, bytes, 0, GPURMA_SIGNAL_ADD, 1));
            } else {
                CHECK(gpurma_put(w, next, off, src, bytes));
                CHECK(gpurma_signal(w, next, 0, GPURMA_SIGNAL_SET, i + 1));
            }
            CHECK(gpurma_wait_until(w, 0, GPURMA_CMP_EQ, i + 1));
            t_fill(want, bytes, t_seed(CREATE_DATA + 1, (uint64_t)prev, i));
            t_verify(mem + off, want, bytes, "created window data after its signal", prev, off);
            memset(mem + off, T_POISON, bytes);
            CHECK(gpurma_signal(w, prev, 1, GPURMA_SIGNAL_ADD, 1));
        }
        CHECK(gpurma_wait_until(w, 1, GPURMA_CMP_EQ, ROUNDS_SIGNAL));
    }
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&w));
    if (len) /* win_free leaves the user's memory alone */
        t_verify_fill(mem, T_POISON, len, "user memory after win_free", t_rank, 0);

    /* Atomics on a created window (aligned memory, so the owner can read
     * the cells as integers): everyone hammers rank 0's cells, the owner
     * itself among them, mixing fetch_add and compare_swap. */
    uint64_t *cells = aligned_alloc(64, 64);
    memset(cells, 0, 64);
    cells[1] = 0xFFFFFFFFFFFFF000ull;
    gpurma_win_t wa;
    CHECK(gpurma_win_create(t_world, cells, 64, NULL, &wa));
    CHECK(gpurma_barrier(t_world));
    uint64_t guess = 0, won = 0; /* a wrong first guess: the CAS tells the value */
    for (int i = 0; i < N_ADD || won < N_CAS; i++) {
        if (i < N_ADD) {
            uint64_t old;
            CHECK(gpurma_atomic_fetch_add(wa, 0, 0, 1, &old));
            T_ASSERT(old < (uint64_t)t_size * N_ADD, "fetch_add returned %" PRIu64, old);
        }
        if (won < N_CAS) {
            uint64_t old;
            CHECK(gpurma_atomic_compare_swap(wa, 0, 8, guess, guess + 1, &old));
            won += old == guess;
            guess = old == guess ? old + 1 : old;
        }
    }
    /* Swap: the values returned plus the final one are each token once
     * (the initial 0 included): counted with fetch_adds at the owner. */
    const int owner = t_size - 1;
    uint64_t token = 0xABC0000000000000ull + (uint64_t)t_rank + 1, old;
    CHECK(gpurma_atomic_swap(wa, owner, 16, token, &old));
    T_ASSERT(old == 0 ||
                 ((old & ~0xFFull) == 0xABC0000000000000ull && (old & 0xFF) <= (uint64_t)t_size),
             "swap returned %#" PRIx64, old);
    CHECK(gpurma_atomic_fetch_add(wa, owner, 24, old == 0, NULL));
    CHECK(gpurma_atomic_fetch_add(wa, owner, 32, old & 0xFF, NULL));
    CHECK(gpurma_barrier(t_world));
    if (t_rank == 0) {
        T_ASSERT(cells[0] == (uint64_t)t_size * N_ADD, "fetch_add total %" PRIu64 ", expected %d",
                 cells[0], t_size * N_ADD);
        T_ASSERT(cells[1] == 0xFFFFFFFFFFFFF000ull + (uint64_t)t_size * N_CAS,
                 "compare_swap total %#" PRIx64, cells[1]);
    }
    if (t_rank == owner) {
        uint64_t n = (uint64_t)t_size;
        T_ASSERT(cells[3] == 1, "%" PRIu64 " swaps returned the initial value", cells[3]);
        T_ASSERT(cells[4] + (cells[2] & 0xFF) == n * (n + 1) / 2,
                 "swapped tokens: returned sum %" PRIu64 " + final %" PRIu64 " != %" PRIu64,
                 cells[4], cells[2] & 0xFF, n * (n + 1) / 2);
    }
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&wa));

    free(cells);
    free(block);
    free(src);
    free(want);
    free(back);
    return t_finish(NULL);
}
