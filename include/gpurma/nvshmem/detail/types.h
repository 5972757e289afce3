/*
 * types.h - NVSHMEM's public types and constants, the type lists the typed
 * calls are generated from, and the state the library hands to each
 * translation unit. Not ABI beyond what NVSHMEM programs name.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_TYPES_H
#define GPURMA_NVSHMEM_DETAIL_TYPES_H

/* What NVSHMEM's headers bring in, so that a program relying on them (the
 * driver API for cuMemCreate, assert, bool, half and bfloat16, printf)
 * compiles unchanged. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif
#if defined(__CUDACC__) && !defined(__HIPCC__)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#elif defined(__cplusplus) && defined(__has_include) && !defined(__HIPCC__) &&              \
    !defined(GPURMA_NVSHMEM_NO_CUDA)
/* C++ that a host compiler builds with CUDA's headers on its path (CMake
 * builds NVSHMEM programs' .cpp files so): the host calls, their
 * stream-ordered forms among them; only what launches kernels needs nvcc. */
#if __has_include(<cuda_runtime.h>)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define GPURMA_NVSHMEMI_CUDA_HOST 1
#endif
#endif
#ifndef GPURMA_NVSHMEMI_CUDA_HOST
#define GPURMA_NVSHMEMI_CUDA_HOST 0
#endif

#include "gpurma_device.h"

/* Device collectives: gpurma's, on each team's scratch window. */
#include "gpurma_coll_device.h"

/* The NVSHMEM release whose names and semantics this layer follows. */
#define NVSHMEM_MAJOR_VERSION  3
#define NVSHMEM_MINOR_VERSION  0
#define NVSHMEM_PATCH_VERSION  0
#define NVSHMEM_VENDOR_STRING  "gpurma NVSHMEM compatibility layer"
#define NVSHMEM_MAX_NAME_LEN   256
#define SHMEM_MAJOR_VERSION    1
#define SHMEM_MINOR_VERSION    5
#define GPURMA_NVSHMEM         1 /* lets a program tell this layer from NVSHMEM */

/* ------------------------------------------------------------ type lists */

/* X(NAME, TYPE): the standard RMA types (OpenSHMEM 1.5 table 5). */
#define GPURMA_NVSHMEMI_RMA_TYPES(X)                                                        \
    X(float, float) X(double, double) X(char, char) X(schar, signed char) X(short, short)   \
    X(int, int) X(long, long) X(longlong, long long) X(uchar, unsigned char)                \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long)                 \
    X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) X(int32, int32_t)    \
    X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t)             \
    X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t) GPURMA_NVSHMEMI_FLOAT16_TYPES(X)

/* NVSHMEM's 16-bit floating types, where the CUDA headers define them. */
#if (defined(__CUDACC__) && !defined(__HIPCC__)) || GPURMA_NVSHMEMI_CUDA_HOST
#define GPURMA_NVSHMEMI_FLOAT16_TYPES(X) X(half, half) X(bfloat16, __nv_bfloat16)
#else
#define GPURMA_NVSHMEMI_FLOAT16_TYPES(X)
#endif

/* X(BITS, TYPE): the sized RMA forms (put8 ... put128); 128 is a 16-byte
 * struct, moved as bytes. */
typedef struct { uint64_t lo, hi; } gpurma_nvshmemi_b128_t;
#define GPURMA_NVSHMEMI_SIZED_TYPES(X)                                                      \
    X(8, uint8_t) X(16, uint16_t) X(32, uint32_t) X(64, uint64_t) X(128, gpurma_nvshmemi_b128_t)

/* The standard atomic types (inc, fetch_inc, add, fetch_add, compare_swap). */
#define GPURMA_NVSHMEMI_AMO_STD_TYPES(X)                                                    \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int)                  \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t)              \
    X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)               \
    X(ptrdiff, ptrdiff_t)
/* The extended ones (fetch, set, swap) add the floating types. */
#define GPURMA_NVSHMEMI_AMO_EXT_TYPES(X)                                                    \
    GPURMA_NVSHMEMI_AMO_STD_TYPES(X) X(float, float) X(double, double)
