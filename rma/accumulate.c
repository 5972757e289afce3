/*
 * accumulate.c - MPI-3 accumulate, get_accumulate, fetch_and_op and
 * compare_and_swap, element-wise atomic.
 *
 * Peers served by the mem engine on host memory are mapped: each element is
 * combined with the CPU's own atomic of its width (fetch_add, exchange,
 * and/or/xor, or a compare-and-swap loop). Every other peer (port engine:
 * UCX, copy-engine kernels; created windows: the owner's lock; GPU windows)
 * goes through the engine's 64-bit atomics, as a compare-and-swap loop on the
 * aligned word that holds the element. Both are hardware atomics on the same
 * memory, so the two kinds are atomic with respect to each other too.
 */
#include <string.h>

#include "gpurma/detail/dev_accumulate.h"
#include "rma.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "accumulate.c places elements in 64-bit words as a little-endian machine does"
#endif

static const char *const op_names[] = {"SUM",     "PROD",  "MIN", "MAX", "REPLACE",
                                       "NO_OP",   "BAND",  "BOR", "BXOR"};

static int check_acc(gpurma_win_t w, const char *call, int peer, size_t off, size_t count,
                     gpurma_dtype_t dtype, gpurma_acc_op_t op, const void *src,
                     const void *result, int need_result)
{
    int rc = gpurma_check_peer(w, call, peer);
    if (rc)
        return rc;
    int rank = w->ctx->rank;
    if (!gpurma_dev_acc_valid(dtype, op))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: operator %s (%d) is not defined for dtype %d",
                                rank, call,
                                (unsigned)op <= GPURMA_ACC_BXOR ? op_names[op] : "unknown",
                                (int)op, (int)dtype);
    size_t es = gpurma_dev_dtype_size(dtype);
    if (count > SIZE_MAX / es)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: %zu elements of %zu bytes overflow a size_t", rank,
                                call, count, es);
    size_t bytes = count * es;
    if (count && !src && op != GPURMA_ACC_NO_OP)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: src is NULL", rank, call);
    if (count && need_result && !result)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: result is NULL", rank,
                                call);
    rc = gpurma_check_range(w, call, peer, off, bytes, &rank);
    if (rc)
        return rc;
    if (off % es)
        return gpurma_set_error(GPURMA_ERR_MISALIGNED,
                                "rank %d: %s at offset %zu: not aligned to the %zu-byte element",
                                rank, call, off, es);
    uint64_t size = w->peers[peer].size;
    if (count && ((off + bytes - 1) & ~(size_t)7) + 8 > size)
        return gpurma_set_error(GPURMA_ERR_OUT_OF_BOUNDS,
                                "rank %d: %s of %zu bytes at offset %zu on peer %d: the 8-byte "
                                "word holding the last element passes the end of its window "
                                "(%llu bytes); make window sizes a multiple of 8",
                                rank, call, bytes, off, peer, (unsigned long long)size);
    return GPURMA_SUCCESS;
}

static uint64_t load_element(const void *p, size_t es)
{
    uint64_t v = 0;
    memcpy(&v, p, es); /* little-endian: the element in the low bytes */
    return v;
}

static void store_element(void *p, uint64_t v, size_t es) { memcpy(p, &v, es); }

/* --------------------------------------------------- mapped (CPU atomics) */

#define MAPPED_CAS_LOOP(T)                                                                   \
    do {                                                                                     \
        T *at = (T *)target, cur = __atomic_load_n(at, __ATOMIC_RELAXED), next;              \
        do                                                                                   \
            next = (T)gpurma_dev_acc_apply(dtype, op, (uint64_t)cur, v);                     \
        while (next != cur &&                                                                \
               !__atomic_compare_exchange_n(at, &cur, next, 0, __ATOMIC_SEQ_CST,             \
                                            __ATOMIC_RELAXED));                              \
        return (uint64_t)cur;                                                                \
    } while (0)

