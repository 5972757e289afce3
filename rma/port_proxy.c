/*
 * port_proxy.c - the port engine's proxy: it consumes descriptors in FIFO
 * order, in batches, checks each against the registered windows, decodes it
 * into the operation a transport executes (gpurma_port_decoded_t), executes
 * it with the peer's transport, and reports what failed. The window side
 * (building and pushing descriptors, flush, quiet) is port_engine.c.
 * Host-initiated operations push descriptors like any device thread would,
 * so both share one ordering and one completion rule:
 *
 *   - descriptors from one pusher execute in push order;
 *   - a signal is issued only after the puts before it (UCX: a worker fence);
 *   - `done` advances past a batch only when every operation in it has
 *     completed locally (sources reusable); flush waits on `done`;
 *   - QUIET waits for remote completion of everything before it.
 *
 * The proxy never executes a descriptor that names an unknown window, a
 * peer out of range, or bytes outside either window: it counts the error,
 * records the reason, and the pusher's next flush/quiet reports it.
 */
#define _GNU_SOURCE /* CPU_COUNT */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "port.h"

#define PORT_FIFO_CAPACITY 1024
#define PORT_BATCH 64

static const char *const op_names[] = {"?", "put", "get", "put_value", "signal", "put_signal",
                                       "fetch_add", "swap", "compare_swap", "quiet", "fence", "shape"};
_Static_assert(sizeof(op_names) / sizeof(op_names[0]) == GPURMA_PORT_OP_COUNT_,
               "a name for every port operation");

/* ----------------------------------------------------------- validation */

static int is_power_of_ten(uint64_t n)
{
    while (n >= 10 && n % 10 == 0)
        n /= 10;
    return n == 1;
}

void gpurma_port_error(gpurma_port_t *port, int status, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&port->error_lock);
    va_start(ap, fmt);
    vsnprintf(port->last_error, sizeof(port->last_error), fmt, ap);
    va_end(ap);
    /* A dead peer fails every descriptor queued to it: log the first error
     * of a kind, then how many followed it at 10, 100, 1000... so that a
     * flood neither hides other lines nor fills the disk. */
    uint64_t n = status == port->last_status ? ++port->repeats : (port->repeats = 0);
    port->last_status = status;
    if (n == 0)
        GPURMA_LOG(GPURMA_LOG_ERROR, GPURMA_SUB_PORT, "%s", port->last_error);
    else if (is_power_of_ten(n))
        GPURMA_LOG(GPURMA_LOG_ERROR, GPURMA_SUB_PORT, "%llu more error(s) of this kind; the last: %s",
                   (unsigned long long)n, port->last_error);
    pthread_mutex_unlock(&port->error_lock);
    __atomic_fetch_add(&port->fifo->errors, 1, __ATOMIC_RELEASE);
}

/* Threads
 * that flush at the same time race for them: the one whose exchange moves
 * errors_seen forward reports them, once. */
