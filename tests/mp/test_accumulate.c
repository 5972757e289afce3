/*
 * test_accumulate.c - MPI-3 accumulate, get_accumulate, fetch_and_op and
 * compare_and_swap: every operator x dtype under contention (every rank
 * hammering one element of rank 0, and a 5-element vector whose elements
 * share 64-bit words with poisoned neighbours), checked against a reference
 * computed here from every rank's operands, which each rank regenerates.
 *
 * Operands keep the result independent of the order the ranks' operations
 * land in: integers wrap (exact in any order); float SUM adds small
 * integers and PROD multiplies by +-1 (exact in f16/bf16/f32/f64); MIN/MAX
 * pick an operand; REPLACE is checked as a chain: the old values returned
 * by get_accumulate plus the final value are exactly the initial value plus
 * every operand. NO_OP reads without changing anything. compare_and_swap
 * hands out tickets: every successful swap's old value is distinct, and the
 * final count is exact. Then locks: exclusive sections (a get, a local
 * increment, a put under the lock) count exactly; shared locks coexist;
 * lock_all/unlock_all; misuse is refused. Bad arguments write nothing.
 */
#include <math.h>

#include "common.h"
#include "gpurma_device.h" /* f16/bf16 conversions for the reference */

enum { OPS = 20, CAS_OPS = 15 /* 8 ranks' tickets fit an int8 */, VEC = 5, REGION = 128,
       PURPOSE = 70 };
enum { NDTYPES = 10, NOPS = 9 };

static const char *const dt_names[] = {"int8",    "uint8",    "int32",   "uint32", "int64",
                                       "uint64",  "float16",  "bfloat16", "float32", "float64"};
static const char *const op_names[] = {"SUM", "PROD", "MIN", "MAX", "REPLACE",
                                       "NO_OP", "BAND", "BOR", "BXOR"};

static int is_float(gpurma_dtype_t t) { return t >= GPURMA_FLOAT16; }
static size_t esize(gpurma_dtype_t t) { return gpurma_dev_dtype_size(t); }
static uint64_t emask(gpurma_dtype_t t)
{
    return esize(t) == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * esize(t))) - 1);
}

static double to_double(gpurma_dtype_t t, uint64_t b)
{
    switch (t) {
    case GPURMA_INT8: return (int8_t)b;
    case GPURMA_UINT8: return (uint8_t)b;
    case GPURMA_INT32: return (int32_t)b;
    case GPURMA_UINT32: return (uint32_t)b;
    case GPURMA_INT64: return (double)(int64_t)b;
    case GPURMA_UINT64: return (double)b;
    case GPURMA_FLOAT16: return gpurma_dev_f16_to_f32((uint16_t)b);
    case GPURMA_BFLOAT16: return gpurma_dev_bf16_to_f32((uint16_t)b);
    case GPURMA_FLOAT32: {
        float f;
        uint32_t u = (uint32_t)b;
        memcpy(&f, &u, 4);
        return f;
    }
    default: {
        double d;
        memcpy(&d, &b, 8);
        return d;
    }
    }
}

