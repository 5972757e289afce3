/*
 * init.c - init and finalize, and unique ids (gpurma's, in NVSHMEM's type): the top of the
 * layer, on heap.c, team.c and state.c (which call nothing here).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "config_section.h"
#include "nvshmem_internal.h"

/* ------------------------------------------------------- unique ids */

/* NVSHMEM's id holds 124 bytes after its version; gpurma's is 128, its
 * last bytes the tail of rank 0's address (text, zero-filled): an id
 * whose address leaves those four zero fits, and init rebuilds it. */
#define UID_KEPT sizeof(((nvshmemx_uniqueid_t *)0)->internal)
_Static_assert(UID_KEPT <= GPURMA_UNIQUE_ID_BYTES, "an NVSHMEM id holds a gpurma id's head");

GPURMA_API int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t *uid)
{
    if (!uid)
        return NVSHMEMX_ERROR_INVALID_VALUE;
    gpurma_unique_id_t id;
    gpurma_status_t rc = gpurma_get_unique_id(&id);
    if (rc != GPURMA_SUCCESS) {
        fprintf(stderr, "gpurma NVSHMEM layer: nvshmemx_get_uniqueid: %s\n",
                gpurma_last_error_message(NULL));
        return NVSHMEMX_ERROR_INTERNAL;
    }
    for (size_t i = UID_KEPT; i < sizeof id.internal; i++)
        if (id.internal[i]) {
            fprintf(stderr, "gpurma NVSHMEM layer: nvshmemx_get_uniqueid: rank 0's address "
                            "is too long for NVSHMEM's id (set MASTER_ADDR to a shorter one)\n");
            return NVSHMEMX_ERROR_INVALID_VALUE;
        }
    memset(uid, 0, sizeof *uid);
    uid->version = GPURMA_NVSHMEMI_UNIQUEID_VERSION;
    memcpy(uid->internal, id.internal, UID_KEPT);
    return NVSHMEMX_SUCCESS;
}

GPURMA_API int nvshmemx_set_attr_uniqueid_args(int myrank, int nranks,
                                               const nvshmemx_uniqueid_t *uid,
                                               nvshmemx_init_attr_t *attr)
{
    if (!attr || !uid || nranks <= 0 || myrank < 0 || myrank >= nranks)
        return NVSHMEMX_ERROR_INVALID_VALUE;
    attr->args.uid_args.version = GPURMA_NVSHMEMI_UNIQUEID_VERSION;
    attr->args.uid_args.myrank = myrank;
    attr->args.uid_args.nranks = nranks;
    attr->args.uid_args.id = (nvshmemx_uniqueid_t *)uid;
    return NVSHMEMX_SUCCESS;
}

/* ------------------------------------------------------------ init */

/* NVSHMEM_SYMMETRIC_SIZE, as NVSHMEM reads it: bytes, with an optional K, M,
 * G or T suffix (and B); empty means the default. */
static int symmetric_size_ok(const char *v, int64_t *bytes)
{
    if (!*v) {
        *bytes = (int64_t)GPURMA_NVSHMEMI_DEFAULT_HEAP;
        return 1;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || v[0] == '-')
        return 0;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end || n > (SIZE_MAX >> shift) || n > ((uint64_t)INT64_MAX >> shift) || !n)
        return 0;
    *bytes = (int64_t)(n << shift);
    return 1;
}

/* The layer's own variables: NVSHMEM's names, read with gpurma's. */
#define NVSHMEM_LAYER_CONFIG(X)                                                           \
    X(symmetric_size, NVSHMEM_SYMMETRIC_SIZE, STR, "1G",                                  \
      GPURMA_CFG_CHECKED(symmetric_size_ok, "a size in bytes, optionally with K, M, G or T"), \
      "NVSHMEM layer: bytes of symmetric heap per PE, as in NVSHMEM")
GPURMA_CONFIG_SECTION(nvshmem_layer, NVSHMEM_LAYER_CONFIG)

