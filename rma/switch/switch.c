/*
 * switch.c - switch objects: a range of a window, the same offset in every
 * member, with device-side reduce and broadcast (include/gpurma_switch.h).
 * The switch as a window's engine is switch_engine.c.
 *
 * The emulated switch needs nothing beyond the window: its peer table
 * already maps every member's memory where the code runs (host backend:
 * POSIX shared memory; GPU windows: CUDA IPC mappings), so the device
 * handle is the window's handle plus the range. The multicast path
 * (switch_mc.c) is tried only when the environment allows it, the caller
 * did not ask for emulation, and every member passed its local checks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switch.h"
#include "config_section.h"

static void switch_release(struct gpurma_switch_s *sw);

/* A window's switches go with it (its free has passed a barrier). */
void gpurma_switch_release_win(struct gpurma_win_s *w)
{
    pthread_mutex_lock(&w->ctx->lock);
    struct gpurma_switch_s *sw = w->engine_state[GPURMA_ENGINE_SWITCH];
    w->engine_state[GPURMA_ENGINE_SWITCH] = NULL;
    pthread_mutex_unlock(&w->ctx->lock);
    while (sw) {
        struct gpurma_switch_s *next = sw->next;
        switch_release(sw);
        sw = next;
    }
}

/* NCCL's and NVSHMEM's own switches for NVLink multicast: a job that turns
 * it off for them turns it off for gpurma too. Free text, so that any
 * value NCCL or NVSHMEM accept never fails gpurma_init. */
#define SWITCH_CONFIG(X)                                                                  \
    X(nccl_nvls_enable, NCCL_NVLS_ENABLE, STR, "", GPURMA_CFG_ANY,                        \
      "NCCL's: 0 refuses the switch engine's NVLink multicast path")                      \
    X(nvshmem_disable_nvls, NVSHMEM_DISABLE_NVLS, STR, "0", GPURMA_CFG_ANY,               \
      "NVSHMEM's: any value but 0 refuses the switch engine's NVLink multicast path")
GPURMA_CONFIG_SECTION(switch, SWITCH_CONFIG)

int gpurma_switch_refusal(void)
{
    const gpurma_config_t *cfg = gpurma_config();
    const switch_config_t *foreign = switch_config();
    if (cfg->disable_switch)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch multicast refused: GPURMA_DISABLE_SWITCH is set");
    if (!strcmp(foreign->nccl_nvls_enable, "0"))
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch multicast refused: NCCL_NVLS_ENABLE=0 is set");
    /* Its default is "0": set to anything else, even empty, it refuses. */
    if (strcmp(foreign->nvshmem_disable_nvls, "0"))
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch multicast refused: NVSHMEM_DISABLE_NVLS=%s is set",
                                foreign->nvshmem_disable_nvls);
    if (!cfg->switch_enable)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch multicast not enabled: it is opt-in (set GPURMA_SWITCH=1)");
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_switch_op_supported(gpurma_dtype_t dtype, gpurma_redop_t op)
{
    gpurma_status_t rc = gpurma_dev_switch_op_ok(dtype, op);
    if (rc == GPURMA_ERR_UNSUPPORTED)
        return (gpurma_status_t)gpurma_set_error(
            rc, "switch reduce: operator %d (PROD or AVG) is not supported: the switch "
                "hardware reduces with SUM, MIN and MAX only", (int)op);
    if (rc != GPURMA_SUCCESS)
        return (gpurma_status_t)gpurma_set_error(
            rc, "switch reduce: unknown %s %d", gpurma_dev_dtype_size(dtype) ? "operator" : "dtype",
            gpurma_dev_dtype_size(dtype) ? (int)op : (int)dtype);
    return GPURMA_SUCCESS;
}

