/*
 * gpurma_coll_bench_gpu.cu - the GPU part of gpurma-coll-bench: gpurma's
 * collectives on a stream, and the NCCL harness (builds that found
 * nccl.h): NCCL on cudaMalloc'd buffers and on symmetric ones
 * (ncclMemAlloc + ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC),
 * with NCCL_GRAPH_MIXING_SUPPORT=0 (its default adds 8-14 us to every
 * captured operation) and NCCL_NVLS_ENABLE=0. Every implementation is
 * timed the same way: back to back on one stream between two events, or
 * captured into one graph and launched (one launch times iters ops).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

#include "gpurma_coll.h"
#include "gpurma/detail/dev_reduce.h"
extern "C" {
#include "gpurma_coll_bench.h"
}

static gpurma_team_t team;
static int me;
static cudaStream_t stream;
static void *sendbuf[CB_IMPLS], *recvbuf[CB_IMPLS];
static int available[CB_IMPLS];
static int registered;

#define CU(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "gpurma-coll-bench: rank %d: %s: %s\n", me, #x,                   \
                    cudaGetErrorString(e_));                                                  \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

#ifdef HAVE_NCCL
static int nranks;
static size_t send_max, recv_max;
static ncclComm_t comm;
#if defined(NCCL_WIN_COLL_SYMMETRIC)
static ncclWindow_t windows[2];
#endif
#define NC(x)                                                                                 \
    do {                                                                                      \
        ncclResult_t r_ = (x);                                                                \
        if (r_ != ncclSuccess) {                                                              \
            fprintf(stderr, "gpurma-coll-bench: rank %d: %s: %s\n", me, #x,                   \
                    ncclGetErrorString(r_));                                                  \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

static ncclDataType_t nccl_type(gpurma_dtype_t t)
{
    switch (t) {
    case GPURMA_INT8: return ncclInt8;
    case GPURMA_UINT8: return ncclUint8;
    case GPURMA_INT32: return ncclInt32;
    case GPURMA_UINT32: return ncclUint32;
    case GPURMA_INT64: return ncclInt64;
    case GPURMA_UINT64: return ncclUint64;
    case GPURMA_FLOAT16: return ncclFloat16;
    case GPURMA_BFLOAT16: return ncclBfloat16;
    case GPURMA_FLOAT32: return ncclFloat32;
    default: return ncclFloat64;
    }
}

static ncclRedOp_t nccl_op(gpurma_redop_t o)
{
    switch (o) {
    case GPURMA_PROD: return ncclProd;
    case GPURMA_MIN: return ncclMin;
    case GPURMA_MAX: return ncclMax;
    case GPURMA_AVG: return ncclAvg;
    default: return ncclSum;
    }
}

static int nccl_setup(void)
{
    /* The issue's fair baseline: no graph-mixing cost, no NVLink SHARP. */
    setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", 1);
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    ncclUniqueId id;
    if (me == 0)
        NC(ncclGetUniqueId(&id));
    /* gpurma's own broadcast carries NCCL's id (host path). */
    if (gpurma_broadcast(team, &id, &id, sizeof(id), GPURMA_UINT8, 0, NULL) != GPURMA_SUCCESS) {
        fprintf(stderr, "gpurma-coll-bench: broadcast of the NCCL id failed\n");
        return 1;
    }
    NC(ncclCommInitRank(&comm, nranks, id, me));
    sendbuf[CB_NCCL_PLAIN] = sendbuf[CB_GPURMA];
    recvbuf[CB_NCCL_PLAIN] = recvbuf[CB_GPURMA];
    available[CB_NCCL_PLAIN] = 1;
#if defined(NCCL_WIN_COLL_SYMMETRIC)
    NC(ncclMemAlloc(&sendbuf[CB_NCCL_SYM], send_max));
    NC(ncclMemAlloc(&recvbuf[CB_NCCL_SYM], recv_max));
    NC(ncclCommWindowRegister(comm, sendbuf[CB_NCCL_SYM], send_max, &windows[0],
                              NCCL_WIN_COLL_SYMMETRIC));
    NC(ncclCommWindowRegister(comm, recvbuf[CB_NCCL_SYM], recv_max, &windows[1],
                              NCCL_WIN_COLL_SYMMETRIC));
    available[CB_NCCL_SYM] = 1;
#else
    if (me == 0)
        printf("# this NCCL has no symmetric windows (NCCL_WIN_COLL_SYMMETRIC): plain only\n");
#endif
    return 0;
}

