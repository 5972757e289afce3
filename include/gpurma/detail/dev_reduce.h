/*
 * dev_reduce.h - element types and reduction operators, for the switch
 * engine (dev_switch.h) and the collectives (gpurma_coll_device.h): the
 * size of each gpurma_dtype_t, exact f16 and bf16 conversions, and a
 * reduction of n sources in source order. Compiles as CUDA, HIP and plain
 * C; depends on dev_shim.h only. Not ABI.
 *
 * Arithmetic, the same on a GPU and on the host backend:
 *   integers  SUM and PROD wrap (two's complement), AVG is the wrapped sum
 *             divided by the divisor, truncated toward zero;
 *   floats    combined in source order; f16 and bf16 accumulate in f32 and
 *             are rounded once (to nearest even) when stored; MIN and MAX
 *             return NaN when any source is NaN.
 * Every caller that reduces in rank order therefore gets bitwise the same
 * result whichever rank computes it.
 */
#ifndef GPURMA_DETAIL_DEV_REDUCE_H
#define GPURMA_DETAIL_DEV_REDUCE_H

#include "gpurma.h"
#include "gpurma/detail/dev_shim.h"

/* Bytes of one element of dtype, 0 for an unknown one. */
GPURMA_HOST_DEVICE size_t gpurma_dev_dtype_size(gpurma_dtype_t t)
{
    switch (t) {
    case GPURMA_INT8: case GPURMA_UINT8: return 1;
    case GPURMA_FLOAT16: case GPURMA_BFLOAT16: return 2;
    case GPURMA_INT32: case GPURMA_UINT32: case GPURMA_FLOAT32: return 4;
    case GPURMA_INT64: case GPURMA_UINT64: case GPURMA_FLOAT64: return 8;
    }
    return 0;
}

/* ------------------------------------------------ half-precision helpers */

GPURMA_HOST_DEVICE float gpurma_dred__as_float(uint32_t u)
{
    union { uint32_t u; float f; } c;
    c.u = u;
    return c.f;
}
GPURMA_HOST_DEVICE uint32_t gpurma_dred__float_bits(float f)
{
    union { uint32_t u; float f; } c;
    c.f = f;
    return c.u;
}

/* IEEE binary16 to binary32 (exact). */
GPURMA_HOST_DEVICE float gpurma_dev_f16_to_f32(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 31)
        return gpurma_dred__as_float(s | 0x7f800000u | (m << 13));
    if (e)
        return gpurma_dred__as_float(s | ((e + 112) << 23) | (m << 13));
    if (!m)
        return gpurma_dred__as_float(s);
    e = 113; /* subnormal: normalize */
    while (!(m & 0x400u)) {
        m <<= 1;
        e--;
    }
    return gpurma_dred__as_float(s | (e << 23) | ((m & 0x3ffu) << 13));
}

/* binary32 to binary16, rounded to nearest even; NaN stays a (quiet) NaN. */
GPURMA_HOST_DEVICE uint16_t gpurma_dev_f32_to_f16(float f)
{
    uint32_t x = gpurma_dred__float_bits(f);
    uint32_t s = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return (uint16_t)(s | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* 65520 and above round to infinity */
        return (uint16_t)(s | 0x7c00u);
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal half, or zero */
        if (ax <= 0x33000000u)
            return (uint16_t)s;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - (ax >> 23);
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
        return (uint16_t)(s | r);
    }
    uint32_t r = (ax >> 13) - (112u << 10), rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1)))
        r++;
    return (uint16_t)(s | r);
}

GPURMA_HOST_DEVICE float gpurma_dev_bf16_to_f32(uint16_t b)
{
    return gpurma_dred__as_float((uint32_t)b << 16);
}

