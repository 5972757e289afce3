/*
 * coll_bitwise.h - and, or and xor reductions (reduce and reducescatter),
 * and sum, prod, min and max of 16-bit integers, which gpurma's collectives
 * do not have: the layer's own, on its device barrier. Every member meets, reads each other member's source through a
 * load/store pointer (or a get where there is none), combines in place of
 * its own element, and meets again so that no source changes while a peer
 * still reads it. Host calls run the same code in a one-block kernel of the
 * calling unit (on the stream, or on the per-thread stream and waited for);
 * on the host backend the calling thread runs it.
 *
 * dest must not overlap the source (refused, naming the call): members
 * read each other's source while results are being written.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_COLL_BITWISE_H
#define GPURMA_NVSHMEM_DETAIL_COLL_BITWISE_H

#include "gpurma/nvshmem/detail/coll.h"
#include "gpurma/nvshmem/detail/stream.h"

/* X(NAME, TYPE): NVSHMEM's bitwise reduction types. */
#define GPURMA_NVSHMEMI_BITWISE_REDUCE_TYPES(X)                                             \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                 \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t)                \
    X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)                 \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)

/* An element of 1, 2, 4 or 8 bytes, zero-extended. */
GPURMA_NVSHMEMI_D uint64_t gpurma_nvshmemi__elem_load(const void *p, size_t esize)
{
    return esize == 8   ? *(const uint64_t *)p
           : esize == 4 ? *(const uint32_t *)p
           : esize == 2 ? *(const uint16_t *)p
                        : *(const uint8_t *)p;
}
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__elem_store(void *p, size_t esize, uint64_t v)
{
    if (esize == 8)
        *(uint64_t *)p = v;
    else if (esize == 4)
        *(uint32_t *)p = (uint32_t)v;
    else if (esize == 2)
        *(uint16_t *)p = (uint16_t)v;
    else
        *(uint8_t *)p = (uint8_t)v;
}

/* maxloc: pairs {value, index} of doubles; the larger value wins, and of
 * equal values the smaller index. Then the arithmetic ops on 16-bit
 * integers (sum and prod wrap, as in C on unsigned 16 bits; min and max
 * compare as the type's signedness says). */
enum {
    GPURMA_NVSHMEMI_MAXLOC = 100, GPURMA_NVSHMEMI_SUM16, GPURMA_NVSHMEMI_PROD16,
    GPURMA_NVSHMEMI_MIN16S, GPURMA_NVSHMEMI_MAX16S, GPURMA_NVSHMEMI_MIN16U, GPURMA_NVSHMEMI_MAX16U
};

/* acc op v for the and/or/xor and 16-bit codes (values zero-extended). */
GPURMA_NVSHMEMI_D uint64_t gpurma_nvshmemi__combine(int op, uint64_t acc, uint64_t v)
{
    int16_t sa = (int16_t)(uint16_t)acc, sv = (int16_t)(uint16_t)v;
    switch (op) {
    case GPURMA_NVSHMEMI_AMO_AND: return acc & v;
    case GPURMA_NVSHMEMI_AMO_OR: return acc | v;
    case GPURMA_NVSHMEMI_SUM16: return (uint16_t)(acc + v);
    case GPURMA_NVSHMEMI_PROD16: return (uint16_t)((uint32_t)acc * (uint32_t)v);
    case GPURMA_NVSHMEMI_MIN16S: return sv < sa ? v : acc;
    case GPURMA_NVSHMEMI_MAX16S: return sv > sa ? v : acc;
    case GPURMA_NVSHMEMI_MIN16U: return v < acc ? v : acc;
    case GPURMA_NVSHMEMI_MAX16U: return v > acc ? v : acc;
    default: return acc ^ v;
    }
}
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__maxloc_elems(const char *call, gpurma_nvshmemi_team_t t,
                                                     const char *src, char *dst, size_t nreduce,
                                                     unsigned tid, unsigned nthreads)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    for (size_t i = tid; i < nreduce; i += nthreads) {
        const char *at = src + i * 16;
        double best[2], v[2];
        memcpy(best, at, 16);
        for (int m = 0; m < t.size; m++) {
            int pe = t.start + m * t.stride;
            if (pe == s->my_pe)
                continue;
            const void *peer = gpurma_nvshmemi__ptr(at, pe);
            if (peer)
                memcpy(v, peer, 16);
            else
                gpurma_nvshmemi__get(call, v, at, 16, pe, 0);
            if (v[0] > best[0] || (v[0] == best[0] && v[1] < best[1]))
                best[0] = v[0], best[1] = v[1];
        }
        memcpy(dst + i * 16, best, 16);
    }
}

