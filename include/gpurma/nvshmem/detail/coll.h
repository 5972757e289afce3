/*
 * coll.h - NVSHMEM collectives on teams, mapped onto gpurma's collectives
 * (gpurma_coll.h): reduce (sum, prod, min, max) as allreduce, reducescatter,
 * broadcast, fcollect as allgather, alltoall. Host calls block; the
 * _on_stream forms are stream-ordered (CUDA builds).
 *
 * In device code (and in plain C on the host backend) they run gpurma's
 * device collectives (gpurma_coll_device.h) on the team's handle, with
 * _warp and _block forms; a gpurma without that header has none, and then
 * calling one from a kernel is a "host function called from a __device__
 * function" error naming the call, and the _warp/_block forms are
 * undeclared.
 *
 * and/or/xor reductions and the arithmetic ones of 16-bit integers, which
 * gpurma's collectives do not have, are the layer's own (coll_bitwise.h).
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
    X(float, float, GPURMA_FLOAT32) X(double, double, GPURMA_FLOAT64)                    \
    GPURMA_NVSHMEMI_REDUCE_FLOAT16_TYPES(X)
#if (defined(__CUDACC__) && !defined(__HIPCC__)) || GPURMA_NVSHMEMI_CUDA_HOST
#define GPURMA_NVSHMEMI_REDUCE_FLOAT16_TYPES(X)                                             \
    X(half, half, GPURMA_FLOAT16) X(bfloat16, __nv_bfloat16, GPURMA_BFLOAT16)
#else
#define GPURMA_NVSHMEMI_REDUCE_FLOAT16_TYPES(X)
#endif
#define GPURMA_NVSHMEMI_LONG_DTYPE  (sizeof(long) == 8 ? GPURMA_INT64 : GPURMA_INT32)
#define GPURMA_NVSHMEMI_ULONG_DTYPE (sizeof(long) == 8 ? GPURMA_UINT64 : GPURMA_UINT32)
/* X(OPNAME, REDOP) */
#define GPURMA_NVSHMEMI_REDUCE_OPS(X)                                                       \
    X(sum, GPURMA_SUM) X(prod, GPURMA_PROD) X(min, GPURMA_MIN) X(max, GPURMA_MAX)

#if GPURMA_NVSHMEMI_STREAMS
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

/* Host-and-device collectives; the device path runs gpurma's device
 * collective of the team's handle (kept in the heap, see types.h). */
#define GPURMA_NVSHMEMI_COLL_FN GPURMA_NVSHMEMI_HD
enum { GPURMA_NVSHMEMI_THREAD = 0 };

#if GPURMA_NVSHMEMI_CUDA
#define GPURMA_NVSHMEMI__DCOLL(fn, scope, ...)                                              \
    ((scope) == GPURMA_NVSHMEMI_WARP    ? fn##_warp(__VA_ARGS__)                            \
     : (scope) == GPURMA_NVSHMEMI_BLOCK ? fn##_block(__VA_ARGS__)                           \
                                        : fn(__VA_ARGS__))
#else
#define GPURMA_NVSHMEMI__DCOLL(fn, scope, ...) fn(__VA_ARGS__)
#endif

GPURMA_NVSHMEMI_D int gpurma_nvshmemi__dcoll(const char *call, int kind, nvshmem_team_t team,
                                             void *dest, const void *source, size_t count,
                                             int dtype, int op, int root, int scope)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || s->teams[team].my_pe < 0)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              "invalid team, or this PE is not in it");
    gpurma_dev_coll_t c = ((const gpurma_dev_coll_t *)(s->heap_base + s->colls_off))[team];
    gpurma_dtype_t dt = (gpurma_dtype_t)dtype;
    gpurma_redop_t ro = (gpurma_redop_t)op;
    gpurma_status_t rc;
    /* The device collectives trust their sizes: both buffers, one block or
     * one per member (source of reducescatter and alltoall, dest of
     * fcollect and alltoall), must lie in the heap. */
    size_t n = (size_t)s->teams[team].size;
    size_t block_bytes = gpurma_nvshmemi__bytes(call, count, gpurma_dev_dtype_size(dt));
    int src_per_member = kind == GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER ||
                         kind == GPURMA_NVSHMEMI_COLL_ALLTOALL;
    int dst_per_member = kind == GPURMA_NVSHMEMI_COLL_ALLGATHER ||
                         kind == GPURMA_NVSHMEMI_COLL_ALLTOALL;
    (void)gpurma_nvshmemi__offset(call, source,
                                  gpurma_nvshmemi__bytes(call, block_bytes,
                                                         src_per_member ? n : 1),
                                  NULL);
    (void)gpurma_nvshmemi__offset(call, dest,
                                  gpurma_nvshmemi__bytes(call, block_bytes,
                                                         dst_per_member ? n : 1),
                                  NULL);
    switch (kind) {
    case GPURMA_NVSHMEMI_COLL_ALLREDUCE:
        rc = GPURMA_NVSHMEMI__DCOLL(gpurma_dev_coll_allreduce, scope, c, dest, source, count, dt,
                                    ro);
        break;
    case GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER:
        rc = GPURMA_NVSHMEMI__DCOLL(gpurma_dev_coll_reduce_scatter, scope, c, dest, source,
                                    count, dt, ro);
        break;
    case GPURMA_NVSHMEMI_COLL_BROADCAST:
        rc = GPURMA_NVSHMEMI__DCOLL(gpurma_dev_coll_broadcast, scope, c, dest, source, count, dt,
                                    root);
        break;
    case GPURMA_NVSHMEMI_COLL_ALLGATHER:
        rc = GPURMA_NVSHMEMI__DCOLL(gpurma_dev_coll_allgather, scope, c, dest, source, count,
                                    dt);
        break;
    default:
        rc = GPURMA_NVSHMEMI__DCOLL(gpurma_dev_coll_alltoall, scope, c, dest, source, count, dt);
        break;
    }
    gpurma_nvshmemi__check(call, rc);
    return 0;
}

