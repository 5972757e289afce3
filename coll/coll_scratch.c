/*
 * coll_scratch.c - each team's scratch windows for the collectives: one in
 * host memory (host collectives, CPU threads), one in GPU memory (stream
 * collectives, kernels), each made collectively on first use and released
 * with the team. Layout and protocol: include/gpurma_coll_device.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "coll.h"
#include "coll_internal.h"
#include "gpu.h"

/* A team's scratch window in one kind of memory and its handle; in the
 * team's slot GPURMA_TEAM_SLOT_SCRATCH_HOST or _GPU. */
typedef struct coll_scratch {
    struct gpurma_win_s        *win;
    gpurma_dev_coll_t           handle;
    gpurma_dcoll__ll16_bases_t  ll16; /* the window as mapped here, for LL16 */
    int                         sharers; /* GPU windows: gpu_channels's; 1 on the host */
} coll_scratch_t;

/* The zero-copy records (gpurma_dcoll__direct_rec, coll_direct.h) use
 * their signal slots whole, the word a window keeps the last origin in
 * included, which it starts at UINT32_MAX ("never signalled"). Read as a
 * record's later-meeting word (an epoch, compared at or past), that looked
 * like a meeting every member had passed: a member's first zero-copy call
 * ended without waiting for its peers, which could still be reading its
 * send or writing its recv, and its next call's record could overwrite
 * the first before a peer read it ("passed another collective"; two ranks
 * time-sliced on one GPU, 2026-11-27). The records start at zero. */
static int zero_direct_records(int device, gpurma_dev_signal_slot_t *sig, unsigned nch, int n,
                               const void *zeros, size_t have)
{
    const size_t per = (size_t)n * sizeof(*sig);
    if (have < 2 * per) /* a layout has far more bytes than three slots a member */
        return gpurma_set_error(GPURMA_ERR_INTERNAL, "collectives: scratch window too small");
    int rc = gpurma_gpu_copy(device, sig + (size_t)GPURMA_DCOLL__RANGE_DIRECT0(nch) * (size_t)n,
                             zeros, per);
    if (rc == GPURMA_SUCCESS) /* slots 1 and 2: adjacent ranges */
        rc = gpurma_gpu_copy(device, sig + (size_t)GPURMA_DCOLL__RANGE_DIRECT(nch, 1) * (size_t)n,
                             zeros, 2 * per);
    return rc;
}

/* Offsets of the regions for a team of n with nch channels (each region
 * holds one copy per channel, channel after channel); 1 when the window
 * would not fit in a size_t. */
static int scratch_layout(int n, unsigned nch, size_t slot, size_t ll_slot, gpurma_dev_coll_t *h,
                          size_t *bytes)
{
    uint64_t sz[GPURMA_DCOLL__REGIONS];
    size_t at = 0, region;
    uint64_t *offs[GPURMA_DCOLL__REGIONS] = GPURMA_DCOLL__OFFSETS(h);
    /* per-channel sizes themselves must not wrap: n * 2 * slot */
    if (gpurma_size_array(2 * (size_t)n, slot, 1, &region) ||
        gpurma_size_array(2 * (size_t)n, 2 * ll_slot, 1, &region))
        return 1;
    gpurma_dcoll__channel_bytes(n, slot, ll_slot, sz);
    for (int k = 0; k < GPURMA_DCOLL__REGIONS; k++) {
        *offs[k] = at;
        if (gpurma_size_mul((size_t)sz[k], nch, &region) || gpurma_size_add(at, region, &at))
            return 1;
    }
    *bytes = at;
    return 0;
}

/* Device handles (gpurma_coll_device) keep a pointer to the window: a
 * tombstone, like every freed window, so a kept handle reads "freed"
 * instead of freed memory. */
static void scratch_release(void *state)
{
    coll_scratch_t *s = state;
    gpurma_win_destroy(s->win);
    gpurma_handle_bury(s->win);
    free(s);
}

/* What a member brings to the channel count: where its kernels run (its
 * node, the bootstrap's number, and its GPU) and its GPURMA_COLL_CHANNELS. */
typedef struct {
    int  node;
    char bus[32];
    int  channels;
} gpu_key_t;

/* Orders by place alone (node, then GPU). */
static int key_cmp(const void *a, const void *b)
{
    const gpu_key_t *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return memcmp(x->bus, y->bus, sizeof(x->bus));
}

/* The channels of team's GPU window (*nch) and the most members whose
 * kernels share one GPU (*sharers): GPURMA_COLL_CHANNELS divided by the
 * sharers (under MPS their kernels run together and wait on each other,
 * so the GPU must hold all their blocks at once), and at most max(8, 512
 * / n): LL16, which the channels are for, keeps calls whose busiest rank
 * moves under GPURMA_COLL_DIRECT_MIN, so a large team needs fewer, and n x
 * channels stays where every LL slot is whole (8 KiB) and the window near
 * 70 MiB. A team spanning nodes (no LL16) keeps 8, and so does a team
 * of one (its calls are copies). Collective; every
 * member counts the same keys, so all agree, and a member whose setting
 * differs is refused on every one. */
