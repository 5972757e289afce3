/*
 * dev_wait_multi.h - waits and tests on several signal slots of the caller's
 * own window (OpenSHMEM's wait_until_all/any/some and test forms). Included
 * by gpurma_device.h; not ABI. The host calls (rma/wait_multi.c) scan with
 * the same functions and add progress, liveness and messages.
 *
 * sigs lists n slot ids (NULL: slots 0..n-1); status, when not NULL, marks
 * entries to ignore (nonzero), as in OpenSHMEM. Indices returned are
 * positions in that list. Every satisfied slot is read with acquire
 * ordering, so data announced by it is readable afterwards.
 */
#ifndef GPURMA_DETAIL_DEV_WAIT_MULTI_H
#define GPURMA_DETAIL_DEV_WAIT_MULTI_H

#include "gpurma/detail/dev_common.h"

/* GPURMA_SUCCESS, or INVALID_ARG for a bad slot id or compare (nothing read). */
GPURMA_HOST_DEVICE gpurma_status_t gpurma_dev__check_sigs(uint32_t num_signals,
                                                          const uint32_t *sigs, size_t n,
                                                          gpurma_cmp_t cmp)
{
    if ((unsigned)cmp > GPURMA_CMP_LE)
        return GPURMA_ERR_INVALID_ARG;
    if (!sigs)
        return n <= num_signals ? GPURMA_SUCCESS : GPURMA_ERR_INVALID_ARG;
    for (size_t i = 0; i < n; i++)
        if (sigs[i] >= num_signals)
            return GPURMA_ERR_INVALID_ARG;
    return GPURMA_SUCCESS;
}

/* One pass over the list: how many active entries are satisfied (their
 * positions, lowest first, in indices when not NULL; the lowest in *first,
 * SIZE_MAX when none), and how many entries are active at all. */
GPURMA_DEVICE size_t gpurma_dev__scan_sigs(const gpurma_dev_signal_slot_t *slots,
                                           const uint32_t *sigs, size_t n,
                                                const int *status, gpurma_cmp_t cmp,
                                                uint64_t value, size_t *indices, size_t *first,
                                                size_t *active)
{
    size_t hits = 0, live = 0;
    *first = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (status && status[i])
            continue;
        live++;
        uint32_t s = sigs ? sigs[i] : (uint32_t)i;
        if (gpurma_dev_compare(gpurma_sh_load_acquire_u64(&slots[s].value), cmp, value)) {
            if (indices)
                indices[hits] = i;
            if (!hits)
                *first = i;
            hits++;
        }
    }
    *active = live;
    return hits;
}

typedef enum { GPURMA_DEV__WAIT_ALL = 0, GPURMA_DEV__WAIT_ANY = 1 } gpurma_dev__wait_mode_t;

/* The outcome of a scan or wait: whether mode's condition held, how many
 * active entries were satisfied, the lowest of them (SIZE_MAX: none). */
typedef struct gpurma_dev__sigs_seen {
    int    held;
    size_t count, first;
} gpurma_dev__sigs_seen_t;

/* The one loop behind every form: scans until mode's condition holds (or
 * once, when block is 0). ALL holds when every active entry is satisfied;
 * ANY (and SOME) when one is; both hold when no entry is active (nothing to
 * wait for: OpenSHMEM returns at once too). */
GPURMA_DEVICE gpurma_status_t gpurma_dev__wait_sigs(gpurma_dev_win_t w, const uint32_t *sigs,
                                                    size_t n, const int *status,
                                                    gpurma_cmp_t cmp, uint64_t value, int mode,
                                                    size_t *indices, int block,
                                                    gpurma_dev__sigs_seen_t *seen)
{
    seen->held = 0;
    seen->count = 0;
    seen->first = SIZE_MAX;
    gpurma_status_t rc = gpurma_dev__check_win(&w);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev__check_sigs(w.num_signals, sigs, n, cmp);
    if (rc != GPURMA_SUCCESS)
        return rc;
    uint64_t start = 0;
    for (uint64_t iter = 0;; iter++) {
        size_t active, low;
        size_t hits = gpurma_dev__scan_sigs(w.signals, sigs, n, status, cmp, value, indices,
                                            &low, &active);
        if (mode == GPURMA_DEV__WAIT_ALL ? hits == active : hits > 0 || active == 0) {
            seen->held = 1;
            seen->count = hits;
            seen->first = low;
            return GPURMA_SUCCESS;
        }
        if (!block)
            return GPURMA_SUCCESS;
        if (gpurma_dev__expired(iter, &start, w.timeout_ns))
            return GPURMA_ERR_TIMEOUT;
        gpurma_sh_pause_n(iter);
    }
}