GPURMA_HOST_DEVICE uint16_t gpurma_dev_f32_to_bf16(float f)
{
    uint32_t x = gpurma_dred__float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* ------------------------------------------------------------ operators */

/* Whether op is one of gpurma_redop_t and dtype one of gpurma_dtype_t. */
GPURMA_HOST_DEVICE int gpurma_dev_redop_valid(gpurma_dtype_t dtype, gpurma_redop_t op)
{
    return gpurma_dev_dtype_size(dtype) != 0 && (unsigned)op <= (unsigned)GPURMA_AVG;
}

#define GPURMA_DRED__ID(x) (x)
#define GPURMA_DRED__NO_NAN(x) 0
#define GPURMA_DRED__IS_NAN(x) ((x) != (x))

/* One combine and one reduce loop per type: T the element, A the
 * accumulator, U the unsigned type integer arithmetic wraps in (at least
 * as wide as int, so that promotions cannot overflow), W the type AVG
 * divides in. */
#define GPURMA_DRED__TYPE(NAME, T, A, U, W, TO_A, FROM_A, IS_NAN, ADD, MUL)                     \
    GPURMA_DEVICE A gpurma_dred__sum_##NAME(A a, A b) { return (A)(ADD); }                    \
    GPURMA_DEVICE A gpurma_dred__prod_##NAME(A a, A b) { return (A)(MUL); }                   \
    GPURMA_DEVICE A gpurma_dred__min_##NAME(A a, A b)                                         \
    {                                                                                          \
        return IS_NAN(a) ? a : IS_NAN(b) ? b : (b < a ? b : a);                                \
    }                                                                                          \
    GPURMA_DEVICE A gpurma_dred__max_##NAME(A a, A b)                                         \
    {                                                                                          \
        return IS_NAN(a) ? a : IS_NAN(b) ? b : (a < b ? b : a);                                \
    }                                                                                          \
    GPURMA_DEVICE void gpurma_dred__reduce_##NAME(T *dst, const char *first, const char *rest, \
                                                  size_t stride, int n, size_t count, int op,  \
                                                  unsigned divisor, unsigned tid,              \
                                                  unsigned nthreads)                           \
    {                                                                                          \
        const int avg = op == GPURMA_AVG && divisor > 1;                                       \
        /* One loop per operator, so that the compiler sees a fixed combine. */               \
        switch (op) {                                                                          \
        case GPURMA_PROD: GPURMA_DRED__LOOP(T, A, W, TO_A, FROM_A, gpurma_dred__prod_##NAME); break; \
        case GPURMA_MIN: GPURMA_DRED__LOOP(T, A, W, TO_A, FROM_A, gpurma_dred__min_##NAME); break; \
        case GPURMA_MAX: GPURMA_DRED__LOOP(T, A, W, TO_A, FROM_A, gpurma_dred__max_##NAME); break; \
        default: GPURMA_DRED__LOOP(T, A, W, TO_A, FROM_A, gpurma_dred__sum_##NAME); break;     \
        }                                                                                      \
    }                                                                                          \
    GPURMA_DEVICE uint64_t gpurma_dred__unit_##NAME(const uint64_t *s, size_t stride, int n,   \
                                                    int op, unsigned divisor)                  \
    {                                                                                          \
        enum { K_ = 8 / sizeof(T) };                                                           \
        union { uint64_t w; T e[K_]; } x;                                                      \
        A acc[K_];                                                                             \
        x.w = s[0];                                                                            \
        for (int k = 0; k < K_; k++)                                                           \
            acc[k] = TO_A(x.e[k]);                                                             \
        for (int r = 1; r < n; r++) {                                                          \
            x.w = s[(size_t)r * stride];                                                       \
            for (int k = 0; k < K_; k++) {                                                     \
                const A v_ = TO_A(x.e[k]);                                                     \
                acc[k] = op == GPURMA_PROD  ? gpurma_dred__prod_##NAME(acc[k], v_)             \
                         : op == GPURMA_MIN ? gpurma_dred__min_##NAME(acc[k], v_)              \
                         : op == GPURMA_MAX ? gpurma_dred__max_##NAME(acc[k], v_)              \
                                            : gpurma_dred__sum_##NAME(acc[k], v_);             \
            }                                                                                  \
        }                                                                                      \
        const int avg = op == GPURMA_AVG && divisor > 1;                                       \
        for (int k = 0; k < K_; k++)                                                           \
            x.e[k] = FROM_A(avg ? (A)((W)acc[k] / (W)divisor) : acc[k]);                       \
        return x.w;                                                                            \
    }                                                                                          \
    GPURMA_DEVICE void gpurma_dred__ptrs_##NAME(void *const *dst, int ndst,                    \
                                                const void *const *src, int n, size_t count,   \
                                                int op, unsigned divisor, unsigned tid,        \
                                                unsigned nthreads)                             \
    {                                                                                          \
        const int avg = op == GPURMA_AVG && divisor > 1;                                       \
        switch (op) {                                                                          \
        case GPURMA_PROD: GPURMA_DRED__PTRS(T, A, W, TO_A, FROM_A, gpurma_dred__prod_##NAME); break; \
        case GPURMA_MIN: GPURMA_DRED__PTRS(T, A, W, TO_A, FROM_A, gpurma_dred__min_##NAME); break; \
        case GPURMA_MAX: GPURMA_DRED__PTRS(T, A, W, TO_A, FROM_A, gpurma_dred__max_##NAME); break; \
        default: GPURMA_DRED__PTRS(T, A, W, TO_A, FROM_A, gpurma_dred__sum_##NAME); break;     \
        }                                                                                      \
    }

/* The element loop of one reduce: sources 1..n-1 into an accumulator
 * started from source 0, in that order. */
#define GPURMA_DRED__LOOP(T, A, W, TO_A, FROM_A, COMBINE)                                      \
    for (size_t i = tid; i < count; i += nthreads) {                                           \
        A acc = TO_A(((const T *)first)[i]);                                                   \
        for (int r = 1; r < n; r++)                                                            \
            acc = COMBINE(acc, TO_A(((const T *)(rest + (size_t)(r - 1) * stride))[i]));       \
        if (avg)                                                                               \
            acc = (A)((W)acc / (W)divisor);                                                    \
        dst[i] = FROM_A(acc);                                                                  \
    }

/* The element loop of a reduce over n sources at unrelated addresses,
 * with the result stored to ndst destinations. On a GPU, when every
 * address is 16-byte aligned, 16 bytes of each source per load, several
 * vectors a thread at a time where registers allow (their loads are
 * independent and in flight together: reads of a peer's memory are bound
 * by their latency, so bytes in flight make the bandwidth): 4 for a copy
 * (one source, no AVG: the bytes as they are), 2 for elements of 4 bytes
 * or more, 1 for narrower ones (8 or 16 accumulators a vector); then the tail
 * element by element. Each element is read and written by one thread,
 * in that order. */
#if GPURMA_DEV_GPU
#define GPURMA_DRED__PTRS_VEC(T, A, W, TO_A, FROM_A, COMBINE)                                  \
    uintptr_t align_ = 0;                                                                      \
    for (int r = 0; r < n; r++)                                                                \
        align_ |= (uintptr_t)src[r];                                                           \
    for (int k = 0; k < ndst; k++)                                                             \
        align_ |= (uintptr_t)dst[k];                                                           \
    if (!(align_ & 15) && n == 1 && !avg) {                                                    \
        enum { V_ = 16 / sizeof(T), U_ = 4 };                                                  \
        const size_t nvec_ = count / V_, step_ = (size_t)nthreads * U_;                        \
        const size_t nfull_ = (size_t)gpurma_sh_udiv(nvec_, step_) * step_;                    \
        const uint4 *s_ = (const uint4 *)src[0];                                               \
        for (size_t jb = tid; jb < nfull_; jb += step_) {                                      \
            uint4 x_[U_];                                                                      \
            for (int u = 0; u < U_; u++)                                                       \
                x_[u] = s_[jb + (size_t)u * nthreads];                                         \
            for (int d = 0; d < ndst; d++)                                                     \
                for (int u = 0; u < U_; u++)                                                   \
                    ((uint4 *)dst[d])[jb + (size_t)u * nthreads] = x_[u];                      \
        }                                                                                      \
        for (size_t j = nfull_ + tid; j < nvec_; j += nthreads) {                              \
            const uint4 x_ = s_[j];                                                            \
            for (int d = 0; d < ndst; d++)                                                     \
                ((uint4 *)dst[d])[j] = x_;                                                     \
        }                                                                                      \
        first_ = nvec_ * V_;                                                                   \
    } else if (!(align_ & 15)) {                                                               \
        enum { V_ = 16 / sizeof(T), U_ = V_ <= 4 ? 2 : 1 };                                    \
        const size_t nvec_ = count / V_, step_ = (size_t)nthreads * U_;                        \
        const size_t nfull_ = (size_t)gpurma_sh_udiv(nvec_, step_) * step_;                    \
        for (size_t jb = tid; jb < nfull_; jb += step_) {                                      \
            union { uint4 u; T e[V_]; } x_[U_];                                                \
            A acc_[U_][V_];                                                                    \
            for (int u = 0; u < U_; u++)                                                       \
                x_[u].u = ((const uint4 *)src[0])[jb + (size_t)u * nthreads];                  \
            for (int u = 0; u < U_; u++)                                                       \
                for (int k = 0; k < V_; k++)                                                   \
                    acc_[u][k] = TO_A(x_[u].e[k]);                                             \
            for (int r = 1; r < n; r++) {                                                      \
                for (int u = 0; u < U_; u++)                                                   \
                    x_[u].u = ((const uint4 *)src[r])[jb + (size_t)u * nthreads];              \
                for (int u = 0; u < U_; u++)                                                   \
                    for (int k = 0; k < V_; k++)                                               \
                        acc_[u][k] = COMBINE(acc_[u][k], TO_A(x_[u].e[k]));                    \
            }                                                                                  \
            for (int u = 0; u < U_; u++)                                                       \
                for (int k = 0; k < V_; k++)                                                   \
                    x_[u].e[k] = FROM_A(avg ? (A)((W)acc_[u][k] / (W)divisor) : acc_[u][k]);   \
            for (int d = 0; d < ndst; d++)                                                     \
                for (int u = 0; u < U_; u++)                                                   \
                    ((uint4 *)dst[d])[jb + (size_t)u * nthreads] = x_[u].u;                    \
        }                                                                                      \
        for (size_t j = nfull_ + tid; j < nvec_; j += nthreads) {                              \
            union { uint4 u; T e[V_]; } x_, y_;                                                \
            A acc_[V_];                                                                        \
            x_.u = ((const uint4 *)src[0])[j];                                                 \
            for (int k = 0; k < V_; k++)                                                       \
                acc_[k] = TO_A(x_.e[k]);                                                       \
            for (int r = 1; r < n; r++) {                                                      \
                y_.u = ((const uint4 *)src[r])[j];                                             \
                for (int k = 0; k < V_; k++)                                                   \
                    acc_[k] = COMBINE(acc_[k], TO_A(y_.e[k]));                                 \
            }                                                                                  \
            for (int k = 0; k < V_; k++)                                                       \
                x_.e[k] = FROM_A(avg ? (A)((W)acc_[k] / (W)divisor) : acc_[k]);                \
            for (int d = 0; d < ndst; d++)                                                     \
                ((uint4 *)dst[d])[j] = x_.u;                                                   \
        }                                                                                      \
        first_ = nvec_ * V_;                                                                   \
    }
#else
#define GPURMA_DRED__PTRS_VEC(T, A, W, TO_A, FROM_A, COMBINE)
#endif
#define GPURMA_DRED__PTRS(T, A, W, TO_A, FROM_A, COMBINE)                                      \
    {                                                                                          \
        size_t first_ = 0;                                                                     \
        GPURMA_DRED__PTRS_VEC(T, A, W, TO_A, FROM_A, COMBINE)                                  \
        for (size_t i = first_ + tid; i < count; i += nthreads) {                              \
            A acc = TO_A(((const T *)src[0])[i]);                                              \
            for (int r = 1; r < n; r++)                                                        \
                acc = COMBINE(acc, TO_A(((const T *)src[r])[i]));                              \
            if (avg)                                                                           \
                acc = (A)((W)acc / (W)divisor);                                                \
            T v_ = FROM_A(acc);                                                                \
            for (int d = 0; d < ndst; d++)                                                     \
                ((T *)dst[d])[i] = v_;                                                         \
        }                                                                                      \
    }

#define GPURMA_DRED__WRAP_ADD(U) ((U)a + (U)b)
#define GPURMA_DRED__WRAP_MUL(U) ((U)a * (U)b)
GPURMA_DRED__TYPE(i8, int8_t, int8_t, uint32_t, int64_t, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__NO_NAN, GPURMA_DRED__WRAP_ADD(uint32_t), GPURMA_DRED__WRAP_MUL(uint32_t))
GPURMA_DRED__TYPE(u8, uint8_t, uint8_t, uint32_t, uint64_t, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__NO_NAN, GPURMA_DRED__WRAP_ADD(uint32_t), GPURMA_DRED__WRAP_MUL(uint32_t))
GPURMA_DRED__TYPE(i32, int32_t, int32_t, uint32_t, int64_t, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__NO_NAN, GPURMA_DRED__WRAP_ADD(uint32_t), GPURMA_DRED__WRAP_MUL(uint32_t))
GPURMA_DRED__TYPE(u32, uint32_t, uint32_t, uint32_t, uint64_t, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__NO_NAN, GPURMA_DRED__WRAP_ADD(uint32_t), GPURMA_DRED__WRAP_MUL(uint32_t))
GPURMA_DRED__TYPE(i64, int64_t, int64_t, uint64_t, int64_t, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__NO_NAN, GPURMA_DRED__WRAP_ADD(uint64_t), GPURMA_DRED__WRAP_MUL(uint64_t))
GPURMA_DRED__TYPE(u64, uint64_t, uint64_t, uint64_t, uint64_t, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__NO_NAN, GPURMA_DRED__WRAP_ADD(uint64_t), GPURMA_DRED__WRAP_MUL(uint64_t))
GPURMA_DRED__TYPE(f16, uint16_t, float, float, float, gpurma_dev_f16_to_f32, gpurma_dev_f32_to_f16,
                  GPURMA_DRED__IS_NAN, a + b, a * b)
GPURMA_DRED__TYPE(bf16, uint16_t, float, float, float, gpurma_dev_bf16_to_f32,
                  gpurma_dev_f32_to_bf16, GPURMA_DRED__IS_NAN, a + b, a * b)
GPURMA_DRED__TYPE(f32, float, float, float, float, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__IS_NAN, a + b, a * b)
GPURMA_DRED__TYPE(f64, double, double, double, double, GPURMA_DRED__ID, GPURMA_DRED__ID,
                  GPURMA_DRED__IS_NAN, a + b, a * b)
#undef GPURMA_DRED__TYPE
#undef GPURMA_DRED__LOOP
#undef GPURMA_DRED__PTRS
#undef GPURMA_DRED__PTRS_VEC
#undef GPURMA_DRED__WRAP_ADD
#undef GPURMA_DRED__WRAP_MUL

/*
 * dst[i] = src_0[i] op src_1[i] op ... op src_{n-1}[i] for i < count,
 * combined in that order, where src_0 = first and src_r = rest + (r - 1) *
 * stride bytes (so n sources laid out stride apart are first = base, rest =
 * base + stride; two unrelated buffers are n = 2). AVG divides by divisor
 * at the end (0 or 1: no division, for partial sums). The group's threads
 * (tid < nthreads) share the elements; dst may be one of the sources (each
 * element is read before it is written, by the same thread). The caller
 * checked dtype and op (gpurma_dev_redop_valid).
 */
GPURMA_DEVICE void gpurma_dev_reduce_coop(void *dst, const void *first, const void *rest,
                                          size_t stride, int n, size_t count,
                                          gpurma_dtype_t dtype, gpurma_redop_t op,
                                          unsigned divisor, unsigned tid, unsigned nthreads)
{
    const char *f = (const char *)first, *r = (const char *)rest;
    switch (dtype) {
    case GPURMA_INT8: gpurma_dred__reduce_i8((int8_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_UINT8: gpurma_dred__reduce_u8((uint8_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_INT32: gpurma_dred__reduce_i32((int32_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_UINT32: gpurma_dred__reduce_u32((uint32_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_INT64: gpurma_dred__reduce_i64((int64_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_UINT64: gpurma_dred__reduce_u64((uint64_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_FLOAT16: gpurma_dred__reduce_f16((uint16_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_BFLOAT16: gpurma_dred__reduce_bf16((uint16_t *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_FLOAT32: gpurma_dred__reduce_f32((float *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_FLOAT64: gpurma_dred__reduce_f64((double *)dst, f, r, stride, n, count, op, divisor, tid, nthreads); break;
    }
}

/*
 * The reduce of one 8-byte word of n sources (s[0], s[stride], ...: the
 * elements it holds, the same arithmetic and order as above): a small
 * collective's unit, reduced in registers with none of the loops above
 * (their divisions, their code fetched at every launch).
 */
GPURMA_DEVICE uint64_t gpurma_dev_reduce_unit8(const uint64_t *s, size_t stride, int n,
                                               gpurma_dtype_t dtype, gpurma_redop_t op,
                                               unsigned divisor)
{
    switch (dtype) {
    case GPURMA_INT8: return gpurma_dred__unit_i8(s, stride, n, op, divisor);
    case GPURMA_UINT8: return gpurma_dred__unit_u8(s, stride, n, op, divisor);
    case GPURMA_INT32: return gpurma_dred__unit_i32(s, stride, n, op, divisor);
    case GPURMA_UINT32: return gpurma_dred__unit_u32(s, stride, n, op, divisor);
    case GPURMA_INT64: return gpurma_dred__unit_i64(s, stride, n, op, divisor);
    case GPURMA_UINT64: return gpurma_dred__unit_u64(s, stride, n, op, divisor);
    case GPURMA_FLOAT16: return gpurma_dred__unit_f16(s, stride, n, op, divisor);
    case GPURMA_BFLOAT16: return gpurma_dred__unit_bf16(s, stride, n, op, divisor);
    case GPURMA_FLOAT32: return gpurma_dred__unit_f32(s, stride, n, op, divisor);
    case GPURMA_FLOAT64: return gpurma_dred__unit_f64(s, stride, n, op, divisor);
    }
    return s[0];
}

/*
 * The same reduce over n sources at unrelated addresses (src[0..n), in
 * that order), its result stored to each of dst[0..ndst): the peers'
 * buffers of a zero-copy collective. A destination may be one of the
 * sources (every element is read before it is written, by one thread).
 */
GPURMA_DEVICE void gpurma_dev_reduce_ptrs(void *const *dst, int ndst, const void *const *src,
                                          int n, size_t count, gpurma_dtype_t dtype,
                                          gpurma_redop_t op, unsigned divisor, unsigned tid,
                                          unsigned nthreads)
{
    switch (dtype) {
    case GPURMA_INT8: gpurma_dred__ptrs_i8(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_UINT8: gpurma_dred__ptrs_u8(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_INT32: gpurma_dred__ptrs_i32(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_UINT32: gpurma_dred__ptrs_u32(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_INT64: gpurma_dred__ptrs_i64(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_UINT64: gpurma_dred__ptrs_u64(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_FLOAT16: gpurma_dred__ptrs_f16(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_BFLOAT16: gpurma_dred__ptrs_bf16(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_FLOAT32: gpurma_dred__ptrs_f32(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    case GPURMA_FLOAT64: gpurma_dred__ptrs_f64(dst, ndst, src, n, count, op, divisor, tid, nthreads); break;
    }
}

#endif
