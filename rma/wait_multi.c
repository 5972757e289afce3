/*
 * wait_multi.c - host waits and tests on several of this rank's signal
 * slots (wait_until_all/any/some, test forms). The scan is the device API's
 * (dev_wait_multi.h); this adds what host waits have: progress of this
 * process's port work, liveness checks, and messages naming the slots.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"
#include "rma.h"

static const char *const cmp_names[] = {"==", "!=", ">", ">=", "<", "<="};

enum { MODE_ALL = GPURMA_DEV__WAIT_ALL, MODE_ANY = GPURMA_DEV__WAIT_ANY };

static int check_args(gpurma_win_t w, const char *op, const uint32_t *sigs, size_t n,
                      gpurma_cmp_t cmp)
{
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if ((unsigned)cmp > GPURMA_CMP_LE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "rank %d: %s: unknown compare %d",
                                w->ctx->rank, op, (int)cmp);
    if (!sigs && n > w->num_signals)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: %s: slots 0..%zu asked (sigs NULL), window has %u",
                                w->ctx->rank, op, n - 1, w->num_signals);
    for (size_t i = 0; sigs && i < n; i++)
        if (sigs[i] >= w->num_signals)
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                    "rank %d: %s: sigs[%zu] = %u does not exist (window has %u)",
                                    w->ctx->rank, op, i, sigs[i], w->num_signals);
    return GPURMA_SUCCESS;
}

/* One look at the slots. Device windows: one copy of the slot array to the
 * host (a poll is a device round trip anyway; one copy beats n loads). */
static int scan(gpurma_win_t w, const gpurma_dev_signal_slot_t *slots, gpurma_dev_signal_slot_t *copy,
                const uint32_t *sigs, size_t n, const int *status, gpurma_cmp_t cmp,
                uint64_t value, int mode, size_t *indices, gpurma_dev__sigs_seen_t *seen)
{
    if (copy) {
        int rc = gpurma_gpu_copy(w->gpu->device, copy, w->gpu->signals,
                                 (size_t)w->num_signals * sizeof(*copy));
        if (rc)
            return rc;
        slots = copy;
    }
    size_t active, first;
    size_t hits = gpurma_dev__scan_sigs(slots, sigs, n, status, cmp, value, indices, &first,
                                        &active);
    seen->held = mode == MODE_ALL ? hits == active : hits > 0 || active == 0;
    seen->count = seen->held ? hits : 0;
    seen->first = seen->held ? first : SIZE_MAX;
    return GPURMA_SUCCESS;
}

/* A timeout's message ends with the first slot still unsatisfied (the
 * value the wait reported is not one slot's). */
static void name_unsatisfied(gpurma_win_t w, const gpurma_dev_signal_slot_t *slots,
                             const uint32_t *sigs, size_t n, const int *status, gpurma_cmp_t cmp,
                             uint64_t value)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t s = sigs ? sigs[i] : (uint32_t)i;
        uint64_t v = __atomic_load_n(&slots[s].value, __ATOMIC_ACQUIRE);
        if ((status && status[i]) || gpurma_dev_compare(v, cmp, value))
            continue;
        char text[512];
        snprintf(text, sizeof(text), "%s", gpurma_error_text());
        gpurma_set_error(GPURMA_ERR_TIMEOUT, "%s; signal %u (entry %zu) holds %llu", text, s, i,
                         (unsigned long long)v);
        (void)w;
        return;
    }
}

