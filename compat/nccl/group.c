/*
 * group.c - ncclGroupStart/End: calls made inside a group are queued and run
 * when the outermost group ends. Each communicator's calls run in the order
 * they were made; consecutive sends and receives run as one batch (p2p.c),
 * so pairs that send to each other do not wait on each other. Calls on
 * several communicators (several ranks in one process, as nccl-tests -g
 * and ncclCommInitAll make) run on one thread per communicator, since each
 * waits for its peers; inits and splits are queued too. A call is checked
 * when it is made (coll.c, gpurma_nccl_check_op): a bad one returns its
 * error there, and the group it was made in then runs none of its calls
 * but the inits and splits, and ends with that error.
 */
#include <stdlib.h>
#include <string.h>

#include "nccl_internal.h"

#define SIM_INFO_MAGIC 0x74685283u

typedef struct {
    int        depth;
    nccl_op_t *ops;
    int        n, cap;
    ncclResult_t error; /* of a call that could not be queued */
} group_t;

static __thread group_t group;

int gpurma_nccl_group_enqueue(const nccl_op_t *op, ncclResult_t *result)
{
    if (group.depth == 0)
        return 0;
    if (group.n == group.cap) {
        int cap = group.cap ? group.cap * 2 : 16;
        nccl_op_t *ops = cap > 0 ? realloc(group.ops, (size_t)cap * sizeof *ops) : NULL;
        if (!ops) {
            *result = gpurma_nccl_fail(op->comm, ncclSystemError, "group: out of memory");
            group.error = *result;
            return 1;
        }
        group.ops = ops;
        group.cap = cap;
    }
    group.ops[group.n++] = *op;
    *result = ncclSuccess;
    return 1;
}

int gpurma_nccl_group_holds(ncclComm_t comm, nccl_op_kind_t kind)
{
    for (int i = 0; i < group.n; i++)
        if ((group.ops[i].comm == comm || group.ops[i].child == comm) &&
            (kind == NCCL_OP_KINDS || group.ops[i].kind == kind))
            return 1;
    return 0;
}

void gpurma_nccl_group_refuse(ncclResult_t result)
{
    if (group.depth > 0 && group.error == ncclSuccess)
        group.error = result;
}

void gpurma_nccl_group_drop(ncclComm_t comm)
{
    int k = 0;
    for (int i = 0; i < group.n; i++) {
        nccl_op_t *op = &group.ops[i];
        /* an init or split dropped never runs: the communicator it makes
         * says so */
        ncclComm_t made = op->kind == NCCL_OP_INIT ? op->comm : op->child;
        if (op->comm != comm)
            group.ops[k++] = *op;
        else if (made)
            __atomic_store_n(&made->init_state, ncclInvalidUsage, __ATOMIC_RELEASE);
    }
    group.n = k;
}

NCCL_API ncclResult_t ncclGroupStart(void)
{
    if (group.depth == 0)
        group.error = ncclSuccess;
    group.depth++;
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclGroupStart)

typedef struct {
    ncclComm_t   comm;
    nccl_op_t   *ops; /* this communicator's, in call order */
    int          n;
    ncclResult_t result;
    pthread_t    thread;
    int          started;
} comm_batch_t;

static ncclResult_t run_ops(ncclComm_t comm, nccl_op_t *ops, int n)
{
    for (int i = 0; i < n;) {
        ncclResult_t res;
        if (ops[i].kind == NCCL_OP_INIT) {
            res = gpurma_nccl_comm_init_now(comm);
            i++;
        } else if (ops[i].kind == NCCL_OP_SPLIT) {
            res = gpurma_nccl_comm_split_now(&ops[i]);
            i++;
        } else if (ops[i].kind == NCCL_OP_SEND || ops[i].kind == NCCL_OP_RECV) {
            int j = i;
            while (j < n && (ops[j].kind == NCCL_OP_SEND || ops[j].kind == NCCL_OP_RECV))
                j++;
            res = gpurma_nccl_p2p_run(comm, ops + i, j - i);
            i = j;
        } else {
            res = gpurma_nccl_run_coll(&ops[i]);
            i++;
        }
        if (res != ncclSuccess)
            return res;
    }
    return ncclSuccess;
}

static void *run_batch(void *arg)
{
    comm_batch_t *b = arg;
    /* The thread is new: make the communicator's GPU current, as the
     * caller's thread had it when it queued the calls. */
    if (b->comm->device >= 0)
        gpurma_nccl_gpu_set_device(b->comm->device);
    b->result = run_ops(b->comm, b->ops, b->n);
    return NULL;
}