/* Float bits of a value exactly representable in t. */
static uint64_t from_double(gpurma_dtype_t t, double d)
{
    if (t == GPURMA_FLOAT16)
        return gpurma_dev_f32_to_f16((float)d);
    if (t == GPURMA_BFLOAT16)
        return gpurma_dev_f32_to_bf16((float)d);
    if (t == GPURMA_FLOAT32) {
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Operand of (rank, i-th op, element j); also the initial value (rank -1). */
static uint64_t operand(gpurma_dtype_t t, gpurma_acc_op_t op, int rank, int i, int j)
{
    uint64_t s = t_seed(PURPOSE, (uint64_t)(rank + 1), (uint64_t)((t * 16 + op) * 4096 + i * 8 + j));
    uint64_t r = t_splitmix64(&s);
    if (!is_float(t))
        return r & emask(t);
    if (op == GPURMA_ACC_SUM) {
        int span = t == GPURMA_BFLOAT16 ? 3 : 5; /* partial sums stay exact */
        return from_double(t, (double)((int)(r % (uint64_t)span) - span / 2));
    }
    if (op == GPURMA_ACC_PROD)
        return from_double(t, r & 1 ? -1.0 : 1.0);
    /* MIN, MAX, REPLACE, NO_OP: distinct finite values. */
    return from_double(t, (double)((int64_t)(r % 2001) - 1000) / 8.0);
}

/* a < b, exactly (64-bit integers do not fit a double). */
static int less(gpurma_dtype_t t, uint64_t a, uint64_t b)
{
    switch (t) {
    case GPURMA_INT8: return (int8_t)a < (int8_t)b;
    case GPURMA_INT32: return (int32_t)a < (int32_t)b;
    case GPURMA_INT64: return (int64_t)a < (int64_t)b;
    case GPURMA_UINT8: case GPURMA_UINT32: case GPURMA_UINT64: return a < b;
    default: return to_double(t, a) < to_double(t, b);
    }
}

static uint64_t reference(gpurma_dtype_t t, gpurma_acc_op_t op, int j, int nranks, int with_ops)
{
    uint64_t acc = operand(t, op, -1, 0, j);
    double dacc = to_double(t, acc);
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < with_ops; i++) {
            uint64_t v = operand(t, op, r, i, j);
            double dv = to_double(t, v);
            switch (op) {
            case GPURMA_ACC_SUM:
                if (is_float(t))
                    dacc += dv;
                else
                    acc = (acc + v) & emask(t);
                break;
            case GPURMA_ACC_PROD:
                if (is_float(t))
                    dacc *= dv;
                else
                    acc = (acc * v) & emask(t);
                break;
            case GPURMA_ACC_MIN:
                if (less(t, v, acc))
                    acc = v;
                break;
            case GPURMA_ACC_MAX:
                if (less(t, acc, v))
                    acc = v;
                break;
            case GPURMA_ACC_BAND: acc &= v; break;
            case GPURMA_ACC_BOR: acc |= v; break;
            case GPURMA_ACC_BXOR: acc ^= v; break;
            default: break;
            }
        }
    if (is_float(t) && (op == GPURMA_ACC_SUM || op == GPURMA_ACC_PROD))
        acc = from_double(t, dacc);
    return acc & emask(t);
}

static uint64_t load_el(const unsigned char *p, gpurma_dtype_t t)
{
    uint64_t v = 0;
    memcpy(&v, p, esize(t));
    return v;
}

/* Region layout (rank 0's window): single element at 8; vector at 16 + es
 * (so 1-, 2- and 4-byte elements share words with poisoned bytes). */
static size_t single_off(size_t region) { return region + 8; }
static size_t vec_off(size_t region, gpurma_dtype_t t) { return region + 16 + esize(t); }

/* Odd ranks use the device API (CPU threads on the host backend), even ranks
 * the host calls: both hammer the same elements at once. */
static gpurma_dev_win_t dw;
static int use_dev(void) { return t_rank % 2 == 1; }

static void run_combo(gpurma_win_t w, unsigned char *base, size_t region, gpurma_dtype_t t,
                      gpurma_acc_op_t op, uint64_t *olds_area)
{
    size_t es = esize(t);
    char what[96];
    snprintf(what, sizeof(what), "%s %s", op_names[op], dt_names[t]);
    if (t_rank == 0) {
        memset(base + region, T_POISON, REGION);
        uint64_t init = operand(t, op, -1, 0, 0);
        memcpy(base + single_off(region), &init, es);
        for (int j = 0; j < VEC; j++) {
            uint64_t v = operand(t, op, -1, 0, j);
            memcpy(base + vec_off(region, t) + (size_t)j * es, &v, es);
        }
    }
    CHECK(gpurma_barrier(t_world));
    unsigned char vec[VEC * 8], res[VEC * 8];
    uint64_t olds[OPS];
    for (int i = 0; i < OPS; i++) {
        uint64_t v = operand(t, op, t_rank, i, 0), old = 0;
        /* The single element: fetch_and_op, get_accumulate, accumulate in turn. */
        if (use_dev() && (i % 3 != 2 || op == GPURMA_ACC_REPLACE || op == GPURMA_ACC_NO_OP))
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_fetch_and_op(dw, 0, single_off(region), &v, &old, t, op));
        else if (use_dev())
            EXPECT_CODE(GPURMA_SUCCESS,
                        gpurma_dev_accumulate(dw, 0, single_off(region), &v, 1, t, op));
        else if (i % 3 == 0)
            CHECK(gpurma_fetch_and_op(w, 0, single_off(region), &v, &old, t, op));
        else if (i % 3 == 1)
            CHECK(gpurma_get_accumulate(w, 0, single_off(region), &v, &old, 1, t, op));
        else if (op == GPURMA_ACC_REPLACE || op == GPURMA_ACC_NO_OP)
            CHECK(gpurma_fetch_and_op(w, 0, single_off(region), &v, &old, t, op));
        else
            CHECK(gpurma_accumulate(w, 0, single_off(region), &v, 1, t, op));
        olds[i] = old & emask(t);
        if (op == GPURMA_ACC_NO_OP)
            T_ASSERT(olds[i] == operand(t, op, -1, 0, 0), "%s: NO_OP read %#llx", what,
                     (unsigned long long)olds[i]);
        for (int j = 0; j < VEC; j++) {
            uint64_t e = operand(t, op, t_rank, i, j);
            memcpy(vec + (size_t)j * es, &e, es);
        }
        if (use_dev())
            EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_get_accumulate(dw, 0, vec_off(region, t), vec,
                                                                  i % 2 ? NULL : res, VEC, t, op));
        else if (i % 2)
            CHECK(gpurma_accumulate(w, 0, vec_off(region, t), op == GPURMA_ACC_NO_OP ? NULL : vec,
                                    VEC, t, op));
        else
            CHECK(gpurma_get_accumulate(w, 0, vec_off(region, t), vec, res, VEC, t, op));
    }
    if (op == GPURMA_ACC_REPLACE) /* the chain: every old value goes to rank 0 */
        CHECK(gpurma_put(w, 0, (size_t)((uint64_t *)olds_area - (uint64_t *)base) * 8 +
                                   (size_t)t_rank * OPS * 8,
                         olds, sizeof(olds)));
    CHECK(gpurma_barrier(t_world));
    if (t_rank != 0)
        return;
    /* Poison around the elements survived (the words they share). */
    t_verify_fill(base + region, T_POISON, 8, what, 0, region);
    t_verify_fill(base + region + 8 + es, T_POISON, 8, what, 0, region + 8 + es);
    size_t vend = vec_off(region, t) + VEC * es;
    t_verify_fill(base + vend, T_POISON, region + REGION - vend, what, 0, vend);
    for (int j = 0; j < VEC; j++) {
        uint64_t got = load_el(base + vec_off(region, t) + (size_t)j * es, t);
        if (op == GPURMA_ACC_REPLACE) {
            int found = got == operand(t, op, -1, 0, j);
            for (int r = 0; r < t_size && !found; r++)
                for (int i = 0; i < OPS && !found; i++)
                    found = got == operand(t, op, r, i, j);
            T_ASSERT(found, "%s: vector element %d = %#llx is nobody's operand", what, j,
                     (unsigned long long)got);
            continue;
        }
        uint64_t want = reference(t, op, j, t_size, op == GPURMA_ACC_NO_OP ? 0 : OPS);
        T_ASSERT(got == want, "%s, %d ranks: vector element %d = %#llx, expected %#llx", what,
                 t_size, j, (unsigned long long)got, (unsigned long long)want);
    }
    uint64_t got = load_el(base + single_off(region), t);
    if (op != GPURMA_ACC_REPLACE) {
        uint64_t want = reference(t, op, 0, t_size, op == GPURMA_ACC_NO_OP ? 0 : OPS);
        T_ASSERT(got == want, "%s, %d ranks: element = %#llx, expected %#llx", what, t_size,
                 (unsigned long long)got, (unsigned long long)want);
        return;
    }
    /* REPLACE chain: olds + final == initial + operands, as multisets. */
    size_t n = (size_t)t_size * OPS;
    uint64_t *have = t_malloc((n + 1) * 8), *need = t_malloc((n + 1) * 8);
    memcpy(have, olds_area, n * 8);
    have[n] = got;
    need[0] = operand(t, op, -1, 0, 0);
    for (int r = 0; r < t_size; r++)
        for (int i = 0; i < OPS; i++)
            need[1 + (size_t)r * OPS + (size_t)i] = operand(t, op, r, i, 0);
    for (size_t a = 0; a <= n; a++) {
        size_t b = 0;
        while (b <= n && need[b] != have[a])
            b++;
        T_ASSERT(b <= n, "%s: value %#llx seen twice or never sent", what,
                 (unsigned long long)have[a]);
        need[b] = ~(uint64_t)0 ^ 0x5a5a; /* used */
    }
    free(have);
    free(need);
}

