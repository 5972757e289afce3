/*
 * gpurma-info - what this gpurma was built with, what it would pick here,
 * and every environment variable it reads.
 *
 *   gpurma-info              everything
 *   gpurma-info -c           only the environment variables
 *   gpurma-info --version    only the version
 *
 * The bootstrap is detected from the environment exactly as gpurma_init
 * would choose it. gpurma-info initializes the library only where that cannot
 * wait for absent peers: with the single bootstrap (no launcher), or under a
 * PMIx launcher (mpirun/srun start every rank, so the collective completes),
 * and then with a short timeout. Under a launcher only rank 0 prints.
 *
 * Exit status 1 when a GPURMA_* variable holds a value the library rejects
 * (everything is still printed, the bad value marked).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bootstrap.h"
#include "gpurma_internal.h"
#include "switch/switch.h"

extern char **environ;

/* Bound on init, window and finalize under a launcher, so that a rank
 * started alone (mpirun running something else beside it) does not hang. */
#define INFO_INIT_TIMEOUT_MS 10000

/* ----------------------------------------------------------- config table */

static const char *type_name(gpurma_cfg_type_t t)
{
    switch (t) {
    case GPURMA_CFG_INT:  return "INT";
    case GPURMA_CFG_STR:  return "STR";
    case GPURMA_CFG_BOOL: return "BOOL";
    case GPURMA_CFG_ENUM: return "ENUM";
    case GPURMA_CFG_LIST: return "LIST";
    }
    return "?";
}

static int is_known_var(const gpurma_config_entry_t *vars, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(vars[i].env) == len && !strncmp(vars[i].env, name, len))
            return 1;
    return 0;
}

/* Prints every variable; returns how many hold a value the library rejects. */
static int print_env_vars(void)
{
    int n, invalid = 0;
    const gpurma_config_entry_t *vars = gpurma_config_entries(&n);
    printf("Environment variables (value in effect; * = set in the environment, "
           "! = set but invalid):\n");
    for (int i = 0; i < n; i++) {
        const gpurma_config_entry_t *v = &vars[i];
        char accepts[256];
        invalid += v->invalid;
        printf("  %c %-22s = %-10s (default %s, %s)%s\n", v->invalid ? '!' : v->is_set ? '*' : ' ',
               v->env, v->value[0] ? v->value : "\"\"", v->def[0] ? v->def : "\"\"",
               type_name(v->type), v->invalid ? "  INVALID" : "");
        printf("      %s\n", v->help);
        if (v->invalid)
            printf("      INVALID: expected %s\n", gpurma_config_accepts(v, accepts, sizeof(accepts)));
        else if (v->type != GPURMA_CFG_STR || v->check)
            printf("      accepts %s\n", gpurma_config_accepts(v, accepts, sizeof(accepts)));
    }
    /* A misspelt variable is silently ignored by the library; say so here. */
    int unknown = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "GPURMA_", 7))
            continue;
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        if (is_known_var(vars, n, *e, len))
            continue;
        if (!unknown++)
            printf("  Not gpurma variables (ignored by the library; misspelt?):\n");
        printf("    %.*s\n", (int)len, *e);
    }
    if (invalid)
        printf("%d variable(s) marked ! hold a value gpurma does not accept: gpurma_init\n"
               "fails with GPURMA_ERR_INVALID_ARG until they are corrected or unset.\n", invalid);
    return invalid;
}

/* ----------------------------------------------------------- build options */

static const char *yes_no(int v) { return v ? "yes" : "no"; }

#ifdef HAVE_PMIX
#define INFO_HAVE_PMIX 1
#else
#define INFO_HAVE_PMIX 0
#endif
#ifdef HAVE_UCX
#define INFO_HAVE_UCX 1
#else
#define INFO_HAVE_UCX 0
#endif
#ifdef HAVE_CUDA
#define INFO_HAVE_CUDA 1
#else
#define INFO_HAVE_CUDA 0
#endif
#ifdef HAVE_ROCM
#define INFO_HAVE_ROCM 1
#else
#define INFO_HAVE_ROCM 0
#endif
#ifdef HAVE_MPI_PLUGIN
#define INFO_HAVE_MPI_PLUGIN 1
#else
#define INFO_HAVE_MPI_PLUGIN 0
#endif

