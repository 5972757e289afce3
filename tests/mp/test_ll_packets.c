/*
 * test_ll_packets.c - LL packets (data and flag in one store) from the
 * device header compiled as plain C: a reader that sees a round's flag must
 * see that round's data, for 8- and 16-byte packets and odd byte counts.
 *
 * Ring with two packet buffers per rank: round i goes into buffer i % 2 with
 * flag i + 1, so a sender fills one buffer while its receiver still reads
 * the other; a credit signal says when a buffer may be reused. Senders
 * sometimes split a round over "threads" called in reverse order, so later
 * packets land first. The reader copies the payload into a poisoned buffer
 * at a varying alignment and checks every byte and the poison around it.
 *
 * Then sizes whose packet footprint does not fit in size_t (near 2^62, 2^63
 * and SIZE_MAX) and offsets near SIZE_MAX: every packet call is refused at
 * the call with GPURMA_ERR_OUT_OF_BOUNDS, nothing lands in the target
 * window or in the windows allocated just before and after it, nothing is
 * pushed to a proxy (the port FIFOs' heads stay put), and flush and quiet
 * find nothing to report.
 */
#include "common.h"

#include "gpurma_device.h"

enum { SIG_ACK = 0 };
enum { LL_DATA = 20 };

#define ROUNDS  4000
#define MAX_PAY 4099
#define BUF_LEN 8448 /* >= 16-byte packets of MAX_PAY (8208) + the largest shift (32) */
#define GUARD   32

static const size_t pay_sizes[] = {1,  2,  3,  4,  5,   7,   8,   9,    13,   15,   16,   17,
                                   31, 63, 64, 65, 127, 255, 256, 1000, 1001, 4095, 4097, MAX_PAY};
#define NPAY (sizeof(pay_sizes) / sizeof(pay_sizes[0]))

static gpurma_status_t put_round(gpurma_dev_win_t dw, int peer, size_t off, const void *src,
                                 size_t bytes, uint32_t flag, int kind)
{
    const unsigned nthreads = 3;
    gpurma_status_t rc = GPURMA_SUCCESS;
    switch (kind) {
    case 0: return gpurma_dev_put_packets(dw, peer, off, src, bytes, flag);
    case 1: return gpurma_dev_put_packets16(dw, peer, off, src, bytes, flag);
    case 2:
        for (unsigned t = nthreads; t-- > 0 && !rc;)
            rc = gpurma_dev_put_packets_coop(dw, peer, off, src, bytes, flag, t, nthreads);
        return rc;
    default:
        for (unsigned t = nthreads; t-- > 0 && !rc;)
            rc = gpurma_dev_put_packets16_coop(dw, peer, off, src, bytes, flag, t, nthreads);
        return rc;
    }
}

static gpurma_status_t read_round(gpurma_dev_win_t dw, size_t off, void *dst, size_t bytes,
                                  uint32_t flag, int kind, int coop)
{
    int p16 = kind % 2;
    if (!coop)
        return p16 ? gpurma_dev_read_packets16(dw, off, dst, bytes, flag)
                   : gpurma_dev_read_packets(dw, off, dst, bytes, flag);
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (unsigned t = 0; t < 2 && !rc; t++)
        rc = p16 ? gpurma_dev_read_packets16_coop(dw, off, dst, bytes, flag, t, 2)
                 : gpurma_dev_read_packets_coop(dw, off, dst, bytes, flag, t, 2);
    return rc;
}