/* Waits until every listed slot satisfies cmp value. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_wait_until_all(gpurma_dev_win_t w, const uint32_t *sigs,
                                                        size_t n, const int *status,
                                                        gpurma_cmp_t cmp, uint64_t value)
{
    gpurma_dev__sigs_seen_t seen;
    return gpurma_dev__wait_sigs(w, sigs, n, status, cmp, value, GPURMA_DEV__WAIT_ALL,
                                 (size_t *)0, 1, &seen);
}

/* Waits until one listed slot does; *index is the lowest such position
 * (SIZE_MAX when no entry is active). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_wait_until_any(gpurma_dev_win_t w, const uint32_t *sigs,
                                                        size_t n, const int *status,
                                                        gpurma_cmp_t cmp, uint64_t value,
                                                        size_t *index)
{
    gpurma_dev__sigs_seen_t seen;
    if (!index)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_status_t rc = gpurma_dev__wait_sigs(w, sigs, n, status, cmp, value,
                                               GPURMA_DEV__WAIT_ANY, (size_t *)0, 1, &seen);
    *index = seen.first;
    return rc;
}

/* Waits until at least one listed slot does; every satisfied position goes
 * to indices (room for n), their number to *count (0 when no entry is
 * active). */
GPURMA_DEVICE gpurma_status_t gpurma_dev_wait_until_some(gpurma_dev_win_t w,
                                                         const uint32_t *sigs, size_t n,
                                                         const int *status, gpurma_cmp_t cmp,
                                                         uint64_t value, size_t *indices,
                                                         size_t *count)
{
    gpurma_dev__sigs_seen_t seen;
    if (!indices || !count)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_status_t rc = gpurma_dev__wait_sigs(w, sigs, n, status, cmp, value,
                                               GPURMA_DEV__WAIT_ANY, indices, 1, &seen);
    *count = seen.count;
    return rc;
}

/* Non-blocking forms: one look. test and test_all: *satisfied 1 or 0;
 * test_any: *index as wait_until_any, SIZE_MAX when none is satisfied;
 * test_some: *count 0 when none is. */
GPURMA_DEVICE gpurma_status_t gpurma_dev_test_all(gpurma_dev_win_t w, const uint32_t *sigs,
                                                  size_t n, const int *status, gpurma_cmp_t cmp,
                                                  uint64_t value, int *satisfied)
{
    gpurma_dev__sigs_seen_t seen;
    if (!satisfied)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_status_t rc = gpurma_dev__wait_sigs(w, sigs, n, status, cmp, value,
                                               GPURMA_DEV__WAIT_ALL, (size_t *)0, 0, &seen);
    *satisfied = seen.held;
    return rc;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_test(gpurma_dev_win_t w, uint32_t sig,
                                              gpurma_cmp_t cmp, uint64_t value, int *satisfied)
{
    return gpurma_dev_test_all(w, &sig, 1, (const int *)0, cmp, value, satisfied);
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_test_any(gpurma_dev_win_t w, const uint32_t *sigs,
                                                  size_t n, const int *status, gpurma_cmp_t cmp,
                                                  uint64_t value, size_t *index)
{
    gpurma_dev__sigs_seen_t seen;
    if (!index)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_status_t rc = gpurma_dev__wait_sigs(w, sigs, n, status, cmp, value,
                                               GPURMA_DEV__WAIT_ANY, (size_t *)0, 0, &seen);
    *index = seen.first;
    return rc;
}

GPURMA_DEVICE gpurma_status_t gpurma_dev_test_some(gpurma_dev_win_t w, const uint32_t *sigs,
                                                   size_t n, const int *status, gpurma_cmp_t cmp,
                                                   uint64_t value, size_t *indices,
                                                   size_t *count)
{
    gpurma_dev__sigs_seen_t seen;
    if (!indices || !count)
        return GPURMA_ERR_INVALID_ARG;
    gpurma_status_t rc = gpurma_dev__wait_sigs(w, sigs, n, status, cmp, value,
                                               GPURMA_DEV__WAIT_ANY, indices, 0, &seen);
    *count = seen.count;
    return rc;
}

#endif
