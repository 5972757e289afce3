/*
 * nccl_internal.h - libgpurma_nccl: NCCL 2.28's API on gpurma's public API
 * (gpurma.h, gpurma_coll.h) only.
 *
 * One ncclComm is a gpurma team: the world team of a context made from the
 * communicator's unique id, or a team split from a parent's. Collectives go
 * to gpurma_coll.h; send/recv run on a per-communicator window of staging
 * slots (p2p.c); calls inside ncclGroupStart/End are queued and run at the
 * end, one thread per communicator when several are involved (group.c).
 * What gpurma lacks goes to a real NCCL when GPURMA_NCCL_FALLBACK names one
 * (fallback.c).
 */
#ifndef GPURMA_NCCL_INTERNAL_H
#define GPURMA_NCCL_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "gpurma.h"
#include "gpurma_coll.h"
#include "gpurma/nccl/nccl.h"

#define NCCL_API __attribute__((visibility("default")))
/* The profiling interface's name of each entry point (pncclX = ncclX). */
#define NCCL_PROFILING_ALIAS(name) \
    extern __typeof__(name) p##name __attribute__((alias(#name), visibility("default")));

#define GPURMA_NCCL_COMM_MAGIC 0x6e63636c47524d41ull /* "ncclGRMA" */
#define GPURMA_NCCL_COMM_GONE  0x676f6e65676f6e65ull

/* A context shared by a communicator and those split from it. */
typedef struct {
    gpurma_ctx_t ctx;
    int          refs; /* communicators using it; atomically updated */
} nccl_ctx_ref_t;

/* PreMulSum operators a communicator created. */
#define NCCL_MAX_USER_OPS 64
typedef struct {
    int            live;
    ncclDataType_t dtype;
    double         scalar_host; /* ncclScalarHostImmediate */
    const void    *scalar_dev;  /* ncclScalarDevice: read when the op runs */
    int            on_device;
} nccl_user_op_t;

struct ncclComm {
    uint64_t        magic;
    nccl_ctx_ref_t *ctx;
    gpurma_team_t   team; /* world of ctx, or split from a parent */
    int             own_team;
    int             rank, size;
    int             device; /* CUDA ordinal, or -1 on the host backend */
    int             gpu;    /* buffers are GPU memory, calls take streams */
    int             blocking;
    ncclResult_t    init_state; /* ncclInProgress while a non-blocking init runs */
    ncclResult_t    async_error;
    int             aborted, revoked, finalized;
    pthread_t       init_thread;
    int             init_thread_started;
    /* what a deferred init (group, non-blocking) needs */
    gpurma_unique_id_t init_id;
    int             init_rank, init_size;
    /* send/recv (p2p.c) */
    gpurma_win_t    p2p_win;
    char           *p2p_base;
    size_t          p2p_chunk; /* bytes of one slot */
    int             p2p_depth; /* slots per peer */
    uint64_t        shrink_seq;
    /* PreMulSum operators, ncclNumOps + index */
    nccl_user_op_t  ops[NCCL_MAX_USER_OPS];
    /* scratch for in-place reduce-scatter and PreMulSum (host or GPU) */
    void           *scratch;
    size_t          scratch_bytes;
    void          **graph_scratch; /* taken in graph captures, freed with the communicator */
    size_t          graph_scratch_n;
    /* the real NCCL's communicator (fallback.c), or NULL */
    void           *fallback;
    void           *gpu_probe; /* gpurma_nccl_gpu_probe_create, GPU communicators */
    char            name[64];
    pthread_mutex_t lock;
};

