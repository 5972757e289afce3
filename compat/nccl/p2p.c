/*
 * p2p.c - ncclSend/ncclRecv on a window of staging slots.
 *
 * Each rank's window holds, for every peer, `depth` slots of `chunk` bytes
 * that only that peer writes. A batch (the sends and receives of one group,
 * or one call) moves each pair's messages, in call order, as one stream of
 * chunks numbered from 0: the sender puts chunk q into slot q % depth of its
 * column at the receiver and adds 1 to the receiver's data signal for it;
 * the receiver waits for that signal to reach q + 1, copies the chunk out
 * and adds 1 to the sender's credit signal, which the sender waits on
 * before reusing the slot (credit >= q + 1 - depth).
 *
 * Every batch leaves the signals at 0, so the same calls work when a CUDA
 * graph replays them: the receiver clears its data signal before the credit
 * for its last chunk, and the sender waits for the credit of its last chunk
 * (the receiver has everything) and then clears it.
 *
 * The chunks run in rounds: in round k every queue to a peer sends its k-th
 * chunk, then every queue from a peer takes its k-th chunk; the senders'
 * last waits come after all rounds. A round-k send needs only credits of
 * rounds k - depth and earlier, a round-k receive only round-k sends, and
 * the last waits only the receivers' rounds, so every order of calls in a
 * group completes, on the host (blocking waits that time out and see dead
 * peers) and on a stream alike.
 *
 * Signals: data from peer s is signal s, credit from peer r is signal
 * size + r, and signal 2 * size announces a unique id (ncclCommShrink).
 */
#include <stdlib.h>
#include <string.h>

#include "nccl_internal.h"

#define DEFAULT_CHUNK_GPU  (1u << 20)
#define DEFAULT_CHUNK_HOST (256u << 10)
#define MIN_CHUNK          (16u << 10)
#define DEPTH              2
#define WINDOW_CAP         (256ull << 20) /* slots of all peers, per rank */
#define ID_AREA            4096

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end == 'k' || *end == 'K')
        n <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        n <<= 20, end++;
    if (*end || n < 4096 || n > (1ull << 30)) {
        gpurma_nccl_log("%s=%s ignored: expected 4096 to 1G bytes (k and M suffixes)", name, v);
        return dflt;
    }
    return (size_t)n;
}

static size_t slot_offset(const ncclComm_t comm, int column, uint64_t seq)
{
    return ((size_t)column * DEPTH + (size_t)(seq % DEPTH)) * comm->p2p_chunk;
}

static size_t id_offset(const ncclComm_t comm)
{
    return (size_t)comm->size * DEPTH * comm->p2p_chunk;
}

/* Also decides whether the communicator is on a GPU: device memory for the
 * slots when gpurma has one in use. */
ncclResult_t gpurma_nccl_p2p_setup(ncclComm_t comm)
{
    size_t n = (size_t)comm->size;
    comm->p2p_depth = DEPTH;
    gpurma_win_params_t p = {.field_mask = GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS,
                             .mem_kind = GPURMA_MEM_DEVICE,
                             .num_signals = (uint32_t)(2 * n + 1)};
    for (int attempt = 0; attempt < 2; attempt++) {
        int gpu = p.mem_kind == GPURMA_MEM_DEVICE;
        size_t chunk = env_size("GPURMA_NCCL_P2P_CHUNK", gpu ? DEFAULT_CHUNK_GPU : DEFAULT_CHUNK_HOST);
        /* Many ranks: smaller slots rather than a huge window. */
        while (chunk > MIN_CHUNK && (unsigned long long)chunk * DEPTH * n > WINDOW_CAP)
            chunk /= 2;
        comm->p2p_chunk = chunk;
        size_t bytes = id_offset(comm) + ID_AREA;
        void *base = NULL;
        gpurma_status_t rc = gpurma_win_allocate(comm->team, bytes, &p, &base, &comm->p2p_win);
        if (rc == GPURMA_SUCCESS) {
            comm->gpu = gpu;
            comm->p2p_base = base;
            if (!gpu)
                comm->device = -1;
            return ncclSuccess;
        }
        if (rc != GPURMA_ERR_UNSUPPORTED || !gpu)
            return gpurma_nccl_fail_rc(comm, rc, "init: the send/recv window");
        p.mem_kind = GPURMA_MEM_HOST; /* no GPU in use: the host backend */
    }
    return ncclInternalError;
}

void gpurma_nccl_p2p_teardown(ncclComm_t comm)
{
    if (comm->p2p_win)
        gpurma_win_free(&comm->p2p_win);
}