static int switch_check(const struct gpurma_switch_s *sw)
{
    if (!sw)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "switch handle is NULL");
    if (!gpurma_handle_is(sw, GPURMA_HANDLE_SWITCH))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%p is not a switch handle",
                                (const void *)sw);
    if (sw->magic == GPURMA_DEAD_MAGIC)
        return gpurma_set_error(GPURMA_ERR_FREED, "switch %p was freed", (const void *)sw);
    if (sw->magic != GPURMA_DEV_HOST_SWITCH_LIVE)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%p is not a switch handle",
                                (const void *)sw);
    return gpurma_win_check(sw->win);
}

/* The range in every member's window, and every member reachable by
 * load/store from here: what the emulated switch needs. */
static int check_members(const struct gpurma_win_s *w, size_t offset, size_t bytes)
{
    if (offset & 15)
        return gpurma_set_error(GPURMA_ERR_MISALIGNED,
                                "switch_create: offset %zu is not a multiple of 16", offset);
    for (int i = 0; i < w->size; i++) {
        const gpurma_dev_peer_t *p = &w->peers[i];
        if (offset > p->size || bytes > p->size - offset)
            return gpurma_set_error(GPURMA_ERR_OUT_OF_BOUNDS,
                                    "switch_create: range of %zu bytes at offset %zu is past the "
                                    "end of team rank %d's window (%llu bytes)",
                                    bytes, offset, i, (unsigned long long)p->size);
        if ((w->engines[i]->caps & GPURMA_ENGINE_CAP_PROXIED) || p->path == GPURMA_DEV_PATH_FIFO)
            return gpurma_set_error(
                GPURMA_ERR_UNSUPPORTED,
                "switch_create: team rank %d is reached through the port engine (%s), not by "
                "load/store; a switch needs every member mapped on this node",
                i, p->base ? "forced by GPURMA_ENGINE or the window's engine" : "another node");
        if (p->path != GPURMA_DEV_PATH_LOADSTORE || !p->base)
            return gpurma_set_error(
                GPURMA_ERR_UNSUPPORTED,
                "switch_create: team rank %d's window is not mapped here (win_create on private "
                "memory); a switch needs memory from gpurma_win_allocate", i);
    }
    return GPURMA_SUCCESS;
}

typedef struct {
    int32_t rc;    /* this member's checks */
    int32_t hw_rc; /* whether multicast may be tried here */
} switch_wire_t;

static void switch_release(struct gpurma_switch_s *sw)
{
    if (sw->mc)
        gpurma_switch_mc_release(sw);
    sw->magic = GPURMA_DEAD_MAGIC;
    gpurma_handle_bury(sw);
}

