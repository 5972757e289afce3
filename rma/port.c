/*
 * port.c - the port engine's proxy: it consumes descriptors in FIFO order,
 * checks each against the registered windows, and executes it with the
 * peer's transport. Host-initiated operations push descriptors like any
 * device thread would, so both share one ordering and one completion rule:
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
                                       "fetch_add", "swap", "compare_swap", "quiet", "fence"};
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

int gpurma_port_packet_size(const gpurma_port_desc_t *d)
{
    return d->flags & GPURMA_PORT_F_PACKET16 ? 16 : 8;
}

static int is_atomic(uint16_t op)
{
    return op == GPURMA_PORT_OP_FETCH_ADD || op == GPURMA_PORT_OP_SWAP || op == GPURMA_PORT_OP_CAS;
}

/* Returns the window the descriptor names, or NULL after rejecting it. */
static struct gpurma_win_s *validate(gpurma_port_t *port, const gpurma_port_desc_t *d)
{
    if (d->win_id >= port->nwins || !port->wins[d->win_id])
        return reject(port, d, "no such window"), NULL;
    struct gpurma_win_s *w = port->wins[d->win_id];
    if (d->peer < 0 || d->peer >= w->size)
        return reject(port, d, "peer out of range"), NULL;
    uint64_t peer_size = w->peers[d->peer].size;
    uint64_t local_size = w->peers[w->rank].size;
    int raw = d->flags & GPURMA_PORT_F_SRC_RAW;
    switch (d->op) {
    case GPURMA_PORT_OP_PUT:
    case GPURMA_PORT_OP_PUT_SIGNAL:
        if ((d->flags & GPURMA_PORT_F_PACKETS) &&
            (d->op != GPURMA_PORT_OP_PUT || (d->dst & (uint64_t)(gpurma_port_packet_size(d) - 1)) ||
             d->size > peer_size ||
             !in_window(d->dst, gpurma_dev__packet_bytes(d->size, gpurma_port_packet_size(d)), peer_size)))
            return reject(port, d, "LL packets misaligned or outside the target window"), NULL;
        if (!in_window(d->dst, d->size, peer_size))
            return reject(port, d, "destination outside the target window"), NULL;
        if (!raw && !in_window(d->src, d->size, local_size))
            return reject(port, d, "source outside the origin window"), NULL;
        if (raw && d->size && !d->src)
            return reject(port, d, "NULL source"), NULL;
        break;
    case GPURMA_PORT_OP_GET:
        if (!in_window(d->src, d->size, peer_size))
            return reject(port, d, "source outside the target window"), NULL;
        if (!raw && !in_window(d->dst, d->size, local_size))
            return reject(port, d, "destination outside the origin window"), NULL;
        if (raw && d->size && !d->dst)
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

/* The source of a descriptor in this process: raw (host pushers) or an
 * offset into the window (kernels). */
const void *gpurma_port_src(const struct gpurma_win_s *w, const gpurma_port_desc_t *d)
{
    if (d->flags & GPURMA_PORT_F_SRC_RAW)
        return (const void *)(uintptr_t)d->src;
    return (const char *)w->base + d->src;
}

void *gpurma_port_get_dst(const struct gpurma_win_s *w, const gpurma_port_desc_t *d)
{
    if (d->flags & GPURMA_PORT_F_SRC_RAW)
        return (void *)(uintptr_t)d->dst;
    return (char *)w->base + d->dst;
}

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

/* The result slot of the atomic at pos, once its reader of the previous
 * lap has taken what was there; NULL (rejected) if it never does. */
static uint64_t *claim_result(gpurma_port_t *port, gpurma_port_fifo_t *f,
                              const gpurma_port_desc_t *d, uint64_t pos)
{
    gpurma_port_result_t *r = &f->results[pos & (f->capacity - 1)];
    uint64_t start = gpurma_now_ns();
    for (uint64_t i = 0; __atomic_load_n(&r->busy, __ATOMIC_ACQUIRE); i++) {
        if (f->timeout_ns && gpurma_now_ns() - start > f->timeout_ns)
            return reject(port, d, "the result of an atomic one lap earlier was never read"),
                   NULL;
        gpurma_backoff(i);
    }
    __atomic_store_n(&r->busy, 1, __ATOMIC_RELAXED);
    return &r->value;
}

static int drain_locked(gpurma_port_t *port, gpurma_port_fifo_t *f);

static void execute(gpurma_port_t *port, gpurma_port_fifo_t *f, const gpurma_port_desc_t *d,
                    uint64_t pos)
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
        struct gpurma_win_s *w = validate(port, d);
        uint64_t *result = NULL;
        if (!w || (is_atomic(d->op) && !(result = claim_result(port, f, d, pos))))
            return;
        gpurma_port_win_t *pw = gpurma_port_win(w);
        int x = pw->xport[d->peer];
        rc = gpurma_port_xports[x]->exec(port, xstate(port, x), w, pw->xwin[x], d, result);
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
        batch[n++] = *slot;
    }
    if (!n)
        return 0;
    /* The slots are copied: pushers may refill them. */
    __atomic_store_n(&f->tail, pos + (uint64_t)n, __ATOMIC_RELEASE);
    for (int i = 0; i < n; i++) {
        execute(port, f, &batch[i], pos + (uint64_t)i);
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
    int x = async_transport(port, f, batch, n);
    if (x >= 0 &&
        !gpurma_port_xports[x]->complete_async(port, xstate(port, x), &f->done, pos + (uint64_t)n))
        return n;
    int rc = EACH_TRANSPORT(port, complete);
    if (rc)
        batch_error(port, rc, "completing a batch");
    for (int i = 0; i < n; i++) {
        int on_gpu = 0;
        uint64_t *c = counter_of(port, f, &batch[i], &on_gpu);
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
static const gpurma_ctx_hooks_t port_hooks = {
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
            return gpurma_ctx_add_hooks(ctx, &port_hooks);
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

/* ------------------------------------------- host-initiated operations */

/* Errors found by the proxy since the last report, as a status. Threads
 * that flush at the same time race for them: the one whose exchange moves
 * errors_seen forward reports them, once. */
static int proxy_errors(gpurma_port_t *port)
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

/* Descriptors to one peer go through one proxy context, in order. */
static int ctx_of(const struct gpurma_win_s *w, int peer) { return w->peers[peer].port; }

static int push_to(struct gpurma_win_s *w, int k, gpurma_port_desc_t *d, uint64_t *pos)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    d->win_id = pw->ids[k];
    int rc = gpurma_port_push(pw->ports[k]->fifo, d, pos);
    if (rc)
        return gpurma_set_error(rc, "rank %d: the port FIFO stayed full for %llu ms",
                                w->ctx->rank, (unsigned long long)(w->ctx->timeout_ns / 1000000));
    return GPURMA_SUCCESS;
}

static int push(struct gpurma_win_s *w, gpurma_port_desc_t *d, uint64_t *pos)
{
    return push_to(w, ctx_of(w, d->peer), d, pos);
}

/* Waits until pos is complete, executing it here when the proxy is not
 * (gpurma_port_poll). Spins for the context's spin budget first (the proxy
 * answers in microseconds when it has a core; when it has none, a wait
 * for what it executes yields at once); past it, while the proxy is
 * executing pos (a large copy), only yields, since a sleep (timer slack,
 * about 50 us) would be a tenth of a 256 MiB transfer; otherwise backs off
 * like any wait. */
static int port_wait(gpurma_port_t *port, uint64_t pos)
{
    gpurma_port_fifo_t *f = port->fifo;
    uint64_t start = 0, spin = port->ctx->spin_ns, slow = 0;
    int spinning = 1;
    /* The clock is first read after 64 polls: most waits (a flush this
     * thread executes itself) end before, and a clock read costs as much
     * as the rest of a small put's round trip on a VM. */
    for (uint64_t i = 0; __atomic_load_n(&f->done, __ATOMIC_ACQUIRE) <= pos; i++) {
        if (gpurma_port_poll(port->ctx)) {
            slow = 0;
            continue;
        }
        if ((i & 63) == 63) {
            uint64_t now = gpurma_now_ns();
            if (!start)
                start = now;
            uint64_t t = now - start;
            if (f->timeout_ns && t > f->timeout_ns)
                return GPURMA_ERR_TIMEOUT;
            spinning = t <= spin;
        }
        /* Taken: the proxy (or another waiter) executes it; a proxy
         * without a core of its own needs this one. */
        int taken = __atomic_load_n(&f->tail, __ATOMIC_ACQUIRE) > pos;
        if (taken && !__atomic_load_n(&port->spin_ns, __ATOMIC_RELAXED))
            sched_yield();
        else if (spinning)
            gpurma_backoff(0);
        else if (taken)
            sched_yield();
        else
            gpurma_backoff(slow++);
    }
    return GPURMA_SUCCESS;
}

static int wait_done(struct gpurma_win_s *w, int k, uint64_t pos)
{
    gpurma_port_t *port = gpurma_port_win(w)->ports[k];
    int rc = port_wait(port, pos);
    if (rc)
        return gpurma_set_error(rc, "rank %d: port operation %llu (context %d) not completed "
                                    "after %llu ms",
                                w->ctx->rank, (unsigned long long)pos, k,
                                (unsigned long long)(w->ctx->timeout_ns / 1000000));
    return proxy_errors(port);
}

static int port_put(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                    uint32_t counter)
{
    gpurma_port_desc_t d = gpurma_port_desc_put(peer, off, src, n, counter);
    return push(w, &d, NULL);
}

static int port_get(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n)
{
    gpurma_port_desc_t d = gpurma_port_desc_get(peer, dst, off, n);
    uint64_t pos;
    int rc = push(w, &d, &pos);
    return rc ? rc : wait_done(w, ctx_of(w, peer), pos); /* the data is there on return */
}

static int port_put_value(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n)
{
    gpurma_port_desc_t d = gpurma_port_desc_put_value(peer, off, v, n);
    return push(w, &d, NULL);
}

static int port_signal(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                       uint64_t v)
{
    gpurma_port_desc_t d = gpurma_port_desc_signal(peer, sig, op, v);
    return push(w, &d, NULL);
}

static int port_put_signal(struct gpurma_win_s *w, int peer, size_t off, const void *src,
                           size_t n, uint32_t sig, gpurma_signal_op_t op, uint64_t v,
                           uint32_t counter)
{
    gpurma_port_desc_t d = gpurma_port_desc_put_signal(peer, off, src, n, sig, op, v, counter);
    return push(w, &d, NULL);
}

static int port_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                       uint64_t v, uint64_t compare, uint64_t *old)
{
    uint64_t pos;
    gpurma_port_desc_t d = gpurma_port_desc_atomic(peer, (int)kind, off, v, compare);
    int rc = push(w, &d, &pos);
    if (rc)
        return rc;
    int k = ctx_of(w, peer);
    gpurma_port_fifo_t *f = gpurma_port_win(w)->ports[k]->fifo;
    rc = wait_done(w, k, pos);
    /* Once executed, the slot is freed even when the proxy reported an error. */
    if (__atomic_load_n(&f->done, __ATOMIC_ACQUIRE) > pos) {
        uint64_t result = gpurma_port_take_result(f, pos);
        if (!rc && old)
            *old = result;
    }
    return rc;
}

/* Everything pushed to context k so far is complete. */
static int flush_ctx(struct gpurma_win_s *w, int k)
{
    gpurma_port_t *port = gpurma_port_win(w)->ports[k];
    uint64_t head = __atomic_load_n(port->fifo->head_ptr, __ATOMIC_ACQUIRE);
    return head ? wait_done(w, k, head - 1) : proxy_errors(port);
}

static int port_flush(struct gpurma_win_s *w, int peer)
{
    if (peer != GPURMA_ALL_PEERS)
        return flush_ctx(w, ctx_of(w, peer));
    int rc = GPURMA_SUCCESS;
    for (uint32_t k = 0; k < gpurma_port_win(w)->nports && !rc; k++)
        rc = flush_ctx(w, (int)k);
    return rc;
}

/* QUIET through each of the given contexts, then waits for all of them. */
static int quiet_ports(struct gpurma_ctx_s *ctx, gpurma_port_t *const *ports, int n)
{
    uint64_t pos[GPURMA_DEV_MAX_PORTS];
    int rc = GPURMA_SUCCESS;
    for (int k = 0; k < n; k++) {
        gpurma_port_desc_t d = gpurma_port_desc_sync(GPURMA_PORT_OP_QUIET);
        if (ports[k] && gpurma_port_push(ports[k]->fifo, &d, &pos[k]))
            return gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                    "rank %d: the FIFO of port context %d stayed full", ctx->rank,
                                    k);
    }
    for (int k = 0; k < n && !rc; k++) {
        if (!ports[k])
            continue;
        if (port_wait(ports[k], pos[k]))
            return gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                    "rank %d: port operations of context %d not completed after "
                                    "%llu ms",
                                    ctx->rank, k,
                                    (unsigned long long)(ctx->timeout_ns / 1000000));
        rc = proxy_errors(ports[k]);
    }
    return rc;
}

