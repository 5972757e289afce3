/*
 * test_coll_ref.h - what the collectives' tests share (tests/mp/test_coll.c
 * on the host backend, tests/gpu/test_gpu_coll.cu on GPUs): seeded data
 * per (origin rank, round), element access for every dtype, and the
 * expected result of a reduction. The switch engine's tests
 * (tests/mp/test_switch.c, tests/gpu/test_gpu_switch.cu) take their integer
 * references from here too. C, and C++ for nvcc.
 *
 * Expected results: integers exactly (SUM and PROD wrap, AVG is the
 * wrapped sum divided by n, truncated toward zero); floats against a
 * float64 reference, within (n + 1) * eps * (sum of magnitudes) for SUM and
 * AVG and (n + 1) * eps * |result| for PROD, eps the type's unit roundoff
 * (f16 2^-11, bf16 2^-8, f32 6e-8, f64 1.2e-16); MIN and MAX exactly.
 */
#ifndef GPURMA_TESTS_COLL_REF_H
#define GPURMA_TESTS_COLL_REF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpurma.h"
#include "gpurma/detail/dev_reduce.h"

#define CR_NDTYPES 10
#define CR_NOPS 5

static const char *const cr_dtype_names[CR_NDTYPES] = {"int8",  "uint8", "int32", "uint32",
                                                       "int64", "uint64", "f16",  "bf16",
                                                       "f32",   "f64"};
static const char *const cr_op_names[CR_NOPS] = {"sum", "prod", "min", "max", "avg"};

static inline int cr_is_float(gpurma_dtype_t t) { return t >= GPURMA_FLOAT16; }
static inline int cr_is_signed(gpurma_dtype_t t)
{
    return t == GPURMA_INT8 || t == GPURMA_INT32 || t == GPURMA_INT64;
}
static inline size_t cr_esize(gpurma_dtype_t t) { return gpurma_dev_dtype_size(t); }

static inline uint64_t cr_mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline double cr_get_f(const void *buf, gpurma_dtype_t t, size_t i)
{
    const char *p = (const char *)buf + i * cr_esize(t);
    uint16_t h;
    float f;
    double d;
    switch (t) {
    case GPURMA_FLOAT16: memcpy(&h, p, 2); return gpurma_dev_f16_to_f32(h);
    case GPURMA_BFLOAT16: memcpy(&h, p, 2); return gpurma_dev_bf16_to_f32(h);
    case GPURMA_FLOAT32: memcpy(&f, p, 4); return f;
    default: memcpy(&d, p, 8); return d;
    }
}

static inline void cr_put_f(void *buf, gpurma_dtype_t t, size_t i, double v)
{
    char *p = (char *)buf + i * cr_esize(t);
    uint16_t h;
    float f = (float)v;
    switch (t) {
    case GPURMA_FLOAT16: h = gpurma_dev_f32_to_f16(f); memcpy(p, &h, 2); break;
    case GPURMA_BFLOAT16: h = gpurma_dev_f32_to_bf16(f); memcpy(p, &h, 2); break;
    case GPURMA_FLOAT32: memcpy(p, &f, 4); break;
    default: memcpy(p, &v, 8); break;
    }
}

/* Integers as the low bytes of a uint64 (little-endian), sign-extended
 * for signed types. */
static inline uint64_t cr_get_u(const void *buf, gpurma_dtype_t t, size_t i)
{
    size_t es = cr_esize(t);
    uint64_t v = 0;
    memcpy(&v, (const char *)buf + i * es, es);
    if (cr_is_signed(t) && es < 8 && ((v >> (8 * es - 1)) & 1))
        v |= ~0ull << (8 * es);
    return v;
}

static inline uint64_t cr_trunc_u(uint64_t v, gpurma_dtype_t t)
{
    size_t es = cr_esize(t);
    return es == 8 ? v : v & ((1ull << (8 * es)) - 1);
}

/* The n elements rank `origin` contributes in round `round`: random bytes
 * for integers; floats in [-2, 2), or +-[0.5, 2) for PROD (no underflow). */