int gpurma_port_take_errors(gpurma_port_t *port)
{
    uint64_t e = __atomic_load_n(&port->fifo->errors, __ATOMIC_ACQUIRE);
    uint64_t seen = __atomic_load_n(&port->errors_seen, __ATOMIC_RELAXED);
    do {
        if (seen >= e)
            return GPURMA_SUCCESS;
    } while (!__atomic_compare_exchange_n(&port->errors_seen, &seen, e, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    char text[sizeof(port->last_error)];
    pthread_mutex_lock(&port->error_lock);
    int status = port->last_status;
    memcpy(text, port->last_error, sizeof(text));
    pthread_mutex_unlock(&port->error_lock);
    return gpurma_set_error(status ? status : GPURMA_ERR_TRANSPORT, "%s", text);
}

static int reject(gpurma_port_t *port, const gpurma_port_desc_t *d, const char *why)
{
    gpurma_port_error(port, GPURMA_ERR_TRANSPORT,
               "port proxy of rank %d rejected a descriptor (op %u, window %u, peer %d, dst %llu, "
               "src %llu, size %llu): %s",
               port->ctx->rank, d->op, d->win_id, d->peer, (unsigned long long)d->dst,
               (unsigned long long)d->src, (unsigned long long)d->size, why);
    return GPURMA_ERR_INVALID_ARG;
}

static int in_window(uint64_t off, uint64_t n, uint64_t size) { return off <= size && n <= size - off; }

static int packet_size(const gpurma_port_desc_t *d)
{
    return d->flags & GPURMA_PORT_F_PACKET16 ? 16 : 8;
}

static int is_atomic(uint16_t op)
{
    return op == GPURMA_PORT_OP_FETCH_ADD || op == GPURMA_PORT_OP_SWAP || op == GPURMA_PORT_OP_CAS;
}

/* The bytes a subarray spans on each side (dst side first), through the
 * shape check the host calls use; nonzero for a shape that overlaps
 * itself or overflows. */
static int shape_extents(const gpurma_port_desc_t *d, const gpurma_port_desc_t *e,
                         uint64_t *dst_extent, uint64_t *src_extent)
{
    gpurma_subarray_t s = {.elem_bytes = 1,
                           .count = {d->size, d->compare, e->compare},
                           .dst_pitch = {e->dst, e->size},
                           .src_pitch = {e->src, e->value}};
    size_t de, se;
    if (d->size > SIZE_MAX || d->compare > SIZE_MAX || e->compare > SIZE_MAX ||
        e->dst > SIZE_MAX || e->size > SIZE_MAX || e->src > SIZE_MAX || e->value > SIZE_MAX ||
        gpurma_dev__shape_extent(&s, s.dst_pitch, &de) ||
        gpurma_dev__shape_extent(&s, s.src_pitch, &se))
        return -1;
    *dst_extent = de;
    *src_extent = se;
    return 0;
}

/* Returns the window the descriptor names, or NULL after rejecting it. e
 * is the shape slot of a subarray (F_SHAPE), else NULL. */
static struct gpurma_win_s *validate(gpurma_port_t *port, const gpurma_port_desc_t *d,
                                     const gpurma_port_desc_t *e)
{
    if (d->win_id >= port->nwins || !port->wins[d->win_id])
        return reject(port, d, "no such window"), NULL;
    struct gpurma_win_s *w = port->wins[d->win_id];
    if (d->peer < 0 || d->peer >= w->size)
        return reject(port, d, "peer out of range"), NULL;
    uint64_t peer_size = w->peers[d->peer].size;
    uint64_t local_size = w->peers[w->rank].size;
    int raw = d->flags & GPURMA_PORT_F_SRC_RAW;
    /* What each side spans: size bytes, or a subarray's extent there. */
    uint64_t dst_len = d->size, src_len = d->size;
    if (d->flags & GPURMA_PORT_F_SHAPE) {
        if (!e || (d->op != GPURMA_PORT_OP_PUT && d->op != GPURMA_PORT_OP_GET &&
                   d->op != GPURMA_PORT_OP_PUT_SIGNAL) ||
            (d->flags & GPURMA_PORT_F_PACKETS))
            return reject(port, d, "a shape on an operation that takes none"), NULL;
        if (e->op != GPURMA_PORT_OP_SHAPE || e->win_id != d->win_id || e->peer != d->peer)
            return reject(port, d, "a subarray without its shape slot"), NULL;
        if (shape_extents(d, e, &dst_len, &src_len))
            return reject(port, d, "a shape whose rows or planes overlap, or overflow"), NULL;
    }
    switch (d->op) {
    case GPURMA_PORT_OP_PUT:
    case GPURMA_PORT_OP_PUT_SIGNAL:
        if ((d->flags & GPURMA_PORT_F_PACKETS) &&
            (d->op != GPURMA_PORT_OP_PUT || (d->dst & (uint64_t)(packet_size(d) - 1)) ||
             d->size > peer_size ||
             !in_window(d->dst, gpurma_dev__packet_bytes(d->size, packet_size(d)), peer_size)))
            return reject(port, d, "LL packets misaligned or outside the target window"), NULL;
        if (!in_window(d->dst, dst_len, peer_size))
            return reject(port, d, "destination outside the target window"), NULL;
        if (!raw && !in_window(d->src, src_len, local_size))
            return reject(port, d, "source outside the origin window"), NULL;
        if (raw && src_len && !d->src)
            return reject(port, d, "NULL source"), NULL;
        break;
    case GPURMA_PORT_OP_GET:
        if (!in_window(d->src, src_len, peer_size))
            return reject(port, d, "source outside the target window"), NULL;
        if (!raw && !in_window(d->dst, dst_len, local_size))
            return reject(port, d, "destination outside the origin window"), NULL;
        if (raw && dst_len && !d->dst)
            return reject(port, d, "NULL destination"), NULL;
        break;
    case GPURMA_PORT_OP_PUT_VALUE:
        if ((d->size != 1 && d->size != 2 && d->size != 4 && d->size != 8) ||
            (d->dst & (d->size - 1)) || !in_window(d->dst, d->size, peer_size))
            return reject(port, d, "bad put_value size, alignment or offset"), NULL;
        break;
    case GPURMA_PORT_OP_FETCH_ADD:
    case GPURMA_PORT_OP_SWAP:
    case GPURMA_PORT_OP_CAS:
        if ((d->dst & 7) || !in_window(d->dst, 8, peer_size))
            return reject(port, d, "atomic offset misaligned or outside the window"), NULL;
        break;
    case GPURMA_PORT_OP_SHAPE:
        return reject(port, d, "a shape slot without its subarray"), NULL;
    default:
        break;
    }
    if ((d->op == GPURMA_PORT_OP_SIGNAL || d->op == GPURMA_PORT_OP_PUT_SIGNAL) &&
        (d->signal >= w->num_signals ||
         (d->signal_op != GPURMA_SIGNAL_SET && d->signal_op != GPURMA_SIGNAL_ADD)))
        return reject(port, d, "bad signal id or signal op"), NULL;
    if (d->counter != GPURMA_NO_COUNTER && d->counter >= w->num_counters)
        return reject(port, d, "bad counter id"), NULL;
    return w;
}

/* ------------------------------------------------------------ execution */

/* Each transport and its state on this context (NULL: none yet). */
static void *xstate(const gpurma_port_t *port, int i)
{
    return __atomic_load_n(&port->xstate[i], __ATOMIC_ACQUIRE);
}

/* Runs one per-context step (complete, fence, quiet) of every transport
 * that has state here; the first failure. */
typedef int (*xport_step_t)(gpurma_port_t *port, void *state);
static int each_transport(gpurma_port_t *port, size_t step_offset)
{
    int rc = GPURMA_SUCCESS;
    for (int i = 0; i < gpurma_port_nxports; i++) {
        xport_step_t step =
            *(const xport_step_t *)((const char *)gpurma_port_xports[i] + step_offset);
        void *state = xstate(port, i);
        if (step && state) {
            int r = step(port, state);
            if (!rc)
                rc = r;
        }
    }
    return rc;
}
#define EACH_TRANSPORT(port, step) each_transport(port, offsetof(gpurma_port_xport_t, step))

/* Where the old value of the atomic d at pos goes: its result slot, once
 * the reader of the atomic that last held it has taken its value or given
 * it up (gpurma_port_result_t); the FIFO's discard word when nobody reads
 * it (F_NO_RESULT, or a reader that gave up before it was executed); NULL
 * (rejected) if the slot is not freed within the timeout. A reader that
 * timed out used to leave its slot busy for good: every later lap then
 * waited a whole timeout there and was rejected, which held a rank whose
 * target had stalled for many minutes (tests/fault/atomics-load.sh,
 * "stalled"). */
static uint64_t *claim_result(gpurma_port_t *port, gpurma_port_fifo_t *f,
                              const gpurma_port_desc_t *d, uint64_t pos)
{
    gpurma_port_result_t *r = &f->results[pos & (f->capacity - 1)];
    if ((d->flags & GPURMA_PORT_F_NO_RESULT) ||
        __atomic_load_n(&r->abandoned, __ATOMIC_ACQUIRE) == pos + 1)
        return &f->discard;
    uint64_t start = gpurma_now_ns(), owner;
    for (uint64_t i = 0; (owner = __atomic_load_n(&r->busy, __ATOMIC_ACQUIRE)) != 0; i++) {
        if (__atomic_load_n(&r->abandoned, __ATOMIC_ACQUIRE) >= owner)
            break; /* its reader gave up: the slot is the proxy's again */
        if (f->timeout_ns && gpurma_now_ns() - start > f->timeout_ns)
            return reject(port, d, "the result of an atomic one lap earlier was never read"),
                   NULL;
        gpurma_backoff(i);
    }
    __atomic_store_n(&r->busy, pos + 1, __ATOMIC_RELAXED);
    return &r->value;
}

/* The checked descriptor d (and e, its shape slot, or NULL) of window w
 * as the operation a transport executes: local sides resolved (raw
 * addresses of host pushers, window offsets of kernels), the remote side
 * where this node maps it, the shape with local and remote pitches. */
static void decode(struct gpurma_win_s *w, const gpurma_port_desc_t *d,
                   const gpurma_port_desc_t *e, uint64_t *result, gpurma_port_decoded_t *op)
{
    int raw = d->flags & GPURMA_PORT_F_SRC_RAW, is_get = d->op == GPURMA_PORT_OP_GET;
    uint64_t local = is_get ? d->dst : d->src;
    char *local_addr = raw ? (char *)(uintptr_t)local : (char *)w->base + local;
    const gpurma_dev_peer_t *p = &w->peers[d->peer];
    *op = (gpurma_port_decoded_t){
        .win = w, .op = d->op, .peer = d->peer, .size = d->size, .rows = 1, .planes = 1,
        .value = d->value, .compare = d->compare, .signal = d->signal,
        .signal_op = (gpurma_signal_op_t)d->signal_op, .result = result};
    if (is_get)
        op->dst = local_addr;
    else
        op->src = local_addr;
    op->remote = is_get ? d->src : d->dst;
    /* No base: an empty window, where nothing is moved. */
    op->mapped = p->path == GPURMA_DEV_PATH_LOADSTORE && p->base ? p->base + op->remote : NULL;
    if (d->op == GPURMA_PORT_OP_PUT && (d->flags & GPURMA_PORT_F_PACKETS)) {
        op->packet_size = packet_size(d);
        op->packet_flag = (uint32_t)d->value;
    }
    if (e) {
        /* The shape slot names pitches by side (dst, src); a get's local
         * side is its dst. */
        uint64_t dst_pitch[2] = {e->dst, e->size}, src_pitch[2] = {e->src, e->value};
        op->rows = d->compare;
        op->planes = e->compare;
        op->compare = 0;
        memcpy(op->remote_pitch, is_get ? src_pitch : dst_pitch, sizeof(op->remote_pitch));
        memcpy(op->local_pitch, is_get ? dst_pitch : src_pitch, sizeof(op->local_pitch));
    }
}

static int drain_locked(gpurma_port_t *port, gpurma_port_fifo_t *f);

/* Executes d (e: its shape slot, or NULL) at pos; op keeps the decoded
 * operation until the batch completes. */
static void execute(gpurma_port_t *port, gpurma_port_fifo_t *f, const gpurma_port_desc_t *d,
                    const gpurma_port_desc_t *e, uint64_t pos, gpurma_port_decoded_t *op)
{
    int rc = GPURMA_SUCCESS;
    if (d->op == GPURMA_PORT_OP_QUIET || d->op == GPURMA_PORT_OP_FENCE) {
        /* A host thread's quiet or fence also covers what kernels pushed
         * before it (a kernel the host has synchronized with): the kernels'
         * FIFO is emptied first. */
        if (f == port->fifo && port->dev_fifo)
            while (drain_locked(port, port->dev_fifo))
                ;
        gpurma_sh_fence_system();
        rc = d->op == GPURMA_PORT_OP_QUIET ? EACH_TRANSPORT(port, quiet)
                                           : EACH_TRANSPORT(port, fence);
    } else if (d->op < GPURMA_PORT_OP_PUT || d->op >= GPURMA_PORT_OP_COUNT_) {
        reject(port, d, "unknown operation");
        return;
    } else {
        struct gpurma_win_s *w = validate(port, d, e);
        uint64_t *result = NULL;
        if (!w || (is_atomic(d->op) && !(result = claim_result(port, f, d, pos))))
            return;
        decode(w, d, e, result, op);
        gpurma_port_win_t *pw = gpurma_port_win(w);
        int x = pw->xport[d->peer];
        rc = gpurma_port_xports[x]->exec(port, xstate(port, x), pw->xwin[x], op);
    }
    if (rc && (d->op == GPURMA_PORT_OP_QUIET || d->op == GPURMA_PORT_OP_FENCE))
        gpurma_port_error(port, rc, "port proxy of rank %d: %s failed: %s (%s)", port->ctx->rank,
                   op_names[d->op], gpurma_strerror(rc), gpurma_error_text());
    else if (rc)
        gpurma_port_error(port, rc, "port proxy of rank %d: %s to peer %d failed: %s (%s)",
                   port->ctx->rank, op_names[d->op], d->peer, gpurma_strerror(rc),
                   gpurma_error_text());
}


/* The counter a completed descriptor bumps, or NULL: kernels count in the
 * window's device counters (GPU memory for GPU windows, where the copy
 * engine's stream bumps them after the data), host pushers in its host
 * counters. */
static uint64_t *counter_of(gpurma_port_t *port, const gpurma_port_fifo_t *f,
                            const gpurma_port_desc_t *d, int *on_gpu)
{
    if (d->counter == GPURMA_NO_COUNTER || d->win_id >= port->nwins || !port->wins[d->win_id])
        return NULL;
    struct gpurma_win_s *w = port->wins[d->win_id];
    if (d->counter >= w->num_counters)
        return NULL;
    uint64_t *counters = f == port->dev_fifo ? w->dev.counters : w->counters;
    *on_gpu = counters != w->counters;
    return &counters[d->counter];
}

static void batch_error(gpurma_port_t *port, int status, const char *what)
{
    gpurma_port_error(port, status, "port proxy of rank %d: %s: %s", port->ctx->rank, what,
               gpurma_error_text());
}

/* Executes up to a batch of committed descriptors of f, completes them
 * locally, bumps their counters and publishes them as done. Returns how
 * many it took. */
static int drain(gpurma_port_t *port, gpurma_port_fifo_t *f)
{
    pthread_rwlock_rdlock(&port->reg_lock);
    int n = drain_locked(port, f);
    pthread_rwlock_unlock(&port->reg_lock);
    return n;
}

/* Whether f certainly holds nothing to take: a host FIFO whose reservation
 * counter the proxy can read (head at tail). Checked before the ring is
 * touched: an idle poll then reads one shared line instead of copying a
 * slot of the previous lap and hashing it, which also took that line from
 * the pusher about to write it. Kernels' FIFOs keep their counter in GPU
 * memory: for them the ring itself says. */
static int fifo_idle(const gpurma_port_fifo_t *f)
{
    return f->head_ptr == &f->head && __atomic_load_n(&f->head, __ATOMIC_ACQUIRE) ==
                                          __atomic_load_n(&f->tail, __ATOMIC_RELAXED);
}

/* The transport that can publish the batch's completion itself: every
 * descriptor is a data operation of one transport with complete_async and
 * bumps no host counter (the proxy bumps those after completion); -1
 * otherwise, and always for quiet and fence. */
static int async_transport(gpurma_port_t *port, const gpurma_port_fifo_t *f,
                           const gpurma_port_desc_t *batch, int n)
{
    int x = -1;
    for (int i = 0; i < n; i++) {
        const gpurma_port_desc_t *d = &batch[i];
        int on_gpu = 0;
        if (d->op == GPURMA_PORT_OP_SHAPE) /* part of the descriptor before it */
            continue;
        if (d->op == GPURMA_PORT_OP_QUIET || d->op == GPURMA_PORT_OP_FENCE ||
            d->win_id >= port->nwins || !port->wins[d->win_id] || d->peer < 0 ||
            d->peer >= port->wins[d->win_id]->size ||
            (counter_of(port, f, d, &on_gpu) && !on_gpu))
            return -1;
        int xi = gpurma_port_win(port->wins[d->win_id])->xport[d->peer];
        if ((x >= 0 && xi != x) || !gpurma_port_xports[xi]->complete_async)
            return -1;
        x = xi;
    }
    return x;
}

/* drain, with the registry's read lock held. The committed descriptors
 * are taken first and their slots freed with one store of tail (one
 * doorbell for the pushers per batch, not per descriptor), then executed. */
static int drain_locked(gpurma_port_t *port, gpurma_port_fifo_t *f)
{
    gpurma_port_desc_t batch[PORT_BATCH];
    gpurma_port_decoded_t ops[PORT_BATCH]; /* live until the batch completes */
    uint64_t pos = f->tail, most = PORT_BATCH;
    /* Batches completing asynchronously: at most a ring's worth in flight
     * past done, so the copy engine's queue stays bounded. */
    uint64_t in_flight = pos - __atomic_load_n(&f->done, __ATOMIC_ACQUIRE);
    if (in_flight + most > f->capacity)
        most = in_flight >= f->capacity ? 0 : f->capacity - in_flight;
    /* Host FIFOs: no slot past the reserved ones is looked at (it holds
     * the previous lap's descriptor, hashed in vain). */
    if (f->head_ptr == &f->head) {
        uint64_t reserved = __atomic_load_n(&f->head, __ATOMIC_ACQUIRE) - pos;
        most = reserved < most ? reserved : most;
    }
    int n = 0;
    while ((uint64_t)n < most) {
        const gpurma_port_desc_t *slot = &f->ring[(pos + (uint64_t)n) & (f->capacity - 1)];
        uint64_t lap = (pos + (uint64_t)n) / f->capacity + 1;
        uint32_t commit = __atomic_load_n(&slot->commit, __ATOMIC_ACQUIRE);
        /* Hashed in place, then copied: the slot stays as it is until
         * tail passes it. */
        if (!commit || gpurma_port_seal(slot, lap) != commit)
            break; /* not this lap's, or not all of it has landed yet */
        /* A subarray is taken with its shape slot or not at all (both were
         * reserved at once; the second may not have landed yet). */
        if ((slot->flags & GPURMA_PORT_F_SHAPE) && slot->op != GPURMA_PORT_OP_SHAPE) {
            const gpurma_port_desc_t *next =
                &f->ring[(pos + (uint64_t)n + 1) & (f->capacity - 1)];
            uint64_t next_lap = (pos + (uint64_t)n + 1) / f->capacity + 1;
            uint32_t next_commit = __atomic_load_n(&next->commit, __ATOMIC_ACQUIRE);
            if ((uint64_t)n + 1 >= most || !next_commit ||
                gpurma_port_seal(next, next_lap) != next_commit)
                break;
            batch[n++] = *slot;
            batch[n++] = *next;
            continue;
        }
        batch[n++] = *slot;
    }
    if (!n)
        return 0;
    /* The slots are copied: pushers may refill them. */
    __atomic_store_n(&f->tail, pos + (uint64_t)n, __ATOMIC_RELEASE);
    uint64_t executed = 0;
    for (int i = 0; i < n; i++) {
        if (batch[i].op == GPURMA_PORT_OP_SHAPE) { /* its subarray took it, or it is astray */
            if (i == 0 || !(batch[i - 1].flags & GPURMA_PORT_F_SHAPE))
                reject(port, &batch[i], "a shape slot without its subarray");
            continue;
        }
        const gpurma_port_desc_t *shape =
            (batch[i].flags & GPURMA_PORT_F_SHAPE) && i + 1 < n ? &batch[i + 1] : NULL;
        execute(port, f, &batch[i], shape, pos + (uint64_t)i, &ops[i]);
        executed += batch[i].op != GPURMA_PORT_OP_QUIET && batch[i].op != GPURMA_PORT_OP_FENCE;
        int on_gpu = 0;
        uint64_t *c = counter_of(port, f, &batch[i], &on_gpu);
        if (c && on_gpu) { /* bumped by the transport, after the data */
            struct gpurma_win_s *w = port->wins[batch[i].win_id];
            int x = gpurma_port_win(w)->xport[batch[i].peer];
            const gpurma_port_xport_t *t = gpurma_port_xports[x];
            int rc = t->count ? t->count(port, xstate(port, x), c)
                              : gpurma_set_error(GPURMA_ERR_INTERNAL, "no GPU counters on %s",
                                                 t->name);
            if (rc)
                batch_error(port, rc, "counting on the GPU");
        }
    }
    /* Read by gpurma_port_descriptors after a flush saw done: published first. */
    __atomic_fetch_add(&port->descriptors, executed, __ATOMIC_RELEASE);
    int x = async_transport(port, f, batch, n);
    if (x >= 0 &&
        !gpurma_port_xports[x]->complete_async(port, xstate(port, x), &f->done, pos + (uint64_t)n))
        return n;
    int rc = EACH_TRANSPORT(port, complete);
    if (rc)
        batch_error(port, rc, "completing a batch");
    for (int i = 0; i < n; i++) {
        int on_gpu = 0;
        uint64_t *c = batch[i].op == GPURMA_PORT_OP_SHAPE ? NULL
                                                         : counter_of(port, f, &batch[i], &on_gpu);
        if (c && !on_gpu)
            gpurma_sh_fetch_add_u64(c, 1);
    }
    __atomic_store_n(&f->done, pos + (uint64_t)n, __ATOMIC_RELEASE);
    return n;
}

/* Transports that need this process to make progress (the targets of
 * emulated UCX RMA); the work done. */
static int progress(gpurma_port_t *port)
{
    int n = 0;
    for (int i = 0; i < gpurma_port_nxports; i++) {
        void *state = xstate(port, i);
        if (gpurma_port_xports[i]->progress && state)
            n += gpurma_port_xports[i]->progress(port, state);
    }
    return n;
}

/* Whether a transport here has state to progress (UCX's worker). */
static int has_progress(const gpurma_port_t *port)
{
    for (int i = 0; i < gpurma_port_nxports; i++)
        if (gpurma_port_xports[i]->progress && xstate(port, i))
            return 1;
    return 0;
}

/* A waiting thread's turn: nothing to do (no lock taken) when the host
 * FIFO is empty and nothing needs progress, which is every poll of a wait
 * whose work the proxy already did. */
static int poll_one(gpurma_port_t *port)
{
    if (!port || (fifo_idle(port->fifo) && !has_progress(port)) ||
        pthread_mutex_trylock(&port->exec_lock))
        return 0;
    int n = drain(port, port->fifo) + progress(port);
    /* Under exec_lock: a plain increment, read by the proxy (proxy_main). */
    __atomic_store_n(&port->waiter_polls, port->waiter_polls + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&port->exec_lock);
    return n;
}

int gpurma_port_poll(struct gpurma_ctx_s *ctx)
{
    int n = 0;
    if (ctx->device >= 0)
        return 0;
    /* Contexts start in order (a window asks for 0..k-1): the first NULL
     * ends the list, and waits without a port pay one load. */
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS; k++) {
        gpurma_port_t *port = __atomic_load_n(&ctx->ports[k], __ATOMIC_ACQUIRE);
        if (!port)
            break;
        n += poll_one(port);
    }
    return n;
}

/* Past this many backoff steps the idle proxy sleeps (gpurma_backoff);
 * while waiters poll it sleeps PROXY_WAITER_SLEEP_NS instead. */
#define PROXY_SLEEPY 16384
#define PROXY_WAITER_SLEEP_NS 1000000

/* Whether other threads polled the context since the last look. */
static int waiters_polled(const gpurma_port_t *port, uint64_t *seen)
{
    uint64_t now = __atomic_load_n(&port->waiter_polls, __ATOMIC_RELAXED);
    int polled = now != *seen;
    *seen = now;
    return polled;
}

/* The proxy spins after work only where it has a core of its own beside
 * the ranks of the node: sharing one, it takes the core from the thread
 * it serves, which waits by executing descriptors itself anyway (measured
 * on 2 cores: both spinning, every hand-over waited for a time slice). Its
 * affinity is read after the transports started (the copy engine pins it). */
static uint64_t proxy_spin_ns(const gpurma_port_t *port)
{
    cpu_set_t cpus;
    int ncpu = sched_getaffinity(0, sizeof(cpus), &cpus) ? 1 : CPU_COUNT(&cpus);
    return ncpu >= 2 * port->ctx->bs->local_size ? port->ctx->spin_ns : 0;
}

static void *proxy_main(void *arg)
{
    gpurma_port_t *port = arg;
    uint64_t idle = 0, slow = 0, last_work = gpurma_now_ns(), polls_seen = 0;
    int spinning = 1;
    gpurma_log_set_rank(port->ctx->rank);
    for (int i = 0; i < gpurma_port_nxports; i++) {
        const gpurma_port_xport_t *t = gpurma_port_xports[i];
        int rc = t->start ? t->start(port, &port->xstate[i]) : GPURMA_SUCCESS;
        if (rc)
            gpurma_port_error(port, rc, "port proxy of rank %d: starting %s: %s",
                              port->ctx->rank, t->name, gpurma_error_text());
    }
    const uint64_t spin_ns = proxy_spin_ns(port);
    __atomic_store_n(&port->spin_ns, spin_ns, __ATOMIC_RELAXED);
    while (!__atomic_load_n(&port->stop, __ATOMIC_ACQUIRE)) {
        int n = 0;
        /* Busy means a waiting thread executes (gpurma_port_poll). */
        if (pthread_mutex_trylock(&port->exec_lock) == 0) {
            n = drain(port, port->fifo);
            if (port->dev_fifo)
                n += drain(port, port->dev_fifo);
            /* Targets of emulated UCX RMA need this process to progress;
             * it does not count as work, so an idle proxy still backs off
             * and leaves the cores to the ranks (CI runs 8 on 2). */
            if (!n)
                progress(port);
            pthread_mutex_unlock(&port->exec_lock);
        }
        if (n) {
            idle = slow = 0;
            last_work = 0;
            continue;
        }
        /* Right after work the next descriptor is likely close: spin for
         * the proxy's spin budget (proxy_spin_ns). */
        if (!last_work)
            last_work = gpurma_now_ns();
        if ((idle++ & 63) == 0)
            spinning = gpurma_now_ns() - last_work < spin_ns;
        if (!spinning && slow >= PROXY_SLEEPY && waiters_polled(port, &polls_seen)) {
            /* A waiting thread polls this context (and progresses UCX):
             * waking every 100 us would only take its core from it, each
             * wakeup two context switches (20,000 a second measured at a
             * fetch_add target on 2 cores). */
            struct timespec ts = {0, PROXY_WAITER_SLEEP_NS};
            nanosleep(&ts, NULL);
            continue;
        }
        gpurma_backoff(spinning ? 0 : slow < 20000 ? slow++ : slow);
    }
    return NULL;
}

/* ------------------------------------------------------------ lifecycle */

/* FIFO memory: pinned and mapped for the GPUs when kernels may push. */
static void *fifo_alloc(struct gpurma_ctx_s *ctx, size_t len)
{
    void *p = NULL;
    if (ctx->device >= 0)
        return gpurma_gpu_host_alloc(len);
    return posix_memalign(&p, 64, len) ? NULL : p;
}

static void fifo_free(struct gpurma_ctx_s *ctx, void *p)
{
    if (ctx->device >= 0)
        gpurma_gpu_host_free(p);
    else
        free(p);
}

static void fifo_destroy(struct gpurma_ctx_s *ctx, gpurma_port_fifo_t *f)
{
    if (!f)
        return;
    if (f->head_ptr != &f->head)
        gpurma_gpu_free(f->head_ptr);
    fifo_free(ctx, f->results);
    fifo_free(ctx, f->ring);
    fifo_free(ctx, f);
}

/* A FIFO for host pushers, or (for_gpu) for kernels: then its reservation
 * counter lives in device memory. */
static gpurma_port_fifo_t *fifo_create(struct gpurma_ctx_s *ctx, int for_gpu)
{
    gpurma_port_fifo_t *f = fifo_alloc(ctx, sizeof(*f));
    if (!f)
        return NULL;
    memset(f, 0, sizeof(*f));
    f->ring = fifo_alloc(ctx, PORT_FIFO_CAPACITY * sizeof(*f->ring));
    f->results = fifo_alloc(ctx, PORT_FIFO_CAPACITY * sizeof(*f->results));
    f->head_ptr = for_gpu ? gpurma_gpu_alloc_u64() : &f->head;
    if (!f->ring || !f->results || !f->head_ptr) {
        fifo_destroy(ctx, f);
        return NULL;
    }
    memset(f->ring, 0, PORT_FIFO_CAPACITY * sizeof(*f->ring));
    memset(f->results, 0, PORT_FIFO_CAPACITY * sizeof(*f->results));
    f->capacity = PORT_FIFO_CAPACITY;
    f->timeout_ns = ctx->timeout_ns;
    return f;
}

/* Registered with the context as soon as a proxy runs, so that finalize
 * (or a failed init) stops it whatever became of the window that started it. */
const gpurma_ctx_hooks_t gpurma_port_hooks = {
    .progress = gpurma_port_poll,
    .shutdown = gpurma_port_shutdown,
};

int gpurma_port_get(struct gpurma_ctx_s *ctx, int k, gpurma_port_t **out)
{
    pthread_mutex_lock(&ctx->lock);
    if (ctx->ports[k]) {
        *out = ctx->ports[k];
        pthread_mutex_unlock(&ctx->lock);
        return GPURMA_SUCCESS;
    }
    gpurma_port_t *port = calloc(1, sizeof(*port));
    if (port) {
        port->ctx = ctx;
        port->fifo = fifo_create(ctx, 0);
        /* Kernels push into their own FIFO (pinned, mapped memory). */
        if (ctx->device >= 0)
            port->dev_fifo = fifo_create(ctx, 1);
    }
    if (port && port->fifo && (ctx->device < 0 || port->dev_fifo)) {
        pthread_rwlock_init(&port->reg_lock, NULL);
        pthread_mutex_init(&port->exec_lock, NULL);
        pthread_mutex_init(&port->error_lock, NULL);
        int err = pthread_create(&port->thread, NULL, proxy_main, port);
        if (!err) {
            __atomic_store_n(&ctx->ports[k], port, __ATOMIC_RELEASE);
            *out = port;
            pthread_mutex_unlock(&ctx->lock);
            GPURMA_INFO(GPURMA_SUB_PORT, "port proxy context %d started (FIFOs of %d descriptors)",
                        k, PORT_FIFO_CAPACITY);
            return gpurma_ctx_add_hooks(ctx, &gpurma_port_hooks);
        }
        pthread_rwlock_destroy(&port->reg_lock);
        pthread_mutex_destroy(&port->exec_lock);
        pthread_mutex_destroy(&port->error_lock);
    }
    pthread_mutex_unlock(&ctx->lock);
    if (port) {
        fifo_destroy(ctx, port->fifo);
        fifo_destroy(ctx, port->dev_fifo);
    }
    free(port);
    return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "cannot start the port proxy");
}

