/*
 * dev_switch.h - the switch engine's device side behind gpurma_switch.h:
 * reduce (every member's elements at one offset, combined, into local
 * memory) and broadcast (a store into every member's range). Compiles as
 * CUDA, HIP and plain C. Not ABI.
 *
 * Emulated switch (always available): reduce loads the element from every
 * member in rank order 0, 1, ..., n-1 and combines it into an accumulator
 * (f16 and bf16 accumulate in f32 and are rounded once, to nearest even, at
 * the end); broadcast stores into each member's mapping. Every member thus
 * computes bitwise the same result, on a GPU and on the host backend.
 * Multicast (the hardware path, sm_90 and later, only when the host side set
 * it up): multimem.ld_reduce / multimem.st on the 16-byte aligned body for
 * the types and operators the hardware reduces; everything else, the head
 * and tail included, takes the emulated path.
 */
#ifndef GPURMA_DETAIL_DEV_SWITCH_H
#define GPURMA_DETAIL_DEV_SWITCH_H

#include "gpurma/detail/dev_reduce.h" /* element sizes, f16 and bf16 conversions */

#define GPURMA_DEV_SWITCH_MAGIC     0x73776368u /* "swch" */
/* Host backend: the first uint32_t of the switch struct (see
 * GPURMA_DEV_HOST_WIN_LIVE; the struct is a tombstone once freed). */
#define GPURMA_DEV_HOST_SWITCH_LIVE 0x53574954u /* "SWIT" */

typedef struct gpurma_dev_switch {
    gpurma_dev_win_t win;   /* the window: member r's range at peers[r].base + offset */
    char    *mc;            /* multicast mapping of the range; NULL when emulated     */
    void    *host_sw;       /* host backend: the switch struct (liveness)             */
    uint64_t offset, bytes; /* the range, the same in every member's window           */
    int32_t  mode;          /* gpurma_switch_mode_t                                   */
    uint32_t aligned16;     /* every member's base + offset is 16-byte aligned        */
    uint32_t magic;
    uint32_t pad;
} gpurma_dev_switch_t;

#if !GPURMA_DEV_GPU
#ifdef __cplusplus
extern "C" {
#endif
/* Host backend: gpurma_dev_host_switch_state for the handle's switch, and
 * every field of the handle the switch's own (rma/switch/switch.c). */
GPURMA_API gpurma_status_t gpurma_dev_host_switch_handle_state(const gpurma_dev_switch_t *h);
#ifdef __cplusplus
}
#endif
#endif

/* ------------------------------------------------------------- checks */

/* What a reduction may use: SUM, MIN, MAX (the hardware has no product or
 * average); INVALID_ARG for an operator that does not exist. */
GPURMA_HOST_DEVICE gpurma_status_t gpurma_dev_switch_op_ok(gpurma_dtype_t t, gpurma_redop_t op)
{
    if (!gpurma_dev_dtype_size(t))
        return GPURMA_ERR_INVALID_ARG;
    if (op == GPURMA_SUM || op == GPURMA_MIN || op == GPURMA_MAX)
        return GPURMA_SUCCESS;
    return op == GPURMA_PROD || op == GPURMA_AVG ? GPURMA_ERR_UNSUPPORTED
                                                 : GPURMA_ERR_INVALID_ARG;
}

GPURMA_DEVICE gpurma_status_t gpurma_dsw__check_handle(const gpurma_dev_switch_t *sw)
{
    if (sw->magic != GPURMA_DEV_SWITCH_MAGIC)
        return GPURMA_ERR_INVALID_ARG;
#if !GPURMA_DEV_GPU
    gpurma_status_t rc = gpurma_dev_host_switch_handle_state(sw);
    if (rc != GPURMA_SUCCESS)
        return rc;
#endif
    return gpurma_dev__check_win(&sw->win);
}

/* Everything a call checks before it touches memory: handle, team thread,
 * type, [off, off + count * size) inside the range without overflow, the
 * buffer present, aligned to the element and clear of this member's whole
 * range (any part of it, not only the elements at off). */