/* op: GPURMA_NVSHMEMI_AMO_AND, _OR or _XOR (amo.h), _MAXLOC or a 16-bit
 * code; scatter: reducescatter
 * (this member's block of nreduce elements of every member's source). */
GPURMA_NVSHMEMI_D int gpurma_nvshmemi__bitwise_reduce(const char *call, nvshmem_team_t team,
                                                      void *dest, const void *source,
                                                      size_t nreduce, size_t esize, int op,
                                                      int scatter, int scope)
{
    gpurma_nvshmemi__devpath(call);
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || s->teams[team].size <= 0 ||
        s->teams[team].my_pe < 0)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "invalid team, or this PE is not in it");
    gpurma_nvshmemi_team_t t = s->teams[team];
    size_t block = gpurma_nvshmemi__bytes(call, nreduce, esize);
    size_t src_bytes = gpurma_nvshmemi__bytes(call, block, scatter ? (size_t)t.size : 1);
    (void)gpurma_nvshmemi__offset(call, source, src_bytes, NULL);
    (void)gpurma_nvshmemi__offset(call, dest, block, NULL);
    const char *src = (const char *)source;
    char *dst = (char *)dest;
    if (block && (uintptr_t)dst < (uintptr_t)src + src_bytes &&
        (uintptr_t)src < (uintptr_t)dst + block)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              "dest overlaps source (not supported for and/or/xor reductions)");
    unsigned tid = 0, nthreads = 1;
#if GPURMA_NVSHMEMI_CUDA
    if (scope == GPURMA_NVSHMEMI_WARP) {
        tid = gpurma_sh_lane();
        nthreads = 32;
    } else if (scope == GPURMA_NVSHMEMI_BLOCK) {
        tid = gpurma_sh_block_tid();
        nthreads = gpurma_sh_block_threads();
    }
#endif
    /* Every member's source is complete once all have met. */
    if (scope == GPURMA_NVSHMEMI_THREAD)
        gpurma_nvshmemi__team_sync(call, team, 0);
    else
        gpurma_nvshmemi__team_sync_group(call, team, 0, scope);
    size_t first = scatter ? (size_t)t.my_pe * block : 0;
    if (op == GPURMA_NVSHMEMI_MAXLOC) {
        gpurma_nvshmemi__maxloc_elems(call, t, src + first, dst, nreduce, tid, nthreads);
        nreduce = 0; /* done */
    }
    for (size_t i = tid; i < nreduce; i += nthreads) {
        const char *at = src + first + i * esize;
        uint64_t acc = gpurma_nvshmemi__elem_load(at, esize);
        for (int m = 0; m < t.size; m++) {
            int pe = t.start + m * t.stride;
            if (pe == s->my_pe)
                continue;
            uint64_t v = 0;
            const void *peer = gpurma_nvshmemi__ptr(at, pe);
            if (peer)
                v = gpurma_nvshmemi__elem_load(peer, esize);
            else
                gpurma_nvshmemi__get(call, &v, at, esize, pe, 0);
            acc = gpurma_nvshmemi__combine(op, acc, v);
        }
        gpurma_nvshmemi__elem_store(dst + i * esize, esize, acc);
    }
    /* No member changes its source while another may still read it. */
    if (scope == GPURMA_NVSHMEMI_THREAD)
        gpurma_nvshmemi__team_sync(call, team, 0);
    else
        gpurma_nvshmemi__team_sync_group(call, team, 0, scope);
    return 0;
}

#if GPURMA_NVSHMEMI_CUDA
/* Host calls: one block. A failure inside names the family (device code
 * has no copy of the host call's name). */
