/*
 * ops.c - host-initiated one-sided operations: check everything, then hand
 * the call to the engine that serves the peer. Nothing is written when a
 * check fails, and the message says which rank, peer, offset and size.
 */
#include <stdio.h>

#include "rma.h"

static const char *const cmp_names[] = {"==", "!=", ">", ">=", "<", "<="};

static int check_counter(const struct gpurma_win_s *w, const char *op, uint32_t counter)
{
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if (counter >= w->num_counters)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: counter %u does not exist (window has %u)",
                                w->ctx->rank, op, counter, w->num_counters);
    return GPURMA_SUCCESS;
}

static int put_common(gpurma_win_t w, int peer, size_t off, const void *src, size_t bytes,
                      uint32_t counter)
{
    int rc = gpurma_check_range(w, "put", peer, off, bytes, src);
    if (rc)
        return rc;
    const gpurma_engine_ops_t *e = w->engines[peer];
    return e->put(w, peer, off, src, bytes, counter);
}

GPURMA_API gpurma_status_t gpurma_put(gpurma_win_t w, int peer, size_t off, const void *src,
                                      size_t bytes)
{
    return put_common(w, peer, off, src, bytes, GPURMA_NO_COUNTER);
}

GPURMA_API gpurma_status_t gpurma_put_counted(gpurma_win_t w, int peer, size_t off,
                                              const void *src, size_t bytes, uint32_t counter)
{
    int rc = check_counter(w, "put_counted", counter);
    return rc ? rc : put_common(w, peer, off, src, bytes, counter);
}

GPURMA_API gpurma_status_t gpurma_get(gpurma_win_t w, int peer, void *dst, size_t off,
                                      size_t bytes)
{
    int rc = gpurma_check_range(w, "get", peer, off, bytes, dst);
    if (rc)
        return rc;
    const gpurma_engine_ops_t *e = w->engines[peer];
    return e->get(w, peer, dst, off, bytes);
}

int gpurma_check_put_value(const struct gpurma_win_s *w, const char *op, int peer, size_t off,
                           size_t bytes)
{
    uint64_t value = 0; /* passed by copy: any buffer passes the NULL check */
    int rc = gpurma_check_range(w, op, peer, off, bytes, &value);
    if (rc)
        return rc;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s of %zu bytes: must be 1, 2, 4 or 8", w->ctx->rank,
                                op, bytes);
    if (off % bytes)
        return gpurma_set_error(GPURMA_ERR_MISALIGNED,
                                "rank %d: %s of %zu bytes at offset %zu: not aligned",
                                w->ctx->rank, op, bytes, off);
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_put_value(gpurma_win_t w, int peer, size_t off, uint64_t value,
                                            size_t bytes)
{
    int rc = gpurma_check_put_value(w, "put_value", peer, off, bytes);
    if (rc)
        return rc;
    const gpurma_engine_ops_t *e = w->engines[peer];
    return e->put_value(w, peer, off, value, bytes);
}

GPURMA_API gpurma_status_t gpurma_signal(gpurma_win_t w, int peer, uint32_t sig,
                                         gpurma_signal_op_t op, uint64_t value)
{
    int rc = gpurma_check_peer(w, "signal", peer);
    if (!rc)
        rc = gpurma_check_signal_op(w, "signal", sig, op);
    if (rc)
        return rc;
    const gpurma_engine_ops_t *e = w->engines[peer];
    return e->signal(w, peer, sig, op, value);
}

static int put_signal_common(gpurma_win_t w, int peer, size_t off, const void *src, size_t bytes,
                             uint32_t sig, gpurma_signal_op_t op, uint64_t value,
                             uint32_t counter)
{
    int rc = gpurma_check_range(w, "put_signal", peer, off, bytes, src);
    if (!rc)
        rc = gpurma_check_signal_op(w, "put_signal", sig, op);
    if (rc)
        return rc;
    const gpurma_engine_ops_t *e = w->engines[peer];
    return e->put_signal(w, peer, off, src, bytes, sig, op, value, counter);
}

GPURMA_API gpurma_status_t gpurma_put_signal(gpurma_win_t w, int peer, size_t off,
                                             const void *src, size_t bytes, uint32_t sig,
                                             gpurma_signal_op_t op, uint64_t value)
{
    return put_signal_common(w, peer, off, src, bytes, sig, op, value, GPURMA_NO_COUNTER);
}

