/*
 * test_gpu_rma.cu - every device operation on device windows, across the
 * job's processes (run with 2 or more ranks; one GPU each, or sharing).
 *
 * Part 1, the matrix: put, get, put_signal, 8- and 16-byte LL packets, each
 * at thread, warp and block scope, for every size class with odd offsets.
 * Each rank sends to rank+1 and receives from rank-1. Data is seeded
 * random, destinations are poisoned with its complement, and every byte of
 * the destination region and its surroundings is checked.
 * Part 2: put_value, atomics and signal ADD under contention, counters.
 * Part 3: host-initiated operations on device windows, bad input from the
 * host API (errors, nothing written), win_create on a cudaMalloc buffer at
 * an odd offset, and a host-memory window in a GPU context.
 */
#include <algorithm>
#include <ctime>

#include "gpu_common.h"

gpurma_ctx_t g_ctx;
static int rank, nranks, peer, from;
static gpurma_team_t world;
static long failures;

enum { OP_PUT, OP_GET, OP_PUT_SIGNAL, OP_PACKETS8, OP_PACKETS16, NOPS };
enum { SC_THREAD, SC_WARP, SC_BLOCK, NSCOPES };
static const char *const op_names[] = {"put", "get", "put_signal", "packets8", "packets16"};
static const char *const scope_names[] = {"thread", "warp", "block"};

static const size_t WIN = 9u << 20; /* 4 MiB of payload as packets is 8 MiB */
static const size_t MARGIN = 256;

/* Runs call at the scope: one thread, warp 0, or the whole block. */
#define SCOPED(scope, thread_call, warp_call, block_call)                                     \
    do {                                                                                      \
        if ((scope) == SC_THREAD) {                                                           \
            if (threadIdx.x == 0)                                                             \
                rc = thread_call;                                                             \
        } else if ((scope) == SC_WARP) {                                                      \
            if (threadIdx.x < 32)                                                             \
                rc = warp_call;                                                               \
        } else {                                                                              \
            rc = block_call;                                                                  \
        }                                                                                     \
    } while (0)

__global__ void k_origin(gpurma_dev_win_t w, int op, int scope, int to, size_t off,
                         const char *src, size_t n, char *dst, uint32_t sig, uint64_t val,
                         int *status)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    switch (op) {
    case OP_PUT:
        SCOPED(scope, gpurma_dev_put(w, to, off, src, n), gpurma_dev_put_warp(w, to, off, src, n),
               gpurma_dev_put_block(w, to, off, src, n));
        break;
    case OP_GET:
        SCOPED(scope, gpurma_dev_get(w, to, dst, off, n), gpurma_dev_get_warp(w, to, dst, off, n),
               gpurma_dev_get_block(w, to, dst, off, n));
        break;
    case OP_PUT_SIGNAL:
        SCOPED(scope, gpurma_dev_put_signal(w, to, off, src, n, sig, GPURMA_SIGNAL_SET, val),
               gpurma_dev_put_signal_warp(w, to, off, src, n, sig, GPURMA_SIGNAL_SET, val),
               gpurma_dev_put_signal_block(w, to, off, src, n, sig, GPURMA_SIGNAL_SET, val));
        break;
    case OP_PACKETS8:
        SCOPED(scope, gpurma_dev_put_packets(w, to, off, src, n, (uint32_t)val),
               gpurma_dev_put_packets_warp(w, to, off, src, n, (uint32_t)val),
               gpurma_dev_put_packets_block(w, to, off, src, n, (uint32_t)val));
        break;
    case OP_PACKETS16:
        SCOPED(scope, gpurma_dev_put_packets16(w, to, off, src, n, (uint32_t)val),
               gpurma_dev_put_packets16_warp(w, to, off, src, n, (uint32_t)val),
               gpurma_dev_put_packets16_block(w, to, off, src, n, (uint32_t)val));
        break;
    }
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