/* The body of a host-and-device collective. */
#define GPURMA_NVSHMEMI_COLL_BODY(call, kind, team, d, s, n, dt, op, root)                  \
    GPURMA_NVSHMEMI_COLL_DEVICE(call, kind, team, d, s, n, dt, op, root)                    \
    GPURMA_NVSHMEMI_COLL_HOST(call, kind, team, d, s, n, dt, op, root)
#if GPURMA_NVSHMEMI_HAS_DEVPATH
#define GPURMA_NVSHMEMI_COLL_DEVICE(call, kind, team, d, s, n, dt, op, root)                \
    if (gpurma_nvshmemi__devpath(call))                                                     \
        return gpurma_nvshmemi__dcoll(call, kind, team, d, s, n, dt, op, root,              \
                                      GPURMA_NVSHMEMI_THREAD);
#else
#define GPURMA_NVSHMEMI_COLL_DEVICE(call, kind, team, d, s, n, dt, op, root)
#endif
#if GPURMA_NVSHMEMI_DEVICE_PASS
#define GPURMA_NVSHMEMI_COLL_HOST(call, kind, team, d, s, n, dt, op, root) return 0;
#else
#define GPURMA_NVSHMEMI_COLL_HOST(call, kind, team, d, s, n, dt, op, root)                  \
    return gpurma_nvshmemi__coll_blocking(call, kind, team, d, s, n, dt, op, root);
#endif

/* _warp and _block forms (the whole group calls, with the same arguments). */
#define GPURMA_NVSHMEMI_COLL_GROUP(FN, ARGS, call, kind, team, d, s, n, dt, op, root)       \
    GPURMA_NVSHMEMI_D int FN##_warp ARGS                                                    \
    {                                                                                       \
        gpurma_nvshmemi__devpath(call "_warp");                                             \
        return gpurma_nvshmemi__dcoll(call "_warp", kind, team, d, s, n, dt, op, root,      \
                                      GPURMA_NVSHMEMI_WARP);                                \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int FN##_block ARGS                                                   \
    {                                                                                       \
        gpurma_nvshmemi__devpath(call "_block");                                            \
        return gpurma_nvshmemi__dcoll(call "_block", kind, team, d, s, n, dt, op, root,     \
                                      GPURMA_NVSHMEMI_BLOCK);                               \
    }

#define GPURMA_NVSHMEMI_REDUCE_DEF(NAME, TYPE, DTYPE, OPNAME, REDOP)                        \
    GPURMA_NVSHMEMI_COLL_FN int nvshmem_##NAME##_##OPNAME##_reduce(                         \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce)                \
    {                                                                                       \
        GPURMA_NVSHMEMI_COLL_BODY("nvshmem_" #NAME "_" #OPNAME "_reduce",                   \
                                  GPURMA_NVSHMEMI_COLL_ALLREDUCE, team, dest, source,       \
                                  nreduce, DTYPE, REDOP, 0)                                 \
    }                                                                                       \
    GPURMA_NVSHMEMI_COLL_FN int nvshmem_##NAME##_##OPNAME##_reducescatter(                  \
        nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce)                \
    {                                                                                       \
        GPURMA_NVSHMEMI_COLL_BODY("nvshmem_" #NAME "_" #OPNAME "_reducescatter",            \
                                  GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER, team, dest, source,  \
                                  nreduce, DTYPE, REDOP, 0)                                 \
    }                                                                                       \
    GPURMA_NVSHMEMI_COLL_GROUP(nvshmemx_##NAME##_##OPNAME##_reduce,                         \
                               (nvshmem_team_t team, TYPE *dest, const TYPE *source,        \
                                size_t nreduce),                                            \
                               "nvshmemx_" #NAME "_" #OPNAME "_reduce",                     \
                               GPURMA_NVSHMEMI_COLL_ALLREDUCE, team, dest, source, nreduce, \
                               DTYPE, REDOP, 0)                                             \
    GPURMA_NVSHMEMI_COLL_GROUP(nvshmemx_##NAME##_##OPNAME##_reducescatter,                  \
                               (nvshmem_team_t team, TYPE *dest, const TYPE *source,        \
                                size_t nreduce),                                            \
                               "nvshmemx_" #NAME "_" #OPNAME "_reducescatter",              \
                               GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER, team, dest, source,     \
                               nreduce, DTYPE, REDOP, 0)                                    \
    GPURMA_NVSHMEMI_REDUCE_STREAM_DEF(NAME, TYPE, DTYPE, OPNAME, REDOP)