/* One direction to one peer: the batch's messages in call order. */
typedef struct {
    int              peer;
    int              sending;
    const nccl_op_t **ops;
    int              nops, at; /* current message */
    size_t           done;     /* bytes of it done */
    uint64_t         chunks;   /* chunks of the queue done */
    size_t           left;     /* bytes of the queue not yet moved */
    void            *stream;   /* of the last chunk, for the final wait */
} queue_t;

static size_t op_bytes(const nccl_op_t *op)
{
    return op->count * gpurma_nccl_dtype_size(op->dtype);
}

/* Skips finished (and empty) messages; 1 while the queue has work. */
static int queue_live(queue_t *q)
{
    while (q->at < q->nops && q->done >= op_bytes(q->ops[q->at])) {
        q->at++;
        q->done = 0;
    }
    return q->at < q->nops;
}

static gpurma_status_t send_chunk(ncclComm_t comm, queue_t *q)
{
    const nccl_op_t *op = q->ops[q->at];
    size_t len = op_bytes(op) - q->done;
    if (len > comm->p2p_chunk)
        len = comm->p2p_chunk;
    uint64_t seq = q->chunks;
    const char *src = (const char *)op->send + q->done;
    size_t dst = slot_offset(comm, comm->rank, seq);
    uint32_t credit = (uint32_t)comm->size + (uint32_t)q->peer;
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (comm->gpu) {
        void *s = q->stream = gpurma_nccl_stream(comm, op->stream);
        if (seq >= DEPTH)
            rc = gpurma_wait_until_on_stream(comm->p2p_win, credit, GPURMA_CMP_GE,
                                             seq + 1 - DEPTH, s);
        if (!rc)
            rc = gpurma_put_signal_on_stream(comm->p2p_win, q->peer, dst, src, len,
                                             (uint32_t)comm->rank, GPURMA_SIGNAL_ADD, 1, s);
    } else {
        if (seq >= DEPTH)
            rc = gpurma_wait_until(comm->p2p_win, credit, GPURMA_CMP_GE, seq + 1 - DEPTH);
        if (!rc)
            rc = gpurma_put_signal(comm->p2p_win, q->peer, dst, src, len, (uint32_t)comm->rank,
                                   GPURMA_SIGNAL_ADD, 1);
    }
    if (!rc) {
        q->chunks = seq + 1;
        q->done += len;
        q->left -= len;
    }
    return rc;
}

/* After the rounds: the receiver has taken every chunk (so the sources may
 * be reused), and the credit signal is cleared for the next batch. */
static gpurma_status_t send_finish(ncclComm_t comm, queue_t *q)
{
    if (!q->chunks)
        return GPURMA_SUCCESS;
    uint32_t credit = (uint32_t)comm->size + (uint32_t)q->peer;
    if (comm->gpu) {
        gpurma_status_t rc = gpurma_wait_until_on_stream(comm->p2p_win, credit, GPURMA_CMP_GE,
                                                         q->chunks, q->stream);
        return rc ? rc : gpurma_signal_reset_on_stream(comm->p2p_win, credit, q->stream);
    }
    gpurma_status_t rc = gpurma_wait_until(comm->p2p_win, credit, GPURMA_CMP_GE, q->chunks);
    return rc ? rc : gpurma_signal_reset(comm->p2p_win, credit);
}

static gpurma_status_t recv_chunk(ncclComm_t comm, queue_t *q)
{
    const nccl_op_t *op = q->ops[q->at];
    size_t len = op_bytes(op) - q->done;
    if (len > comm->p2p_chunk)
        len = comm->p2p_chunk;
    uint64_t seq = q->chunks;
    char *dst = (char *)op->recv + q->done;
    const char *slot = comm->p2p_base + slot_offset(comm, q->peer, seq);
    uint32_t credit = (uint32_t)comm->size + (uint32_t)comm->rank;
    uint32_t data = (uint32_t)q->peer;
    /* The last chunk of the queue: clear the data signal before the credit
     * that lets the sender start its next batch. */
    int last = q->left == len;
    gpurma_status_t rc;
    if (comm->gpu) {
        void *s = gpurma_nccl_stream(comm, op->stream);
        rc = gpurma_wait_until_on_stream(comm->p2p_win, data, GPURMA_CMP_GE, seq + 1, s);
        if (!rc && gpurma_nccl_gpu_copy_async(dst, slot, len, s))
            rc = GPURMA_ERR_GPU;
        if (!rc && last)
            rc = gpurma_signal_reset_on_stream(comm->p2p_win, data, s);
        if (!rc)
            rc = gpurma_signal_on_stream(comm->p2p_win, q->peer, credit, GPURMA_SIGNAL_ADD, 1, s);
    } else {
        rc = gpurma_wait_until(comm->p2p_win, data, GPURMA_CMP_GE, seq + 1);
        if (!rc) {
            memcpy(dst, slot, len);
            if (last)
                rc = gpurma_signal_reset(comm->p2p_win, data);
        }
        if (!rc)
            rc = gpurma_signal(comm->p2p_win, q->peer, credit, GPURMA_SIGNAL_ADD, 1);
    }
    if (!rc) {
        q->chunks = seq + 1;
        q->done += len;
        q->left -= len;
    }
    return rc;
}

