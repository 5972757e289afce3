/*
 * test_gpu_stream.cu - host-initiated operations on a CUDA stream
 * (gpurma_*_on_stream), across the job's processes; each rank sends to
 * rank+1 and receives from rank-1.
 *
 * Part 1, ordering: for every size class (1 B .. 4 MiB, odd offsets) and
 * three ways of sending (put_signal from device memory; put_signal from
 * pinned host memory; put + flush + quiet + signal from pageable or pinned
 * host memory), one rank's whole sequence -- poison its window, barrier,
 * fill the source, send, wait for the neighbour's signal, check the bytes
 * -- is enqueued on one stream with no host synchronisation between
 * cases. The checks are kernels on the same stream, so a wait that lets
 * the stream go on before the data is there, or a barrier that does not
 * hold, shows as wrong bytes. Then get_on_stream for every size, and
 * put_value_on_stream at 1, 2, 4 and 8 bytes with signal ADDs.
 * Part 2, graphs: poison, barrier (of a team whose first stream barrier is
 * made during the capture), put, put_signal, quiet, wait, signal reset and
 * the checks are captured into a CUDA graph, which is replayed 20 times
 * with new data each time, checked each time.
 * Part 3, bad input: every call with bad arguments returns the error and
 * enqueues nothing (checked by capturing the calls: the graph stays
 * empty), freed and host windows, a stream of another GPU.
 *
 * Without a GPU (the host backend), the argument checks and
 * GPURMA_ERR_UNSUPPORTED are tested, then the test exits 77.
 *
 * "test_gpu_stream timeout" (run by tests/gpu/run-device.sh with a short
 * GPURMA_TIMEOUT_MS): a stream wait that nobody satisfies must end with a
 * CUDA error on the stream, not hang, and the next gpurma error message
 * must say which wait timed out.
 */
#include <ctime>
#include <string>

#include "gpu_common.h"

gpurma_ctx_t g_ctx;
static int rank, nranks, peer, from;
static gpurma_team_t world;
static long failures;

/* A call expected to fail with `want`, with a message. */
#define EXPECT_RC(call, want)                                                                 \
    do {                                                                                      \
        int rc_ = (call);                                                                     \
        EXPECT(rc_ == (want), "%s returned %d (%s), expected %d (%s); message: %s", #call,    \
               rc_, gpurma_strerror((gpurma_status_t)rc_), (int)(want),                       \
               gpurma_strerror((gpurma_status_t)(want)), gpurma_last_error_message(g_ctx));   \
        if (rc_ != GPURMA_SUCCESS)                                                            \
            EXPECT(gpurma_last_error_message(g_ctx)[0] != '\0', "%s: empty message", #call);  \
    } while (0)

enum { SIG_DATA = 0, SIG_VAL = 1, SIG_GRAPH = 2, SIG_UNUSED = 3 };
static const size_t WIN = 9u << 20;
static const size_t MARGIN = 64;
static const size_t MAX_N = 4u << 20;

static uint64_t seed_of(int r, int c) { return 0x5157ull + (uint64_t)r * 1000003ull + (uint64_t)c; }

/* ------------------------------------------------------------ kernels */

/* fill_pattern with the seed read from device memory, so that a graph
 * replays it with the seed the host stored before the launch. */
__global__ void k_fill_seedp(uint8_t *dst, size_t n, const uint64_t *seedp, uint64_t shift,
                             int invert)
{
    uint64_t seed = *seedp;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint8_t b = pattern_byte(seed, (uint64_t)i - shift);
        dst[i] = invert ? (uint8_t)~b : b;
    }
}

/* Counts the bytes of [0, n) that differ from check_region's rule (data
 * pattern(seed, i - lo) in [lo, hi), its complement elsewhere) into
 * out[0], and the bytes checked into out[1] (so a check that did not run
 * cannot pass). seedp, when not NULL, overrides seed. */