#if GPURMA_NVSHMEMI_STREAMS
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
    GPURMA_NVSHMEMI_COLL_FN int NAME_BCAST(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                           size_t nelems, int PE_root)                      \
    {                                                                                       \
        GPURMA_NVSHMEMI_COLL_BODY(#NAME_BCAST, GPURMA_NVSHMEMI_COLL_BROADCAST, team, dest,  \
                                  source, gpurma_nvshmemi__bytes(#NAME_BCAST, nelems, ESIZE), \
                                  GPURMA_UINT8, 0, PE_root)                                 \
    }                                                                                       \
    GPURMA_NVSHMEMI_COLL_FN int NAME_FCOLLECT(nvshmem_team_t team, TYPE *dest,              \
                                              const TYPE *source, size_t nelems)            \
    {                                                                                       \
        GPURMA_NVSHMEMI_COLL_BODY(#NAME_FCOLLECT, GPURMA_NVSHMEMI_COLL_ALLGATHER, team, dest, \
                                  source, gpurma_nvshmemi__bytes(#NAME_FCOLLECT, nelems, ESIZE), \
                                  GPURMA_UINT8, 0, 0)                                       \
    }                                                                                       \
    GPURMA_NVSHMEMI_COLL_FN int NAME_ALLTOALL(nvshmem_team_t team, TYPE *dest,              \
                                              const TYPE *source, size_t nelems)            \
    {                                                                                       \
        GPURMA_NVSHMEMI_COLL_BODY(#NAME_ALLTOALL, GPURMA_NVSHMEMI_COLL_ALLTOALL, team, dest, \
                                  source, gpurma_nvshmemi__bytes(#NAME_ALLTOALL, nelems, ESIZE), \
                                  GPURMA_UINT8, 0, 0)                                       \
    }                                                                                       \
    GPURMA_NVSHMEMI_COLL_GROUP(XBCAST,                                                      \
                               (nvshmem_team_t team, TYPE *dest, const TYPE *source,        \
                                size_t nelems, int PE_root),                                \
                               #XBCAST, GPURMA_NVSHMEMI_COLL_BROADCAST, team, dest, source, \
                               gpurma_nvshmemi__bytes(#XBCAST, nelems, ESIZE), GPURMA_UINT8, \
                               0, PE_root)                                                  \
    GPURMA_NVSHMEMI_COLL_GROUP(XFCOLLECT,                                                   \
                               (nvshmem_team_t team, TYPE *dest, const TYPE *source,        \
                                size_t nelems),                                             \
                               #XFCOLLECT, GPURMA_NVSHMEMI_COLL_ALLGATHER, team, dest, source, \
                               gpurma_nvshmemi__bytes(#XFCOLLECT, nelems, ESIZE),           \
                               GPURMA_UINT8, 0, 0)                                          \
    GPURMA_NVSHMEMI_COLL_GROUP(XALLTOALL,                                                   \
                               (nvshmem_team_t team, TYPE *dest, const TYPE *source,        \
                                size_t nelems),                                             \
                               #XALLTOALL, GPURMA_NVSHMEMI_COLL_ALLTOALL, team, dest, source, \
                               gpurma_nvshmemi__bytes(#XALLTOALL, nelems, ESIZE),           \
                               GPURMA_UINT8, 0, 0)                                          \
    GPURMA_NVSHMEMI_MOVE_STREAM_DEFS(XBCAST, XFCOLLECT, XALLTOALL, TYPE, ESIZE)

#if GPURMA_NVSHMEMI_STREAMS
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
