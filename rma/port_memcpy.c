/*
 * port_memcpy.c - the port engine's memcpy transport: the proxy copies into
 * peer memory this node maps (host backend: POSIX shared memory), or moves
 * it with cross-memory attach for windows on private memory. Everything is
 * complete when exec returns, so it needs no completion, fence or quiet.
 */
#include "port.h"

static int memcpy_reach(const struct gpurma_win_s *w, int peer)
{
    int path = w->peers[peer].path;
    return !w->gpu && (path == GPURMA_DEV_PATH_LOADSTORE || path == GPURMA_DEV_PATH_HOSTCALL);
}

/* Bytes between this process and the peer's window at off. */
static int move(struct gpurma_win_s *w, int peer, int is_put, uint64_t off, void *buf, size_t n)
{
    const gpurma_dev_peer_t *p = &w->peers[peer];
    if (p->path == GPURMA_DEV_PATH_HOSTCALL)
        return gpurma_cma_xfer(w, peer, is_put, off, buf, n);
    if (is_put)
        gpurma_sh_copy(p->base + off, buf, n, 0, 1);
    else
        gpurma_sh_copy(buf, p->base + off, n, 0, 1);
    return GPURMA_SUCCESS;
}

/* LL packets must land as whole 8-byte stores, which memcpy does not
 * promise: packed and stored one by one. */
static int put_packets(struct gpurma_win_s *w, const gpurma_port_desc_t *d)
{
    const gpurma_dev_peer_t *p = &w->peers[d->peer];
    if (p->path != GPURMA_DEV_PATH_LOADSTORE)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "LL packets need the peer's memory mapped");
    gpurma_dev__store_packets((uint64_t *)(p->base + d->dst), gpurma_port_src(w, d), d->size,
                              (uint32_t)d->value, gpurma_port_packet_size(d), 0, 1);
    return GPURMA_SUCCESS;
}

static int memcpy_exec(gpurma_port_t *port, void *state, struct gpurma_win_s *w, void *wstate,
                       const gpurma_port_desc_t *d, uint64_t *result)
{
    (void)port, (void)state, (void)wstate;
    const gpurma_dev_peer_t *p = &w->peers[d->peer];
    int rc = GPURMA_SUCCESS;
    switch (d->op) {
    case GPURMA_PORT_OP_PUT:
        if (d->flags & GPURMA_PORT_F_PACKETS)
            return put_packets(w, d);
        return move(w, d->peer, 1, d->dst, (void *)(uintptr_t)gpurma_port_src(w, d), d->size);
    case GPURMA_PORT_OP_PUT_SIGNAL:
        rc = move(w, d->peer, 1, d->dst, (void *)(uintptr_t)gpurma_port_src(w, d), d->size);
        __attribute__((fallthrough)); /* the signal follows its data (release) */
    case GPURMA_PORT_OP_SIGNAL:
        return rc ? rc
                  : gpurma_dev__mem_signal(p, (uint32_t)w->rank, d->signal,
                                           (gpurma_signal_op_t)d->signal_op, d->value);
    case GPURMA_PORT_OP_GET:
        return move(w, d->peer, 0, d->src, gpurma_port_get_dst(w, d), d->size);
    case GPURMA_PORT_OP_PUT_VALUE:
        if (p->path == GPURMA_DEV_PATH_HOSTCALL) { /* little-endian: the low bytes */
            uint64_t v = d->value;
            return gpurma_cma_xfer(w, d->peer, 1, d->dst, &v, d->size);
        }
        gpurma_dev__store_value(p->base + d->dst, d->value, d->size);
        return GPURMA_SUCCESS;
    case GPURMA_PORT_OP_FETCH_ADD:
    case GPURMA_PORT_OP_SWAP:
    case GPURMA_PORT_OP_CAS: {
        gpurma_atomic_kind_t kind = (gpurma_atomic_kind_t)(d->op - GPURMA_PORT_OP_FETCH_ADD);
        if (p->path == GPURMA_DEV_PATH_HOSTCALL)
            return gpurma_cma_atomic(w, d->peer, kind, d->dst, d->value, d->compare, result);
        *result = gpurma_dev__atomic_at((uint64_t *)(p->base + d->dst), (int)kind, d->value,
                                        d->compare);
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