static int nccl_enqueue(int impl, const cb_op_t *o)
{
    const void *s = sendbuf[impl];
    void *r = recvbuf[impl];
    ncclDataType_t t = nccl_type(o->dtype);
    switch (o->kind) {
    case CB_ALLREDUCE: NC(ncclAllReduce(s, r, o->count, t, nccl_op(o->op), comm, stream)); break;
    case CB_ALLGATHER: NC(ncclAllGather(s, r, o->count, t, comm, stream)); break;
    case CB_REDUCE_SCATTER:
        NC(ncclReduceScatter(s, r, o->count, t, nccl_op(o->op), comm, stream));
        break;
    case CB_BROADCAST: NC(ncclBroadcast(s, r, o->count, t, o->root, comm, stream)); break;
    case CB_REDUCE: NC(ncclReduce(s, r, o->count, t, nccl_op(o->op), o->root, comm, stream)); break;
    case CB_ALLTOALLV: { /* as MoE layers on NCCL do: grouped sends and receives */
        const size_t es = gpurma_dev_dtype_size(o->dtype);
        const cb_v_t *v = o->v;
        NC(ncclGroupStart());
        for (int p = 0; p < nranks; p++) {
            if (v->send_counts[p])
                NC(ncclSend((const char *)s + v->send_displs[p] * es, v->send_counts[p], t, p,
                            comm, stream));
            if (v->recv_counts[p])
                NC(ncclRecv((char *)r + v->recv_displs[p] * es, v->recv_counts[p], t, p, comm,
                            stream));
        }
        NC(ncclGroupEnd());
        break;
    }
    default: { /* alltoall as nccl-tests does it: grouped sends and receives */
        size_t block = o->count * gpurma_dev_dtype_size(o->dtype);
        NC(ncclGroupStart());
        for (int p = 0; p < nranks; p++) {
            NC(ncclSend((const char *)s + p * block, o->count, t, p, comm, stream));
            NC(ncclRecv((char *)r + p * block, o->count, t, p, comm, stream));
        }
        NC(ncclGroupEnd());
        break;
    }
    }
    return 0;
}
#endif /* HAVE_NCCL */

static int gpurma_enqueue(const cb_op_t *o)
{
    const void *s = sendbuf[CB_GPURMA];
    void *r = recvbuf[CB_GPURMA];
    gpurma_status_t rc;
    switch (o->kind) {
    case CB_ALLREDUCE: rc = gpurma_allreduce(team, s, r, o->count, o->dtype, o->op, stream); break;
    case CB_ALLGATHER: rc = gpurma_allgather(team, s, r, o->count, o->dtype, stream); break;
    case CB_REDUCE_SCATTER:
        rc = gpurma_reduce_scatter(team, s, r, o->count, o->dtype, o->op, stream);
        break;
    case CB_BROADCAST: rc = gpurma_broadcast(team, s, r, o->count, o->dtype, o->root, stream); break;
    case CB_REDUCE: rc = gpurma_reduce(team, s, r, o->count, o->dtype, o->op, o->root, stream); break;
    case CB_ALLTOALLV:
        rc = gpurma_alltoallv(team, s, o->v->send_counts, o->v->send_displs, r,
                              o->v->recv_counts, o->v->recv_displs, o->dtype, stream);
        break;
    default: rc = gpurma_alltoall(team, s, r, o->count, o->dtype, stream); break;
    }
    if (rc != GPURMA_SUCCESS) {
        fprintf(stderr, "gpurma-coll-bench: rank %d: %s\n", me, gpurma_strerror(rc));
        return 1;
    }
    return 0;
}

static int enqueue(int impl, const cb_op_t *o)
{
#ifdef HAVE_NCCL
    if (impl != CB_GPURMA)
        return nccl_enqueue(impl, o);
#endif
    return gpurma_enqueue(o);
}

