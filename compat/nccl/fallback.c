/*
 * fallback.c - what gpurma cannot do goes to a real NCCL, named by
 * GPURMA_NCCL_FALLBACK=/path/libnccl.so.2. It is loaded with RTLD_LOCAL and
 * RTLD_DEEPBIND, so that its ncclX names never meet ours: the application
 * sees only ours, and the real library's own references to its ncclX names
 * find its own first. (A link-map namespace of its own, dlmopen, would also
 * give it a second C library and CUDA driver in the process, the likely
 * cause of the SIGSEGV the dlmopen'd NCCL gave on 2x H200 on 2026-11-26.)
 * Each GPU communicator makes its own communicator of it at init (rank 0's
 * NCCL unique id travels over a gpurma broadcast). Every forwarded call
 * kind is logged the first time (every time with GPURMA_NCCL_DEBUG set).
 *
 * NCCL 2.28 refuses two ranks on one GPU: there the real communicator
 * cannot be made, which is logged, and the calls that would need it fail
 * with ncclInvalidUsage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_internal.h"

typedef ncclResult_t (*get_id_fn)(ncclUniqueId *);
typedef ncclResult_t (*init_rank_fn)(ncclComm_t *, int, ncclUniqueId, int);
typedef ncclResult_t (*comm_fn)(ncclComm_t);
typedef ncclResult_t (*red_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                               ncclComm_t, cudaStream_t);
typedef ncclResult_t (*rooted_red_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                      int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*move_fn)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                                cudaStream_t);
typedef ncclResult_t (*rooted_move_fn)(const void *, void *, size_t, ncclDataType_t, int,
                                       ncclComm_t, cudaStream_t);
typedef ncclResult_t (*send_fn)(const void *, size_t, ncclDataType_t, int, ncclComm_t,
                                cudaStream_t);
typedef ncclResult_t (*recv_fn)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef const char *(*last_error_fn)(ncclComm_t);

static struct {
    pthread_once_t once;
    void          *lib;
    get_id_fn      get_id;
    init_rank_fn   init_rank;
    comm_fn        destroy, abort;
    red_fn         allreduce, reduce_scatter;
    rooted_red_fn  reduce;
    move_fn        allgather, alltoall;
    rooted_move_fn broadcast, gather, scatter;
    send_fn        send;
    recv_fn        recv;
    last_error_fn  last_error;
    int            logged[NCCL_OP_KINDS];
} real = {.once = PTHREAD_ONCE_INIT};

#define RESOLVE(field, name) (*(void **)&real.field = dlsym(real.lib, name))

static void load(void)
{
    const char *path = getenv("GPURMA_NCCL_FALLBACK");
    if (!path || !*path)
        return;
    int flags = RTLD_NOW | RTLD_LOCAL;
#if !defined(__SANITIZE_ADDRESS__) /* AddressSanitizer refuses RTLD_DEEPBIND */
    flags |= RTLD_DEEPBIND;
#endif
    real.lib = dlopen(path, flags);
    if (!real.lib) {
        gpurma_nccl_log("GPURMA_NCCL_FALLBACK=%s cannot be loaded: %s", path, dlerror());
        return;
    }
    int ok = RESOLVE(get_id, "ncclGetUniqueId") && RESOLVE(init_rank, "ncclCommInitRank") &&
             RESOLVE(destroy, "ncclCommDestroy") && RESOLVE(abort, "ncclCommAbort") &&
             RESOLVE(allreduce, "ncclAllReduce") && RESOLVE(reduce_scatter, "ncclReduceScatter") &&
             RESOLVE(reduce, "ncclReduce") && RESOLVE(allgather, "ncclAllGather") &&
             RESOLVE(broadcast, "ncclBroadcast") && RESOLVE(send, "ncclSend") &&
             RESOLVE(recv, "ncclRecv") && RESOLVE(last_error, "ncclGetLastError");
    /* 2.28 has these; older NCCLs do not, and lose only them. */
    RESOLVE(alltoall, "ncclAlltoAll");
    RESOLVE(gather, "ncclGather");
    RESOLVE(scatter, "ncclScatter");
    if (!ok) {
        gpurma_nccl_log("GPURMA_NCCL_FALLBACK=%s lacks NCCL's entry points; not used", path);
        dlclose(real.lib);
        real.lib = NULL;
        return;
    }
    gpurma_nccl_log("fallback NCCL loaded from %s (its names kept apart from ours)", path);
}