__global__ void k_check(const uint8_t *p, size_t n, size_t lo, size_t hi, uint64_t seed,
                        const uint64_t *seedp, unsigned long long *out)
{
    if (seedp)
        seed = *seedp;
    unsigned long long bad = 0, seen = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint8_t want = pattern_byte(seed, (uint64_t)i - lo);
        if (i < lo || i >= hi)
            want = (uint8_t)~want;
        bad += p[i] != want;
        seen++;
    }
    atomicAdd(&out[0], bad);
    atomicAdd(&out[1], seen);
}

static void fill_seedp(void *dst, size_t n, const uint64_t *seedp, uint64_t shift, int invert,
                       cudaStream_t s)
{
    unsigned blocks = (unsigned)((n + 255) / 256 < 512 ? (n + 255) / 256 : 512);
    k_fill_seedp<<<blocks ? blocks : 1, 256, 0, s>>>((uint8_t *)dst, n, seedp, shift, invert);
    CK(cudaGetLastError());
}

static void check_on_stream(const void *p, size_t n, size_t lo, size_t hi, uint64_t seed,
                            const uint64_t *seedp, unsigned long long *out, cudaStream_t s)
{
    unsigned blocks = (unsigned)((n + 255) / 256 < 512 ? (n + 255) / 256 : 512);
    k_check<<<blocks ? blocks : 1, 256, 0, s>>>((const uint8_t *)p, n, lo, hi, seed, seedp, out);
    CK(cudaGetLastError());
}

