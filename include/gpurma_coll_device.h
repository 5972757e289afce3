/*
 * gpurma_coll_device.h - collectives callable inside kernels (and, compiled
 * as plain C, from CPU threads on the host backend): barrier, broadcast,
 * allgather (fcollect), alltoall, reduce, reduce-scatter and allreduce over
 * a team, at thread scope (plain), and on a GPU at warp (_warp) and block
 * (_block) scope. Written only with the public device API (puts, signals,
 * LL packets, waits) on the team's scratch window; the host collectives of
 * gpurma_coll.h run these same functions. Get a handle with
 * gpurma_coll_device(team, mem_kind, &handle). Not ABI beyond the calls.
 *
 * The scratch window (every member's copy has the same layout):
 *   state   this member's epoch and, per peer and buffer parity, the epoch
 *           of the last write it made there (read only by this member)
 *   data    [2 parities][n sources] slots of `slot` bytes: bulk puts (the
 *           last 16 bytes of a slot: the trailer, the call's count and print)
 *   ll      [2 parities][n sources] slots of LL packets (8-byte packets:
 *           4 bytes of data and a 4-byte flag in one store; the last three:
 *           the trailer)
 *   stage   [n sources] of `ll_slot` bytes: LL payloads, unpacked
 * Signals: slot src carries "src's data for epoch e has arrived" (SET e),
 * slot n + peer carries "peer has consumed what this member wrote to it up
 * to epoch e" (SET e). The window holds one copy of all this per channel
 * (regions one after the other, signals from 2n x channel), so that the
 * parts of a large collective move at once (one block each).
 *
 * Epochs: every step of every collective takes the next epoch (the same
 * number on every member, since collectives run in the same order
 * everywhere); parity e & 1 picks the buffer. A member writes into a
 * peer's buffer of parity q only once the peer acknowledged the last
 * epoch this member wrote there, so nothing is ever cleared, no barrier is
 * needed between collectives, and LL flags (the epoch's low 32 bits) never
 * repeat what the slot held before. The epoch lives in the window (device
 * memory for GPU handles), so a replayed CUDA graph continues it. CPU
 * threads wait through gpurma_wait_until (a dead member is reported, not
 * only timed out); kernels poll with the device wait.
 *
 * Results follow gpurma_coll.h: reductions combine contributions in rank
 * order (gpurma/detail/dev_reduce.h), so every member gets the same bytes.
 * Collectives of one team must not run concurrently (one stream, or one
 * thread, per team and handle), as with any collective.
 */
#ifndef GPURMA_COLL_DEVICE_H
#define GPURMA_COLL_DEVICE_H

/* The protocol, then one header per algorithm (the list of algorithms is
 * gpurma/detail/coll_algos.h). */
#include "gpurma/detail/coll_proto.h"
#include "gpurma/detail/coll_oneshot.h"
#include "gpurma/detail/coll_twoshot.h"
#include "gpurma/detail/coll_ring.h"
#include "gpurma/detail/coll_ll16.h"
#include "gpurma/detail/coll_ll16_v.h"

/* ------------------------------------------------------------ the API */

/* Whether a rank's share of count elements (this part of it) fits one LL
 * step. */
GPURMA_DEVICE int gpurma_dcoll__fits_ll(const gpurma_dev_coll_t *c, size_t count,
                                        gpurma_dtype_t dtype)
{
    size_t es = gpurma_dev_dtype_size(dtype);
    return es && gpurma_sh_div_ceil(count, c->nparts ? c->nparts : 1) <=
                     gpurma_dcoll__slot_data(c, 1) / es;
}

/* The selector's choice made on the device: ll for small shares (also
 * when LL16 declined the call: another node, a large team). */
#define GPURMA_DCOLL__LL(algo, c, count, dtype)                                                \
    ((algo) == GPURMA_COLL_ALGO_ONESHOT_LL ||                                                  \
     (((algo) == GPURMA_COLL_ALGO_AUTO || (algo) == GPURMA_COLL_ALGO_LL16) &&                  \
      gpurma_dcoll__fits_ll(c, count, dtype)))

