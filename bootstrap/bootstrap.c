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
#include "config_section.h"
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

/* Every bootstrap, in the order automatic selection tries them: this list
 * makes the table below and the words GPURMA_BOOTSTRAP accepts. Adding one
 * is its file (a gpurma_bootstrap_<name> entry), a word here and the build
 * list. */
#define GPURMA_BOOTSTRAPS(X) X(mpi) X(pmix) X(uid) X(single)

#define BOOTSTRAP_WORD(name) #name,
#define BOOTSTRAP_CONFIG(X)                                                               \
    X(bootstrap, GPURMA_BOOTSTRAP, ENUM, "auto",                                          \
      GPURMA_CFG_ONE_OF_EACH("auto", GPURMA_BOOTSTRAPS(BOOTSTRAP_WORD)),                  \
      "Bootstrap (auto: mpi when init gets a communicator, else pmix, uid or single from " \
      "the environment)")                                                                 \
    X(mpi_plugin, GPURMA_MPI_PLUGIN, STR, "", GPURMA_CFG_ANY,                             \
      "Path of libgpurma_bootstrap_mpi.so (default: next to libgpurma)")
GPURMA_CONFIG_SECTION(bootstrap, BOOTSTRAP_CONFIG)

#define DECLARE_BOOTSTRAP(name) extern const gpurma_bootstrap_entry_t gpurma_bootstrap_##name;
GPURMA_BOOTSTRAPS(DECLARE_BOOTSTRAP)
#define LIST_BOOTSTRAP(name) &gpurma_bootstrap_##name,
static const gpurma_bootstrap_entry_t *const bootstraps[] = {GPURMA_BOOTSTRAPS(LIST_BOOTSTRAP)};
#define NUM_BOOTSTRAPS (sizeof(bootstraps) / sizeof(bootstraps[0]))

int gpurma_bootstrap_env_set(const char *name)
{
    const char *v = getenv(name);
    return v && v[0];
}

static const gpurma_bootstrap_entry_t *find_bootstrap(const char *name)
{
    for (size_t i = 0; i < NUM_BOOTSTRAPS; i++)
        if (!strcasecmp(bootstraps[i]->name, name))
            return bootstraps[i];
    return NULL;
}

/* Chooses the implementation and says why in args->why, for the info log. */
static int choose_bootstrap(const char *name, gpurma_bootstrap_args_t *args,
                            const gpurma_bootstrap_entry_t **chosen)
{
    const char *env = bootstrap_config()->bootstrap;
    const char *requested = NULL;
    if (name && name[0] && strcasecmp(name, "auto")) {
        requested = name;
        args->why = "requested by the caller";
    } else if (env && env[0] && strcasecmp(env, "auto")) {
        requested = env;
        args->why = "GPURMA_BOOTSTRAP is set";
    }
    if (requested) {
        *chosen = find_bootstrap(requested);
        if (*chosen)
            return 0;
        char known[128] = "";
        for (size_t i = 0, len = 0; i < NUM_BOOTSTRAPS && len < sizeof(known); i++)
            len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
                                    i == 0 ? "" : i + 1 < NUM_BOOTSTRAPS ? ", " : " or ",
                                    bootstraps[i]->name);
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "unknown bootstrap '%s' (%s); expected %s",
                                requested, args->why, known);
    }
    for (size_t i = 0; i < NUM_BOOTSTRAPS; i++) {
        int found = bootstraps[i]->detect(args, &args->why);
        if (found < 0)
            return found;
        if (found) {
            *chosen = bootstraps[i];
            return 0;
        }
    }
    return gpurma_set_error(GPURMA_ERR_INTERNAL, "bootstrap: no bootstrap detected");
}

int gpurma_bootstrap_detect(const char **name, const char **why)
{
    gpurma_bootstrap_args_t args = {NULL, 0, NULL, NULL};
    const gpurma_bootstrap_entry_t *chosen = NULL;
    int rc = choose_bootstrap(NULL, &args, &chosen);
    *name = rc ? NULL : chosen->name;
    *why = args.why;
    return rc;
}

/* Opens the chosen bootstrap and derives the node table. */
static int open_chosen(const gpurma_bootstrap_entry_t *chosen, gpurma_bootstrap_args_t *args,
                       gpurma_bootstrap_t **out)
{
    GPURMA_INFO(GPURMA_SUB_BOOT, "bootstrap %s chosen: %s", chosen->name, args->why);
    gpurma_bootstrap_t *bs = NULL;
    int rc = chosen->open(args, &bs);
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
    if (bs->ops->size > offsetof(gpurma_bootstrap_ops_t, opened) && bs->ops->opened)
        bs->ops->opened(bs);
    *out = bs;
    return 0;
}

int gpurma_bootstrap_open(const char *name, void *mpi_comm, int64_t timeout_ms,
                          gpurma_bootstrap_t **out)
{
    if (!out)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "bootstrap: out is NULL");
    *out = NULL;

    gpurma_bootstrap_args_t args = {.mpi_comm = mpi_comm, .timeout_ms = timeout_ms};
    const gpurma_bootstrap_entry_t *chosen = NULL;
    int rc = choose_bootstrap(name, &args, &chosen);
    if (rc)
        return rc;
    return open_chosen(chosen, &args, out);
}

int gpurma_bootstrap_open_uid(const gpurma_uid_explicit_t *uid, int64_t timeout_ms,
                              gpurma_bootstrap_t **out)
{
    if (!out || !uid)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "bootstrap: uid or out is NULL");
    *out = NULL;
    gpurma_bootstrap_args_t args = {.timeout_ms = timeout_ms,
                                    .why = "a unique id was passed to init",
                                    .uid = uid};
    return open_chosen(&gpurma_bootstrap_uid, &args, out);
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
    const char *configured = bootstrap_config()->mpi_plugin;
    if (configured && configured[0]) {
        snprintf(tried, tried_len, "%s (GPURMA_MPI_PLUGIN)", configured);
        return dlopen(configured, RTLD_NOW | RTLD_LOCAL);
    }
    Dl_info self;
    if (dladdr((void *)&gpurma_bootstrap_open, &self) && self.dli_fname) {
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

static int mpi_open(const gpurma_bootstrap_args_t *args, gpurma_bootstrap_t **out)
{
    if (!args->mpi_comm)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "bootstrap 'mpi' (%s) needs an MPI communicator: set "
                                "gpurma_init_params_t.mpi_comm to the address of an MPI_Comm",
                                args->why);
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

    int rc = open_fn(args->mpi_comm, args->timeout_ms, out);
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

/* An application that passes its communicator wants MPI. */
static int mpi_detect(const gpurma_bootstrap_args_t *args, const char **why)
{
    if (!args->mpi_comm)
        return 0;
    *why = "an MPI communicator was passed";
    return 1;
}

const gpurma_bootstrap_entry_t gpurma_bootstrap_mpi = {
    .name   = "mpi",
    .detect = mpi_detect,
    .open   = mpi_open,
};
