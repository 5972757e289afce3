/*
 * coll.h - NVSHMEM collectives on teams, mapped onto gpurma's collectives
 * (gpurma_coll.h): reduce (sum, prod, min, max) as allreduce, reducescatter,
 * broadcast, fcollect as allgather, alltoall. Host calls block; the
 * _on_stream forms are stream-ordered (CUDA builds).
 *
 * Not provided, so that a program using them fails to compile naming the
 * call: and/or/xor reductions and reductions of 16-bit types (gpurma's
 * collectives have neither), and every collective in device code (gpurma
 * has no device collectives yet: calling one from a kernel is a "host
 * function called from a __device__ function" error naming it).
 */
#ifndef GPURMA_NVSHMEM_DETAIL_COLL_H
#define GPURMA_NVSHMEM_DETAIL_COLL_H

#include "gpurma/nvshmem/detail/prims.h"

/* X(NAME, TYPE, DTYPE): reduction types and their gpurma dtype. */
#define GPURMA_NVSHMEMI_REDUCE_TYPES(X)                                                     \
    X(char, char, ((char)-1 < 0 ? GPURMA_INT8 : GPURMA_UINT8)) X(schar, signed char, GPURMA_INT8) \
    X(int, int, GPURMA_INT32) X(long, long, GPURMA_NVSHMEMI_LONG_DTYPE)                     \
    X(longlong, long long, GPURMA_INT64) X(ptrdiff, ptrdiff_t, GPURMA_INT64)                \
    X(uchar, unsigned char, GPURMA_UINT8) X(uint, unsigned int, GPURMA_UINT32)              \
    X(ulong, unsigned long, GPURMA_NVSHMEMI_ULONG_DTYPE)                                    \
    X(ulonglong, unsigned long long, GPURMA_UINT64) X(int8, int8_t, GPURMA_INT8)            \
    X(int32, int32_t, GPURMA_INT32) X(int64, int64_t, GPURMA_INT64)                         \
    X(uint8, uint8_t, GPURMA_UINT8) X(uint32, uint32_t, GPURMA_UINT32)                      \
    X(uint64, uint64_t, GPURMA_UINT64) X(size, size_t, GPURMA_UINT64)                       \
    X(float, float, GPURMA_FLOAT32) X(double, double, GPURMA_FLOAT64)
#define GPURMA_NVSHMEMI_LONG_DTYPE  (sizeof(long) == 8 ? GPURMA_INT64 : GPURMA_INT32)
#define GPURMA_NVSHMEMI_ULONG_DTYPE (sizeof(long) == 8 ? GPURMA_UINT64 : GPURMA_UINT32)
/* X(OPNAME, REDOP) */
#define GPURMA_NVSHMEMI_REDUCE_OPS(X)                                                       \
    X(sum, GPURMA_SUM) X(prod, GPURMA_PROD) X(min, GPURMA_MIN) X(max, GPURMA_MAX)

#if GPURMA_NVSHMEMI_CUDA
/* Host-blocking collectives on a GPU heap run on the per-thread stream of
 * the program's CUDA runtime, and wait for it. */
static inline int gpurma_nvshmemi__coll_blocking(const char *call, int kind,
                                                 nvshmem_team_t team, void *dest,
                                                 const void *source, size_t count, int dtype,
                                                 int op, int root)
{
    int rc = gpurma_nvshmemi_coll(call, kind, team, dest, source, count, dtype, op, root,
                                  (void *)cudaStreamPerThread);
    cudaError_t err = cudaStreamSynchronize(cudaStreamPerThread);
    if (err != cudaSuccess)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_GPU, cudaGetErrorString(err));
    return rc;
}
#define GPURMA_NVSHMEMI_COLL_STREAM_ARG , cudaStream_t stream
#define GPURMA_NVSHMEMI_COLL_ON_STREAM(call, kind, team, d, s, n, dt, op, root)             \
    gpurma_nvshmemi_coll(call, kind, team, d, s, n, dt, op, root, (void *)stream)
#else
static inline int gpurma_nvshmemi__coll_blocking(const char *call, int kind,
                                                 nvshmem_team_t team, void *dest,
                                                 const void *source, size_t count, int dtype,
                                                 int op, int root)
{
    return gpurma_nvshmemi_coll(call, kind, team, dest, source, count, dtype, op, root, NULL);
}
#endif

