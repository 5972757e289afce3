/*
 * heap_growth.c - the symmetric heap past NVSHMEM_SYMMETRIC_SIZE, as
 * NVSHMEM programs use it (issue 17 item 4): with a 4 MiB heap, objects
 * of 3 MiB and more (odd sizes) come from new segments and everything
 * works on them: put/get to the next PE, p/g, atomics, put_signal with the
 * signal word in a segment, strided puts, the collectives (reduce,
 * fcollect, broadcast, alltoall) with both buffers in segments, barriers
 * and team syncs after many allocations, free and reuse. Then a buffer the
 * program allocated itself, registered with
 * nvshmemx_buffer_register_symmetric, takes puts and atomics from the
 * other PEs until it is unregistered, also beside another one that ends
 * where it starts; nvshmem_align gives aligned addresses up to 2 MiB.
 * Random data, poisoned destinations, exact checks; 1 to 4 PEs.
 */
#include "nvtest.h"

#define MIB ((size_t)1 << 20)

/* Object i of the run: odd sizes, each at least 3 MiB, so that a 4 MiB
 * heap holds at most one of them. */
static size_t object_bytes(int i) { return 3 * MIB + 4093 * (size_t)(i + 1); }

static void check_rma(unsigned char *obj, size_t bytes, int round)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    unsigned char *mine = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
    NV_ASSERT(mine && want && got, "out of memory");
    memset(obj, NV_POISON, bytes);
    nv_fill(mine, bytes, nv_seed(10, me, (uint64_t)round));
    nvshmem_barrier_all();
    nvshmem_putmem(obj, mine, bytes, next);
    nvshmem_barrier_all();
    nv_fill(want, bytes, nv_seed(10, prev, (uint64_t)round));
    NV_EXPECT_BYTES(obj, want, bytes, "round %d: put of %zu bytes from PE %d", round, bytes, prev);
    /* get the next PE's copy back: it holds what this PE put there */
    memset(got, NV_POISON, bytes);
    nvshmem_getmem(got, obj, bytes, next);
    NV_EXPECT_BYTES(got, mine, bytes, "round %d: get from PE %d", round, next);
    /* p and g at the object's last word */
    int *last = (int *)(obj + (bytes & ~(size_t)3) - 4);
    nvshmem_barrier_all();
    nvshmem_int_p(last, 1000 * round + me, next);
    nvshmem_barrier_all();
    NV_ASSERT(*last == 1000 * round + prev, "round %d: p gave %d, want %d", round, *last,
              1000 * round + prev);
    NV_ASSERT(nvshmem_int_g(last, next) == 1000 * round + me, "round %d: g of PE %d", round, next);
    nvshmem_barrier_all();
    free(mine), free(want), free(got);
}

static void check_amo_signal(uint64_t *words, int round)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    words[0] = 0;
    words[1] = 0;
    memset(&words[2], NV_POISON, 64);
    nvshmem_barrier_all();
    /* every PE adds its rank + 1 to PE 0's counter */
    uint64_t old = nvshmem_uint64_atomic_fetch_add(&words[0], (uint64_t)me + 1, 0);
    NV_ASSERT(old <= (uint64_t)n * (n + 1) / 2, "round %d: fetch_add returned %" PRIu64, round, old);
    /* data, then the signal, to the next PE; wait for the previous one's */
    uint64_t data[8];
    nv_fill(data, sizeof data, nv_seed(11, me, (uint64_t)round));
    nvshmem_putmem_signal(&words[2], data, sizeof data, &words[1], (uint64_t)round + 7,
                          NVSHMEM_SIGNAL_SET, next);
    nvshmem_signal_wait_until(&words[1], NVSHMEM_CMP_EQ, (uint64_t)round + 7);
    uint64_t want[8];
    nv_fill(want, sizeof want, nv_seed(11, prev, (uint64_t)round));
    NV_EXPECT_BYTES(&words[2], want, sizeof want, "round %d: put_signal data from PE %d", round,
                    prev);
    nvshmem_barrier_all();
    if (me == 0)
        NV_ASSERT(words[0] == (uint64_t)n * (n + 1) / 2, "round %d: counter %" PRIu64 ", want %d",
                  round, words[0], n * (n + 1) / 2);
    nvshmem_barrier_all();
}

static void check_strided(int *obj, int round)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    enum { N = 37, STRIDE = 3 };
    for (int i = 0; i < N * STRIDE; i++)
        obj[i] = -1;
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = (int)(nv_seed(12, me, (uint64_t)(round * N + i)) & 0x7fffffff);
    nvshmem_barrier_all();
    nvshmem_int_iput(obj, src, STRIDE, 1, N, next);
    nvshmem_barrier_all();
    for (int i = 0; i < N * STRIDE; i++) {
        int want = i % STRIDE ? -1
                              : (int)(nv_seed(12, prev, (uint64_t)(round * N + i / STRIDE)) &
                                      0x7fffffff);
        NV_ASSERT(obj[i] == want, "round %d: iput element %d is %d, want %d", round, i, obj[i],
                  want);
    }
    nvshmem_barrier_all();
}

