/*
 * state.c - the bottom of the NVSHMEM layer: the library's state, failure
 * reports (a failed call ends the job naming the call, as NVSHMEM does),
 * the registry of units and the state copied to them, and the heap-offset
 * check every RMA call starts with. init.c, heap.c and team.c call it; it
 * calls none of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "nvshmem_internal.h"

gpurma_nvshmemi_lib_t gpurma_nvshmemi_lib = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------ failures */

/* detail: the message of the gpurma call that failed, or NULL when the
 * layer itself refused (the library's last message is then older and
 * unrelated: a probe at init, say). */
__attribute__((noreturn)) static void layer_abort(const char *call, int status, const char *why,
                                                  const char *detail)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    char msg[768];
    snprintf(msg, sizeof msg, "NVSHMEM layer: PE %d: %s: %s (%s%s%s)",
             L->ctx ? gpurma_rank(L->ctx) : -1, call ? call : "?", why ? why : "",
             gpurma_strerror((gpurma_status_t)status), detail && *detail ? ": " : "",
             detail ? detail : "");
    gpurma_abort(L->ctx, 1, msg);
    for (;;) /* gpurma_abort does not return */
        ;
}

GPURMA_API void gpurma_nvshmemi_fail(const char *call, int status, const char *why)
{
    layer_abort(call, status, why, NULL);
}

/* A gpurma call of the layer failed: its own message follows. */
void gpurma_nvshmemi_fail_after(const char *call, gpurma_status_t rc, const char *why)
{
    gpurma_ctx_t ctx = gpurma_nvshmemi_lib.ctx;
    layer_abort(call, rc, why, ctx ? gpurma_last_error_message(ctx) : NULL);
}

void gpurma_nvshmemi_check_rc(const char *call, gpurma_status_t rc)
{
    if (rc != GPURMA_SUCCESS)
        gpurma_nvshmemi_fail_after(call, rc, "the gpurma call failed");
}

void gpurma_nvshmemi_require_init(const char *call)
{
    if (__atomic_load_n(&gpurma_nvshmemi_lib.status, __ATOMIC_ACQUIRE) <
        NVSHMEM_STATUS_IS_INITIALIZED)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_NOT_INITIALIZED,
                             gpurma_nvshmemi_lib.finalized ? "called after nvshmem_finalize"
                                             : "called before nvshmem_init");
}

/* As prims.h's gpurma_nvshmemi__find, on the host's state: a region that
 * holds addr wins over one that ends there (the heap's end, or a segment's,
 * takes a zero-byte access). */
int gpurma_nvshmemi_find_segment(const void *addr, size_t *off)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_lib.st;
    const uintptr_t a = (uintptr_t)addr;
    int ends_here = -1;
    for (uint32_t k = 0; k <= s->nsegments && k <= GPURMA_NVSHMEMI_MAX_SEGMENTS; k++) {
        uintptr_t base = (uintptr_t)(k ? s->segments[k - 1].base : s->heap_base);
        uint64_t size = k ? s->segments[k - 1].size : s->heap_size;
        if (!base || a < base || a - base > size)
            continue;
        if (a - base < size) {
            *off = (size_t)(a - base);
            return (int)k;
        }
        if (ends_here < 0) {
            *off = (size_t)size;
            ends_here = (int)k;
        }
    }
    return ends_here;
}

size_t gpurma_nvshmemi_heap_offset(const char *call, const void *addr, size_t bytes,
                                   gpurma_win_t *win)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    size_t off = 0;
    int k = gpurma_nvshmemi_find_segment(addr, &off);
    if (k < 0)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG,
                             "the address is not in the symmetric heap");
    uint64_t size = k ? L->st.segments[k - 1].size : L->st.heap_size;
    if (bytes > size - off)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG,
                             "the access runs past the end of the symmetric heap");
    /* The layer's own words (barrier counters, team handles): see prims.h. */
    if (!k && off < L->st.sync_bytes)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG,
                             "the address is below the first nvshmem_malloc (the layer's own "
                             "barrier and team words)");
    if (win)
        *win = k ? L->seg_wins[k - 1] : L->win;
    return off;
}

/* -------------------------------------------------------------- units */

