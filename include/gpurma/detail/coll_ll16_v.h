/*
 * coll_ll16_v.h - alltoallv in one step of LL16 packets (coll_ll16.h):
 * every member stores its block for each peer straight into that peer's
 * slot, a header first (the call's print and the block's whole count),
 * and copies the blocks of every source out of its own slots. Blocks
 * differ in length, so a source's packets stop where its block does; the
 * receiver knows where (its recv_counts, which the host library checked
 * against the senders' counts before the call) and checks every header
 * before it writes anything, so a member in another call is refused with
 * recv untouched and no data packet is waited for that will not come.
 *
 * The slots, epochs and the argument that no acknowledgement is needed
 * are LL16's: the same region, taken the same way. The host library picks
 * it when the team's largest block (every member learns it before the
 * call) fits the channels' LL16 slots, so every member decides alike.
 * Part of gpurma_coll_device.h (include that); compiles as CUDA, HIP and
 * plain C. Not ABI.
 */
#ifndef GPURMA_DETAIL_COLL_LL16_V_H
#define GPURMA_DETAIL_COLL_LL16_V_H

#include "gpurma/detail/coll_ll16.h"
#include "gpurma/detail/coll_oneshot.h"

/* A group of up to GPURMA_DCOLL__V_GROUP members (the k0-th to the k0 +
 * 3-th after this one) whose units a thread moves together: one load of
 * each in flight at once, then their stores, so that a thread pays one
 * memory latency per group and unit instead of one per member. */
#define GPURMA_DCOLL__V_GROUP 4

/* This member's part of the call at epoch e, the region taken; l gives
 * the blocks (counts and displacements), max_count the team's largest. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__ll16_run_v(const gpurma_dev_coll_t *c,
                                                       const gpurma_dcoll__ll16_bases_t *b,
                                                       const gpurma_dcoll__grp_t *g, void *recv,
                                                       const void *send,
                                                       const gpurma_dcoll__layout_t *l,
                                                       size_t es, uint64_t e)
{
    const int n = c->size, me = c->rank;
    const uint32_t flag = (uint32_t)e, print = gpurma_dcoll__ll16_print(c);
    size_t at;
    /* Send: the headers (thread 0), then every peer's units, from the
     * next member on (members start on different links), a group of
     * peers at a time. */
    if (g->tid == 0)
        for (int k = 1; k < n; k++) {
            const int p = gpurma_dcoll__ll16_after(me, k, n);
            gpurma_sh_store_packet16(gpurma_dcoll__ll16_slot(c, b, p, me, e), print, flag,
                                     (uint32_t)l->send_counts[p], flag);
        }
    for (int k0 = 1; k0 < n; k0 += GPURMA_DCOLL__V_GROUP) {
        const char *in[GPURMA_DCOLL__V_GROUP];
        uint64_t *to[GPURMA_DCOLL__V_GROUP];
        size_t len[GPURMA_DCOLL__V_GROUP], most = 0;
        GPURMA_UNROLL
        for (int j = 0; j < GPURMA_DCOLL__V_GROUP; j++) {
            in[j] = 0, to[j] = 0, len[j] = 0;
            if (k0 + j >= n)
                continue;
            const int p = gpurma_dcoll__ll16_after(me, k0 + j, n);
            gpurma_dcoll__block(c, l, 1, p, es, &at, &len[j]);
            in[j] = (const char *)send + at;
            to[j] = gpurma_dcoll__ll16_slot(c, b, p, me, e) + 2;
            most = len[j] > most ? len[j] : most;
        }
        for (size_t i = g->tid; 8 * i < most; i += g->nthreads) {
            uint64_t w[GPURMA_DCOLL__V_GROUP];
            GPURMA_UNROLL
            for (int j = 0; j < GPURMA_DCOLL__V_GROUP; j++)
                w[j] = 8 * i < len[j] ? gpurma_dcoll__ll16_unit(in[j], len[j], i) : 0;
            GPURMA_UNROLL
            for (int j = 0; j < GPURMA_DCOLL__V_GROUP; j++)
                if (8 * i < len[j])
                    gpurma_sh_store_packet16(to[j] + 2 * i, (uint32_t)w[j], flag,
                                             (uint32_t)(w[j] >> 32), flag);
        }
    }
    gpurma_status_t rc = gpurma_dcoll__ll16_host_meet(c, g, e);
    /* Every source's header before anything is written: the same call
     * (print) and the block this member expects (count). */
    for (unsigned t = g->tid; t < (unsigned)n - 1 && rc == GPURMA_SUCCESS; t += g->nthreads) {
        const int src = gpurma_dcoll__ll16_after(me, (int)t + 1, n);
        const uint64_t *h = gpurma_dcoll__ll16_slot(c, b, me, src, e);
        uint32_t hv[4];
        gpurma_sh_load_packet16(h, hv);
        rc = gpurma_dcoll__ll16_head(c, h, flag, print, (uint64_t)l->recv_counts[src], hv);
    }
    rc = gpurma_dcoll__agree(g, rc);
    if (rc != GPURMA_SUCCESS)
        return rc;
    /* Receive: every source's block, this member's own first (from its
     * send), the others' from their slots, a group of sources at a time. */
    for (int k0 = 0; k0 < n && rc == GPURMA_SUCCESS; k0 += GPURMA_DCOLL__V_GROUP) {
        const uint64_t *from[GPURMA_DCOLL__V_GROUP];
        const char *own = 0;
        char *out[GPURMA_DCOLL__V_GROUP];
        size_t len[GPURMA_DCOLL__V_GROUP], most = 0;
        GPURMA_UNROLL
        for (int j = 0; j < GPURMA_DCOLL__V_GROUP; j++) {
            from[j] = 0, out[j] = 0, len[j] = 0;
            if (k0 + j >= n)
                continue;
            const int src = gpurma_dcoll__ll16_after(me, k0 + j, n);
            gpurma_dcoll__block(c, l, 0, src, es, &at, &len[j]);
            out[j] = (char *)recv + at;
            if (src == me) {
                size_t own_len;
                gpurma_dcoll__block(c, l, 1, me, es, &at, &own_len);
                own = (const char *)send + at;
            } else {
                from[j] = gpurma_dcoll__ll16_slot(c, b, me, src, e) + 2;
            }
            most = len[j] > most ? len[j] : most;
        }
        for (size_t i = g->tid; 8 * i < most && rc == GPURMA_SUCCESS; i += g->nthreads) {
            uint32_t v[GPURMA_DCOLL__V_GROUP][4];
            uint64_t d[GPURMA_DCOLL__V_GROUP];
            GPURMA_UNROLL
            for (int j = 0; j < GPURMA_DCOLL__V_GROUP; j++) {
                d[j] = 0;
                if (8 * i >= len[j])
                    continue;
                if (from[j])
                    gpurma_sh_load_packet16(from[j] + 2 * i, v[j]);
                else
                    d[j] = gpurma_dcoll__ll16_unit(own, len[j], i);
            }
            GPURMA_UNROLL
            for (int j = 0; j < GPURMA_DCOLL__V_GROUP; j++) {
                if (8 * i >= len[j] || rc != GPURMA_SUCCESS)
                    continue;
                if (from[j])
                    rc = gpurma_dcoll__ll16_read(c, from[j] + 2 * i, NULL, flag, v[j], &d[j],
                                                 NULL, NULL);
                if (rc == GPURMA_SUCCESS)
                    gpurma_dcoll__ll16_store_unit(out[j], len[j], i, d[j]);
            }
        }
    }
    return gpurma_dcoll__agree(g, rc);
}