static inline void cr_gen(void *buf, size_t n, gpurma_dtype_t t, gpurma_redop_t op, int origin,
                          uint64_t round)
{
    uint64_t s = 0xC011ull * 0x100000001B3ull ^ ((uint64_t)origin << 40) ^ round;
    cr_mix(&s);
    if (!cr_is_float(t)) {
        unsigned char *p = (unsigned char *)buf;
        for (size_t i = 0; i < n * cr_esize(t); i += 8) {
            uint64_t v = cr_mix(&s);
            size_t left = n * cr_esize(t) - i;
            memcpy(p + i, &v, left < 8 ? left : 8);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double u = (double)(cr_mix(&s) >> 11) / 9007199254740992.0; /* [0, 1) */
        double v = op == GPURMA_PROD ? (0.5 + 1.5 * u) * ((cr_mix(&s) & 1) ? -1 : 1)
                                     : 4.0 * u - 2.0;
        cr_put_f(buf, t, i, v);
    }
}

static inline double cr_eps(gpurma_dtype_t t)
{
    switch (t) {
    case GPURMA_FLOAT16: return 1.0 / 2048;
    case GPURMA_BFLOAT16: return 1.0 / 256;
    case GPURMA_FLOAT32: return 6e-8;
    default: return 1.2e-16;
    }
}

/* The exact integer result of op over in[0..n)[i] in rank order, as the
 * type's bytes in the low end of a uint64 (SUM and PROD wrap, AVG is the
 * wrapped sum divided by n, truncated toward zero). */
static inline uint64_t cr_reduce_int(void *const *in, int n, size_t i, gpurma_dtype_t t,
                                     gpurma_redop_t op)
{
    uint64_t acc = cr_get_u(in[0], t, i);
    for (int r = 1; r < n; r++) {
        uint64_t v = cr_get_u(in[r], t, i);
        int less = cr_is_signed(t) ? (int64_t)v < (int64_t)acc : v < acc;
        switch (op) {
        case GPURMA_PROD: acc *= v; break;
        case GPURMA_MIN: acc = less ? v : acc; break;
        case GPURMA_MAX: acc = less ? acc : v; break;
        default: acc += v; break;
        }
    }
    if (op == GPURMA_AVG) {
        /* the wrapped sum, as the type holds it, divided */
        uint64_t sum = cr_get_u(&acc, t, 0);
        acc = cr_is_signed(t) ? (uint64_t)((int64_t)sum / n) : cr_trunc_u(sum, t) / (uint64_t)n;
    }
    return cr_trunc_u(acc, t);
}

/* Mismatches of got[i], i < count, against op over in[0..n)[at + i]; the
 * first is printed with `what`. */
static inline long cr_check_reduced(const void *got, void *const *in, int n, size_t at,
                                    size_t count, gpurma_dtype_t t, gpurma_redop_t op,
                                    const char *what)
{
    long bad = 0;
    for (size_t i = 0; i < count; i++) {
        if (cr_is_float(t)) {
            double ref = cr_get_f(in[0], t, at + i), mag = fabs(ref);
            for (int r = 1; r < n; r++) {
                double v = cr_get_f(in[r], t, at + i);
                mag += fabs(v);
                switch (op) {
                case GPURMA_PROD: ref *= v; break;
                case GPURMA_MIN: ref = v < ref ? v : ref; break;
                case GPURMA_MAX: ref = v > ref ? v : ref; break;
                default: ref += v; break;
                }
            }
            if (op == GPURMA_AVG)
                ref /= n, mag /= n;
            double g = cr_get_f(got, t, i);
            double tol = op == GPURMA_MIN || op == GPURMA_MAX ? 0
                         : op == GPURMA_PROD                 ? (n + 1) * cr_eps(t) * fabs(ref)
                                                             : (n + 1) * cr_eps(t) * mag;
            if (!(fabs(g - ref) <= tol) && !bad++)
                fprintf(stderr, "%s: element %zu is %.17g, expected %.17g (tolerance %g)\n",
                        what, i, g, ref, tol);
        } else {
            uint64_t g = cr_trunc_u(cr_get_u(got, t, i), t),
                     want = cr_reduce_int(in, n, at + i, t, op);
            if (g != want && !bad++)
                fprintf(stderr, "%s: element %zu is 0x%llx, expected 0x%llx\n", what, i,
                        (unsigned long long)g, (unsigned long long)want);
        }
    }
    return bad;
}

#endif
