/*
 * engine_gpu.c - host-initiated operations on device windows: the mem
 * engine's variant for windows in GPU memory, its own entry in the engine
 * table (engines.c), chosen once when the window is created: nothing on
 * the data path asks where the memory is. Kernels reach the same memory
 * with loads and stores (gpurma_device.h); the host cannot, so it copies
 * with cudaMemcpy to the peer's IPC mapping and updates signal slots and
 * atomics with one-thread kernels (src/gpu/gpu_cuda.c). Every call returns when its
 * effect is complete, so flush, quiet and fence have nothing left to do.
 *
 * Ordering of put_signal: the copy is synchronized before the signal
 * kernel is launched, and the kernel fences at system scope before its
 * release store, so a peer that observes the signal sees the data.
 *
 * Host waits on this rank's signals poll the slot with 8-byte copies
 * (device-to-host); each poll costs a few microseconds, which is fine for
 * host-side waits and keeps the slots in device memory, where peer GPUs
 * update them atomically at full speed.
 */
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "rma.h"

static int gpu_reach(const struct gpurma_win_s *w, int peer, int forced)
{
    (void)forced;
    if (!w->gpu || w->peers[peer].path == GPURMA_DEV_PATH_NONE)
        return 0;
    return 100; /* the mem engine's preference: nothing is faster */
}

static void count_completion(struct gpurma_win_s *w, uint32_t counter)
{
    if (counter != GPURMA_NO_COUNTER)
        __atomic_fetch_add(&w->counters[counter], 1, __ATOMIC_RELEASE);
}

static int gpu_put(struct gpurma_win_s *w, int peer, size_t off, const void *src, size_t n,
                   uint32_t counter)
{
    int rc = gpurma_gpu_copy(w->gpu->device, w->peers[peer].base + off, src, n);
    if (!rc)
        count_completion(w, counter);
    return rc;
}

static int gpu_get(struct gpurma_win_s *w, int peer, void *dst, size_t off, size_t n)
{
    return gpurma_gpu_copy(w->gpu->device, dst, w->peers[peer].base + off, n);
}

static int gpu_put_value(struct gpurma_win_s *w, int peer, size_t off, uint64_t v, size_t n)
{
    /* little-endian: the low n bytes of v are the value */
    return gpurma_gpu_copy(w->gpu->device, w->peers[peer].base + off, &v, n);
}

static int gpu_signal(struct gpurma_win_s *w, int peer, uint32_t sig, gpurma_signal_op_t op,
                      uint64_t v)
{
    return gpurma_gpu_signal(w->gpu->device, &w->peers[peer].signals[sig], (uint32_t)w->rank,
                             (int)op, v);
}

static int gpu_put_signal(struct gpurma_win_s *w, int peer, size_t off, const void *src,
                          size_t n, uint32_t sig, gpurma_signal_op_t op, uint64_t v,
                          uint32_t counter)
{
    int rc = gpurma_gpu_copy(w->gpu->device, w->peers[peer].base + off, src, n);
    if (!rc)
        count_completion(w, counter);
    return rc ? rc : gpu_signal(w, peer, sig, op, v);
}

static int gpu_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                      uint64_t v, uint64_t compare, uint64_t *old)
{
    return gpurma_gpu_atomic(w->gpu->device, (uint64_t *)(w->peers[peer].base + off), (int)kind,
                             v, compare, old);
}

/* ------------------------------------------- this rank's signal slots */

static int gpu_signal_read(struct gpurma_win_s *w, uint32_t sig, uint64_t *value)
{
    return gpurma_gpu_load_u64(w->gpu->device, &w->gpu->signals[sig].value, value);
}

static int gpu_signal_reset(struct gpurma_win_s *w, uint32_t sig)
{
    return gpurma_gpu_store_u64(w->gpu->device, &w->gpu->signals[sig].value, 0);
}

/* gpurma_wait_u64 for a slot in device memory: same bounds, same messages. */
static int gpu_wait(struct gpurma_win_s *w, uint32_t sig, gpurma_cmp_t cmp, uint64_t value)
{
    char what[GPURMA_WAIT_WHAT_MAX];
    gpurma_wait_what(what, sizeof(what), sig, cmp, value);
    struct gpurma_ctx_s *ctx = w->ctx;
    struct gpurma_team_s *team = w->team;
    gpurma_dev_signal_slot_t *slot = &w->gpu->signals[sig];
    uint64_t start = gpurma_now_ns(), next_check = start + ctx->liveness_ns;
    for (uint64_t iter = 0;; iter++) {
        uint64_t v = 0;
        int rc = gpurma_gpu_load_u64(w->gpu->device, &slot->value, &v);
        if (rc)
            return rc;
        if (gpurma_dev_compare(v, cmp, value))
            return GPURMA_SUCCESS;
        rc = gpurma_wait_stalled(team, start, gpurma_now_ns(), &next_check, v, value, what, -1);
        if (rc == GPURMA_ERR_TIMEOUT) {
            uint32_t origin = UINT32_MAX;
            (void)gpurma_gpu_copy(w->gpu->device, &origin, &slot->last_origin, sizeof(origin));
            char text[512];
            snprintf(text, sizeof(text), "%s", gpurma_error_text());
            if (origin == UINT32_MAX)
                gpurma_set_error(rc, "%s (device window); no rank has signalled it yet", text);
            else
                gpurma_set_error(rc, "%s (device window); last signalled by team rank %u", text,
                                 origin);
        }
        if (rc)
            return rc;
        /* A poll is a device round trip already; only back off further
         * once the wait is clearly long. */
        if (iter > 256)
            gpurma_backoff(iter);
    }
}

/* Every host call returned complete: flush, quiet and fence keep the
 * table's defaults (nothing pending). */
const gpurma_engine_ops_t gpurma_engine_mem_gpu_ops = {
    .size         = sizeof(gpurma_engine_ops_t),
    .kind         = GPURMA_ENGINE_MEM,
    .reach        = gpu_reach,
    .put          = gpu_put,
    .get          = gpu_get,
    .put_value    = gpu_put_value,
    .signal       = gpu_signal,
    .put_signal   = gpu_put_signal,
    .atomic       = gpu_atomic,
    .wait         = gpu_wait,
    .signal_read  = gpu_signal_read,
    .signal_reset = gpu_signal_reset,
};
