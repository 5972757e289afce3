/*
 * put_demo.c - gpurma in one page: one-sided puts around a ring, checked
 * byte for byte, then what they cost.
 *
 *   mpirun -np 4 ./put_demo
 *
 * 1. Every rank puts random bytes into its right neighbour's window with
 *    put_signal and waits for the data from its left; the signal says the
 *    data is complete. Each rank checks every byte and reports to rank 0
 *    through rank 0's window (a put_signal that adds 1 to a counter).
 * 2. Ranks 0 and 1 measure the one-way latency of an 8-byte put_signal
 *    (half of a ping-pong round trip) and the bandwidth of 1 MiB puts; the
 *    other ranks wait at a barrier meanwhile. With more ranks than cores
 *    they share the cores, which the latency shows.
 *
 * Exit status: 0 when every byte arrived intact.
 */
#include <gpurma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING_BYTES    ((1u << 20) + 13) /* odd on purpose: no size is special */
#define BW_BYTES      (1u << 20)
#define BW_PUTS       64
#define BW_REPS       9
#define LAT_BATCHES   9
#define LAT_ROUNDS    2000

/* Signal slots of the window, each with one purpose. */
enum { SIG_RING = 0, SIG_REPORT, SIG_PING, SIG_PONG, SIG_BW_DONE, SIG_BW_ACK };

/* What each rank tells rank 0 about the data it received. */
typedef struct {
    uint64_t mismatches;
    uint64_t first_bad; /* offset of the first wrong byte */
    uint8_t  got, want;
    uint8_t  pad[6];
} report_t;

static gpurma_ctx_t ctx;

/* The message is read before anything else is called: it belongs to the
 * failed call (queries such as gpurma_rank leave it alone, and give -1
 * when init itself failed). */
#define CHECK(call)                                                                \
    do {                                                                           \
        if ((call) != GPURMA_SUCCESS) {                                            \
            const char *why_ = gpurma_last_error_message(ctx);                     \
            fprintf(stderr, "rank %d: %s: %s\n", gpurma_rank(ctx), #call, why_);   \
            gpurma_abort(ctx, 1, #call);                                           \
        }                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Bytes that only the given rank's seed produces; any rank can regenerate
 * another's to check what arrived. */
static void random_bytes(unsigned char *p, size_t n, unsigned rank)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (rank + 1);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 32);
    }
}