GPURMA_DEVICE gpurma_status_t gpurma_dsw__check(const gpurma_dev_switch_t *sw, size_t off,
                                                const void *buf, size_t count,
                                                gpurma_dtype_t dtype, unsigned tid,
                                                unsigned nthreads, size_t *nbytes)
{
    gpurma_status_t rc = gpurma_dsw__check_handle(sw);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dev__check_team(tid, nthreads);
    if (rc != GPURMA_SUCCESS)
        return rc;
    size_t es = gpurma_dev_dtype_size(dtype);
    if (!es)
        return GPURMA_ERR_INVALID_ARG;
    if (count > SIZE_MAX / es)
        return GPURMA_ERR_OUT_OF_BOUNDS;
    size_t n = count * es;
    if (off > sw->bytes || n > sw->bytes - off)
        return GPURMA_ERR_OUT_OF_BOUNDS;
    if (n && !buf)
        return GPURMA_ERR_INVALID_ARG;
    if (((size_t)sw->offset + off) % es || (uintptr_t)buf % es)
        return GPURMA_ERR_MISALIGNED;
    /* The whole of this member's range, not only the elements at off: a
     * reduction into another part of it would change what the members
     * read (and the result) while they read it. */
    const char *own = sw->win.peers[sw->win.rank].base + sw->offset;
    const char *b = (const char *)buf;
    if (n && (uintptr_t)b < (uintptr_t)own + sw->bytes && (uintptr_t)own < (uintptr_t)b + n)
        return GPURMA_ERR_INVALID_ARG; /* overlaps this member's range */
    *nbytes = n;
    return GPURMA_SUCCESS;
}

/* ------------------------------------------------------ hardware path */

#if defined(__CUDACC__) && !defined(__HIPCC__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GPURMA_DSW__HW 1
/* One 16-byte multimem.ld_reduce at a (a multicast address); returns 0
 * when the hardware does not reduce that type with that operator. */
GPURMA_DEVICE int gpurma_dsw__hw_reduce16(gpurma_dtype_t t, gpurma_redop_t op, const char *a,
                                          uint4 *v)
{
#define GPURMA_DSW__V4(OPTYPE)                                                                \
    asm volatile("multimem.ld_reduce.relaxed.sys.global." OPTYPE " {%0, %1, %2, %3}, [%4];"   \
                 : "=r"(v->x), "=r"(v->y), "=r"(v->z), "=r"(v->w) : "l"(a) : "memory")
#define GPURMA_DSW__S32(OPTYPE)                                                               \
    do {                                                                                      \
        unsigned *o = (unsigned *)v;                                                          \
        for (int k = 0; k < 4; k++)                                                           \
            asm volatile("multimem.ld_reduce.relaxed.sys.global." OPTYPE " %0, [%1];"         \
                         : "=r"(o[k]) : "l"(a + 4 * k) : "memory");                           \
    } while (0)
#define GPURMA_DSW__S64(OPTYPE)                                                               \
    do {                                                                                      \
        unsigned long long *o = (unsigned long long *)v;                                      \
        for (int k = 0; k < 2; k++)                                                           \
            asm volatile("multimem.ld_reduce.relaxed.sys.global." OPTYPE " %0, [%1];"         \
                         : "=l"(o[k]) : "l"(a + 8 * k) : "memory");                           \
    } while (0)
    switch (t) {
    case GPURMA_FLOAT32:
        if (op == GPURMA_SUM) GPURMA_DSW__V4("add.v4.f32");
        else return 0; /* min/max on f32: not a multimem operator */
        return 1;
    case GPURMA_FLOAT16:
        if (op == GPURMA_SUM) GPURMA_DSW__V4("add.acc::f32.v4.f16x2");
        else if (op == GPURMA_MIN) GPURMA_DSW__V4("min.v4.f16x2");
        else GPURMA_DSW__V4("max.v4.f16x2");
        return 1;
    case GPURMA_BFLOAT16:
        if (op == GPURMA_SUM) GPURMA_DSW__V4("add.acc::f32.v4.bf16x2");
        else if (op == GPURMA_MIN) GPURMA_DSW__V4("min.v4.bf16x2");
        else GPURMA_DSW__V4("max.v4.bf16x2");
        return 1;
    case GPURMA_INT32:
        if (op == GPURMA_SUM) GPURMA_DSW__S32("add.s32");
        else if (op == GPURMA_MIN) GPURMA_DSW__S32("min.s32");
        else GPURMA_DSW__S32("max.s32");
        return 1;
    case GPURMA_UINT32:
        if (op == GPURMA_SUM) GPURMA_DSW__S32("add.u32");
        else if (op == GPURMA_MIN) GPURMA_DSW__S32("min.u32");
        else GPURMA_DSW__S32("max.u32");
        return 1;
    case GPURMA_UINT64:
        if (op == GPURMA_SUM) GPURMA_DSW__S64("add.u64");
        else if (op == GPURMA_MIN) GPURMA_DSW__S64("min.u64");
        else GPURMA_DSW__S64("max.u64");
        return 1;
    case GPURMA_INT64:
        if (op == GPURMA_MIN) GPURMA_DSW__S64("min.s64");
        else if (op == GPURMA_MAX) GPURMA_DSW__S64("max.s64");
        else GPURMA_DSW__S64("add.u64"); /* two's complement: the same bits */
        return 1;
    default:
        return 0;
    }
#undef GPURMA_DSW__V4
#undef GPURMA_DSW__S32
#undef GPURMA_DSW__S64
}

