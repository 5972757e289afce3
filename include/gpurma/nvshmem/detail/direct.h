/*
 * direct.h - the load/store fast path: for a PE whose heap this processor
 * maps (NVLink/PCIe peers, the same GPU, shared memory on the host
 * backend), NVSHMEM's calls become the one instruction NVSHMEM's own
 * memory model asks for: stores for p and put, relaxed atomics for AMOs
 * (ordered only by fence and quiet, so back-to-back AMOs whose results are
 * not consumed overlap), and one release store or release add for the
 * signal of put_signal and signal_op. Every other PE takes gpurma's device
 * API (the port engine's FIFO).
 */
#ifndef GPURMA_NVSHMEM_DETAIL_DIRECT_H
#define GPURMA_NVSHMEM_DETAIL_DIRECT_H

#include "gpurma/nvshmem/detail/unit.h"

/* This processor's address of offset off of segment seg (0: the heap) on
 * pe when pe is reached by load/store, else NULL. Only where the unit's
 * state is live (device code, plain C on the host backend). */
GPURMA_NVSHMEMI_D char *gpurma_nvshmemi__direct(int seg, int pe, size_t off)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    if ((unsigned)pe >= (unsigned)s->n_pes)
        return NULL;
    const gpurma_dev_peer_t *p = &(seg > 0 ? &s->segments[seg - 1].win : &s->win)->peers[pe];
    return p->path == GPURMA_DEV_PATH_LOADSTORE && p->base ? p->base + off : NULL;
}

/* Relaxed atomics at system scope on 4- and 8-byte words (kind: the
 * layer's AMO codes of amo.h: 0 fetch, 1 set, 2 swap, 3 cas, 4 add, 5 and,
 * 6 or, 7 xor). fetch == 0: the result is not needed (red where there is
 * one). */
#if GPURMA_NVSHMEMI_CUDA /* device functions: nvcc's host pass only parses them */
#define GPURMA_NVSHMEMI__ATOM(OP, T, W, C)                                                  \
    asm volatile("atom.relaxed.sys.global." OP "." T " %0, [%1], %2;"                      \
                 : "=" C(old) : "l"(p), C(v) : "memory")
#define GPURMA_NVSHMEMI__RED(OP, T, C)                                                      \
    asm volatile("red.relaxed.sys.global." OP "." T " [%0], %1;" ::"l"(p), C(v) : "memory")
GPURMA_NVSHMEMI_D uint64_t gpurma_nvshmemi__atomic64(uint64_t *p, int kind, uint64_t v,
                                                     uint64_t cond, int fetch)
{
    uint64_t old = 0;
    switch (kind) {
    case 0: asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(old) : "l"(p) : "memory");
        break;
    case 1: case 2: GPURMA_NVSHMEMI__ATOM("exch", "b64", 64, "l"); break;
    case 3:
        asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %2, %3;"
                     : "=l"(old) : "l"(p), "l"(cond), "l"(v) : "memory");
        break;
    case 4: if (fetch) GPURMA_NVSHMEMI__ATOM("add", "u64", 64, "l"); else GPURMA_NVSHMEMI__RED("add", "u64", "l"); break;
    case 5: if (fetch) GPURMA_NVSHMEMI__ATOM("and", "b64", 64, "l"); else GPURMA_NVSHMEMI__RED("and", "b64", "l"); break;
    case 6: if (fetch) GPURMA_NVSHMEMI__ATOM("or", "b64", 64, "l"); else GPURMA_NVSHMEMI__RED("or", "b64", "l"); break;
    default: if (fetch) GPURMA_NVSHMEMI__ATOM("xor", "b64", 64, "l"); else GPURMA_NVSHMEMI__RED("xor", "b64", "l"); break;
    }
    return old;
}
GPURMA_NVSHMEMI_D uint32_t gpurma_nvshmemi__atomic32(uint32_t *p, int kind, uint32_t v,
                                                     uint32_t cond, int fetch)
{
    uint32_t old = 0;
    switch (kind) {
    case 0: asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(old) : "l"(p) : "memory");
        break;
    case 1: case 2: GPURMA_NVSHMEMI__ATOM("exch", "b32", 32, "r"); break;
    case 3:
        asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;"
                     : "=r"(old) : "l"(p), "r"(cond), "r"(v) : "memory");
        break;
    case 4: if (fetch) GPURMA_NVSHMEMI__ATOM("add", "u32", 32, "r"); else GPURMA_NVSHMEMI__RED("add", "u32", "r"); break;
    case 5: if (fetch) GPURMA_NVSHMEMI__ATOM("and", "b32", 32, "r"); else GPURMA_NVSHMEMI__RED("and", "b32", "r"); break;
    case 6: if (fetch) GPURMA_NVSHMEMI__ATOM("or", "b32", 32, "r"); else GPURMA_NVSHMEMI__RED("or", "b32", "r"); break;
    default: if (fetch) GPURMA_NVSHMEMI__ATOM("xor", "b32", 32, "r"); else GPURMA_NVSHMEMI__RED("xor", "b32", "r"); break;
    }
    return old;
}
#undef GPURMA_NVSHMEMI__ATOM
#undef GPURMA_NVSHMEMI__RED
/* The signal of put_signal and signal_op: every store this thread made
 * before (and, after a group barrier, its group's) is visible to whoever
 * sees the new value. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__signal_release(uint64_t *p, uint64_t v, int add)
{
    if (add)
        asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else
        asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* An acquire load of 2, 4 or 8 bytes, zero-extended. */
GPURMA_NVSHMEMI_D uint64_t gpurma_nvshmemi__load_acquire(const void *p, size_t size)
{
    if (size == 8) {
        uint64_t v;
        asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
        return v;
    }
    uint32_t v;
    if (size == 4)
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else
        asm volatile("ld.acquire.sys.global.u16 %0, [%1];" : "=h"(*(unsigned short *)&v)
                     : "l"(p) : "memory");
    return size == 4 ? v : (uint16_t)v;
}
#else
/* Plain C on the host backend: the same, with the compiler's atomics. */
#define GPURMA_NVSHMEMI__C_ATOMIC(NAME, T)                                                  \
    static inline T NAME(T *p, int kind, T v, T cond, int fetch)                           \
    {                                                                                       \
        (void)fetch;                                                                        \
        switch (kind) {                                                                     \
        case 0: return __atomic_load_n(p, __ATOMIC_RELAXED);                                \
        case 1: case 2: return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);                 \
        case 3:                                                                             \
            __atomic_compare_exchange_n(p, &cond, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
            return cond;                                                                    \
        case 4: return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);                          \
        case 5: return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);                          \
        case 6: return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);                           \
        default: return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);                        \
        }                                                                                   \
    }
GPURMA_NVSHMEMI__C_ATOMIC(gpurma_nvshmemi__atomic64, uint64_t)
GPURMA_NVSHMEMI__C_ATOMIC(gpurma_nvshmemi__atomic32, uint32_t)
#undef GPURMA_NVSHMEMI__C_ATOMIC
static inline void gpurma_nvshmemi__signal_release(uint64_t *p, uint64_t v, int add)
{
    if (add)
        __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
    else
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
static inline uint64_t gpurma_nvshmemi__load_acquire(const void *p, size_t size)
{
    return size == 8   ? __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE)
           : size == 4 ? __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE)
                       : __atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE);
}
#endif

#endif
