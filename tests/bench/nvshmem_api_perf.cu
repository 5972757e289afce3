/*
 * nvshmem_api_perf.cu - the patterns of gpurma-perftest written on the
 * standard NVSHMEM 3.x API, so that one source measures NVSHMEM itself
 * (built with nvcc -rdc against libnvshmem) and gpurma's NVSHMEM layer
 * (built without -rdc against include/gpurma/nvshmem and libgpurma_nvshmem)
 * in the same run of tests/gpu/nvshmem-side-by-side.sh. Same options, same
 * "perf PATTERN SIZE CTAS VALUE UNIT" lines, same checks as gpurma-perftest
 * (tools/gpurma_perftest_common.cuh):
 *
 *   put_bw                 nvshmemx_putmem_nbi_block of each CTA's slice a
 *                          round, the grid meets, nvshmem_quiet at the end
 *   p_lat                  nvshmem_int_p of every element, nvshmem_quiet
 *   put_signal_rtt_SCOPE   nvshmem(x)_putmem_signal_nbi(_warp|_block) both
 *                          ways, nvshmem_signal_wait_until; round trip
 *   fetch_add_lat          nvshmem_uint64_atomic_fetch_add in a loop, results
 *                          dropped but the last (as shmem_atomic_latency)
 *   barrier_SCOPE          nvshmem_barrier_all / nvshmemx_barrier_all_warp
 *                          / _block in a collective launch
 *
 * Initialization is nvshmem_init(): NVSHMEM picks its bootstrap from its
 * environment (NVSHMEM_BOOTSTRAP=MPI with NVSHMEM_BOOTSTRAP_MPI_PLUGIN under
 * mpirun), gpurma's layer from gpurma's (PMIx under mpirun, or the uid
 * variables). The device is chosen after init from the node-local PE, as
 * NVSHMEM's own perftests do.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include <nvshmem.h>
#include <nvshmemx.h>

#include "gpurma_perftest_common.cuh"

namespace {

const char *const PROG = "nvshmem_api_perf";

struct Api {
    PerfOpts o;
    int rank, peer, nsm;
    size_t data_len;
    char *data;      /* symmetric: what the peer writes into              */
    char *src;       /* symmetric: the pseudo-random source               */
    uint64_t *sig;   /* symmetric: the ping-pong signal                   */
    uint64_t *word;  /* symmetric: the fetch-add word                     */
    int *status;     /* device: first failing status of a kernel          */
    unsigned long long *scratch; /* device: grid counter, check counters, last old */
    uint64_t seq, seed;
    cudaStream_t s;
    cudaEvent_t e0, e1;
};

#define CUDA_TRY(a, x) PERF_CUDA_TRY(PROG, (a)->rank, x)
#define TRY(x) PERF_TRY(x)

int kernel_status(Api *a, const char *what, size_t n)
{
    int st = 0;
    CUDA_TRY(a, cudaMemcpy(&st, a->status, sizeof(st), cudaMemcpyDeviceToHost));
    if (st) {
        fprintf(stderr, "%s: rank %d: %s of %zu B: a grid barrier spun too long\n", PROG,
                a->rank, what, n);
        return 1;
    }
    return 0;
}

template <typename F> int time_ms(Api *a, F launch, float *ms)
{
    return perf_time_ms(PROG, a->rank, a->s, a->e0, a->e1, launch, ms);
}

/* A kernel every PE must run at once, through the launch NVSHMEM provides
 * for that. */
