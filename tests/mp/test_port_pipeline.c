/*
 * test_port_pipeline.c - many puts in flight, and a fetch-add storm, what
 * the port engine pipelines (its FIFO, UCX's active messages across nodes).
 * Runs through every engine: engines-port.sh and engines-nodes.sh rerun it
 * with the port engine forced and with the ranks split over two nodes.
 *
 * puts: each round, every rank puts NPUTS pieces of random data to every
 *   rank (itself too) without a flush in between: sizes around the UCX
 *   message bound (8 KiB and 64 KiB, each +-1), odd sizes from 1 byte to
 *   200 KB and random mid sizes; each piece at an odd offset in the
 *   origin's region of the target's window, with poison in the gaps. The
 *   last piece is a put_signal: once a target has seen every origin's
 *   signal, every byte of every region must be exact, poison included.
 * fetch_add: every rank adds random values with high bits to a counter of
 *   random ranks; the totals are exact, and a second counter, incremented
 *   by 1, returns strictly increasing old values to each origin.
 */
#include "common.h"

enum { PIPE_DATA = 60, PIPE_SIZES, PIPE_ADDS };

#define NPUTS  40
#define ROUNDS 2
#define NADD   400 /* each one a round trip: 4 ranks over 2 "nodes" on 2 cores */
#define SIG    0

static const size_t fixed_sizes[] = {1,     3,     4095,  8191,   8192,   8193,  12345,
                                     32768, 65535, 65536, 65537, 131071, 200003};
#define NFIXED (sizeof(fixed_sizes) / sizeof(fixed_sizes[0]))
#define MID_MIN (8u << 10)
#define MID_MAX ((64u << 10) + 1)
#define GAP_MAX 15

/* Every rank computes the same sizes and offsets for a round. */
static size_t layout(int round, size_t *size, size_t *off)
{
    uint64_t rng = t_seed(PIPE_SIZES, 0, (uint64_t)round);
    size_t at = 0;
    for (int k = 0; k < NPUTS; k++) {
        size[k] = k < (int)NFIXED ? fixed_sizes[k]
                                  : MID_MIN + t_below(&rng, MID_MAX - MID_MIN + 1);
        at += 1 + t_below(&rng, GAP_MAX); /* poison before each piece, odd offsets */
        off[k] = at;
        at += size[k];
    }
    return at + 1 + GAP_MAX;
}

/* The largest region any round can need. */
static size_t region_bound(void)
{
    size_t n = (NPUTS - NFIXED) * (size_t)MID_MAX + (NPUTS + 2) * (size_t)(1 + GAP_MAX);
    for (size_t i = 0; i < NFIXED; i++)
        n += fixed_sizes[i];
    return n;
}

static uint64_t piece_seed(int origin, int target, int round, int k)
{
    return t_seed(PIPE_DATA, (uint64_t)origin,
                  ((uint64_t)round << 32) | ((uint64_t)target << 8) | (uint64_t)k);
}

static void round_of_puts(gpurma_win_t w, unsigned char *win, size_t region, int round,
                          unsigned char *const *src, unsigned char *want)
{
    size_t size[NPUTS], off[NPUTS];
    size_t used = layout(round, size, off);
    T_ASSERT(used <= region, "round %d needs %zu bytes of region, %zu reserved", round, used,
             region);
    memset(win, T_POISON, region * (size_t)t_size);
    CHECK(gpurma_barrier(t_world));

    for (int t = 0; t < t_size; t++) {
        int target = (t_rank + t) % t_size; /* each rank starts with a different target */
        for (int k = 0; k < NPUTS; k++) {
            unsigned char *p = src[target] + off[k];
            t_fill(p, size[k], piece_seed(t_rank, target, round, k));
            size_t dst = (size_t)t_rank * region + off[k];
            if (k < NPUTS - 1)
                CHECK(gpurma_put(w, target, dst, p, size[k]));
            else
                CHECK(gpurma_put_signal(w, target, dst, p, size[k], SIG, GPURMA_SIGNAL_ADD, 1));
        }
    }
    /* Every origin's signal came after its puts: all of it is here. */
    CHECK(gpurma_wait_until(w, SIG, GPURMA_CMP_GE, (uint64_t)t_size * (uint64_t)(round + 1)));
    for (int o = 0; o < t_size; o++) {
        const unsigned char *r = win + (size_t)o * region;
        size_t at = 0;
        for (int k = 0; k < NPUTS; k++) {
            t_verify_fill(r + at, T_POISON, off[k] - at, "gap before a piece", o,
                          (size_t)o * region + at);
            t_fill(want, size[k], piece_seed(o, t_rank, round, k));
            t_verify(r + off[k], want, size[k], "pipelined put", o, (size_t)o * region + off[k]);
            at = off[k] + size[k];
        }
        t_verify_fill(r + at, T_POISON, region - at, "poison after the last piece", o,
                      (size_t)o * region + at);
    }
    /* Sources are reused next round: remote completion first. */
    CHECK(gpurma_quiet(w));
    CHECK(gpurma_barrier(t_world));
}

