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

    CHECK(gpurma_win_free(&w));
    char detail[64];
    snprintf(detail, sizeof(detail), "%d rounds in %.2f s", ROUNDS, t1 - t0);
    return t_finish(detail);
}
