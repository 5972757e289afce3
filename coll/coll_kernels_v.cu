/*
 * coll_kernels_v.cu - alltoallv on a stream: the counts and displacements
 * travel by value in the kernel's arguments (coll_internal.h says why).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

/* alltoallv's counts and displacements, by value: send counts, send
 * displacements, recv counts, recv displacements, n entries each. Three
 * capacities, so that small teams do not pay 8 KiB of arguments per launch. */
template <int CAP> struct coll_v_table {
    size_t v[4 * CAP];
};

template <int CAP>
__global__ void __launch_bounds__(GPURMA_COLL_THREADS)
gpurma_k_coll_v(gpurma_dev_coll_t c, void *recv, const void *send, coll_v_table<CAP> t, int n,
                size_t max_count, int dtype, int algo)
{
    /* The algorithm reads the arrays many times per step: shared memory,
     * not a per-thread copy of the argument. */
    __shared__ size_t v[4 * CAP];
    for (int i = threadIdx.x; i < 4 * n; i += blockDim.x)
        v[i] = t.v[i];
    __syncthreads();
    c = gpurma_dev_coll_part(c, blockIdx.x, gridDim.x);
    gpurma_status_t rc = gpurma_dev_coll_alltoallv_algo_block(
        c, recv, v + 2 * n, v + 3 * n, send, v, v + n, max_count, (gpurma_dtype_t)dtype, algo);
    if (rc != GPURMA_SUCCESS)
        gpurma_k_coll_fail(c, " (alltoallv)", GPURMA_COLL_ALLTOALLV, rc);
}

/* LL16 (coll_ll16_v.h), for teams of at most GPURMA_DCOLL_LL16_MAX_RANKS:
 * every member's window by value, as LL16's other kernel takes it, and as
 * that kernel it claims the channel's epoch word first thing (f), for a
 * call the host checked. */
__global__ void __launch_bounds__(GPURMA_COLL_LL16_THREADS)
gpurma_k_coll_ll16_v(gpurma_dev_coll_t c, const __grid_constant__ gpurma_dcoll__ll16_bases_t b,
                     gpurma_coll_ll16_first_t f, void *recv, const void *send,
                     coll_v_table<GPURMA_DCOLL_LL16_MAX_RANKS> t, int n, size_t max_count,
                     int dtype)
{
    const gpurma_dcoll__grp_t g = {threadIdx.x, blockDim.x, 2};
    const gpurma_dcoll__ll16_early_t early = gpurma_coll_ll16_early(&f, &g, 0, 0);
    __shared__ size_t v[4 * GPURMA_DCOLL_LL16_MAX_RANKS];
    for (int i = threadIdx.x; i < 4 * n; i += blockDim.x)
        v[i] = t.v[i];
    __syncthreads();
    if (gridDim.x > 1)
        c = gpurma_dev_coll_part(c, blockIdx.x, gridDim.x);
    const gpurma_dcoll__layout_t l = {0, 1, v, v + n, v + 2 * n, v + 3 * n};
    gpurma_status_t rc = gpurma_dcoll__run_ll16_v_bases(&c, &b, &g, recv, send, &l, max_count,
                                                        (gpurma_dtype_t)dtype, &early);
    if (rc == GPURMA_DCOLL__DECLINED)
        rc = GPURMA_ERR_INTERNAL; /* the host saw it fit */
    if (rc != GPURMA_SUCCESS)
        gpurma_k_coll_fail(c, " (ll16)", GPURMA_COLL_ALLTOALLV, rc);
}

template <int CAP>
static void fill_table(coll_v_table<CAP> *t, const size_t *const arrays[4], int n)
{
    for (int k = 0; k < 4; k++)
        for (int r = 0; r < n; r++)
            t->v[k * n + r] = arrays[k][r];
}