static __global__ void gpurma_nvshmemi_bitwise_kernel(nvshmem_team_t team, void *dest,
                                                      const void *source, size_t nreduce,
                                                      size_t esize, int op, int scatter)
{
    gpurma_nvshmemi__bitwise_reduce("an and/or/xor reduction called from the host", team, dest,
                                    source, nreduce, esize, op, scatter, GPURMA_NVSHMEMI_BLOCK);
}
static __global__ void gpurma_nvshmemi_reduce16_kernel(nvshmem_team_t team, void *dest,
                                                       const void *source, size_t nreduce,
                                                       size_t esize, int op, int scatter)
{
    gpurma_nvshmemi__bitwise_reduce("a 16-bit sum/prod/min/max reduction called from the host",
                                    team, dest, source, nreduce, esize, op, scatter,
                                    GPURMA_NVSHMEMI_BLOCK);
}
#define GPURMA_NVSHMEMI_BITWISE_LAUNCH(call, team, d, s, n, esize, op, scatter, stream)      \
    do {                                                                                    \
        if (nvshmemx_init_status() < NVSHMEM_STATUS_IS_INITIALIZED)                         \
            gpurma_nvshmemi_fail(call, GPURMA_ERR_NOT_INITIALIZED,                          \
                                 "called before nvshmem_init");                             \
        if ((int)(op) > (int)GPURMA_NVSHMEMI_MAXLOC)                                        \
            gpurma_nvshmemi_reduce16_kernel<<<1, 256, 0, stream>>>(team, d, s, n, esize, op, \
                                                                   scatter);                \
        else                                                                                \
            gpurma_nvshmemi_bitwise_kernel<<<1, 256, 0, stream>>>(team, d, s, n, esize, op, \
                                                                  scatter);                 \
        gpurma_nvshmemi__launched(call);                                                    \
    } while (0)
#endif