/* Tickets: every rank increments rank 0's element by compare_and_swap. */
static void run_cas(gpurma_win_t w, unsigned char *base, size_t region, gpurma_dtype_t t,
                    uint64_t *tickets_area)
{
    size_t es = esize(t);
    uint64_t one = is_float(t) ? from_double(t, 1.0) : 1;
    if (t_rank == 0) {
        memset(base + region, T_POISON, REGION);
        memset(base + single_off(region), 0, es);
    }
    CHECK(gpurma_barrier(t_world));
    uint64_t mine[CAS_OPS];
    for (int i = 0; i < CAS_OPS; i++) {
        for (;;) {
            uint64_t cur = 0, next, old = 0, none = 0;
            CHECK(gpurma_fetch_and_op(w, 0, single_off(region), &none, &cur, t, GPURMA_ACC_NO_OP));
            next = is_float(t) ? from_double(t, to_double(t, cur) + 1.0) : (cur + one) & emask(t);
            if (use_dev())
                EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_compare_and_swap(dw, 0, single_off(region),
                                                                        &cur, &next, &old, t));
            else
                CHECK(gpurma_compare_and_swap(w, 0, single_off(region), &cur, &next, &old, t));
            if ((old & emask(t)) == (cur & emask(t))) {
                mine[i] = cur & emask(t);
                break;
            }
        }
    }
    CHECK(gpurma_put(w, 0, (size_t)((uint64_t *)tickets_area - (uint64_t *)base) * 8 +
                               (size_t)t_rank * CAS_OPS * 8,
                     mine, sizeof(mine)));
    CHECK(gpurma_barrier(t_world));
    if (t_rank != 0)
        return;
    size_t n = (size_t)t_size * CAS_OPS;
    unsigned char *seen = calloc(n, 1);
    for (size_t k = 0; k < n; k++) {
        double d = to_double(t, tickets_area[k]);
        T_ASSERT(d >= 0 && d < (double)n && d == floor(d) && !seen[(size_t)d],
                 "compare_and_swap %s: ticket %g twice or out of 0..%zu", dt_names[t], d, n - 1);
        seen[(size_t)d] = 1;
    }
    double fin = to_double(t, load_el(base + single_off(region), t));
    T_ASSERT(fin == (double)n, "compare_and_swap %s: final %g, expected %zu", dt_names[t], fin, n);
    t_verify_fill(base + region, T_POISON, 8, "compare_and_swap neighbours", 0, region);
    free(seen);
}