int gpurma_nccl_fallback_available(void)
{
    pthread_once(&real.once, load);
    return real.lib != NULL;
}

void gpurma_nccl_fallback_comm_init(ncclComm_t comm)
{
    if (!comm->gpu || !gpurma_nccl_fallback_available())
        return;
    /* byte 0: rank 0 has an id; then the id */
    char msg[1 + sizeof(ncclUniqueId)] = {0};
    if (comm->rank == 0) {
        ncclUniqueId id;
        if (real.get_id(&id) == ncclSuccess) {
            msg[0] = 1;
            memcpy(msg + 1, id.internal, sizeof id.internal);
        }
    }
    gpurma_status_t rc = gpurma_broadcast(comm->team, msg, msg, sizeof msg, GPURMA_UINT8, 0, NULL);
    if (rc != GPURMA_SUCCESS || !msg[0]) {
        gpurma_nccl_log("rank %d: no fallback communicator (%s)", comm->rank,
                        rc ? gpurma_strerror(rc) : "rank 0 got no NCCL unique id");
        return;
    }
    ncclUniqueId id;
    memcpy(id.internal, msg + 1, sizeof id.internal);
    ncclComm_t fb = NULL;
    ncclResult_t res = real.init_rank(&fb, comm->size, id, comm->rank);
    if (res != ncclSuccess) {
        gpurma_nccl_log("rank %d: the fallback NCCL's ncclCommInitRank failed: %d (%s); calls "
                        "that need it will fail", comm->rank, (int)res, real.last_error(NULL));
        return;
    }
    comm->fallback = fb;
}

void gpurma_nccl_fallback_comm_destroy(ncclComm_t comm, int abort)
{
    if (!comm->fallback)
        return;
    (abort ? real.abort : real.destroy)((ncclComm_t)comm->fallback);
    comm->fallback = NULL;
}

ncclResult_t gpurma_nccl_fallback_run(const nccl_op_t *a, const char *why)
{
    ncclComm_t comm = a->comm;
    const char *name = gpurma_nccl_op_name(a->kind);
    ncclComm_t fb = comm->fallback;
    if (!fb || (int)a->op >= ncclNumOps)
        return gpurma_nccl_fail(comm, ncclInvalidUsage,
                                "%s: %s, and no fallback NCCL communicator%s (set "
                                "GPURMA_NCCL_FALLBACK to a libnccl.so.2; it needs a GPU per rank)",
                                name, why, (int)a->op >= ncclNumOps ? " takes PreMulSum" : "");
    if (!__atomic_exchange_n(&real.logged[a->kind], 1, __ATOMIC_RELAXED) ||
        getenv("GPURMA_NCCL_DEBUG"))
        gpurma_nccl_log("rank %d: %s (dtype %d, count %zu) forwarded to the fallback NCCL: %s",
                        comm->rank, name, (int)a->dtype, a->count, why);
    cudaStream_t s = a->stream;
    switch (a->kind) {
    case NCCL_OP_ALLREDUCE:
        return real.allreduce(a->send, a->recv, a->count, a->dtype, a->op, fb, s);
    case NCCL_OP_REDUCE_SCATTER:
        return real.reduce_scatter(a->send, a->recv, a->count, a->dtype, a->op, fb, s);
    case NCCL_OP_REDUCE:
        return real.reduce(a->send, a->recv, a->count, a->dtype, a->op, a->root, fb, s);
    case NCCL_OP_ALLGATHER:
        return real.allgather(a->send, a->recv, a->count, a->dtype, fb, s);
    case NCCL_OP_BROADCAST:
        return real.broadcast(a->send, a->recv, a->count, a->dtype, a->root, fb, s);
    case NCCL_OP_ALLTOALL:
        if (real.alltoall)
            return real.alltoall(a->send, a->recv, a->count, a->dtype, fb, s);
        break;
    case NCCL_OP_GATHER:
        if (real.gather)
            return real.gather(a->send, a->recv, a->count, a->dtype, a->root, fb, s);
        break;
    case NCCL_OP_SCATTER:
        if (real.scatter)
            return real.scatter(a->send, a->recv, a->count, a->dtype, a->root, fb, s);
        break;
    case NCCL_OP_SEND:
        return real.send(a->send, a->count, a->dtype, a->root, fb, s);
    case NCCL_OP_RECV:
        return real.recv(a->recv, a->count, a->dtype, a->root, fb, s);
    default:
        break;
    }
    return gpurma_nccl_fail(comm, ncclInvalidUsage, "%s: the fallback NCCL lacks it", name);
}
