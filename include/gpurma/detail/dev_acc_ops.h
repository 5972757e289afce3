/*
 * dev_acc_ops.h - the device API's accumulate calls (MPI-3 semantics, as the
 * host's gpurma_accumulate family): element-wise atomic, complete at the
 * target on return. On a GPU, peers reached by load/store use the native
 * system-scope atomics where CUDA has one for the type and operator
 * (atomicAdd on f32/f64/32- and 64-bit integers, atomicMin/Max/And/Or/Xor on
 * 32- and 64-bit integers, atomicExch); everything else (other types, the
 * port engine's FIFO, CPU threads on the host backend) is a compare-and-swap
 * loop on the aligned 64-bit word holding the element, through the channel's
 * 64-bit atomics. Both kinds are hardware atomics on the same memory, so they
 * are atomic with respect to each other and to the host calls. Included at
 * the end of gpurma_device.h; not ABI.
 */
#ifndef GPURMA_DETAIL_DEV_ACC_OPS_H
#define GPURMA_DETAIL_DEV_ACC_OPS_H

/* Arguments of an accumulate of count elements at off (as check_acc of
 * rma/accumulate.c, without messages). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__check_acc(const gpurma_dev_chan_t *c, size_t off,
                                                    size_t count, gpurma_dtype_t t,
                                                    gpurma_acc_op_t op, const void *src)
{
    gpurma_status_t rc = gpurma_dev__check_chan(c);
    if (rc != GPURMA_SUCCESS)
        return rc;
    if (!gpurma_dev_acc_valid(t, op))
        return GPURMA_ERR_INVALID_ARG;
    size_t es = gpurma_dev_dtype_size(t);
    if (count > SIZE_MAX / es || (count && !src && op != GPURMA_ACC_NO_OP))
        return GPURMA_ERR_INVALID_ARG;
    size_t bytes = count * es;
    if (off > c->pe.size || bytes > c->pe.size - off)
        return GPURMA_ERR_OUT_OF_BOUNDS;
    if (off % es)
        return GPURMA_ERR_MISALIGNED;
    if (count && ((off + bytes - 1) & ~(size_t)7) + 8 > c->pe.size)
        return GPURMA_ERR_OUT_OF_BOUNDS;
    return GPURMA_SUCCESS;
}

#if GPURMA_DEV_GPU && defined(__CUDACC__)
/* The native atomic for (type, op) at p, when there is one: 1 and *old set. */
__device__ __forceinline__ int gpurma_dev__acc_native(void *p, gpurma_dtype_t t, int op,
                                                      uint64_t v, uint64_t *old)
{
    switch (t) {
    case GPURMA_FLOAT64:
        if (op == GPURMA_ACC_SUM) {
            double d = atomicAdd_system((double *)p, __longlong_as_double((long long)v));
            *old = (uint64_t)__double_as_longlong(d);
            return 1;
        }
        break;
    case GPURMA_FLOAT32:
        if (op == GPURMA_ACC_SUM) {
            float f = atomicAdd_system((float *)p, __int_as_float((int)(uint32_t)v));
            *old = (uint32_t)__float_as_int(f);
            return 1;
        }
        break;
    case GPURMA_INT32:
    case GPURMA_UINT32: {
        unsigned u = (unsigned)v, r;
        int s = t == GPURMA_INT32;
        switch (op) {
        case GPURMA_ACC_SUM: r = atomicAdd_system((unsigned *)p, u); break;
        case GPURMA_ACC_BAND: r = atomicAnd_system((unsigned *)p, u); break;
        case GPURMA_ACC_BOR: r = atomicOr_system((unsigned *)p, u); break;
        case GPURMA_ACC_BXOR: r = atomicXor_system((unsigned *)p, u); break;
        case GPURMA_ACC_REPLACE: r = atomicExch_system((unsigned *)p, u); break;
        case GPURMA_ACC_MIN:
            r = s ? (unsigned)atomicMin_system((int *)p, (int)u) : atomicMin_system((unsigned *)p, u);
            break;
        case GPURMA_ACC_MAX:
            r = s ? (unsigned)atomicMax_system((int *)p, (int)u) : atomicMax_system((unsigned *)p, u);
            break;
        default: return 0;
        }
        *old = r;
        return 1;
    }
    case GPURMA_INT64:
    case GPURMA_UINT64: {
        unsigned long long u = v, r;
        int s = t == GPURMA_INT64;
        switch (op) {
        case GPURMA_ACC_SUM: r = atomicAdd_system((unsigned long long *)p, u); break;
        case GPURMA_ACC_BAND: r = atomicAnd_system((unsigned long long *)p, u); break;
        case GPURMA_ACC_BOR: r = atomicOr_system((unsigned long long *)p, u); break;
        case GPURMA_ACC_BXOR: r = atomicXor_system((unsigned long long *)p, u); break;
        case GPURMA_ACC_REPLACE: r = atomicExch_system((unsigned long long *)p, u); break;
        case GPURMA_ACC_MIN:
            r = s ? (unsigned long long)atomicMin_system((long long *)p, (long long)u)
                  : atomicMin_system((unsigned long long *)p, u);
            break;
        case GPURMA_ACC_MAX:
            r = s ? (unsigned long long)atomicMax_system((long long *)p, (long long)u)
                  : atomicMax_system((unsigned long long *)p, u);
            break;
        default: return 0;
        }
        *old = r;
        return 1;
    }
    default: break;
    }
    return 0;
}
#endif

