/*
 * team.c - NVSHMEM teams on gpurma teams. A handle is a slot of the
 * library's table; kernels see each team as (start, stride, size) in the
 * world, which is what split_strided and split_2d produce.
 */
#include <stdlib.h>
#include <string.h>

#include "nvshmem_internal.h"

gpurma_team_t gpurma_nvshmemi_gteam(const char *call, nvshmem_team_t team)
{
    gpurma_nvshmemi_require_init(call);
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || !gpurma_nvshmemi_lib.teams[team])
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG, "invalid team handle");
    return gpurma_nvshmemi_lib.teams[team];
}

void gpurma_nvshmemi_describe_team(int slot)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_team_t t = L->teams[slot];
    gpurma_nvshmemi_team_t d = {0, 0, 0, -1};
    if (t) {
        d.size = gpurma_team_size(t);
        d.my_pe = gpurma_team_rank(t);
        d.start = gpurma_team_world_rank(t, 0);
        d.stride = d.size > 1 ? gpurma_team_world_rank(t, 1) - d.start : 1;
        for (int i = 2; i < d.size && d.stride > 0; i++)
            if (gpurma_team_world_rank(t, i) != d.start + i * d.stride)
                d.stride = 0; /* not strided: no device-side use */
        if (d.stride < 0)
            d.stride = 0;
    }
    L->st.teams[slot] = d;
    /* The team's device-collective handle, into this PE's heap (collective
     * over the team the first time). */
    gpurma_dev_coll_t h;
    memset(&h, 0, sizeof h);
    if (t)
        gpurma_nvshmemi_check_rc("team creation",
                                 gpurma_coll_device(t, L->st.heap_host ? GPURMA_MEM_HOST
                                                                       : GPURMA_MEM_DEVICE,
                                                    &h));
    size_t off = L->st.colls_off + (size_t)slot * sizeof h;
    if (L->st.heap_host)
        memcpy(L->st.heap_base + off, &h, sizeof h);
    else {
        gpurma_nvshmemi_check_rc("team creation",
                                 gpurma_put(L->win, L->st.my_pe, off, &h, sizeof h));
        gpurma_nvshmemi_check_rc("team creation", gpurma_quiet(L->win));
    }
}

GPURMA_API int gpurma_nvshmemi_team_my_pe(nvshmem_team_t team)
{
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || !gpurma_nvshmemi_lib.teams[team])
        return -1;
    return gpurma_team_rank(gpurma_nvshmemi_lib.teams[team]);
}

GPURMA_API int gpurma_nvshmemi_team_n_pes(nvshmem_team_t team)
{
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || !gpurma_nvshmemi_lib.teams[team])
        return -1;
    return gpurma_team_size(gpurma_nvshmemi_lib.teams[team]);
}

GPURMA_API int gpurma_nvshmemi_team_translate_pe(nvshmem_team_t src, int pe,
                                                 nvshmem_team_t dst)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (gpurma_nvshmemi_team_n_pes(src) < 0 || gpurma_nvshmemi_team_n_pes(dst) < 0)
        return -1;
    int world = gpurma_team_world_rank(L->teams[src], pe);
    if (world < 0)
        return -1;
    gpurma_team_t d = L->teams[dst];
    for (int i = 0, n = gpurma_team_size(d); i < n; i++)
        if (gpurma_team_world_rank(d, i) == world)
            return i;
    return -1;
}

GPURMA_API int gpurma_nvshmemi_my_pe(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    return L->status >= NVSHMEM_STATUS_IS_INITIALIZED ? L->st.my_pe : -1;
}

GPURMA_API int gpurma_nvshmemi_n_pes(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    return L->status >= NVSHMEM_STATUS_IS_INITIALIZED ? L->st.n_pes : -1;
}

/* A free slot, reserved with a placeholder until the split fills it. */
static int reserve_slot(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    for (int t = NVSHMEM_TEAM_SHARED + 1; t < GPURMA_NVSHMEMI_MAX_TEAMS; t++)
        if (!L->teams[t])
            return t;
    return -1;
}

/* Members are parent ranks start + i * stride, i < size; collective over
 * the parent. A PE outside the new team gets NVSHMEM_TEAM_INVALID. */