extern "C" int cbg_have_gpu(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

extern "C" int cbg_setup(gpurma_team_t t, size_t smax, size_t rmax, int nccl)
{
    team = t;
    me = gpurma_team_rank(t);
#ifdef HAVE_NCCL
    nranks = gpurma_team_size(t);
    send_max = smax;
    recv_max = rmax;
#endif
    CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CU(cudaMalloc(&sendbuf[CB_GPURMA], smax));
    CU(cudaMalloc(&recvbuf[CB_GPURMA], rmax));
    available[CB_GPURMA] = 1;
    /* gpurma's buffers are registered (allreduce then runs zero-copy), as
     * NCCL's symmetric ones are; GPURMA_COLL_BENCH_REGISTER=0 leaves them
     * plain. */
    const char *reg = getenv("GPURMA_COLL_BENCH_REGISTER");
    registered = !reg || strcmp(reg, "0");
    if (registered && (gpurma_coll_register(t, sendbuf[CB_GPURMA], smax) != GPURMA_SUCCESS ||
                       gpurma_coll_register(t, recvbuf[CB_GPURMA], rmax) != GPURMA_SUCCESS)) {
        fprintf(stderr, "rank %d: gpurma_coll_register: %s\n", me,
                gpurma_last_error_message(NULL));
        return 1;
    }
    if (me == 0)
        printf("# gpurma buffers %s\n", registered ? "registered (gpurma_coll_register)"
                                                   : "not registered");
#ifdef HAVE_NCCL
    if (nccl && nccl_setup())
        return 1;
#else
    if (nccl && me == 0)
        printf("# built without nccl.h: NCCL not measured\n");
#endif
    return 0;
}

extern "C" int cbg_available(int impl) { return impl >= 0 && impl < CB_IMPLS && available[impl]; }

extern "C" int cbg_upload(int impl, const void *host, size_t bytes)
{
    CU(cudaMemcpy(sendbuf[impl], host, bytes, cudaMemcpyHostToDevice));
    CU(cudaDeviceSynchronize()); /* the legacy stream's copy, before the bench stream reads */
    return 0;
}

extern "C" int cbg_poison(int impl, size_t bytes)
{
    CU(cudaMemset(recvbuf[impl], 0xA5, bytes));
    CU(cudaDeviceSynchronize());
    return 0;
}

extern "C" int cbg_download(int impl, void *host, size_t bytes)
{
    CU(cudaMemcpy(host, recvbuf[impl], bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int cbg_run(int impl, const cb_op_t *op)
{
    if (enqueue(impl, op))
        return 1;
    CU(cudaStreamSynchronize(stream));
    return 0;
}

extern "C" int cbg_time(int impl, const cb_op_t *op, int iters, int graph, double *us)
{
    cudaEvent_t a, b;
    CU(cudaEventCreate(&a));
    CU(cudaEventCreate(&b));
    cudaGraphExec_t exec = nullptr;
    if (graph) {
        cudaGraph_t g;
        CU(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < iters; i++)
            if (enqueue(impl, op))
                return 1;
        CU(cudaStreamEndCapture(stream, &g));
        CU(cudaGraphInstantiate(&exec, g, 0));
        CU(cudaGraphDestroy(g));
        CU(cudaGraphLaunch(exec, stream)); /* warm up */
    } else {
        for (int i = 0; i < 3; i++)
            if (enqueue(impl, op))
                return 1;
    }
    CU(cudaStreamSynchronize(stream));
    if (gpurma_barrier(team) != GPURMA_SUCCESS)
        return 1;
    CU(cudaEventRecord(a, stream));
    if (graph) {
        CU(cudaGraphLaunch(exec, stream));
    } else {
        for (int i = 0; i < iters; i++)
            if (enqueue(impl, op))
                return 1;
    }
    CU(cudaEventRecord(b, stream));
    CU(cudaEventSynchronize(b));
    float ms = 0;
    CU(cudaEventElapsedTime(&ms, a, b));
    *us = ms * 1e3 / iters;
    if (exec)
        CU(cudaGraphExecDestroy(exec));
    CU(cudaEventDestroy(a));
    CU(cudaEventDestroy(b));
    return 0;
}

extern "C" void cbg_teardown(void)
{
#ifdef HAVE_NCCL
    if (available[CB_NCCL_PLAIN]) {
#if defined(NCCL_WIN_COLL_SYMMETRIC)
        if (available[CB_NCCL_SYM]) {
            ncclCommWindowDeregister(comm, windows[0]);
            ncclCommWindowDeregister(comm, windows[1]);
            ncclMemFree(sendbuf[CB_NCCL_SYM]);
            ncclMemFree(recvbuf[CB_NCCL_SYM]);
        }
#endif
        ncclCommDestroy(comm);
    }
#endif
    if (registered) {
        gpurma_coll_deregister(team, sendbuf[CB_GPURMA]);
        gpurma_coll_deregister(team, recvbuf[CB_GPURMA]);
    }
    cudaFree(sendbuf[CB_GPURMA]);
    cudaFree(recvbuf[CB_GPURMA]);
    cudaStreamDestroy(stream);
}
