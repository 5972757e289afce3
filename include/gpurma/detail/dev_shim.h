/*
 * dev_shim.h - the only place where CUDA, HIP and plain C differ.
 *
 * Everything in gpurma_device.h is written against these primitives:
 * ordered loads/stores and atomics at system scope (visible to peer GPUs and
 * CPUs), a clock for timeouts, single-store packet writes for LL, and a copy
 * loop split over a caller-defined team of threads. Not ABI.
 */
#ifndef GPURMA_DETAIL_DEV_SHIM_H
#define GPURMA_DETAIL_DEV_SHIM_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define GPURMA_DEV_GPU 1
#define GPURMA_DEVICE __device__ __forceinline__
/* Pure arithmetic helpers host code also needs (e.g. to size windows). */
#define GPURMA_HOST_DEVICE __host__ __device__ __forceinline__
/* A loop over a small compile-time bound, unrolled so that an array it
 * indexes stays in registers and its loads are in flight together. */
#define GPURMA_UNROLL _Pragma("unroll")
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif
#else
#define GPURMA_DEV_GPU 0
#include <string.h>
#include <time.h>
#define GPURMA_DEVICE static inline
#define GPURMA_HOST_DEVICE static inline
#define GPURMA_UNROLL
#endif

/* a / b for b > 0. A GPU has no 64-bit divide: each is a call of some
 * hundred cycles (five of them were a third of a small collective's
 * kernel, 2026-11-26), so operands that fit 32 bits divide in 32. */
GPURMA_HOST_DEVICE uint64_t gpurma_sh_udiv(uint64_t a, uint64_t b)
{
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    if (!((a | b) >> 32))
        return (uint32_t)a / (uint32_t)b;
#endif
    return a / b;
}

/* ceil(a / b) for b > 0, without the a + b - 1 that wraps near SIZE_MAX. */
GPURMA_HOST_DEVICE size_t gpurma_sh_div_ceil(size_t a, size_t b)
{
    const size_t q = (size_t)gpurma_sh_udiv(a, b);
    return q + (q * b != a);
}

/* [*lo, *hi): part p of n (p < n) of total items, the remainder spread
 * over the parts; the same on every caller, and on a GPU without a 64-bit
 * divide where the numbers fit 32 bits. */
GPURMA_HOST_DEVICE void gpurma_sh_split(uint64_t total, uint64_t p, uint64_t n, uint64_t *lo,
                                        uint64_t *hi)
{
    if (n == 1) {
        *lo = 0, *hi = total;
        return;
    }
    const uint64_t q = gpurma_sh_udiv(total, n), r = total - q * n;
    *lo = q * p + gpurma_sh_udiv(r * p, n);
    *hi = q * (p + 1) + gpurma_sh_udiv(r * (p + 1), n);
}

/* Whether a * b wraps 64 bits (no division on a GPU). */
GPURMA_HOST_DEVICE int gpurma_sh_mul_wraps(uint64_t a, uint64_t b)
{
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __umul64hi(a, b) != 0;
#else
    return b != 0 && a > UINT64_MAX / b;
#endif
}

/* ------------------------------------------------------------ CUDA (PTX) */
#if defined(__CUDACC__) && !defined(__HIPCC__)
#include <stdio.h>