static int port_quiet(struct gpurma_win_s *w)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    return quiet_ports(w->ctx, pw->ports, (int)pw->nports);
}

/* Remote completion to one peer: QUIET through the one context serving it. */
static int port_flush_remote(struct gpurma_win_s *w, int peer)
{
    gpurma_port_t *port = gpurma_port_win(w)->ports[ctx_of(w, peer)];
    return quiet_ports(w->ctx, &port, 1);
}

int gpurma_port_quiet_all(struct gpurma_ctx_s *ctx)
{
    gpurma_port_t *ports[GPURMA_DEV_MAX_PORTS];
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS; k++)
        ports[k] = __atomic_load_n(&ctx->ports[k], __ATOMIC_ACQUIRE);
    return quiet_ports(ctx, ports, GPURMA_DEV_MAX_PORTS);
}

void gpurma_port_flush_all(struct gpurma_ctx_s *ctx)
{
    for (int k = 0; k < GPURMA_DEV_MAX_PORTS; k++) {
        gpurma_port_t *port = __atomic_load_n(&ctx->ports[k], __ATOMIC_ACQUIRE);
        uint64_t head = port ? __atomic_load_n(port->fifo->head_ptr, __ATOMIC_ACQUIRE) : 0;
        if (head && port_wait(port, head - 1))
            GPURMA_LOG(GPURMA_LOG_WARN, GPURMA_SUB_PORT,
                       "rank %d: port context %d did not finish its operations", ctx->rank, k);
    }
}

