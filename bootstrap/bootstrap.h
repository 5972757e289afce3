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
    /* Optional (may be NULL, or past size): called once the node
     * information (num_nodes, local ranks) is known. */
    void (*opened)(gpurma_bootstrap_t *bs);
    /* Optional: the host address (name or IP) the job's ranks reach each
     * other through, where the bootstrap knows one (a rendezvous address);
     * NULL otherwise. Networks of transports follow it. */
    const char *(*job_address)(gpurma_bootstrap_t *bs);
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

/* A uid rendezvous given by a unique id (gpurma_get_unique_id) instead of
 * the launch environment: several jobs can then live in one process. */
typedef struct {
    char    addr[96];  /* where rank 0 listens */
    char    port[8];
    uint8_t token[32]; /* UID_TOKEN_BYTES */
    int     rank, size;
} gpurma_uid_explicit_t;

/* How gpurma_bootstrap_open was called, as every implementation sees it. */
typedef struct {
    void       *mpi_comm;   /* address of an MPI_Comm, or NULL */
    int64_t     timeout_ms; /* copied into bs->timeout_ms */
    const char *why;        /* why this bootstrap was chosen, for messages */
    const gpurma_uid_explicit_t *uid; /* set only by gpurma_bootstrap_open_uid */
} gpurma_bootstrap_args_t;

/* One implementation, defined in its file as a gpurma_bootstrap_<name>
 * constant. bootstrap.c lists them in the order automatic selection tries
 * them; adding one is its file, a line in that list and the build list. */
typedef struct {
    const char *name;
    /* Whether this launcher started the process: 1 with *why saying what
     * shows it, 0 when it did not, or a negative status (error set) when
     * it did but left an environment the bootstrap cannot use. */
    int (*detect)(const gpurma_bootstrap_args_t *args, const char **why);
    /* Returns 0 and a filled *out (rank, size, ops, impl, timeout_ms), or
     * a negative status with an error set. */
    int (*open)(const gpurma_bootstrap_args_t *args, gpurma_bootstrap_t **out);
} gpurma_bootstrap_entry_t;

/* The MPI bootstrap lives in a plugin (libgpurma_bootstrap_mpi.so, built with
 * mpicc) so that libgpurma never links MPI; bootstrap.c loads it with dlopen
 * and finds this symbol (same contract as gpurma_bootstrap_entry_t.open). */
typedef int (*gpurma_bootstrap_mpi_open_fn)(void *mpi_comm, int64_t timeout_ms,
                                            gpurma_bootstrap_t **out);
#define GPURMA_BOOTSTRAP_MPI_SYMBOL "gpurma_bootstrap_mpi_plugin_open"

/* Picks an implementation: name ("pmix" "uid" "mpi" "single") or NULL for
 * automatic (GPURMA_BOOTSTRAP env, then MPI comm given, PMIx env, torchrun env,
 * single), opens it and computes node information. */
int gpurma_bootstrap_open(const char *name, void *mpi_comm, int64_t timeout_ms,
                          gpurma_bootstrap_t **out);
/* The uid bootstrap from an explicit rendezvous (a decoded unique id). */
int gpurma_bootstrap_open_uid(const gpurma_uid_explicit_t *uid, int64_t timeout_ms,
                              gpurma_bootstrap_t **out);
/* Decodes a gpurma_unique_id_t's bytes; 0 or INVALID_ARG with a message. */
int gpurma_uid_decode_id(const void *id, size_t len, int rank, int size,
                         gpurma_uid_explicit_t *out);
void gpurma_bootstrap_close(gpurma_bootstrap_t *bs);
/* Which bootstrap automatic selection would open here, and why, without
 * opening it (gpurma-info); a negative status (message set) when the
 * environment would make gpurma_init fail. */
int gpurma_bootstrap_detect(const char **name, const char **why);

/* Whether environment variable name is set and not empty (for detect). */
int gpurma_bootstrap_env_set(const char *name);
/* The pmix entry's detect (pmix_detect.c), shared by pmix.c and pmix_none.c. */
int gpurma_bootstrap_pmix_detect(const gpurma_bootstrap_args_t *args, const char **why);

/* Same as bs->ops->allgather but checks peer_failed first. */
int gpurma_bootstrap_allgather(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len);
int gpurma_bootstrap_barrier(gpurma_bootstrap_t *bs);

#endif
