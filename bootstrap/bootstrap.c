/*
 * bootstrap.c - picks a bootstrap implementation, derives node information
 * from an allgather of host identities, and loads the MPI plugin.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bootstrap.h"
#include "gpurma_internal.h"
#include "mpi_plugin.h"

/* Fixed size so the identity allgather needs no length exchange: a host name
 * (at most 64 bytes on Linux), a separator and a 36-character boot id fit. */
#define HOST_IDENTITY_BYTES 128
#ifdef GPURMA_MPI_PLUGIN_NAME /* from config.h */
#define MPI_PLUGIN_NAME GPURMA_MPI_PLUGIN_NAME
#else
#define MPI_PLUGIN_NAME "libgpurma_bootstrap_mpi.so"
#endif

/* Error text of the MPI plugin, found once it is loaded (the plugin cannot
 * call gpurma_set_error: libgpurma's internals are hidden from it). */
static gpurma_bootstrap_mpi_error_fn mpi_plugin_error;

/* ------------------------------------------------------------ node info */

static int host_identity(char out[HOST_IDENTITY_BYTES])
{
    const char *forced = gpurma_config()->node_id;
    memset(out, 0, HOST_IDENTITY_BYTES);
    if (forced && forced[0]) {
        if (strlen(forced) >= HOST_IDENTITY_BYTES)
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                    "GPURMA_NODE_ID is longer than %d characters",
                                    HOST_IDENTITY_BYTES - 1);
        memcpy(out, forced, strlen(forced));
        return 0;
    }
    char host[HOST_IDENTITY_BYTES - 40] = "";
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "unknown-host");
    /* The boot id tells apart machines that share a host name (cloned VMs,
     * containers named alike on different machines). */
    char boot_id[40] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot_id, sizeof(boot_id), f))
            boot_id[0] = '\0';
        fclose(f);
        boot_id[strcspn(boot_id, "\n")] = '\0';
    }
    snprintf(out, HOST_IDENTITY_BYTES, "%s/%s", host, boot_id);
    return 0;
}

typedef struct {
    const char *ids; /* size * HOST_IDENTITY_BYTES */
    int         rank;
} rank_identity_t;

static int compare_rank_identity(const void *a, const void *b)
{
    const rank_identity_t *x = a, *y = b;
    int c = memcmp(x->ids + (size_t)x->rank * HOST_IDENTITY_BYTES,
                   y->ids + (size_t)y->rank * HOST_IDENTITY_BYTES, HOST_IDENTITY_BYTES);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* Node ids are dense and ordered by the lowest rank on each node, so that
 * every rank computes the same numbering from the same gathered table. */
static int compute_node_info(gpurma_bootstrap_t *bs)
{
    int size = bs->size;
    char mine[HOST_IDENTITY_BYTES];
    int rc = host_identity(mine);
    if (rc)
        return rc;

    char *ids = malloc((size_t)size * HOST_IDENTITY_BYTES);
    rank_identity_t *order = malloc((size_t)size * sizeof(*order));
    int *leader = malloc((size_t)size * sizeof(*leader));
    bs->node_of = malloc((size_t)size * sizeof(*bs->node_of));
    if (!ids || !order || !leader || !bs->node_of) {
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY,
                              "bootstrap: no memory for the node table of %d ranks", size);
        goto out;
    }
    rc = gpurma_bootstrap_allgather(bs, mine, ids, HOST_IDENTITY_BYTES);
    if (rc)
        goto out;

    /* Sort by (identity, rank): each run of equal identities is one node,
     * and its first entry is the node's lowest rank. */
    for (int r = 0; r < size; r++)
        order[r] = (rank_identity_t){ids, r};
    qsort(order, (size_t)size, sizeof(*order), compare_rank_identity);
    int first = 0;
    for (int i = 0; i < size; i++) {
        if (memcmp(ids + (size_t)order[first].rank * HOST_IDENTITY_BYTES,
                   ids + (size_t)order[i].rank * HOST_IDENTITY_BYTES, HOST_IDENTITY_BYTES))
            first = i;
        leader[order[i].rank] = order[first].rank;
    }
    /* Walking ranks in order meets each leader before the other ranks of
     * its node, so numbering leaders in that walk gives the dense ids. */
    int num_nodes = 0;
    for (int r = 0; r < size; r++)
        bs->node_of[r] = leader[r] == r ? num_nodes++ : bs->node_of[leader[r]];

    bs->num_nodes  = num_nodes;
    bs->node_id    = bs->node_of[bs->rank];
    bs->local_rank = 0;
    bs->local_size = 0;
    for (int r = 0; r < size; r++) {
        if (bs->node_of[r] != bs->node_id)
            continue;
        if (r < bs->rank)
            bs->local_rank++;
        bs->local_size++;
    }
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "rank %d: host '%s' is node %d of %d, local rank %d of %d",
                 bs->rank, mine, bs->node_id, num_nodes, bs->local_rank, bs->local_size);
