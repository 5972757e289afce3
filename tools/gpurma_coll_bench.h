/*
 * gpurma_coll_bench.h - what gpurma-coll-bench's host part (gpurma_coll_bench.c:
 * options, host backend, table) and its GPU part (gpurma_coll_bench_gpu.cu:
 * gpurma on streams and graphs, and the NCCL harness) share.
 */
#ifndef GPURMA_COLL_BENCH_H
#define GPURMA_COLL_BENCH_H

#include <stddef.h>

#include "gpurma.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CB_ALLREDUCE, CB_ALLGATHER, CB_REDUCE_SCATTER, CB_BROADCAST, CB_REDUCE, CB_ALLTOALL,
       CB_ALLTOALLV, CB_KINDS };

/* Who runs the collective: gpurma, NCCL on cudaMalloc'd buffers, NCCL on
 * symmetric buffers (ncclMemAlloc + ncclCommWindowRegister). */
enum { CB_GPURMA, CB_NCCL_PLAIN, CB_NCCL_SYM, CB_IMPLS };

/* alltoallv's counts and displacements on this rank, in elements, one per
 * team rank (what gpurma_alltoallv takes). */
typedef struct {
    const size_t *send_counts, *send_displs, *recv_counts, *recv_displs;
} cb_v_t;

typedef struct {
    int            kind;
    size_t         count; /* per rank (allgather, reduce_scatter), per pair (alltoall);
                             alltoallv: elements of this rank's larger buffer */
    gpurma_dtype_t dtype;
    gpurma_redop_t op;
    int            root;
    const cb_v_t  *v;     /* alltoallv only */
} cb_op_t;

/* alltoallv's count matrix (gpurma_coll_bench_skew.c): a mixture of
 * experts' traffic, count[s * n + d] elements from rank s to rank d, the
 * blocks packed in rank order on both sides; the largest buffer of any
 * rank holds max_elems. build returns nonzero when out of memory. */
typedef struct {
    int     n;
    size_t *count;
} cb_skew_t;
int    cb_skew_build(int n, size_t max_elems, cb_skew_t *m);
void   cb_skew_free(cb_skew_t *m);
size_t cb_skew_send_displ(const cb_skew_t *m, int s, int d); /* in s's send */
size_t cb_skew_recv_displ(const cb_skew_t *m, int d, int s); /* in d's recv */
/* Elements the busiest rank sends to or receives from its peers. */
size_t cb_skew_busiest(const cb_skew_t *m);

/* GPU part (CUDA builds). Buffers of send_max and recv_max bytes per
 * implementation; nccl: also set up NCCL (builds with nccl.h). Every call
 * returns 0 or prints why and returns nonzero. */
int  cbg_have_gpu(void);
int  cbg_setup(gpurma_team_t team, size_t send_max, size_t recv_max, int nccl);
int  cbg_available(int impl);
int  cbg_upload(int impl, const void *host, size_t bytes);
int  cbg_poison(int impl, size_t bytes);
int  cbg_download(int impl, void *host, size_t bytes);
/* Runs op once (for the check). */
int  cbg_run(int impl, const cb_op_t *op);
/* Microseconds per op over iters ops, on this rank: back to back on the
 * stream, or captured into one CUDA graph (graph) and launched. */
int  cbg_time(int impl, const cb_op_t *op, int iters, int graph, double *us);
void cbg_teardown(void);

/* The floors of the run (gpurma_coll_bench_floors.cu), measured before
 * cbg_setup on a window of their own, freed again. */
typedef struct {
    int    iters;       /* ops per timing: what the collectives' small sizes use */
    int    graph_modes; /* bit 0: back to back on a stream, bit 1: one CUDA graph */
    size_t copy_bytes;  /* bytes of one SM copy into a peer (a multiple of 16) */
} cbg_floor_params_t;
typedef struct {
    double ll_us[2];  /* us per LL exchange on this rank: [0] no graph, [1] graph */
    double copy_gbs;  /* this rank's SM copy into the next rank, every rank at once */
    char   why[160];  /* why there are none (return 77) */
} cbg_floors_t;
/* Collective. 0, 77 when they cannot be measured here (alike on every rank,
 * out->why says why), 1 after a failure (printed). */
int  cbg_floors(gpurma_team_t team, const cbg_floor_params_t *p, cbg_floors_t *out);

#ifdef __cplusplus
}
#endif
#endif
