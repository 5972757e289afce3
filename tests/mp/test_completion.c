/*
 * test_completion.c - completion as MPI-3 names it, and waits on several
 * signals.
 *
 *  flush(peer)       remote completion: data put to a peer, flushed, then
 *                    announced through ANOTHER window (which orders nothing)
 *                    is readable at the target. With a local-only flush this
 *                    fails on the port engine over UCX (run by engines.sh).
 *  flush_local       the source may be overwritten at once: the target gets
 *                    the bytes from before.
 *  order             a put, order, then a value stored at another offset:
 *                    whoever sees the value sees the put.
 *  win_fence         MPI_Win_fence epochs: puts from every rank, and the
 *                    owner's own stores, are visible to all after it.
 *  wait_until_all / any / some, test forms: exact indices and counts, skip
 *                    lists (status), nothing reported before anything was
 *                    sent, bad slot ids and NULL outputs refused.
 */
#include "common.h"
#include "gpurma_device.h"

enum { PURPOSE_FLUSH = 60, PURPOSE_LOCAL = 61, PURPOSE_ORDER = 62, PURPOSE_FENCE = 63,
       PURPOSE_MULTI = 64 };
enum { ROUNDS = 12, SLOT = 1531 /* odd: unaligned copies */ };

static unsigned char *data_base, *note_base;

static size_t slot_of(int origin) { return (size_t)origin * SLOT; }