out:
    free(ids);
    free(order);
    free(leader);
    if (rc) {
        free(bs->node_of);
        bs->node_of = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------- selection */

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && v[0];
}

/* Chooses the implementation and says why, for the info log. */
static const char *choose_bootstrap(const char *name, void *mpi_comm, const char **why)
{
    if (name && name[0] && strcasecmp(name, "auto")) {
        *why = "requested by the caller";
        return name;
    }
    const char *env = gpurma_config()->bootstrap;
    if (env && env[0] && strcasecmp(env, "auto")) {
        *why = "GPURMA_BOOTSTRAP is set";
        return env;
    }
    if (mpi_comm) {
        *why = "an MPI communicator was passed";
        return "mpi";
    }
    if (env_set("PMIX_RANK") || env_set("PMIX_NAMESPACE")) {
        *why = "PMIX_RANK/PMIX_NAMESPACE are set (launched by mpirun or srun --mpi=pmix)";
        return "pmix";
    }
    if (env_set("RANK") && env_set("WORLD_SIZE") && env_set("MASTER_ADDR")) {
        *why = "RANK, WORLD_SIZE and MASTER_ADDR are set (torchrun-style launch)";
        return "uid";
    }
    *why = "no launcher detected";
    return "single";
}

int gpurma_bootstrap_open(const char *name, void *mpi_comm, int64_t timeout_ms,
                          gpurma_bootstrap_t **out)
{
    if (!out)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "bootstrap: out is NULL");
    *out = NULL;

    const char *why;
    const char *chosen = choose_bootstrap(name, mpi_comm, &why);
    GPURMA_INFO(GPURMA_SUB_BOOT, "bootstrap %s chosen: %s", chosen, why);
    gpurma_bootstrap_t *bs = NULL;
    int rc;
    if (!strcasecmp(chosen, "single")) {
        rc = gpurma_bootstrap_single_open(timeout_ms, &bs);
    } else if (!strcasecmp(chosen, "uid")) {
        rc = gpurma_bootstrap_uid_open(timeout_ms, &bs);
    } else if (!strcasecmp(chosen, "mpi")) {
        if (!mpi_comm)
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                    "bootstrap 'mpi' (%s) needs an MPI communicator: set "
                                    "gpurma_init_params_t.mpi_comm to the address of an MPI_Comm",
                                    why);
        rc = gpurma_bootstrap_mpi_open(mpi_comm, timeout_ms, &bs);
    } else if (!strcasecmp(chosen, "pmix")) {
#ifdef HAVE_PMIX
        rc = gpurma_bootstrap_pmix_open(timeout_ms, &bs);
#else
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "bootstrap 'pmix' chosen (%s) but gpurma was built without "
                                "PMIx (configure --with-pmix); set GPURMA_BOOTSTRAP to another "
                                "bootstrap", why);
#endif
    } else {
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "unknown bootstrap '%s' (%s); expected pmix, uid, mpi or single",
                                chosen, why);
    }
    if (rc)
        return rc;

    rc = compute_node_info(bs);
    if (rc) {
        gpurma_bootstrap_close(bs);
        return rc;
    }
    GPURMA_INFO(GPURMA_SUB_BOOT, "bootstrap %s: rank %d of %d, on node %d of %d (local rank %d "
                "of %d)", bs->ops->name, bs->rank, bs->size, bs->node_id, bs->num_nodes,
                bs->local_rank, bs->local_size);
    *out = bs;
    return 0;
}

void gpurma_bootstrap_close(gpurma_bootstrap_t *bs)
{
    if (!bs)
        return;
    free(bs->node_of);
    bs->node_of = NULL;
    bs->ops->finalize(bs);
    free(bs);
}

/* ------------------------------------------------------------- wrappers */

static int refuse_if_peer_failed(gpurma_bootstrap_t *bs, const char *what)
{
    if (!__atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE))
        return 0;
    int failed = __atomic_load_n(&bs->failed_rank, __ATOMIC_RELAXED);
    if (failed >= 0)
        return gpurma_set_error(GPURMA_ERR_PEER_FAILED,
                                "%s on rank %d refused: rank %d has failed (reported by the %s "
                                "bootstrap)", what, bs->rank, failed, bs->ops->name);
    return gpurma_set_error(GPURMA_ERR_PEER_FAILED,
                            "%s on rank %d refused: a peer has failed (reported by the %s "
                            "bootstrap, rank unknown)", what, bs->rank, bs->ops->name);
}