/* Integer fast forms where the CPU has them; a CAS loop otherwise. */
#define MAPPED_OP(T)                                                                         \
    do {                                                                                     \
        T *at = (T *)target;                                                                 \
        if (!gpurma_dacc__is_float(dtype)) {                                                 \
            switch (op) {                                                                    \
            case GPURMA_ACC_SUM: return __atomic_fetch_add(at, (T)v, __ATOMIC_SEQ_CST);      \
            case GPURMA_ACC_BAND: return __atomic_fetch_and(at, (T)v, __ATOMIC_SEQ_CST);     \
            case GPURMA_ACC_BOR: return __atomic_fetch_or(at, (T)v, __ATOMIC_SEQ_CST);       \
            case GPURMA_ACC_BXOR: return __atomic_fetch_xor(at, (T)v, __ATOMIC_SEQ_CST);     \
            default: break;                                                                  \
            }                                                                                \
        }                                                                                    \
        if (op == GPURMA_ACC_REPLACE)                                                        \
            return __atomic_exchange_n(at, (T)v, __ATOMIC_SEQ_CST);                          \
        if (op == GPURMA_ACC_NO_OP)                                                          \
            return __atomic_load_n(at, __ATOMIC_SEQ_CST);                                    \
        MAPPED_CAS_LOOP(T);                                                                  \
    } while (0)

/* Old bits of the element at target (mapped), after applying op with v. */
static uint64_t mapped_element(void *target, size_t es, gpurma_dtype_t dtype, gpurma_acc_op_t op,
                               uint64_t v)
{
    switch (es) {
    case 1: MAPPED_OP(uint8_t);
    case 2: MAPPED_OP(uint16_t);
    case 4: MAPPED_OP(uint32_t);
    default: MAPPED_OP(uint64_t);
    }
}

static uint64_t mapped_cas(void *target, size_t es, uint64_t compare, uint64_t desired)
{
#define CAS_AS(T)                                                                            \
    do {                                                                                     \
        T cur = (T)compare;                                                                  \
        __atomic_compare_exchange_n((T *)target, &cur, (T)desired, 0, __ATOMIC_SEQ_CST,      \
                                    __ATOMIC_SEQ_CST);                                       \
        return (uint64_t)cur;                                                                \
    } while (0)
    switch (es) {
    case 1: CAS_AS(uint8_t);
    case 2: CAS_AS(uint16_t);
    case 4: CAS_AS(uint32_t);
    default: CAS_AS(uint64_t);
    }
#undef CAS_AS
}

/* ---------------------------------------- through the engine (64-bit words) */

/* The element at off: the word at off & ~7, shifted by its byte position. */
typedef struct {
    size_t   word;
    unsigned shift;
    uint64_t mask; /* the element's bits, in place */
} elem_pos_t;

static elem_pos_t elem_pos(size_t off, size_t es)
{
    elem_pos_t p;
    p.word = off & ~(size_t)7;
    p.shift = (unsigned)(off & 7) * 8;
    p.mask = (es == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * es)) - 1)) << p.shift;
    return p;
}

/* Combines (op == -1: compare-and-swap with compare) and leaves the old
 * element bits in *old. */
static int engine_element(gpurma_win_t w, int peer, size_t off, size_t es, gpurma_dtype_t dtype,
                          int op, uint64_t v, uint64_t compare, uint64_t *old)
{
    const gpurma_engine_ops_t *e = w->engines[peer];
    elem_pos_t p = elem_pos(off, es);
    int rc;
    /* Whole words with their own engine atomic: one round trip. */
    if (es == 8 && op == GPURMA_ACC_SUM && !gpurma_dacc__is_float(dtype))
        return e->atomic(w, peer, GPURMA_ATOMIC_FETCH_ADD, off, v, 0, old);
    if (es == 8 && op == GPURMA_ACC_REPLACE)
        return e->atomic(w, peer, GPURMA_ATOMIC_SWAP, off, v, 0, old);
    if (es == 8 && op == -1)
        return e->atomic(w, peer, GPURMA_ATOMIC_CAS, off, v, compare, old);
    uint64_t word;
    rc = e->atomic(w, peer, GPURMA_ATOMIC_FETCH_ADD, p.word, 0, 0, &word);
    for (;;) {
        if (rc)
            return rc;
        uint64_t cur = (word & p.mask) >> p.shift, next;
        *old = cur;
        if (op == -1)
            next = cur == (compare & (p.mask >> p.shift)) ? v : cur;
        else
            next = gpurma_dev_acc_apply(dtype, (gpurma_acc_op_t)op, cur, v);
        uint64_t want = (word & ~p.mask) | ((next << p.shift) & p.mask);
        if (want == word)
            return GPURMA_SUCCESS; /* read atomically; nothing to write */
        uint64_t seen;
        rc = e->atomic(w, peer, GPURMA_ATOMIC_CAS, p.word, want, word, &seen);
        if (!rc && seen == word)
            return GPURMA_SUCCESS;
        word = seen;
    }
}

