/*
 * test_port_fifo.c - the port proxy refuses corrupt descriptors.
 *
 * Descriptors that name an unknown window, a peer out of range, bytes past
 * the target's window, an unknown operation, a signal or counter that does
 * not exist are pushed straight into the FIFO (as a buggy kernel could):
 * each must be rejected, reported by the next flush with a message, and never
 * executed (every window keeps its poison, every signal stays 0). A valid
 * descriptor behind them still runs: the FIFO is not wedged.
 */
#include "common.h"

#include "gpurma_device.h"

#define WIN_BYTES 4096
enum { SIG_OK = 1 };

static gpurma_port_desc_t base_desc(const gpurma_dev_win_t *dw, int peer, const void *src)
{
    gpurma_port_desc_t d;
    memset(&d, 0, sizeof(d));
    d.op = GPURMA_PORT_OP_PUT;
    d.win_id = dw->port_win_ids[dw->peers[peer].port]; /* the context serving peer */
    d.peer = peer;
    d.dst = 64;
    d.src = (uint64_t)(uintptr_t)src;
    d.size = 16;
    d.signal = UINT32_MAX;
    d.counter = UINT32_MAX;
    d.flags = GPURMA_PORT_F_SRC_RAW;
    return d;
}

static void push_corrupt(gpurma_win_t w, const gpurma_dev_win_t *dw, gpurma_port_desc_t d,
                         int peer)
{
    uint64_t pos;
    CHECK(gpurma_port_push((gpurma_port_fifo_t *)dw->ports[dw->peers[peer].port], &d, &pos));
    EXPECT_ERR(GPURMA_ERR_TRANSPORT, gpurma_flush(w, peer));
    T_ASSERT(strstr(gpurma_last_error_message(t_ctx), "rejected"),
             "flush after a corrupt descriptor: message \"%s\" does not say it was rejected",
             gpurma_last_error_message(t_ctx));
}

int main(void)
{
    t_init("test_port_fifo", 0);
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_ENGINE;
    p.engine = GPURMA_ENGINE_PORT;
    gpurma_win_t w;
    unsigned char *mem;
    CHECK(gpurma_win_allocate(t_world, WIN_BYTES, &p, (void **)&mem, &w));
    T_ASSERT(gpurma_win_engine(w, t_rank) == GPURMA_ENGINE_PORT, "engine is not port");
    memset(mem, T_POISON, WIN_BYTES);
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(w, &dw));
    T_ASSERT(dw.nports >= 1 && dw.ports[0] != NULL, "a port window without a FIFO");
    CHECK(gpurma_barrier(t_world));

    int peer = (t_rank + 1) % t_size;
    unsigned char src[64];
    t_fill(src, sizeof(src), t_seed(1, (uint64_t)t_rank, 0));
    gpurma_port_desc_t d;

    d = base_desc(&dw, peer, src);
    d.win_id += 1000; /* no such window */
    push_corrupt(w, &dw, d, peer);
    d = base_desc(&dw, peer, src);
    d.peer = t_size + 5;
    push_corrupt(w, &dw, d, peer);
    d = base_desc(&dw, peer, src);
    d.dst = WIN_BYTES - 8; /* 16 bytes: 8 past the end */
    push_corrupt(w, &dw, d, peer);
    d = base_desc(&dw, peer, src);
    d.size = UINT64_MAX - 32; /* wraps if added carelessly */
    push_corrupt(w, &dw, d, peer);
    d = base_desc(&dw, peer, src);
    d.op = 200;
    push_corrupt(w, &dw, d, peer);
    d = base_desc(&dw, peer, src);
    d.op = GPURMA_PORT_OP_PUT_SIGNAL;
    d.signal = gpurma_win_num_signals(w) + 1;
    push_corrupt(w, &dw, d, peer);
    d = base_desc(&dw, peer, src);
    d.counter = gpurma_win_num_counters(w) + 7;
    push_corrupt(w, &dw, d, peer);
    d = base_desc(&dw, peer, src);
    d.op = GPURMA_PORT_OP_FETCH_ADD;
    d.dst = 12; /* misaligned */
    push_corrupt(w, &dw, d, peer);

    /* Nothing of it was executed, anywhere. */
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(mem, T_POISON, WIN_BYTES, "window after corrupt descriptors", t_rank, 0);
    for (uint32_t s = 0; s < gpurma_win_num_signals(w); s++) {
        uint64_t v;
        CHECK(gpurma_signal_read(w, s, &v));
        T_ASSERT(v == 0, "signal %u is %" PRIu64 " after corrupt descriptors", s, v);
    }
    CHECK(gpurma_barrier(t_world));

    /* A valid operation behind them still runs. */
    CHECK(gpurma_put_signal(w, peer, 64, src, sizeof(src), SIG_OK, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_flush(w, peer));
    CHECK(gpurma_wait_until(w, SIG_OK, GPURMA_CMP_EQ, 1));
    unsigned char want[64];
    int from = (t_rank + t_size - 1) % t_size;
    t_fill(want, sizeof(want), t_seed(1, (uint64_t)from, 0));
    t_verify(mem + 64, want, sizeof(want), "valid put after corrupt descriptors", from, 64);
    t_verify_fill(mem, T_POISON, 64, "bytes before the valid put", from, 0);
    t_verify_fill(mem + 128, T_POISON, WIN_BYTES - 128, "bytes after the valid put", from, 128);

    CHECK(gpurma_win_free(&w));
    return t_finish("8 corrupt descriptors rejected, none executed");
}