int collective(Api *a, const void *fn, unsigned threads, void **args)
{
    int rc = nvshmemx_collective_launch(fn, dim3(1), dim3(threads), args, 0, a->s);
    if (rc != 0) {
        fprintf(stderr, "%s: rank %d: nvshmemx_collective_launch failed: %d\n", PROG, a->rank,
                rc);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- put_bw */

__global__ void k_put_bw(char *data, const char *src, int peer, size_t slice, unsigned rounds,
                         unsigned long long *arrivals, int *status)
{
    size_t off = blockIdx.x * slice;
    for (unsigned i = 0; i < rounds; i++) {
        if (slice)
            nvshmemx_putmem_nbi_block(data + off, src + off, slice, peer);
        perf_grid_meet(arrivals, i + 1, status);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        nvshmem_quiet();
}

int put_bw(Api *a)
{
    const PerfOpts &o = a->o;
    int per_sm = 0;
    CUDA_TRY(a, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_put_bw,
                                                              (int)o.bw_threads, 0));
    for (int ci = 0; ci < o.nctas; ci++) {
        long ctas = o.ctas[ci];
        if (ctas > (long)per_sm * a->nsm) {
            if (a->rank == 0)
                printf("# put_bw: %ld CTAs of %ld threads do not fit at once: skipped\n", ctas,
                       o.bw_threads);
            continue;
        }
        for (size_t n = o.bw_min; n <= o.bw_max; n *= 2) {
            size_t slice = n / 8 / (size_t)ctas * 8; /* NVSHMEM's slicing */
            size_t moved = slice * (size_t)ctas;
            if (a->rank == 1)
                CUDA_TRY(a, perf_fill(a->data, n, a->seed, 1, a->s));
            nvshmem_barrier_all();
            if (a->rank == 0) {
                float ms = 0;
                for (int timed = 0; timed < 2; timed++) {
                    unsigned rounds = (unsigned)(timed ? o.bw_iters : o.bw_warmup);
                    CUDA_TRY(a, cudaMemsetAsync(a->scratch, 0, sizeof(*a->scratch), a->s));
                    TRY(time_ms(a, [&] {
                        k_put_bw<<<(unsigned)ctas, (unsigned)o.bw_threads, 0, a->s>>>(
                            a->data, a->src, a->peer, slice, rounds, a->scratch, a->status);
                        return 0;
                    }, &ms));
                }
                TRY(kernel_status(a, "put_bw", n));
                perf_row(a->rank, "put_bw", n, ctas,
                         (double)n * (double)o.bw_iters / (ms * 1e-3) / 1e9, "GB/s");
            }
            nvshmem_barrier_all();
            if (a->rank == 1)
                TRY(perf_check(PROG, a->rank, "put_bw", a->data, moved, n, a->seed,
                               a->scratch + 1, a->s));
        }
    }
    return 0;
}

/* ----------------------------------------------------------------- p_lat */

__global__ void k_p_lat(int *data, const int *src, int peer, size_t nelems, unsigned rounds)
{
    for (unsigned i = 0; i < rounds; i++) {
        for (size_t j = threadIdx.x; j < nelems; j += blockDim.x)
            nvshmem_int_p(data + j, src[j], peer);
        __syncthreads();
        if (threadIdx.x == 0)
            nvshmem_quiet();
        __syncthreads();
    }
}

int p_lat(Api *a)
{
    const PerfOpts &o = a->o;
    for (size_t n = 8; n <= o.p_max; n *= 2) {
        size_t nelems = n / PERF_P_ELEM;
        if (a->rank == 1)
            CUDA_TRY(a, perf_fill(a->data, n, a->seed, 1, a->s));
        nvshmem_barrier_all();
        if (a->rank == 0) {
            float ms = 0;
            for (int timed = 0; timed < 2; timed++) {
                unsigned rounds = (unsigned)(timed ? o.lat_iters : o.lat_warmup);
                TRY(time_ms(a, [&] {
                    k_p_lat<<<1, (unsigned)o.p_threads, 0, a->s>>>(
                        (int *)a->data, (const int *)a->src, a->peer, nelems, rounds);
                    return 0;
                }, &ms));
            }
            perf_row(a->rank, "p_lat", n, 1, ms * 1e3 / (double)o.lat_iters, "us");
        }
        nvshmem_barrier_all();
        if (a->rank == 1)
            TRY(perf_check(PROG, a->rank, "p_lat", a->data, n, n, a->seed, a->scratch + 1, a->s));
    }
    return 0;
}

/* -------------------------------------------------------- put_signal_rtt */

enum Scope { SCOPE_THREAD = 0, SCOPE_WARP, SCOPE_BLOCK };

template <int SCOPE>
__device__ inline void ps_send(char *data, const char *src, size_t n, uint64_t *sig, uint64_t v,
                               int peer)
{
    if constexpr (SCOPE == SCOPE_THREAD)
        nvshmem_putmem_signal_nbi(data, src, n, sig, v, NVSHMEM_SIGNAL_SET, peer);
    else if constexpr (SCOPE == SCOPE_WARP)
        nvshmemx_putmem_signal_nbi_warp(data, src, n, sig, v, NVSHMEM_SIGNAL_SET, peer);
    else
        nvshmemx_putmem_signal_nbi_block(data, src, n, sig, v, NVSHMEM_SIGNAL_SET, peer);
}

/* One thread waits; the group meets before it replies. */
template <int SCOPE> __device__ inline void ps_recv(uint64_t *sig, uint64_t v)
{
    if (threadIdx.x == 0)
        nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, v);
    if constexpr (SCOPE == SCOPE_WARP)
        __syncwarp();
    else if constexpr (SCOPE == SCOPE_BLOCK)
        __syncthreads();
}

template <int SCOPE>
__global__ void k_put_signal(char *data, const char *src, size_t n, uint64_t *sig, int peer,
                             uint64_t base, unsigned rounds, int starter)
{
    for (unsigned i = 1; i <= rounds; i++) {
        if (!starter)
            ps_recv<SCOPE>(sig, base + i);
        ps_send<SCOPE>(data, src, n, sig, base + i, peer);
        if (starter)
            ps_recv<SCOPE>(sig, base + i);
    }
    if (threadIdx.x == 0)
        nvshmem_quiet();
}

int ps_run(Api *a, const void *k, unsigned threads, size_t n, unsigned rounds, float *ms)
{
    uint64_t base = a->seq;
    a->seq += rounds;
    int starter = a->rank == 0;
    void *args[] = {&a->data, &a->src, &n, &a->sig, &a->peer, &base, &rounds, &starter};
    nvshmem_barrier_all();
    return time_ms(a, [&] { return collective(a, k, threads, args); }, ms);
}

int put_signal_rtt(Api *a)
{
    const PerfOpts &o = a->o;
    static const struct {
        const void *k;
        const char *name;
    } scopes[] = {{(const void *)k_put_signal<SCOPE_THREAD>, "put_signal_rtt_thread"},
                  {(const void *)k_put_signal<SCOPE_WARP>, "put_signal_rtt_warp"},
                  {(const void *)k_put_signal<SCOPE_BLOCK>, "put_signal_rtt_block"}};
    const unsigned threads[] = {1, 32, (unsigned)o.block_threads};
    for (int sc = 0; sc < 3; sc++) {
        for (size_t n = 8; n <= o.ps_max; n *= 2) {
            CUDA_TRY(a, perf_fill(a->data, n, a->seed, 1, a->s));
            float ms = 0;
            TRY(ps_run(a, scopes[sc].k, threads[sc], n, (unsigned)o.lat_warmup, &ms));
            TRY(ps_run(a, scopes[sc].k, threads[sc], n, (unsigned)o.lat_iters, &ms));
            perf_row(a->rank, scopes[sc].name, n, 1, ms * 1e3 / (double)o.lat_iters, "us");
            nvshmem_barrier_all();
            TRY(perf_check(PROG, a->rank, scopes[sc].name, a->data, n, n, a->seed,
                           a->scratch + 1, a->s));
        }
    }
    return 0;
}

/* --------------------------------------------------------- fetch_add_lat */

__global__ void k_fetch_add(uint64_t *word, int peer, unsigned rounds,
                            unsigned long long *last_old)
{
    /* As shmem_atomic_latency: the results are dropped (so the atomics may
     * overlap), except the last one's, which the check reads. */
    for (unsigned i = 0; i + 1 < rounds; i++)
        (void)nvshmem_uint64_atomic_fetch_add(word, 1, peer);
    uint64_t old = rounds ? nvshmem_uint64_atomic_fetch_add(word, 1, peer) : 0;
    nvshmem_quiet();
    *last_old = old;
}

int fetch_add_lat(Api *a)
{
    const PerfOpts &o = a->o;
    const uint64_t start = a->seed | 1;
    if (a->rank == 1)
        CUDA_TRY(a, cudaMemcpy(a->word, &start, sizeof(start), cudaMemcpyHostToDevice));
    nvshmem_barrier_all();
    unsigned long long *last = a->scratch + 3;
    if (a->rank == 0) {
        float ms = 0;
        for (int timed = 0; timed < 2; timed++) {
            unsigned rounds = (unsigned)(timed ? o.lat_iters : o.lat_warmup);
            TRY(time_ms(a, [&] {
                k_fetch_add<<<1, 1, 0, a->s>>>(a->word, a->peer, rounds, last);
                return 0;
            }, &ms));
        }
        unsigned long long old = 0;
        CUDA_TRY(a, cudaMemcpy(&old, last, sizeof(old), cudaMemcpyDeviceToHost));
        uint64_t want = start + (uint64_t)o.lat_warmup + (uint64_t)o.lat_iters - 1;
        if (old != want) {
            fprintf(stderr, "%s: fetch_add: last value fetched %llu, expected %llu\n", PROG, old,
                    (unsigned long long)want);
            return 1;
        }
        perf_row(a->rank, "fetch_add_lat", 8, 1, ms * 1e3 / (double)o.lat_iters, "us");
    }
    nvshmem_barrier_all();
    if (a->rank == 1) {
        uint64_t got = 0, want = start + (uint64_t)o.lat_warmup + (uint64_t)o.lat_iters;
        CUDA_TRY(a, cudaMemcpy(&got, a->word, sizeof(got), cudaMemcpyDeviceToHost));
        if (got != want) {
            fprintf(stderr, "%s: fetch_add: the word holds %llu, expected %llu\n", PROG,
                    (unsigned long long)got, (unsigned long long)want);
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ barrier_lat */

template <int SCOPE> __global__ void k_barrier(unsigned rounds)
{
    for (unsigned i = 0; i < rounds; i++) {
        if constexpr (SCOPE == SCOPE_THREAD)
            nvshmem_barrier_all();
        else if constexpr (SCOPE == SCOPE_WARP)
            nvshmemx_barrier_all_warp();
        else
            nvshmemx_barrier_all_block();
    }
}

int barrier_lat(Api *a)
{
    const PerfOpts &o = a->o;
    static const struct {
        const void *k;
        const char *name;
    } scopes[] = {{(const void *)k_barrier<SCOPE_THREAD>, "barrier_thread"},
                  {(const void *)k_barrier<SCOPE_WARP>, "barrier_warp"},
                  {(const void *)k_barrier<SCOPE_BLOCK>, "barrier_block"}};
    const unsigned threads[] = {1, 32, (unsigned)o.block_threads};
    for (int sc = 0; sc < 3; sc++) {
        float ms = 0;
        for (int timed = 0; timed < 2; timed++) {
            unsigned rounds = (unsigned)(timed ? o.lat_iters : o.lat_warmup);
            void *args[] = {&rounds};
            nvshmem_barrier_all();
            TRY(time_ms(a, [&] { return collective(a, scopes[sc].k, threads[sc], args); }, &ms));
        }
        perf_row(a->rank, scopes[sc].name, 0, 1, ms * 1e3 / (double)o.lat_iters, "us");
    }
    return 0;
}

/* ------------------------------------------------------------------ setup */

int run(Api *a)
{
    const PerfOpts &o = a->o;
    size_t data = o.bw_max;
    if (o.p_max > data)
        data = o.p_max;
    if (o.ps_max > data)
        data = o.ps_max;
    a->data_len = (data + 255) / 256 * 256;
    a->data = (char *)nvshmem_malloc(a->data_len);
    a->src = (char *)nvshmem_malloc(a->data_len);
    a->sig = (uint64_t *)nvshmem_calloc(2, sizeof(uint64_t));
    if (!a->data || !a->src || !a->sig) {
        fprintf(stderr, "%s: rank %d: nvshmem_malloc of 2 x %zu B failed (NVSHMEM_SYMMETRIC_SIZE "
                        "must hold them)\n", PROG, a->rank, a->data_len);
        return 1;
    }
    a->word = a->sig + 1;
    CUDA_TRY(a, cudaMalloc(&a->status, sizeof(int)));
    CUDA_TRY(a, cudaMalloc(&a->scratch, 4 * sizeof(*a->scratch)));
    CUDA_TRY(a, cudaMemset(a->status, 0, sizeof(int)));
    CUDA_TRY(a, cudaStreamCreateWithFlags(&a->s, cudaStreamNonBlocking));
    CUDA_TRY(a, cudaEventCreate(&a->e0));
    CUDA_TRY(a, cudaEventCreate(&a->e1));
    /* The same source as gpurma-perftest's: every rank derives it. */
    a->seed = 0x5eed0000ull + (uint64_t)o.bw_max;
    CUDA_TRY(a, perf_fill(a->src, a->data_len, a->seed, 0, a->s));
    nvshmem_barrier_all();

    if (o.patterns & PERF_PAT_BW)
        TRY(put_bw(a));
    if (o.patterns & PERF_PAT_P)
        TRY(p_lat(a));
    if (o.patterns & PERF_PAT_PUT_SIGNAL)
        TRY(put_signal_rtt(a));
    if (o.patterns & PERF_PAT_FETCH_ADD)
        TRY(fetch_add_lat(a));
    if (o.patterns & PERF_PAT_BARRIER)
        TRY(barrier_lat(a));

    nvshmem_barrier_all();
    CUDA_TRY(a, cudaEventDestroy(a->e0));
    CUDA_TRY(a, cudaEventDestroy(a->e1));
    CUDA_TRY(a, cudaStreamDestroy(a->s));
    CUDA_TRY(a, cudaFree(a->status));
    CUDA_TRY(a, cudaFree(a->scratch));
    nvshmem_free(a->sig);
    nvshmem_free(a->src);
    nvshmem_free(a->data);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Api a;
    memset(&a, 0, sizeof(a));
    perf_default_opts(&a.o);
    int rc = perf_parse_args(PROG, "on the NVSHMEM API", argc, argv, &a.o);
    if (rc)
        return rc < 0 ? 0 : rc;
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) {
        printf("%s: no GPU here, nothing measured\n", PROG);
        return 77;
    }
    if (ngpu < 2 && !a.o.shared_gpu) {
        printf("%s: %d GPU visible, 2 needed (--shared-gpu: correctness only)\n", PROG, ngpu);
        return 77;
    }
    nvshmem_init();
    a.rank = nvshmem_my_pe();
    if (nvshmem_n_pes() != 2) {
        if (a.rank == 0)
            fprintf(stderr, "%s: needs exactly 2 PEs\n", PROG);
        nvshmem_finalize();
        return 77;
    }
    a.peer = 1 - a.rank;
    int dev = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % ngpu;
    if (cudaSetDevice(dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&a.nsm, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        fprintf(stderr, "%s: rank %d: cannot use GPU %d\n", PROG, a.rank, dev);
        nvshmem_finalize();
        return 1;
    }
    if (a.rank == 0) {
#ifdef NVSHMEM_VENDOR_MAJOR_VERSION /* NVSHMEM itself */
        printf("# %s: NVSHMEM %d.%d.%d, 2 PEs, GPU %d of %d, %d SMs\n", PROG,
               NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
               NVSHMEM_VENDOR_PATCH_VERSION, dev, ngpu, a.nsm);
#else
        printf("# %s: NVSHMEM API, 2 PEs, GPU %d of %d, %d SMs\n", PROG, dev, ngpu, a.nsm);
#endif
        if (ngpu < 2)
            printf("# SHARED GPU: both PEs on one GPU; correctness only, the figures are not "
                   "peer figures\n");
    }
    rc = run(&a);
    fflush(stdout);
    nvshmem_finalize();
    return rc;
}
