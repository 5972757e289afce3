/*
 * test_dev_handles.c - device handles that must not be used: every device
 * operation refuses them at the call and touches nothing.
 *
 * 1. Forged handles: a zeroed gpurma_dev_win_t, a copy of a live handle with
 *    its magic changed, and one without its host window: GPURMA_ERR_INVALID_ARG
 *    from every operation (the _read functions give 0, their _checked forms
 *    the error); the live window they were copied from keeps its poison,
 *    signals and counters.
 * 2. Stale handles (host backend): the device handles of an allocated window
 *    and of a window created over malloc'd memory, kept after gpurma_win_free.
 *    Their peer table, signals, counters and shared segments are gone; every
 *    operation returns GPURMA_ERR_FREED without reaching them. The created
 *    window's memory (still the caller's) and the windows allocated after the
 *    free (which may reuse the freed memory) keep their poison, nothing is
 *    pushed to a proxy, and flush and quiet of a live window report nothing.
 *
 * Rerun through the port engine by engines.sh like every test_*.mp.
 */
#include "common.h"

#include "gpurma_device.h"

#define WIN_LEN 4096
#define NTEAM   3

/* What one operation returned, for the messages. */
typedef struct {
    const char *name;
    int rc;
} t_outcome_t;

/* Every device operation (each form that takes its own path through the
 * header) with valid arguments aimed at peer, against handle d. Reads of
 * values are returned through *sig_read and *cnt_read. */
static int every_op(gpurma_dev_win_t d, int peer, unsigned char *buf, t_outcome_t *out,
                    uint64_t *sig_read, uint64_t *cnt_read)
{
    int n = 0;
    uint64_t old = 0;
#define T_OP(call) (out[n].name = #call, out[n++].rc = (int)(call))
    T_OP(gpurma_dev_put(d, peer, 64, buf, 8));
    T_OP(gpurma_dev_put(d, peer, 64, buf, 100));
    T_OP(gpurma_dev_get(d, peer, buf, 64, 100));
    T_OP(gpurma_dev_put_value(d, peer, 64, 0x1234, 8));
    T_OP(gpurma_dev_signal(d, peer, 0, GPURMA_SIGNAL_ADD, 1));
    T_OP(gpurma_dev_put_signal(d, peer, 64, buf, 8, 0, GPURMA_SIGNAL_SET, 1));
    T_OP(gpurma_dev_put_signal(d, peer, 64, buf, 100, 0, GPURMA_SIGNAL_ADD, 1));
    T_OP(gpurma_dev_put_counted(d, peer, 64, buf, 100, 0));
    T_OP(gpurma_dev_atomic_fetch_add(d, peer, 64, 1, &old));
    T_OP(gpurma_dev_atomic_swap(d, peer, 64, 1, &old));
    T_OP(gpurma_dev_atomic_compare_swap(d, peer, 64, 0, 1, &old));
    T_OP(gpurma_dev_put_packets(d, peer, 64, buf, 12, 1));
    T_OP(gpurma_dev_put_packets16(d, peer, 64, buf, 12, 1));
    /* Reads wait for packets that never come: they must not start. */
    T_OP(gpurma_dev_read_packets(d, 64, buf, 12, 1));
    T_OP(gpurma_dev_read_packets16(d, 64, buf, 12, 1));
    for (unsigned t = 0; t < NTEAM; t++) {
        T_OP(gpurma_dev_put_coop(d, peer, 64, buf, 100, t, NTEAM));
        T_OP(gpurma_dev_get_coop(d, peer, buf, 64, 100, t, NTEAM));
        T_OP(gpurma_dev_put_signal_coop(d, peer, 64, buf, 100, 0, GPURMA_SIGNAL_ADD, 1, t, NTEAM));
        T_OP(gpurma_dev_put_packets_coop(d, peer, 64, buf, 12, 1, t, NTEAM));
        T_OP(gpurma_dev_put_packets16_coop(d, peer, 64, buf, 12, 1, t, NTEAM));
        T_OP(gpurma_dev_read_packets_coop(d, 64, buf, 12, 1, t, NTEAM));
        T_OP(gpurma_dev_read_packets16_coop(d, 64, buf, 12, 1, t, NTEAM));
    }
    /* Waits on conditions that never hold: they must not start either. */
    T_OP(gpurma_dev_wait_until(d, 0, GPURMA_CMP_EQ, 12345));
    T_OP(gpurma_dev_counter_wait(d, 0, 12345));
    T_OP(gpurma_dev_flush(d, peer));
    T_OP(gpurma_dev_flush(d, GPURMA_ALL_PEERS));
    T_OP(gpurma_dev_quiet(d));
    T_OP(gpurma_dev_fence(d));
#undef T_OP
    *sig_read = gpurma_dev_signal_read(d, 0);
    *cnt_read = gpurma_dev_counter_read(d, 0);
    return n;
}

