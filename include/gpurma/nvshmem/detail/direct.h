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

/* This processor's address of [off, off + bytes) of segment seg (0: the
 * heap) on pe when pe is reached by load/store and its copy holds all of
 * it (a registered buffer may be smaller there), else NULL: the caller then
 * takes gpurma's API, which reports a range error. Only where the unit's
 * state is live (device code, plain C on the host backend). */
GPURMA_NVSHMEMI_D char *gpurma_nvshmemi__direct(int seg, int pe, size_t off, size_t bytes)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    if ((unsigned)pe >= (unsigned)s->n_pes)
        return NULL;
    const gpurma_dev_peer_t *p = &(seg > 0 ? &s->segments[seg - 1].win : &s->win)->peers[pe];
#if GPURMA_NVSHMEMI_DEVICE_PASS
    /* The table does not change while a kernel runs (the library writes it
     * when it makes the window): read-only loads, all issued at once
     * rather than each after the test of the one before, as NVSHMEM's one
     * __ldg of a peer's heap base. */
    int path = __ldg(&p->path);
    char *base = (char *)__ldg((const unsigned long long *)&p->base);
    uint64_t size = __ldg((const unsigned long long *)&p->size);
#else
    int path = p->path;
    char *base = p->base;
    uint64_t size = p->size;
#endif
    return path == GPURMA_DEV_PATH_LOADSTORE && base && off <= size && bytes <= size - off
               ? base + off
               : NULL;
}

/* Relaxed atomics at system scope on 4- and 8-byte words (kind: the
 * layer's AMO codes of amo.h: 0 fetch, 1 set, 2 swap, 3 cas, 4 add, 5 and,
 * 6 or, 7 xor), as NVSHMEM's own: CUDA's _system builtins, whose result,
 * when the caller drops it (fetch == 0, or a fetching call whose value the
 * program discards), ptxas turns into a RED that waits for no reply, so
 * back-to-back AMOs overlap. System scope because the word may belong to
 * another GPU, whose kernels' atomics on it must be atomic with these
 * (device scope covers one GPU only); no fence, since NVSHMEM orders AMOs
 * only with fence and quiet. The builtins are not asm with a memory clobber, so the
 * compiler keeps what the atomic cannot touch in registers across a loop. */
#if GPURMA_NVSHMEMI_CUDA /* device functions: nvcc's host pass only parses them */
#define GPURMA_NVSHMEMI__ATOMIC_BODY(T)                                                     \
    switch (kind) {                                                                         \
    case 0: return gpurma_nvshmemi__load_relaxed_##T(p);                                     \
    case 1: case 2: return (T)atomicExch_system((U *)p, (U)v);                              \
    case 3: return (T)atomicCAS_system((U *)p, (U)cond, (U)v);                              \
    case 4: return (T)atomicAdd_system((U *)p, (U)v);                                       \
    case 5: return (T)atomicAnd_system((U *)p, (U)v);                                       \
    case 6: return (T)atomicOr_system((U *)p, (U)v);                                        \
    default: return (T)atomicXor_system((U *)p, (U)v);                                      \
    }
GPURMA_NVSHMEMI_D uint64_t gpurma_nvshmemi__load_relaxed_uint64_t(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
GPURMA_NVSHMEMI_D uint32_t gpurma_nvshmemi__load_relaxed_uint32_t(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
GPURMA_NVSHMEMI_D uint64_t gpurma_nvshmemi__atomic64(uint64_t *p, int kind, uint64_t v,
                                                     uint64_t cond, int fetch)
{
    typedef unsigned long long U;
    (void)fetch; /* the compiler sees whether the result is used */
    GPURMA_NVSHMEMI__ATOMIC_BODY(uint64_t)
}
GPURMA_NVSHMEMI_D uint32_t gpurma_nvshmemi__atomic32(uint32_t *p, int kind, uint32_t v,
                                                     uint32_t cond, int fetch)
{
    typedef unsigned int U;
    (void)fetch;
    GPURMA_NVSHMEMI__ATOMIC_BODY(uint32_t)
}
#undef GPURMA_NVSHMEMI__ATOMIC_BODY
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
/* A release fence at system scope: with the relaxed atomics after it, a
 * release of everything this thread did (and, after a group barrier, its
 * group) to whoever acquires one of their values. One fence before several
 * atomics, instead of a release on each, which would wait for the one
 * before it. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__fence_release(void)
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
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
static inline void gpurma_nvshmemi__fence_release(void)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
}
static inline uint64_t gpurma_nvshmemi__load_acquire(const void *p, size_t size)
{
    return size == 8   ? __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE)
           : size == 4 ? __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE)
                       : __atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE);
}
#endif

#endif
