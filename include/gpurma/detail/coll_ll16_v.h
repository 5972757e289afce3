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
    size_t at, bytes;
    /* Send: the headers (thread 0), then every peer's units, from the
     * next member on (members start on different links). */
    if (g->tid == 0)
        for (int k = 1; k < n; k++) {
            const int p = gpurma_dcoll__ll16_after(me, k, n);
            gpurma_sh_store_packet16(gpurma_dcoll__ll16_slot(c, b, p, me, e), print, flag,
                                     (uint32_t)l->send_counts[p], flag);
        }
    for (int k = 1; k < n; k++) {
        const int p = gpurma_dcoll__ll16_after(me, k, n);
        gpurma_dcoll__block(c, l, 1, p, es, &at, &bytes);
        const char *in = (const char *)send + at;
        uint64_t *to = gpurma_dcoll__ll16_slot(c, b, p, me, e) + 2;
        for (size_t i = g->tid; 8 * i < bytes; i += g->nthreads) {
            const uint64_t w = gpurma_dcoll__ll16_unit(in, bytes, i);
            gpurma_sh_store_packet16(to + 2 * i, (uint32_t)w, flag, (uint32_t)(w >> 32), flag);
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
    /* This member's own block, then every source's from its slot. */
    size_t from;
    gpurma_dcoll__block(c, l, 1, me, es, &from, &bytes);
    gpurma_dcoll__block(c, l, 0, me, es, &at, &bytes);
    gpurma_sh_copy((char *)recv + at, (const char *)send + from, bytes, g->tid, g->nthreads);
    for (int k = 1; k < n && rc == GPURMA_SUCCESS; k++) {
        const int src = gpurma_dcoll__ll16_after(me, k, n);
        gpurma_dcoll__block(c, l, 0, src, es, &at, &bytes);
        const uint64_t *slot = gpurma_dcoll__ll16_slot(c, b, me, src, e) + 2;
        for (size_t i = g->tid; 8 * i < bytes && rc == GPURMA_SUCCESS; i += g->nthreads) {
            uint32_t v[4];
            uint64_t d = 0;
            gpurma_sh_load_packet16(slot + 2 * i, v);
            rc = gpurma_dcoll__ll16_read(c, slot + 2 * i, NULL, flag, v, &d);
            if (rc == GPURMA_SUCCESS)
                gpurma_dcoll__ll16_store_unit((char *)recv + at, bytes, i, d);
        }
    }
    return gpurma_dcoll__agree(g, rc);
}

/* alltoallv through LL16 (b: every member's window as mapped here),
 * declined (GPURMA_DCOLL__DECLINED: the shared code runs it) where LL16
 * cannot run it, decided alike on every member. */
GPURMA_DEVICE gpurma_status_t gpurma_dcoll__run_ll16_v_bases(const gpurma_dev_coll_t *c,
                                                             const gpurma_dcoll__ll16_bases_t *b,
                                                             const gpurma_dcoll__grp_t *g,
                                                             void *recv, const void *send,
                                                             const gpurma_dcoll__layout_t *l,
                                                             size_t max_count,
                                                             gpurma_dtype_t dtype)
{
    gpurma_status_t rc = gpurma_dcoll__check(c, max_count, dtype, GPURMA_SUM, 0);
    if (rc != GPURMA_SUCCESS)
        return rc;
    /* The slots are cut for blocks of max_count elements, and this member's
     * own block goes from its send to its recv: a count beyond the one, or
     * an own block of two lengths, is refused before anything moves (a
     * device-API caller's arguments; the host library's agreement passes
     * neither). */
    for (int p = 0; p < c->size; p++)
        if (l->send_counts[p] > max_count || l->recv_counts[p] > max_count)
            return GPURMA_ERR_INVALID_ARG;
    if (l->send_counts[c->rank] != l->recv_counts[c->rank])
        return GPURMA_ERR_INVALID_ARG;
    const size_t es = gpurma_dev_dtype_size(dtype);
    uint64_t *word, e;
    rc = gpurma_dcoll__ll16_take(c, b, g, max_count, es, &word, &e);
    if (rc != GPURMA_SUCCESS)
        return rc;
    rc = gpurma_dcoll__ll16_run_v(c, b, g, recv, send, l, es, e);
    gpurma_dcoll__ll16_give(g, word, e);
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
    return gpurma_dcoll__run_ll16_v_bases(c, &b, g, recv, send, l, max_count, dtype);
}

#endif