/* ---------------------------------------------------------- errors.c */
ncclResult_t gpurma_nccl_result(gpurma_status_t rc);
/* Records the message for ncclGetLastError and returns result. */
ncclResult_t gpurma_nccl_fail(ncclComm_t comm, ncclResult_t result, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A gpurma call failed: its message follows ours. Remote failures also
 * become the communicator's asynchronous error. */
ncclResult_t gpurma_nccl_fail_rc(ncclComm_t comm, gpurma_status_t rc, const char *what);
/* The communicator's asynchronous error becomes result unless it has one. */
void gpurma_nccl_set_async(ncclComm_t comm, ncclResult_t result);
void gpurma_nccl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Checks comm is live and usable (not aborted, initialized). */
ncclResult_t gpurma_nccl_check_comm(ncclComm_t comm, const char *call);
/* The same, but a finalized communicator passes: for what releases what it made. */
ncclResult_t gpurma_nccl_check_comm_cleanup(ncclComm_t comm, const char *call);

/* ------------------------------------------------------------ comm.c */
/* Runs a communicator's init recorded by ncclCommInitRank* (collective). */
ncclResult_t gpurma_nccl_comm_init_now(ncclComm_t comm);

/* ------------------------------------------------------------ coll.c */
typedef enum {
    NCCL_OP_ALLREDUCE, NCCL_OP_ALLGATHER, NCCL_OP_REDUCE_SCATTER, NCCL_OP_BROADCAST,
    NCCL_OP_REDUCE, NCCL_OP_ALLTOALL, NCCL_OP_GATHER, NCCL_OP_SCATTER, NCCL_OP_SEND,
    NCCL_OP_RECV, NCCL_OP_INIT, NCCL_OP_SPLIT, NCCL_OP_KINDS
} nccl_op_kind_t;

typedef struct {
    nccl_op_kind_t kind;
    ncclComm_t     comm;
    const void    *send;
    void          *recv;
    size_t         count;
    ncclDataType_t dtype;
    ncclRedOp_t    op;
    int            root; /* or peer, or a split's color */
    void          *stream;
    /* NCCL_OP_SPLIT: the key, and the child (NULL for NCCL_SPLIT_NOCOLOR) */
    int            key;
    ncclComm_t     child;
} nccl_op_t;

const char *gpurma_nccl_op_name(nccl_op_kind_t kind);
/* comm.c: runs a split queued in a group (collective over op->comm):
 * op->child, made when ncclCommSplit was called, gets its team, or its
 * init fails. */
ncclResult_t gpurma_nccl_comm_split_now(const nccl_op_t *op);
/* Every check a call passes before anything of it runs or is queued: a
 * live communicator (or one whose init the open group holds), datatype,
 * operator, root or peer, sizes that fit a size_t, buffers. */
ncclResult_t gpurma_nccl_check_op(const nccl_op_t *op);
/* Checks and runs one collective now. */
ncclResult_t gpurma_nccl_run_coll(const nccl_op_t *op);
size_t gpurma_nccl_dtype_size(ncclDataType_t dtype);
/* The stream gpurma is given: a GPU communicator's NULL stream is CUDA's
 * legacy default stream, never gpurma's "host memory". */
void *gpurma_nccl_stream(ncclComm_t comm, void *stream);
/* Scratch for one call: the communicator's (grown as needed) outside a
 * CUDA graph capture; inside one, a buffer of the graph's own, kept until
 * the communicator is destroyed. */
typedef struct {
    void *ptr;
} nccl_scratch_t;
ncclResult_t gpurma_nccl_scratch(ncclComm_t comm, size_t bytes, void *stream, nccl_scratch_t *out);

/* ------------------------------------------------------------- p2p.c */
ncclResult_t gpurma_nccl_p2p_setup(ncclComm_t comm);
void gpurma_nccl_p2p_teardown(ncclComm_t comm);
/* Runs a batch of sends and receives of one communicator (every op a
 * NCCL_OP_SEND or NCCL_OP_RECV), deadlock-free in any order. */
ncclResult_t gpurma_nccl_p2p_run(ncclComm_t comm, const nccl_op_t *ops, int n);
/* Exchanges a unique id from the lowest surviving rank to the others
 * through the p2p window (ncclCommShrink). */
ncclResult_t gpurma_nccl_p2p_share_id(ncclComm_t comm, const int *alive, gpurma_unique_id_t *id);

/* ----------------------------------------------------------- group.c */
/* Queues op when a group is open (returns 1), else 0. */
int gpurma_nccl_group_enqueue(const nccl_op_t *op, ncclResult_t *result);
/* Whether this thread's open group holds a call of kind on comm, or a
 * split that makes comm (NCCL_OP_KINDS: a call of any kind). */
int gpurma_nccl_group_holds(ncclComm_t comm, nccl_op_kind_t kind);
/* A call refused inside an open group: the group runs none of its calls
 * (but the inits) and ncclGroupEnd returns the first such result. */
void gpurma_nccl_group_refuse(ncclResult_t result);
/* Drops the open group's calls on comm (ncclCommAbort); a communicator a
 * dropped init or split would have made is marked failed. */
void gpurma_nccl_group_drop(ncclComm_t comm);

/* --------------------------------------------------------- fallback.c */
/* The real NCCL, loaded once (NULL when GPURMA_NCCL_FALLBACK is unset or
 * unusable). */
int gpurma_nccl_fallback_available(void);
/* Makes comm's own communicator of the real NCCL (collective over comm). */
void gpurma_nccl_fallback_comm_init(ncclComm_t comm);
void gpurma_nccl_fallback_comm_destroy(ncclComm_t comm, int abort);
/* Runs op on the real NCCL; ncclInvalidUsage when there is none. */
ncclResult_t gpurma_nccl_fallback_run(const nccl_op_t *op, const char *why);

/* ------------------------------------------------------------- fp8.c */
int     gpurma_nccl_is_fp8(ncclDataType_t t);
float   gpurma_nccl_fp8_to_float(uint8_t v, ncclDataType_t t);
uint8_t gpurma_nccl_float_to_fp8(float f, ncclDataType_t t); /* nearest even, saturating */
/* Host-backend forms of the GPU's widening and narrowing. */
void gpurma_nccl_fp8_widen_host(float *dst, const uint8_t *src, size_t n, ncclDataType_t t,
                                const double *scalar);
void gpurma_nccl_fp8_narrow_host(uint8_t *dst, const float *src, size_t n, ncclDataType_t t);

/* ------------------------------------------------ gpu_cuda.c / gpu_none.c */
int  gpurma_nccl_gpu_current_device(void); /* -1 without a GPU */
int  gpurma_nccl_gpu_set_device(int device);
int  gpurma_nccl_gpu_malloc(void **ptr, size_t bytes);
int  gpurma_nccl_gpu_free(void *ptr);
/* cudaMalloc with the thread's capture mode relaxed (legal during a
 * capture that is not the thread's own relaxed one). */
int  gpurma_nccl_gpu_malloc_relaxed(void **ptr, size_t bytes);
int  gpurma_nccl_gpu_is_device_ptr(const void *ptr);
int  gpurma_nccl_gpu_copy_async(void *dst, const void *src, size_t bytes, void *stream);
/* dst[i] = src[i] * scalar on the stream (PreMulSum); scalar_dev when
 * non-NULL is a device pointer read when the kernel runs. */
int  gpurma_nccl_gpu_scale_async(void *dst, const void *src, size_t count,
                                 ncclDataType_t dtype, double scalar, const void *scalar_dev,
                                 void *stream);
int  gpurma_nccl_gpu_stream_capturing(void *stream);
/* FP8 reductions on a stream (gpu_fp8.cu): src widened to float (scaled in
 * FP8 first when scalar or scalar_dev is given: PreMulSum), and back. */
int  gpurma_nccl_gpu_fp8_widen_async(float *dst, const void *src, size_t n, ncclDataType_t dtype,
                                     const double *scalar, const void *scalar_dev, void *stream);
int  gpurma_nccl_gpu_fp8_narrow_async(void *dst, const float *src, size_t n,
                                      ncclDataType_t dtype, void *stream);
/* Loads the layer's kernels into the current device (0 when done). */
int  gpurma_nccl_gpu_load_kernels(void);
/* A stream of the communicator's own that never gets work: querying it
 * tells whether the GPU's context broke (a kernel that faulted, such as a
 * gpurma collective that timed out and trapped) without touching the
 * caller's streams or a graph being captured on another thread. */
int  gpurma_nccl_gpu_probe_create(void **probe);
void gpurma_nccl_gpu_probe_destroy(void *probe);
/* 0 while the context is sound, else 1 with the CUDA error's text. */
int  gpurma_nccl_gpu_probe_failed(void *probe, const char **why);

#endif