__global__ void k_target(gpurma_dev_win_t w, int op, int scope, size_t off, char *dst, size_t n,
                         uint32_t sig, uint64_t val, int *status)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (op == OP_PUT_SIGNAL) {
        if (threadIdx.x == 0)
            rc = gpurma_dev_wait_until(w, sig, GPURMA_CMP_EQ, val);
    } else if (op == OP_PACKETS8) {
        SCOPED(scope, gpurma_dev_read_packets(w, off, dst, n, (uint32_t)val),
               gpurma_dev_read_packets_warp(w, off, dst, n, (uint32_t)val),
               gpurma_dev_read_packets_block(w, off, dst, n, (uint32_t)val));
    } else if (op == OP_PACKETS16) {
        SCOPED(scope, gpurma_dev_read_packets16(w, off, dst, n, (uint32_t)val),
               gpurma_dev_read_packets16_warp(w, off, dst, n, (uint32_t)val),
               gpurma_dev_read_packets16_block(w, off, dst, n, (uint32_t)val));
    }
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t case_seed(int c, int r) { return 0x1234567ull + (uint64_t)c * 1000003ull + (uint64_t)r; }

/* One-thread loads are round trips: keep slow scopes to sizes they finish
 * quickly (the block scope does every size). */
static bool scope_covers(int op, int scope, size_t n)
{
    if (scope == SC_BLOCK)
        return true;
    size_t limit = scope == SC_THREAD ? (op == OP_GET ? 4103 : 65539) : (1u << 20) + 5;
    return n <= limit;
}

static void matrix(gpurma_win_t win, gpurma_dev_win_t dw, char *wbase, char *src, char *recv,
                   int *status, cudaStream_t s_origin, cudaStream_t s_target)
{
    int c = 0, ncases = 0;
    for (int op = 0; op < NOPS; op++)
        for (int scope = 0; scope < NSCOPES; scope++)
            for (int i = 0; i < k_nsizes; i++, c++) {
                size_t n = k_sizes[i];
                if (!scope_covers(op, scope, n))
                    continue;
                bool packets = op == OP_PACKETS8 || op == OP_PACKETS16;
                size_t off = packets ? 16 * (size_t)(i % 5) : (size_t)((7 * i + 3 * scope) % 61);
                size_t soff = (size_t)((5 * i + 1) % 29);
                size_t m = MARGIN + (size_t)(i % 7); /* odd alignment of get/read dst */
                uint32_t sig = (uint32_t)(c % 64);
                uint64_t val = 0x100 + (uint64_t)c;
                uint64_t seed_send = case_seed(c, rank), seed_recv = case_seed(c, from);
                uint64_t seed_peer = case_seed(c, peer);
                size_t span = packets ? (op == OP_PACKETS8 ? gpurma_dev_packet8_bytes(n)
                                                           : gpurma_dev_packet16_bytes(n))
                                      : n;
                size_t check_len = std::min(WIN, off + span + MARGIN);

                /* Set up: poison the destinations, seed the sources. */
                if (op == OP_GET)
                    fill(wbase, WIN, case_seed(c, rank), off, 0); /* what the peer reads */
                else
                    fill(wbase, check_len, seed_recv, off, 1);
                fill(recv, n + 2 * m, op == OP_GET ? seed_peer : seed_recv, m, 1);
                fill(src + soff, n, seed_send, 0, 0);
                CK(cudaMemset(status, 0, 2 * sizeof(int)));
                GK(gpurma_signal_reset(win, sig));
                CK(cudaDeviceSynchronize());
                GK(gpurma_barrier(world));

                if (op == OP_PUT_SIGNAL || packets)
                    k_target<<<1, 128, 0, s_target>>>(dw, op, scope, off, recv + m, n, sig, val,
                                                      status + 1);
                k_origin<<<1, 128, 0, s_origin>>>(dw, op, scope, peer, off,
                                                  src + soff, n, recv + m, sig, val, status);
                CK(cudaGetLastError());
                CK(cudaStreamSynchronize(s_origin));
                CK(cudaStreamSynchronize(s_target));
                GK(gpurma_barrier(world)); /* every origin's kernel has completed */

                int st[2];
                CK(cudaMemcpy(st, status, sizeof(st), cudaMemcpyDeviceToHost));
                char what[96];
                snprintf(what, sizeof(what), "%s/%s %zu B at offset %zu", op_names[op],
                         scope_names[scope], n, off);
                EXPECT(st[0] == 0 && st[1] == 0, "%s: status origin %d, target %d", what, st[0],
                       st[1]);
                long bad;
                if (op == OP_PUT || op == OP_PUT_SIGNAL)
                    bad = check_region(what, wbase, check_len, off, off + n, seed_recv);
                else
                    bad = check_region(what, recv, n + 2 * m, m, m + n,
                                       op == OP_GET ? seed_peer : seed_recv);
                EXPECT(bad == 0, "%s: %ld bytes wrong", what, bad);
                ncases++;
                GK(gpurma_barrier(world));
            }
    if (rank == 0)
        printf("matrix: %d cases (ops x scopes x sizes) checked\n", ncases);
}

