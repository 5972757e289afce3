/*
 * amo.h - typed atomics on 32- and 64-bit symmetric words.
 *
 * gpurma's atomics are 64-bit fetch-add, swap and compare-swap on aligned
 * words. A 64-bit add, swap or compare-swap is one of them; everything else
 * (32-bit types, and, or, xor) is a compare-swap loop on the aligned 64-bit
 * word that holds the value, which changes only the value's bytes. The
 * layer is little-endian (x86, Arm, every GPU it runs on).
 */
#ifndef GPURMA_NVSHMEM_DETAIL_AMO_H
#define GPURMA_NVSHMEM_DETAIL_AMO_H

#include "gpurma/nvshmem/detail/prims.h"

enum {
    GPURMA_NVSHMEMI_AMO_FETCH = 0, GPURMA_NVSHMEMI_AMO_SET, GPURMA_NVSHMEMI_AMO_SWAP,
    GPURMA_NVSHMEMI_AMO_CAS, GPURMA_NVSHMEMI_AMO_ADD, GPURMA_NVSHMEMI_AMO_AND,
    GPURMA_NVSHMEMI_AMO_OR, GPURMA_NVSHMEMI_AMO_XOR
};

/* What op makes of the current value (bits of the operand's width). */
GPURMA_NVSHMEMI_HD uint64_t gpurma_nvshmemi__amo_apply(int op, uint64_t cur, uint64_t value,
                                                       uint64_t cond)
{
    switch (op) {
    case GPURMA_NVSHMEMI_AMO_ADD: return cur + value;
    case GPURMA_NVSHMEMI_AMO_AND: return cur & value;
    case GPURMA_NVSHMEMI_AMO_OR: return cur | value;
    case GPURMA_NVSHMEMI_AMO_XOR: return cur ^ value;
    case GPURMA_NVSHMEMI_AMO_CAS: return cur == cond ? value : cur;
    case GPURMA_NVSHMEMI_AMO_FETCH: return cur;
    default: return value; /* set, swap */
    }
}

/* An AMO through gpurma's API (PEs not mapped here, host code): the
 * 64-bit ones it has, the rest a compare-swap loop. */
GPURMA_NVSHMEMI_HD uint64_t gpurma_nvshmemi__amo_api(const char *call, void *addr, size_t size,
                                                     int op, uint64_t value, uint64_t cond,
                                                     int pe, int fetch)
{
    uintptr_t a = (uintptr_t)addr;
    if (size == 8) {
        switch (op) {
        case GPURMA_NVSHMEMI_AMO_ADD:
            return gpurma_nvshmemi__amo64(call, GPURMA_DEV__ATOMIC_FETCH_ADD, addr, value, 0, pe,
                                          fetch);
        case GPURMA_NVSHMEMI_AMO_FETCH:
            return gpurma_nvshmemi__amo64(call, GPURMA_DEV__ATOMIC_FETCH_ADD, addr, 0, 0, pe, 1);
        case GPURMA_NVSHMEMI_AMO_SET:
        case GPURMA_NVSHMEMI_AMO_SWAP:
            return gpurma_nvshmemi__amo64(call, GPURMA_DEV__ATOMIC_SWAP, addr, value, 0, pe,
                                          fetch);
        case GPURMA_NVSHMEMI_AMO_CAS:
            return gpurma_nvshmemi__amo64(call, GPURMA_DEV__ATOMIC_CAS, addr, value, cond, pe, 1);
        default:
            break;
        }
    }
    /* A compare-swap loop on the enclosing 64-bit word. */
    void *word = (void *)(a & ~(uintptr_t)7);
    unsigned shift = (unsigned)(a & 7) * 8;
    uint64_t mask = size == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (size * 8)) - 1) << shift;
    uint64_t cur = gpurma_nvshmemi__amo64(call, GPURMA_DEV__ATOMIC_FETCH_ADD, word, 0, 0, pe, 1);
    for (;;) {
        uint64_t old = (cur & mask) >> shift;
        uint64_t next = gpurma_nvshmemi__amo_apply(op, old, value, cond);
        if (op == GPURMA_NVSHMEMI_AMO_FETCH ||
            (op == GPURMA_NVSHMEMI_AMO_CAS && old != (cond & (mask >> shift))))
            return old;
        uint64_t want = (cur & ~mask) | ((next << shift) & mask);
        uint64_t seen =
            gpurma_nvshmemi__amo64(call, GPURMA_DEV__ATOMIC_CAS, word, want, cur, pe, 1);
        if (seen == cur)
            return old;
        cur = seen;
    }
}