#define GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, OPNAME, OP, KIND, SCATTER)                  \
    GPURMA_NVSHMEMI_HD int nvshmem_##NAME##_##OPNAME##_##KIND(nvshmem_team_t team, TYPE *dest, \
                                                             const TYPE *source,            \
                                                             size_t nreduce)                \
    {                                                                                       \
        GPURMA_NVSHMEMI_BITWISE_BODY("nvshmem_" #NAME "_" #OPNAME "_" #KIND, team, dest,    \
                                     source, nreduce, sizeof(TYPE), OP, SCATTER)            \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmemx_##NAME##_##OPNAME##_##KIND##_warp(                       \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce)                \
    {                                                                                       \
        return gpurma_nvshmemi__bitwise_reduce("nvshmemx_" #NAME "_" #OPNAME "_" #KIND "_warp", \
                                               team, dest, source, nreduce, sizeof(TYPE), OP, \
                                               SCATTER, GPURMA_NVSHMEMI_WARP);              \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmemx_##NAME##_##OPNAME##_##KIND##_block(                      \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce)                \
    {                                                                                       \
        return gpurma_nvshmemi__bitwise_reduce("nvshmemx_" #NAME "_" #OPNAME "_" #KIND "_block", \
                                               team, dest, source, nreduce, sizeof(TYPE), OP, \
                                               SCATTER, GPURMA_NVSHMEMI_BLOCK);             \
    }                                                                                       \
    GPURMA_NVSHMEMI_BITWISE_STREAM_DEF(NAME, TYPE, OPNAME, OP, KIND, SCATTER)

#if GPURMA_NVSHMEMI_DEVICE_PASS || !GPURMA_DEV_GPU
/* Device code, and plain C on the host backend: the calling thread. */
#define GPURMA_NVSHMEMI_BITWISE_BODY(call, team, d, s, n, esize, op, scatter)               \
    return gpurma_nvshmemi__bitwise_reduce(call, team, d, s, n, esize, op, scatter,         \
                                           GPURMA_NVSHMEMI_THREAD);
#else
/* Host code of a CUDA unit: a heap in host memory is reached from this
 * thread; a GPU heap by a kernel on the per-thread stream, waited for. */
#define GPURMA_NVSHMEMI_BITWISE_BODY(call, team, d, s, n, esize, op, scatter)               \
    GPURMA_NVSHMEMI_BITWISE_LAUNCH(call, team, d, s, n, esize, op, scatter,                 \
                                   cudaStreamPerThread);                                    \
    cudaError_t err_ = cudaStreamSynchronize(cudaStreamPerThread);                          \
    if (err_ != cudaSuccess)                                                                \
        gpurma_nvshmemi_fail(call, GPURMA_ERR_GPU, cudaGetErrorString(err_));               \
    return 0;
#endif

#if GPURMA_NVSHMEMI_CUDA
#define GPURMA_NVSHMEMI_BITWISE_STREAM_DEF(NAME, TYPE, OPNAME, OP, KIND, SCATTER)           \
    static inline int nvshmemx_##NAME##_##OPNAME##_##KIND##_on_stream(                      \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce,                \
        cudaStream_t stream)                                                                \
    {                                                                                       \
        GPURMA_NVSHMEMI_BITWISE_LAUNCH("nvshmemx_" #NAME "_" #OPNAME "_" #KIND "_on_stream", \
                                       team, dest, source, nreduce, sizeof(TYPE), OP,       \
                                       SCATTER, stream);                                    \
        return 0;                                                                           \
    }
#else
#define GPURMA_NVSHMEMI_BITWISE_STREAM_DEF(NAME, TYPE, OPNAME, OP, KIND, SCATTER)
#endif

#define GPURMA_NVSHMEMI_BITWISE_ALL(NAME, TYPE)                                             \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, and, GPURMA_NVSHMEMI_AMO_AND, reduce, 0)        \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, or, GPURMA_NVSHMEMI_AMO_OR, reduce, 0)          \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, xor, GPURMA_NVSHMEMI_AMO_XOR, reduce, 0)        \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, and, GPURMA_NVSHMEMI_AMO_AND, reducescatter, 1) \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, or, GPURMA_NVSHMEMI_AMO_OR, reducescatter, 1)   \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, xor, GPURMA_NVSHMEMI_AMO_XOR, reducescatter, 1)
GPURMA_NVSHMEMI_BITWISE_REDUCE_TYPES(GPURMA_NVSHMEMI_BITWISE_ALL)

/* X(NAME, TYPE, MIN, MAX): the 16-bit integer types of NVSHMEM's
 * arithmetic reductions, with their min and max codes. */
#define GPURMA_NVSHMEMI_REDUCE16_TYPES(X)                                                   \
    X(short, short, GPURMA_NVSHMEMI_MIN16S, GPURMA_NVSHMEMI_MAX16S)                         \
    X(int16, int16_t, GPURMA_NVSHMEMI_MIN16S, GPURMA_NVSHMEMI_MAX16S)                       \
    X(ushort, unsigned short, GPURMA_NVSHMEMI_MIN16U, GPURMA_NVSHMEMI_MAX16U)               \
    X(uint16, uint16_t, GPURMA_NVSHMEMI_MIN16U, GPURMA_NVSHMEMI_MAX16U)
#define GPURMA_NVSHMEMI_REDUCE16_ALL(NAME, TYPE, MIN, MAX)                                  \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, sum, GPURMA_NVSHMEMI_SUM16, reduce, 0)          \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, prod, GPURMA_NVSHMEMI_PROD16, reduce, 0)        \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, min, MIN, reduce, 0)                            \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, max, MAX, reduce, 0)                            \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, sum, GPURMA_NVSHMEMI_SUM16, reducescatter, 1)   \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, prod, GPURMA_NVSHMEMI_PROD16, reducescatter, 1) \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, min, MIN, reducescatter, 1)                     \
    GPURMA_NVSHMEMI_BITWISE_DEF(NAME, TYPE, max, MAX, reducescatter, 1)
GPURMA_NVSHMEMI_REDUCE16_TYPES(GPURMA_NVSHMEMI_REDUCE16_ALL)

#if GPURMA_NVSHMEMI_CUDA
/* NVSHMEM's one maxloc reduction: a block of a kernel. */
GPURMA_NVSHMEMI_D int nvshmemx_double2_maxloc_reduce_block(nvshmem_team_t team, double2 *dest,
                                                           const double2 *source, size_t nreduce)
{
    return gpurma_nvshmemi__bitwise_reduce("nvshmemx_double2_maxloc_reduce_block", team, dest,
                                           source, nreduce, sizeof(double2),
                                           GPURMA_NVSHMEMI_MAXLOC, 0, GPURMA_NVSHMEMI_BLOCK);
}
#endif

#endif