static int fail_init(const char *why, gpurma_status_t rc)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    fprintf(stderr, "gpurma NVSHMEM layer: init failed: %s (%s%s%s)\n", why,
            gpurma_strerror(rc), L->ctx ? ": " : "",
            L->ctx ? gpurma_last_error_message(L->ctx) : "");
    if (L->win)
        gpurma_win_free(&L->win);
    if (L->ctx)
        gpurma_finalize(L->ctx);
    L->ctx = NULL;
    L->status = NVSHMEM_STATUS_NOT_INITIALIZED;
    return NVSHMEMX_ERROR_INTERNAL;
}

/* The heap: device memory when a GPU is in use, else host memory. */
static gpurma_status_t heap_allocate(size_t bytes, void **base)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    gpurma_win_params_t p = {.field_mask = GPURMA_WIN_FIELD_MEM_KIND,
                             .mem_kind = GPURMA_MEM_DEVICE};
    L->st.heap_host = 0;
    gpurma_status_t rc = gpurma_win_allocate(L->teams[0], bytes, &p, base, &L->win);
    if (rc == GPURMA_ERR_UNSUPPORTED) { /* no GPU in use: the host backend */
        p.mem_kind = GPURMA_MEM_HOST;
        L->st.heap_host = 1;
        rc = gpurma_win_allocate(L->teams[0], bytes, &p, base, &L->win);
    }
    return rc;
}

/* Zeroes this PE's barrier counters. */
static gpurma_status_t zero_counters(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (L->st.heap_host) {
        memset(L->st.heap_base, 0, L->st.sync_bytes);
        return GPURMA_SUCCESS;
    }
    void *zeros = calloc(1, L->st.sync_bytes);
    if (!zeros)
        return GPURMA_ERR_NO_MEMORY;
    gpurma_status_t rc = gpurma_put(L->win, L->st.my_pe, 0, zeros, L->st.sync_bytes);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_quiet(L->win);
    free(zeros);
    return rc;
}