/* The algorithms with their own code (coll_algos.h: own) run it for the
 * collectives of their kinds (a constant test: no other collective holds
 * their code); written inside
 * gpurma_dev_coll_{allreduce,allgather,reduce_scatter,alltoall,broadcast,reduce}_algo*,
 * whose variables it names (kind: the call's GPURMA_DCOLL__K_*, root: 0
 * where the collective has none). One that
 * declines the call (GPURMA_DCOLL__DECLINED) leaves it to the shared code
 * below. */
#define GPURMA_DCOLL__OWN(ID, name, kinds, order, proxied, min_ranks, min_bytes, fits_ll, own) \
    GPURMA_DCOLL__OWN_##own(ID, name, kinds)
#define GPURMA_DCOLL__OWN_0(ID, name, kinds)
/* Their pieces travel in the slots oneshot uses, cut otherwise: the
 * algorithm goes into the fingerprint, so that a member running another
 * one (GPURMA_COLL_ALGO set differently per process) is refused instead
 * of reducing pieces of other lengths and offsets as its own. */
#define GPURMA_DCOLL__OWN_2(ID, name, kinds)                                                   \
    if (kind == GPURMA_DCOLL__K_ALLREDUCE && algo == GPURMA_COLL_ALGO_##ID) {                  \
        c.print = gpurma_dcoll__print_algo(c.print, GPURMA_COLL_ALGO_##ID);                    \
        return gpurma_dcoll__allreduce_##name(&c, &g, dst, src, count, dtype, op, 0);          \
    }
#define GPURMA_DCOLL__OWN_1(ID, name, kinds)                                                   \
    if (((kinds) & (1u << kind)) && algo == GPURMA_COLL_ALGO_##ID) {                           \
        gpurma_status_t own_ =                                                                 \
            gpurma_dcoll__run_##name(&c, &g, kind, dst, src, count, dtype, op, root);          \
        if (own_ != GPURMA_DCOLL__DECLINED)                                                    \
            return own_;                                                                       \
    }
/* alltoallv's: an algorithm of `own` 1 whose kinds hold ALLTOALLV runs
 * its gpurma_dcoll__run_<name>_v. */
#define GPURMA_DCOLL__OWN_V(ID, name, kinds, order, proxied, min_ranks, min_bytes, fits_ll, own) \
    GPURMA_DCOLL__OWN_V_##own(ID, name, kinds)
#define GPURMA_DCOLL__OWN_V_0(ID, name, kinds)
#define GPURMA_DCOLL__OWN_V_2(ID, name, kinds)
#define GPURMA_DCOLL__OWN_V_1(ID, name, kinds)                                                 \
    if (((kinds) & (1u << GPURMA_DCOLL__K_ALLTOALLV)) && algo == GPURMA_COLL_ALGO_##ID) {      \
        gpurma_status_t own_ =                                                                 \
            gpurma_dcoll__run_##name##_v(&c, &g, dst, src, &l, max_count, dtype);              \
        if (own_ != GPURMA_DCOLL__DECLINED)                                                    \
            return own_;                                                                       \
    }
/* The list's kind masks in the fingerprint's kinds, while the calls below
 * are made (the names are the list's; restored after). */
#pragma push_macro("K")
#pragma push_macro("K_ALL")
#undef K
#undef K_ALL
#define K(k) (1u << GPURMA_DCOLL__K_##k)
#define K_ALL 0xffffffffu

/* Each call: every member of the team calls it with the same count, dtype,
 * op and root; buffers are this thread's (global memory on a GPU). The
 * group forms take the whole warp or block, with the same arguments. The
 * _algo forms take a gpurma_coll_algo_t (the host library's selector uses
 * them); TWOSHOT and RING apply to allreduce, other collectives take
 * them as ONESHOT. */
#define GPURMA_DCOLL__API(SUFFIX, GRP)                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_barrier##SUFFIX(gpurma_dev_coll_t c)         \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        return gpurma_dcoll__barrier(&c, &g, GPURMA_DCOLL__LL16_EPOCH);                        \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_broadcast_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int root, int algo)                                                                    \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        const int kind = GPURMA_DCOLL__K_BROADCAST;                                            \
        const gpurma_redop_t op = GPURMA_SUM;                                                  \
        gpurma_dcoll__set_call(&c, kind, count, dtype, op, root);                              \
        GPURMA_COLL_ALGOS(GPURMA_DCOLL__OWN)                                                   \
        return gpurma_dcoll__broadcast(&c, &g, dst, src, count, dtype, root,                   \
                                       GPURMA_DCOLL__LL(algo, &c, count, dtype));              \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allgather_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int algo)                                                                              \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        gpurma_dcoll__layout_t l = {count, 0, 0, 0, 0, 0};                                     \
        const int kind = GPURMA_DCOLL__K_ALLGATHER;                                            \
        const int root = 0;                                                                    \
        const gpurma_redop_t op = GPURMA_SUM;                                                  \
        gpurma_dcoll__set_call(&c, kind, count, dtype, op, 0);                                 \
        GPURMA_COLL_ALGOS(GPURMA_DCOLL__OWN)                                                   \
        return gpurma_dcoll__exchange(&c, &g, dst, src, &l, count, dtype,                      \
                                      GPURMA_DCOLL__LL(algo, &c, count, dtype));               \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_alltoall_algo##SUFFIX(                       \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int algo)                                                                              \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        gpurma_dcoll__layout_t l = {count, 1, 0, 0, 0, 0};                                     \
        const int kind = GPURMA_DCOLL__K_ALLTOALL;                                             \
        const int root = 0;                                                                    \
        const gpurma_redop_t op = GPURMA_SUM;                                                  \
        gpurma_dcoll__set_call(&c, kind, count, dtype, op, 0);                                 \
        GPURMA_COLL_ALGOS(GPURMA_DCOLL__OWN)                                                   \
        return gpurma_dcoll__exchange(&c, &g, dst, src, &l, count, dtype,                      \
                                      GPURMA_DCOLL__LL(algo, &c, count, dtype));               \
    }                                                                                          \
    /* Counts and displacements in elements, one per member; max_count is                  \
     * the largest count of any member's arrays (the same on every member). */              \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_alltoallv_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const size_t *recv_counts, const size_t *recv_displs,  \
        const void *src, const size_t *send_counts, const size_t *send_displs,                 \
        size_t max_count, gpurma_dtype_t dtype, int algo)                                      \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        gpurma_dcoll__layout_t l = {0, 1, send_counts, send_displs, recv_counts, recv_displs}; \
        gpurma_dcoll__set_call(&c, GPURMA_DCOLL__K_ALLTOALLV, max_count, dtype, GPURMA_SUM, 0); \
        GPURMA_COLL_ALGOS(GPURMA_DCOLL__OWN_V)                                                 \
        return gpurma_dcoll__exchange(&c, &g, dst, src, &l, max_count, dtype,                  \
                                      GPURMA_DCOLL__LL(algo, &c, max_count, dtype));           \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce_algo##SUFFIX(                         \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int root, int algo)                                                 \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        const int kind = GPURMA_DCOLL__K_REDUCE;                                               \
        gpurma_dcoll__set_call(&c, kind, count, dtype, op, root);                              \
        GPURMA_COLL_ALGOS(GPURMA_DCOLL__OWN)                                                   \
        return gpurma_dcoll__reduce_push(&c, &g, dst, src, count, dtype, op, root, 0,          \
                                         GPURMA_DCOLL__LL(algo, &c, count, dtype));            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce_scatter_algo##SUFFIX(                 \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int algo)                                                           \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        const int kind = GPURMA_DCOLL__K_REDUCE_SCATTER;                                       \
        const int root = 0;                                                                    \
        gpurma_dcoll__set_call(&c, kind, count, dtype, op, 0);                                 \
        GPURMA_COLL_ALGOS(GPURMA_DCOLL__OWN)                                                   \
        return gpurma_dcoll__reduce_push(&c, &g, dst, src, count, dtype, op, 0, 2,             \
                                         GPURMA_DCOLL__LL(algo, &c, count, dtype));            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allreduce_algo##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int algo)                                                           \
    {                                                                                          \
        gpurma_dcoll__grp_t g = GRP;                                                           \
        const int kind = GPURMA_DCOLL__K_ALLREDUCE;                                            \
        const int root = 0;                                                                    \
        gpurma_dcoll__set_call(&c, kind, count, dtype, op, 0);                                 \
        GPURMA_COLL_ALGOS(GPURMA_DCOLL__OWN)                                                   \
        return gpurma_dcoll__reduce_push(&c, &g, dst, src, count, dtype, op, 0, 1,             \
                                         GPURMA_DCOLL__LL(algo, &c, count, dtype));            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_broadcast##SUFFIX(                           \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        int root)                                                                              \
    {                                                                                          \
        return gpurma_dev_coll_broadcast_algo##SUFFIX(c, dst, src, count, dtype, root, 0);     \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allgather##SUFFIX(                           \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype)   \
    {                                                                                          \
        return gpurma_dev_coll_allgather_algo##SUFFIX(c, dst, src, count, dtype, 0);           \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_alltoall##SUFFIX(                            \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype)   \
    {                                                                                          \
        return gpurma_dev_coll_alltoall_algo##SUFFIX(c, dst, src, count, dtype, 0);            \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce##SUFFIX(                              \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op, int root)                                                           \
    {                                                                                          \
        return gpurma_dev_coll_reduce_algo##SUFFIX(c, dst, src, count, dtype, op, root, 0);    \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_reduce_scatter##SUFFIX(                      \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op)                                                                     \
    {                                                                                          \
        return gpurma_dev_coll_reduce_scatter_algo##SUFFIX(c, dst, src, count, dtype, op, 0);  \
    }                                                                                          \
    GPURMA_DEVICE gpurma_status_t gpurma_dev_coll_allreduce##SUFFIX(                           \
        gpurma_dev_coll_t c, void *dst, const void *src, size_t count, gpurma_dtype_t dtype,   \
        gpurma_redop_t op)                                                                     \
    {                                                                                          \
        return gpurma_dev_coll_allreduce_algo##SUFFIX(c, dst, src, count, dtype, op, 0);       \
    }

#define GPURMA_DCOLL__ONE {0, 1, 0}
GPURMA_DCOLL__API(, GPURMA_DCOLL__ONE)
#if GPURMA_DEV_GPU
#define GPURMA_DCOLL__WARP {gpurma_sh_lane(), gpurma_sh_warp_threads(), 1}
#define GPURMA_DCOLL__BLOCK {gpurma_sh_block_tid(), gpurma_sh_block_threads(), 2}
GPURMA_DCOLL__API(_warp, GPURMA_DCOLL__WARP)
GPURMA_DCOLL__API(_block, GPURMA_DCOLL__BLOCK)
#endif
#undef K
#undef K_ALL
#pragma pop_macro("K")
#pragma pop_macro("K_ALL")

#ifdef __cplusplus
extern "C" {
#endif

/* The handle of team's scratch window in host memory (GPURMA_MEM_HOST:
 * for CPU threads) or on the GPU (GPURMA_MEM_DEVICE: for kernels).
 * Collective over the team the first time for each kind. */
GPURMA_API gpurma_status_t gpurma_coll_device(gpurma_team_t team, gpurma_mem_kind_t kind,
                                              gpurma_dev_coll_t *out);

#ifdef __cplusplus
}
#endif

#endif /* GPURMA_COLL_DEVICE_H */
