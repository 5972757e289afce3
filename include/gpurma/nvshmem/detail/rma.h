/*
 * rma.h - put, get, p, g, iput, iget and their nbi, warp, block and
 * on-stream forms, for every standard type, the sized forms and the mem
 * (byte) forms; each a line over the primitives of prims.h.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_RMA_H
#define GPURMA_NVSHMEM_DETAIL_RMA_H

#include "gpurma/nvshmem/detail/prims.h"

/* The forms shared by a typed name (nvshmem_int_put) and a sized one
 * (nvshmem_put32): PUT/GET are the full names of the blocking
 * calls, XPUT/XGET their nvshmemx_ stems (nvshmemx_int_put, nvshmemx_put32);
 * TYPE the element type (void for sized forms), ESIZE its bytes. */
#define GPURMA_NVSHMEMI_RMA_ARRAY(PUT, GET, XPUT, XGET, TYPE, ESIZE)                        \
    GPURMA_NVSHMEMI_HD void PUT(TYPE *dest, const TYPE *source, size_t nelems, int pe)      \
    {                                                                                       \
        gpurma_nvshmemi__put(#PUT, dest, source,                                            \
                             gpurma_nvshmemi__bytes(#PUT, nelems, ESIZE), pe, 0);           \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void GET(TYPE *dest, const TYPE *source, size_t nelems, int pe)      \
    {                                                                                       \
        gpurma_nvshmemi__get(#GET, dest, source,                                            \
                             gpurma_nvshmemi__bytes(#GET, nelems, ESIZE), pe, 0);           \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void PUT##_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe) \
    {                                                                                       \
        gpurma_nvshmemi__put(#PUT "_nbi", dest, source,                                     \
                             gpurma_nvshmemi__bytes(#PUT, nelems, ESIZE), pe, 1);           \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void GET##_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe) \
    {                                                                                       \
        gpurma_nvshmemi__get(#GET "_nbi", dest, source,                                     \
                             gpurma_nvshmemi__bytes(#GET, nelems, ESIZE), pe, 1);           \
    }                                                                                       \
    GPURMA_NVSHMEMI_RMA_GROUP(XPUT, XGET, TYPE, ESIZE, warp, GPURMA_NVSHMEMI_WARP)          \
    GPURMA_NVSHMEMI_RMA_GROUP(XPUT, XGET, TYPE, ESIZE, block, GPURMA_NVSHMEMI_BLOCK)        \
    GPURMA_NVSHMEMI_RMA_STREAM(XPUT, XGET, TYPE, ESIZE)

#define GPURMA_NVSHMEMI_RMA_GROUP(XPUT, XGET, TYPE, ESIZE, SCOPE, S)                        \
    GPURMA_NVSHMEMI_D void XPUT##_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems,    \
                                          int pe)                                           \
    {                                                                                       \
        gpurma_nvshmemi__rma_group(#XPUT "_" #SCOPE, 0, dest, source,                       \
                                   gpurma_nvshmemi__bytes(#XPUT, nelems, ESIZE), pe,        \
                                   0, S);                                                   \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void XGET##_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems,    \
                                          int pe)                                           \
    {                                                                                       \
        gpurma_nvshmemi__rma_group(#XGET "_" #SCOPE, 1, dest, source,                       \
                                   gpurma_nvshmemi__bytes(#XGET, nelems, ESIZE), pe,        \
                                   0, S);                                                   \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void XPUT##_nbi_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, \
                                              int pe)                                       \
    {                                                                                       \
        gpurma_nvshmemi__rma_group(#XPUT "_nbi_" #SCOPE, 0, dest, source,                   \
                                   gpurma_nvshmemi__bytes(#XPUT, nelems, ESIZE), pe,        \
                                   1, S);                                                   \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void XGET##_nbi_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, \
                                              int pe)                                       \
    {                                                                                       \
        gpurma_nvshmemi__rma_group(#XGET "_nbi_" #SCOPE, 1, dest, source,                   \
                                   gpurma_nvshmemi__bytes(#XGET, nelems, ESIZE), pe,        \
                                   1, S);                                                   \
    }

/* Strided forms; strides in elements. */
#define GPURMA_NVSHMEMI_RMA_STRIDED(IPUT, IGET, TYPE, ESIZE)                                \
    GPURMA_NVSHMEMI_HD void IPUT(TYPE *dest, const TYPE *source, ptrdiff_t dst,             \
                                 ptrdiff_t sst, size_t nelems, int pe)                      \
    {                                                                                       \
        gpurma_nvshmemi__iput(#IPUT, dest, source, dst, sst, nelems, ESIZE, pe);            \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void IGET(TYPE *dest, const TYPE *source, ptrdiff_t dst,             \
                                 ptrdiff_t sst, size_t nelems, int pe)                      \
    {                                                                                       \
        gpurma_nvshmemi__iget(#IGET, dest, source, dst, sst, nelems, ESIZE, pe);            \
    }

/* Host calls ordered on a CUDA stream (CUDA builds only: they take a
 * cudaStream_t). The nbi forms are the same calls: stream order already
 * makes them asynchronous to the host. */
#if GPURMA_NVSHMEMI_STREAMS
#define GPURMA_NVSHMEMI_RMA_STREAM(XPUT, XGET, TYPE, ESIZE)                                 \
    static inline void XPUT##_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe, \
                                        cudaStream_t stream)                                \
    {                                                                                       \
        gpurma_nvshmemi_put_on_stream(#XPUT "_on_stream", dest, source,                     \
                                      gpurma_nvshmemi__bytes(#XPUT, nelems, ESIZE),         \
                                      pe, (void *)stream);                                  \
    }                                                                                       \
    static inline void XGET##_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe, \
                                        cudaStream_t stream)                                \
    {                                                                                       \
        gpurma_nvshmemi_get_on_stream(#XGET "_on_stream", dest, source,                     \
                                      gpurma_nvshmemi__bytes(#XGET, nelems, ESIZE),         \
                                      pe, (void *)stream);                                  \
    }                                                                                       \
    static inline void XPUT##_nbi_on_stream(TYPE *dest, const TYPE *source, size_t nelems,  \
                                            int pe, cudaStream_t stream)                    \
    {                                                                                       \
        XPUT##_on_stream(dest, source, nelems, pe, stream);                                 \
    }                                                                                       \
    static inline void XGET##_nbi_on_stream(TYPE *dest, const TYPE *source, size_t nelems,  \
                                            int pe, cudaStream_t stream)                    \
    {                                                                                       \
        XGET##_on_stream(dest, source, nelems, pe, stream);                                 \
    }
#else
#define GPURMA_NVSHMEMI_RMA_STREAM(XPUT, XGET, TYPE, ESIZE)
#endif

/* ------------------------------------------------------------ typed forms */

#define GPURMA_NVSHMEMI_RMA_TYPED(NAME, TYPE)                                               \
    GPURMA_NVSHMEMI_HD void nvshmem_##NAME##_p(TYPE *dest, TYPE value, int pe)              \
    {                                                                                       \
        uint64_t bits = 0;                                                                  \
        memcpy(&bits, &value, sizeof(TYPE));                                                \
        gpurma_nvshmemi__put_value("nvshmem_" #NAME "_p", dest, bits, sizeof(TYPE), pe);    \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD TYPE nvshmem_##NAME##_g(const TYPE *source, int pe)                  \
    {                                                                                       \
        TYPE value;                                                                         \
        gpurma_nvshmemi__get("nvshmem_" #NAME "_g", &value, source, sizeof(TYPE), pe, 0);   \
        return value;                                                                       \
    }                                                                                       \
    GPURMA_NVSHMEMI_RMA_TYPED_STREAM(NAME, TYPE)                                            \
    GPURMA_NVSHMEMI_RMA_ARRAY(nvshmem_##NAME##_put, nvshmem_##NAME##_get,                   \
                              nvshmemx_##NAME##_put, nvshmemx_##NAME##_get, TYPE, sizeof(TYPE)) \
    GPURMA_NVSHMEMI_RMA_STRIDED(nvshmem_##NAME##_iput, nvshmem_##NAME##_iget, TYPE, sizeof(TYPE))

#if GPURMA_NVSHMEMI_STREAMS
#define GPURMA_NVSHMEMI_RMA_TYPED_STREAM(NAME, TYPE)                                        \
    static inline void nvshmemx_##NAME##_p_on_stream(TYPE *dest, TYPE value, int pe,        \
                                                     cudaStream_t stream)                   \
    {                                                                                       \
        uint64_t bits = 0;                                                                  \
        memcpy(&bits, &value, sizeof(TYPE));                                                \
        gpurma_nvshmemi_put_value_on_stream("nvshmemx_" #NAME "_p_on_stream", dest, bits,   \
                                            sizeof(TYPE), pe, (void *)stream);              \
    }
#else
#define GPURMA_NVSHMEMI_RMA_TYPED_STREAM(NAME, TYPE)
#endif

GPURMA_NVSHMEMI_RMA_TYPES(GPURMA_NVSHMEMI_RMA_TYPED)

/* ------------------------------------------------------------ sized forms */

/* Sized calls take void pointers; elements are BITS / 8 bytes. */
#define GPURMA_NVSHMEMI_RMA_SIZED(BITS, TYPE)                                               \
    GPURMA_NVSHMEMI_RMA_ARRAY(nvshmem_put##BITS, nvshmem_get##BITS, nvshmemx_put##BITS,     \
                              nvshmemx_get##BITS, void, BITS / 8)                           \
    GPURMA_NVSHMEMI_RMA_STRIDED(nvshmem_iput##BITS, nvshmem_iget##BITS, void, BITS / 8)
GPURMA_NVSHMEMI_SIZED_TYPES(GPURMA_NVSHMEMI_RMA_SIZED)
#undef GPURMA_NVSHMEMI_RMA_SIZED

/* Byte forms: putmem, getmem and theirs. */
GPURMA_NVSHMEMI_RMA_ARRAY(nvshmem_putmem, nvshmem_getmem, nvshmemx_putmem, nvshmemx_getmem, void, 1)

#endif