static void print_build(void)
{
    printf("Build:\n");
#ifndef HAVE_CONFIG_H
    printf("  (gpurma-info was compiled without config.h: options below are what its own\n"
           "   compiler flags said, which may differ from the library's)\n");
#endif
    printf("  %-22s %s\n", "PMIx bootstrap", yes_no(INFO_HAVE_PMIX));
    printf("  %-22s %s\n", "uid (TCP) bootstrap", "yes");
    printf("  %-22s %s%s\n", "MPI bootstrap plugin", yes_no(INFO_HAVE_MPI_PLUGIN),
           INFO_HAVE_MPI_PLUGIN ? " (libgpurma_bootstrap_mpi.so, loaded when asked for)" : "");
    printf("  %-22s %s\n", "UCX", yes_no(INFO_HAVE_UCX));
    printf("  %-22s %s", "CUDA", yes_no(INFO_HAVE_CUDA));
#if defined(GPURMA_CUDA_HOME)
    printf(" (%s", GPURMA_CUDA_HOME);
#if defined(GPURMA_CUDA_ARCH_LIST)
    printf(", architectures %s", GPURMA_CUDA_ARCH_LIST);
#endif
    printf(")");
#endif
    printf("\n");
    printf("  %-22s %s\n", "ROCm", yes_no(INFO_HAVE_ROCM));
    /* configure --enable-debug (GPURMA_DEBUG is the logging macro, defined
     * in every build). */
#if defined(GPURMA_ENABLE_DEBUG)
    printf("  %-22s %s\n", "debug build", "yes");
#else
    printf("  %-22s %s\n", "debug build", "no");
#endif
#if defined(GPURMA_SANITIZERS)
    if (GPURMA_SANITIZERS[0])
        printf("  %-22s %s\n", "sanitizers", GPURMA_SANITIZERS);
#endif
#if defined(GPURMA_BUILD_CC)
    printf("  %-22s %s\n", "compiler", GPURMA_BUILD_CC);
#endif
#if defined(GPURMA_CONFIGURE_ARGS)
    printf("  %-22s %s\n", "configure", GPURMA_CONFIGURE_ARGS[0] ? GPURMA_CONFIGURE_ARGS : "(no arguments)");
#endif
}

/* -------------------------------------------------------------- detection */

/* Result of a trial initialization, for the report. */
typedef struct {
    int         tried, rc;
    char        error[512];
    int         rank, size, node_rank, node_size;
    const char *bootstrap;
    char        engines[256]; /* engine to each peer of a 64-byte window */
    int         gpus;         /* -1: unknown */
} init_report_t;

static gpurma_status_t init_with(int device, int64_t timeout_ms, gpurma_ctx_t *ctx)
{
    gpurma_init_params_t p = {.field_mask = GPURMA_INIT_FIELD_DEVICE | GPURMA_INIT_FIELD_TIMEOUT_MS,
                              .device = device, .timeout_ms = timeout_ms};
    return gpurma_init(&p, ctx);
}

/* GPUs through the public API only: gpurma_init accepts GPU ordinal k only
 * when k GPUs or more are usable. Only for the single bootstrap, where an
 * init costs nothing collective. */
static int count_gpus(void)
{
    int n = 0;
    for (; n < 64; n++) {
        gpurma_ctx_t ctx;
        if (init_with(n, INFO_INIT_TIMEOUT_MS, &ctx) != GPURMA_SUCCESS)
            break;
        gpurma_finalize(ctx);
    }
    return n;
}

static void try_init(const char *bootstrap, init_report_t *r)
{
    gpurma_ctx_t ctx;
    r->tried = 1;
    r->gpus = -1;
    r->rc = init_with(GPURMA_DEVICE_AUTO, INFO_INIT_TIMEOUT_MS, &ctx);
    if (r->rc) {
        snprintf(r->error, sizeof(r->error), "%s", gpurma_last_error_message(NULL));
        return;
    }
    r->rank = gpurma_rank(ctx);
    r->size = gpurma_size(ctx);
    r->node_rank = gpurma_node_rank(ctx);
    r->node_size = gpurma_node_size(ctx);
    r->bootstrap = gpurma_bootstrap_name(ctx);

    /* A small window shows which engine serves each peer. */
    gpurma_win_t win;
    void *base;
    int rc = gpurma_win_allocate(gpurma_team_world(ctx), 64, NULL, &base, &win);
    if (rc == GPURMA_SUCCESS) {
        size_t len = 0;
        for (int p = 0; p < r->size && len + 32 < sizeof(r->engines); p++)
            len += (size_t)snprintf(r->engines + len, sizeof(r->engines) - len, "%s%d:%s",
                                    p ? " " : "", p, gpurma_engine_name(gpurma_win_engine(win, p)));
        if (r->size * 8 > (int)sizeof(r->engines))
            snprintf(r->engines + len, sizeof(r->engines) - len, " ...");
        gpurma_win_free(&win);
    } else {
        snprintf(r->engines, sizeof(r->engines), "window allocation failed: %s",
                 gpurma_last_error_message(ctx));
    }
    gpurma_finalize(ctx);

    if (!strcmp(bootstrap, "single") && (INFO_HAVE_CUDA || INFO_HAVE_ROCM))
        r->gpus = count_gpus();
    else if (!INFO_HAVE_CUDA && !INFO_HAVE_ROCM)
        r->gpus = 0;
}