GPURMA_API int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t *attr)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (L->status >= NVSHMEM_STATUS_IS_INITIALIZED)
        return NVSHMEMX_SUCCESS; /* NVSHMEM allows init again; one heap */
    gpurma_init_params_t p = {.field_mask = GPURMA_INIT_FIELD_DEVICE,
                              .device = GPURMA_DEVICE_AUTO};
    const char *dev = getenv("GPURMA_DEVICE");
    if (dev && *dev)
        p.field_mask = 0; /* gpurma's own variable decides */
    if ((flags & NVSHMEMX_INIT_WITH_MPI_COMM) && (flags & NVSHMEMX_INIT_WITH_UNIQUEID)) {
        fprintf(stderr, "gpurma NVSHMEM layer: init: MPI_COMM and UNIQUEID both given\n");
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    if (flags & ~(unsigned)(NVSHMEMX_INIT_THREAD_PES | NVSHMEMX_INIT_WITH_MPI_COMM |
                            NVSHMEMX_INIT_WITH_UNIQUEID)) {
        fprintf(stderr, "gpurma NVSHMEM layer: init: unsupported flags 0x%x "
                        "(NVSHMEMX_INIT_WITH_SHMEM is not supported)\n", flags);
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    if (flags & NVSHMEMX_INIT_WITH_MPI_COMM) {
        if (!attr || !attr->mpi_comm)
            return NVSHMEMX_ERROR_INVALID_VALUE;
        p.field_mask |= GPURMA_INIT_FIELD_BOOTSTRAP | GPURMA_INIT_FIELD_MPI_COMM;
        p.bootstrap = "mpi";
        p.mpi_comm = attr->mpi_comm;
    }
    gpurma_unique_id_t id; /* gpurma's id, rebuilt from NVSHMEM's */
    if (flags & NVSHMEMX_INIT_WITH_UNIQUEID) {
        const nvshmemx_uniqueid_args_t *a = attr ? &attr->args.uid_args : NULL;
        if (!a || !a->id || a->id->version != GPURMA_NVSHMEMI_UNIQUEID_VERSION) {
            fprintf(stderr, "gpurma NVSHMEM layer: init: invalid unique-id arguments\n");
            return NVSHMEMX_ERROR_INVALID_VALUE;
        }
        memset(&id, 0, sizeof id);
        memcpy(id.internal, a->id->internal, UID_KEPT);
        /* gpurma_init checks the id, the rank and the size. */
        p.field_mask |= GPURMA_INIT_FIELD_UNIQUE_ID;
        p.unique_id = &id;
        p.rank = a->myrank;
        p.size = a->nranks;
    }
    size_t user_bytes, sync_bytes, total;
    if (gpurma_config_section_read(&nvshmem_layer_config_section)) {
        fprintf(stderr, "gpurma NVSHMEM layer: init: NVSHMEM_SYMMETRIC_SIZE=%s is not a "
                        "size (bytes, optionally with K, M, G or T)\n",
                nvshmem_layer_config_section.entries[0].value);
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    user_bytes = (size_t)nvshmem_layer_config()->symmetric_size_value;
    gpurma_status_t rc = gpurma_init(&p, &L->ctx);
    if (rc != GPURMA_SUCCESS)
        return fail_init("gpurma_init", rc);
    int n = gpurma_size(L->ctx);
    /* Barrier counters: two 64-bit words per PE; the teams' collective
     * handles; then the user's heap. */
    size_t counters, handles = GPURMA_NVSHMEMI_MAX_TEAMS * sizeof(gpurma_dev_coll_t);
    if (gpurma_size_array((size_t)n, 16, 64, &counters) ||
        gpurma_size_add(counters, handles, &sync_bytes) ||
        gpurma_size_round_up(sync_bytes, 4096, &sync_bytes) ||
        gpurma_size_round_up(user_bytes, GPURMA_NVSHMEMI_MIN_ALIGN, &user_bytes) ||
        gpurma_size_add(sync_bytes, user_bytes, &total))
        return fail_init("the heap size overflows", GPURMA_ERR_INVALID_ARG);
    memset(L->teams, 0, sizeof L->teams);
    L->teams[NVSHMEM_TEAM_WORLD] = gpurma_team_world(L->ctx);
    L->teams[NVSHMEMX_TEAM_NODE] = gpurma_team_node(L->ctx);
    L->teams[NVSHMEM_TEAM_SHARED] = gpurma_team_node(L->ctx);
    void *base = NULL;
    rc = heap_allocate(total, &base);
    if (rc != GPURMA_SUCCESS)
        return fail_init("allocating the symmetric heap (NVSHMEM_SYMMETRIC_SIZE)", rc);
    gpurma_nvshmemi_state_t *s = &L->st;
    s->my_pe = gpurma_rank(L->ctx);
    s->n_pes = n;
    s->node_rank = gpurma_node_rank(L->ctx);
    int device = GPURMA_DEVICE_HOST;
    if (!s->heap_host && gpurma_device_in_use(L->ctx, &device) != GPURMA_SUCCESS)
        return fail_init("gpurma_device_in_use", GPURMA_ERR_INTERNAL);
    s->device = device;
    s->heap_base = base;
    s->heap_size = total;
    s->sync_bytes = sync_bytes;
    s->colls_off = handles ? counters : 0;
    rc = gpurma_win_device(L->win, &s->win);
    if (rc == GPURMA_SUCCESS)
        rc = zero_counters();
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]);
    if (rc != GPURMA_SUCCESS || gpurma_nvshmemi_heap_setup(user_bytes))
        return fail_init("setting up the symmetric heap", rc ? rc : GPURMA_ERR_NO_MEMORY);
    for (int t = 0; t <= NVSHMEM_TEAM_SHARED; t++)
        gpurma_nvshmemi_describe_team(t);
    gpurma_nvshmemi_prepare_stream_barrier(L->teams[NVSHMEM_TEAM_WORLD]);
    gpurma_nvshmemi_prepare_stream_barrier(L->teams[NVSHMEMX_TEAM_NODE]);
    pthread_mutex_lock(&L->lock);
    s->magic = GPURMA_NVSHMEMI_STATE_LIVE;
    gpurma_nvshmemi_lib.finalized = 0;
    __atomic_store_n(&L->status, NVSHMEM_STATUS_IS_INITIALIZED, __ATOMIC_RELEASE);
    gpurma_nvshmemi_push_state();
    pthread_mutex_unlock(&L->lock);
    return NVSHMEMX_SUCCESS;
}

