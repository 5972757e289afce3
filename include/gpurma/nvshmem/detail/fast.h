/*
 * fast.h - the path every RMA, atomic and signal call tries first: an
 * address in the part of the heap nvshmem_malloc hands out, on a PE whose
 * heap this processor maps. The bounds check and the peer's address come
 * from the unit's state alone (two compares and one indexed load of the
 * state, no peer table, no segment search, no asm the compiler must keep
 * in place), so that a loop of calls costs what NVSHMEM's does and a loop
 * whose arguments do not change gets its setup hoisted. Anything else
 * (heap segments past the first, PEs on the port engine or past
 * GPURMA_NVSHMEMI_DIRECT_PES, bad addresses and PEs) returns NULL here and
 * takes prims.h's general path, which checks everything and reports.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_FAST_H
#define GPURMA_NVSHMEM_DETAIL_FAST_H

#include "gpurma/nvshmem/detail/direct.h"

/* Device code the fast path never runs (failures, PEs behind the port
 * engine, heap segments, unaligned copies): out of line, so that a call
 * inlines its fast path alone and a kernel's loop of them keeps a small
 * body (and few registers: block forms run in blocks of 1024 threads),
 * instead of every call's general path inline. Plain C keeps them inline. */
#if GPURMA_NVSHMEMI_CUDA
#define GPURMA_NVSHMEMI_COLD static __device__ __noinline__ __attribute__((unused))
#define GPURMA_NVSHMEMI_HD_COLD static __host__ __device__ __noinline__ __attribute__((unused))
#else
#define GPURMA_NVSHMEMI_COLD static inline
#define GPURMA_NVSHMEMI_HD_COLD static inline
#endif

/* In device code, p as a pointer the compiler knows is global memory (a
 * peer's heap is device memory): loads and stores through it are global
 * ones, and an atomic whose result the program drops is a global one,
 * which ptxas turns into a RED that waits for no reply. */
GPURMA_NVSHMEMI_D char *gpurma_nvshmemi__global(char *p)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    return (char *)__cvta_global_to_generic(__cvta_generic_to_global(p));
#else
    return p;
#endif
}

/* pe's copy of [addr, addr + bytes), as this processor maps it, when that
 * range lies in the program's part of the heap and pe is in the state's
 * table; else NULL. The state of a unit the library has not filled (or
 * has emptied at finalize) has no table, so this is NULL there too. */
GPURMA_NVSHMEMI_D char *gpurma_nvshmemi__heap_peer(const void *addr, size_t bytes, int pe)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    if (!s->heap_host) /* plain C beside a GPU heap: the library's calls */
        return NULL;
#endif
    uint64_t off = (uint64_t)((uintptr_t)addr - (uintptr_t)s->user_base);
    char *peer = (unsigned)pe < GPURMA_NVSHMEMI_DIRECT_PES ? s->heap_peers[pe] : NULL;
    /* off + bytes <= user_size without wrapping; with bytes a constant
     * (p, g, atomics, signals) the first test and user_size - bytes are
     * the same for every call, which leaves one compare per call. */
    if (!peer || bytes > s->user_size || off > s->user_size - bytes)
        return NULL;
    return gpurma_nvshmemi__global(peer + off);
}

GPURMA_NVSHMEMI_COLD void gpurma_nvshmemi__copy_general(void *to, const void *from, size_t bytes,
                                                        unsigned tid, unsigned nthreads)
{
    gpurma_sh_copy(to, from, bytes, tid, nthreads);
}

/* A copy shared by thread tid of a group of nthreads (1 for one thread).
 * In device code, 16-byte aligned buffers that do not overlap (every
 * nvshmem_malloc'd one) move as 16-byte vectors; with deep (a constant:
 * one thread, a warp) each thread keeps four loads in flight before their
 * stores, so that a warp or a lone thread copying megabytes waits for
 * memory once per four vectors instead of once per vector. A block has
 * enough threads in flight without, and keeps the registers: its kernels
 * run 1024 threads, which leaves 64 registers a thread. The rest is
 * gpurma's general copy (any alignment, overlap). */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__copy(void *to, const void *from, size_t bytes,
                                             unsigned tid, unsigned nthreads, int deep)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    uintptr_t d = (uintptr_t)to, s = (uintptr_t)from;
    if (!((d | s) & 15) && d - s >= bytes && s - d >= bytes) {
        const uint4 *vs = (const uint4 *)from;
        uint4 *vd = (uint4 *)to;
        size_t n = bytes >> 4, i = tid, step = nthreads;
#pragma unroll 1
        for (; deep && i + 3 * step < n; i += 4 * step) {
            uint4 a = vs[i], b = vs[i + step], c = vs[i + 2 * step], e = vs[i + 3 * step];
            vd[i] = a;
            vd[i + step] = b;
            vd[i + 2 * step] = c;
            vd[i + 3 * step] = e;
        }
#pragma unroll 1
        for (; i < n; i += step)
            vd[i] = vs[i];
        size_t rest = bytes & 15;
        if (rest && tid == 0) { /* the last rest bytes, 16-byte aligned: widest moves */
            char *dt = (char *)to + (bytes - rest);
            const char *st = (const char *)from + (bytes - rest);
            if (rest & 8) {
                *(uint64_t *)dt = *(const uint64_t *)st;
                dt += 8, st += 8;
            }
            if (rest & 4) {
                *(uint32_t *)dt = *(const uint32_t *)st;
                dt += 4, st += 4;
            }
            if (rest & 2) {
                *(uint16_t *)dt = *(const uint16_t *)st;
                dt += 2, st += 2;
            }
            if (rest & 1)
                *dt = *st;
        }
        return;
    }
#endif
    gpurma_nvshmemi__copy_general(to, from, bytes, tid, nthreads);
}

#endif