/* The plugin keeps its own message; copy it where gpurma_last_error_message
 * looks. */
static int import_plugin_error(gpurma_bootstrap_t *bs, int rc)
{
    gpurma_bootstrap_mpi_error_fn error_fn = __atomic_load_n(&mpi_plugin_error, __ATOMIC_ACQUIRE);
    if (rc && error_fn && !strcmp(bs->ops->name, "mpi"))
        return gpurma_set_error(rc, "%s", error_fn());
    return rc;
}

int gpurma_bootstrap_allgather(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    int rc = refuse_if_peer_failed(bs, "bootstrap allgather");
    if (rc)
        return rc;
    return import_plugin_error(bs, bs->ops->allgather(bs, mine, all, len));
}

int gpurma_bootstrap_barrier(gpurma_bootstrap_t *bs)
{
    int rc = refuse_if_peer_failed(bs, "bootstrap barrier");
    if (rc)
        return rc;
    return import_plugin_error(bs, bs->ops->barrier(bs));
}

/* ----------------------------------------------------------- MPI plugin */

/* The plugin is looked for beside libgpurma first, so that an installed
 * library finds its own plugin without LD_LIBRARY_PATH. */
static void *load_mpi_plugin(char *tried, size_t tried_len)
{
    const char *configured = gpurma_config()->mpi_plugin;
    if (configured && configured[0]) {
        snprintf(tried, tried_len, "%s (GPURMA_MPI_PLUGIN)", configured);
        return dlopen(configured, RTLD_NOW | RTLD_LOCAL);
    }
    Dl_info self;
    if (dladdr((void *)&gpurma_bootstrap_mpi_open, &self) && self.dli_fname) {
        const char *slash = strrchr(self.dli_fname, '/');
        if (slash) {
            char path[4096];
            snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - self.dli_fname),
                     self.dli_fname, MPI_PLUGIN_NAME);
            if (access(path, R_OK) == 0) {
                snprintf(tried, tried_len, "%s", path);
                return dlopen(path, RTLD_NOW | RTLD_LOCAL);
            }
        }
    }
    snprintf(tried, tried_len, "%s (library search path)", MPI_PLUGIN_NAME);
    return dlopen(MPI_PLUGIN_NAME, RTLD_NOW | RTLD_LOCAL);
}

int gpurma_bootstrap_mpi_open(void *mpi_comm, int64_t timeout_ms, gpurma_bootstrap_t **out)
{
    if (!mpi_comm || !out)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "mpi bootstrap: mpi_comm (address of an MPI_Comm) and out are "
                                "required");
    char tried[4200];
    /* Never closed: the ops table lives in the plugin, and dlopen counts
     * references, so loading it again later returns the same handle. */
    void *plugin = load_mpi_plugin(tried, sizeof(tried));
    if (!plugin)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "mpi bootstrap: cannot load plugin %s: %s (build it with mpicc, "
                                "or set GPURMA_MPI_PLUGIN to its path)", tried, dlerror());
    gpurma_bootstrap_mpi_open_fn open_fn;
    *(void **)&open_fn = dlsym(plugin, GPURMA_BOOTSTRAP_MPI_SYMBOL);
    if (!open_fn)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "mpi bootstrap: %s does not export %s; is it a gpurma MPI plugin "
                                "of this version?", tried, GPURMA_BOOTSTRAP_MPI_SYMBOL);
    gpurma_bootstrap_mpi_error_fn error_fn;
    *(void **)&error_fn = dlsym(plugin, GPURMA_BOOTSTRAP_MPI_ERROR_SYMBOL);
    __atomic_store_n(&mpi_plugin_error, error_fn, __ATOMIC_RELEASE);

    int rc = open_fn(mpi_comm, timeout_ms, out);
    if (rc)
        return gpurma_set_error(rc, "mpi bootstrap: %s",
                                error_fn ? error_fn() : "plugin open failed");
    /* A plugin built against an older bootstrap.h may lack newer ops. */
    size_t ops_size = (*out)->ops->size;
    if (ops_size < sizeof(gpurma_bootstrap_ops_t)) {
        gpurma_bootstrap_close(*out);
        *out = NULL;
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "mpi bootstrap: %s was built for an "
                                "older gpurma (ops table of %zu bytes, need %zu); rebuild it",
                                tried, ops_size, sizeof(gpurma_bootstrap_ops_t));
    }
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "mpi bootstrap plugin loaded from %s", tried);
    return 0;
}