/* Splits ops by communicator and runs them. */
static ncclResult_t run_group(nccl_op_t *ops, int n)
{
    /* One communicator (nccl-tests wraps every call in a group): in order,
     * on this thread, without the bookkeeping below. */
    int one = 1;
    for (int i = 1; i < n && one; i++)
        one = ops[i].comm == ops[0].comm;
    if (one)
        return n ? run_ops(ops[0].comm, ops, n) : ncclSuccess;
    comm_batch_t *batches = calloc((size_t)(n ? n : 1), sizeof *batches);
    nccl_op_t *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    if (!batches || !sorted) {
        free(batches);
        free(sorted);
        return gpurma_nccl_fail(NULL, ncclSystemError, "ncclGroupEnd: out of memory");
    }
    int nb = 0;
    for (int i = 0; i < n; i++) {
        int b = 0;
        while (b < nb && batches[b].comm != ops[i].comm)
            b++;
        if (b == nb)
            batches[nb++].comm = ops[i].comm;
        batches[b].n++;
    }
    for (int b = 0, at = 0; b < nb; b++) {
        batches[b].ops = sorted + at;
        at += batches[b].n;
        batches[b].n = 0;
    }
    for (int i = 0; i < n; i++)
        for (int b = 0; b < nb; b++)
            if (batches[b].comm == ops[i].comm) {
                batches[b].ops[batches[b].n++] = ops[i];
                break;
            }
    ncclResult_t res = ncclSuccess;
    if (nb == 1) {
        res = run_ops(batches[0].comm, batches[0].ops, batches[0].n);
    } else {
        int saved = gpurma_nccl_gpu_current_device();
        for (int b = 0; b < nb; b++)
            batches[b].started =
                pthread_create(&batches[b].thread, NULL, run_batch, &batches[b]) == 0;
        for (int b = 0; b < nb; b++) {
            if (batches[b].started)
                pthread_join(batches[b].thread, NULL);
            else
                batches[b].result = gpurma_nccl_fail(batches[b].comm, ncclSystemError,
                                                     "ncclGroupEnd: cannot start a thread");
            if (res == ncclSuccess)
                res = batches[b].result;
        }
        if (saved >= 0)
            gpurma_nccl_gpu_set_device(saved);
    }
    free(sorted);
    free(batches);
    return res;
}

static ncclResult_t end_group(int simulate)
{
    if (group.depth == 0)
        return gpurma_nccl_fail(NULL, ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--group.depth > 0)
        return ncclSuccess;
    nccl_op_t *ops = group.ops;
    int n = group.n;
    ncclResult_t queued = group.error;
    group.ops = NULL;
    group.n = group.cap = 0;
    group.error = ncclSuccess;
    /* Only the inits and splits happen when simulating (the rest is
     * estimated) and after a call the group refused: nothing else of such a
     * group runs, but the peers' inits and splits wait for this rank's. */
    if (simulate || queued != ncclSuccess) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (ops[i].kind == NCCL_OP_INIT || ops[i].kind == NCCL_OP_SPLIT)
                ops[k++] = ops[i];
        n = k;
    }
    ncclResult_t res = run_group(ops, n);
    free(ops);
    if (queued != ncclSuccess)
        return gpurma_nccl_fail(NULL, queued,
                                "ncclGroupEnd: a call of this group was refused when it was made "
                                "(%s); none of the group's calls ran but communicator inits",
                                ncclGetErrorString(queued));
    return res;
}

NCCL_API ncclResult_t ncclGroupEnd(void) { return end_group(0); }
NCCL_PROFILING_ALIAS(ncclGroupEnd)

/* The estimate is a simple model: 5 us per call plus the bytes each rank
 * moves at 20 GB/s. NCCL's comes from its tuning tables; either is a guess
 * for schedulers, not a measurement. */
NCCL_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
    if (!simInfo || simInfo->magic != SIM_INFO_MAGIC)
        return gpurma_nccl_fail(NULL, ncclInvalidArgument,
                                "ncclGroupSimulateEnd: simInfo was not set up with "
                                "NCCL_SIM_INFO_INITIALIZER");
    double us = 0;
    for (int i = 0; i < group.n; i++) {
        const nccl_op_t *op = &group.ops[i];
        if (op->kind == NCCL_OP_INIT || op->kind == NCCL_OP_SPLIT)
            continue;
        double bytes = (double)op->count * (double)gpurma_nccl_dtype_size(op->dtype);
        us += 5.0 + bytes / 20e3;
    }
    ncclResult_t res = end_group(1);
    if (res == ncclSuccess)
        simInfo->estimatedTime = (float)us;
    return res;
}
NCCL_PROFILING_ALIAS(ncclGroupSimulateEnd)