static int gpu_channels(struct gpurma_team_s *team, unsigned *nch, int *sharers)
{
    const struct gpurma_ctx_s *ctx = team->ctx;
    const int n = team->size;
    gpu_key_t mine;
    memset(&mine, 0, sizeof(mine));
    mine.node = ctx->bs->node_of[ctx->rank];
    mine.channels = (int)gpurma_config()->coll_channels;
    /* a query, made outside a graph being captured as the window is */
    int saved = 0;
    gpurma_gpu_capture_relax(&saved);
    const int unnamed = gpurma_gpu_pci_bus_id(ctx->device, mine.bus, sizeof(mine.bus));
    gpurma_gpu_capture_restore(saved);
    if (unnamed) {
        memset(mine.bus, 0, sizeof(mine.bus));
        snprintf(mine.bus, sizeof(mine.bus), "device %d", ctx->device);
    }
    gpu_key_t *all = calloc((size_t)n, sizeof(*all));
    if (!all)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "collectives: out of memory");
    int rc = gpurma_team_allgather(team, &mine, all, sizeof(mine));
    for (int q = 0; q < n && rc == GPURMA_SUCCESS; q++)
        if (all[q].channels != mine.channels)
            rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                  "rank %d: collectives: team rank %d has GPURMA_COLL_CHANNELS=%d, "
                                  "this rank %d; it must be the same on every rank",
                                  ctx->rank, q, all[q].channels, mine.channels);
    int most = 1;
    if (rc == GPURMA_SUCCESS) {
        qsort(all, (size_t)n, sizeof(*all), key_cmp);
        for (int i = 1, run = 1; i < n; i++) {
            run = key_cmp(&all[i], &all[i - 1]) ? 1 : run + 1;
            most = run > most ? run : most;
        }
    }
    free(all);
    unsigned c = (unsigned)mine.channels / (unsigned)most, cap = 512u / (unsigned)n;
    if (cap < 8 || n == 1 || gpurma_team_spans_nodes(team))
        cap = 8;
    c = c > cap ? cap : c;
    c = c > GPURMA_COLL_GPU_CHANNELS ? GPURMA_COLL_GPU_CHANNELS : c;
    *nch = c ? c : 1;
    *sharers = most;
    return rc;
}

/* Collective over team; arg: the device flag (0 host memory, 1 GPU). */
static int scratch_create(struct gpurma_team_s *team, void *arg, void **state)
{
    const int device = *(const int *)arg;
    struct gpurma_ctx_s *ctx = team->ctx;
    int rc = device ? gpurma_team_need_gpu(team) : GPURMA_SUCCESS;
    if (rc)
        return rc;
    const int n = team->size;
    /* Channels: GPU collectives spread pieces over that many blocks
     * (gpu_channels); the host runs parts one after the other (two, so
     * that CI covers it). */
    unsigned nch = 2;
    int sharers = 1;
    if (device && (rc = gpu_channels(team, &nch, &sharers)) != GPURMA_SUCCESS)
        return rc;
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
     * per channel; then one per member for the zero-copy steps; then one
     * per source and channel for LL16 on CPU threads
     * (gpurma_dcoll__ll16_sig); then one per source and channel for the
     * device barrier (gpurma_dcoll__barrier_sig); then two more per member:
     * with the first, each member's record of a zero-copy call
     * (gpurma_dcoll__direct_rec: 48 bytes, coll_direct.h). The map:
     * GPURMA_DCOLL__SIGNALS (coll_proto.h). */
    gpurma_win_params_t p = {GPURMA_WIN_FIELD_MEM_KIND | GPURMA_WIN_FIELD_NUM_SIGNALS |
                                 GPURMA_WIN_FIELD_NUM_COUNTERS,
                             device ? GPURMA_MEM_DEVICE : GPURMA_MEM_HOST,
                             GPURMA_DCOLL__SIGNALS(nch, n), 0,
                             GPURMA_ENGINE_AUTO, 0};
    /* Stream collectives may make it while a graph is being captured: the
     * setup runs now, outside the graph. */
    int saved = 0;
    if (device)
        gpurma_gpu_capture_relax(&saved);
    gpurma_exchange_t ex = gpurma_team_exchange(team);
    rc = gpurma_win_build(team, &ex, GPURMA_WIN_ALLOCATED, NULL, bytes, &p, 1, &s->win);
    /* Every member must lay the window out alike: one that computed other
     * slots would read and write its peers' windows at other offsets, past
     * their ends too. Every member sees the same sizes, so all refuse. */
    for (int q = 0; q < n && rc == GPURMA_SUCCESS; q++)
        if (s->win->peers[q].size != bytes)
            rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                  "rank %d: collectives: team rank %d's scratch window has %zu "
                                  "bytes, this rank's %zu; GPURMA_COLL_SLOT_BYTES must be the "
                                  "same on every rank",
                                  ctx->rank, q, s->win->peers[q].size, bytes);
    if (rc == GPURMA_SUCCESS && device) {
        /* Epochs, last writes and LL flags start at zero; device memory is
         * not zeroed by its allocation. */
        void *zeros = calloc(1, bytes);
        rc = zeros ? gpurma_gpu_copy(ctx->device, s->win->base, zeros, bytes)
                   : gpurma_set_error(GPURMA_ERR_NO_MEMORY, "collectives: out of memory");
        if (rc == GPURMA_SUCCESS)
            rc = zero_direct_records(ctx->device, s->win->dev.signals, nch, n, zeros, bytes);
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
    s->handle.gone = team->gone;
    s->sharers = sharers;
    for (int q = 0; q < n && q < GPURMA_DCOLL_LL16_MAX_RANKS; q++)
        if (s->win->peers[q].path == GPURMA_DEV_PATH_LOADSTORE)
            s->ll16.at[q] = s->win->peers[q].base;
    *state = s;
    return GPURMA_SUCCESS;
}