/* The fast path's fields of the state (types.h), from the rest of it. A
 * PE on the port engine stays off it even where its memory is mapped:
 * kernels reach it through the proxy alone, as the device peer table
 * (which hides its address) has it, so that the proxy's ordering holds. */
static void derive_fast_path(gpurma_nvshmemi_lib_t *L)
{
    gpurma_nvshmemi_state_t *s = &L->st;
    s->user_base = NULL;
    s->user_size = 0;
    s->any_port = 0;
    memset(s->heap_peers, 0, sizeof s->heap_peers);
    if (s->magic != GPURMA_NVSHMEMI_STATE_LIVE || !L->win || s->heap_size < s->sync_bytes)
        return;
    s->any_port = s->win.nports != 0;
    for (uint32_t k = 0; k < s->nsegments && k < GPURMA_NVSHMEMI_MAX_SEGMENTS; k++)
        if (s->segments[k].base && s->segments[k].win.nports)
            s->any_port = 1;
    s->user_base = s->heap_base + s->sync_bytes;
    s->user_size = s->heap_size - s->sync_bytes;
    for (int pe = 0; pe < s->n_pes && pe < GPURMA_NVSHMEMI_DIRECT_PES; pe++) {
        if (gpurma_win_engine(L->win, pe) == GPURMA_ENGINE_PORT)
            continue;
        char *peer = gpurma_win_peer_ptr(L->win, pe);
        size_t size = 0;
        if (peer && gpurma_win_size_checked(L->win, pe, &size) == GPURMA_SUCCESS &&
            size >= s->heap_size)
            s->heap_peers[pe] = peer + s->sync_bytes;
    }
}

void gpurma_nvshmemi_push_state(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    derive_fast_path(L);
    for (size_t i = 0; i < L->nunits; i++)
        L->units[i](&L->st);
}

GPURMA_API void gpurma_nvshmemi_register(gpurma_nvshmemi_update_fn update)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    pthread_mutex_lock(&L->lock);
    if (L->nunits == L->units_cap) {
        size_t cap = L->units_cap ? L->units_cap * 2 : 16, bytes;
        gpurma_nvshmemi_update_fn *u = NULL;
        if (!gpurma_size_mul(cap, sizeof *u, &bytes))
            u = realloc(L->units, bytes);
        if (!u) {
            pthread_mutex_unlock(&L->lock);
            gpurma_nvshmemi_fail("nvshmem.h unit registration", GPURMA_ERR_NO_MEMORY,
                                 "out of memory");
        }
        L->units = u;
        L->units_cap = cap;
    }
    L->units[L->nunits++] = update;
    if (L->status >= NVSHMEM_STATUS_IS_INITIALIZED) /* a module loaded after init */
        update(&L->st);
    pthread_mutex_unlock(&L->lock);
}

GPURMA_API void gpurma_nvshmemi_refresh(gpurma_nvshmemi_update_fn update)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    pthread_mutex_lock(&L->lock);
    if (L->status >= NVSHMEM_STATUS_IS_INITIALIZED)
        update(&L->st);
    pthread_mutex_unlock(&L->lock);
}

GPURMA_API void gpurma_nvshmemi_unregister(gpurma_nvshmemi_update_fn update)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    pthread_mutex_lock(&L->lock);
    for (size_t i = 0; i < L->nunits; i++)
        if (L->units[i] == update) {
            L->units[i] = L->units[--L->nunits];
            break;
        }
    pthread_mutex_unlock(&L->lock);
}

/* A team's first barrier_on_stream builds a small device window for it
 * (cudaMalloc, IPC maps, an exchange among the members). Built here, when
 * the team is made, that setup never runs in the middle of the program's
 * work: not while its kernels occupy the GPU, not in a graph capture, and
 * not after an error of the program's own kernels left the CUDA context
 * unusable, which then surfaced as a window-creation failure naming
 * nvshmemx_barrier_all_on_stream. Best effort: where stream barriers are
 * unsupported (host heap, members not mapped) the later call says so. */
void gpurma_nvshmemi_prepare_stream_barrier(gpurma_team_t team)
{
    if (!team || gpurma_nvshmemi_lib.st.heap_host || gpurma_team_size(team) < 2)
        return;
    (void)gpurma_barrier_on_stream(team, NULL);
}