static void ring(gpurma_win_t w, gpurma_dev_win_t dw)
{
    int next = (t_rank + 1) % t_size, prev = (t_rank - 1 + t_size) % t_size;
    unsigned char *src = t_malloc(MAX_PAY + 8), *want = t_malloc(MAX_PAY);
    unsigned char *dst = t_malloc(MAX_PAY + 2 * GUARD + 8);
    for (uint64_t i = 0; i < ROUNDS; i++) {
        size_t bytes = pay_sizes[(i * 7 + i / NPAY) % NPAY];
        int kind = (int)(i % 4);
        size_t off = (i % 2) * BUF_LEN + ((i / 2) % 3) * 16; /* packet-aligned shifts */
        uint32_t flag = (uint32_t)i + 1;

        /* Buffer i % 2 was last used by round i - 2. */
        CHECK(gpurma_wait_until(w, SIG_ACK, GPURMA_CMP_GE, i >= 2 ? i - 1 : 0));
        size_t smis = i % 4;
        t_fill(src + smis, bytes, t_seed(LL_DATA, (uint64_t)t_rank, i));
        EXPECT_CODE(GPURMA_SUCCESS, put_round(dw, next, off, src + smis, bytes, flag, kind));

        size_t dmis = (i / 4) % 8;
        memset(dst, T_POISON, MAX_PAY + 2 * GUARD + 8);
        EXPECT_CODE(GPURMA_SUCCESS,
                    read_round(dw, off, dst + GUARD + dmis, bytes, flag, kind, (int)(i / 8) % 2));
        t_fill(want, bytes, t_seed(LL_DATA, (uint64_t)prev, i));
        t_verify_fill(dst, T_POISON, GUARD + dmis, "read_packets: below the payload", prev, 0);
        t_verify(dst + GUARD + dmis, want, bytes, "packet payload once its flag is seen", prev,
                 off);
        t_verify_fill(dst + GUARD + dmis + bytes, T_POISON, GUARD,
                      "read_packets: above the payload", prev, bytes);
        CHECK(gpurma_signal(w, prev, SIG_ACK, GPURMA_SIGNAL_ADD, 1));
    }
    CHECK(gpurma_wait_until(w, SIG_ACK, GPURMA_CMP_EQ, ROUNDS));
    free(src);
    free(want);
    free(dst);
}

/* Bad packet arguments are refused and write nothing. */
static void bad_input(gpurma_win_t w, gpurma_dev_win_t dw, unsigned char *win, size_t win_len)
{
    int next = (t_rank + 1) % t_size;
    unsigned char src[64], dst[64];
    memset(src, 0x5A, sizeof(src));
    CHECK(gpurma_barrier(t_world));
    memset(win, T_POISON, win_len);
    CHECK(gpurma_barrier(t_world));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_put_packets(dw, next, 4, src, 4, 7));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_put_packets16(dw, next, 8, src, 8, 7));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_put_packets(dw, next, win_len - 8, src, 5, 7)); /* 2 packets */
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_put_packets16(dw, next, win_len - 16, src, 9, 7));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_packets(dw, t_size, 0, src, 4, 7));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_packets(dw, -1, 0, src, 4, 7));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_put_packets(dw, next, 0, NULL, 4, 7));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_read_packets(dw, 4, dst, 4, 7));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_read_packets16(dw, win_len - 8, dst, 4, 7));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_read_packets(dw, 0, NULL, 4, 7));
    /* Exactly up to the end is fine. */
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_put_packets(dw, next, win_len - 16, src, 8, 9));
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(win, T_POISON, win_len - 16, "refused packet puts", t_rank, 0);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_read_packets(dw, win_len - 16, dst, 8, 9));
    t_verify_fill(dst, 0x5A, 8, "packets at the very end of the window", next, win_len - 16);
    (void)w;
}

/* ------------------------------------------------- footprints past size_t */

#define HUGE_WIN 4096
#define POISON32 0xA5A5A5A5u /* a poisoned word reads as a packet with this flag */

static const size_t huge_bytes[] = {SIZE_MAX,
                                    SIZE_MAX - 3,
                                    SIZE_MAX - 7,
                                    SIZE_MAX / 4 + 1,
                                    SIZE_MAX / 2,
                                    (size_t)1 << 62,
                                    (size_t)1 << 63,
                                    ((size_t)1 << 63) + 5,
                                    ((size_t)1 << 63) - 3,
                                    ((size_t)1 << 63) - 7,
                                    HUGE_WIN + 1};
/* All 16-aligned, so that misalignment is never the reason for a refusal. */
static const size_t huge_offs[] = {0,
                                   16,
                                   HUGE_WIN - 16,
                                   HUGE_WIN,
                                   (size_t)1 << 63,
                                   SIZE_MAX - HUGE_WIN + 1,
                                   SIZE_MAX - 63,
                                   SIZE_MAX - 15};