/* flush: data through w, notification through n (a second window). */
static void check_flush_remote(gpurma_win_t w, gpurma_win_t n, int round)
{
    int next = (t_rank + 1) % t_size, prev = (t_rank - 1 + t_size) % t_size;
    unsigned char *src = t_malloc(SLOT), *want = t_malloc(SLOT);
    size_t bytes = 1 + (size_t)(round * 211) % SLOT;
    t_fill(src, bytes, t_seed(PURPOSE_FLUSH, (uint64_t)t_rank, (uint64_t)round));
    CHECK(gpurma_put(w, next, slot_of(t_rank), src, bytes));
    CHECK(gpurma_flush(w, round % 2 ? next : GPURMA_ALL_PEERS));
    CHECK(gpurma_put_signal(n, next, 0, &round, sizeof(round), 0, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_wait_until(n, 0, GPURMA_CMP_GE, (uint64_t)round + 1));
    t_fill(want, bytes, t_seed(PURPOSE_FLUSH, (uint64_t)prev, (uint64_t)round));
    t_verify(data_base + slot_of(prev), want, bytes, "flush (remote completion)", prev,
             slot_of(prev));
    free(src);
    free(want);
}

static void check_flush_local(gpurma_win_t w, int round)
{
    int next = (t_rank + 1) % t_size, prev = (t_rank - 1 + t_size) % t_size;
    unsigned char *src = t_malloc(SLOT), *want = t_malloc(SLOT);
    size_t bytes = SLOT - (size_t)(round * 97) % (SLOT / 2);
    t_fill(src, bytes, t_seed(PURPOSE_LOCAL, (uint64_t)t_rank, (uint64_t)round));
    CHECK(gpurma_put(w, next, slot_of(t_rank), src, bytes));
    CHECK(gpurma_flush_local(w, next));
    memset(src, T_POISON, bytes); /* reusable now: the put must not see this */
    CHECK(gpurma_signal(w, next, 1, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_wait_until(w, 1, GPURMA_CMP_GE, (uint64_t)round + 1));
    t_fill(want, bytes, t_seed(PURPOSE_LOCAL, (uint64_t)prev, (uint64_t)round));
    t_verify(data_base + slot_of(prev), want, bytes, "flush_local then source reused", prev,
             slot_of(prev));
    free(src);
    free(want);
}

/* order: the data, then a flag word at the end of the window. */
static void check_order(gpurma_win_t w, size_t flag_off, int round)
{
    int next = (t_rank + 1) % t_size, prev = (t_rank - 1 + t_size) % t_size;
    unsigned char *src = t_malloc(SLOT), *want = t_malloc(SLOT);
    t_fill(src, SLOT, t_seed(PURPOSE_ORDER, (uint64_t)t_rank, (uint64_t)round));
    CHECK(gpurma_put(w, next, slot_of(t_rank), src, SLOT));
    CHECK(gpurma_order(w));
    CHECK(gpurma_put_value(w, next, flag_off, (uint64_t)round + 1, 8));
    volatile uint64_t *flag = (volatile uint64_t *)(data_base + flag_off);
    double t0 = t_now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < (uint64_t)round + 1) {
        /* The flag is a plain store: progress this process's port work. */
        uint64_t unused;
        CHECK(gpurma_signal_read(w, 0, &unused));
        T_ASSERT(t_now() - t0 < 20, "order: flag of round %d never came", round);
    }
    t_fill(want, SLOT, t_seed(PURPOSE_ORDER, (uint64_t)prev, (uint64_t)round));
    t_verify(data_base + slot_of(prev), want, SLOT, "order (put, order, flag)", prev,
             slot_of(prev));
    CHECK(gpurma_barrier(t_world)); /* nobody overwrites a slot still read */
    free(src);
    free(want);
}

/* win_fence epochs: puts to every peer, and a store into one's own window. */
static void check_win_fence(gpurma_win_t w, size_t own_off, int round)
{
    /* One source per peer: none may be reused before the fence completes it. */
    unsigned char *src = t_malloc((size_t)t_size * SLOT), *want = t_malloc(SLOT);
    CHECK(gpurma_win_fence(w));
    size_t bytes = 1 + (size_t)(round * 389) % SLOT;
    for (int p = 0; p < t_size; p++) {
        unsigned char *mine = src + slot_of(p);
        t_fill(mine, bytes, t_seed(PURPOSE_FENCE, (uint64_t)t_rank, (uint64_t)(round * 64 + p)));
        CHECK(gpurma_put(w, p, slot_of(t_rank), mine, bytes));
    }
    t_fill(data_base + own_off, 64, t_seed(PURPOSE_FENCE + 100, (uint64_t)t_rank, round));
    CHECK(gpurma_win_fence(w));
    for (int o = 0; o < t_size; o++) {
        t_fill(want, bytes, t_seed(PURPOSE_FENCE, (uint64_t)o, (uint64_t)(round * 64 + t_rank)));
        t_verify(data_base + slot_of(o), want, bytes, "win_fence epoch", o, slot_of(o));
    }
    int other = (t_rank + round) % t_size;
    CHECK(gpurma_get(w, other, src, own_off, 64));
    CHECK(gpurma_flush_local(w, other));
    t_fill(want, 64, t_seed(PURPOSE_FENCE + 100, (uint64_t)other, round));
    t_verify(src, want, 64, "owner's store before win_fence, read by get", other, own_off);
    free(src);
    free(want);
}

/* Slots [base, base + size): slot base + r is set by rank r. */
static void check_multi(gpurma_win_t w, uint32_t base, int round)
{
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(w, &dw));
    uint32_t *sigs = t_malloc(sizeof(uint32_t) * (size_t)t_size);
    int *skip = t_malloc(sizeof(int) * (size_t)t_size);
    size_t *idx = t_malloc(sizeof(size_t) * (size_t)t_size);
    /* Reversed, so that list positions differ from slot ids. */
    for (int i = 0; i < t_size; i++)
        sigs[i] = base + (uint32_t)(t_size - 1 - i);
    uint64_t want = (uint64_t)round + 1;
    int ok = -1;
    size_t index = 7, count = 7;
    CHECK(gpurma_barrier(t_world));
    /* Nobody has sent this round yet. */
    CHECK(gpurma_test_all(w, sigs, (size_t)t_size, NULL, GPURMA_CMP_GE, want, &ok));
    T_ASSERT(ok == 0, "test_all before any signal: %d", ok);
    CHECK(gpurma_test_any(w, sigs, (size_t)t_size, NULL, GPURMA_CMP_GE, want, &index));
    T_ASSERT(index == SIZE_MAX, "test_any before any signal: %zu", index);
    CHECK(gpurma_test_some(w, sigs, (size_t)t_size, NULL, GPURMA_CMP_GE, want, idx, &count));
    T_ASSERT(count == 0, "test_some before any signal: %zu", count);
    CHECK(gpurma_test(w, sigs[0], GPURMA_CMP_GE, want, &ok));
    T_ASSERT(ok == 0, "test before any signal: %d", ok);
    /* The device API's forms (CPU threads on the host backend) agree. */
    EXPECT_CODE(GPURMA_SUCCESS,
                gpurma_dev_test_all(dw, sigs, (size_t)t_size, NULL, GPURMA_CMP_GE, want, &ok));
    T_ASSERT(ok == 0, "dev_test_all before any signal: %d", ok);
    EXPECT_CODE(GPURMA_SUCCESS,
                gpurma_dev_test_any(dw, sigs, (size_t)t_size, NULL, GPURMA_CMP_GE, want, &index));
    T_ASSERT(index == SIZE_MAX, "dev_test_any before any signal: %zu", index);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_test_some(dw, sigs, (size_t)t_size, NULL,
                                                     GPURMA_CMP_GE, want, idx, &count));
    T_ASSERT(count == 0, "dev_test_some before any signal: %zu", count);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_test(dw, sigs[0], GPURMA_CMP_GE, want, &ok));
    T_ASSERT(ok == 0, "dev_test before any signal: %d", ok);
    CHECK(gpurma_barrier(t_world));

    /* One rank signals first; the rest only after everyone saw it alone. */
    int first = round % t_size;
    if (t_rank == first)
        for (int p = 0; p < t_size; p++)
            CHECK(gpurma_signal(w, p, base + (uint32_t)t_rank, GPURMA_SIGNAL_SET, want));
    size_t pos_first = (size_t)(t_size - 1 - first);
    if (round % 2) {
        CHECK(gpurma_wait_until_any(w, sigs, (size_t)t_size, NULL, GPURMA_CMP_GE, want, &index));
    } else {
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until_any(dw, sigs, (size_t)t_size, NULL,
                                                              GPURMA_CMP_GE, want, &index));
    }
    T_ASSERT(index == pos_first, "wait_until_any: index %zu, expected %zu", index, pos_first);
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until_some(dw, sigs, (size_t)t_size, NULL,
                                                           GPURMA_CMP_EQ, want, idx, &count));
    T_ASSERT(count == 1 && idx[0] == pos_first, "dev_wait_until_some: count %zu idx[0] %zu",
             count, idx[0]);
    CHECK(gpurma_wait_until_some(w, sigs, (size_t)t_size, NULL, GPURMA_CMP_EQ, want, idx,
                                 &count));
    T_ASSERT(count == 1 && idx[0] == pos_first, "wait_until_some: count %zu idx[0] %zu", count,
             idx[0]);
    for (int i = 0; i < t_size; i++)
        skip[i] = (size_t)i == pos_first;
    CHECK(gpurma_test_any(w, sigs, (size_t)t_size, skip, GPURMA_CMP_GE, want, &index));
    T_ASSERT(index == SIZE_MAX, "test_any with the signalled entry skipped: %zu", index);
    CHECK(gpurma_test_all(w, sigs, (size_t)t_size, skip, GPURMA_CMP_LT, want, &ok));
    T_ASSERT(ok == 1, "test_all (<) over the silent entries: %d", ok);
    CHECK(gpurma_barrier(t_world));

    if (t_rank != first)
        for (int p = 0; p < t_size; p++)
            CHECK(gpurma_signal(w, p, base + (uint32_t)t_rank, GPURMA_SIGNAL_SET, want));
    if (round % 2)
        CHECK(gpurma_wait_until_all(w, sigs, (size_t)t_size, NULL, GPURMA_CMP_EQ, want));
    else
        EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_wait_until_all(dw, sigs, (size_t)t_size, NULL,
                                                              GPURMA_CMP_EQ, want));
    EXPECT_CODE(GPURMA_SUCCESS,
                gpurma_dev_test_all(dw, NULL, (size_t)t_size, NULL, GPURMA_CMP_LE, want, &ok));
    T_ASSERT(ok == 1, "dev_test_all over slots 0..n-1 (<= round): %d", ok);
    CHECK(gpurma_wait_until_all(w, NULL, 0, NULL, GPURMA_CMP_EQ, want)); /* nothing to wait */
    CHECK(gpurma_test_some(w, sigs, (size_t)t_size, NULL, GPURMA_CMP_GE, want, idx, &count));
    T_ASSERT(count == (size_t)t_size, "test_some after all signalled: %zu", count);
    for (size_t i = 0; i < count; i++)
        T_ASSERT(idx[i] == i, "test_some: idx[%zu] = %zu", i, idx[i]);
    for (int i = 0; i < t_size; i++)
        skip[i] = 1;
    CHECK(gpurma_wait_until_any(w, sigs, (size_t)t_size, skip, GPURMA_CMP_EQ, want + 1, &index));
    T_ASSERT(index == SIZE_MAX, "wait_until_any with every entry skipped: %zu", index);
    CHECK(gpurma_wait_until_some(w, sigs, (size_t)t_size, skip, GPURMA_CMP_EQ, want + 1, idx,
                                 &count));
    T_ASSERT(count == 0, "wait_until_some with every entry skipped: %zu", count);
    free(sigs);
    free(skip);
    free(idx);
}

