/*
 * dev_port.h - the port engine's descriptor FIFO, as seen by the pushers
 * (a GPU thread, or a host thread). Not ABI.
 *
 * A pusher reserves a position with an atomic add on head, waits while the
 * ring is full (back-pressure: never drop, never overwrite), writes the
 * 64-byte descriptor and publishes it last with a release store of `commit`,
 * a hash of the fields and the lap number (position / capacity + 1). The
 * proxy consumes slots in order and takes one only when the commit word
 * matches the hash of the fields it read for the lap it expects, so a stale
 * slot from the previous lap is never mistaken for a new one and slots need
 * no clearing. tail (consumed) frees slots; done (executed and locally
 * complete) is what flush waits on.
 */
#ifndef GPURMA_DETAIL_DEV_PORT_H
#define GPURMA_DETAIL_DEV_PORT_H

#include "gpurma/detail/dev_common.h"

typedef enum {
    GPURMA_PORT_OP_PUT = 1,       /* size bytes from src to (peer, dst_off)       */
    GPURMA_PORT_OP_GET,           /* size bytes from (peer, src_off) to dst       */
    GPURMA_PORT_OP_PUT_VALUE,     /* value, size 1/2/4/8, at (peer, dst_off)      */
    GPURMA_PORT_OP_SIGNAL,        /* signal slot of peer, after earlier puts      */
    GPURMA_PORT_OP_PUT_SIGNAL,    /* PUT, then SIGNAL                             */
    GPURMA_PORT_OP_FETCH_ADD,     /* 64-bit atomics; old value to result address  */
    GPURMA_PORT_OP_SWAP,
    GPURMA_PORT_OP_CAS,
    GPURMA_PORT_OP_QUIET,         /* remote completion of everything before it    */
    GPURMA_PORT_OP_FENCE,         /* later operations ordered after earlier ones  */
    GPURMA_PORT_OP_SHAPE,         /* the shape of the descriptor before it (below) */
    GPURMA_PORT_OP_COUNT_
} gpurma_port_op_t;

/* flags */
#define GPURMA_PORT_F_SRC_RAW 0x1 /* local side is an address, not a window offset */
#define GPURMA_PORT_F_PACKETS 0x2 /* LL packets: src holds `size` payload bytes,   */
#define GPURMA_PORT_F_PACKET16 0x4 /* value the flag; the proxy packs them into 8- */
                                   /* (16- with F_PACKET16) byte packets at dst   */
#define GPURMA_PORT_F_SHAPE 0x8   /* a subarray: the next slot holds its shape    */
#define GPURMA_PORT_F_NO_RESULT 0x10 /* an atomic whose old value nobody reads: no */
                                     /* result slot; complete by flush or quiet   */

/* A subarray (PUT, GET, PUT_SIGNAL with F_SHAPE) is one descriptor and the
 * slot after it, pushed together (gpurma_port_push_shaped) and taken
 * together by the proxy:
 *   descriptor: dst, src as for a plain op (the first byte of each side),
 *               size = bytes of one row, compare = rows per plane;
 *   next slot:  op = GPURMA_PORT_OP_SHAPE, same win_id and peer,
 *               dst = dst side's row pitch,   size  = dst side's plane pitch,
 *               src = src side's row pitch,   value = src side's plane pitch,
 *               compare = planes; no signal, no counter.
 * A SHAPE slot on its own is rejected. */

/* One descriptor: 64 bytes, 64-bit sizes and offsets. `commit` is written last. */
typedef struct gpurma_port_desc {
    uint64_t dst;      /* PUT*: offset in the target window; GET: local address/offset */
    uint64_t src;      /* PUT*: local address/offset; GET: offset in the target window
                          (atomics: unused, the old value goes to the FIFO's results) */
    uint64_t size;     /* bytes                                                        */
    uint64_t value;    /* signal value, atomic operand, put_value value, packet flag   */
    uint64_t compare;  /* CAS expected value                                           */
    uint32_t win_id;   /* window registered with the proxy                             */
    int32_t  peer;     /* team rank of the target                                      */
    uint32_t signal;   /* signal slot, or UINT32_MAX                                   */
    uint32_t counter;  /* local-completion counter, or UINT32_MAX                      */
    uint16_t op;       /* gpurma_port_op_t                                             */
    uint8_t  signal_op;/* gpurma_signal_op_t                                           */
    uint8_t  flags;    /* GPURMA_PORT_F_*                                              */
    uint32_t commit;   /* gpurma_port_seal(fields, lap), written last                  */
} gpurma_port_desc_t;