static void check_collectives(int round)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const size_t count = 1237;
    int64_t *src = (int64_t *)nvshmem_malloc(count * sizeof(int64_t) * (size_t)n);
    int64_t *dst = (int64_t *)nvshmem_malloc(3 * MIB + count * sizeof(int64_t) * (size_t)n);
    NV_ASSERT(src && dst, "round %d: collective buffers", round);
    for (size_t i = 0; i < count * (size_t)n; i++)
        src[i] = (int64_t)(nv_seed(13, me, i + (uint64_t)round * 100000) % 1000003);
    memset(dst, NV_POISON, count * sizeof(int64_t) * (size_t)n);
    nvshmem_barrier_all();
    nvshmem_int64_sum_reduce(NVSHMEM_TEAM_WORLD, dst, src, count);
    for (size_t i = 0; i < count; i++) {
        int64_t want = 0;
        for (int p = 0; p < n; p++)
            want += (int64_t)(nv_seed(13, p, i + (uint64_t)round * 100000) % 1000003);
        NV_ASSERT(dst[i] == want, "round %d: sum_reduce element %zu", round, i);
    }
    memset(dst, NV_POISON, count * sizeof(int64_t) * (size_t)n);
    nvshmem_barrier_all();
    nvshmem_int64_fcollect(NVSHMEM_TEAM_WORLD, dst, src, count);
    for (int p = 0; p < n; p++)
        for (size_t i = 0; i < count; i++)
            NV_ASSERT(dst[(size_t)p * count + i] ==
                          (int64_t)(nv_seed(13, p, i + (uint64_t)round * 100000) % 1000003),
                      "round %d: fcollect block %d element %zu", round, p, i);
    memset(dst, NV_POISON, count * sizeof(int64_t) * (size_t)n);
    nvshmem_barrier_all();
    nvshmem_int64_alltoall(NVSHMEM_TEAM_WORLD, dst, src, count);
    for (int p = 0; p < n; p++)
        for (size_t i = 0; i < count; i++)
            NV_ASSERT(dst[(size_t)p * count + i] ==
                          (int64_t)(nv_seed(13, p, (size_t)me * count + i +
                                                       (uint64_t)round * 100000) %
                                    1000003),
                      "round %d: alltoall block %d element %zu", round, p, i);
    memset(dst, NV_POISON, count * sizeof(int64_t));
    nvshmem_barrier_all();
    const int root = round % n;
    nvshmem_int64_broadcast(NVSHMEM_TEAM_WORLD, dst, src, count, root);
    for (size_t i = 0; i < count; i++)
        NV_ASSERT(dst[i] == (int64_t)(nv_seed(13, root, i + (uint64_t)round * 100000) % 1000003),
                  "round %d: broadcast from %d element %zu", round, root, i);
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
}

static void check_registered(void)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    const size_t bytes = 100003;
    /* The program's own memory (the heap is host memory here: so is this). */
    unsigned char *own = malloc(bytes + 64);
    NV_ASSERT(own, "out of memory");
    unsigned char *buf = (unsigned char *)nvshmemx_buffer_register_symmetric(own, bytes, 0);
    NV_ASSERT(buf == own, "register_symmetric returned %p for %p", (void *)buf, (void *)own);
    memset(buf, NV_POISON, bytes);
    uint64_t *counter = (uint64_t *)(buf + 8);
    *counter = 0;
    unsigned char *mine = malloc(bytes), *want = malloc(bytes);
    nv_fill(mine, bytes, nv_seed(14, me, 0));
    nvshmem_barrier_all();
    nvshmem_putmem(buf + 64, mine, bytes - 64, next);
    (void)nvshmem_uint64_atomic_fetch_add(counter, (uint64_t)me + 1, 0);
    nvshmem_barrier_all();
    nv_fill(want, bytes, nv_seed(14, prev, 0));
    NV_EXPECT_BYTES(buf + 64, want, bytes - 64, "put into a registered buffer from PE %d", prev);
    if (me == 0)
        NV_ASSERT(*counter == (uint64_t)n * (n + 1) / 2, "fetch_add on a registered buffer: %" PRIu64,
                  *counter);
    NV_ASSERT(nvshmem_ptr(buf + 64, me) == buf + 64, "nvshmem_ptr of my registered buffer");
    nvshmem_barrier_all();
    NV_ASSERT(nvshmemx_buffer_unregister_symmetric(buf, bytes) == 0, "unregister");
    NV_ASSERT(nvshmem_ptr(buf + 64, me) == NULL, "nvshmem_ptr after unregister is not NULL");
    /* registered again: a fresh segment works the same */
    buf = (unsigned char *)nvshmemx_buffer_register_symmetric(own, bytes, 0);
    NV_ASSERT(buf == own, "second register_symmetric");
    nvshmem_barrier_all();
    nvshmem_putmem(buf, mine, 64, next);
    nvshmem_barrier_all();
    NV_EXPECT_BYTES(buf, want, 64, "put after registering again, from PE %d", prev);
    NV_ASSERT(nvshmemx_buffer_unregister_symmetric(buf, bytes) == 0, "second unregister");
    free(mine), free(want), free(own);
}