GPURMA_DEVICE void gpurma_dsw__hw_store16(char *a, uint4 v)
{
    asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(a),
                 "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}
#else
#define GPURMA_DSW__HW 0
#endif

/* ---------------------------------------------------- emulated reduce */

#if GPURMA_DEV_GPU
typedef uint4 gpurma_dsw__vec16_t;
#else
typedef struct { uint64_t lo, hi; } gpurma_dsw__vec16_t;
#endif

#define GPURMA_DSW__ADD_WRAP(T, U) (T)((U)a + (U)b)
#define GPURMA_DSW__ID(x) (x)

/* One reduce function per type: T the element, A the accumulator, TO_A and
 * FROM_A the conversions, ADD the sum of a and b in A. The group's threads
 * share the elements: those before the first 16-byte boundary and after the
 * last one singly, the body 16 bytes (one vector load per member) at a time
 * when this buffer is congruent to the members' addresses modulo 16. */
#define GPURMA_DSW__REDUCE(NAME, DTYPE, T, A, TO_A, FROM_A, ADD)                                \
    GPURMA_DEVICE A gpurma_dsw__combine_##NAME(int op, A a, A b)                               \
    {                                                                                          \
        return op == GPURMA_SUM ? (A)(ADD) : op == GPURMA_MIN ? (b < a ? b : a)                \
                                                              : (a < b ? b : a);               \
    }                                                                                          \
    GPURMA_DEVICE void gpurma_dsw__reduce_##NAME(const gpurma_dev_switch_t *sw, size_t off,    \
                                                 T *dst, size_t count, int op, unsigned tid,   \
                                                 unsigned nthreads)                            \
    {                                                                                          \
        enum { PER = 16 / sizeof(T) };                                                         \
        const gpurma_dev_peer_t *peers = sw->win.peers;                                        \
        const int n = sw->win.size;                                                            \
        const size_t at = (size_t)sw->offset + off;                                            \
        size_t head = count, nvec = 0;                                                         \
        if (sw->aligned16 && !(((uintptr_t)dst - at) & 15)) {                                  \
            head = ((16 - (at & 15)) & 15) / sizeof(T);                                        \
            if (head > count)                                                                  \
                head = count;                                                                  \
            nvec = (count - head) / PER;                                                       \
        }                                                                                      \
        const size_t body = nvec * PER, singles = count - body;                                \
        for (size_t i = tid; i < singles; i += nthreads) {                                     \
            size_t e = i < head ? i : i + body;                                                \
            size_t byte = at + e * sizeof(T);                                                  \
            A acc = TO_A(*(const T *)(peers[0].base + byte));                                  \
            for (int r = 1; r < n; r++)                                                        \
                acc = gpurma_dsw__combine_##NAME(op, acc, TO_A(*(const T *)(peers[r].base + byte))); \
            dst[e] = FROM_A(acc);                                                              \
        }                                                                                      \
        for (size_t j = tid; j < nvec; j += nthreads) {                                        \
            size_t byte = at + (head + j * PER) * sizeof(T);                                   \
            union { gpurma_dsw__vec16_t q; T e[PER]; } v;                                      \
            if (GPURMA_DSW__HW && sw->mc) {                                                    \
                if (gpurma_dsw__hw_reduce_any(DTYPE, op, sw->mc + off + (head + j * PER) * sizeof(T), &v.q)) { \
                    *(gpurma_dsw__vec16_t *)(dst + head + j * PER) = v.q;                      \
                    continue;                                                                  \
                }                                                                              \
            }                                                                                  \
            A acc[PER];                                                                        \
            v.q = *(const gpurma_dsw__vec16_t *)(peers[0].base + byte);                        \
            for (int k = 0; k < PER; k++)                                                      \
                acc[k] = TO_A(v.e[k]);                                                         \
            for (int r = 1; r < n; r++) {                                                      \
                v.q = *(const gpurma_dsw__vec16_t *)(peers[r].base + byte);                    \
                for (int k = 0; k < PER; k++)                                                  \
                    acc[k] = gpurma_dsw__combine_##NAME(op, acc[k], TO_A(v.e[k]));             \
            }                                                                                  \
            for (int k = 0; k < PER; k++)                                                      \
                v.e[k] = FROM_A(acc[k]);                                                       \
            *(gpurma_dsw__vec16_t *)(dst + head + j * PER) = v.q;                              \
        }                                                                                      \
    }

