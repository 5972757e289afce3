/*
 * test_atomics.c - 64-bit window atomics under contention from every rank.
 *
 * fetch_add: all ranks add 1 to one slot N times; the total is exact and the
 *   returned old values are all distinct (each one marks its own byte of a
 *   map in the owner's window, and every byte must end up marked).
 * compare_swap: a lock-free increment loop; same checks on the values won.
 * swap: every rank swaps in its own tokens; the old values plus the final
 *   value are every token exactly once.
 * Start values sit just below a 32-bit boundary, and a second slot adds
 *   values with high bits, so a 32-bit or torn implementation is caught.
 */
#include "common.h"

enum { ATOMIC_DATA = 40 };

#define N_ADD  40000
#define N_CAS  10000
#define N_SWAP 20000

#define OFF_ADD  0
#define OFF_CAS  8
#define OFF_SWAP 16
#define OFF_WIDE 24
#define OFF_MAPS 64

static const uint64_t add_start = 0x00000000FFFFFC00ull;
static const uint64_t cas_start = 0x7FFFFFFFFFFFFF00ull;
static const uint64_t wide_step = 0x0000000100000001ull;

static size_t map_add, map_cas, map_swap; /* offsets of the three maps */

static void mark(gpurma_win_t w, int owner, size_t map, uint64_t index, uint64_t limit,
                 const char *what)
{
    T_ASSERT(index < limit, "%s: value index %" PRIu64 " out of range [0, %" PRIu64 ")", what,
             index, limit);
    CHECK(gpurma_put_value(w, owner, map + index, 1, 1));
}

static void check_map(const unsigned char *win, size_t map, uint64_t n, const char *what)
{
    /* n values were returned into n slots: a hole means a duplicate. */
    for (uint64_t i = 0; i < n; i++)
        T_ASSERT(win[map + i] == 1,
                 "%s: value index %" PRIu64 " never returned (byte 0x%02x), so another one was "
                 "returned twice",
                 what, i, win[map + i]);
}

int main(void)
{
    t_init("test_atomics", 0);
    const uint64_t n = (uint64_t)t_size;
    const int add_owner = t_size - 1, cas_owner = 0, swap_owner = 1 % t_size;
    map_add = OFF_MAPS;
    map_cas = map_add + n * N_ADD;
    map_swap = map_cas + n * N_CAS;
    size_t win_len = (map_swap + n * N_SWAP + 1 + 7) / 8 * 8;

    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, win_len, NULL, &base, &w));
    unsigned char *win = base;
    uint64_t *slots = base;
    memset(win, 0, win_len);
    slots[OFF_ADD / 8] = add_start;
    slots[OFF_CAS / 8] = cas_start;
    slots[OFF_SWAP / 8] = 0; /* token 0 is the initial value */
    slots[OFF_WIDE / 8] = 0;
    CHECK(gpurma_barrier(t_world));

    /* Interleave the three kinds so that they contend with each other too. */
    uint64_t cas_guess = 0, cas_won = 0, swaps = 0, adds = 0;
    uint64_t rng = t_seed(ATOMIC_DATA, (uint64_t)t_rank, 0);
    while (adds < N_ADD || cas_won < N_CAS || swaps < N_SWAP) {
        uint64_t pick = t_below(&rng, 3);
        if (pick == 0 && adds < N_ADD) {
            uint64_t old;
            CHECK(gpurma_atomic_fetch_add(w, add_owner, OFF_ADD, 1, &old));
            mark(w, add_owner, map_add, old - add_start, n * N_ADD, "fetch_add");
            CHECK(gpurma_atomic_fetch_add(w, (int)(adds % n), OFF_WIDE, wide_step,
                                          adds % 3 ? NULL : &old));
            adds++;
        } else if (pick == 1 && cas_won < N_CAS) {
            uint64_t old;
            CHECK(
                gpurma_atomic_compare_swap(w, cas_owner, OFF_CAS, cas_guess, cas_guess + 1, &old));
            if (old == cas_guess) { /* we moved it from old to old + 1 */
                mark(w, cas_owner, map_cas, old - cas_start, n * N_CAS, "compare_swap");
                cas_won++;
            }
            cas_guess = old == cas_guess ? old + 1 : old;
        } else if (pick == 2 && swaps < N_SWAP) {
            uint64_t token = (uint64_t)t_rank * N_SWAP + swaps + 1, old;
            CHECK(gpurma_atomic_swap(w, swap_owner, OFF_SWAP, token, &old));
            mark(w, swap_owner, map_swap, old, n * N_SWAP + 1, "swap");
            swaps++;
        }
    }
    CHECK(gpurma_quiet(w));
    CHECK(gpurma_barrier(t_world));

    if (t_rank == add_owner) {
        T_ASSERT(slots[OFF_ADD / 8] == add_start + n * N_ADD,
                 "fetch_add total %#" PRIx64 ", expected %#" PRIx64, slots[OFF_ADD / 8],
                 add_start + n * N_ADD);
        check_map(win, map_add, n * N_ADD, "fetch_add old values");
    }
    if (t_rank == cas_owner) {
        T_ASSERT(slots[OFF_CAS / 8] == cas_start + n * N_CAS,
                 "compare_swap total %#" PRIx64 ", expected %#" PRIx64, slots[OFF_CAS / 8],
                 cas_start + n * N_CAS);
        check_map(win, map_cas, n * N_CAS, "compare_swap values won");
    }
    if (t_rank == swap_owner) {
        uint64_t last = slots[OFF_SWAP / 8];
        T_ASSERT(last <= n * N_SWAP && win[map_swap + last] == 0,
                 "final swap value %" PRIu64 " was also returned by a swap", last);
        win[map_swap + last] = 1;
        check_map(win, map_swap, n * N_SWAP + 1, "swapped tokens");
    }
    /* Rank r's wide slot got the adds with adds % n == r from every rank. */
    uint64_t per_rank = 0;
    for (uint64_t a = 0; a < N_ADD; a++)
        per_rank += a % n == (uint64_t)t_rank;
    T_ASSERT(slots[OFF_WIDE / 8] == per_rank * n * wide_step,
             "wide fetch_add total %#" PRIx64 ", expected %#" PRIx64, slots[OFF_WIDE / 8],
             per_rank * n * wide_step);

    /* Every kind from every rank on its own slot: old values are exact. */
    CHECK(gpurma_barrier(t_world));
    int peer = (t_rank + 1) % t_size;
    uint64_t old;
    CHECK(gpurma_atomic_swap(w, peer, OFF_WIDE, 0x0123456789ABCDEFull, &old));
    CHECK(gpurma_atomic_compare_swap(w, peer, OFF_WIDE, 1, 2, &old));
    T_ASSERT(old == 0x0123456789ABCDEFull, "failed compare_swap returned %#" PRIx64, old);
    CHECK(gpurma_atomic_compare_swap(w, peer, OFF_WIDE, old, ~old, &old));
    CHECK(gpurma_atomic_fetch_add(w, peer, OFF_WIDE, 2, &old));
    T_ASSERT(old == ~0x0123456789ABCDEFull, "fetch_add after compare_swap saw %#" PRIx64, old);
    CHECK(gpurma_barrier(t_world));
    T_ASSERT(slots[OFF_WIDE / 8] == ~0x0123456789ABCDEFull + 2, "final value %#" PRIx64,
             slots[OFF_WIDE / 8]);

    CHECK(gpurma_win_free(&w));
    char detail[96];
    snprintf(detail, sizeof(detail), "%d fetch_add, %d compare_swap wins, %d swap per rank", N_ADD,
             N_CAS, N_SWAP);
    return t_finish(detail);
}