/* nvshmem_align: the address is aligned on every PE (the heap's windows
 * are placed alike modulo 2 MiB), up to 2 MiB, also for an object that
 * needs a new segment; a put to the next PE lands in its copy. */
static void check_aligned(void)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    const size_t aligns[] = {4096, 65536, MIB, 2 * MIB, MIB};
    const size_t sizes[] = {64, 4097, 100, 64, 3 * MIB + 5};
    for (int i = 0; i < 5; i++) {
        unsigned char *p = (unsigned char *)nvshmem_align(aligns[i], sizes[i]);
        NV_ASSERT(p && (uintptr_t)p % aligns[i] == 0,
                  "nvshmem_align(%zu, %zu) gave %p", aligns[i], sizes[i], (void *)p);
        uint64_t mine = nv_seed(15, me, (uint64_t)i), *last = (uint64_t *)(p + sizes[i] - 8 -
                                                                     (sizes[i] % 8));
        *last = 0;
        nvshmem_barrier_all();
        nvshmem_uint64_p(last, mine, next);
        nvshmem_barrier_all();
        NV_ASSERT(*last == nv_seed(15, prev, (uint64_t)i), "p into an object aligned to %zu",
                  aligns[i]);
        nvshmem_free(p);
    }
}

/* Two buffers registered side by side: the first byte of the second is
 * the second's, not one past the first's end. */
static void check_adjacent(void)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    unsigned char *own = aligned_alloc(4096, 8192);
    NV_ASSERT(own, "out of memory");
    memset(own, NV_POISON, 8192);
    NV_ASSERT(nvshmemx_buffer_register_symmetric(own, 4096, 0) == own, "register the first");
    NV_ASSERT(nvshmemx_buffer_register_symmetric(own + 4096, 4096, 0) == own + 4096,
              "register the second, right after the first");
    NV_ASSERT(nvshmem_ptr(own + 4096, me) == own + 4096, "nvshmem_ptr of the second's first byte");
    uint64_t mine = nv_seed(16, me, 0);
    nvshmem_barrier_all();
    nvshmem_putmem(own + 4096, &mine, 8, next);
    nvshmem_barrier_all();
    uint64_t got;
    memcpy(&got, own + 4096, 8);
    NV_ASSERT(got == nv_seed(16, prev, 0), "put at the second buffer's first byte");
    NV_ASSERT(nvshmemx_buffer_unregister_symmetric(own + 4096, 4096) == 0, "unregister");
    NV_ASSERT(nvshmemx_buffer_unregister_symmetric(own, 4096) == 0, "unregister");
    free(own);
}

int main(void)
{
    setenv("NVSHMEM_SYMMETRIC_SIZE", "4M", 1);
    nv_init("heap_growth");
    const int n_objects = 6;
    unsigned char *objs[6];
    for (int i = 0; i < n_objects; i++) {
        objs[i] = (unsigned char *)nvshmem_malloc(object_bytes(i));
        NV_ASSERT(objs[i], "object %d of %zu bytes: NULL past the first heap", i, object_bytes(i));
        for (int j = 0; j < i; j++)
            NV_ASSERT(objs[j] + object_bytes(j) <= objs[i] || objs[i] + object_bytes(i) <= objs[j],
                      "objects %d and %d overlap", j, i);
    }
    for (int i = 0; i < n_objects; i++) {
        check_rma(objs[i], object_bytes(i), i);
        check_amo_signal((uint64_t *)(objs[i] + 4096), i);
        check_strided((int *)(objs[i] + 8192), i);
    }
    check_collectives(0);
    /* a team made after the growth, and its barrier */
    nvshmem_team_t even;
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (nvshmem_n_pes() + 1) / 2, NULL, 0, &even);
    if (even != NVSHMEM_TEAM_INVALID) {
        nvshmem_team_sync(even);
        nvshmem_team_destroy(even);
    }
    /* free and allocate again: the space is reused, and still works */
    for (int i = 0; i < n_objects; i += 2)
        nvshmem_free(objs[i]);
    for (int i = 0; i < n_objects; i += 2) {
        objs[i] = (unsigned char *)nvshmem_malloc(object_bytes(i));
        NV_ASSERT(objs[i], "object %d again", i);
        check_rma(objs[i], object_bytes(i), 10 + i);
    }
    check_collectives(1);
    check_registered();
    for (int i = 0; i < n_objects; i++)
        nvshmem_free(objs[i]);
    check_aligned();
    check_adjacent();
    nv_finish();
    return 0;
}
