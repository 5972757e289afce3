/*
 * coll_team.c - each team's scratch windows for the collectives: one in
 * host memory (host collectives, CPU threads), one in GPU memory (stream
 * collectives, kernels), each made collectively on first use and released
 * with the team. Layout and protocol: include/gpurma_coll_device.h.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "checked.h"
#include "coll.h"
#include "coll_internal.h"
#include "gpu.h"

/* Teams have no field for it (context.h), so this list maps them, as
 * stream_barrier.c does for its windows. */
typedef struct coll_scratch {
    struct gpurma_team_s *team;
    int                   device; /* 0 host memory, 1 GPU memory */
    struct gpurma_win_s  *win;
    gpurma_dev_coll_t     handle;
    struct coll_scratch  *next;
} coll_scratch_t;

static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;
static coll_scratch_t *scratches;

/* The scratch of (team, device), or NULL; scratch_lock held. */
static const coll_scratch_t *scratch_find(const struct gpurma_team_s *team, int device)
{
    for (const coll_scratch_t *s = scratches; s; s = s->next)
        if (s->team == team && s->device == device)
            return s;
    return NULL;
}

/* Offsets of the regions for a team of n with nch channels (each region
 * holds one copy per channel, channel after channel); 1 when the window
 * would not fit in a size_t. */
static int scratch_layout(int n, unsigned nch, size_t slot, size_t ll_slot, gpurma_dev_coll_t *h,
                          size_t *bytes)
{
    uint64_t sz[4];
    size_t at = 0, region;
    uint64_t *offs[4] = {&h->state_off, &h->data_off, &h->ll_off, &h->stage_off};
    /* per-channel sizes themselves must not wrap: n * 2 * slot */
    if (gpurma_size_array(2 * (size_t)n, slot, 1, &region) ||
        gpurma_size_array(2 * (size_t)n, 2 * ll_slot, 1, &region))
        return 1;
    gpurma_dcoll__channel_bytes(n, slot, ll_slot, sz);
    for (int k = 0; k < 4; k++) {
        *offs[k] = at;
        if (gpurma_size_mul((size_t)sz[k], nch, &region) || gpurma_size_add(at, region, &at))
            return 1;
    }
    *bytes = at;
    return 0;
}

static int scratch_create(struct gpurma_team_s *team, int device, gpurma_dev_coll_t *out);

/* Scratch windows being made, one entry per (team, device): a scratch is
 * made once, collectively, so a second thread of this process asking for
 * the same one at the same time (two threads on one team, which the API
 * forbids) waits for the first instead of interleaving a second
 * creation's exchanges with it. Creations for other teams (several
 * contexts in one process, as the NCCL layer makes) go on in parallel. */
typedef struct scratch_pending {
    const struct gpurma_team_s *team;
    int                         device;
    struct scratch_pending     *next;
} scratch_pending_t;
static scratch_pending_t *pendings;
static pthread_cond_t made = PTHREAD_COND_INITIALIZER;

static int pending(const struct gpurma_team_s *team, int device)
{
    for (const scratch_pending_t *p = pendings; p; p = p->next)
        if (p->team == team && p->device == device)
            return 1;
    return 0;
}

int gpurma_coll_scratch(struct gpurma_team_s *team, int device, gpurma_dev_coll_t *out)
{
    pthread_mutex_lock(&scratch_lock);
    for (;;) {
        const coll_scratch_t *have = scratch_find(team, device);
        if (have) {
            *out = have->handle;
            pthread_mutex_unlock(&scratch_lock);
            return GPURMA_SUCCESS;
        }
        if (!pending(team, device))
            break;
        pthread_cond_wait(&made, &scratch_lock);
    }
    scratch_pending_t mine = {team, device, pendings};
    pendings = &mine;
    pthread_mutex_unlock(&scratch_lock);
    int rc = scratch_create(team, device, out);
    pthread_mutex_lock(&scratch_lock);
    for (scratch_pending_t **p = &pendings; *p; p = &(*p)->next)
        if (*p == &mine) {
            *p = mine.next;
            break;
        }
    pthread_cond_broadcast(&made);
    pthread_mutex_unlock(&scratch_lock);
    return rc;
}