static void *mapped_target(gpurma_win_t w, int peer, size_t off)
{
    const gpurma_dev_peer_t *pe = &w->peers[peer];
    if (w->gpu || w->engines[peer]->kind != GPURMA_ENGINE_MEM ||
        pe->path != GPURMA_DEV_PATH_LOADSTORE || !pe->base)
        return NULL;
    return pe->base + off;
}

static int accumulate_common(gpurma_win_t w, const char *call, int peer, size_t off,
                             const void *src, void *result, size_t count, gpurma_dtype_t dtype,
                             gpurma_acc_op_t op, int need_result)
{
    int rc = check_acc(w, call, peer, off, count, dtype, op, src, result, need_result);
    if (rc)
        return rc;
    size_t es = gpurma_dev_dtype_size(dtype);
    const char *in = src;
    char *out = result;
    char *mapped = mapped_target(w, peer, off);
    for (size_t i = 0; i < count; i++) {
        uint64_t v = op == GPURMA_ACC_NO_OP ? 0 : load_element(in + i * es, es), old;
        if (mapped)
            old = mapped_element(mapped + i * es, es, dtype, op, v);
        else if ((rc = engine_element(w, peer, off + i * es, es, dtype, (int)op, v, 0, &old)))
            return rc;
        if (need_result)
            store_element(out + i * es, old, es);
    }
    return gpurma_team_check_alive(w->team, peer, call);
}

GPURMA_API gpurma_status_t gpurma_accumulate(gpurma_win_t w, int peer, size_t off,
                                             const void *src, size_t count, gpurma_dtype_t dtype,
                                             gpurma_acc_op_t op)
{
    return accumulate_common(w, "accumulate", peer, off, src, NULL, count, dtype, op, 0);
}

GPURMA_API gpurma_status_t gpurma_get_accumulate(gpurma_win_t w, int peer, size_t off,
                                                 const void *src, void *result, size_t count,
                                                 gpurma_dtype_t dtype, gpurma_acc_op_t op)
{
    return accumulate_common(w, "get_accumulate", peer, off, src, result, count, dtype, op, 1);
}

GPURMA_API gpurma_status_t gpurma_fetch_and_op(gpurma_win_t w, int peer, size_t off,
                                               const void *value, void *result,
                                               gpurma_dtype_t dtype, gpurma_acc_op_t op)
{
    return accumulate_common(w, "fetch_and_op", peer, off, value, result, 1, dtype, op, 1);
}

GPURMA_API gpurma_status_t gpurma_compare_and_swap(gpurma_win_t w, int peer, size_t off,
                                                   const void *compare, const void *desired,
                                                   void *result, gpurma_dtype_t dtype)
{
    /* REPLACE: any dtype, and desired is the "src" the checks look for. */
    int rc = check_acc(w, "compare_and_swap", peer, off, 1, dtype, GPURMA_ACC_REPLACE, desired,
                       result, 1);
    if (!rc && !compare)
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: compare_and_swap: compare is NULL",
                              w->ctx->rank);
    if (rc)
        return rc;
    size_t es = gpurma_dev_dtype_size(dtype);
    uint64_t c = load_element(compare, es), d = load_element(desired, es), old;
    char *mapped = mapped_target(w, peer, off);
    if (mapped)
        old = mapped_cas(mapped, es, c, d);
    else if ((rc = engine_element(w, peer, off, es, dtype, -1, d, c, &old)))
        return rc;
    store_element(result, old, es);
    return gpurma_team_check_alive(w->team, peer, "compare_and_swap");
}