/* The bitwise ones (and, or, xor and their fetch forms). */
#define GPURMA_NVSHMEMI_AMO_BIT_TYPES(X)                                                    \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)          \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)
/* Point-to-point synchronization (wait_until, test families). */
#define GPURMA_NVSHMEMI_P2P_TYPES(X)                                                        \
    X(short, short) X(int, int) X(long, long) X(longlong, long long)                        \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long)                 \
    X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t)                    \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

/* --------------------------------------------------------------- constants */

enum {
    NVSHMEM_CMP_EQ = 0, NVSHMEM_CMP_NE, NVSHMEM_CMP_GT, NVSHMEM_CMP_LE, NVSHMEM_CMP_LT,
    NVSHMEM_CMP_GE, NVSHMEM_CMP_SENTINEL
};
enum { NVSHMEM_SIGNAL_SET = 0, NVSHMEM_SIGNAL_ADD = 1 };

enum {
    NVSHMEM_THREAD_SINGLE = 0, NVSHMEM_THREAD_FUNNELED, NVSHMEM_THREAD_SERIALIZED,
    NVSHMEM_THREAD_MULTIPLE
};

typedef int32_t nvshmem_team_t;
#define NVSHMEM_TEAM_INVALID  (-1)
#define NVSHMEM_TEAM_WORLD    0
#define NVSHMEMX_TEAM_NODE    1
#define NVSHMEM_TEAM_SHARED   2
#define NVSHMEM_TEAM_WORLD_INDEX 0
#define NVSHMEMX_TEAM_NODE_INDEX 1
#define NVSHMEM_TEAM_SHARED_INDEX 2
/* Team handles are indices into a table each translation unit holds. */
#define GPURMA_NVSHMEMI_MAX_TEAMS 64

typedef struct {
    int num_contexts;
} nvshmem_team_config_t;

/* ------------------------------------------------------------------ init */

enum {
    NVSHMEMX_INIT_THREAD_PES    = 1,
    NVSHMEMX_INIT_WITH_MPI_COMM = 1 << 1,
    NVSHMEMX_INIT_WITH_SHMEM    = 1 << 2,
    NVSHMEMX_INIT_WITH_UNIQUEID = 1 << 3,
    NVSHMEMX_INIT_MAX           = 1 << 31
};

enum {
    NVSHMEM_STATUS_NOT_INITIALIZED = 0,
    NVSHMEM_STATUS_IS_BOOTSTRAPPED,
    NVSHMEM_STATUS_IS_INITIALIZED,
    NVSHMEM_STATUS_LIMITED_MPG,
    NVSHMEM_STATUS_FULL_MPG,
    NVSHMEM_STATUS_INVALID = INT32_MAX
};

#define NVSHMEMX_SUCCESS              0
#define NVSHMEMX_ERROR_INTERNAL       1
#define NVSHMEMX_ERROR_INVALID_VALUE  2

/* What nvshmemx_get_uniqueid fills: the rendezvous address, port and a
 * random token (text), opaque to the program. */
#define GPURMA_NVSHMEMI_UNIQUEID_VERSION 0x67720001
typedef struct {
    int  version;
    char internal[124];
} nvshmemx_uniqueid_t;
#define NVSHMEMX_UNIQUEID_INITIALIZER {GPURMA_NVSHMEMI_UNIQUEID_VERSION, {0}}

typedef struct {
    int                  version;
    int                  myrank;
    int                  nranks;
    nvshmemx_uniqueid_t *id;
} nvshmemx_uniqueid_args_t;
#define NVSHMEMX_UNIQUEID_ARGS_INITIALIZER {GPURMA_NVSHMEMI_UNIQUEID_VERSION, -1, -1, NULL}

typedef struct {
    int                      version;
    nvshmemx_uniqueid_args_t uid_args;
    void                    *content;
} nvshmemx_init_args_t;