static void expect_refused(gpurma_dev_win_t d, int peer, int want, const char *what)
{
    unsigned char buf[128];
    t_outcome_t out[64];
    uint64_t sig_read = 1, cnt_read = 1;
    memset(buf, 0x5A, sizeof(buf));
    int n = every_op(d, peer, buf, out, &sig_read, &cnt_read);
    for (int i = 0; i < n; i++)
        T_ASSERT(out[i].rc == want, "%s, peer %d: %s returned %d (%s), expected %s", what, peer,
                 out[i].name, out[i].rc, gpurma_strerror((gpurma_status_t)out[i].rc),
                 gpurma_strerror((gpurma_status_t)want));
    T_ASSERT(sig_read == 0 && cnt_read == 0, "%s: signal_read %" PRIu64 ", counter_read %" PRIu64,
             what, sig_read, cnt_read);
    /* The status forms name the error and leave the output alone. */
    uint64_t kept = 0xC0FFEEull;
    int sig_rc = gpurma_dev_signal_read_checked(d, 0, &kept);
    int cnt_rc = gpurma_dev_counter_read_checked(d, 0, &kept);
    T_ASSERT(sig_rc == want && cnt_rc == want && kept == 0xC0FFEEull,
             "%s: signal_read_checked %d, counter_read_checked %d (expected %d), value 0x%" PRIx64,
             what, sig_rc, cnt_rc, want, kept);
    t_verify_fill(buf, 0x5A, sizeof(buf), "destination of refused gets and reads", peer, 0);
}

/* Proxy positions reserved and descriptors rejected, per context. */
static void fifo_marks(const gpurma_dev_win_t *d, uint64_t marks[2 * GPURMA_DEV_MAX_PORTS])
{
    for (uint32_t k = 0; k < d->nports && k < GPURMA_DEV_MAX_PORTS; k++) {
        const gpurma_port_fifo_t *f = (const gpurma_port_fifo_t *)d->ports[k];
        marks[2 * k] = __atomic_load_n(f->head_ptr, __ATOMIC_ACQUIRE);
        marks[2 * k + 1] = __atomic_load_n(&f->errors, __ATOMIC_ACQUIRE);
    }
}

/* A live window's bytes still poisoned, its signals and counters zero. */
static void verify_untouched(gpurma_win_t w, const unsigned char *mem, const char *what)
{
    t_verify_fill(mem, T_POISON, WIN_LEN, what, t_rank, 0);
    for (uint32_t s = 0; s < gpurma_win_num_signals(w); s++) {
        uint64_t v;
        CHECK(gpurma_signal_read(w, s, &v));
        T_ASSERT(v == 0, "%s: signal %u is %" PRIu64, what, s, v);
    }
    for (uint32_t c = 0; c < gpurma_win_num_counters(w); c++) {
        uint64_t v;
        CHECK(gpurma_counter_read(w, c, &v));
        T_ASSERT(v == 0, "%s: counter %u is %" PRIu64, what, c, v);
    }
}

static gpurma_win_t poisoned_window(unsigned char **mem)
{
    gpurma_win_t w;
    void *base;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, &base, &w));
    *mem = base;
    memset(*mem, T_POISON, WIN_LEN);
    return w;
}

/* ------------------------------------------------------ 1. forged handles */