GPURMA_API gpurma_status_t gpurma_switch_create(gpurma_win_t win, size_t offset, size_t bytes,
                                                const gpurma_switch_params_t *p,
                                                gpurma_switch_t *out)
{
    int rc = gpurma_win_check(win);
    if (rc)
        return (gpurma_status_t)rc;
    if (!out)
        return (gpurma_status_t)gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                                 "switch_create: out is NULL");
    *out = NULL;
    struct gpurma_win_s *w = win;
    gpurma_switch_request_t req = GPURMA_SWITCH_REQUEST_AUTO;
    uint64_t mask = p ? p->field_mask : 0;
    /* Local failures still take part in the exchange, so that every member
     * returns instead of waiting for the one that failed. */
    switch_wire_t mine = {0, GPURMA_ERR_UNSUPPORTED};
    char reason[GPURMA_SWITCH_REASON_MAX] = "";
    struct gpurma_switch_s *sw = calloc(1, sizeof(*sw));
    if (!sw)
        mine.rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "switch_create: out of memory");
    else if (mask & ~(uint64_t)GPURMA_SWITCH_FIELD_REQUEST)
        mine.rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                   "switch_create: field_mask 0x%llx has unknown bits",
                                   (unsigned long long)mask);
    else if ((mask & GPURMA_SWITCH_FIELD_REQUEST) &&
             (p->request < GPURMA_SWITCH_REQUEST_AUTO ||
              p->request > GPURMA_SWITCH_REQUEST_MULTICAST))
        mine.rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG, "switch_create: unknown request %d",
                                   (int)p->request);
    else if (w->internal)
        mine.rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG, "switch_create: window is internal");
    else
        mine.rc = check_members(w, offset, bytes);
    if (mine.rc)
        snprintf(reason, sizeof(reason), "%s", gpurma_error_text());
    if (!mine.rc) {
        if (mask & GPURMA_SWITCH_FIELD_REQUEST)
            req = p->request;
        sw->magic = GPURMA_DEV_HOST_SWITCH_LIVE;
        mine.rc = gpurma_handle_register(sw, GPURMA_HANDLE_SWITCH);
        sw->win = w;
        sw->offset = offset;
        sw->bytes = bytes;
        /* The environment first: no driver call unless it allows one. */
        if (req == GPURMA_SWITCH_REQUEST_EMULATED) {
            snprintf(reason, sizeof(reason), "emulated switch requested");
        } else {
            mine.hw_rc = gpurma_switch_refusal();
            if (!mine.hw_rc)
                mine.hw_rc = gpurma_switch_mc_check(sw);
            if (mine.hw_rc)
                snprintf(reason, sizeof(reason), "%s", gpurma_error_text());
        }
    }
    switch_wire_t *all = calloc((size_t)w->size, sizeof(*all));
    int xrc = all ? w->team->sync->allgather(w->team, &mine, all, sizeof(mine))
                  : gpurma_set_error(GPURMA_ERR_NO_MEMORY, "switch_create: out of memory");
    if (xrc) {
        rc = xrc; /* the exchange itself failed: nobody can agree on anything */
        goto fail;
    }
    if (mine.rc) {
        rc = gpurma_set_error(mine.rc, "%s", reason);
        goto fail;
    }
    int hw_everywhere = 1;
    for (int i = 0; i < w->size; i++) {
        if (all[i].rc) {
            rc = gpurma_set_error(all[i].rc,
                                  "switch_create: team rank %d failed its checks (%s); see its "
                                  "message", i, gpurma_strerror((gpurma_status_t)all[i].rc));
            goto fail;
        }
        if (all[i].hw_rc && hw_everywhere) {
            hw_everywhere = 0;
            if (!mine.hw_rc)
                snprintf(reason, sizeof(reason),
                         "switch multicast refused by team rank %d (see its query)", i);
        }
    }
    if (hw_everywhere) {
        rc = gpurma_switch_mc_setup(sw); /* collective; same status everywhere */
        if (rc)
            snprintf(reason, sizeof(reason), "%s", gpurma_error_text());
    } else {
        rc = GPURMA_ERR_UNSUPPORTED;
    }
    if (rc && req == GPURMA_SWITCH_REQUEST_MULTICAST) {
        rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "switch_create: multicast requested: %s",
                              reason);
        goto fail;
    }
    if (rc && sw->mc)
        gpurma_switch_mc_release(sw); /* emulated: nothing of the hardware path stays */
    sw->mode = rc ? GPURMA_SWITCH_EMULATED : GPURMA_SWITCH_MULTICAST;
    snprintf(sw->reason, sizeof(sw->reason), "%s", rc ? reason : "");
    sw->dev.win = w->dev;
    sw->dev.host_sw = sw;
    sw->dev.offset = offset;
    sw->dev.bytes = bytes;
    sw->dev.mode = (int32_t)sw->mode;
    sw->dev.aligned16 = 1;
    for (int i = 0; i < w->size; i++)
        if (((uintptr_t)w->peers[i].base + offset) & 15)
            sw->dev.aligned16 = 0;
    sw->dev.magic = GPURMA_DEV_SWITCH_MAGIC;
    GPURMA_INFO(GPURMA_SUB_RMA, "switch over %d members, %zu bytes at offset %zu: %s%s%s",
                w->size, bytes, offset, sw->mode ? "multicast" : "emulated",
                sw->reason[0] ? " - " : "", sw->reason);
    free(all);
    pthread_mutex_lock(&w->ctx->lock);
    sw->next = w->engine_state[GPURMA_ENGINE_SWITCH];
    w->engine_state[GPURMA_ENGINE_SWITCH] = sw;
    pthread_mutex_unlock(&w->ctx->lock);
    *out = sw;
    return GPURMA_SUCCESS;