static int wait_sigs(gpurma_win_t w, const char *op, const uint32_t *sigs, size_t n,
                     const int *status, gpurma_cmp_t cmp, uint64_t value, int mode,
                     size_t *indices, int block, gpurma_dev__sigs_seen_t *seen)
{
    seen->held = 0;
    seen->count = 0;
    seen->first = SIZE_MAX;
    int rc = check_args(w, op, sigs, n, cmp);
    if (rc)
        return rc;
    gpurma_dev_signal_slot_t *copy = NULL;
    if (w->gpu) {
        copy = malloc((size_t)w->num_signals * sizeof(*copy));
        if (!copy)
            return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "rank %d: %s: no memory",
                                    w->ctx->rank, op);
    }
    const gpurma_dev_signal_slot_t *slots = w->dev.signals;
    struct gpurma_ctx_s *ctx = w->ctx;
    uint64_t start = 0, next_check = 0, spin_end = 0, slow = 0;
    char what[96];
    what[0] = 0;
    for (uint64_t iter = 0;; iter++) {
        rc = scan(w, slots, copy, sigs, n, status, cmp, value, mode, indices, seen);
        if (rc || seen->held || !block)
            break;
        if (!start) {
            start = gpurma_now_ns();
            next_check = start + ctx->liveness_ns;
            spin_end = start + ctx->spin_ns;
            /* No core to spin on (more ranks than cores): yield at once, the
             * peers we wait for need this core. */
            slow = ctx->spin_ns ? 0 : 64;
            snprintf(what, sizeof(what), "%s(%zu signals %s %llu)", op, n, cmp_names[cmp],
                     (unsigned long long)value);
        }
        if (gpurma_ctx_progress(ctx)) {
            slow = 0;
            continue;
        }
        uint64_t now = gpurma_now_ns();
        if (!copy && (iter & 63) != 63) {
            gpurma_backoff(now < spin_end ? 0 : slow++);
            continue;
        }
        rc = gpurma_wait_stalled(w->team, start, now, &next_check, 0, value, what, -1);
        if (rc) {
            /* What a peer sent before it died counts. */
            gpurma_dev__sigs_seen_t last;
            if (!scan(w, slots, copy, sigs, n, status, cmp, value, mode, indices, &last) &&
                last.held) {
                *seen = last;
                rc = GPURMA_SUCCESS;
            } else if (rc == GPURMA_ERR_TIMEOUT) {
                name_unsatisfied(w, copy ? copy : slots, sigs, n, status, cmp, value);
            }
            break;
        }
        gpurma_backoff(now < spin_end ? 0 : slow++);
    }
    free(copy);
    return rc;
}

GPURMA_API gpurma_status_t gpurma_wait_until_all(gpurma_win_t w, const uint32_t *sigs, size_t n,
                                                 const int *status, gpurma_cmp_t cmp,
                                                 uint64_t value)
{
    gpurma_dev__sigs_seen_t seen;
    return wait_sigs(w, "wait_until_all", sigs, n, status, cmp, value, MODE_ALL, NULL, 1, &seen);
}

GPURMA_API gpurma_status_t gpurma_wait_until_any(gpurma_win_t w, const uint32_t *sigs, size_t n,
                                                 const int *status, gpurma_cmp_t cmp,
                                                 uint64_t value, size_t *index)
{
    gpurma_dev__sigs_seen_t seen;
    if (!index)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "wait_until_any: index is NULL");
    int rc = wait_sigs(w, "wait_until_any", sigs, n, status, cmp, value, MODE_ANY, NULL, 1,
                       &seen);
    *index = seen.first;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_wait_until_some(gpurma_win_t w, const uint32_t *sigs,
                                                  size_t n, const int *status, gpurma_cmp_t cmp,
                                                  uint64_t value, size_t *indices, size_t *count)
{
    gpurma_dev__sigs_seen_t seen;
    if (!indices || !count)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "wait_until_some: indices or count is NULL");
    int rc = wait_sigs(w, "wait_until_some", sigs, n, status, cmp, value, MODE_ANY, indices, 1,
                       &seen);
    *count = seen.count;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_test_all(gpurma_win_t w, const uint32_t *sigs, size_t n,
                                           const int *status, gpurma_cmp_t cmp, uint64_t value,
                                           int *satisfied)
{
    gpurma_dev__sigs_seen_t seen;
    if (!satisfied)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "test_all: satisfied is NULL");
    int rc = wait_sigs(w, "test_all", sigs, n, status, cmp, value, MODE_ALL, NULL, 0, &seen);
    *satisfied = seen.held;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_test(gpurma_win_t w, uint32_t sig, gpurma_cmp_t cmp,
                                       uint64_t value, int *satisfied)
{
    gpurma_dev__sigs_seen_t seen;
    if (!satisfied)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "test: satisfied is NULL");
    int rc = wait_sigs(w, "test", &sig, 1, NULL, cmp, value, MODE_ALL, NULL, 0, &seen);
    *satisfied = seen.held;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_test_any(gpurma_win_t w, const uint32_t *sigs, size_t n,
                                           const int *status, gpurma_cmp_t cmp, uint64_t value,
                                           size_t *index)
{
    gpurma_dev__sigs_seen_t seen;
    if (!index)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "test_any: index is NULL");
    int rc = wait_sigs(w, "test_any", sigs, n, status, cmp, value, MODE_ANY, NULL, 0, &seen);
    *index = seen.first;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_test_some(gpurma_win_t w, const uint32_t *sigs, size_t n,
                                            const int *status, gpurma_cmp_t cmp, uint64_t value,
                                            size_t *indices, size_t *count)
{
    gpurma_dev__sigs_seen_t seen;
    if (!indices || !count)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "test_some: indices or count is NULL");
    int rc = wait_sigs(w, "test_some", sigs, n, status, cmp, value, MODE_ANY, indices, 0,
                       &seen);
    *count = seen.count;
    return rc;
}