ncclResult_t gpurma_nccl_p2p_run(ncclComm_t comm, const nccl_op_t *ops, int n)
{
    ncclResult_t res = gpurma_nccl_check_comm(comm, n ? gpurma_nccl_op_name(ops[0].kind) : "p2p");
    if (res != ncclSuccess)
        return res;
    for (int i = 0; i < n; i++)
        if ((res = gpurma_nccl_check_op(&ops[i])) != ncclSuccess)
            return res;
    /* Queues: one per (direction, peer) that the batch uses. */
    queue_t *queues = calloc((size_t)2 * comm->size, sizeof *queues);
    const nccl_op_t **slots = malloc((n > 0 ? (size_t)n : 1) * sizeof *slots);
    if (!queues || !slots) {
        free(queues);
        free(slots);
        return gpurma_nccl_fail(comm, ncclSystemError, "send/recv: out of memory");
    }
    int nq = 2 * comm->size;
    for (int i = 0; i < n; i++) {
        int qi = (ops[i].kind == NCCL_OP_SEND ? 0 : comm->size) + ops[i].root;
        queues[qi].nops++;
    }
    for (int qi = 0, at = 0; qi < nq; qi++) {
        queues[qi].ops = slots + at;
        queues[qi].peer = qi % comm->size;
        queues[qi].sending = qi < comm->size;
        at += queues[qi].nops;
        queues[qi].nops = 0;
    }
    for (int i = 0; i < n; i++) {
        queue_t *q = &queues[(ops[i].kind == NCCL_OP_SEND ? 0 : comm->size) + ops[i].root];
        q->ops[q->nops++] = &ops[i];
        q->left += op_bytes(&ops[i]);
    }
    gpurma_status_t rc = GPURMA_SUCCESS;
    int aborted = 0;
    for (int live = 1; live && !rc;) {
        /* ncclCommAbort from another thread ends a long batch between
         * chunks (a wait already started ends by its timeout) */
        if (__atomic_load_n(&comm->aborted, __ATOMIC_ACQUIRE)) {
            aborted = 1;
            break;
        }
        live = 0;
        for (int qi = 0; qi < nq && !rc; qi++) /* sends before receives */
            if (queue_live(&queues[qi])) {
                live = 1;
                rc = queues[qi].sending ? send_chunk(comm, &queues[qi])
                                        : recv_chunk(comm, &queues[qi]);
            }
    }
    for (int qi = 0; qi < comm->size && !rc && !aborted; qi++)
        rc = send_finish(comm, &queues[qi]);
    free(queues);
    free(slots);
    if (aborted)
        return gpurma_nccl_fail(comm, ncclInvalidUsage,
                                "send/recv: the communicator was aborted during the call");
    return rc ? gpurma_nccl_fail_rc(comm, rc, "send/recv") : ncclSuccess;
}

ncclResult_t gpurma_nccl_p2p_share_id(ncclComm_t comm, const int *alive, gpurma_unique_id_t *id)
{
    int lowest = 0;
    while (lowest < comm->size && !alive[lowest])
        lowest++;
    uint32_t sig = 2u * (uint32_t)comm->size;
    size_t off = id_offset(comm);
    gpurma_status_t rc = GPURMA_SUCCESS;
    comm->shrink_seq++;
    if (comm->rank == lowest) {
        rc = gpurma_get_unique_id(id);
        for (int r = 0; r < comm->size && !rc; r++)
            if (alive[r] && r != comm->rank)
                rc = gpurma_put_signal(comm->p2p_win, r, off, id, sizeof *id, sig,
                                       GPURMA_SIGNAL_ADD, 1);
        if (!rc)
            rc = gpurma_flush(comm->p2p_win, GPURMA_ALL_PEERS);
    } else {
        rc = gpurma_wait_until(comm->p2p_win, sig, GPURMA_CMP_GE, comm->shrink_seq);
        if (!rc)
            rc = gpurma_get(comm->p2p_win, comm->rank, id, off, sizeof *id);
        if (!rc)
            rc = gpurma_flush(comm->p2p_win, comm->rank);
    }
    return rc ? gpurma_nccl_fail_rc(comm, rc, "ncclCommShrink: sharing the new id") : ncclSuccess;
}