/* Counters at the end of the window: the sum, the +1 counter, then what
 * each origin says it added here. */
static void fetch_add_storm(gpurma_win_t w, uint64_t *counters, size_t base, int round)
{
    const size_t off_sum = 0, off_one = 8, off_said = 16;
    memset(counters, 0, (2 + (size_t)t_size) * 8);
    counters[0] = 0x00000000FFFFFF00ull; /* carries across 32 bits at once */
    CHECK(gpurma_barrier(t_world));

    uint64_t *added = t_malloc((size_t)t_size * sizeof(uint64_t));
    uint64_t *last_one = t_malloc((size_t)t_size * sizeof(uint64_t));
    memset(added, 0, (size_t)t_size * sizeof(uint64_t));
    for (int t = 0; t < t_size; t++)
        last_one[t] = UINT64_MAX;
    uint64_t rng = t_seed(PIPE_ADDS, (uint64_t)t_rank, (uint64_t)round);
    for (int i = 0; i < NADD; i++) {
        int t = (int)t_below(&rng, (uint64_t)t_size);
        uint64_t v = (t_splitmix64(&rng) & 0x000000FF000000FFull) | 1, old;
        CHECK(gpurma_atomic_fetch_add(w, t, base + off_sum, v, NULL));
        added[t] += v;
        CHECK(gpurma_atomic_fetch_add(w, t, base + off_one, 1, &old));
        T_ASSERT(last_one[t] == UINT64_MAX || old > last_one[t],
                 "fetch_add on rank %d returned %" PRIu64 " after %" PRIu64, t, old, last_one[t]);
        last_one[t] = old;
    }
    for (int t = 0; t < t_size; t++)
        CHECK(gpurma_put(w, t, base + off_said + (size_t)t_rank * 8, &added[t], 8));
    CHECK(gpurma_quiet(w));
    CHECK(gpurma_barrier(t_world));

    uint64_t want = 0x00000000FFFFFF00ull;
    for (int o = 0; o < t_size; o++)
        want += counters[2 + o];
    T_ASSERT(counters[0] == want,
             "fetch_add total %#" PRIx64 ", the origins added up to %#" PRIx64, counters[0], want);
    free(added);
    free(last_one);
    CHECK(gpurma_barrier(t_world));
}

int main(void)
{
    t_init("test_port_pipeline", 0);
    size_t region = region_bound();
    size_t counters_base = (region * (size_t)t_size + 7) / 8 * 8;
    size_t win_len = counters_base + (2 + (size_t)t_size) * 8;
    gpurma_win_params_t wp = {.field_mask = GPURMA_WIN_FIELD_NUM_SIGNALS, .num_signals = 1};
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, win_len, &wp, &base, &w));
    unsigned char *win = base;

    unsigned char **src = t_malloc((size_t)t_size * sizeof(*src));
    for (int t = 0; t < t_size; t++)
        src[t] = t_malloc(region);
    unsigned char *want = t_malloc(MID_MAX > 200003 ? MID_MAX : 200003);

    for (int round = 0; round < ROUNDS; round++) {
        round_of_puts(w, win, region, round, src, want);
        fetch_add_storm(w, (uint64_t *)(win + counters_base), counters_base, round);
    }

    for (int t = 0; t < t_size; t++)
        free(src[t]);
    free(src);
    free(want);
    CHECK(gpurma_win_free(&w));
    char detail[128];
    snprintf(detail, sizeof(detail),
             "%d rounds of %d puts to every rank (1 B .. 200 KB), %d fetch_add pairs per rank",
             ROUNDS, NPUTS, NADD);
    return t_finish(detail);
}