fail:
    free(all);
    if (sw) {
        if (sw->magic == GPURMA_DEV_HOST_SWITCH_LIVE)
            switch_release(sw);
        else
            free(sw);
    }
    return (gpurma_status_t)rc;
}

GPURMA_API gpurma_status_t gpurma_switch_free(gpurma_switch_t *handle)
{
    if (!handle)
        return (gpurma_status_t)gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                                 "switch_free: handle is NULL");
    struct gpurma_switch_s *sw = *handle;
    int rc = switch_check(sw);
    if (rc)
        return (gpurma_status_t)rc;
    /* No member may still be reducing from or storing into the range, nor
     * using the multicast mapping, when it goes. */
    rc = sw->win->team->sync->barrier(sw->win->team);
    struct gpurma_win_s *w = sw->win;
    pthread_mutex_lock(&w->ctx->lock);
    for (struct gpurma_switch_s **at = (struct gpurma_switch_s **)&w->engine_state[GPURMA_ENGINE_SWITCH];
         *at; at = &(*at)->next)
        if (*at == sw) {
            *at = sw->next;
            break;
        }
    pthread_mutex_unlock(&w->ctx->lock);
    switch_release(sw);
    *handle = NULL;
    return (gpurma_status_t)rc;
}

GPURMA_API gpurma_status_t gpurma_dev_host_switch_state(const void *p)
{
    if (!p || !gpurma_handle_is(p, GPURMA_HANDLE_SWITCH))
        return GPURMA_ERR_INVALID_ARG;
    return __atomic_load_n(&((const struct gpurma_switch_s *)p)->magic, __ATOMIC_RELAXED) ==
                   GPURMA_DEV_HOST_SWITCH_LIVE
               ? GPURMA_SUCCESS
               : GPURMA_ERR_FREED;
}

/* The whole by-value handle must be the switch's own (gpurma_switch_device):
 * another range, mode or mapping would have the calls read and write
 * outside the members' windows. The window inside is checked by the
 * device code (gpurma_dev_host_win_handle_state). */
GPURMA_API gpurma_status_t gpurma_dev_host_switch_handle_state(const gpurma_dev_switch_t *h)
{
    gpurma_status_t rc = h ? gpurma_dev_host_switch_state(h->host_sw) : GPURMA_ERR_INVALID_ARG;
    if (rc != GPURMA_SUCCESS)
        return rc;
    const gpurma_dev_switch_t *d = &((const struct gpurma_switch_s *)h->host_sw)->dev;
    return h->win.host_win == d->win.host_win && h->mc == d->mc && h->offset == d->offset &&
                   h->bytes == d->bytes && h->mode == d->mode && h->aligned16 == d->aligned16
               ? GPURMA_SUCCESS
               : GPURMA_ERR_INVALID_ARG;
}

GPURMA_API gpurma_status_t gpurma_switch_query(gpurma_switch_t sw, gpurma_switch_info_t *info)
{
    int rc = switch_check(sw);
    if (rc)
        return (gpurma_status_t)rc;
    if (!info)
        return (gpurma_status_t)gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                                 "switch_query: info is NULL");
    memset(info, 0, sizeof(*info));
    info->mode = sw->mode;
    info->rank = sw->win->rank;
    info->size = sw->win->size;
    info->offset = sw->offset;
    info->bytes = sw->bytes;
    snprintf(info->reason, sizeof(info->reason), "%s", sw->reason);
    return GPURMA_SUCCESS;
}

GPURMA_API gpurma_status_t gpurma_switch_device(gpurma_switch_t sw, gpurma_dev_switch_t *out)
{
    int rc = switch_check(sw);
    if (rc)
        return (gpurma_status_t)rc;
    if (!out)
        return (gpurma_status_t)gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                                 "switch_device: out is NULL");
    *out = sw->dev;
    return GPURMA_SUCCESS;
}