/* The slots are cut for blocks of max_count elements, and this member's
 * own block goes from its send to its recv: a count beyond the one, or an
 * own block of two lengths, is refused before anything moves (a
 * device-API caller's arguments; the host library's agreement passes
 * neither). */
GPURMA_HOST_DEVICE int gpurma_dcoll__v_blocks_fit(const gpurma_dev_coll_t *c,
                                                  const gpurma_dcoll__layout_t *l,
                                                  size_t max_count)
{
    for (int p = 0; p < c->size; p++)
        if (l->send_counts[p] > max_count || l->recv_counts[p] > max_count)
            return 0;
    return l->send_counts[c->rank] == l->recv_counts[c->rank];
}

/* alltoallv through LL16 (b: every member's window as mapped here),
 * declined (GPURMA_DCOLL__DECLINED: the shared code runs it) where LL16
 * cannot run it, decided alike on every member. early: NULL, or what
 * LL16-v's own kernel did first (the region claimed; no unit of send),
 * for a call whose arguments, blocks and team the host library checked. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__run_ll16_v_bases(const gpurma_dev_coll_t *c,
                                                             const gpurma_dcoll__ll16_bases_t *b,
                                                             const gpurma_dcoll__grp_t *g,
                                                             void *recv, const void *send,
                                                             const gpurma_dcoll__layout_t *l,
                                                             size_t max_count,
                                                             gpurma_dtype_t dtype,
                                                             const gpurma_dcoll__ll16_early_t *early)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (!early) {
        rc = gpurma_dcoll__check(c, max_count, dtype, GPURMA_SUM, 0);
        if (rc != GPURMA_SUCCESS)
            return rc;
        if (!gpurma_dcoll__v_blocks_fit(c, l, max_count))
            return GPURMA_ERR_INVALID_ARG;
    }
    const size_t es = gpurma_dev_dtype_size(dtype);
    uint64_t *word, e;
    rc = gpurma_dcoll__ll16_take(c, b, g, max_count, es, early, &word, &e);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dcoll__ll16_run_v(c, b, g, recv, send, l, es, e);
    gpurma_dcoll__ll16_give(c, g, word, e, rc);
    return rc;
}

/* The same from a device-API call (any kernel, CPU threads). */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__run_ll16_v(const gpurma_dev_coll_t *c,
                                                       const gpurma_dcoll__grp_t *g, void *recv,
                                                       const void *send,
                                                       const gpurma_dcoll__layout_t *l,
                                                       size_t max_count, gpurma_dtype_t dtype)
{
    const gpurma_dcoll__ll16_bases_t b = gpurma_dcoll__ll16_bases(c);
    return gpurma_dcoll__run_ll16_v_bases(c, &b, g, recv, send, l, max_count, dtype, NULL);
}

#endif
