/*
 * bootstrap.h - the narrow runtime interface gpurma needs from a launcher:
 * rank, size, allgather, barrier, abort, and notice of a dead peer.
 *
 * Each implementation (pmix.c, uid.c, mpi plugin, single.c) fills a
 * gpurma_bootstrap_t. Node-local rank/size are derived in bootstrap.c from an
 * allgather of host identities, the same way for every implementation.
 * Functions return 0 or a negative gpurma_status_t and write a message with
 * gpurma_set_error() on failure. No call may block longer than timeout_ms.
 */
#ifndef GPURMA_BOOTSTRAP_H
#define GPURMA_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpurma_bootstrap gpurma_bootstrap_t;

typedef struct gpurma_bootstrap_ops {
    size_t      size; /* sizeof(struct gpurma_bootstrap_ops), for growth */
    const char *name;
    /* all receives size * len bytes, rank r's block at r * len. len may be 0. */
    int (*allgather)(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len);
    int (*barrier)(gpurma_bootstrap_t *bs);
    /* Ends the job; may return if the launcher cannot do it. */
    void (*abort)(gpurma_bootstrap_t *bs, int code, const char *why);
    void (*finalize)(gpurma_bootstrap_t *bs); /* frees bs->impl */
} gpurma_bootstrap_ops_t;

struct gpurma_bootstrap {
    const gpurma_bootstrap_ops_t *ops;
    int      rank, size;
    int      node_id;                /* dense index of this rank's node      */
    int      num_nodes;
    int      local_rank, local_size; /* within the node                     */
    int     *node_of;                /* [size] node_id of every rank        */
    int64_t  timeout_ms;             /* bound on every blocking call        */
    /* Set asynchronously (event handler, socket close) when a peer is known
     * dead: failed_rank is that rank (or -1 when unknown). Read with
     * __atomic_load_n(..., __ATOMIC_ACQUIRE). */
    int      peer_failed;
    int      failed_rank;
    void    *impl;
};

/* Implementations. Each returns 0 and a filled *out (rank, size, ops, impl,
 * timeout_ms copied from the argument), or a negative status with an error set. */
int gpurma_bootstrap_single_open(int64_t timeout_ms, gpurma_bootstrap_t **out);
int gpurma_bootstrap_uid_open(int64_t timeout_ms, gpurma_bootstrap_t **out);
int gpurma_bootstrap_pmix_open(int64_t timeout_ms, gpurma_bootstrap_t **out);
/* The MPI bootstrap lives in a plugin (libgpurma_bootstrap_mpi.so, built with
 * mpicc) so that libgpurma never links MPI; this loads it with dlopen. */
int gpurma_bootstrap_mpi_open(void *mpi_comm, int64_t timeout_ms, gpurma_bootstrap_t **out);

/* Symbol the MPI plugin exports (same contract as above). */
typedef int (*gpurma_bootstrap_mpi_open_fn)(void *mpi_comm, int64_t timeout_ms,
                                            gpurma_bootstrap_t **out);
#define GPURMA_BOOTSTRAP_MPI_SYMBOL "gpurma_bootstrap_mpi_plugin_open"

/* Picks an implementation: name ("pmix" "uid" "mpi" "single") or NULL for
 * automatic (GPURMA_BOOTSTRAP env, then MPI comm given, PMIx env, torchrun env,
 * single), opens it and computes node information. */
int gpurma_bootstrap_open(const char *name, void *mpi_comm, int64_t timeout_ms,
                          gpurma_bootstrap_t **out);
void gpurma_bootstrap_close(gpurma_bootstrap_t *bs);

/* Same as bs->ops->allgather but checks peer_failed first. */
int gpurma_bootstrap_allgather(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len);
int gpurma_bootstrap_barrier(gpurma_bootstrap_t *bs);

#endif