static int split_members(const char *call, nvshmem_team_t parent, int start, int stride,
                         int size, nvshmem_team_t *new_team)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_team_t p = gpurma_nvshmemi_gteam(call, parent);
    if (!new_team)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG, "new_team is NULL");
    *new_team = NVSHMEM_TEAM_INVALID;
    int psize = gpurma_team_size(p), me = gpurma_team_rank(p);
    /* start + (size - 1) * stride < psize, computed without overflow */
    if (start < 0 || size < 1 || stride < (size > 1 ? 1 : 0) || start >= psize ||
        (size > 1 && (size - 1) > (psize - 1 - start) / stride)) {
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG,
                             "start, stride and size do not describe PEs of the parent team");
    }
    int rel = me - start;
    int member = rel >= 0 && (size == 1 ? rel == 0 : rel % stride == 0 && rel / stride < size);
    int slot = member ? reserve_slot() : -1;
    if (member && slot < 0)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_NO_MEMORY, "too many teams (the table holds 64)");
    gpurma_team_t out = NULL;
    gpurma_nvshmemi_check_rc(call, gpurma_team_split(p, member ? 0 : GPURMA_TEAM_UNDEFINED,
                                                     member ? rel : 0, &out));
    if (!member)
        return 0;
    gpurma_nvshmemi_prepare_stream_barrier(out);
    pthread_mutex_lock(&L->lock);
    L->teams[slot] = out;
    gpurma_nvshmemi_describe_team(slot);
    gpurma_nvshmemi_push_state();
    pthread_mutex_unlock(&L->lock);
    *new_team = slot;
    return 0;
}

GPURMA_API int nvshmem_team_split_strided(nvshmem_team_t parent, int start, int stride,
                                          int size, const nvshmem_team_config_t *config,
                                          long config_mask, nvshmem_team_t *new_team)
{
    (void)config, (void)config_mask;
    return split_members("nvshmem_team_split_strided", parent, start, stride, size, new_team);
}

/* The parent as a grid of xrange columns: x teams are its rows, y teams
 * its columns. Collective over the parent (every PE takes part in one split
 * per row and per column, so that the splits match on every PE). */
GPURMA_API int nvshmem_team_split_2d(nvshmem_team_t parent, int xrange,
                                     const nvshmem_team_config_t *xaxis_config, long xaxis_mask,
                                     nvshmem_team_t *xaxis_team,
                                     const nvshmem_team_config_t *yaxis_config, long yaxis_mask,
                                     nvshmem_team_t *yaxis_team)
{
    const char *call = "nvshmem_team_split_2d";
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    (void)xaxis_config, (void)xaxis_mask, (void)yaxis_config, (void)yaxis_mask;
    gpurma_team_t p = gpurma_nvshmemi_gteam(call, parent);
    if (xrange < 1 || !xaxis_team || !yaxis_team)
        gpurma_nvshmemi_fail(call, GPURMA_ERR_INVALID_ARG, "xrange < 1 or a NULL team pointer");
    int psize = gpurma_team_size(p), me = gpurma_team_rank(p);
    if (xrange > psize)
        xrange = psize;
    /* One split by color each: the row (me / xrange) and the column. */
    nvshmem_team_t *outs[2] = {xaxis_team, yaxis_team};
    for (int axis = 0; axis < 2; axis++) {
        int color = axis == 0 ? me / xrange : me % xrange;
        int key = axis == 0 ? me % xrange : me / xrange;
        int slot = reserve_slot();
        if (slot < 0)
            gpurma_nvshmemi_fail(call, GPURMA_ERR_NO_MEMORY, "too many teams (the table holds 64)");
        gpurma_team_t out = NULL;
        gpurma_nvshmemi_check_rc(call, gpurma_team_split(p, color, key, &out));
        gpurma_nvshmemi_prepare_stream_barrier(out);
        pthread_mutex_lock(&L->lock);
        L->teams[slot] = out;
        gpurma_nvshmemi_describe_team(slot);
        gpurma_nvshmemi_push_state();
        pthread_mutex_unlock(&L->lock);
        *outs[axis] = slot;
    }
    return 0;
}

GPURMA_API void nvshmem_team_destroy(nvshmem_team_t team)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (team == NVSHMEM_TEAM_INVALID)
        return;
    if (team <= NVSHMEM_TEAM_SHARED)
        gpurma_nvshmemi_fail("nvshmem_team_destroy", GPURMA_ERR_INVALID_ARG,
                             "the predefined teams cannot be destroyed");
    gpurma_team_t t = gpurma_nvshmemi_gteam("nvshmem_team_destroy", team);
    gpurma_nvshmemi_check_rc("nvshmem_team_destroy", gpurma_team_free(&t));
    pthread_mutex_lock(&L->lock);
    L->teams[team] = NULL;
    gpurma_nvshmemi_describe_team(team);
    gpurma_nvshmemi_push_state();
    pthread_mutex_unlock(&L->lock);
}

GPURMA_API int nvshmem_team_get_config(nvshmem_team_t team, long config_mask,
                                       nvshmem_team_config_t *config)
{
    (void)config_mask;
    if (gpurma_nvshmemi_team_n_pes(team) < 0 || !config)
        return -1;
    config->num_contexts = 0;
    return 0;
}