static void check_bad_input(gpurma_win_t w)
{
    uint32_t nsig = gpurma_win_num_signals(w);
    uint32_t bad[2] = {0, nsig};
    size_t index, count, idx[2];
    int ok;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_wait_until_all(w, bad, 2, NULL, GPURMA_CMP_EQ, 0));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_wait_until_all(w, NULL, nsig + 1, NULL,
                                                             GPURMA_CMP_EQ, 0));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_test_any(w, bad, 2, NULL, GPURMA_CMP_EQ, 0, &index));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_test_some(w, bad, 2, NULL, GPURMA_CMP_EQ, 0, idx,
                                                        &count));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_test(w, nsig, GPURMA_CMP_EQ, 0, &ok));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_test(w, 0, (gpurma_cmp_t)9, 0, &ok));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_wait_until_any(w, bad, 1, NULL, GPURMA_CMP_EQ, 0,
                                                             NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_wait_until_some(w, bad, 1, NULL, GPURMA_CMP_EQ, 0,
                                                              NULL, &count));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_test_all(w, bad, 1, NULL, GPURMA_CMP_EQ, 0, NULL));
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(w, &dw));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_wait_until_all(dw, bad, 2, NULL,
                                                                  GPURMA_CMP_EQ, 0));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_test(dw, nsig, GPURMA_CMP_EQ, 0, &ok));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_test_any(dw, bad, 1, NULL, GPURMA_CMP_EQ, 0,
                                                            NULL));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_flush(dw, t_size));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_flush_local(dw, -2));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_flush(w, t_size));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_flush_local(w, -2));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_flush(NULL, 0));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_fence(NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_order(NULL));
}