/* Each context executes in order, and one peer is served by one context;
 * the transport is told to keep that order. */
static int port_fence(struct gpurma_win_s *w)
{
    int rc = GPURMA_SUCCESS;
    for (uint32_t k = 0; k < gpurma_port_win(w)->nports && !rc; k++) {
        gpurma_port_desc_t d = gpurma_port_desc_sync(GPURMA_PORT_OP_FENCE);
        rc = push_to(w, (int)k, &d, NULL);
    }
    return rc;
}

/* ---------------------------------------------------- the engine's life */

/* Peers this node does not map (other nodes; every peer of private memory
 * on a team spanning nodes) are only reached here (UCX); peers on the node
 * only when the engine is forced (the mem engine is faster). */
static int port_reach(const struct gpurma_win_s *w, int peer, int forced)
{
    if (w->peers[peer].path == GPURMA_DEV_PATH_NONE && w->gpu)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: team rank %d is on another node: windows in GPU "
                                "memory reach only this node (copy engine) in this version",
                                w->ctx->rank, peer);
    if (w->peers[peer].path == GPURMA_DEV_PATH_NONE)
        return 10;
    return forced ? 10 : 1;
}

/* The transport that prefers peer most (earlier ones win ties), or -1. */
static int transport_of(const struct gpurma_win_s *w, int peer)
{
    int best = -1, best_pref = 0;
    for (int i = 0; i < gpurma_port_nxports; i++) {
        const gpurma_port_xport_t *t = gpurma_port_xports[i];
        int pref = t->reach ? t->reach(w, peer) : 0;
        if (pref > best_pref) {
            best = i;
            best_pref = pref;
        }
    }
    return best;
}