int main(void)
{
    CHECK(gpurma_init(NULL, &ctx));
    int me = gpurma_rank(ctx), n = gpurma_size(ctx);
    gpurma_team_t world = gpurma_team_world(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;

    /* Window: the inbox, then one report slot per rank (used on rank 0). */
    size_t reports_off = (RING_BYTES + 63) / 64 * 64;
    char *win_base;
    gpurma_win_t win;
    CHECK(gpurma_win_allocate(world, reports_off + (size_t)n * sizeof(report_t), NULL,
                              (void **)&win_base, &win));
    unsigned char *inbox = (unsigned char *)win_base;

    unsigned char *mine = malloc(RING_BYTES), *expected = malloc(RING_BYTES);
    if (!mine || !expected)
        gpurma_abort(ctx, 1, "out of memory");
    random_bytes(mine, RING_BYTES, (unsigned)me);
    random_bytes(expected, RING_BYTES, (unsigned)left);
    memset(inbox, 0xee, RING_BYTES); /* poison: a missing byte cannot look right */
    CHECK(gpurma_barrier(world));

    /* ------------------------------------------------ 1. ring, verified */
    CHECK(gpurma_put_signal(win, right, 0, mine, RING_BYTES, SIG_RING, GPURMA_SIGNAL_SET, 1));
    CHECK(gpurma_wait_until(win, SIG_RING, GPURMA_CMP_EQ, 1));
    report_t rep = {0};
    for (size_t i = 0; i < RING_BYTES; i++) {
        if (inbox[i] != expected[i] && rep.mismatches++ == 0) {
            rep.first_bad = i;
            rep.got = inbox[i];
            rep.want = expected[i];
        }
    }
    CHECK(gpurma_put_signal(win, 0, reports_off + (size_t)me * sizeof(rep), &rep, sizeof(rep),
                            SIG_REPORT, GPURMA_SIGNAL_ADD, 1));
    int correct = 1;
    if (me == 0) {
        CHECK(gpurma_wait_until(win, SIG_REPORT, GPURMA_CMP_EQ, (uint64_t)n));
        const report_t *all = (const report_t *)(win_base + reports_off);
        for (int r = 0; r < n; r++) {
            if (!all[r].mismatches)
                continue;
            printf("correct: NO: rank %d received %llu wrong bytes from rank %d; first at "
                   "offset %llu: 0x%02x instead of 0x%02x\n",
                   r, (unsigned long long)all[r].mismatches, (r + n - 1) % n,
                   (unsigned long long)all[r].first_bad, all[r].got, all[r].want);
            correct = 0;
        }
        if (correct)
            printf("correct: yes (%d rank%s, each put %u random bytes to its right neighbour; "
                   "every byte checked)\n", n, n == 1 ? "" : "s", RING_BYTES);
    }
    if (rep.mismatches)
        correct = 0;

    /* ------------------------------------------ 2. latency and bandwidth */
    CHECK(gpurma_barrier(world));
    double latency_us = 0, bandwidth_gbs = 0;
    if (n >= 2 && me < 2) {
        int peer = 1 - me;
        uint64_t word = 0x0123456789abcdefull, round = 0;
        /* Ping-pong of 8-byte put_signals in batches; batch 0 warms up, and
         * the median batch is reported (other processes may share the cores). */
        double batch_us[LAT_BATCHES];
        for (int b = 0; b <= LAT_BATCHES; b++) {
            double t0 = now_s();
            for (int i = 0; i < LAT_ROUNDS; i++) {
                round++;
                if (me == 0) {
                    CHECK(gpurma_put_signal(win, peer, 0, &word, 8, SIG_PING, GPURMA_SIGNAL_SET,
                                            round));
                    CHECK(gpurma_wait_until(win, SIG_PONG, GPURMA_CMP_EQ, round));
                } else {
                    CHECK(gpurma_wait_until(win, SIG_PING, GPURMA_CMP_EQ, round));
                    CHECK(gpurma_put_signal(win, peer, 0, &word, 8, SIG_PONG, GPURMA_SIGNAL_SET,
                                            round));
                }
            }
            if (b > 0)
                batch_us[b - 1] = (now_s() - t0) * 1e6 / (2.0 * LAT_ROUNDS);
        }
        latency_us = median(batch_us, LAT_BATCHES);

        /* Rank 0 puts 64 blocks of 1 MiB, flushes and signals; rank 1
         * acknowledges, so each repetition covers data the receiver has
         * seen. Repetition 0 warms up; the median repetition is reported. */
        double rep_gbs[BW_REPS];
        for (uint64_t r = 0; r <= BW_REPS; r++) {
            double t0 = now_s();
            if (me == 0) {
                for (int k = 0; k < BW_PUTS; k++)
                    CHECK(gpurma_put(win, 1, 0, mine, BW_BYTES));
                CHECK(gpurma_flush(win, 1));
                CHECK(gpurma_signal(win, 1, SIG_BW_DONE, GPURMA_SIGNAL_SET, r + 1));
                CHECK(gpurma_wait_until(win, SIG_BW_ACK, GPURMA_CMP_EQ, r + 1));
            } else {
                CHECK(gpurma_wait_until(win, SIG_BW_DONE, GPURMA_CMP_EQ, r + 1));
                CHECK(gpurma_signal(win, 0, SIG_BW_ACK, GPURMA_SIGNAL_SET, r + 1));
            }
            if (r > 0)
                rep_gbs[r - 1] = (double)BW_BYTES * BW_PUTS / (now_s() - t0) / 1e9;
        }
        bandwidth_gbs = median(rep_gbs, BW_REPS);
        /* The puts overwrote rank 1's inbox with rank 0's bytes: check them too. */
        if (me == 1 && memcmp(inbox, expected, BW_BYTES)) {
            printf("correct: NO: rank 1's inbox differs from rank 0's data after the "
                   "bandwidth test\n");
            correct = 0;
        }
    }

    if (me == 0) {
        if (n >= 2) {
            printf("\n  %-34s %12s\n", "measure (ranks 0 and 1)", "value");
            printf("  %-34s %9.3f us\n", "put_signal latency, 8 B, one-way", latency_us);
            printf("  %-34s %7.2f GB/s\n", "put bandwidth, 1 MiB puts", bandwidth_gbs);
            printf("\nput_demo: %d ranks, correct: %s, latency %.3f us, bandwidth %.2f GB/s\n",
                   n, correct ? "yes" : "NO", latency_us, bandwidth_gbs);
        } else {
            printf("put_demo: 1 rank, correct: %s (latency and bandwidth need 2 ranks)\n",
                   correct ? "yes" : "NO");
        }
    }

    CHECK(gpurma_win_free(&win));
    free(mine);
    free(expected);
    CHECK(gpurma_finalize(ctx));
    return correct ? 0 : 1;
}