static void run_locks(gpurma_win_t w, unsigned char *base, size_t counter_off)
{
    /* Exclusive: get, increment here, put, all under the lock of rank 0. */
    if (t_rank == 0)
        memset(base + counter_off, 0, 8);
    CHECK(gpurma_barrier(t_world));
    for (int i = 0; i < OPS; i++) {
        uint64_t v;
        CHECK(gpurma_win_lock(w, GPURMA_LOCK_EXCLUSIVE, 0));
        CHECK(gpurma_get(w, 0, &v, counter_off, 8));
        CHECK(gpurma_flush_local(w, 0));
        v++;
        CHECK(gpurma_put(w, 0, counter_off, &v, 8));
        CHECK(gpurma_win_unlock(w, 0));
    }
    CHECK(gpurma_barrier(t_world));
    if (t_rank == 0) {
        uint64_t v;
        memcpy(&v, base + counter_off, 8);
        T_ASSERT(v == (uint64_t)t_size * OPS, "exclusive lock: counter %llu, expected %d",
                 (unsigned long long)v, t_size * OPS);
    }
    /* Shared locks coexist: every rank holds one on rank 0 at once. */
    CHECK(gpurma_win_lock(w, GPURMA_LOCK_SHARED, 0));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_unlock(w, 0));
    /* lock_all; puts to everyone; unlock_all completes them. */
    /* The source lives until unlock_all completes the puts. */
    uint64_t mine = 0x1000u + (uint64_t)t_rank;
    CHECK(gpurma_win_lock_all(w));
    for (int p = 0; p < t_size; p++)
        CHECK(gpurma_put(w, p, counter_off + 8 + (size_t)t_rank * 8, &mine, 8));
    CHECK(gpurma_win_unlock_all(w));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_win_sync(w));
    for (int r = 0; r < t_size; r++) {
        uint64_t v;
        memcpy(&v, base + counter_off + 8 + (size_t)r * 8, 8);
        T_ASSERT(v == 0x1000u + (uint64_t)r, "lock_all: word of rank %d is %#llx", r,
                 (unsigned long long)v);
    }
    /* Misuse. */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_unlock(w, 0));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_unlock_all(w));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_lock(w, (gpurma_lock_type_t)7, 0));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_lock(w, GPURMA_LOCK_SHARED, t_size));
    CHECK(gpurma_win_lock(w, GPURMA_LOCK_SHARED, 0));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_win_lock(w, GPURMA_LOCK_EXCLUSIVE, 0));
    CHECK(gpurma_win_unlock(w, 0));
    CHECK(gpurma_barrier(t_world));
}