static void forged(void)
{
    unsigned char *mem;
    gpurma_win_t w = poisoned_window(&mem);
    gpurma_dev_win_t live;
    CHECK(gpurma_win_device(w, &live));
    CHECK(gpurma_barrier(t_world));

    gpurma_dev_win_t zero, garbled = live, no_host = live;
    memset(&zero, 0, sizeof(zero));
    garbled.magic = ~GPURMA_DEV_WIN_MAGIC;
    no_host.host_win = NULL;
    const int peers[] = {(t_rank + 1) % t_size, t_rank};
    for (int p = 0; p < 2; p++) {
        expect_refused(zero, peers[p], GPURMA_ERR_INVALID_ARG, "zeroed handle");
        expect_refused(garbled, peers[p], GPURMA_ERR_INVALID_ARG, "handle with a wrong magic");
        expect_refused(no_host, peers[p], GPURMA_ERR_INVALID_ARG, "handle without host window");
    }
    CHECK(gpurma_barrier(t_world));
    verify_untouched(w, mem, "window whose handle was forged");
    CHECK(gpurma_win_free(&w));
}

/* ------------------------------------------------------- 2. stale handles */

static void stale(void)
{
    /* An allocated window and a created one (data moves by host calls). */
    unsigned char *user = t_malloc(WIN_LEN);
    gpurma_win_t a, c;
    unsigned char *amem;
    a = poisoned_window(&amem);
    CHECK(gpurma_win_create(t_world, user, WIN_LEN, NULL, &c));
    gpurma_dev_win_t da, dc;
    CHECK(gpurma_win_device(a, &da));
    CHECK(gpurma_win_device(c, &dc));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_free(&a));
    CHECK(gpurma_win_free(&c));
    T_ASSERT(a == NULL && c == NULL, "win_free leaves the handles NULL");
    memset(user, T_POISON, WIN_LEN);

    /* New windows that may reuse the freed tables and segments. */
    unsigned char *mem[2];
    gpurma_win_t fresh[2];
    for (int i = 0; i < 2; i++)
        fresh[i] = poisoned_window(&mem[i]);
    gpurma_dev_win_t live;
    CHECK(gpurma_win_device(fresh[0], &live));
    CHECK(gpurma_barrier(t_world));

    uint64_t before[2 * GPURMA_DEV_MAX_PORTS] = {0}, after[2 * GPURMA_DEV_MAX_PORTS] = {0};
    fifo_marks(&live, before);
    const int peers[] = {(t_rank + 1) % t_size, t_rank};
    for (int p = 0; p < 2; p++) {
        expect_refused(da, peers[p], GPURMA_ERR_FREED, "handle of a freed allocated window");
        expect_refused(dc, peers[p], GPURMA_ERR_FREED, "handle of a freed created window");
    }
    /* Bad arguments too: the freed window is what the call reports. */
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_put(da, t_size, 0, NULL, SIZE_MAX));
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_wait_until(da, UINT32_MAX, GPURMA_CMP_EQ, 0));
    fifo_marks(&live, after);
    for (uint32_t k = 0; k < live.nports && k < GPURMA_DEV_MAX_PORTS; k++)
        T_ASSERT(after[2 * k] == before[2 * k] && after[2 * k + 1] == before[2 * k + 1],
                 "stale handles pushed %" PRIu64 " descriptors to proxy context %u (%" PRIu64
                 " rejected)",
                 after[2 * k] - before[2 * k], k, after[2 * k + 1] - before[2 * k + 1]);
    CHECK(gpurma_flush(fresh[0], GPURMA_ALL_PEERS));
    CHECK(gpurma_quiet(fresh[0]));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_quiet(live));
    CHECK(gpurma_barrier(t_world));

    t_verify_fill(user, T_POISON, WIN_LEN, "memory of a freed created window", t_rank, 0);
    verify_untouched(fresh[0], mem[0], "window allocated after the free");
    verify_untouched(fresh[1], mem[1], "second window allocated after the free");
    for (int i = 0; i < 2; i++)
        CHECK(gpurma_win_free(&fresh[i]));
    free(user);
}

int main(void)
{
    t_init("test_dev_handles", 0);
    forged();
    stale();
    return t_finish("");
}
