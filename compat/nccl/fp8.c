/*
 * fp8.c - FP8 (E4M3, E5M2) on the host: the codec, and the widening and
 * narrowing of the FP8 reductions (coll.c) when the communicator runs on
 * gpurma's host backend. gpurma's collectives have no FP8 type, so the
 * shim reduces FP8 as float; the conversions follow CUDA's cuda_fp8.h
 * (round to nearest even, saturating to the largest finite value, NaN
 * kept), so the host backend and the GPU (gpu_fp8.cu) give the same bytes.
 */
#include <math.h>
#include <string.h>

#include "nccl_internal.h"

typedef struct {
    int     mant_bits, bias;
    uint8_t max_code; /* the largest finite magnitude */
    double  max;
} fp8_format_t;

static const fp8_format_t e4m3 = {3, 7, 0x7e, 448.0};
static const fp8_format_t e5m2 = {2, 15, 0x7b, 57344.0};

static const fp8_format_t *format_of(ncclDataType_t t)
{
    return t == ncclFloat8e5m2 ? &e5m2 : &e4m3;
}

int gpurma_nccl_is_fp8(ncclDataType_t t)
{
    return t == ncclFloat8e4m3 || t == ncclFloat8e5m2;
}

float gpurma_nccl_fp8_to_float(uint8_t v, ncclDataType_t t)
{
    const fp8_format_t *f = format_of(t);
    int m_bits = f->mant_bits, e_bits = 7 - m_bits;
    int e = (v >> m_bits) & ((1 << e_bits) - 1), m = v & ((1 << m_bits) - 1);
    double sign = v & 0x80 ? -1.0 : 1.0;
    if (e == (1 << e_bits) - 1) {
        if (f == &e4m3 && m == (1 << m_bits) - 1) /* E4M3 has no infinities */
            return NAN;
        if (f == &e5m2)
            return m ? NAN : (float)(sign * INFINITY);
    }
    double mag = e ? ldexp((double)((1 << m_bits) + m), e - f->bias - m_bits)
                   : ldexp((double)m, 1 - f->bias - m_bits);
    return (float)(sign * mag);
}

uint8_t gpurma_nccl_float_to_fp8(float x, ncclDataType_t t)
{
    const fp8_format_t *f = format_of(t);
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (isnan(x))
        return 0x7f;
    double a = fabs((double)x);
    if (a >= f->max) /* saturating, infinities too */
        return sign | f->max_code;
    int min_exp = 1 - f->bias, e;
    frexp(a, &e);
    int x_exp = e - 1 < min_exp ? min_exp : e - 1; /* below: the subnormal step */
    double quantum = ldexp(1.0, x_exp - f->mant_bits);
    double v = nearbyint(a / quantum) * quantum; /* exact: quantum is a power of two */
    if (v > f->max)
        return sign | f->max_code;
    if (v == 0)
        return sign;
    frexp(v, &e); /* rounding may have carried into the next binade */
    if (e - 1 < min_exp)
        return sign | (uint8_t)(v / ldexp(1.0, min_exp - f->mant_bits));
    int m = (int)(v / ldexp(1.0, e - 1 - f->mant_bits)) - (1 << f->mant_bits);
    return sign | (uint8_t)((e - 1 + f->bias) << f->mant_bits) | (uint8_t)m;
}

void gpurma_nccl_fp8_widen_host(float *dst, const uint8_t *src, size_t n, ncclDataType_t t,
                                const double *scalar)
{
    for (size_t i = 0; i < n; i++) {
        float v = gpurma_nccl_fp8_to_float(src[i], t);
        /* PreMulSum scales in FP8, as NCCL does, before the sum */
        if (scalar)
            v = gpurma_nccl_fp8_to_float(gpurma_nccl_float_to_fp8(v * (float)*scalar, t), t);
        dst[i] = v;
    }
}

void gpurma_nccl_fp8_narrow_host(uint8_t *dst, const float *src, size_t n, ncclDataType_t t)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = gpurma_nccl_float_to_fp8(src[i], t);
}