#if defined(__cplusplus)
static_assert(sizeof(gpurma_port_desc_t) == 64, "descriptor must be 64 bytes");
#else
_Static_assert(sizeof(gpurma_port_desc_t) == 64, "descriptor must be 64 bytes");
#endif

/* Where the proxy leaves the old value of an atomic: one per ring slot, in
 * memory both sides reach. The proxy sets busy to the atomic's position + 1
 * before it executes the atomic at position p and writes value; the pusher
 * reads value once done passed p and clears busy. An atomic at p + capacity
 * waits for busy to clear, so a slow reader never loses its result to the
 * next lap. A reader that stops waiting (a timeout) writes its position + 1
 * to abandoned instead and never touches the slot again: the proxy then
 * takes the slot back at once (abandoned >= busy), or, when the reader gave
 * up before its atomic was executed, leaves the slot alone. Each word has
 * one writer at a time and nobody needs a compare-exchange, which a GPU
 * cannot do on host memory everywhere (PCIe AtomicOps). */
typedef struct gpurma_port_result {
    uint64_t value;
    uint64_t busy;      /* position + 1 of the atomic whose reader owns the slot, or 0 */
    uint64_t abandoned; /* position + 1 of the last atomic whose reader gave up        */
    uint64_t pad;
} gpurma_port_result_t;

/* Shared between pushers and the proxy; lives in memory both can reach
 * (pinned, mapped host memory when GPUs push). Counters on their own lines.
 * The reservation counter is reached through head_ptr: for GPU pushers it is
 * in device memory, since atomics of a GPU on host memory are not atomic on
 * every system (PCIe AtomicOps); the proxy never reads it. */
typedef struct gpurma_port_fifo {
    gpurma_port_desc_t   *ring;
    uint64_t              capacity; /* power of two */
    uint64_t              timeout_ns;
    uint64_t             *head_ptr; /* &head, or a counter in device memory       */
    gpurma_port_result_t *results;  /* [capacity], old values of atomics         */
    uint64_t              pad0[3];
    uint64_t            head;     /* next position to reserve (host pushers)    */
    uint64_t            pad1[7];
    uint64_t            tail;     /* next position the proxy consumes            */
    uint64_t            pad2[7];
    uint64_t            done;     /* positions below are executed and complete   */
    uint64_t            pad3[7];
    uint64_t            errors;   /* descriptors rejected or failed (cumulative) */
    uint64_t            pad4[7];
    uint64_t            discard;  /* old values of F_NO_RESULT atomics, unread    */
    uint64_t            pad5[7];
} gpurma_port_fifo_t;

/* The commit word: a 32-bit hash of the descriptor's fields and its lap
 * (never 0). The proxy accepts a slot only when the hash of what it read
 * matches, so a descriptor is never taken before all its bytes have landed,
 * even where a GPU's writes to host memory may arrive out of order, nor is
 * a slot of the previous lap taken for a new one. */
GPURMA_DEVICE uint32_t gpurma_port_seal(const gpurma_port_desc_t *d, uint64_t lap)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    uint64_t words[8] = {d->dst, d->src, d->size, d->value, d->compare,
                         (uint64_t)d->win_id | (uint64_t)(uint32_t)d->peer << 32,
                         (uint64_t)d->signal | (uint64_t)d->counter << 32,
                         (uint64_t)d->op | (uint64_t)d->signal_op << 16 |
                             (uint64_t)d->flags << 24 | lap << 32};
    uint64_t h = lap * k;
    for (int i = 0; i < 8; i++) {
        h ^= words[i];
        h *= k;
        h ^= h >> 29;
    }
    return (uint32_t)(h >> 32) | 1u;
}

/* Pushes d (commit ignored); returns its position in *pos. Waits while the
 * ring is full, up to the FIFO's timeout. */
GPURMA_DEVICE gpurma_status_t gpurma_port_push(gpurma_port_fifo_t *f, const gpurma_port_desc_t *d,
                                               uint64_t *pos)
{
    uint64_t p = gpurma_sh_fetch_add_u64(f->head_ptr, 1);
    uint64_t start = 0;
    for (uint64_t iter = 0; p - gpurma_sh_load_acquire_u64(&f->tail) >= f->capacity; iter++) {
        if (gpurma_dev__expired(iter, &start, f->timeout_ns))
            return GPURMA_ERR_TIMEOUT;
        gpurma_sh_pause_n(iter);
    }
    gpurma_port_desc_t *slot = &f->ring[p & (f->capacity - 1)];
    slot->dst = d->dst;
    slot->src = d->src;
    slot->size = d->size;
    slot->value = d->value;
    slot->compare = d->compare;
    slot->win_id = d->win_id;
    slot->peer = d->peer;
    slot->signal = d->signal;
    slot->counter = d->counter;
    slot->op = d->op;
    slot->signal_op = d->signal_op;
    slot->flags = d->flags;
    gpurma_sh_store_release_u32(&slot->commit, gpurma_port_seal(d, p / f->capacity + 1));
    if (pos)
        *pos = p;
    return GPURMA_SUCCESS;
}