static void host_pattern(uint8_t *dst, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = pattern_byte(seed, i);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------- part 1: ordering */

enum { V_PUT_SIGNAL_DEV, V_PUT_SIGNAL_PINNED, V_PUT_FLUSH_QUIET_SIGNAL, NVARIANTS };
static const char *const variant_names[] = {"put_signal(device src)", "put_signal(pinned src)",
                                            "put+flush+quiet+signal(host src)"};

struct CaseResult {
    unsigned long long bad, seen;
};

static void part1_ordering(gpurma_win_t win, char *wbase, cudaStream_t s)
{
    const int ncases = NVARIANTS * k_nsizes;
    CaseResult *res; /* per case: the put check; then per size: the get check */
    CK(cudaMalloc(&res, (size_t)(ncases + k_nsizes) * sizeof(CaseResult)));
    CK(cudaMemset(res, 0, (size_t)(ncases + k_nsizes) * sizeof(CaseResult)));
    char *dsrc, *dget;
    CK(cudaMalloc(&dsrc, MAX_N + 64));
    CK(cudaMalloc(&dget, MAX_N + 2 * MARGIN + 16));
    /* Host sources: one buffer per case, since nothing is synchronized
     * before the stream has used them all. Pageable only for small sizes:
     * CUDA stages those at once (large pageable copies block the caller
     * until the stream gets there). */
    std::vector<void *> pinned(ncases, nullptr), pageable(ncases, nullptr);
    for (int c = 0; c < ncases; c++) {
        int v = c / k_nsizes;
        size_t n = k_sizes[c % k_nsizes];
        if (v == V_PUT_SIGNAL_DEV)
            continue;
        if (v == V_PUT_SIGNAL_PINNED || n > 65536) {
            CK(cudaMallocHost(&pinned[c], n + 8));
            host_pattern((uint8_t *)pinned[c] + 1, n, seed_of(rank, c));
        } else {
            pageable[c] = malloc(n + 8);
            host_pattern((uint8_t *)pageable[c] + 5, n, seed_of(rank, c));
        }
    }

    double t0 = now_s();
    for (int c = 0; c < ncases; c++) {
        int v = c / k_nsizes;
        size_t n = k_sizes[c % k_nsizes];
        size_t off = MARGIN + (size_t)((7 * c + 3) % 61);
        size_t check_len = off + n + MARGIN;
        uint64_t seed_send = seed_of(rank, c), seed_recv = seed_of(from, c);
        /* 1. poison what the neighbour will write, then a barrier: nobody
         *    sends before every destination is poisoned. */
        fill(wbase, check_len, seed_recv, off, 1, s);
        GK(gpurma_barrier_on_stream(world, s));
        /* 2. send */
        const void *src;
        if (v == V_PUT_SIGNAL_DEV) {
            fill(dsrc + 3, n, seed_send, 0, 0, s);
            src = dsrc + 3;
        } else if (pinned[c]) {
            src = (char *)pinned[c] + 1;
        } else {
            src = (char *)pageable[c] + 5;
        }
        uint64_t val = 1000 + (uint64_t)c;
        if (v == V_PUT_FLUSH_QUIET_SIGNAL) {
            GK(gpurma_put_on_stream(win, peer, off, src, n, s));
            GK(gpurma_flush_on_stream(win, peer, s));
            GK(gpurma_flush_on_stream(win, GPURMA_ALL_PEERS, s));
            GK(gpurma_quiet_on_stream(win, s));
            GK(gpurma_signal_on_stream(win, peer, SIG_DATA, GPURMA_SIGNAL_SET, val, s));
        } else {
            GK(gpurma_put_signal_on_stream(win, peer, off, src, n, SIG_DATA, GPURMA_SIGNAL_SET,
                                           val, s));
        }
        /* 3. wait for the neighbour's data, check it on the stream */
        GK(gpurma_wait_until_on_stream(win, SIG_DATA, GPURMA_CMP_EQ, val, s));
        check_on_stream(wbase, check_len, off, off + n, seed_recv, NULL,
                        (unsigned long long *)&res[c], s);
    }
    /* get: each rank exposes a pattern, everyone reads its peer's. */
    for (int i = 0; i < k_nsizes; i++) {
        size_t n = k_sizes[i];
        size_t off = (size_t)((11 * i + 5) % 97);
        size_t m = MARGIN + (size_t)(i % 7);
        uint64_t mine = seed_of(rank, 500 + i), theirs = seed_of(peer, 500 + i);
        fill(wbase, off + n, mine, off, 0, s);
        fill(dget, n + 2 * m, theirs, m, 1, s);
        GK(gpurma_barrier_on_stream(world, s));
        GK(gpurma_get_on_stream(win, peer, dget + m, off, n, s));
        check_on_stream(dget, n + 2 * m, m, m + n, theirs, NULL,
                        (unsigned long long *)&res[ncases + i], s);
        GK(gpurma_barrier_on_stream(world, s)); /* the peer has read before we rewrite */
    }
    /* put_value at 1, 2, 4, 8 bytes, then a signal ADD per round. */
    const int vrounds = 8;
    uint64_t *vals_seen;
    CK(cudaMalloc(&vals_seen, (size_t)vrounds * 2 * sizeof(uint64_t)));
    CK(cudaMemsetAsync(wbase, 0xee, 64, s));
    GK(gpurma_signal_reset_on_stream(win, SIG_VAL, s));
    GK(gpurma_barrier_on_stream(world, s));
    for (int r = 0; r < vrounds; r++) {
        uint64_t base = 0x0102030405060708ull * (uint64_t)(rank + 1) + (uint64_t)r * 0x1111;
        GK(gpurma_put_value_on_stream(win, peer, 1, base & 0xff, 1, s));
        GK(gpurma_put_value_on_stream(win, peer, 2, base & 0xffff, 2, s));
        GK(gpurma_put_value_on_stream(win, peer, 4, base & 0xffffffff, 4, s));
        GK(gpurma_put_value_on_stream(win, peer, 8, base, 8, s));
        GK(gpurma_signal_on_stream(win, peer, SIG_VAL, GPURMA_SIGNAL_ADD, 1, s));
        GK(gpurma_wait_until_on_stream(win, SIG_VAL, GPURMA_CMP_GE, (uint64_t)r + 1, s));
        CK(cudaMemcpyAsync(vals_seen + 2 * r, wbase, 16, cudaMemcpyDeviceToDevice, s));
        GK(gpurma_barrier_on_stream(world, s)); /* read before the next round's values */
    }
    double t_enq = now_s() - t0;
    CK(cudaStreamSynchronize(s));
    double t_all = now_s() - t0;

    std::vector<CaseResult> h(ncases + k_nsizes);
    CK(cudaMemcpy(h.data(), res, h.size() * sizeof(CaseResult), cudaMemcpyDeviceToHost));
    for (int c = 0; c < ncases; c++) {
        size_t n = k_sizes[c % k_nsizes];
        size_t off = MARGIN + (size_t)((7 * c + 3) % 61);
        EXPECT(h[c].seen == off + n + MARGIN && h[c].bad == 0,
               "%s of %zu B at offset %zu: %llu of %llu bytes wrong (expected %zu checked)",
               variant_names[c / k_nsizes], n, off, h[c].bad, h[c].seen, off + n + MARGIN);
    }
    for (int i = 0; i < k_nsizes; i++) {
        size_t n = k_sizes[i], m = MARGIN + (size_t)(i % 7);
        EXPECT(h[ncases + i].seen == n + 2 * m && h[ncases + i].bad == 0,
               "get_on_stream of %zu B: %llu of %llu bytes wrong", n, h[ncases + i].bad,
               h[ncases + i].seen);
    }
    std::vector<uint64_t> vs((size_t)vrounds * 2);
    CK(cudaMemcpy(vs.data(), vals_seen, vs.size() * 8, cudaMemcpyDeviceToHost));
    for (int r = 0; r < vrounds; r++) {
        uint64_t base = 0x0102030405060708ull * (uint64_t)(from + 1) + (uint64_t)r * 0x1111;
        uint8_t b[16];
        memcpy(b, &vs[2 * r], 16);
        uint8_t want[16];
        memset(want, 0xee, sizeof(want));
        want[1] = (uint8_t)base;
        uint16_t w2 = (uint16_t)base;
        uint32_t w4 = (uint32_t)base;
        memcpy(want + 2, &w2, 2);
        memcpy(want + 4, &w4, 4);
        memcpy(want + 8, &base, 8);
        EXPECT(memcmp(b, want, 16) == 0, "put_value_on_stream round %d: window bytes differ", r);
    }
    uint64_t sv = 0;
    GK(gpurma_signal_read(win, SIG_VAL, &sv));
    EXPECT(sv == (uint64_t)vrounds, "signal ADDs on the stream: %llu, expected %d",
           (unsigned long long)sv, vrounds);
    if (rank == 0)
        printf("part 1: %d put cases, %d get cases, %d put_value rounds: enqueued in %.3f s, "
               "done in %.3f s\n",
               ncases, k_nsizes, vrounds, t_enq, t_all);
    for (void *p : pinned)
        if (p)
            CK(cudaFreeHost(p));
    for (void *p : pageable)
        free(p);
    CK(cudaFree(res));
    CK(cudaFree(dsrc));
    CK(cudaFree(dget));
    CK(cudaFree(vals_seen));
    GK(gpurma_barrier(world));
}

/* --------------------------------------------------------- part 2: graphs */

static void part2_graph(gpurma_win_t win, char *wbase, cudaStream_t s)
{
    const int replays = 20;
    const size_t na = (1u << 20) + 5, offa = 131; /* put: copy engine           */
    const size_t nb = 100, offb = offa + na + 2 * MARGIN + 7; /* put_signal: one kernel */
    const size_t lena = offa + na + MARGIN, lenb = nb + 2 * MARGIN;
    char *srca, *srcb; /* srcb is pinned host memory, read by the kernel */
    uint64_t *seeds;   /* [0] mine for a, [1] mine for b, [2] from's for a, [3] from's for b */
    unsigned long long *res;
    CK(cudaMalloc(&srca, na));
    CK(cudaMallocHost(&srcb, nb));
    CK(cudaMalloc(&seeds, 4 * sizeof(uint64_t)));
    CK(cudaMalloc(&res, 4 * sizeof(unsigned long long)));

    /* A fresh team: its first stream barrier is set up during the capture. */
    gpurma_team_t team;
    GK(gpurma_team_split(world, 0, rank, &team));
    EXPECT(gpurma_team_size(team) == nranks, "split team has %d ranks", gpurma_team_size(team));
    GK(gpurma_signal_reset(win, SIG_GRAPH));
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    fill_seedp(wbase, lena, seeds + 2, offa, 1, s);                  /* poison a */
    fill_seedp(wbase + offb - MARGIN, lenb, seeds + 3, MARGIN, 1, s); /* poison b */
    GK(gpurma_barrier_on_stream(team, s));
    GK(gpurma_put_on_stream(win, peer, offa, srca, na, s));
    GK(gpurma_put_signal_on_stream(win, peer, offb, srcb, nb, SIG_GRAPH, GPURMA_SIGNAL_SET, 1,
                                   s));
    GK(gpurma_quiet_on_stream(win, s));
    GK(gpurma_wait_until_on_stream(win, SIG_GRAPH, GPURMA_CMP_EQ, 1, s));
    GK(gpurma_signal_reset_on_stream(win, SIG_GRAPH, s));
    check_on_stream(wbase, lena, offa, offa + na, 0, seeds + 2, res, s);
    check_on_stream(wbase + offb - MARGIN, lenb, MARGIN, MARGIN + nb, 0, seeds + 3, res + 2, s);
    CK(cudaStreamEndCapture(s, &graph));
    size_t nodes = 0;
    CK(cudaGraphGetNodes(graph, NULL, &nodes));
    EXPECT(nodes >= 9, "captured graph has %zu nodes, expected at least 9", nodes);
    CK(cudaGraphInstantiate(&exec, graph, 0));

    int good = 0;
    for (int r = 0; r < replays; r++) {
        uint64_t hs[4] = {seed_of(rank, 2000 + r), seed_of(rank, 3000 + r),
                          seed_of(from, 2000 + r), seed_of(from, 3000 + r)};
        /* New data every replay: a graph that replayed stale data, or a
         * check that ran before the data came, fails here. */
        CK(cudaMemcpy(seeds, hs, sizeof(hs), cudaMemcpyHostToDevice));
        fill(srca, na, hs[0], 0, 0, s);
        host_pattern((uint8_t *)srcb, nb, hs[1]);
        CK(cudaMemsetAsync(res, 0, 4 * sizeof(unsigned long long), s));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        unsigned long long h[4];
        CK(cudaMemcpy(h, res, sizeof(h), cudaMemcpyDeviceToHost));
        EXPECT(h[0] == 0 && h[1] == lena, "replay %d: put of %zu B: %llu of %llu bytes wrong", r,
               na, h[0], h[1]);
        EXPECT(h[2] == 0 && h[3] == lenb, "replay %d: put_signal of %zu B: %llu of %llu wrong",
               r, nb, h[2], h[3]);
        uint64_t sv = 1;
        GK(gpurma_signal_read(win, SIG_GRAPH, &sv));
        EXPECT(sv == 0, "replay %d: signal not reset on the stream (%llu)", r,
               (unsigned long long)sv);
        good += h[0] == 0 && h[1] == lena && h[2] == 0 && h[3] == lenb && sv == 0;
        /* No host barrier between replays: the graph's own barrier keeps
         * the neighbour from writing before this rank's next poison. */
    }
    if (rank == 0)
        printf("part 2: graph of %zu nodes replayed %d times, %d checked good\n", nodes, replays,
               good);
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    GK(gpurma_barrier(world));
    GK(gpurma_team_free(&team));
    CK(cudaFree(srca));
    CK(cudaFreeHost(srcb));
    CK(cudaFree(seeds));
    CK(cudaFree(res));
}

/* ------------------------------------------------------ part 3: bad input */

/* Every call with a bad argument: the error, and (checked by the caller)
 * nothing enqueued. */
static void bad_calls(gpurma_win_t win, void *s, const void *src, void *dst)
{
    size_t size = gpurma_win_size(win, peer);
    uint32_t nsig = gpurma_win_num_signals(win);
    EXPECT_RC(gpurma_put_on_stream(win, nranks, 0, src, 8, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_on_stream(win, -1, 0, src, 8, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_on_stream(win, peer, size - 7, src, 8, s), GPURMA_ERR_OUT_OF_BOUNDS);
    EXPECT_RC(gpurma_put_on_stream(win, peer, size + 1, src, 0, s), GPURMA_ERR_OUT_OF_BOUNDS);
    EXPECT_RC(gpurma_put_on_stream(win, peer, 0, NULL, 8, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_on_stream(NULL, peer, 0, src, 8, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_get_on_stream(win, peer, dst, size, 1, s), GPURMA_ERR_OUT_OF_BOUNDS);
    EXPECT_RC(gpurma_get_on_stream(win, peer, NULL, 0, 4, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_get_on_stream(win, nranks + 3, dst, 0, 4, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_value_on_stream(win, peer, 0, 1, 3, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_value_on_stream(win, peer, 4, 1, 8, s), GPURMA_ERR_MISALIGNED);
    EXPECT_RC(gpurma_put_value_on_stream(win, peer, size - 4, 1, 8, s),
              GPURMA_ERR_OUT_OF_BOUNDS);
    EXPECT_RC(gpurma_put_value_on_stream(win, nranks, 0, 1, 8, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_signal_on_stream(win, peer, nsig, GPURMA_SIGNAL_SET, 1, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_signal_on_stream(win, peer, 0, (gpurma_signal_op_t)7, 1, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_signal_on_stream(win, nranks, 0, GPURMA_SIGNAL_SET, 1, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_signal_on_stream(win, peer, 0, src, 8, nsig, GPURMA_SIGNAL_SET, 1, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_signal_on_stream(win, peer, 0, src, 8, 0, (gpurma_signal_op_t)2, 1, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_put_signal_on_stream(win, peer, size, src, 1, 0, GPURMA_SIGNAL_SET, 1, s),
              GPURMA_ERR_OUT_OF_BOUNDS);
    EXPECT_RC(gpurma_put_signal_on_stream(win, peer, 0, NULL, 1, 0, GPURMA_SIGNAL_SET, 1, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_wait_until_on_stream(win, nsig, GPURMA_CMP_EQ, 0, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_wait_until_on_stream(win, 0, (gpurma_cmp_t)6, 0, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_wait_until_on_stream(NULL, 0, GPURMA_CMP_EQ, 0, s),
              GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_signal_reset_on_stream(win, nsig + 10, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_flush_on_stream(win, nranks, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_flush_on_stream(win, -7, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_quiet_on_stream(NULL, s), GPURMA_ERR_INVALID_ARG);
    EXPECT_RC(gpurma_barrier_on_stream(NULL, s), GPURMA_ERR_INVALID_ARG);
}

/* Every call with good arguments on a window (or team) that cannot run on
 * a stream: GPURMA_ERR_UNSUPPORTED. */
static void unsupported_calls(gpurma_win_t win, void *s, const void *src, void *dst,
                              bool team_too)
{
    const int U = GPURMA_ERR_UNSUPPORTED;
    EXPECT_RC(gpurma_put_on_stream(win, peer, 0, src, 8, s), U);
    EXPECT_RC(gpurma_get_on_stream(win, peer, dst, 0, 8, s), U);
    EXPECT_RC(gpurma_put_value_on_stream(win, peer, 8, 5, 8, s), U);
    EXPECT_RC(gpurma_signal_on_stream(win, peer, 0, GPURMA_SIGNAL_ADD, 1, s), U);
    EXPECT_RC(gpurma_put_signal_on_stream(win, peer, 0, src, 8, 0, GPURMA_SIGNAL_SET, 1, s), U);
    EXPECT_RC(gpurma_wait_until_on_stream(win, 0, GPURMA_CMP_GE, 1, s), U);
    EXPECT_RC(gpurma_signal_reset_on_stream(win, 0, s), U);
    EXPECT_RC(gpurma_flush_on_stream(win, GPURMA_ALL_PEERS, s), U);
    EXPECT_RC(gpurma_quiet_on_stream(win, s), U);
    if (team_too)
        EXPECT_RC(gpurma_barrier_on_stream(world, s), U);
}

static void freed_window_calls(void *s, const void *src)
{
    gpurma_win_t tmp;
    GK(gpurma_win_allocate(world, 4096, NULL, NULL, &tmp));
    gpurma_win_t stale = tmp;
    GK(gpurma_win_free(&tmp));
    EXPECT_RC(gpurma_put_on_stream(stale, peer, 0, src, 8, s), GPURMA_ERR_FREED);
    EXPECT_RC(gpurma_wait_until_on_stream(stale, 0, GPURMA_CMP_EQ, 0, s), GPURMA_ERR_FREED);
    EXPECT_RC(gpurma_quiet_on_stream(stale, s), GPURMA_ERR_FREED);
}

static void part3_bad_input(gpurma_win_t win, char *wbase, cudaStream_t s)
{
    const size_t len = 8192;
    char *src, *dst;
    CK(cudaMalloc(&src, 64));
    CK(cudaMalloc(&dst, 64));
    fill(src, 64, 1, 0, 0);
    fill(wbase, len, seed_of(rank, 700), 0, 1);
    CK(cudaDeviceSynchronize());
    GK(gpurma_signal_reset(win, SIG_UNUSED));
    GK(gpurma_barrier(world));

    /* Captured: a call that enqueued anything would add a node. */
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    bad_calls(win, s, src, dst);
    CK(cudaStreamEndCapture(s, &graph));
    size_t nodes = 1;
    CK(cudaGraphGetNodes(graph, NULL, &nodes));
    EXPECT(nodes == 0, "rejected stream calls enqueued %zu graph nodes", nodes);
    CK(cudaGraphDestroy(graph));
    /* And run directly on the stream. */
    bad_calls(win, s, src, dst);
    freed_window_calls(s, src);

    /* A host-memory window in a GPU context cannot run on a stream. */
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_MEM_KIND;
    p.mem_kind = GPURMA_MEM_HOST;
    gpurma_win_t hw;
    GK(gpurma_win_allocate(world, 4096, &p, NULL, &hw));
    unsupported_calls(hw, s, src, dst, false);
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&hw));

    /* A stream of another GPU than the window's. */
    int ngpu = 0, dev = 0;
    CK(cudaGetDeviceCount(&ngpu));
    CK(cudaGetDevice(&dev));
    if (ngpu > 1) {
        cudaStream_t other;
        CK(cudaSetDevice((dev + 1) % ngpu));
        CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
        CK(cudaSetDevice(dev));
        EXPECT_RC(gpurma_put_on_stream(win, peer, 0, src, 8, other), GPURMA_ERR_INVALID_ARG);
        EXPECT_RC(gpurma_wait_until_on_stream(win, 0, GPURMA_CMP_EQ, 0, other),
                  GPURMA_ERR_INVALID_ARG);
        int cur = -1;
        CK(cudaGetDevice(&cur));
        CK(cudaSetDevice((dev + 1) % ngpu));
        CK(cudaStreamDestroy(other));
        CK(cudaSetDevice(cur));
    }

    CK(cudaStreamSynchronize(s));
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    long bad = check_region("after bad stream calls", wbase, len, 0, 0, seed_of(rank, 700));
    EXPECT(bad == 0, "rejected stream calls wrote %ld bytes into the window", bad);
    uint64_t sv = 1;
    GK(gpurma_signal_read(win, SIG_UNUSED, &sv));
    EXPECT(sv == 0, "rejected stream calls changed a signal (%llu)", (unsigned long long)sv);
    CK(cudaFree(src));
    CK(cudaFree(dst));
    GK(gpurma_barrier(world));
    if (rank == 0)
        printf("part 3: bad input rejected, nothing enqueued\n");
}

/* -------------------------------------------------- without a GPU at all */

static int host_backend_run(void)
{
    GK(gpurma_init(NULL, &g_ctx));
    world = gpurma_team_world(g_ctx);
    rank = gpurma_rank(g_ctx);
    nranks = gpurma_size(g_ctx);
    peer = (rank + 1) % nranks;
    from = (rank + nranks - 1) % nranks;
    void *base = NULL;
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, 4096, NULL, &base, &win));
    memset(base, 0x5a, 4096);
    GK(gpurma_barrier(world));
    char src[64], dst[64];
    memset(src, 1, sizeof(src));
    memset(dst, 2, sizeof(dst));
    bad_calls(win, NULL, src, dst);
    unsupported_calls(win, NULL, src, dst, true);
    EXPECT(strstr(gpurma_last_error_message(g_ctx), "barrier_on_stream") != NULL,
           "message does not name the call: %s", gpurma_last_error_message(g_ctx));
    freed_window_calls(NULL, src);
    GK(gpurma_barrier(world));
    for (int i = 0; i < 4096; i++)
        if (((unsigned char *)base)[i] != 0x5a) {
            EXPECT(false, "rejected stream calls wrote byte %d of a host window", i);
            break;
        }
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&win));
    GK(gpurma_finalize(g_ctx));
    printf("rank %d: host backend: stream calls rejected (%ld failures); no GPU, the rest "
           "skipped\n",
           rank, failures);
    return failures ? 1 : 77;
}

/* ------------------------------------------------------------ timeout mode */

static int timeout_run(void)
{
    GK(gpurma_init(NULL, &g_ctx));
    rank = gpurma_rank(g_ctx);
    world = gpurma_team_world(g_ctx);
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, 4096, NULL, NULL, &win));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GK(gpurma_barrier(world));
    double t0 = now_s();
    GK(gpurma_wait_until_on_stream(win, 5, GPURMA_CMP_EQ, 424242, s));
    cudaError_t e = cudaStreamSynchronize(s);
    double dt = now_s() - t0;
    printf("rank %d: stream wait nobody satisfies: %s after %.2f s\n", rank, cudaGetErrorString(e),
           dt);
    EXPECT(e != cudaSuccess, "the wait completed although nobody signalled");
    /* The next library call meets the CUDA error and explains it. */
    uint64_t v = 0;
    int rc = gpurma_signal_read(win, 5, &v);
    const char *msg = gpurma_last_error_message(g_ctx);
    printf("rank %d: next call: %s: %s\n", rank, gpurma_strerror((gpurma_status_t)rc), msg);
    EXPECT(rc == GPURMA_ERR_GPU, "signal_read after the trap returned %d", rc);
    EXPECT(strstr(msg, "wait_until_on_stream(signal 5 == 424242)") != NULL,
           "the message does not say which wait timed out");
    (void)gpurma_finalize(g_ctx); /* the CUDA context is gone: errors expected */
    printf("rank %d: timeout mode %s\n", rank, failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* Stream waits spin in kernels that later kernels (of this process or
     * a peer's) release; with lazy loading, loading those would wait. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) {
        (void)cudaGetLastError();
        if (argc > 1)
            return 77;
        return host_backend_run();
    }
    if (argc > 1 && !strcmp(argv[1], "timeout"))
        return timeout_run();

    init_bounded();
    world = gpurma_team_world(g_ctx);
    rank = gpurma_rank(g_ctx);
    nranks = gpurma_size(g_ctx);
    peer = (rank + 1) % nranks;
    from = (rank + nranks - 1) % nranks;
    int dev = -1;
    CK(cudaGetDevice(&dev));
    printf("rank %d of %d on GPU %d\n", rank, nranks, dev);

    void *base = NULL;
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, WIN, NULL, &base, &win));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    double t0 = now_s();
    part1_ordering(win, (char *)base, s);
    double t1 = now_s();
    part3_bad_input(win, (char *)base, s);
    double t2 = now_s();
    part2_graph(win, (char *)base, s);
    printf("rank %d: ordering %.2f s, bad input %.2f s, graphs %.2f s\n", rank, t1 - t0, t2 - t1,
           now_s() - t2);
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&win));
    CK(cudaStreamDestroy(s));
    GK(gpurma_finalize(g_ctx));
    printf("rank %d: %s (%ld failures)\n", rank, failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