#define GPURMA_NVSHMEMI_REDUCE_DEF(NAME, TYPE, DTYPE, OPNAME, REDOP)                        \
    static inline int nvshmem_##NAME##_##OPNAME##_reduce(nvshmem_team_t team, TYPE *dest,   \
                                                         const TYPE *source, size_t nreduce) \
    {                                                                                       \
        return gpurma_nvshmemi__coll_blocking("nvshmem_" #NAME "_" #OPNAME "_reduce",       \
                                              GPURMA_NVSHMEMI_COLL_ALLREDUCE, team, dest,   \
                                              source, nreduce, DTYPE, REDOP, 0);            \
    }                                                                                       \
    static inline int nvshmem_##NAME##_##OPNAME##_reducescatter(                            \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce)                \
    {                                                                                       \
        return gpurma_nvshmemi__coll_blocking("nvshmem_" #NAME "_" #OPNAME "_reducescatter", \
                                              GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER, team,    \
                                              dest, source, nreduce, DTYPE, REDOP, 0);      \
    }                                                                                       \
    GPURMA_NVSHMEMI_REDUCE_STREAM_DEF(NAME, TYPE, DTYPE, OPNAME, REDOP)

#if GPURMA_NVSHMEMI_CUDA
#define GPURMA_NVSHMEMI_REDUCE_STREAM_DEF(NAME, TYPE, DTYPE, OPNAME, REDOP)                 \
    static inline int nvshmemx_##NAME##_##OPNAME##_reduce_on_stream(                        \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce,                \
        cudaStream_t stream)                                                                \
    {                                                                                       \
        return gpurma_nvshmemi_coll("nvshmemx_" #NAME "_" #OPNAME "_reduce_on_stream",      \
                                    GPURMA_NVSHMEMI_COLL_ALLREDUCE, team, dest, source,     \
                                    nreduce, DTYPE, REDOP, 0, (void *)stream);              \
    }                                                                                       \
    static inline int nvshmemx_##NAME##_##OPNAME##_reducescatter_on_stream(                 \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce,                \
        cudaStream_t stream)                                                                \
    {                                                                                       \
        return gpurma_nvshmemi_coll("nvshmemx_" #NAME "_" #OPNAME "_reducescatter_on_stream", \
                                    GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER, team, dest, source, \
                                    nreduce, DTYPE, REDOP, 0, (void *)stream);              \
    }
#else
#define GPURMA_NVSHMEMI_REDUCE_STREAM_DEF(NAME, TYPE, DTYPE, OPNAME, REDOP)
#endif

#define GPURMA_NVSHMEMI_REDUCE_OP_SUM(NAME, TYPE, DTYPE)                                    \
    GPURMA_NVSHMEMI_REDUCE_DEF(NAME, TYPE, DTYPE, sum, GPURMA_SUM)                          \
    GPURMA_NVSHMEMI_REDUCE_DEF(NAME, TYPE, DTYPE, prod, GPURMA_PROD)                        \
    GPURMA_NVSHMEMI_REDUCE_DEF(NAME, TYPE, DTYPE, min, GPURMA_MIN)                          \
    GPURMA_NVSHMEMI_REDUCE_DEF(NAME, TYPE, DTYPE, max, GPURMA_MAX)
GPURMA_NVSHMEMI_REDUCE_TYPES(GPURMA_NVSHMEMI_REDUCE_OP_SUM)

/* Data movement: bytes, whatever the type. BASE is the typed stem
 * (nvshmem_int_broadcast) or the mem one (nvshmem_broadcastmem). */