/* Pushes a subarray's descriptor d and its shape slot e at two positions
 * reserved at once, so that no other pusher's slot comes between them; *pos
 * is d's position (e's is one more). */
GPURMA_DEVICE gpurma_status_t gpurma_port_push_shaped(gpurma_port_fifo_t *f,
                                                      const gpurma_port_desc_t *d,
                                                      const gpurma_port_desc_t *e, uint64_t *pos)
{
    uint64_t p = gpurma_sh_fetch_add_u64(f->head_ptr, 2);
    uint64_t start = 0;
    for (uint64_t iter = 0; p + 1 - gpurma_sh_load_acquire_u64(&f->tail) >= f->capacity; iter++) {
        if (gpurma_dev__expired(iter, &start, f->timeout_ns))
            return GPURMA_ERR_TIMEOUT;
        gpurma_sh_pause_n(iter);
    }
    for (int i = 1; i >= 0; i--) {
        const gpurma_port_desc_t *from = i ? e : d;
        uint64_t at = p + (uint64_t)i;
        gpurma_port_desc_t *slot = &f->ring[at & (f->capacity - 1)];
        slot->dst = from->dst;
        slot->src = from->src;
        slot->size = from->size;
        slot->value = from->value;
        slot->compare = from->compare;
        slot->win_id = from->win_id;
        slot->peer = from->peer;
        slot->signal = from->signal;
        slot->counter = from->counter;
        slot->op = from->op;
        slot->signal_op = from->signal_op;
        slot->flags = from->flags;
        gpurma_sh_store_release_u32(&slot->commit, gpurma_port_seal(from, at / f->capacity + 1));
    }
    if (pos)
        *pos = p;
    return GPURMA_SUCCESS;
}

/* Waits until the proxy has completed position pos (and everything before). */
GPURMA_DEVICE gpurma_status_t gpurma_port_wait_done(gpurma_port_fifo_t *f, uint64_t pos)
{
    return gpurma_dev__wait_u64(&f->done, GPURMA_CMP_GT, pos, f->timeout_ns);
}

/* The FIFO of proxy context k of the window (NULL if none) and the
 * window's id there. Constant indices only: a handle indexed at run time
 * would be copied to local memory on every call of a kernel. */
GPURMA_DEVICE gpurma_port_fifo_t *gpurma_dev__port_fifo(const gpurma_dev_win_t *w, unsigned k,
                                                       uint32_t *win_id)
{
    if (k >= w->nports)
        return (gpurma_port_fifo_t *)0;
    switch (k) {
    case 0: *win_id = w->port_win_ids[0]; return (gpurma_port_fifo_t *)w->ports[0];
    case 1: *win_id = w->port_win_ids[1]; return (gpurma_port_fifo_t *)w->ports[1];
    case 2: *win_id = w->port_win_ids[2]; return (gpurma_port_fifo_t *)w->ports[2];
    default: *win_id = w->port_win_ids[3]; return (gpurma_port_fifo_t *)w->ports[3];
    }
}

/* The old value of the atomic at position pos, once done passed it; frees
 * the result slot for the next lap (unless the proxy never took it for pos:
 * a rejected atomic). */
GPURMA_DEVICE uint64_t gpurma_port_take_result(gpurma_port_fifo_t *f, uint64_t pos)
{
    gpurma_port_result_t *r = &f->results[pos & (f->capacity - 1)];
    uint64_t v = gpurma_sh_load_acquire_u64(&r->value);
    if (gpurma_sh_load_acquire_u64(&r->busy) == pos + 1)
        gpurma_sh_store_release_u64(&r->busy, 0);
    return v;
}

/* The reader of the atomic at pos stops waiting for it (a timeout): its
 * result slot goes back to the proxy (see gpurma_port_result_t), so a
 * later lap does not wait there. */
