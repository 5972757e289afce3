/*
 * test_coll_signal_map.c - the signals of a team's collective scratch
 * window (coll_proto.h: GPURMA_DCOLL__RANGE_*, GPURMA_DCOLL__SIGNALS) as
 * their users compute them: every channel's data signals and
 * acknowledgements (gpurma_dev_coll_part's sig_base), LL16's on CPU
 * threads, the barrier's and the zero-copy records' three slots. Every
 * (channel, source) of every use must get a signal of its own inside the
 * window, and together they must fill it: two uses sharing a signal let
 * one pass for the other (a barrier's arrival for a collective's piece),
 * and one past the end writes into the next window. Team sizes 1-40 and
 * 255-257, 1-9 channels and 32 and 64. Plain C, no library: the functions
 * are the headers', as the host backend and the GPU kernels compile them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpurma_coll_device.h"
#include "gpurma/detail/coll_direct.h"

static int failures;

#define EXPECT(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond)) {                                                       \
            if (failures++ < 20) {                                           \
                fprintf(stderr, "test_coll_signal_map: " __VA_ARGS__);       \
                fputc('\n', stderr);                                         \
            }                                                                \
        }                                                                    \
    } while (0)

/* Marks signal sig as used by `what`; reports a second use or one past the
 * window's end. */
static void take(unsigned char *used, uint32_t total, uint32_t sig, const char *what, int n,
                 int nch, int part, int src)
{
    EXPECT(sig < total, "n %d, %d channels: %s of channel %d, source %d is signal %u of %u", n,
           nch, what, part, src, sig, total);
    if (sig >= total)
        return;
    EXPECT(!used[sig], "n %d, %d channels: %s of channel %d, source %d shares signal %u", n, nch,
           what, part, src, sig);
    used[sig] = 1;
}

static void check(int n, int nch)
{
    const uint32_t total = GPURMA_DCOLL__SIGNALS(nch, n);
    unsigned char *used = calloc(total, 1);
    /* the records' slots are addresses in a window's signal array */
    gpurma_dev_signal_slot_t *slots = calloc(total, sizeof(*slots));
    if (!used || !slots) {
        fprintf(stderr, "test_coll_signal_map: out of memory\n");
        exit(99);
    }
    gpurma_dev_coll_t whole;
    memset(&whole, 0, sizeof(whole));
    whole.size = n, whole.rank = 0, whole.nchannels = (uint32_t)nch;
    whole.slot = 4096, whole.ll_slot = 1024, whole.nparts = 1;
    whole.win.signals = slots;
    for (int part = 0; part < nch; part++) {
        const gpurma_dev_coll_t c = gpurma_dev_coll_part(whole, (unsigned)part, (unsigned)nch);
        EXPECT(c.nparts == (uint32_t)nch && c.part == (uint32_t)part,
               "n %d: part %d of %d channels was refused", n, part, nch);
        for (int src = 0; src < n; src++) {
            /* a piece's signal from src, and src's acknowledgement */
            take(used, total, c.sig_base + (uint32_t)src, "data", n, nch, part, src);
            take(used, total, c.sig_base + (uint32_t)(n + src), "ack", n, nch, part, src);
            take(used, total, gpurma_dcoll__ll16_sig(&c, src), "ll16", n, nch, part, src);
            take(used, total, gpurma_dcoll__barrier_sig(&c, src), "barrier", n, nch, part, src);
            take(used, total, gpurma_dcoll__abandon_sig(&c, 0, src), "abandoned", n, nch, part,
                 src);
            take(used, total, gpurma_dcoll__abandon_sig(&c, 1, src), "abandoned LL16", n, nch,
                 part, src);
        }
    }
    /* The records: one per member and call, whichever channel runs it. */
    for (int src = 0; src < n; src++)
        for (int k = 0; k < 3; k++) {
            const uint64_t *w = gpurma_dcoll__direct_rec(&whole, 0, src, k);
            const size_t sig =
                (size_t)((const char *)w - (const char *)&slots[0].value) / sizeof(*slots);
            take(used, total, (uint32_t)sig, k == 0 ? "record 0" : k == 1 ? "record 1" : "record 2",
                 n, nch, -1, src);
        }
    size_t unused = 0;
    for (uint32_t s = 0; s < total; s++)
        unused += !used[s];
    EXPECT(unused == 0, "n %d, %d channels: %zu of %u signals have no use (the map and the "
                        "window's size disagree)", n, nch, unused, total);
    free(slots);
    free(used);
}

int main(void)
{
    static const int sizes[] = {255, 256, 257};
    static const int channels[] = {32, 64, 128, 256};
    int cases = 0;
    for (int n = 1; n <= 40; n++)
        for (int nch = 1; nch <= 9; nch++, cases++)
            check(n, nch);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (size_t j = 0; j < sizeof(channels) / sizeof(channels[0]); j++, cases++)
            check(sizes[i], channels[j]);
    printf("test_coll_signal_map: %d team shapes, %s\n", cases, failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