int main(void)
{
    t_init("test_completion", 0);
    size_t flag_off = slot_of(t_size) + 64 - slot_of(t_size) % 8;
    size_t own_off = flag_off + 64;
    size_t win_len = own_off + 64;
    gpurma_win_t w, n;
    void *base, *nbase;
    CHECK(gpurma_win_allocate(t_world, win_len, NULL, &base, &w));
    CHECK(gpurma_win_allocate(t_world, 64, NULL, &nbase, &n));
    data_base = base;
    note_base = nbase;
    memset(data_base, T_POISON, win_len);
    memset(data_base + flag_off, 0, 8); /* order's flag counts rounds from 0 */
    CHECK(gpurma_barrier(t_world));
    for (int r = 0; r < ROUNDS; r++) {
        check_flush_remote(w, n, r);
        CHECK(gpurma_barrier(t_world)); /* slots are read before they are reused */
        check_flush_local(w, r);
        CHECK(gpurma_barrier(t_world));
        check_order(w, flag_off, r);
        check_win_fence(w, own_off, r);
        check_multi(w, 8, r);
        CHECK(gpurma_barrier(t_world));
    }
    check_bad_input(w);
    CHECK(gpurma_win_free(&n));
    CHECK(gpurma_win_free(&w));
    return t_finish("flush, flush_local, order, win_fence, wait_until_all/any/some, test forms");
}
