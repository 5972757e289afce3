/*
 * port_memcpy.c - the port engine's memcpy transport: the proxy copies into
 * peer memory this node maps (host backend: POSIX shared memory), or moves
 * it with cross-memory attach for windows on private memory. Everything is
 * complete when exec returns, so it needs no completion, fence or quiet.
 * A subarray is a loop over its rows.
 */
#include "port.h"

static int memcpy_reach(const struct gpurma_win_s *w, int peer)
{
    int path = w->peers[peer].path;
    return !w->gpu && (path == GPURMA_DEV_PATH_LOADSTORE || path == GPURMA_DEV_PATH_HOSTCALL);
}

/* Whether the peer's window is reached by cross-memory attach (private
 * memory), not mapped here. */
static int by_cma(const gpurma_port_decoded_t *op)
{
    return op->win->peers[op->peer].path == GPURMA_DEV_PATH_HOSTCALL;
}

/* n bytes between buf and the peer's window at remote (mapped: that
 * place, where this node maps it). */
static int move(const gpurma_port_decoded_t *op, int is_put, uint64_t remote, char *mapped,
                void *buf, size_t n)
{
    if (by_cma(op))
        return gpurma_cma_xfer(op->win, op->peer, is_put, remote, buf, n);
    if (is_put)
        gpurma_sh_copy(mapped, buf, n, 0, 1);
    else
        gpurma_sh_copy(buf, mapped, n, 0, 1);
    return GPURMA_SUCCESS;
}

/* Every row of the operation (one for a plain put or get). */
static int move_shape(const gpurma_port_decoded_t *op, int is_put)
{
    char *local = is_put ? (char *)(uintptr_t)op->src : op->dst;
    for (uint64_t z = 0; z < op->planes; z++)
        for (uint64_t y = 0; y < op->rows; y++) {
            uint64_t at = z * op->remote_pitch[1] + y * op->remote_pitch[0];
            int rc = move(op, is_put, op->remote + at, op->mapped ? op->mapped + at : NULL,
                          local + z * op->local_pitch[1] + y * op->local_pitch[0], op->size);
            if (rc)
                return rc;
        }
    return GPURMA_SUCCESS;
}

/* LL packets must land as whole 8-byte stores, which memcpy does not
 * promise: packed and stored one by one. */
static int put_packets(const gpurma_port_decoded_t *op)
{
    if (by_cma(op))
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "LL packets need the peer's memory mapped");
    gpurma_dev__store_packets((uint64_t *)op->mapped, op->src, op->size, op->packet_flag,
                              op->packet_size, 0, 1);
    return GPURMA_SUCCESS;
}

static int memcpy_exec(gpurma_port_t *port, void *state, void *wstate,
                       const gpurma_port_decoded_t *op)
{
    (void)port, (void)state, (void)wstate;
    struct gpurma_win_s *w = op->win;
    const gpurma_dev_peer_t *p = &w->peers[op->peer];
    int rc = GPURMA_SUCCESS;
    switch (op->op) {
    case GPURMA_PORT_OP_PUT:
        return op->packet_size ? put_packets(op) : move_shape(op, 1);
    case GPURMA_PORT_OP_PUT_SIGNAL:
        rc = move_shape(op, 1);
        __attribute__((fallthrough)); /* the signal follows its data (release) */
    case GPURMA_PORT_OP_SIGNAL:
        return rc ? rc
                  : gpurma_dev__mem_signal(p, (uint32_t)w->rank, op->signal, op->signal_op,
                                           op->value);
    case GPURMA_PORT_OP_GET:
        return move_shape(op, 0);
    case GPURMA_PORT_OP_PUT_VALUE:
        if (by_cma(op)) { /* little-endian: the low bytes */
            uint64_t v = op->value;
            return gpurma_cma_xfer(w, op->peer, 1, op->remote, &v, op->size);
        }
        gpurma_dev__store_value(op->mapped, op->value, op->size);
        return GPURMA_SUCCESS;
    case GPURMA_PORT_OP_FETCH_ADD:
    case GPURMA_PORT_OP_SWAP:
    case GPURMA_PORT_OP_CAS: {
        gpurma_atomic_kind_t kind = (gpurma_atomic_kind_t)(op->op - GPURMA_PORT_OP_FETCH_ADD);
        if (by_cma(op))
            return gpurma_cma_atomic(w, op->peer, kind, op->remote, op->value, op->compare,
                                     op->result);
        *op->result = gpurma_dev__atomic_at((uint64_t *)op->mapped, (int)kind, op->value,
                                            op->compare);
        return GPURMA_SUCCESS;
    }
    }
    return GPURMA_ERR_INTERNAL;
}

const gpurma_port_xport_t gpurma_port_xport_memcpy = {
    .name  = "memcpy",
    .reach = memcpy_reach,
    .exec  = memcpy_exec,
};