typedef struct {
    int                  version;
    void                *mpi_comm; /* pointer to an MPI_Comm */
    nvshmemx_init_args_t args;
} nvshmemx_init_attr_t;
#define NVSHMEMX_INIT_ATTR_INITIALIZER                                                      \
    {GPURMA_NVSHMEMI_UNIQUEID_VERSION, NULL,                                                \
     {GPURMA_NVSHMEMI_UNIQUEID_VERSION, NVSHMEMX_UNIQUEID_ARGS_INITIALIZER, NULL}}

/* ------------------------------------------------- state of each unit */

/* A team as kernels see it: its members are world PEs start + i * stride,
 * i < size (stride 0: not strided, so no device-side use); my_pe is this
 * PE's rank in it or -1. */
typedef struct {
    int32_t start, stride, size, my_pe;
} gpurma_nvshmemi_team_t;

#define GPURMA_NVSHMEMI_STATE_LIVE 0x4e56534du /* "NVSM" */

/* Symmetric memory beyond the first heap: a window each, made when
 * nvshmem_malloc finds no room in the ones before (NVSHMEM grows its heap
 * too) or by nvshmemx_buffer_register_symmetric. base is this PE's part,
 * NULL for a free slot. */
#define GPURMA_NVSHMEMI_MAX_SEGMENTS 15
/* PEs whose mapped heap kernels find in the state itself (the rest take
 * the peer table): an NVLink domain of up to 64 GPUs, in 512 bytes of each
 * unit's __constant__ copy. */
#define GPURMA_NVSHMEMI_DIRECT_PES 64
typedef struct {
    char            *base;
    uint64_t         size;
    gpurma_dev_win_t win;
} gpurma_nvshmemi_segment_t;

/*
 * What every translation unit that includes nvshmem.h holds a copy of (in
 * __constant__ memory when compiled by nvcc): the library fills the copies
 * once the heap exists and again when teams change.
 *
 * The heap's first sync_bytes hold the barrier counters: for each world PE
 * j, arrivals[j] (how many barriers j entered with this PE, written by j
 * with an atomic add) and entered[j] (how many this PE entered with j,
 * written only by this PE); then, with device collectives, at colls_off
 * the gpurma_dev_coll_t of each team slot (in the heap, so that kernels
 * read them from memory the library can write without a CUDA runtime).
 */
typedef struct {
    uint32_t               magic;      /* GPURMA_NVSHMEMI_STATE_LIVE once filled */
    int32_t                my_pe, n_pes;
    int32_t                heap_host;  /* heap in host memory: C code may use win */
    int32_t                device;     /* heap GPU: ordinal, GPURMA_DEVICE_HOST or _AUTO */
    int32_t                node_rank;  /* this PE's rank on its node */
    char                  *heap_base;  /* this PE's heap, as the program sees it */
    uint64_t               heap_size;
    uint64_t               sync_bytes; /* barrier counters (and team handles) */
    uint64_t               colls_off;  /* device collectives' handles, or 0 */
    gpurma_dev_win_t       win;        /* the heap's window */
    gpurma_nvshmemi_team_t teams[GPURMA_NVSHMEMI_MAX_TEAMS];
    /* Segment k + 1 of an address is segments[k]; segment 0 is the heap. */
    uint32_t               nsegments;  /* slots in use or freed: [0, nsegments) */
    gpurma_nvshmemi_segment_t segments[GPURMA_NVSHMEMI_MAX_SEGMENTS];
    /* The fast path (fast.h), derived from the above by the library each
     * time it fills the copies; all zero (no fast path) before init and
     * after finalize. The part of the heap nvshmem_malloc hands out starts
     * at user_base (heap_base + sync_bytes) and holds user_size bytes;
     * heap_peers[pe] is that part of pe's heap as this processor maps it,
     * for the PEs whose heap kernels reach by load/store (not through the
     * port engine) and hold at least heap_size bytes, else NULL. In
     * __constant__ memory an indexed read of it is one load from the
     * constant cache, which no fence or acquire invalidates, and the
     * compiler may hoist it out of a loop. */
    char                  *user_base;
    uint64_t               user_size;
    uint32_t               any_port;   /* a live window of the heap has port peers */
    char                  *heap_peers[GPURMA_NVSHMEMI_DIRECT_PES];
} gpurma_nvshmemi_state_t;

#endif