#if GPURMA_NVSHMEMI_HAS_DEVPATH
/* An AMO off the fast path: a heap segment a PE maps (one atomic), else
 * gpurma's API. */
GPURMA_NVSHMEMI_COLD uint64_t gpurma_nvshmemi__amo_slow(const char *call, void *addr, size_t size,
                                                        int op, uint64_t value, uint64_t cond,
                                                        int pe, int fetch)
{
    if (size == 8 || size == 4) {
        int seg;
        size_t off = gpurma_nvshmemi__offset(call, addr, size, &seg);
        char *p = gpurma_nvshmemi__direct(seg, pe, off, size);
        if (p) {
            p = gpurma_nvshmemi__global(p);
            return size == 8 ? gpurma_nvshmemi__atomic64((uint64_t *)p, op, value, cond, fetch)
                             : gpurma_nvshmemi__atomic32((uint32_t *)p, op, (uint32_t)value,
                                                         (uint32_t)cond, fetch);
        }
    }
    return gpurma_nvshmemi__amo_api(call, addr, size, op, value, cond, pe, fetch);
}
#endif

/* The old value (size bytes, zero-extended) of the word at addr on pe.
 * fetch 0: the caller does not use it (a reduction where there is one). */
GPURMA_NVSHMEMI_HD uint64_t gpurma_nvshmemi__amo(const char *call, void *addr, size_t size,
                                                 int op, uint64_t value, uint64_t cond, int pe,
                                                 int fetch)
{
    if ((uintptr_t)addr & (size - 1))
        gpurma_nvshmemi__fail(call, GPURMA_ERR_MISALIGNED,
                              "the address is not aligned to its type");
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    /* A mapped peer: one relaxed atomic (the op codes are direct.h's) on a
     * global address, so that a result the program drops makes it a RED. */
    char *fast = size == 8 || size == 4 ? gpurma_nvshmemi__heap_peer(addr, size, pe) : NULL;
    if (fast)
        return size == 8 ? gpurma_nvshmemi__atomic64((uint64_t *)fast, op, value, cond, fetch)
                         : gpurma_nvshmemi__atomic32((uint32_t *)fast, op, (uint32_t)value,
                                                     (uint32_t)cond, fetch);
    if (gpurma_nvshmemi__devpath(call))
        return gpurma_nvshmemi__amo_slow(call, addr, size, op, value, cond, pe, fetch);
#endif
    return gpurma_nvshmemi__amo_api(call, addr, size, op, value, cond, pe, fetch);
}

/* Bits of a value, and a value of TYPE from bits. */
GPURMA_NVSHMEMI_HD uint64_t gpurma_nvshmemi__bits(const void *v, size_t size)
{
    uint64_t b = 0;
    memcpy(&b, v, size);
    return b;
}

#define GPURMA_NVSHMEMI_AMO_FROM(TYPE, bits_expr)                                           \
    uint64_t r_ = (bits_expr);                                                              \
    TYPE out_;                                                                              \
    memcpy(&out_, &r_, sizeof(TYPE));                                                       \
    return out_

