/*
 * gpurma_coll_bench_floors.cu - the two floors gpurma-coll-bench --gpu sets
 * beside gpurma's times, measured in the same run on the same GPUs through
 * a gpurma window's load/store mapping (the mem engine):
 *
 *   LL exchange  one kernel per op in which every rank stores one 16-byte
 *                LL packet (two 4-byte data words, each beside a copy of
 *                the flag, the flag being the op's number) into every
 *                peer's window and polls its own until every peer's packet
 *                of this op arrived: a collective's synchronization and
 *                smallest data movement in one step, which no small
 *                collective can beat. Timed as the collectives are (same
 *                op count, back to back on a stream or one CUDA graph).
 *   SM copy      bench_sm_copy (shared with gpurma-bench --gpu) from a
 *                local buffer into the next rank's window, every rank at
 *                once as in a collective: the bytes per second a rank can
 *                push over its links, the large-size floor.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "gpurma.h"
#include "gpurma_coll.h"
#include "gpurma_device.h"
#include "bench_sm_copy.cuh"
extern "C" {
#include "gpurma_coll_bench.h"
}

namespace {

/* Peers' packet areas travel as kernel parameters (no load before the
 * stores); more ranks than this have no LL floor. */
enum { MAX_RANKS = 64, PACKET_AREA = 4096 };
static_assert(2 * MAX_RANKS * 16 <= PACKET_AREA, "two parities of one packet per rank");

/* A peer whose packet has not come within this is taken for dead. */
constexpr uint64_t POLL_LIMIT_NS = 10ull * 1000 * 1000 * 1000;

enum { LL_OK = 0, LL_TIMEOUT = 1, LL_BAD_DATA = 2 };

struct LlArgs {
    uint64_t *area[MAX_RANKS]; /* every rank's packet area as mapped here (own included) */
    uint32_t *ops;             /* exchanges completed so far: the same on every rank     */
    int *status;               /* first LL_* failure                                    */
    int me, nranks;
};

__device__ __forceinline__ uint32_t ll_word(uint32_t op, int from)
{
    return op * 2654435761u ^ (uint32_t)from;
}

/* Thread p serves peer p. Packets are double-buffered by the op's parity:
 * a peer that saw this rank's packet of op k may finish op k and store its
 * packet of k + 1 before this rank has read that peer's packet of k, but
 * never k + 2 (that needs this rank's packet of k + 1, sent after the read).
 * __grid_constant__: the peer table is read in place, not copied to local
 * memory first for the indexing by thread. After a failure the later ops
 * of the same graph or stream give up after 1024 polls instead of each
 * waiting out the limit. */
__global__ void k_ll_exchange(const __grid_constant__ LlArgs a)
{
    const int p = threadIdx.x;
    const uint32_t op = *a.ops + 1; /* 0 is what a cleared area holds */
    const size_t parity = (size_t)(op & 1) * a.nranks;
    if (p < a.nranks && p != a.me) {
        gpurma_sh_store_packet16(a.area[p] + 2 * (parity + a.me), ll_word(op, a.me), op,
                                 ~ll_word(op, a.me), op);
        const uint64_t *in = a.area[a.me] + 2 * (parity + p);
        uint32_t v[4];
        uint64_t t0 = 0;
        bool came = false;
        for (uint32_t k = 1;; k++) {
            gpurma_sh_load_packet16(in, v);
            if (v[1] == op && v[3] == op) {
                came = true;
                break;
            }
            /* Off the fast path: the clock, and an earlier op's failure. */
            if (!(k & 1023)) {
                uint64_t now = gpurma_sh_now_ns();
                if (*(volatile int *)a.status)
                    break;
                if (!t0) {
                    t0 = now;
                } else if (now - t0 > POLL_LIMIT_NS) {
                    atomicCAS(a.status, LL_OK, LL_TIMEOUT);
                    break;
                }
            }
        }
        if (came && (v[0] != ll_word(op, p) || v[2] != ~ll_word(op, p)))
            atomicCAS(a.status, LL_OK, LL_BAD_DATA);
    }
    __syncthreads(); /* every thread has read *a.ops */
    if (threadIdx.x == 0)
        *a.ops = op;
}

struct Ctx {
    gpurma_team_t team;
    int me, nranks;
    cudaStream_t s;
};