static void bad_input(gpurma_win_t w, unsigned char *base, size_t win_len)
{
    uint32_t v = 1, r = 0;
    unsigned char before[64];
    memcpy(before, base, 64);
    EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_accumulate(w, t_rank, 2, &v, 1, GPURMA_INT32,
                                                        GPURMA_ACC_SUM));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_accumulate(w, t_rank, 0, &v, 1, GPURMA_FLOAT32,
                                                         GPURMA_ACC_BXOR));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_accumulate(w, t_rank, 0, &v, 1, GPURMA_INT32,
                                                         (gpurma_acc_op_t)42));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_accumulate(w, t_rank, 0, &v, 1,
                                                         (gpurma_dtype_t)99, GPURMA_ACC_SUM));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_accumulate(w, t_rank, 0, NULL, 1, GPURMA_INT32,
                                                         GPURMA_ACC_SUM));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_get_accumulate(w, t_rank, 0, &v, NULL, 1,
                                                             GPURMA_INT32, GPURMA_ACC_SUM));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_accumulate(w, t_rank, 0, &v, SIZE_MAX / 2,
                                                         GPURMA_INT64, GPURMA_ACC_SUM));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_accumulate(w, t_rank, win_len, &v, 1,
                                                           GPURMA_INT32, GPURMA_ACC_SUM));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_accumulate(w, t_size, 0, &v, 1, GPURMA_INT32,
                                                         GPURMA_ACC_SUM));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_compare_and_swap(w, t_rank, 0, NULL, &v, &r,
                                                               GPURMA_UINT32));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_fetch_and_op(w, t_rank, 0, &v, NULL, GPURMA_UINT32,
                                                           GPURMA_ACC_SUM));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED, gpurma_dev_accumulate(dw, t_rank, 2, &v, 1, GPURMA_INT32,
                                                             GPURMA_ACC_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_accumulate(dw, t_rank, 0, &v, 1,
                                                              GPURMA_FLOAT32, GPURMA_ACC_BXOR));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_accumulate(dw, t_rank, win_len, &v, 1,
                                                                GPURMA_INT32, GPURMA_ACC_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_compare_and_swap(dw, t_rank, 0, NULL, &v, &r,
                                                                    GPURMA_UINT32));
    t_verify(base, before, 64, "window after refused accumulates", t_rank, 0);
}

int main(void)
{
    t_init("test_accumulate", 0);
    size_t ncombo = NDTYPES * NOPS + NDTYPES;
    size_t olds_off = ncombo * REGION, olds_len = (size_t)t_size * OPS * 8;
    size_t counter_off = olds_off + olds_len;
    /* 4 bytes past a multiple of 8: the word of an int32 at the end would
     * pass the window (refused); everything before is fine. */
    size_t win_len = counter_off + 8 + (size_t)t_size * 8 + 4;
    gpurma_win_t w;
    void *vbase;
    CHECK(gpurma_win_allocate(t_world, win_len, NULL, &vbase, &w));
    unsigned char *base = vbase;
    CHECK(gpurma_win_device(w, &dw));
    memset(base, T_POISON, win_len);
    CHECK(gpurma_barrier(t_world));
    uint64_t *olds_area = (uint64_t *)(base + olds_off);
    size_t region = 0;
    int combos = 0;
    for (int t = 0; t < NDTYPES; t++)
        for (int op = 0; op < NOPS; op++, region += REGION) {
            if (!gpurma_dev_acc_valid((gpurma_dtype_t)t, (gpurma_acc_op_t)op))
                continue;
            run_combo(w, base, region, (gpurma_dtype_t)t, (gpurma_acc_op_t)op, olds_area);
            combos++;
        }
    for (int t = 0; t < NDTYPES; t++, region += REGION)
        run_cas(w, base, region, (gpurma_dtype_t)t, olds_area);
    {
        uint32_t v = 3;
        if (t_rank == 0)
            EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS,
                       gpurma_accumulate(w, 0, win_len - 4, &v, 1, GPURMA_UINT32,
                                         GPURMA_ACC_SUM));
    }
    run_locks(w, base, counter_off);
    bad_input(w, base, win_len);
    CHECK(gpurma_win_free(&w));
    char detail[96];
    snprintf(detail, sizeof(detail), "%d operator x dtype pairs, %d CAS dtypes, locks", combos,
             NDTYPES);
    return t_finish(detail);
}
