/*
 * coll_algos.h - the collective algorithms, one line each. The line makes
 * the algorithm's number (gpurma_coll_algo_t, coll_proto.h), its name (a
 * value of GPURMA_COLL_ALGO, src/common/config_table.h; the name logs
 * print) and its row of the host selector (coll/coll_select.c), so adding
 * an algorithm is its own file(s), one line here and Makefile.am.
 * Plain preprocessor text: compiles as CUDA, HIP, C and C++. Not ABI.
 *
 * X(ID, name, kinds, order, proxied, min_ranks, min_bytes, fits_ll, own)
 *   ID         GPURMA_COLL_ALGO_<ID>; numbered in list order (kernels
 *              receive the number: append, never reorder)
 *   name       its GPURMA_COLL_ALGO word
 *   kinds      the collectives it runs: K(ALLREDUCE) | K(ALLGATHER) | ...,
 *              or K_ALL, or 0; forced on another one, oneshot runs instead
 *   order      the selector tries algorithms by increasing order and takes
 *              the first that fits; 0: never chosen unless forced
 *   proxied    1: only when some peer goes through the port engine (other
 *              nodes); -1: only when none does; 0: any team
 *   min_ranks  team size at least
 *   min_bytes  piece one rank sends one peer at least (0: any)
 *   fits_ll    1: only when a piece fits one LL slot; 2: when it fits the
 *              channels' LL16 slots (gpurma_dcoll__ll16_parts, which also
 *              gives the parts)
 *   own        1: those of allreduce, allgather, reduce-scatter,
 *              alltoall, broadcast and reduce in kinds run the algorithm's
 *              gpurma_dcoll__run_<name>
 *              (its header), which may decline a call
 *              (GPURMA_DCOLL__DECLINED: the shared code runs it), and
 *              alltoallv, when in kinds, its gpurma_dcoll__run_<name>_v; 2:
 *              allreduce runs its gpurma_dcoll__allreduce_<name>; 0: the
 *              shared code (oneshot, LL when the share fits)
 */
#ifndef GPURMA_DETAIL_COLL_ALGOS_H
#define GPURMA_DETAIL_COLL_ALGOS_H

/* clang-format off */
#define GPURMA_COLL_ALGOS(X)                                                                   \
    /* The selector's choice; forced, the selector's table. */                                 \
    X(AUTO,       auto,       0,         0, 0, 1, 0,     0, 0)                                 \
    /* Everything to everyone in one step of LL packets: no signal, no round trip. */          \
    X(ONESHOT_LL, oneshot_ll, K_ALL,     2, 0, 1, 0,     1, 0)                                 \
    /* Everything to everyone, puts and signals. */                                            \
    X(ONESHOT,    oneshot,    K_ALL,     5, 0, 1, 0,     0, 0)                                 \
    /* Large allreduce: each rank reduces 1/n (reduce-scatter), then allgather. */             \
    X(TWOSHOT,    twoshot,    K(ALLREDUCE), 4, 0, 3, 65536, 0, 2)                              \
    /* Other nodes: a pipelined chain in rank order keeps each link to one neighbour. */       \
    X(RING,       ring,       K(ALLREDUCE), 3, 1, 3, 0,   0, 2)                                \
    /* Port engine and copy engines, no SM (algo_ce.c); forced only: no GPU                    \
     * measurement puts it in the table yet. */                                                \
    X(CE,         ce,         K(ALLGATHER) | K(ALLTOALL) | K(ALLTOALLV) | K(BROADCAST),        \
                              0, 0, 1, 0,     0, 0)                                            \
    /* Stream collectives on registered buffers, zero-copy (coll_direct.h): tried             \
     * after the table unless an LL row keeps the call (coll/coll_api.c); forced,             \
     * every call it can take, oneshot the others. */                                          \
    X(DIRECT,     direct,     0,         0, 0, 1, 0,     0, 0)                                 \
    /* Small pieces in one step of 16-byte LL packets, no acknowledgement: every             \
     * member hears a header from every other, with data or not; one node                     \
     * (coll_ll16.h). */                                                                       \
    X(LL16,       ll16,       K(ALLREDUCE) | K(ALLGATHER) | K(REDUCE_SCATTER) | K(ALLTOALL) | \
                              K(BROADCAST) | K(REDUCE) | K(ALLTOALLV),                         \
                              1, -1, 1, 0,   2, 1)
/* clang-format on */

/* The GPURMA_COLL_ALGO words in number order, for the config table. */
#define GPURMA_COLL_ALGO__NAME(ID, name, ...) , #name
#define GPURMA_COLL_ALGO__NAMES_ GPURMA_COLL_ALGOS(GPURMA_COLL_ALGO__NAME)
/* Drops the leading comma of the list above. */
#define GPURMA_COLL_ALGO__TAIL(first, ...) __VA_ARGS__
#define GPURMA_COLL_ALGO__TAIL_(...) GPURMA_COLL_ALGO__TAIL(__VA_ARGS__)
#define GPURMA_COLL_ALGO_NAMES GPURMA_COLL_ALGO__TAIL_(GPURMA_COLL_ALGO__NAMES_)

#endif