#define GPURMA_NVSHMEMI_MOVE_DEFS(NAME_BCAST, NAME_FCOLLECT, NAME_ALLTOALL, XBCAST, XFCOLLECT, \
                                  XALLTOALL, TYPE, ESIZE)                                   \
    static inline int NAME_BCAST(nvshmem_team_t team, TYPE *dest, const TYPE *source,       \
                                 size_t nelems, int PE_root)                                \
    {                                                                                       \
        return gpurma_nvshmemi__coll_blocking(#NAME_BCAST, GPURMA_NVSHMEMI_COLL_BROADCAST,  \
                                              team, dest, source,                           \
                                              gpurma_nvshmemi__bytes(#NAME_BCAST, nelems,   \
                                                                     ESIZE),                \
                                              GPURMA_UINT8, 0, PE_root);                    \
    }                                                                                       \
    static inline int NAME_FCOLLECT(nvshmem_team_t team, TYPE *dest, const TYPE *source,    \
                                    size_t nelems)                                          \
    {                                                                                       \
        return gpurma_nvshmemi__coll_blocking(                                              \
            #NAME_FCOLLECT, GPURMA_NVSHMEMI_COLL_ALLGATHER, team, dest, source,             \
            gpurma_nvshmemi__bytes(#NAME_FCOLLECT, nelems, ESIZE), GPURMA_UINT8, 0, 0);     \
    }                                                                                       \
    static inline int NAME_ALLTOALL(nvshmem_team_t team, TYPE *dest, const TYPE *source,    \
                                    size_t nelems)                                          \
    {                                                                                       \
        return gpurma_nvshmemi__coll_blocking(                                              \
            #NAME_ALLTOALL, GPURMA_NVSHMEMI_COLL_ALLTOALL, team, dest, source,              \
            gpurma_nvshmemi__bytes(#NAME_ALLTOALL, nelems, ESIZE), GPURMA_UINT8, 0, 0);     \
    }                                                                                       \
    GPURMA_NVSHMEMI_MOVE_STREAM_DEFS(XBCAST, XFCOLLECT, XALLTOALL, TYPE, ESIZE)

#if GPURMA_NVSHMEMI_CUDA
#define GPURMA_NVSHMEMI_MOVE_STREAM_DEFS(XBCAST, XFCOLLECT, XALLTOALL, TYPE, ESIZE)         \
    static inline int XBCAST##_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                         size_t nelems, int PE_root, cudaStream_t stream)   \
    {                                                                                       \
        return gpurma_nvshmemi_coll(#XBCAST "_on_stream", GPURMA_NVSHMEMI_COLL_BROADCAST,   \
                                    team, dest, source,                                     \
                                    gpurma_nvshmemi__bytes(#XBCAST, nelems, ESIZE),         \
                                    GPURMA_UINT8, 0, PE_root, (void *)stream);              \
    }                                                                                       \
    static inline int XFCOLLECT##_on_stream(nvshmem_team_t team, TYPE *dest,                \
                                            const TYPE *source, size_t nelems,              \
                                            cudaStream_t stream)                            \
    {                                                                                       \
        return gpurma_nvshmemi_coll(#XFCOLLECT "_on_stream", GPURMA_NVSHMEMI_COLL_ALLGATHER, \
                                    team, dest, source,                                     \
                                    gpurma_nvshmemi__bytes(#XFCOLLECT, nelems, ESIZE),      \
                                    GPURMA_UINT8, 0, 0, (void *)stream);                    \
    }                                                                                       \
    static inline int XALLTOALL##_on_stream(nvshmem_team_t team, TYPE *dest,                \
                                            const TYPE *source, size_t nelems,              \
                                            cudaStream_t stream)                            \
    {                                                                                       \
        return gpurma_nvshmemi_coll(#XALLTOALL "_on_stream", GPURMA_NVSHMEMI_COLL_ALLTOALL, \
                                    team, dest, source,                                     \
                                    gpurma_nvshmemi__bytes(#XALLTOALL, nelems, ESIZE),      \
                                    GPURMA_UINT8, 0, 0, (void *)stream);                    \
    }
#else
#define GPURMA_NVSHMEMI_MOVE_STREAM_DEFS(XBCAST, XFCOLLECT, XALLTOALL, TYPE, ESIZE)
#endif

#define GPURMA_NVSHMEMI_MOVE_TYPED(NAME, TYPE)                                              \
    GPURMA_NVSHMEMI_MOVE_DEFS(nvshmem_##NAME##_broadcast, nvshmem_##NAME##_fcollect,        \
                              nvshmem_##NAME##_alltoall, nvshmemx_##NAME##_broadcast,       \
                              nvshmemx_##NAME##_fcollect, nvshmemx_##NAME##_alltoall, TYPE, \
                              sizeof(TYPE))
GPURMA_NVSHMEMI_RMA_TYPES(GPURMA_NVSHMEMI_MOVE_TYPED)
GPURMA_NVSHMEMI_MOVE_DEFS(nvshmem_broadcastmem, nvshmem_fcollectmem, nvshmem_alltoallmem,
                          nvshmemx_broadcastmem, nvshmemx_fcollectmem, nvshmemx_alltoallmem,
                          void, 1)

#endif