#if GPURMA_DSW__HW
#define gpurma_dsw__hw_reduce_any(t, op, a, v) gpurma_dsw__hw_reduce16((t), (gpurma_redop_t)(op), (a), (v))
#else
#define gpurma_dsw__hw_reduce_any(t, op, a, v) ((void)(t), (void)(op), (void)(a), (void)(v), 0)
#endif

GPURMA_DSW__REDUCE(i8, GPURMA_INT8, int8_t, int8_t, GPURMA_DSW__ID, GPURMA_DSW__ID,
                   GPURMA_DSW__ADD_WRAP(int8_t, uint8_t))
GPURMA_DSW__REDUCE(u8, GPURMA_UINT8, uint8_t, uint8_t, GPURMA_DSW__ID, GPURMA_DSW__ID,
                   GPURMA_DSW__ADD_WRAP(uint8_t, uint8_t))
GPURMA_DSW__REDUCE(i32, GPURMA_INT32, int32_t, int32_t, GPURMA_DSW__ID, GPURMA_DSW__ID,
                   GPURMA_DSW__ADD_WRAP(int32_t, uint32_t))
GPURMA_DSW__REDUCE(u32, GPURMA_UINT32, uint32_t, uint32_t, GPURMA_DSW__ID, GPURMA_DSW__ID,
                   GPURMA_DSW__ADD_WRAP(uint32_t, uint32_t))
GPURMA_DSW__REDUCE(i64, GPURMA_INT64, int64_t, int64_t, GPURMA_DSW__ID, GPURMA_DSW__ID,
                   GPURMA_DSW__ADD_WRAP(int64_t, uint64_t))
GPURMA_DSW__REDUCE(u64, GPURMA_UINT64, uint64_t, uint64_t, GPURMA_DSW__ID, GPURMA_DSW__ID,
                   GPURMA_DSW__ADD_WRAP(uint64_t, uint64_t))
GPURMA_DSW__REDUCE(f16, GPURMA_FLOAT16, uint16_t, float, gpurma_dev_f16_to_f32,
                   gpurma_dev_f32_to_f16, a + b)
GPURMA_DSW__REDUCE(bf16, GPURMA_BFLOAT16, uint16_t, float, gpurma_dev_bf16_to_f32,
                   gpurma_dev_f32_to_bf16, a + b)
GPURMA_DSW__REDUCE(f32, GPURMA_FLOAT32, float, float, GPURMA_DSW__ID, GPURMA_DSW__ID, a + b)
GPURMA_DSW__REDUCE(f64, GPURMA_FLOAT64, double, double, GPURMA_DSW__ID, GPURMA_DSW__ID, a + b)
#undef GPURMA_DSW__REDUCE

/* ------------------------------------------------------------ the API */