GPURMA_DEVICE uint64_t gpurma_sh_load_acquire_u64(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
GPURMA_DEVICE void gpurma_sh_store_release_u64(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPURMA_DEVICE void gpurma_sh_store_release_u32(uint32_t *p, uint32_t v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
GPURMA_DEVICE void gpurma_sh_store_relaxed_u32(uint32_t *p, uint32_t v)
{
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_add_u64(uint64_t *p, uint64_t v)
{
    uint64_t old;
    asm volatile("atom.acq_rel.sys.global.add.u64 %0, [%1], %2;"
                 : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
/* Add without fetching: the thread does not wait for the remote reply. */
GPURMA_DEVICE void gpurma_sh_red_add_release_u64(uint64_t *p, uint64_t v)
{
    asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPURMA_DEVICE uint64_t gpurma_sh_exchange_u64(uint64_t *p, uint64_t v)
{
    uint64_t old;
    asm volatile("atom.acq_rel.sys.global.exch.b64 %0, [%1], %2;"
                 : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
    uint64_t old;
    asm volatile("atom.acq_rel.sys.global.cas.b64 %0, [%1], %2, %3;"
                 : "=l"(old) : "l"(p), "l"(expected), "l"(desired) : "memory");
    return old;
}
/* The user-visible atomics (gpurma_dev_atomic_*): relaxed at system scope
 * (the peer is another GPU or the CPU; atom without .sem is .relaxed),
 * ordered against other operations only by fence, quiet and signals.
 * A result nobody reads lets ptxas emit a RED, which waits for no reply,
 * so back-to-back atomics overlap; it does so only in simple loops (a
 * fence.sc after the loop kept an ATOM into RZ, tests/gpu/atomic_forms.cu
 * measures the forms). CUDA's _system builtins rather than an asm with a
 * memory clobber: the compiler sees an atomic on one word, not a write of
 * all memory, so what it can prove untouched (constant memory, read-only
 * loads, locals) stays in registers across a loop of atomics, and an asm
 * atom's output register is kept, so the next one waits on it. */
GPURMA_DEVICE uint64_t gpurma_sh_fetch_add_relaxed_u64(uint64_t *p, uint64_t v)
{
    return atomicAdd_system((unsigned long long *)p, (unsigned long long)v);
}
GPURMA_DEVICE uint64_t gpurma_sh_exchange_relaxed_u64(uint64_t *p, uint64_t v)
{
    return atomicExch_system((unsigned long long *)p, (unsigned long long)v);
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_relaxed_u64(uint64_t *p, uint64_t expected,
                                                 uint64_t desired)
{
    return atomicCAS_system((unsigned long long *)p, (unsigned long long)expected,
                            (unsigned long long)desired);
}
/* The device barrier's words (coll_proto.h): a store and a load that are
 * strong (so that a fence before the store makes it a release, and a
 * fence after the load an acquire) but are fences of none of their own,
 * and a CAS that takes the channel (a word only this GPU touches: the
 * barrier's and LL16's lock) with acquire at device scope: the L2 answers
 * it. */
GPURMA_DEVICE void gpurma_sh_store_relaxed_u64(uint64_t *p, uint64_t v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPURMA_DEVICE uint64_t gpurma_sh_load_relaxed_u64(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_acquire_gpu_u64(uint64_t *p, uint64_t expected,
                                                     uint64_t desired)
{
    uint64_t old;
    asm volatile("atom.acquire.gpu.global.cas.b64 %0, [%1], %2, %3;"
                 : "=l"(old) : "l"(p), "l"(expected), "l"(desired) : "memory");
    return old;
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_or_acquire_gpu_u64(uint64_t *p, uint64_t v)
{
    uint64_t old;
    asm volatile("atom.acquire.gpu.global.or.b64 %0, [%1], %2;"
                 : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
GPURMA_DEVICE void gpurma_sh_fence_system(void) { asm volatile("fence.sc.sys;" ::: "memory"); }
GPURMA_DEVICE uint64_t gpurma_sh_now_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
GPURMA_DEVICE void gpurma_sh_pause(void) { __nanosleep(32); }
/* LL: data and flag in one store; volatile so that every poll re-reads memory. */
GPURMA_DEVICE void gpurma_sh_store_packet8(uint64_t *p, uint32_t data, uint32_t flag)
{
    asm volatile("st.volatile.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(data), "r"(flag)
                 : "memory");
}
GPURMA_DEVICE void gpurma_sh_load_packet8(const uint64_t *p, uint32_t *data, uint32_t *flag)
{
    asm volatile("ld.volatile.global.v2.u32 {%0, %1}, [%2];"
                 : "=r"(*data), "=r"(*flag) : "l"(p) : "memory");
}
GPURMA_DEVICE void gpurma_sh_store_packet16(uint64_t *p, uint32_t d0, uint32_t f0, uint32_t d1,
                                            uint32_t f1)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(d0), "r"(f0),
                 "r"(d1), "r"(f1)
                 : "memory");
}
GPURMA_DEVICE void gpurma_sh_load_packet16(const uint64_t *p, uint32_t v[4])
{
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "l"(p) : "memory");
}

/* ------------------------------------------------------------------ HIP */
#elif defined(__HIPCC__)

GPURMA_DEVICE uint64_t gpurma_sh_load_acquire_u64(const uint64_t *p)
{
    return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE void gpurma_sh_store_release_u64(uint64_t *p, uint64_t v)
{
    __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE void gpurma_sh_store_release_u32(uint32_t *p, uint32_t v)
{
    __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE void gpurma_sh_store_relaxed_u32(uint32_t *p, uint32_t v)
{
    __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_add_u64(uint64_t *p, uint64_t v)
{
    return __hip_atomic_fetch_add(p, v, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE void gpurma_sh_red_add_release_u64(uint64_t *p, uint64_t v)
{
    __hip_atomic_fetch_add(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE uint64_t gpurma_sh_exchange_u64(uint64_t *p, uint64_t v)
{
    return __hip_atomic_exchange(p, v, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
    __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
    return expected;
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_add_relaxed_u64(uint64_t *p, uint64_t v)
{
    return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE uint64_t gpurma_sh_exchange_relaxed_u64(uint64_t *p, uint64_t v)
{
    return __hip_atomic_exchange(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_relaxed_u64(uint64_t *p, uint64_t expected,
                                                 uint64_t desired)
{
    __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_RELAXED,
                                         __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
    return expected;
}
GPURMA_DEVICE void gpurma_sh_store_relaxed_u64(uint64_t *p, uint64_t v)
{
    __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE uint64_t gpurma_sh_load_relaxed_u64(const uint64_t *p)
{
    return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_acquire_gpu_u64(uint64_t *p, uint64_t expected,
                                                     uint64_t desired)
{
    __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_ACQUIRE,
                                         __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
    return expected;
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_or_acquire_gpu_u64(uint64_t *p, uint64_t v)
{
    return __hip_atomic_fetch_or(p, v, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}
GPURMA_DEVICE void gpurma_sh_fence_system(void) { __threadfence_system(); }
/* The wall clock runs at 100 MHz. HIP before 5.3 declares wall_clock64 for
 * the device pass only; the host pass never runs this. */
GPURMA_DEVICE uint64_t gpurma_sh_now_ns(void)
{
#if defined(__HIP_DEVICE_COMPILE__)
    return (uint64_t)wall_clock64() * 10;
#else
    return 0;
#endif
}
GPURMA_DEVICE void gpurma_sh_pause(void) { __builtin_amdgcn_s_sleep(1); }
GPURMA_DEVICE void gpurma_sh_store_packet8(uint64_t *p, uint32_t data, uint32_t flag)
{
    __hip_atomic_store(p, ((uint64_t)flag << 32) | data, __ATOMIC_RELAXED,
                       __HIP_MEMORY_SCOPE_SYSTEM);
}
GPURMA_DEVICE void gpurma_sh_load_packet8(const uint64_t *p, uint32_t *data, uint32_t *flag)
{
    uint64_t v = __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
    *data = (uint32_t)v;
    *flag = (uint32_t)(v >> 32);
}
GPURMA_DEVICE void gpurma_sh_store_packet16(uint64_t *p, uint32_t d0, uint32_t f0, uint32_t d1,
                                            uint32_t f1)
{
    gpurma_sh_store_packet8(p, d0, f0);
    gpurma_sh_store_packet8(p + 1, d1, f1);
}
GPURMA_DEVICE void gpurma_sh_load_packet16(const uint64_t *p, uint32_t v[4])
{
    gpurma_sh_load_packet8(p, &v[0], &v[1]);
    gpurma_sh_load_packet8(p + 1, &v[2], &v[3]);
}

/* ------------------------------------------------- plain C: host backend */
#else

GPURMA_DEVICE uint64_t gpurma_sh_load_acquire_u64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
GPURMA_DEVICE void gpurma_sh_store_release_u64(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
GPURMA_DEVICE void gpurma_sh_store_release_u32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
GPURMA_DEVICE void gpurma_sh_store_relaxed_u32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_add_u64(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
GPURMA_DEVICE void gpurma_sh_red_add_release_u64(uint64_t *p, uint64_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}
GPURMA_DEVICE uint64_t gpurma_sh_exchange_u64(uint64_t *p, uint64_t v)
{
    return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return expected;
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_add_relaxed_u64(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
GPURMA_DEVICE uint64_t gpurma_sh_exchange_relaxed_u64(uint64_t *p, uint64_t v)
{
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_relaxed_u64(uint64_t *p, uint64_t expected,
                                                 uint64_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
GPURMA_DEVICE void gpurma_sh_store_relaxed_u64(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
GPURMA_DEVICE uint64_t gpurma_sh_load_relaxed_u64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
GPURMA_DEVICE uint64_t gpurma_sh_cas_acquire_gpu_u64(uint64_t *p, uint64_t expected,
                                                     uint64_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE);
    return expected;
}
GPURMA_DEVICE uint64_t gpurma_sh_fetch_or_acquire_gpu_u64(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_or(p, v, __ATOMIC_ACQUIRE);
}
GPURMA_DEVICE void gpurma_sh_fence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
GPURMA_DEVICE uint64_t gpurma_sh_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* Polling CPU threads may share cores with the rank they wait for (8 ranks
 * on 2 cores in CI), so a long wait yields the core instead of burning it. */
GPURMA_DEVICE void gpurma_sh_pause_n(uint64_t iter)
{
    if (iter < 128) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    } else {
        /* Even a zero sleep lasts the timer slack (about 50 us): it hands the
         * core over for real, which oversubscribed runs need. The library's
         * own waits spin first when each rank has a core. */
        struct timespec ts = {0, iter < 8192 ? 0 : 50000};
        nanosleep(&ts, NULL);
    }
}
/* On the host a packet is one naturally aligned 8-byte store. */
GPURMA_DEVICE void gpurma_sh_store_packet8(uint64_t *p, uint32_t data, uint32_t flag)
{
    __atomic_store_n(p, ((uint64_t)flag << 32) | data, __ATOMIC_RELAXED);
}
GPURMA_DEVICE void gpurma_sh_load_packet8(const uint64_t *p, uint32_t *data, uint32_t *flag)
{
    uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
    *data = (uint32_t)v;
    *flag = (uint32_t)(v >> 32);
}
/* A 16-byte packet holds two (data, flag) halves; each half is its own atomic
 * 8-byte store, so the reader's per-half flag check is sufficient. */
GPURMA_DEVICE void gpurma_sh_store_packet16(uint64_t *p, uint32_t d0, uint32_t f0, uint32_t d1,
                                            uint32_t f1)
{
    gpurma_sh_store_packet8(p, d0, f0);
    gpurma_sh_store_packet8(p + 1, d1, f1);
}
GPURMA_DEVICE void gpurma_sh_load_packet16(const uint64_t *p, uint32_t v[4])
{
    gpurma_sh_load_packet8(p, &v[0], &v[1]);
    gpurma_sh_load_packet8(p + 1, &v[2], &v[3]);
}
#endif

#if GPURMA_DEV_GPU
/* Polls spin at first: even a short sleep costs more than a round trip to
 * a peer GPU, and latency is what waits are for. Long waits sleep. */
GPURMA_DEVICE void gpurma_sh_pause_n(uint64_t iter)
{
    if (iter >= 4096)
        gpurma_sh_pause();
}

/* Thread groups of the _warp and _block forms. */
GPURMA_DEVICE unsigned gpurma_sh_block_tid(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
GPURMA_DEVICE unsigned gpurma_sh_block_threads(void)
{
    return blockDim.x * blockDim.y * blockDim.z;
}
/* A message from a kernel (printf's format and arguments), out of line:
 * printf puts its arguments in the calling thread's stack, and the kernels
 * of small collectives keep none of their own (the registers they would
 * hold; a stack frame itself cost 0.03 us a launch on an H100,
 * 2026-11-26). */
template <typename... Args>
__device__ __noinline__ void gpurma_sh_report(const char *fmt, Args... args)
{
    printf(fmt, args...);
}
GPURMA_DEVICE void gpurma_sh_sync_block(void) { __syncthreads(); }
GPURMA_DEVICE int gpurma_sh_block_any(int pred) { return __syncthreads_or(pred); }
#if defined(__HIPCC__)
GPURMA_DEVICE unsigned gpurma_sh_lane(void) { return __lane_id(); }
GPURMA_DEVICE unsigned gpurma_sh_warp_threads(void) { return warpSize; }
GPURMA_DEVICE void gpurma_sh_sync_warp(void) { __builtin_amdgcn_wave_barrier(); }
GPURMA_DEVICE int gpurma_sh_warp_any(int pred) { return __any(pred); }
/* Orders this thread's earlier writes, and those it has observed (e.g.
 * through a block barrier), before its later ones, for every observer. */
GPURMA_DEVICE void gpurma_sh_fence_release_system(void) { __threadfence_system(); }
/* Whether a proxy or a copy engine can read p: global (or mapped host)
 * memory, not a thread's stack or the block's shared memory. */
GPURMA_DEVICE int gpurma_sh_proxy_readable(const void *p)
{
#if defined(__HIP_DEVICE_COMPILE__)
    typedef const __attribute__((address_space(0))) void *generic_ptr;
    return !__builtin_amdgcn_is_shared((generic_ptr)p) && !__builtin_amdgcn_is_private((generic_ptr)p);
#else
    return (void)p, 1;
#endif
}
#else
GPURMA_DEVICE unsigned gpurma_sh_lane(void)
{
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
GPURMA_DEVICE unsigned gpurma_sh_warp_threads(void) { return 32; }
GPURMA_DEVICE void gpurma_sh_sync_warp(void) { __syncwarp(); }
GPURMA_DEVICE int gpurma_sh_warp_any(int pred) { return __any_sync(0xffffffffu, pred); }
GPURMA_DEVICE void gpurma_sh_fence_release_system(void)
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}
GPURMA_DEVICE int gpurma_sh_proxy_readable(const void *p) { return __isGlobal(p); }
#endif
#else
/* On the host every address a pusher holds is the proxy's too. */
GPURMA_DEVICE int gpurma_sh_proxy_readable(const void *p) { return (void)p, 1; }
/* C11: a release fence makes the relaxed stores after it releases, and an
 * acquire one the relaxed loads before it acquires. */
GPURMA_DEVICE void gpurma_sh_fence_release_system(void)
{
    __atomic_thread_fence(__ATOMIC_ACQ_REL);
}
#endif

#if GPURMA_DEV_GPU
/* Fewer than 16 bytes between addresses congruent modulo 8 (or 4): the
 * widest naturally aligned moves, so that an 8-byte payload is one store. */
GPURMA_DEVICE void gpurma_sh__copy_congruent(char *d, const char *s, size_t n)
{
    while (n) {
        uintptr_t a = (uintptr_t)d | (uintptr_t)s;
        if (n >= 8 && !(a & 7)) {
            *(uint64_t *)d = *(const uint64_t *)s;
            d += 8, s += 8, n -= 8;
        } else if (n >= 4 && !(a & 3)) {
            *(uint32_t *)d = *(const uint32_t *)s;
            d += 4, s += 4, n -= 4;
        } else if (n >= 2 && !(a & 1)) {
            *(uint16_t *)d = *(const uint16_t *)s;
            d += 2, s += 2, n -= 2;
        } else {
            *d++ = *s++;
            n--;
        }
    }
}
#endif

/* Copies bytes with thread tid (< nthreads, checked by the callers) of a
 * caller-defined team; every team member must call it with the same
 * arguments. On a GPU, 16-byte vector moves carry the aligned middle; the
 * host uses memcpy on its share. */
GPURMA_DEVICE void gpurma_sh_copy(void *dst, const void *src, size_t bytes, unsigned tid,
                                  unsigned nthreads)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    /* A rank's put or get to itself may overlap source and destination:
     * then thread 0 moves it all as memmove does (front to back when the
     * destination is below the source, back to front otherwise), since
     * threads copying shares in parallel would read bytes already
     * overwritten. The group synchronizes after the call either way. */
    if ((uintptr_t)d - (uintptr_t)s < bytes || (uintptr_t)s - (uintptr_t)d < bytes) {
        if (tid != 0 || d == s)
            return;
#if GPURMA_DEV_GPU
        if (d < s)
            for (size_t i = 0; i < bytes; i++)
                d[i] = s[i];
        else
            for (size_t i = bytes; i-- > 0;)
                d[i] = s[i];
#else
        memmove(d, s, bytes);
#endif
        return;
    }
#if GPURMA_DEV_GPU
    unsigned congruence = (unsigned)(((uintptr_t)d ^ (uintptr_t)s) & 15);
    /* The widest move both addresses can share once d is aligned to it. */
    size_t w = congruence == 0 ? 16 : (congruence & 7) == 0 ? 8 : (congruence & 3) == 0 ? 4 : 1;
    if (w == 1) {
        for (size_t i = tid; i < bytes; i += nthreads)
            d[i] = s[i];
        return;
    }
    size_t head = (w - ((uintptr_t)d & (w - 1))) & (w - 1);
    if (head > bytes)
        head = bytes;
    size_t nbody = (bytes - head) / w;
    size_t done = head + nbody * w;
    /* Head and tail (less than w bytes each): one thread, widest moves. */
    if (tid == 0) {
        gpurma_sh__copy_congruent(d, s, head);
        gpurma_sh__copy_congruent(d + done, s + done, bytes - done);
    }
    if (w == 16) {
        const uint4 *vs = (const uint4 *)(s + head);
        uint4 *vd = (uint4 *)(d + head);
        for (size_t i = tid; i < nbody; i += nthreads)
            vd[i] = vs[i];
    } else if (w == 8) {
        const uint64_t *vs = (const uint64_t *)(s + head);
        uint64_t *vd = (uint64_t *)(d + head);
        for (size_t i = tid; i < nbody; i += nthreads)
            vd[i] = vs[i];
    } else {
        const uint32_t *vs = (const uint32_t *)(s + head);
        uint32_t *vd = (uint32_t *)(d + head);
        for (size_t i = tid; i < nbody; i += nthreads)
            vd[i] = vs[i];
    }
#else
    size_t share = gpurma_sh_div_ceil(bytes, nthreads);
    /* tid < nthreads, so tid * share < bytes + nthreads: no wrap */
    size_t begin = (size_t)tid * share;
    if (begin < bytes)
        memcpy(d + begin, s + begin, bytes - begin < share ? bytes - begin : share);
#endif
}

#endif /* GPURMA_DETAIL_DEV_SHIM_H */
