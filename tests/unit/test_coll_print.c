/*
 * test_coll_print.c - the collectives' call fingerprint (coll_proto.h,
 * gpurma_dcoll__print), which every piece of a collective carries and every
 * receiver checks: ranks that pass another count must never share a print
 * (a shared one returned SUCCESS with stale bytes on 2026-11-26), calls of
 * one count that differ in another field neither, and no print is 0 (a
 * zeroed slot). Plain C, no library: the function is the
 * header's, as the host backend and the GPU kernels compile it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpurma_coll_device.h"

static int failures;

#define EXPECT(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "test_coll_print: " __VA_ARGS__);                \
            fputc('\n', stderr);                                             \
            failures++;                                                      \
        }                                                                    \
    } while (0)

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

int main(void)
{
    /* 1. Every count below 2^22 of one call shape has a print of its own
     * (a 32-bit hash of the count has thousands of collisions here). */
    const size_t n = (size_t)1 << 22;
    uint32_t *p = malloc(n * sizeof(*p));
    if (!p)
        return 99;
    for (size_t c = 0; c < n; c++)
        p[c] = gpurma_dcoll__print(GPURMA_DCOLL__K_ALLREDUCE, c, GPURMA_INT32, GPURMA_SUM, 0);
    qsort(p, n, sizeof(*p), cmp_u32);
    size_t same = 0;
    for (size_t i = 1; i < n; i++)
        same += p[i] == p[i - 1];
    EXPECT(same == 0, "%zu pairs of counts below 2^22 share an allreduce's print", same);
    free(p);

    /* 2. The pair that collided before, and random pairs of distinct
     * counts below 2^32 - 1 in every shape, never share a print. */
    EXPECT(gpurma_dcoll__print(GPURMA_DCOLL__K_ALLREDUCE, 34764, GPURMA_INT32, GPURMA_SUM, 0) !=
               gpurma_dcoll__print(GPURMA_DCOLL__K_ALLREDUCE, 39226, GPURMA_INT32, GPURMA_SUM, 0),
           "counts 34764 and 39226 share a print");
    long hits = 0;
    for (int i = 0; i < 1000000; i++) {
        const int kind = 1 + (int)(next() % 8), dt = (int)(next() % 10), op = (int)(next() % 5);
        const int root = (int)(next() % 64) - 2;
        const size_t a = (size_t)(next() % 0xfffffffeull), b = (size_t)(next() % 0xfffffffeull);
        if (a == b)
            continue;
        hits += gpurma_dcoll__print(kind, a, (gpurma_dtype_t)dt, (gpurma_redop_t)op, root) ==
                gpurma_dcoll__print(kind, b, (gpurma_dtype_t)dt, (gpurma_redop_t)op, root);
    }
    EXPECT(hits == 0, "%ld random pairs of distinct counts share a print", hits);

    /* 3. Never 0, at the counts where the sum wraps too; the stated limit:
     * counts 2^32 - 1 apart share one. */
    for (int i = 0; i < 1000000; i++) {
        static const uint64_t edges[4] = {0, 0xfffffffeull, 0xffffffffull, UINT64_MAX};
        const uint64_t c = i < 4 ? edges[i] : next();
        const int kind = 1 + i % 8, dt = i % 10, op = i % 5, root = i % 7 - 2;
        const uint32_t pr = gpurma_dcoll__print(kind, (size_t)c, (gpurma_dtype_t)dt,
                                                (gpurma_redop_t)op, root);
        EXPECT(pr != 0, "print 0 at kind %d count %llu", kind, (unsigned long long)c);
    }
    EXPECT(gpurma_dcoll__print(GPURMA_DCOLL__K_REDUCE, 5, GPURMA_FLOAT64, GPURMA_MAX, 1) ==
               gpurma_dcoll__print(GPURMA_DCOLL__K_REDUCE, 5 + 0xffffffffull, GPURMA_FLOAT64,
                                   GPURMA_MAX, 1),
           "counts 2^32 - 1 apart should share a print (the documented limit)");

    /* 4. For one count, calls that differ in collective, dtype, op or root
     * never share a print (the fields are packed, not hashed): every
     * shape with roots -2 (alltoallv's agreement) to 4093, at a few counts.
     * Together with the exact count in every slot's trailer this tells
     * apart any two calls. */
    const size_t shapes = (size_t)8 * 10 * 5 * 4096;
    uint32_t *q = malloc(shapes * sizeof(*q));
    if (!q)
        return 99;
    static const uint64_t counts[4] = {0, 1, 1001, 0x123456789abull};
    for (int ci = 0; ci < 4; ci++) {
        size_t at = 0;
        for (int kind = 1; kind <= 8; kind++)
            for (int dt = 0; dt < 10; dt++)
                for (int op = 0; op < 5; op++)
                    for (int root = -2; root < 4094; root++)
                        q[at++] = gpurma_dcoll__print(kind, (size_t)counts[ci], (gpurma_dtype_t)dt,
                                                      (gpurma_redop_t)op, root);
        qsort(q, at, sizeof(*q), cmp_u32);
        size_t twins = 0;
        for (size_t i = 1; i < at; i++)
            twins += q[i] == q[i - 1];
        EXPECT(twins == 0, "%zu pairs of calls of count %llu share a print", twins,
               (unsigned long long)counts[ci]);
    }
    free(q);
    if (failures)
        return 1;
    printf("test_coll_print: passed\n");
    return 0;
}