/* dst[i] = member 0's element i at off, combined with member 1's, ..., in
 * rank order (see the top of this file), for i < count; off is a byte
 * offset into the switch's range. dst is this thread's memory (on a GPU:
 * global, shared or local) and may not overlap this member's range. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_switch_reduce_coop(gpurma_dev_switch_t sw, size_t off,
                                                            void *dst, size_t count,
                                                            gpurma_dtype_t dtype,
                                                            gpurma_redop_t op, unsigned tid,
                                                            unsigned nthreads)
{
    size_t nbytes = 0;
    gpurma_status_t rc = gpurma_dsw__check(&sw, off, dst, count, dtype, tid, nthreads, &nbytes);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev_switch_op_ok(dtype, op);
    if (rc != GPURMA_SUCCESS || !count)
        return rc;
    switch (dtype) {
    case GPURMA_INT8: gpurma_dsw__reduce_i8(&sw, off, (int8_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_UINT8: gpurma_dsw__reduce_u8(&sw, off, (uint8_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_INT32: gpurma_dsw__reduce_i32(&sw, off, (int32_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_UINT32: gpurma_dsw__reduce_u32(&sw, off, (uint32_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_INT64: gpurma_dsw__reduce_i64(&sw, off, (int64_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_UINT64: gpurma_dsw__reduce_u64(&sw, off, (uint64_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_FLOAT16: gpurma_dsw__reduce_f16(&sw, off, (uint16_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_BFLOAT16: gpurma_dsw__reduce_bf16(&sw, off, (uint16_t *)dst, count, op, tid, nthreads); break;
    case GPURMA_FLOAT32: gpurma_dsw__reduce_f32(&sw, off, (float *)dst, count, op, tid, nthreads); break;
    case GPURMA_FLOAT64: gpurma_dsw__reduce_f64(&sw, off, (double *)dst, count, op, tid, nthreads); break;
    }
    return GPURMA_SUCCESS;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_switch_reduce(gpurma_dev_switch_t sw, size_t off,
                                                       void *dst, size_t count,
                                                       gpurma_dtype_t dtype, gpurma_redop_t op)
{
    return gpurma_dev_switch_reduce_coop(sw, off, dst, count, dtype, op, 0, 1);
}

/* Stores count elements of src at off in every member's range (member 0
 * first). src may not overlap this member's range. The members see the
 * data after the caller's usual synchronization (a barrier, or a fence and
 * a signal). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_switch_broadcast_coop(gpurma_dev_switch_t sw,
                                                               size_t off, const void *src,
                                                               size_t count,
                                                               gpurma_dtype_t dtype,
                                                               unsigned tid, unsigned nthreads)
{
    size_t nbytes = 0;
    gpurma_status_t rc = gpurma_dsw__check(&sw, off, src, count, dtype, tid, nthreads, &nbytes);
    if (rc != GPURMA_SUCCESS || !nbytes)
        return rc;
#if GPURMA_DSW__HW
    /* Multicast: one store reaches every member; the unaligned edges, and
     * sources not congruent modulo 16, go through the mappings below. */
    if (sw.mc && sw.aligned16 && !(((uintptr_t)src - (sw.offset + off)) & 15)) {
        size_t at = (size_t)sw.offset + off;
        size_t head = (16 - (at & 15)) & 15;
        if (head > nbytes)
            head = nbytes;
        size_t nvec = (nbytes - head) / 16, done = head + nvec * 16;
        const char *s = (const char *)src;
        for (size_t j = tid; j < nvec; j += nthreads)
            gpurma_dsw__hw_store16(sw.mc + off + head + 16 * j,
                                   *(const uint4 *)(s + head + 16 * j));
        for (int r = 0; r < sw.win.size; r++) {
            char *d = sw.win.peers[r].base + at;
            gpurma_sh_copy(d, s, head, tid, nthreads);
            gpurma_sh_copy(d + done, s + done, nbytes - done, tid, nthreads);
        }
        return GPURMA_SUCCESS;
    }
#endif
    for (int r = 0; r < sw.win.size; r++)
        gpurma_sh_copy(sw.win.peers[r].base + sw.offset + off, src, nbytes, tid, nthreads);
    return GPURMA_SUCCESS;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_switch_broadcast(gpurma_dev_switch_t sw, size_t off,
                                                          const void *src, size_t count,
                                                          gpurma_dtype_t dtype)
{
    return gpurma_dev_switch_broadcast_coop(sw, off, src, count, dtype, 0, 1);
}

#if GPURMA_DEV_GPU
/* _warp / _block: every thread of the warp / block calls with the same
 * arguments; the group returns together with dst (reduce) complete and
 * the stores (broadcast) issued by all of its threads. */
#define GPURMA_DSW__GROUP(scope, TID, NTHREADS, SYNC)                                         \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_switch_reduce_##scope(                           \
        gpurma_dev_switch_t sw, size_t off, void *dst, size_t count, gpurma_dtype_t dtype,     \
        gpurma_redop_t op)                                                                     \
    {                                                                                          \
        gpurma_status_t rc =                                                                   \
            gpurma_dev_switch_reduce_coop(sw, off, dst, count, dtype, op, TID, NTHREADS);      \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_switch_broadcast_##scope(                        \
        gpurma_dev_switch_t sw, size_t off, const void *src, size_t count,                     \
        gpurma_dtype_t dtype)                                                                  \
    {                                                                                          \
        gpurma_status_t rc =                                                                   \
            gpurma_dev_switch_broadcast_coop(sw, off, src, count, dtype, TID, NTHREADS);       \
        SYNC;                                                                                  \
        return rc;                                                                             \
    }
GPURMA_DSW__GROUP(warp, gpurma_sh_lane(), gpurma_sh_warp_threads(), gpurma_sh_sync_warp())
GPURMA_DSW__GROUP(block, gpurma_sh_block_tid(), gpurma_sh_block_threads(), gpurma_sh_sync_block())
#undef GPURMA_DSW__GROUP
#endif

#endif