static const size_t small_bytes[] = {0, 1, 4, 8, 9, 16};

/* Positions reserved so far in each of the window's port FIFOs, and the
 * proxies' error counts: a refused call must change neither. */
static void fifo_marks(const gpurma_dev_win_t *dw, uint64_t marks[2 * GPURMA_DEV_MAX_PORTS])
{
    for (uint32_t k = 0; k < dw->nports && k < GPURMA_DEV_MAX_PORTS; k++) {
        const gpurma_port_fifo_t *f = (const gpurma_port_fifo_t *)dw->ports[k];
        marks[2 * k] = __atomic_load_n(f->head_ptr, __ATOMIC_ACQUIRE);
        marks[2 * k + 1] = __atomic_load_n(&f->errors, __ATOMIC_ACQUIRE);
    }
}

/* Every packet call, in each of its forms, refuses (off, bytes). Reads use
 * the poison as their flag: a read that wrongly went ahead would find every
 * packet "arrived" at once and write into dst, never wait. */
static void refuse_all(gpurma_dev_win_t dw, int peer, size_t off, size_t bytes,
                       const unsigned char *src, unsigned char *dst)
{
    const unsigned nt = 3;
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_put_packets(dw, peer, off, src, bytes, 7));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_put_packets16(dw, peer, off, src, bytes, 7));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_read_packets(dw, off, dst, bytes, POISON32));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_read_packets16(dw, off, dst, bytes, POISON32));
    for (unsigned t = 0; t < nt; t++) {
        EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                    gpurma_dev_put_packets_coop(dw, peer, off, src, bytes, 7, t, nt));
        EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                    gpurma_dev_put_packets16_coop(dw, peer, off, src, bytes, 7, t, nt));
        EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                    gpurma_dev_read_packets_coop(dw, off, dst, bytes, POISON32, t, nt));
        EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                    gpurma_dev_read_packets16_coop(dw, off, dst, bytes, POISON32, t, nt));
    }
}