/* One element: op (or -1: compare-and-swap with compare); *old its bits before. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__acc_element(const gpurma_dev_chan_t *c, size_t off,
                                                      gpurma_dtype_t t, int op, uint64_t v,
                                                      uint64_t compare, uint64_t *old)
{
    size_t es = gpurma_dev_dtype_size(t);
#if GPURMA_DEV_GPU && defined(__CUDACC__)
    if (c->pe.path == GPURMA_DEV_PATH_LOADSTORE && op >= 0 &&
        gpurma_dev__acc_native(c->pe.base + off, t, op, v, old))
        return GPURMA_SUCCESS;
#endif
    size_t word = off & ~(size_t)7;
    unsigned shift = (unsigned)(off & 7) * 8;
    uint64_t emask = es == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * es)) - 1);
    uint64_t mask = emask << shift, cur_word = 0;
    gpurma_status_t rc = gpurma_dev__chan_atomic(c, GPURMA_DEV__ATOMIC_FETCH_ADD, word, 0, 0,
                                                 &cur_word, 1);
    while (rc == GPURMA_SUCCESS) {
        uint64_t cur = (cur_word & mask) >> shift, next;
        *old = cur;
        if (op < 0)
            next = cur == (compare & emask) ? v : cur;
        else
            next = gpurma_dev_acc_apply(t, (gpurma_acc_op_t)op, cur, v);
        uint64_t want = (cur_word & ~mask) | ((next << shift) & mask), seen = 0;
        if (want == cur_word)
            return GPURMA_SUCCESS;
        rc = gpurma_dev__chan_atomic(c, GPURMA_DEV__ATOMIC_CAS, word, want, cur_word, &seen, 1);
        if (rc == GPURMA_SUCCESS && seen == cur_word)
            return GPURMA_SUCCESS;
        cur_word = seen;
    }
    return rc;
}

GPURMA_DEVICE uint64_t gpurma_dev__acc_load(const void *p, size_t es)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t v = 0;
    for (size_t i = 0; i < es; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

GPURMA_DEVICE void gpurma_dev__acc_store(void *p, uint64_t v, size_t es)
{
    unsigned char *b = (unsigned char *)p;
    for (size_t i = 0; i < es; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_get_accumulate(gpurma_dev_win_t w, int peer,
                                                        size_t off, const void *src,
                                                        void *result, size_t count,
                                                        gpurma_dtype_t dtype, gpurma_acc_op_t op)
{
    gpurma_dev_chan_t c = gpurma_dev__chan_of(&w, peer);
    gpurma_status_t rc = gpurma_dev__check_acc(&c, off, count, dtype, op, src);
    size_t es = gpurma_dev_dtype_size(dtype);
    for (size_t i = 0; i < count && rc == GPURMA_SUCCESS; i++) {
        uint64_t v = op == GPURMA_ACC_NO_OP ? 0
                                            : gpurma_dev__acc_load((const char *)src + i * es, es);
        uint64_t old = 0;
        rc = gpurma_dev__acc_element(&c, off + i * es, dtype, (int)op, v, 0, &old);
        if (rc == GPURMA_SUCCESS && result)
            gpurma_dev__acc_store((char *)result + i * es, old, es);
    }
    return rc;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_accumulate(gpurma_dev_win_t w, int peer, size_t off,
                                                    const void *src, size_t count,
                                                    gpurma_dtype_t dtype, gpurma_acc_op_t op)
{
    return gpurma_dev_get_accumulate(w, peer, off, src, (void *)0, count, dtype, op);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_fetch_and_op(gpurma_dev_win_t w, int peer, size_t off,
                                                      const void *value, void *result,
                                                      gpurma_dtype_t dtype, gpurma_acc_op_t op)
{
    if (!result)
        return GPURMA_ERR_INVALID_ARG;
    return gpurma_dev_get_accumulate(w, peer, off, value, result, 1, dtype, op);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_compare_and_swap(gpurma_dev_win_t w, int peer,
                                                          size_t off, const void *compare,
                                                          const void *desired, void *result,
                                                          gpurma_dtype_t dtype)
{
    gpurma_dev_chan_t c = gpurma_dev__chan_of(&w, peer);
    gpurma_status_t rc = gpurma_dev__check_acc(&c, off, 1, dtype, GPURMA_ACC_REPLACE, desired);
    if (rc == GPURMA_SUCCESS && (!compare || !result))
        rc = GPURMA_ERR_INVALID_ARG;
    if (rc != GPURMA_SUCCESS)
        return rc;
    size_t es = gpurma_dev_dtype_size(dtype);
    uint64_t old = 0;
    rc = gpurma_dev__acc_element(&c, off, dtype, -1, gpurma_dev__acc_load(desired, es),
                                 gpurma_dev__acc_load(compare, es), &old);
    if (rc == GPURMA_SUCCESS)
        gpurma_dev__acc_store(result, old, es);
    return rc;
}

#endif