static int is_port_peer(const struct gpurma_win_s *w, int i)
{
    return w->engines && w->engines[i] && w->engines[i]->kind == GPURMA_ENGINE_PORT;
}

/* Registers the window with its proxy contexts, spreads its peers over
 * them, and exchanges UCX addresses and keys when the team spans nodes
 * (collective: entered by every rank of such a team, with its failure so
 * far). Also fills the kernels' view of the FIFOs in the device handle. */
static int port_connect(struct gpurma_win_s *w, const gpurma_exchange_t *ex, int rc)
{
    int any = 0;
    for (int i = 0; i < w->size; i++)
        any |= is_port_peer(w, i);
    if (!any && !w->spans_nodes)
        return rc;
    gpurma_port_win_t *pw = calloc(1, sizeof(*pw));
    if (pw && !(pw->xport = calloc((size_t)w->size, 1))) {
        free(pw);
        pw = NULL;
    }
    if (!pw && !rc)
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "port engine: out of memory");
    w->engine_state[GPURMA_ENGINE_PORT] = pw;
    for (uint32_t k = 0; !rc && any && k < w->contexts; k++) {
        gpurma_port_t *port = NULL;
        rc = gpurma_port_get(w->ctx, (int)k, &port);
        if (!rc)
            rc = gpurma_port_win_register(port, w, &pw->ids[k]);
        if (!rc) {
            pw->ports[k] = port;
            w->dev.ports[k] = port->dev_fifo ? port->dev_fifo : port->fifo;
            w->dev.port_win_ids[k] = pw->ids[k];
            pw->nports = w->dev.nports = k + 1;
        }
    }
    /* Peers on this node spread over the contexts; peers of transports
     * with state of their own (UCX's worker) stay with context 0. */
    for (int i = 0, next = 0; !rc && i < w->size; i++) {
        if (!is_port_peer(w, i))
            continue;
        int x = transport_of(w, i);
        if (x < 0) {
            rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                  "rank %d: no port transport reaches team rank %d",
                                  w->ctx->rank, i);
            break;
        }
        pw->xport[i] = (uint8_t)x;
        w->peers[i].port =
            (int16_t)(gpurma_port_xports[x]->connect ? 0 : next++ % (int)pw->nports);
    }
    /* Every transport's window setup, entered by every rank (some are
     * collective); context 0 holds their state. */
    gpurma_port_t *port0 = pw ? pw->ports[0] : NULL;
    for (int x = 0; x < gpurma_port_nxports; x++) {
        const gpurma_port_xport_t *t = gpurma_port_xports[x];
        if (t->connect) {
            int xrc = t->connect(port0, port0 ? &port0->xstate[x] : NULL, w, ex, rc,
                                 pw ? &pw->xwin[x] : NULL);
            if (!rc)
                rc = xrc;
        }
    }
    return rc;
}