static void port_stop(struct gpurma_ctx_s *ctx, gpurma_port_t *port)
{
    __atomic_store_n(&port->stop, 1, __ATOMIC_RELEASE);
    pthread_join(port->thread, NULL);
    for (int i = gpurma_port_nxports; i-- > 0;)
        if (gpurma_port_xports[i]->stop)
            gpurma_port_xports[i]->stop(port, xstate(port, i));
    pthread_rwlock_destroy(&port->reg_lock);
    pthread_mutex_destroy(&port->exec_lock);
    pthread_mutex_destroy(&port->error_lock);
    free(port->wins);
    fifo_destroy(ctx, port->fifo);
    fifo_destroy(ctx, port->dev_fifo);
    free(port);
}

void gpurma_port_shutdown(struct gpurma_ctx_s *ctx)
{
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS; k++)
        if (ctx->ports[k]) {
            port_stop(ctx, ctx->ports[k]);
            ctx->ports[k] = NULL;
        }
}

int gpurma_port_win_register(gpurma_port_t *port, struct gpurma_win_s *w, uint32_t *win_id)
{
    pthread_rwlock_wrlock(&port->reg_lock);
    uint32_t id = 0;
    while (id < port->nwins && port->wins[id])
        id++;
    if (id == port->nwins) {
        uint32_t n = port->nwins ? 2 * port->nwins : 16;
        struct gpurma_win_s **wins = realloc(port->wins, n * sizeof(*wins));
        if (!wins) {
            pthread_rwlock_unlock(&port->reg_lock);
            return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "port: out of memory");
        }
        memset(wins + port->nwins, 0, (n - port->nwins) * sizeof(*wins));
        port->wins = wins;
        port->nwins = n;
    }
    port->wins[id] = w;
    *win_id = id;
    pthread_rwlock_unlock(&port->reg_lock);
    return GPURMA_SUCCESS;
}

void gpurma_port_win_unregister(gpurma_port_t *port, struct gpurma_win_s *w)
{
    pthread_rwlock_wrlock(&port->reg_lock);
    for (uint32_t id = 0; id < port->nwins; id++)
        if (port->wins[id] == w)
            port->wins[id] = NULL;
    pthread_rwlock_unlock(&port->reg_lock);
}

uint64_t gpurma_port_descriptors(struct gpurma_ctx_s *ctx)
{
    uint64_t n = 0;
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS; k++) {
        gpurma_port_t *port = __atomic_load_n(&ctx->ports[k], __ATOMIC_ACQUIRE);
        if (port)
            n += __atomic_load_n(&port->descriptors, __ATOMIC_ACQUIRE);
    }
    return n;
}