/* fetch, set, swap: every AMO type, floats included. */
#define GPURMA_NVSHMEMI_AMO_EXT(NAME, TYPE)                                                 \
    GPURMA_NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_fetch(const TYPE *source, int pe)       \
    {                                                                                       \
        GPURMA_NVSHMEMI_AMO_FROM(TYPE, gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_fetch", \
                                                            (void *)source, sizeof(TYPE),   \
                                                            GPURMA_NVSHMEMI_AMO_FETCH, 0, 0, \
                                                            pe, 1));                           \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void nvshmem_##NAME##_atomic_set(TYPE *dest, TYPE value, int pe)     \
    {                                                                                       \
        gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_set", dest, sizeof(TYPE),            \
                             GPURMA_NVSHMEMI_AMO_SET,                                       \
                             gpurma_nvshmemi__bits(&value, sizeof(TYPE)), 0, pe, 0);         \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_swap(TYPE *dest, TYPE value, int pe)    \
    {                                                                                       \
        GPURMA_NVSHMEMI_AMO_FROM(TYPE, gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_swap", \
                                                            dest, sizeof(TYPE),             \
                                                            GPURMA_NVSHMEMI_AMO_SWAP,       \
                                                            gpurma_nvshmemi__bits(          \
                                                                &value, sizeof(TYPE)),      \
                                                            0, pe, 1));                        \
    }

/* The arithmetic ones: integer AMO types. */
#define GPURMA_NVSHMEMI_AMO_STD(NAME, TYPE)                                                 \
    GPURMA_NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_compare_swap(TYPE *dest, TYPE cond,     \
                                                                 TYPE value, int pe)        \
    {                                                                                       \
        GPURMA_NVSHMEMI_AMO_FROM(                                                           \
            TYPE, gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_compare_swap", dest,       \
                                       sizeof(TYPE), GPURMA_NVSHMEMI_AMO_CAS,               \
                                       gpurma_nvshmemi__bits(&value, sizeof(TYPE)),         \
                                       gpurma_nvshmemi__bits(&cond, sizeof(TYPE)), pe, 1));    \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_fetch_add(TYPE *dest, TYPE value, int pe) \
    {                                                                                       \
        GPURMA_NVSHMEMI_AMO_FROM(                                                           \
            TYPE, gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_fetch_add", dest,          \
                                       sizeof(TYPE), GPURMA_NVSHMEMI_AMO_ADD,               \
                                       gpurma_nvshmemi__bits(&value, sizeof(TYPE)), 0, pe, 1)); \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void nvshmem_##NAME##_atomic_add(TYPE *dest, TYPE value, int pe)     \
    {                                                                                       \
        gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_add", dest, sizeof(TYPE),            \
                             GPURMA_NVSHMEMI_AMO_ADD,                                       \
                             gpurma_nvshmemi__bits(&value, sizeof(TYPE)), 0, pe, 0);         \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_fetch_inc(TYPE *dest, int pe)           \
    {                                                                                       \
        GPURMA_NVSHMEMI_AMO_FROM(TYPE,                                                      \
                                 gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_fetch_inc", \
                                                      dest, sizeof(TYPE),                   \
                                                      GPURMA_NVSHMEMI_AMO_ADD, 1, 0, pe, 1));  \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void nvshmem_##NAME##_atomic_inc(TYPE *dest, int pe)                 \
    {                                                                                       \
        gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_inc", dest, sizeof(TYPE),            \
                             GPURMA_NVSHMEMI_AMO_ADD, 1, 0, pe, 0);                          \
    }

#define GPURMA_NVSHMEMI_AMO_BIT_OP(NAME, TYPE, OPNAME, OP)                                  \
    GPURMA_NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_fetch_##OPNAME(TYPE *dest, TYPE value,  \
                                                                   int pe)                  \
    {                                                                                       \
        GPURMA_NVSHMEMI_AMO_FROM(                                                           \
            TYPE, gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_fetch_" #OPNAME, dest,     \
                                       sizeof(TYPE), OP,                                    \
                                       gpurma_nvshmemi__bits(&value, sizeof(TYPE)), 0, pe, 1)); \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void nvshmem_##NAME##_atomic_##OPNAME(TYPE *dest, TYPE value, int pe) \
    {                                                                                       \
        gpurma_nvshmemi__amo("nvshmem_" #NAME "_atomic_" #OPNAME, dest, sizeof(TYPE), OP,   \
                             gpurma_nvshmemi__bits(&value, sizeof(TYPE)), 0, pe, 0);         \
    }
#define GPURMA_NVSHMEMI_AMO_BIT(NAME, TYPE)                                                 \
    GPURMA_NVSHMEMI_AMO_BIT_OP(NAME, TYPE, and, GPURMA_NVSHMEMI_AMO_AND)                    \
    GPURMA_NVSHMEMI_AMO_BIT_OP(NAME, TYPE, or, GPURMA_NVSHMEMI_AMO_OR)                      \
    GPURMA_NVSHMEMI_AMO_BIT_OP(NAME, TYPE, xor, GPURMA_NVSHMEMI_AMO_XOR)

GPURMA_NVSHMEMI_AMO_EXT_TYPES(GPURMA_NVSHMEMI_AMO_EXT)
GPURMA_NVSHMEMI_AMO_STD_TYPES(GPURMA_NVSHMEMI_AMO_STD)
GPURMA_NVSHMEMI_AMO_BIT_TYPES(GPURMA_NVSHMEMI_AMO_BIT)

#endif