int gpurma_coll_scratch(struct gpurma_team_s *team, int device, gpurma_dev_coll_t *out)
{
    return gpurma_coll_scratch_ll16(team, device, out, NULL);
}

int gpurma_coll_gpu_sharers(struct gpurma_team_s *team)
{
    const coll_scratch_t *s = gpurma_team_slot_peek(team, GPURMA_TEAM_SLOT_SCRATCH_GPU);
    return s ? s->sharers : team->size;
}

int gpurma_coll_scratch_ll16(struct gpurma_team_s *team, int device, gpurma_dev_coll_t *out,
                             gpurma_dcoll__ll16_bases_t *bases)
{
    void *state;
    int rc = gpurma_team_slot(team, device ? GPURMA_TEAM_SLOT_SCRATCH_GPU
                                           : GPURMA_TEAM_SLOT_SCRATCH_HOST,
                              scratch_create, &device, scratch_release, &state);
    if (rc == GPURMA_SUCCESS) {
        *out = ((const coll_scratch_t *)state)->handle;
        if (bases)
            *bases = ((const coll_scratch_t *)state)->ll16;
    }
    return rc;
}

/* A by-value handle is the library's when its window handle is the scratch
 * window's own and everything else is that window's layout: a handle
 * copied from a real one with other offsets, slots, channels, rank or
 * part would have the collectives read and write outside the window. */
GPURMA_API gpurma_status_t gpurma_dev_host_coll_state(const gpurma_dev_coll_t *c)
{
    gpurma_status_t rc = c ? gpurma_dev_host_win_handle_state(&c->win) : GPURMA_ERR_INVALID_ARG;
    if (rc != GPURMA_SUCCESS)
        return rc;
    const int n = c->size;
    size_t bytes = 0, want = gpurma_win_size((gpurma_win_t)c->win.host_win, c->win.rank);
    gpurma_dev_coll_t h = *c;
    if (c->rank != c->win.rank || n != c->win.size || !c->nchannels ||
        c->nchannels > GPURMA_COLL_GPU_CHANNELS || c->part >= c->nparts ||
        c->nparts > c->nchannels || c->slot < 16 || c->slot % 16 || c->ll_slot > c->slot ||
        c->ll_slot < GPURMA_DCOLL__MIN_SLOT || c->ll_slot % 4 ||
        c->win.num_signals != GPURMA_DCOLL__SIGNALS(c->nchannels, n) ||
        scratch_layout(n, c->nchannels, c->slot, c->ll_slot, &h, &bytes) || bytes != want ||
        c->gone != ((const struct gpurma_win_s *)c->win.host_win)->team->gone)
        return GPURMA_ERR_INVALID_ARG;
    /* h: channel 0's regions; c's must be those of its part's channel */
    h.part = 0, h.nparts = 1, h.sig_base = 0;
    h = gpurma_dev_coll_part(h, c->part, c->nparts);
    return h.state_off == c->state_off && h.data_off == c->data_off && h.ll_off == c->ll_off &&
                   h.stage_off == c->stage_off && h.ll16_off == c->ll16_off &&
                   h.sig_base == c->sig_base
               ? GPURMA_SUCCESS
               : GPURMA_ERR_INVALID_ARG;
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