static void huge_sizes(void)
{
    /* The footprint helpers: exact up to the largest size that fits, then
     * SIZE_MAX (never a multiple of 8, so never a real footprint). */
    const size_t max8 = ((size_t)1 << 63) - 4, max16 = ((size_t)1 << 63) - 8;
    T_ASSERT(gpurma_dev_packet8_bytes(max8) == SIZE_MAX - 7, "packet8_bytes(2^63-4) = %zu",
             gpurma_dev_packet8_bytes(max8));
    T_ASSERT(gpurma_dev_packet16_bytes(max16) == SIZE_MAX - 15, "packet16_bytes(2^63-8) = %zu",
             gpurma_dev_packet16_bytes(max16));
    T_ASSERT(gpurma_dev_packet8_bytes(0) == 0 && gpurma_dev_packet16_bytes(0) == 0,
             "footprint of nothing");
    for (size_t i = 0; i < sizeof(huge_bytes) / sizeof(huge_bytes[0]); i++) {
        size_t b = huge_bytes[i];
        size_t want8 = b > max8 ? SIZE_MAX : (b / 4 + (b % 4 != 0)) * 8;
        size_t want16 = b > max16 ? SIZE_MAX : (b / 8 + (b % 8 != 0)) * 16;
        T_ASSERT(gpurma_dev_packet8_bytes(b) == want8, "packet8_bytes(%zu) = %zu, expected %zu",
                 b, gpurma_dev_packet8_bytes(b), want8);
        T_ASSERT(gpurma_dev_packet16_bytes(b) == want16,
                 "packet16_bytes(%zu) = %zu, expected %zu", b, gpurma_dev_packet16_bytes(b),
                 want16);
    }

    /* The target window between two neighbours, all poisoned. */
    gpurma_win_t wins[3];
    unsigned char *mem[3];
    for (int i = 0; i < 3; i++) {
        void *base;
        CHECK(gpurma_win_allocate(t_world, HUGE_WIN, NULL, &base, &wins[i]));
        mem[i] = base;
        memset(mem[i], T_POISON, HUGE_WIN);
    }
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(wins[1], &dw));
    CHECK(gpurma_barrier(t_world));

    unsigned char src[64], dst[64];
    memset(src, 0x5A, sizeof(src));
    memset(dst, T_POISON, sizeof(dst));
    int peers[2] = {(t_rank + 1) % t_size, t_rank};
    uint64_t before[2 * GPURMA_DEV_MAX_PORTS] = {0}, after[2 * GPURMA_DEV_MAX_PORTS] = {0};
    fifo_marks(&dw, before);
    for (int p = 0; p < 2; p++) {
        for (size_t i = 0; i < sizeof(huge_bytes) / sizeof(huge_bytes[0]); i++)
            for (size_t j = 0; j < sizeof(huge_offs) / sizeof(huge_offs[0]); j++)
                refuse_all(dw, peers[p], huge_offs[j], huge_bytes[i], src, dst);
        for (size_t i = 0; i < sizeof(small_bytes) / sizeof(small_bytes[0]); i++)
            for (size_t j = 4; j < sizeof(huge_offs) / sizeof(huge_offs[0]); j++)
                refuse_all(dw, peers[p], huge_offs[j], small_bytes[i], src, dst);
    }
    fifo_marks(&dw, after);
    for (uint32_t k = 0; k < dw.nports && k < GPURMA_DEV_MAX_PORTS; k++) {
        T_ASSERT(after[2 * k] == before[2 * k],
                 "refused packet calls pushed %" PRIu64 " descriptors to proxy context %u",
                 after[2 * k] - before[2 * k], k);
        T_ASSERT(after[2 * k + 1] == before[2 * k + 1],
                 "proxy context %u rejected %" PRIu64 " descriptors", k,
                 after[2 * k + 1] - before[2 * k + 1]);
    }
    t_verify_fill(dst, T_POISON, sizeof(dst), "refused read_packets wrote its destination",
                  t_rank, 0);
    /* Nothing was issued, so completion has nothing to report. */
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_flush(dw, GPURMA_ALL_PEERS));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_quiet(dw));
    CHECK(gpurma_flush(wins[1], GPURMA_ALL_PEERS));
    CHECK(gpurma_quiet(wins[1]));
    CHECK(gpurma_barrier(t_world));

    static const char *const what[3] = {"window before the target of refused packet calls",
                                        "target window of refused packet calls",
                                        "window after the target of refused packet calls"};
    for (int i = 0; i < 3; i++)
        t_verify_fill(mem[i], T_POISON, HUGE_WIN, what[i], t_rank, 0);
    for (uint32_t s = 0; s < gpurma_win_num_signals(wins[1]); s++) {
        uint64_t v;
        CHECK(gpurma_signal_read(wins[1], s, &v));
        T_ASSERT(v == 0, "signal %u of the target window is %" PRIu64, s, v);
    }
    for (int i = 0; i < 3; i++)
        CHECK(gpurma_win_free(&wins[i]));
}

int main(void)
{
    t_init("test_ll_packets", 0);
    T_ASSERT(gpurma_dev_packet8_bytes(5) == 16 && gpurma_dev_packet8_bytes(4) == 8 &&
                 gpurma_dev_packet16_bytes(9) == 32 && gpurma_dev_packet16_bytes(8) == 16,
             "packet footprint helpers");
    T_ASSERT(gpurma_dev_packet16_bytes(MAX_PAY) + 32 <= BUF_LEN, "BUF_LEN too small");
    size_t win_len = 2 * BUF_LEN;
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, win_len, NULL, &base, &w));
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(w, &dw));
    /* Flags start at 1, so no stale word may hold a flag of this test. */
    memset(base, 0, win_len);
    CHECK(gpurma_barrier(t_world));

    double t0 = t_now();
    ring(w, dw);
    double t1 = t_now();
    bad_input(w, dw, base, win_len);
    huge_sizes();

    CHECK(gpurma_win_free(&w));
    char detail[64];
    snprintf(detail, sizeof(detail), "%d rounds in %.2f s", ROUNDS, t1 - t0);
    return t_finish(detail);
}