/* ---------------------------------------------------------------- part 2 */

enum { CONTENDED_THREADS = 4 * 256, CAS_THREADS = CONTENDED_THREADS / 8 };

__global__ void k_contend(gpurma_dev_win_t w, uint64_t *olds, int *status)
{
    unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    gpurma_status_t rc;
    uint64_t old = 0;
    rc = gpurma_dev_atomic_fetch_add(w, 0, 0, 1, &old);
    olds[id] = old;
    /* An increment by compare-and-swap, retried until it wins; one thread
     * in 8 (every thread would make the retries quadratic in 2048). */
    uint64_t seen = 0, prev;
    for (; (threadIdx.x & 7) == 0;) {
        if (gpurma_dev_atomic_compare_swap(w, 0, 8, seen, seen + 1, &prev) != GPURMA_SUCCESS) {
            rc = GPURMA_ERR_INTERNAL;
            break;
        }
        if (prev == seen)
            break;
        seen = prev;
    }
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev_atomic_swap(w, 0, 16, 1000000 + id, &old);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev_signal(w, 0, 63, GPURMA_SIGNAL_ADD, 1);
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

__global__ void k_wait_signal(gpurma_dev_win_t w, uint32_t sig, uint64_t v, int *status)
{
    gpurma_status_t rc = gpurma_dev_wait_until(w, sig, GPURMA_CMP_GE, v);
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

__global__ void k_values_counters(gpurma_dev_win_t w, int to, const char *src, uint64_t base,
                                  int *status, uint64_t *counter_out)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    unsigned t = threadIdx.x; /* 256 threads */
    /* put_value at 1, 2, 4, 8 bytes into [4096, 4096 + 64*15) */
    size_t at = 4096 + (size_t)t * 16;
    if (t < 64) {
        size_t sz = (size_t)1 << (t % 4);
        rc = gpurma_dev_put_value(w, to, at, base + t * 0x0101010101ull, sz);
    }
    /* counted puts of 8 bytes each */
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev_put_counted(w, to, 8192 + (size_t)t * 8, src + t * 8, 8, 1);
    __syncthreads();
    if (t == 0 && rc == GPURMA_SUCCESS) {
        rc = gpurma_dev_counter_wait(w, 1, 256);
        *counter_out = gpurma_dev_counter_read(w, 1);
    }
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

static void part2(gpurma_win_t win, gpurma_dev_win_t dw, char *wbase, char *src, int *status)
{
    uint64_t *olds, *counter_out;
    CK(cudaMalloc(&olds, CONTENDED_THREADS * sizeof(uint64_t)));
    CK(cudaMalloc(&counter_out, sizeof(uint64_t)));
    CK(cudaMemset(wbase, 0, 64));
    CK(cudaMemset(status, 0, 2 * sizeof(int)));
    GK(gpurma_signal_reset(win, 63));
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint64_t total = (uint64_t)nranks * CONTENDED_THREADS;
    if (rank == 0) /* rank 0 waits in a kernel for every rank's signal ADDs */
        k_wait_signal<<<1, 1, 0, s>>>(dw, 63, total, status + 1);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    k_contend<<<4, 256>>>(dw, olds, status);
    CK(cudaEventRecord(e1));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("rank %d: contended atomics kernel %.3f ms\n", rank, ms);
    GK(gpurma_barrier(world));
    int st[2];
    CK(cudaMemcpy(st, status, sizeof(st), cudaMemcpyDeviceToHost));
    EXPECT(st[0] == 0 && st[1] == 0, "contended atomics: status %d / %d", st[0], st[1]);
    /* Every rank reads rank 0's words through the host API. */
    uint64_t words[3];
    GK(gpurma_get(win, 0, words, 0, sizeof(words)));
    EXPECT(words[0] == total, "fetch_add total %llu, expected %llu",
           (unsigned long long)words[0], (unsigned long long)total);
    EXPECT(words[1] == (uint64_t)nranks * CAS_THREADS, "CAS increments %llu, expected %llu",
           (unsigned long long)words[1], (unsigned long long)nranks * CAS_THREADS);
    EXPECT(words[2] >= 1000000 && words[2] < 1000000 + CONTENDED_THREADS,
           "swap left %llu, not a value any thread swapped in", (unsigned long long)words[2]);
    if (rank == 0) {
        uint64_t v = 0;
        GK(gpurma_signal_read(win, 63, &v));
        EXPECT(v == total, "signal ADD total %llu, expected %llu", (unsigned long long)v,
               (unsigned long long)total);
    }
    std::vector<uint64_t> h(CONTENDED_THREADS);
    CK(cudaMemcpy(h.data(), olds, h.size() * 8, cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end());
    bool distinct = true;
    for (size_t i = 0; i < h.size(); i++)
        distinct &= h[i] < total && (i == 0 || h[i] != h[i - 1]);
    EXPECT(distinct, "fetch_add returned repeated or out-of-range old values");
    GK(gpurma_barrier(world));

    /* put_value and counters, into the peer at [4096, 10240). */
    fill(wbase + 4096, 8192, case_seed(99, from), 0, 1);
    fill(src, 2048, case_seed(98, rank), 0, 0);
    CK(cudaMemset(status, 0, sizeof(int)));
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    k_values_counters<<<1, 256>>>(dw, peer, src, 0x11ull * (rank + 1), status, counter_out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    uint64_t cnt = 0;
    CK(cudaMemcpy(st, status, sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&cnt, counter_out, 8, cudaMemcpyDeviceToHost));
    EXPECT(st[0] == 0, "put_value/counters: status %d", st[0]);
    EXPECT(cnt == 256, "device counter reads %llu after 256 counted puts", (unsigned long long)cnt);
    std::vector<uint8_t> got(8192);
    CK(cudaMemcpy(got.data(), wbase + 4096, 8192, cudaMemcpyDeviceToHost));
    std::vector<uint8_t> srcbytes(2048);
    for (size_t i = 0; i < 2048; i++)
        srcbytes[i] = pattern_byte(case_seed(98, from), i);
    long bad = 0;
    for (unsigned t = 0; t < 64; t++) {
        size_t sz = (size_t)1 << (t % 4);
        uint64_t v = 0x11ull * (from + 1) + t * 0x0101010101ull;
        for (size_t b = 0; b < 16; b++) {
            uint8_t want = b < sz ? (uint8_t)(v >> (8 * b))
                                  : (uint8_t)~pattern_byte(case_seed(99, from), t * 16 + b);
            bad += got[t * 16 + b] != want;
        }
    }
    for (size_t i = 0; i < 2048; i++)
        bad += got[4096 + i] != srcbytes[i];
    EXPECT(bad == 0, "put_value / counted put data: %ld bytes wrong", bad);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(olds));
    CK(cudaFree(counter_out));
    GK(gpurma_barrier(world));
}

/* ---------------------------------------------------------------- part 3 */

static void part3_host_ops(gpurma_win_t win, char *wbase)
{
    /* Host put (pageable source, odd size and offset) + put_signal + wait. */
    const size_t n = 100003, off = 7;
    std::vector<uint8_t> h(n);
    for (size_t i = 0; i < n; i++)
        h[i] = pattern_byte(case_seed(200, rank), i);
    fill(wbase, off + n + MARGIN, case_seed(200, from), off, 1);
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    GK(gpurma_put(win, peer, off, h.data(), n / 2));
    GK(gpurma_put_signal(win, peer, off + n / 2, h.data() + n / 2, n - n / 2, 7,
                         GPURMA_SIGNAL_SET, 4242));
    GK(gpurma_quiet(win));
    GK(gpurma_wait_until(win, 7, GPURMA_CMP_EQ, 4242));
    long bad = check_region("host put_signal", wbase, off + n + MARGIN, off, off + n,
                            case_seed(200, from));
    EXPECT(bad == 0, "host put/put_signal into a device window: %ld bytes wrong", bad);
    GK(gpurma_barrier(world));

    /* Host get from the peer's device window into pageable memory. */
    std::vector<uint8_t> g(n + 2, 0xee);
    GK(gpurma_get(win, peer, g.data() + 1, off, n));
    long gbad = 0;
    for (size_t i = 0; i < n; i++)
        gbad += g[1 + i] != pattern_byte(case_seed(200, rank), i); /* what we put there */
    gbad += g[0] != 0xee || g[n + 1] != 0xee;
    EXPECT(gbad == 0, "host get from a device window: %ld bytes wrong", gbad);

    /* Host atomics, put_value and signal ADD on the peer's device window. */
    GK(gpurma_barrier(world));
    uint64_t old = 1;
    GK(gpurma_put_value(win, peer, 64, 40, 8));
    GK(gpurma_atomic_fetch_add(win, peer, 64, 2, &old));
    EXPECT(old == 40, "host fetch_add on device memory returned %llu, expected 40",
           (unsigned long long)old);
    GK(gpurma_atomic_compare_swap(win, peer, 64, 42, 7, &old));
    EXPECT(old == 42, "host compare_swap returned %llu, expected 42", (unsigned long long)old);
    GK(gpurma_atomic_swap(win, peer, 64, 9, &old));
    EXPECT(old == 7, "host swap returned %llu, expected 7", (unsigned long long)old);
    GK(gpurma_signal_reset(win, 8));
    GK(gpurma_barrier(world));
    GK(gpurma_signal(win, peer, 8, GPURMA_SIGNAL_ADD, 5));
    GK(gpurma_signal(win, peer, 8, GPURMA_SIGNAL_ADD, 6));
    GK(gpurma_wait_until(win, 8, GPURMA_CMP_GE, 11));
    uint64_t v = 0;
    GK(gpurma_signal_read(win, 8, &v));
    EXPECT(v == 11, "host signal ADD 5+6 on a device slot gave %llu", (unsigned long long)v);
    GK(gpurma_barrier(world));
    uint64_t w64 = 0;
    CK(cudaMemcpy(&w64, wbase + 64, 8, cudaMemcpyDeviceToHost));
    EXPECT(w64 == 9, "word after host atomics is %llu, expected 9", (unsigned long long)w64);

    /* Counted host put bumps the host-side counter once it is locally
     * complete (at once on the mem engine, when the proxy has copied on
     * the port engine). */
    uint64_t c0 = 0, c1 = 0;
    GK(gpurma_counter_read(win, 2, &c0));
    GK(gpurma_put_counted(win, peer, 128, h.data(), 8, 2));
    GK(gpurma_counter_wait(win, 2, c0 + 1));
    GK(gpurma_counter_read(win, 2, &c1));
    EXPECT(c1 == c0 + 1, "host counter %llu -> %llu after a counted put", (unsigned long long)c0,
           (unsigned long long)c1);
    GK(gpurma_barrier(world));
}

static void part3_bad_input(gpurma_win_t win, char *wbase)
{
    const size_t len = 4096;
    fill(wbase, len, case_seed(300, rank), 0, 1);
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    uint64_t x = 0, buf[4] = {1, 2, 3, 4};
    size_t size = gpurma_win_size(win, peer);
    EXPECT(size == WIN, "win_size(peer) is %zu", size);
    EXPECT(gpurma_put(win, peer, size - 8, buf, 16) == GPURMA_ERR_OUT_OF_BOUNDS,
           "put past the end of a device window is not OUT_OF_BOUNDS");
    EXPECT(gpurma_get(win, peer, buf, size, 1) == GPURMA_ERR_OUT_OF_BOUNDS,
           "get past the end is not OUT_OF_BOUNDS");
    EXPECT(gpurma_put(win, nranks, 0, buf, 8) == GPURMA_ERR_INVALID_ARG, "bad peer accepted");
    EXPECT(gpurma_put(win, peer, 0, NULL, 8) == GPURMA_ERR_INVALID_ARG, "NULL source accepted");
    EXPECT(gpurma_signal(win, peer, 64, GPURMA_SIGNAL_SET, 1) == GPURMA_ERR_INVALID_ARG,
           "signal 64 of 64 accepted");
    EXPECT(gpurma_put_signal(win, peer, 0, buf, 8, 0, (gpurma_signal_op_t)9, 1) ==
               GPURMA_ERR_INVALID_ARG,
           "unknown signal op accepted");
    EXPECT(gpurma_atomic_fetch_add(win, peer, 4, 1, &x) == GPURMA_ERR_MISALIGNED,
           "misaligned atomic accepted");
    EXPECT(gpurma_put_value(win, peer, 0, 1, 3) == GPURMA_ERR_INVALID_ARG, "3-byte value accepted");
    EXPECT(gpurma_wait_until(win, 0, (gpurma_cmp_t)17, 0) == GPURMA_ERR_INVALID_ARG,
           "unknown compare accepted");
    EXPECT(gpurma_wait_until(win, 99, GPURMA_CMP_EQ, 0) == GPURMA_ERR_INVALID_ARG,
           "wait on signal 99 accepted");
    EXPECT(gpurma_counter_wait(win, 999, 0) == GPURMA_ERR_INVALID_ARG, "counter 999 accepted");
    GK(gpurma_barrier(world));
    long bad = check_region("after bad input", wbase, len, 0, 0, case_seed(300, rank));
    EXPECT(bad == 0, "rejected host calls wrote %ld bytes into the device window", bad);
    GK(gpurma_barrier(world));
}

static void part3_create_and_host_window(void)
{
    /* win_create on a user's cudaMalloc buffer, at an odd offset in it. */
    const size_t wsize = 1u << 20, inner = 4096 + 13, n = 65539, off = 5;
    char *buf;
    CK(cudaMalloc(&buf, wsize + 8192));
    char *base = buf + inner;
    gpurma_win_t cw;
    GK(gpurma_win_create(world, base, wsize, NULL, &cw));
    EXPECT(gpurma_win_base(cw) == base, "win_create base %p, expected %p", gpurma_win_base(cw),
           (void *)base);
    EXPECT(gpurma_win_peer_ptr(cw, peer) != NULL, "no peer pointer for a device window");
    gpurma_dev_win_t dw;
    GK(gpurma_win_device(cw, &dw));
    char *src;
    int *status;
    CK(cudaMalloc(&src, n + 64));
    CK(cudaMalloc(&status, 2 * sizeof(int)));
    CK(cudaMemset(status, 0, 2 * sizeof(int)));
    fill(base, off + n + MARGIN, case_seed(400, from), off, 1);
    fill(src + 3, n, case_seed(400, rank), 0, 0);
    CK(cudaDeviceSynchronize());
    GK(gpurma_barrier(world));
    k_origin<<<1, 128>>>(dw, OP_PUT_SIGNAL, SC_BLOCK, peer, off, src + 3, n, NULL, 3, 77,
                         status);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    GK(gpurma_wait_until(cw, 3, GPURMA_CMP_EQ, 77));
    int st = 0;
    CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(st == 0, "put_signal into a created device window: status %d", st);
    long bad = check_region("win_create", base, off + n + MARGIN, off, off + n,
                            case_seed(400, from));
    EXPECT(bad == 0, "put_signal into a created device window: %ld bytes wrong", bad);
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&cw));
    CK(cudaFree(buf));
    CK(cudaFree(src));
    CK(cudaFree(status));

    /* A host-memory window in a GPU context keeps working like the host backend. */
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_MEM_KIND;
    p.mem_kind = GPURMA_MEM_HOST;
    void *hbase = NULL;
    gpurma_win_t hw;
    GK(gpurma_win_allocate(world, 4096, &p, &hbase, &hw));
    cudaPointerAttributes a;
    CK(cudaPointerGetAttributes(&a, hbase));
    EXPECT(a.type != cudaMemoryTypeDevice, "MEM_HOST window was placed in device memory");
    memset(hbase, 0xcc, 4096);
    GK(gpurma_barrier(world));
    uint32_t v = 0xabcd0000u + (uint32_t)rank;
    GK(gpurma_put_signal(hw, peer, 100, &v, 4, 0, GPURMA_SIGNAL_SET, 1));
    GK(gpurma_wait_until(hw, 0, GPURMA_CMP_EQ, 1));
    uint32_t got;
    memcpy(&got, (char *)hbase + 100, 4);
    EXPECT(got == 0xabcd0000u + (uint32_t)from, "host window in a GPU context: got %#x", got);
    EXPECT(((unsigned char *)hbase)[99] == 0xcc && ((unsigned char *)hbase)[104] == 0xcc,
           "host window: bytes around the put changed");
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&hw));
}