GPURMA_DEVICE void gpurma_port_abandon_result(gpurma_port_fifo_t *f, uint64_t pos)
{
    gpurma_sh_store_release_u64(&f->results[pos & (f->capacity - 1)].abandoned, pos + 1);
}

/* ------------------------------------------------------------ descriptors */

/* The descriptor of each operation, built here only, for host pushes
 * (rma/port_engine.c) and device pushes alike. Fields not named are 0; win_id is
 * set by whoever pushes (it depends on the proxy context); UINT32_MAX is
 * "no signal" and "no counter"; local sides are raw addresses. */

GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_put(int peer, uint64_t dst_off, const void *src,
                                                      uint64_t size, uint32_t counter)
{
    gpurma_port_desc_t d = {.dst = dst_off, .src = (uint64_t)(uintptr_t)src, .size = size,
                            .peer = peer, .signal = UINT32_MAX, .counter = counter,
                            .op = GPURMA_PORT_OP_PUT, .flags = GPURMA_PORT_F_SRC_RAW};
    return d;
}

GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_get(int peer, void *dst, uint64_t src_off,
                                                      uint64_t size)
{
    gpurma_port_desc_t d = {.dst = (uint64_t)(uintptr_t)dst, .src = src_off, .size = size,
                            .peer = peer, .signal = UINT32_MAX, .counter = UINT32_MAX,
                            .op = GPURMA_PORT_OP_GET, .flags = GPURMA_PORT_F_SRC_RAW};
    return d;
}

GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_put_value(int peer, uint64_t dst_off,
                                                            uint64_t value, uint64_t size)
{
    gpurma_port_desc_t d = {.dst = dst_off, .size = size, .value = value, .peer = peer,
                            .signal = UINT32_MAX, .counter = UINT32_MAX,
                            .op = GPURMA_PORT_OP_PUT_VALUE, .flags = GPURMA_PORT_F_SRC_RAW};
    return d;
}

GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_signal(int peer, uint32_t sig,
                                                         gpurma_signal_op_t op, uint64_t value)
{
    gpurma_port_desc_t d = {.value = value, .peer = peer, .signal = sig, .counter = UINT32_MAX,
                            .op = GPURMA_PORT_OP_SIGNAL, .signal_op = (uint8_t)op,
                            .flags = GPURMA_PORT_F_SRC_RAW};
    return d;
}

GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_put_signal(int peer, uint64_t dst_off,
                                                             const void *src, uint64_t size,
                                                             uint32_t sig, gpurma_signal_op_t op,
                                                             uint64_t value, uint32_t counter)
{
    gpurma_port_desc_t d = {.dst = dst_off, .src = (uint64_t)(uintptr_t)src, .size = size,
                            .value = value, .peer = peer, .signal = sig, .counter = counter,
                            .op = GPURMA_PORT_OP_PUT_SIGNAL, .signal_op = (uint8_t)op,
                            .flags = GPURMA_PORT_F_SRC_RAW};
    return d;
}

/* kind: 0 fetch-add, 1 swap, 2 compare-swap (value replaces compare). */
GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_atomic(int peer, int kind, uint64_t off,
                                                         uint64_t value, uint64_t compare)
{
    gpurma_port_desc_t d = {.dst = off, .size = 8, .value = value, .compare = compare,
                            .peer = peer, .signal = UINT32_MAX, .counter = UINT32_MAX,
                            .op = (uint16_t)(GPURMA_PORT_OP_FETCH_ADD + kind),
                            .flags = GPURMA_PORT_F_SRC_RAW};
    return d;
}

/* LL packets (psize 8 or 16) carrying `size` payload bytes from src. */
GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_packets(int peer, uint64_t dst_off,
                                                          const void *src, uint64_t size,
                                                          uint32_t flag, int psize)
{
    gpurma_port_desc_t d = {.dst = dst_off, .src = (uint64_t)(uintptr_t)src, .size = size,
                            .value = flag, .peer = peer, .signal = UINT32_MAX,
                            .counter = UINT32_MAX, .op = GPURMA_PORT_OP_PUT,
                            .flags = (uint8_t)(GPURMA_PORT_F_SRC_RAW | GPURMA_PORT_F_PACKETS |
                                               (psize == 16 ? GPURMA_PORT_F_PACKET16 : 0))};
    return d;
}

/* A subarray's shape slot (the encoding above); dst/src: the pitches of
 * the descriptor's dst and src sides. */
GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_shape(int peer, const uint64_t dst_pitch[2],
                                                        const uint64_t src_pitch[2],
                                                        uint64_t planes)
{
    gpurma_port_desc_t d = {.dst = dst_pitch[0], .src = src_pitch[0], .size = dst_pitch[1],
                            .value = src_pitch[1], .compare = planes, .peer = peer,
                            .signal = UINT32_MAX, .counter = UINT32_MAX,
                            .op = GPURMA_PORT_OP_SHAPE};
    return d;
}

/* A subarray (s, checked by the caller) as its descriptor *d and shape
 * slot *e: a get (is_put 0) from window offset off into buf, or a put from
 * buf to off, with the signal after the last row when with_signal. The
 * pitches stay in bytes, as the caller gave them. */
GPURMA_DEVICE void gpurma_port_desc_subarray(int peer, int is_put, uint64_t off, void *buf,
                                             const gpurma_subarray_t *s, int with_signal,
                                             uint32_t sig, gpurma_signal_op_t op, uint64_t value,
                                             gpurma_port_desc_t *d, gpurma_port_desc_t *e)
{
    uint64_t row = (uint64_t)s->count[0] * s->elem_bytes;
    *d = !is_put       ? gpurma_port_desc_get(peer, buf, off, row)
         : with_signal ? gpurma_port_desc_put_signal(peer, off, buf, row, sig, op, value,
                                                     UINT32_MAX)
                       : gpurma_port_desc_put(peer, off, buf, row, UINT32_MAX);
    d->flags |= GPURMA_PORT_F_SHAPE;
    d->compare = s->count[1];
    uint64_t dst_pitch[2] = {s->dst_pitch[0], s->dst_pitch[1]};
    uint64_t src_pitch[2] = {s->src_pitch[0], s->src_pitch[1]};
    *e = gpurma_port_desc_shape(peer, dst_pitch, src_pitch, s->count[2]);
}

/* QUIET or FENCE: a whole proxy context, no peer. */
GPURMA_DEVICE gpurma_port_desc_t gpurma_port_desc_sync(uint16_t op)
{
    gpurma_port_desc_t d = {.signal = UINT32_MAX, .counter = UINT32_MAX, .op = op,
                            .flags = GPURMA_PORT_F_SRC_RAW};
    return d;
}

/* ------------------------------------------------ the FIFO path of the ops */

/* Operations reach a proxy context through a channel's copy of its FIFO
 * and the window's id there (gpurma_dev_chan_t: fifo, port_win_id). */