template <int CAP>
static int launch_v(void *stream, const gpurma_dev_coll_t *c, unsigned parts, void *recv,
                    const void *send, const size_t *const arrays[4], int n, size_t max_count,
                    int dtype, int algo)
{
    coll_v_table<CAP> t;
    fill_table(&t, arrays, n);
    return gpurma_gpu_launch("alltoallv kernel launch", gpurma_k_coll_v<CAP>, parts,
                             GPURMA_COLL_THREADS, stream, *c, recv, send, t, n, max_count, dtype,
                             algo);
}

static int launch_ll16_v(void *stream, const gpurma_dev_coll_t *c, unsigned parts, void *recv,
                         const void *send, const size_t *const arrays[4], int n,
                         size_t max_count, int dtype, const gpurma_dcoll__ll16_bases_t *ll16)
{
    coll_v_table<GPURMA_DCOLL_LL16_MAX_RANKS> t;
    fill_table(&t, arrays, n);
    const size_t es = gpurma_dev_dtype_size((gpurma_dtype_t)dtype);
    const gpurma_dcoll__layout_t l = {0, 1, t.v, t.v + n, t.v + 2 * n, t.v + 3 * n};
    gpurma_coll_ll16_first_t f;
    if (!gpurma_coll_ll16_first(c, parts, ll16, max_count, es, 1, &f) ||
        !gpurma_dcoll__v_blocks_fit(c, &l, max_count))
        return gpurma_set_error(GPURMA_ERR_INTERNAL,
                                "rank %d: LL16 alltoallv kernel: a call its slots, team or "
                                "blocks cannot take (%u parts, largest block %zu)",
                                c->rank, parts, max_count);
    const unsigned threads = gpurma_coll_ll16_threads(max_count, parts, es);
    const gpurma_dev_coll_t h = gpurma_coll_ll16_handle(c, parts, GPURMA_DCOLL__K_ALLTOALLV,
                                                        max_count, dtype, GPURMA_SUM, 0);
    return gpurma_gpu_launch("alltoallv kernel launch", gpurma_k_coll_ll16_v, parts, threads,
                             stream, h, *ll16, f, recv, send, t, n, max_count, dtype);
}

extern "C" int gpurma_coll_launch_v(void *stream, const gpurma_dev_coll_t *c, unsigned parts,
                                    void *recv, const void *send, const size_t *send_counts,
                                    const size_t *send_displs, const size_t *recv_counts,
                                    const size_t *recv_displs, size_t max_count, int dtype,
                                    int algo, const gpurma_dcoll__ll16_bases_t *ll16)
{
    const size_t *const arrays[4] = {send_counts, send_displs, recv_counts, recv_displs};
    const int n = c->size;
    const size_t es = gpurma_dev_dtype_size((gpurma_dtype_t)dtype);
    if (gpurma_coll_ll16_runs(c, parts, algo, max_count * es, ll16))
        return launch_ll16_v(stream, c, parts, recv, send, arrays, n, max_count, dtype, ll16);
    if (n <= 8)
        return launch_v<8>(stream, c, parts, recv, send, arrays, n, max_count, dtype, algo);
    if (n <= 64)
        return launch_v<64>(stream, c, parts, recv, send, arrays, n, max_count, dtype, algo);
    if (n <= GPURMA_COLL_V_MAX_RANKS)
        return launch_v<GPURMA_COLL_V_MAX_RANKS>(stream, c, parts, recv, send, arrays, n,
                                                 max_count, dtype, algo);
    return gpurma_set_error(GPURMA_ERR_INTERNAL, "alltoallv kernel: team of %d ranks", n);
}

extern "C" int gpurma_coll_preload_v(void)
{
    return gpurma_gpu_load("loading the alltoallv kernels", gpurma_k_coll_v<8>,
                           gpurma_k_coll_v<64>, gpurma_k_coll_v<GPURMA_COLL_V_MAX_RANKS>,
                           gpurma_k_coll_ll16_v);
}
