/*
 * dev_accumulate.h - one element of an MPI-style accumulate: the new value
 * of a target element from its old value and the origin's operand, for every
 * gpurma_dtype_t and gpurma_acc_op_t. Works on raw bits (the low bytes of a
 * uint64_t), so that the host (rma/accumulate.c) and kernels apply it inside
 * a compare-and-swap loop on the aligned 64-bit word holding the element.
 * Compiles as CUDA, HIP and plain C. Not ABI.
 *
 * Arithmetic as the collectives' (dev_reduce.h): integers wrap; f16 and
 * bf16 compute in f32 and round once to nearest even; MIN and MAX give NaN
 * when either side is NaN. Bitwise operators exist for integers only.
 */
#ifndef GPURMA_DETAIL_DEV_ACCUMULATE_H
#define GPURMA_DETAIL_DEV_ACCUMULATE_H

#include "gpurma.h"
#include "gpurma/detail/dev_reduce.h"

GPURMA_HOST_DEVICE int gpurma_dacc__is_float(gpurma_dtype_t t)
{
    return t == GPURMA_FLOAT16 || t == GPURMA_BFLOAT16 || t == GPURMA_FLOAT32 ||
           t == GPURMA_FLOAT64;
}

/* Whether op is defined for dtype (bitwise ones: integers only). */
GPURMA_HOST_DEVICE int gpurma_dev_acc_valid(gpurma_dtype_t dtype, gpurma_acc_op_t op)
{
    if (!gpurma_dev_dtype_size(dtype) || (unsigned)op > (unsigned)GPURMA_ACC_BXOR)
        return 0;
    return op < GPURMA_ACC_BAND || !gpurma_dacc__is_float(dtype);
}

GPURMA_HOST_DEVICE double gpurma_dacc__as_double(uint64_t u)
{
    union { uint64_t u; double d; } c;
    c.u = u;
    return c.d;
}
GPURMA_HOST_DEVICE uint64_t gpurma_dacc__double_bits(double d)
{
    union { uint64_t u; double d; } c;
    c.d = d;
    return c.u;
}

#define GPURMA_DACC__ARITH(a, b, op, is_nan)                                                  \
    ((op) == GPURMA_ACC_SUM    ? (a) + (b)                                                     \
     : (op) == GPURMA_ACC_PROD ? (a) * (b)                                                     \
     : (op) == GPURMA_ACC_MIN  ? ((is_nan(a) || is_nan(b)) ? (a) + (b) : ((b) < (a) ? (b) : (a))) \
                               : ((is_nan(a) || is_nan(b)) ? (a) + (b) : ((b) > (a) ? (b) : (a))))
#define GPURMA_DACC__NAN(x)   ((x) != (x))
#define GPURMA_DACC__NONAN(x) 0

/* Float element in f32 (f16, bf16, f32) or f64. */
GPURMA_HOST_DEVICE uint64_t gpurma_dacc__float(gpurma_dtype_t t, gpurma_acc_op_t op, uint64_t a,
                                               uint64_t b)
{
    if (t == GPURMA_FLOAT64) {
        double x = gpurma_dacc__as_double(a), y = gpurma_dacc__as_double(b);
        return gpurma_dacc__double_bits(GPURMA_DACC__ARITH(x, y, op, GPURMA_DACC__NAN));
    }
    float x, y, r;
    if (t == GPURMA_FLOAT32) {
        x = gpurma_dred__as_float((uint32_t)a);
        y = gpurma_dred__as_float((uint32_t)b);
    } else if (t == GPURMA_FLOAT16) {
        x = gpurma_dev_f16_to_f32((uint16_t)a);
        y = gpurma_dev_f16_to_f32((uint16_t)b);
    } else {
        x = gpurma_dev_bf16_to_f32((uint16_t)a);
        y = gpurma_dev_bf16_to_f32((uint16_t)b);
    }
    r = GPURMA_DACC__ARITH(x, y, op, GPURMA_DACC__NAN);
    if (t == GPURMA_FLOAT32)
        return gpurma_dred__float_bits(r);
    return t == GPURMA_FLOAT16 ? gpurma_dev_f32_to_f16(r) : gpurma_dev_f32_to_bf16(r);
}

/* Signed integers compare as signed: sign-extend the low bytes. */
GPURMA_HOST_DEVICE int64_t gpurma_dacc__signed(gpurma_dtype_t t, uint64_t v)
{
    switch (t) {
    case GPURMA_INT8: return (int8_t)(uint8_t)v;
    case GPURMA_INT32: return (int32_t)(uint32_t)v;
    default: return (int64_t)v;
    }
}

/* The new bits of an element holding old when the operand is v (both in
 * the low bytes); bits above the element size are don't-care. */
GPURMA_HOST_DEVICE uint64_t gpurma_dev_acc_apply(gpurma_dtype_t t, gpurma_acc_op_t op,
                                                 uint64_t old, uint64_t v)
{
    switch (op) {
    case GPURMA_ACC_REPLACE: return v;
    case GPURMA_ACC_NO_OP: return old;
    case GPURMA_ACC_BAND: return old & v;
    case GPURMA_ACC_BOR: return old | v;
    case GPURMA_ACC_BXOR: return old ^ v;
    default: break;
    }
    if (gpurma_dacc__is_float(t))
        return gpurma_dacc__float(t, op, old, v);
    if (op == GPURMA_ACC_SUM)
        return old + v;
    if (op == GPURMA_ACC_PROD)
        return old * v;
    int is_signed = t == GPURMA_INT8 || t == GPURMA_INT32 || t == GPURMA_INT64;
    size_t bytes = gpurma_dev_dtype_size(t);
    uint64_t mask = bytes == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * bytes)) - 1);
    int less; /* v < old */
    if (is_signed)
        less = gpurma_dacc__signed(t, v & mask) < gpurma_dacc__signed(t, old & mask);
    else
        less = (v & mask) < (old & mask);
    if (op == GPURMA_ACC_MIN)
        return less ? v : old;
    return less || (v & mask) == (old & mask) ? old : v;
}

#undef GPURMA_DACC__NONAN

#endif