/* Pushes d to FIFO f for window win_id; with wait, returns when the proxy
 * has executed it, and result (atomics) receives the old value; an atomic
 * not executed in time gives its result slot up. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_submit(void *fifo, uint32_t win_id,
                                                      gpurma_port_desc_t d, int wait,
                                                      uint64_t *result)
{
    gpurma_port_fifo_t *f = (gpurma_port_fifo_t *)fifo;
    if (!f)
        return GPURMA_ERR_UNSUPPORTED;
    d.win_id = win_id;
    uint64_t pos;
    gpurma_status_t rc = gpurma_port_push(f, &d, &pos);
    if (rc != GPURMA_SUCCESS || !wait)
        return rc;
    rc = gpurma_port_wait_done(f, pos);
    if (result && rc == GPURMA_SUCCESS)
        *result = gpurma_port_take_result(f, pos);
    else if (result)
        gpurma_port_abandon_result(f, pos);
    return rc;
}

/* The copy engine or the network reads the source: it must be memory the
 * proxy reaches (global or host memory). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_readable(const void *buf, size_t bytes)
{
    return bytes && !gpurma_sh_proxy_readable(buf) ? GPURMA_ERR_UNSUPPORTED : GPURMA_SUCCESS;
}

/* A whole subarray (gpurma_port_desc_subarray) as one descriptor and its
 * shape slot, pushed together by one thread; the proxy moves every row and
 * plane (and sends the signal after the last). A get waits: the data is
 * there on return. buf_extent: bytes of the local side, for the check
 * that the proxy can reach it. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_subarray(void *fifo, uint32_t win_id, int peer,
                                                        int is_put, size_t off, void *buf,
                                                        size_t buf_extent,
                                                        const gpurma_subarray_t *s,
                                                        int with_signal, uint32_t sig,
                                                        gpurma_signal_op_t op, uint64_t value)
{
    gpurma_port_fifo_t *f = (gpurma_port_fifo_t *)fifo;
    if (!f)
        return GPURMA_ERR_UNSUPPORTED;
    gpurma_status_t rc = gpurma_dev__port_readable(buf, buf_extent);
    if (rc != GPURMA_SUCCESS)
        return rc;
    gpurma_port_desc_t d, e;
    gpurma_port_desc_subarray(peer, is_put, off, buf, s, with_signal, sig, op, value, &d, &e);
    d.win_id = e.win_id = win_id;
    uint64_t pos;
    rc = gpurma_port_push_shaped(f, &d, &e, &pos);
    return rc != GPURMA_SUCCESS || is_put ? rc : gpurma_port_wait_done(f, pos + 1);
}

/* Thread 0 of the team pushes; the proxy bumps the counter when the data
 * has left the source. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_put(void *fifo, uint32_t win_id, int peer,
                                                   size_t dst_off, const void *src, size_t bytes,
                                                   uint32_t counter, unsigned tid)
{
    gpurma_status_t rc = gpurma_dev__port_readable(src, bytes);
    if (rc != GPURMA_SUCCESS || tid)
        return rc;
    return gpurma_dev__port_submit(fifo, win_id,
                                   gpurma_port_desc_put(peer, dst_off, src, bytes, counter), 0,
                                   (uint64_t *)0);
}

/* Waits: the data is there on return. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_get(void *fifo, uint32_t win_id, int peer,
                                                   void *dst, size_t src_off, size_t bytes,
                                                   unsigned tid)
{
    gpurma_status_t rc = gpurma_dev__port_readable(dst, bytes);
    if (rc != GPURMA_SUCCESS || tid)
        return rc;
    return gpurma_dev__port_submit(fifo, win_id, gpurma_port_desc_get(peer, dst, src_off, bytes),
                                   1, (uint64_t *)0);
}

/* Data and signal in one descriptor, from one thread. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_put_signal(void *fifo, uint32_t win_id, int peer,
                                                          size_t dst_off, const void *src,
                                                          size_t bytes, uint32_t sig,
                                                          gpurma_signal_op_t op, uint64_t value,
                                                          uint32_t counter)
{
    gpurma_status_t rc = gpurma_dev__port_readable(src, bytes);
    if (rc != GPURMA_SUCCESS)
        return rc;
    return gpurma_dev__port_submit(
        fifo, win_id,
        gpurma_port_desc_put_signal(peer, dst_off, src, bytes, sig, op, value, counter), 0,
        (uint64_t *)0);
}

/* LL packets through the proxy: it packs `bytes` of payload from src with
 * flag and lands them in whole 8- or 16-byte stores. Thread 0 pushes and
 * waits, so src is reusable on return, as with the load/store path. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_packets(void *fifo, uint32_t win_id, int peer,
                                                       size_t dst_off, const void *src,
                                                       size_t bytes, uint32_t flag, int psize,
                                                       unsigned tid)
{
    gpurma_status_t rc = gpurma_dev__port_readable(src, bytes);
    if (rc != GPURMA_SUCCESS || tid)
        return rc;
    return gpurma_dev__port_submit(
        fifo, win_id, gpurma_port_desc_packets(peer, dst_off, src, bytes, flag, psize), 1,
        (uint64_t *)0);
}

/* Everything pushed to FIFO f so far is complete. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_flush_fifo(void *fifo)
{
    gpurma_port_fifo_t *f = (gpurma_port_fifo_t *)fifo;
    uint64_t head = gpurma_sh_load_acquire_u64(f->head_ptr);
    return head ? gpurma_port_wait_done(f, head - 1) : GPURMA_SUCCESS;
}

/* Everything pushed to any of the window's proxy contexts so far is complete. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_flush_all(const gpurma_dev_win_t *w)
{
    for (unsigned k = 0; k < w->nports; k++) {
        uint32_t id;
        gpurma_status_t rc = gpurma_dev__port_flush_fifo(gpurma_dev__port_fifo(w, k, &id));
        if (rc != GPURMA_SUCCESS)
            return rc;
    }
    return GPURMA_SUCCESS;
}

/* QUIET (wait) or FENCE (no wait) through every proxy context. */
GPURMA_DEVICE gpurma_status_t gpurma_dev__port_all(const gpurma_dev_win_t *w, uint16_t op,
                                                   int wait)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (unsigned k = 0; k < w->nports && rc == GPURMA_SUCCESS; k++) {
        uint32_t id;
        gpurma_port_fifo_t *f = gpurma_dev__port_fifo(w, k, &id);
        rc = gpurma_dev__port_submit(f, id, gpurma_port_desc_sync(op), wait, (uint64_t *)0);
    }
    return rc;
}

#endif