GPURMA_API void nvshmem_init(void)
{
    if (nvshmemx_init_attr(0, NULL) != NVSHMEMX_SUCCESS)
        gpurma_nvshmemi_fail("nvshmem_init", GPURMA_ERR_BOOTSTRAP, "initialization failed");
}

GPURMA_API int nvshmemx_init_thread(int requested, int *provided)
{
    int rc = nvshmemx_init_attr(0, NULL);
    if (provided)
        *provided = NVSHMEM_THREAD_MULTIPLE;
    (void)requested;
    return rc;
}

GPURMA_API void nvshmem_query_thread(int *provided)
{
    if (provided)
        *provided = NVSHMEM_THREAD_MULTIPLE;
}

GPURMA_API int nvshmemx_init_status(void)
{
    return __atomic_load_n(&gpurma_nvshmemi_lib.status, __ATOMIC_ACQUIRE);
}

GPURMA_API void nvshmem_finalize(void)
{
    gpurma_nvshmemi_lib_t *L = &gpurma_nvshmemi_lib;
    if (L->status < NVSHMEM_STATUS_IS_INITIALIZED)
        return;
    gpurma_nvshmemi_quiet("nvshmem_finalize"); /* the heap and every segment */
    gpurma_nvshmemi_check_rc("nvshmem_finalize", gpurma_barrier(L->teams[NVSHMEM_TEAM_WORLD]));
    for (int t = NVSHMEM_TEAM_SHARED + 1; t < GPURMA_NVSHMEMI_MAX_TEAMS; t++)
        if (L->teams[t])
            gpurma_team_free(&L->teams[t]);
    pthread_mutex_lock(&L->lock);
    L->status = NVSHMEM_STATUS_NOT_INITIALIZED;
    /* Units see the layer finalized; where the heap was still says where
     * their copies live. */
    gpurma_nvshmemi_state_t gone = {.heap_host = L->st.heap_host, .device = L->st.device,
                                    .node_rank = L->st.node_rank};
    L->st = gone;
    gpurma_nvshmemi_push_state();
    pthread_mutex_unlock(&L->lock);
    gpurma_nvshmemi_heap_teardown();
    gpurma_status_t rc = gpurma_win_free(&L->win);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_finalize(L->ctx);
    if (rc != GPURMA_SUCCESS)
        gpurma_nvshmemi_fail_after("nvshmem_finalize", rc,
                                   "releasing the heap or context failed");
    L->ctx = NULL;
    gpurma_nvshmemi_lib.finalized = 1;
    memset(L->teams, 0, sizeof L->teams);
}

GPURMA_API void nvshmem_global_exit(int status)
{
    gpurma_abort(gpurma_nvshmemi_lib.ctx, status, "nvshmem_global_exit");
    for (;;)
        ;
}

GPURMA_API void nvshmem_info_get_version(int *major, int *minor)
{
    if (major)
        *major = SHMEM_MAJOR_VERSION;
    if (minor)
        *minor = SHMEM_MINOR_VERSION;
}

GPURMA_API void nvshmem_info_get_name(char *name)
{
    if (name)
        snprintf(name, NVSHMEM_MAX_NAME_LEN, "%s", NVSHMEM_VENDOR_STRING);
}

GPURMA_API void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch)
{
    if (major)
        *major = NVSHMEM_MAJOR_VERSION;
    if (minor)
        *minor = NVSHMEM_MINOR_VERSION;
    if (patch)
        *patch = NVSHMEM_PATCH_VERSION;
}