int main(void)
{
    skip_without_gpu("test_gpu_rma");
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
    cudaPointerAttributes a;
    CK(cudaPointerGetAttributes(&a, base));
    EXPECT(a.type == cudaMemoryTypeDevice, "win_allocate in a GPU context gave host memory");
    const char *forced = getenv("GPURMA_ENGINE");
    gpurma_engine_t want = !forced                     ? GPURMA_ENGINE_MEM
                           : !strcmp(forced, "port")   ? GPURMA_ENGINE_PORT
                           : !strcmp(forced, "switch") ? GPURMA_ENGINE_SWITCH
                                                       : GPURMA_ENGINE_MEM;
    EXPECT(gpurma_win_engine(win, peer) == want, "engine %s, expected %s",
           gpurma_engine_name(gpurma_win_engine(win, peer)), gpurma_engine_name(want));
    gpurma_dev_win_t dw;
    GK(gpurma_win_device(win, &dw));
    char *src, *recv;
    int *status;
    CK(cudaMalloc(&src, (4u << 20) + 64));
    CK(cudaMalloc(&recv, (4u << 20) + 4 * MARGIN));
    CK(cudaMalloc(&status, 2 * sizeof(int)));
    cudaStream_t s_origin, s_target;
    CK(cudaStreamCreateWithFlags(&s_origin, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s_target, cudaStreamNonBlocking));

    double t0 = now_s();
    matrix(win, dw, (char *)base, src, recv, status, s_origin, s_target);
    double t1 = now_s();
    part2(win, dw, (char *)base, src, status);
    double t2 = now_s();
    part3_host_ops(win, (char *)base);
    part3_bad_input(win, (char *)base);
    GK(gpurma_win_free(&win));
    part3_create_and_host_window();
    printf("rank %d: matrix %.2f s, atomics/counters %.2f s, host ops/create %.2f s\n", rank,
           t1 - t0, t2 - t1, now_s() - t2);

    CK(cudaFree(src));
    CK(cudaFree(recv));
    CK(cudaFree(status));
    GK(gpurma_finalize(g_ctx));
    printf("rank %d: %s (%ld failures)\n", rank, failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