static int scratch_create(struct gpurma_team_s *team, int device, gpurma_dev_coll_t *out)
{
    struct gpurma_ctx_s *ctx = team->ctx;
    if (device && ctx->device < 0)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "rank %d: collectives on a stream: this context uses no GPU "
                                "(host backend); pass stream NULL",
                                ctx->rank);
    const int n = team->size;
    /* Channels: GPU collectives spread large pieces over that many blocks;
     * the host runs parts one after the other (two, so that CI covers it). */
    const unsigned nch = device ? GPURMA_COLL_GPU_CHANNELS : 2;
    /* Slots hold whole 16-byte vectors; large teams get smaller ones, so
     * that the data slots of all channels stay near 32 MiB per rank (at
     * least 1 KiB each). LL slots: a quarter of a slot, at most 8 KiB of
     * payload (LL is for small pieces). */
    size_t slot = (size_t)gpurma_config()->coll_slot_bytes;
    size_t fair = ((size_t)32 << 20) / (2 * (size_t)n * nch);
    if (slot > fair)
        slot = fair > 1024 ? fair : 1024;
    slot &= ~(size_t)15;
    size_t ll_slot = slot / 4 < 8192 ? slot / 4 : 8192;
    coll_scratch_t *s = calloc(1, sizeof(*s));
    if (!s)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "collectives: out of memory");
    size_t bytes = 0;
    if (scratch_layout(n, nch, slot, ll_slot, &s->handle, &bytes)) {
        free(s);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY,
                                "rank %d: collectives: a scratch window for %d ranks with %zu-byte "
                                "slots does not fit in memory; lower GPURMA_COLL_SLOT_BYTES",
                                ctx->rank, n, slot);
    }
    /* Data signals (one per source) and acknowledgements (one per peer),
     * per channel; then one per member for the zero-copy steps
     * (gpurma_dcoll__direct_sig). */
    gpurma_win_params_t p = {GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                                 GPURMA_WIN_FIELD_NUM_COUNTERS,
                             device ? GPURMA_MEM_DEVICE : GPURMA_MEM_HOST, (2u * nch + 1) * (uint32_t)n, 0,
                             GPURMA_ENGINE_AUTO, 0};
    /* Stream collectives may make it while a graph is being captured: the
     * setup runs now, outside the graph. */
    int saved = 0;
    if (device)
        gpurma_gpu_capture_relax(&saved);
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    int rc = gpurma_win_build(team, &ex, GPURMA_WIN_ALLOCATED, NULL, bytes, &p, 1, &s->win);
    if (rc == GPURMA_SUCCESS && device) {
        /* Epochs, last writes and LL flags start at zero; device memory is
         * not zeroed by its allocation. */
        void *zeros = calloc(1, bytes);
        rc = zeros ? gpurma_gpu_copy(ctx->device, s->win->base, zeros, bytes)
                   : gpurma_set_error(GPURMA_ERR_NO_MEMORY, "collectives: out of memory");
        free(zeros);
#ifdef HAVE_CUDA
        if (rc == GPURMA_SUCCESS)
            rc = gpurma_coll_preload_kernels();
#endif
        if (rc == GPURMA_SUCCESS)
            rc = team->sync->barrier(team); /* nobody writes before every copy is zeroed */
    }
    if (device)
        gpurma_gpu_capture_restore(saved);
    if (rc) {
        if (s->win) {
            gpurma_win_destroy(s->win);
            free(s->win);
        }
        free(s);
        return rc;
    }
    s->team = team;
    s->device = device;
    s->handle.win = s->win->dev;
    s->handle.slot = slot;
    s->handle.ll_slot = ll_slot;
    s->handle.rank = team->rank;
    s->handle.size = n;
    s->handle.magic = GPURMA_DEV_COLL_MAGIC;
    s->handle.nchannels = nch;
    s->handle.part = 0;
    s->handle.nparts = 1;
    s->handle.sig_base = 0;
    pthread_mutex_lock(&scratch_lock);
    s->next = scratches;
    scratches = s;
    pthread_mutex_unlock(&scratch_lock);
    *out = s->handle;
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_coll_device(gpurma_team_t team, gpurma_mem_kind_t kind,
                                              gpurma_dev_coll_t *out)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return rc;
    if (!out)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "coll_device: out is NULL");
    if (kind != GPURMA_MEM_HOST && kind != GPURMA_MEM_DEVICE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "coll_device: mem kind %d is neither GPURMA_MEM_HOST nor "
                                "GPURMA_MEM_DEVICE", (int)kind);
    return gpurma_coll_scratch(team, kind == GPURMA_MEM_DEVICE, out);
}

void gpurma_coll_team_release(struct gpurma_team_s *team)
{
    gpurma_coll_reg_release(team);
    gpurma_coll_ce_release(team);
    for (;;) {
        coll_scratch_t *found = NULL;
        pthread_mutex_lock(&scratch_lock);
        for (coll_scratch_t **p = &scratches; *p; p = &(*p)->next) {
            if ((*p)->team == team) {
                found = *p;
                *p = found->next;
                break;
            }
        }
        pthread_mutex_unlock(&scratch_lock);
        if (!found)
            return;
        /* Device handles (gpurma_coll_device) keep a pointer to the window:
         * a tombstone, like every freed window, so a kept handle reads
         * "freed" instead of freed memory. */
        gpurma_win_destroy(found->win);
        gpurma_handle_bury(found->win);
        free(found);
    }
}