GPURMA_API gpurma_status_t gpurma_put_signal_counted(gpurma_win_t w, int peer, size_t off,
                                                     const void *src, size_t bytes, uint32_t sig,
                                                     gpurma_signal_op_t op, uint64_t value,
                                                     uint32_t counter)
{
    int rc = check_counter(w, "put_signal_counted", counter);
    return rc ? rc : put_signal_common(w, peer, off, src, bytes, sig, op, value, counter);
}

GPURMA_API gpurma_status_t gpurma_wait_until(gpurma_win_t w, uint32_t sig, gpurma_cmp_t cmp,
                                             uint64_t value)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal(w, "wait_until", sig);
    if (rc)
        return rc;
    if ((unsigned)cmp > GPURMA_CMP_LE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: wait_until: unknown compare %d",
                                w->ctx->rank, (int)cmp);
    return w->home->wait(w, sig, cmp, value);
}

void gpurma_wait_what(char *buf, size_t len, uint32_t sig, gpurma_cmp_t cmp, uint64_t value)
{
    snprintf(buf, len, "wait_until(signal %u %s %llu)", sig, cmp_names[cmp],
             (unsigned long long)value);
}

GPURMA_API gpurma_status_t gpurma_signal_read(gpurma_win_t w, uint32_t sig, uint64_t *value)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal(w, "signal_read", sig);
    if (!rc && !value)
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG, "signal_read: value is NULL");
    return rc ? rc : w->home->signal_read(w, sig, value);
}

GPURMA_API gpurma_status_t gpurma_signal_reset(gpurma_win_t w, uint32_t sig)
{
    int rc = gpurma_win_check(w);
    if (!rc)
        rc = gpurma_check_signal(w, "signal_reset", sig);
    return rc ? rc : w->home->signal_reset(w, sig);
}

static int atomic_common(gpurma_win_t w, const char *op, gpurma_atomic_kind_t kind, int peer,
                         size_t off, uint64_t value, uint64_t compare, uint64_t *old)
{
    int rc = gpurma_check_range(w, op, peer, off, 8, &value);
    if (rc)
        return rc;
    if (off & 7)
        return gpurma_set_error(GPURMA_ERR_MISALIGNED,
                                "rank %d: %s at offset %zu on peer %d: must be 8-byte aligned",
                                w->ctx->rank, op, off, peer);
    const gpurma_engine_ops_t *e = w->engines[peer];
    return e->atomic(w, peer, kind, off, value, compare, old);
}

GPURMA_API gpurma_status_t gpurma_atomic_fetch_add(gpurma_win_t w, int peer, size_t off,
                                                   uint64_t value, uint64_t *old)
{
    return atomic_common(w, "atomic_fetch_add", GPURMA_ATOMIC_FETCH_ADD, peer, off, value, 0, old);
}

GPURMA_API gpurma_status_t gpurma_atomic_swap(gpurma_win_t w, int peer, size_t off,
                                              uint64_t value, uint64_t *old)
{
    return atomic_common(w, "atomic_swap", GPURMA_ATOMIC_SWAP, peer, off, value, 0, old);
}

GPURMA_API gpurma_status_t gpurma_atomic_compare_swap(gpurma_win_t w, int peer, size_t off,
                                                      uint64_t expected, uint64_t desired,
                                                      uint64_t *old)
{
    return atomic_common(w, "atomic_compare_swap", GPURMA_ATOMIC_CAS, peer, off, desired,
                         expected, old);
}

GPURMA_API gpurma_status_t gpurma_counter_wait(gpurma_win_t w, uint32_t counter, uint64_t value)
{
    int rc = check_counter(w, "counter_wait", counter);
    if (rc)
        return rc;
    char what[64];
    snprintf(what, sizeof(what), "counter_wait(counter %u >= %llu)", counter,
             (unsigned long long)value);
    return gpurma_wait_u64(w->team, &w->counters[counter], GPURMA_CMP_GE, value, what, -1);
}

GPURMA_API gpurma_status_t gpurma_counter_read(gpurma_win_t w, uint32_t counter, uint64_t *value)
{
    int rc = check_counter(w, "counter_read", counter);
    if (!rc && !value)
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG, "counter_read: value is NULL");
    if (!rc)
        *value = __atomic_load_n(&w->counters[counter], __ATOMIC_ACQUIRE);
    return rc;
}

GPURMA_API gpurma_status_t gpurma_counter_reset(gpurma_win_t w, uint32_t counter)
{
    int rc = check_counter(w, "counter_reset", counter);
    if (!rc)
        __atomic_store_n(&w->counters[counter], 0, __ATOMIC_RELEASE);
    return rc;
}