static void port_release(struct gpurma_win_s *w)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    if (!pw)
        return;
    /* Descriptors naming the window (a barrier's last signal, say) are
     * executed before it leaves the proxy's table. */
    if (pw->nports)
        gpurma_port_flush_all(w->ctx);
    for (uint32_t k = 0; k < pw->nports; k++)
        gpurma_port_win_unregister(pw->ports[k], w);
    for (int x = gpurma_port_nxports; x-- > 0;)
        if (gpurma_port_xports[x]->release)
            gpurma_port_xports[x]->release(pw->ports[0], pw->ports[0] ? xstate(pw->ports[0], x)
                                                                     : NULL,
                                           w, pw->xwin[x]);
    free(pw->xport);
    free(pw);
    w->engine_state[GPURMA_ENGINE_PORT] = NULL;
}


const gpurma_engine_ops_t gpurma_engine_port_ops = {
    .size       = sizeof(gpurma_engine_ops_t),
    .kind       = GPURMA_ENGINE_PORT,
    .caps       = GPURMA_ENGINE_CAP_REMOTE | GPURMA_ENGINE_CAP_PROXIED,
    .reach      = port_reach,
    .connect    = port_connect,
    .release    = port_release,
    .hooks      = &port_hooks,
    .put        = port_put,
    .get        = port_get,
    .put_value  = port_put_value,
    .signal     = port_signal,
    .put_signal = port_put_signal,
    .atomic     = port_atomic,
    .flush      = port_flush,
    .flush_remote = port_flush_remote,
    .quiet      = port_quiet,
    .fence      = port_fence,
};