static void print_detected(const char *bootstrap, const char *why, const init_report_t *r)
{
    printf("Detected:\n");
    printf("  %-22s %s (%s)\n", "bootstrap", bootstrap, why);
    if (!r->tried) {
        if (!strcmp(bootstrap, "uid"))
            printf("  %-22s not tried: the uid bootstrap waits for WORLD_SIZE ranks; start them\n"
                   "  %-22s all (torchrun or by hand) to test it\n", "init", "");
        else if (!strcmp(bootstrap, "mpi"))
            printf("  %-22s not tried: the mpi bootstrap needs the application's communicator\n",
                   "init");
        else
            printf("  %-22s not tried\n", "init");
    } else if (r->rc) {
        printf("  %-22s FAILED: %s\n", "init", r->error);
    } else {
        printf("  %-22s ok: rank %d of %d, node rank %d of %d, bootstrap %s\n", "init", r->rank,
               r->size, r->node_rank, r->node_size, r->bootstrap);
        printf("  %-22s %s\n", "engine to each peer", r->engines);
    }
    if (!INFO_HAVE_CUDA && !INFO_HAVE_ROCM)
        printf("  %-22s none (built without CUDA and ROCm: host backend)\n", "GPU");
    else if (r->gpus > 0)
        printf("  %-22s %d usable\n", "GPU", r->gpus);
    else if (r->gpus == 0)
        printf("  %-22s none usable (no driver or no device): host backend\n", "GPU");
    else
        printf("  %-22s not probed (only done without a launcher)\n", "GPU");
}

static void print_engines(void)
{
    const char *forced = gpurma_config()->engine;
    /* The library's own rules (switch.c), with its message. */
    const char *refusal = gpurma_switch_refusal() ? gpurma_error_text() : NULL;
    printf("Engines:\n");
    printf("  %-8s %s\n", "mem", "yes: loads and stores into mapped peer memory "
           "(POSIX shm on the host backend, process_vm_writev for created windows)");
    printf("  %-8s %s%s\n", "port", "yes: descriptor FIFO + proxy thread; memcpy on the node",
           INFO_HAVE_UCX ? ", UCX to other nodes" : "; no UCX in this build, so no other nodes");
    printf("  %-8s yes: switch objects (gpurma_switch.h), emulated reduce/broadcast\n",
           "switch");
    printf("  %-8s %s\n", "", refusal ? refusal : "NVLink multicast may be tried (GPURMA_SWITCH=1)");
    if (strcasecmp(forced, "auto"))
        printf("  GPURMA_ENGINE=%s forces the engine of every window\n", forced);
}

/* ------------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: gpurma-info [options]\n"
            "Prints gpurma's version, build options, what it detects here (bootstrap,\n"
            "GPUs, engines) and every GPURMA_* environment variable with its value.\n"
            "\n"
            "  -c, --config   only the environment variables\n"
            "  --no-init      detect from the environment only; never initialize\n"
            "  --version      only the version\n"
            "  -h, --help     this text\n"
            "\n"
            "Exits with 1 when a GPURMA_* variable holds a value gpurma rejects.\n");
}

int main(int argc, char **argv)
{
    int config_only = 0, no_init = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("gpurma %s\n", gpurma_version_string());
            return 0;
        } else if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) {
            config_only = 1;
        } else if (!strcmp(argv[i], "--no-init")) {
            no_init = 1;
        } else {
            fprintf(stderr, "gpurma-info: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (config_only)
        return print_env_vars() ? 1 : 0;

    const char *why, *bootstrap;
    if (gpurma_bootstrap_detect(&bootstrap, &why)) {
        /* gpurma_init would fail the same way: say so, show the rest. */
        fprintf(stderr, "gpurma-info: %s\n", gpurma_error_text());
        bootstrap = "none";
        why = "the launch environment is incomplete (see above)";
        no_init = 1;
    }
    init_report_t r;
    memset(&r, 0, sizeof(r));
    r.gpus = -1;
    if (!no_init && (!strcasecmp(bootstrap, "single") || !strcasecmp(bootstrap, "pmix")))
        try_init(bootstrap, &r);
    /* Under a launcher every rank ran the collective part; one prints. */
    if (r.tried && !r.rc && r.rank != 0)
        return 0;
    const char *pmix_rank = getenv("PMIX_RANK");
    if (!r.tried && pmix_rank && pmix_rank[0] && strcmp(pmix_rank, "0"))
        return 0;

    printf("gpurma %s (API %d.%d)\n", gpurma_version_string(), GPURMA_VERSION_MAJOR,
           GPURMA_VERSION_MINOR);
    print_build();
    print_detected(bootstrap, why, &r);
    print_engines();
    return print_env_vars() ? 1 : 0;
}