#define CU(c, x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "gpurma-coll-bench: rank %d: floors: %s: %s\n", (c)->me, #x,      \
                    cudaGetErrorString(e_));                                                  \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

#define GR(c, x)                                                                              \
    do {                                                                                      \
        gpurma_status_t r_ = (x);                                                             \
        if (r_ != GPURMA_SUCCESS) {                                                           \
            fprintf(stderr, "gpurma-coll-bench: rank %d: floors: %s: %s (%s)\n", (c)->me, #x, \
                    gpurma_strerror(r_), gpurma_last_error_message(NULL));                    \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

/* Microseconds per exchange on this rank, timed as cbg_time times a
 * collective: iters launches back to back after 3 untimed ones, or one
 * graph of iters launches after one untimed replay. */
int time_ll(Ctx *c, const LlArgs &a, int iters, int graph, double *us)
{
    const unsigned threads = (unsigned)((a.nranks + 31) / 32 * 32);
    cudaEvent_t e0, e1;
    CU(c, cudaEventCreate(&e0));
    CU(c, cudaEventCreate(&e1));
    cudaGraphExec_t exec = nullptr;
    if (graph) {
        cudaGraph_t g;
        CU(c, cudaStreamBeginCapture(c->s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < iters; i++)
            k_ll_exchange<<<1, threads, 0, c->s>>>(a);
        CU(c, cudaStreamEndCapture(c->s, &g));
        CU(c, cudaGraphInstantiate(&exec, g, 0));
        CU(c, cudaGraphDestroy(g));
        CU(c, cudaGraphLaunch(exec, c->s));
    } else {
        for (int i = 0; i < 3; i++)
            k_ll_exchange<<<1, threads, 0, c->s>>>(a);
    }
    CU(c, cudaGetLastError());
    CU(c, cudaStreamSynchronize(c->s));
    GR(c, gpurma_barrier(c->team));
    CU(c, cudaEventRecord(e0, c->s));
    if (graph) {
        CU(c, cudaGraphLaunch(exec, c->s));
    } else {
        for (int i = 0; i < iters; i++)
            k_ll_exchange<<<1, threads, 0, c->s>>>(a);
    }
    CU(c, cudaEventRecord(e1, c->s));
    CU(c, cudaGetLastError());
    CU(c, cudaEventSynchronize(e1));
    float ms = 0;
    CU(c, cudaEventElapsedTime(&ms, e0, e1));
    *us = ms * 1e3 / iters;
    if (exec)
        CU(c, cudaGraphExecDestroy(exec));
    CU(c, cudaEventDestroy(e0));
    CU(c, cudaEventDestroy(e1));
    int st = 0;
    CU(c, cudaMemcpy(&st, a.status, sizeof(st), cudaMemcpyDeviceToHost));
    if (st) {
        fprintf(stderr, "gpurma-coll-bench: rank %d: LL exchange floor: %s\n", c->me,
                st == LL_TIMEOUT ? "a peer's packet did not come within 10 s"
                                 : "a packet's data did not match its flag");
        return 1;
    }
    return 0;
}

/* GB/s of this rank's bench_sm_copy of `bytes` into the next rank's
 * window, while every rank does the same: 2 untimed copies, then 10. */
int time_copy(Ctx *c, char *to, size_t bytes, double *gbs)
{
    int dev = 0, nsm = 0;
    CU(c, cudaGetDevice(&dev));
    CU(c, cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
    char *src = nullptr;
    CU(c, cudaMalloc(&src, bytes));
    CU(c, cudaMemsetAsync(src, 0x5A, bytes, c->s));
    unsigned blocks;
    size_t slice;
    bench_sm_copy_grid(bytes, nsm, &blocks, &slice);
    enum { ITERS = 10 };
    cudaEvent_t e0, e1;
    CU(c, cudaEventCreate(&e0));
    CU(c, cudaEventCreate(&e1));
    for (int i = 0; i < 2; i++)
        bench_sm_copy<<<blocks, BENCH_SM_COPY_THREADS, 0, c->s>>>(to, src, bytes, slice);
    CU(c, cudaGetLastError());
    CU(c, cudaStreamSynchronize(c->s));
    GR(c, gpurma_barrier(c->team));
    CU(c, cudaEventRecord(e0, c->s));
    for (int i = 0; i < ITERS; i++)
        bench_sm_copy<<<blocks, BENCH_SM_COPY_THREADS, 0, c->s>>>(to, src, bytes, slice);
    CU(c, cudaEventRecord(e1, c->s));
    CU(c, cudaGetLastError());
    CU(c, cudaEventSynchronize(e1));
    float ms = 0;
    CU(c, cudaEventElapsedTime(&ms, e0, e1));
    *gbs = (double)bytes * ITERS / (ms * 1e-3) / 1e9;
    CU(c, cudaEventDestroy(e0));
    CU(c, cudaEventDestroy(e1));
    CU(c, cudaFree(src));
    /* No rank frees the window (its peers' copy target) while one copies. */
    GR(c, gpurma_barrier(c->team));
    return 0;
}

/* The measurements on an allocated window; 77 when a peer is not mapped. */
int measure(Ctx *c, gpurma_win_t win, char *base, const cbg_floor_params_t *fp,
            cbg_floors_t *out)
{
    LlArgs a;
    memset(&a, 0, sizeof(a));
    a.me = c->me;
    a.nranks = c->nranks;
    int mapped = 1;
    for (int p = 0; p < c->nranks; p++) {
        a.area[p] = (uint64_t *)(p == c->me ? (void *)base : gpurma_win_peer_ptr(win, p));
        if (!a.area[p]) {
            if (mapped)
                snprintf(out->why, sizeof(out->why), "rank %d: rank %d's window is not mapped "
                         "(engine %s)", c->me, p, gpurma_engine_name(gpurma_win_engine(win, p)));
            mapped = 0;
        }
    }
    /* Every rank learns whether all can go on. */
    int all = 0;
    GR(c, gpurma_allreduce(c->team, &mapped, &all, 1, GPURMA_INT32, GPURMA_MIN, NULL));
    if (!all) {
        if (mapped)
            snprintf(out->why, sizeof(out->why), "a peer's window is not load/store mapped "
                     "at another rank");
        return 77;
    }
    CU(c, cudaMalloc(&a.ops, sizeof(uint32_t)));
    CU(c, cudaMalloc(&a.status, sizeof(int)));
    CU(c, cudaMemset(a.ops, 0, sizeof(uint32_t)));
    CU(c, cudaMemset(a.status, 0, sizeof(int)));
    CU(c, cudaMemset(base, 0, PACKET_AREA));
    CU(c, cudaDeviceSynchronize());
    GR(c, gpurma_barrier(c->team)); /* every area cleared before any packet */
    int rc = 0;
    for (int g = 0; g < 2 && !rc; g++)
        if ((fp->graph_modes >> g) & 1)
            rc = time_ll(c, a, fp->iters, g, &out->ll_us[g]);
    if (!rc)
        rc = time_copy(c, (char *)a.area[(c->me + 1) % c->nranks] + PACKET_AREA,
                       fp->copy_bytes, &out->copy_gbs);
    cudaFree(a.ops);
    cudaFree(a.status);
    return rc;
}

} // namespace

extern "C" int cbg_floors(gpurma_team_t team, const cbg_floor_params_t *fp, cbg_floors_t *out)
{
    Ctx c;
    c.team = team;
    c.me = gpurma_team_rank(team);
    c.nranks = gpurma_team_size(team);
    memset(out, 0, sizeof(*out));
    /* Decided alike on every rank: nothing collective has happened yet. */
    if (c.nranks < 2) {
        snprintf(out->why, sizeof(out->why), "one rank: nothing to exchange");
        return 77;
    }
    if (c.nranks > MAX_RANKS) {
        snprintf(out->why, sizeof(out->why), "more than %d ranks", (int)MAX_RANKS);
        return 77;
    }
    if (fp->iters < 1 || fp->copy_bytes < 16 || fp->copy_bytes % 16 ||
        fp->copy_bytes > SIZE_MAX - PACKET_AREA) {
        fprintf(stderr, "gpurma-coll-bench: floors: bad parameters\n");
        return 1;
    }
    CU(&c, cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    void *base = nullptr;
    gpurma_win_t win = nullptr;
    GR(&c, gpurma_win_allocate(team, PACKET_AREA + fp->copy_bytes, NULL, &base, &win));
    int rc = measure(&c, win, (char *)base, fp, out);
    /* The window is freed on every path that allocated it: rc is the same
     * on every rank except after a failure, which ends the job anyway. */
    if (rc != 1)
        GR(&c, gpurma_win_free(&win));
    cudaStreamDestroy(c.s);
    return rc;
}
