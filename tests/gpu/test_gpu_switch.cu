/*
 * test_gpu_switch.cu - the switch engine on device windows (emulated
 * switch: loads from every member's IPC mapping, stores to each), across
 * the job's processes. Exits 77 without a GPU.
 *
 * 1. Refusal: GPURMA_SWITCH=1 is set here and NCCL_NVLS_ENABLE=0 too when
 *    the environment does not already refuse multicast (the GPU machines
 *    set it): the switch must come out emulated, its query naming the
 *    variable, and a request for multicast must fail. The hardware path is
 *    never run by this test.
 * 2. Reduce: every dtype x SUM/MIN/MAX x thread/warp/block, odd counts and
 *    offsets, random nonzero data, poisoned destinations, checked bitwise
 *    against the rank-order reference computed on the host (integers by
 *    test_coll_ref.h, the collectives' reference).
 * 3. Broadcast from every rank at block and warp scope; every member
 *    checks its whole window. 4. Bad input from a kernel: codes, nothing
 *    written.
 */
#include <cmath>

#include "gpu_common.h"
#include "gpurma_switch.h"
#include "../mp/test_coll_ref.h"

gpurma_ctx_t g_ctx;
static int rank, nranks;
static long failures;

enum { SC_THREAD, SC_WARP, SC_BLOCK };
static const char *const scope_names[] = {"thread", "warp", "block"};
static const gpurma_dtype_t k_types[] = {GPURMA_INT8,    GPURMA_UINT8,    GPURMA_INT32,
                                         GPURMA_UINT32,  GPURMA_INT64,    GPURMA_UINT64,
                                         GPURMA_FLOAT16, GPURMA_BFLOAT16, GPURMA_FLOAT32,
                                         GPURMA_FLOAT64};

static const size_t RANGE_OFF = 512, RANGE_LEN = 256u << 10, WIN = RANGE_OFF + RANGE_LEN + 512;
static const size_t MARGIN = 64;

__global__ void k_reduce(gpurma_dev_switch_t sw, int scope, size_t off, void *dst, size_t count,
                         gpurma_dtype_t t, gpurma_redop_t op, int *status)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (scope == SC_THREAD) {
        if (threadIdx.x == 0)
            rc = gpurma_dev_switch_reduce(sw, off, dst, count, t, op);
    } else if (scope == SC_WARP) {
        if (threadIdx.x < 32)
            rc = gpurma_dev_switch_reduce_warp(sw, off, dst, count, t, op);
    } else {
        rc = gpurma_dev_switch_reduce_block(sw, off, dst, count, t, op);
    }
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

__global__ void k_broadcast(gpurma_dev_switch_t sw, int scope, size_t off, const void *src,
                            size_t count, gpurma_dtype_t t, int *status)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (scope == SC_THREAD) {
        if (threadIdx.x == 0)
            rc = gpurma_dev_switch_broadcast(sw, off, src, count, t);
    } else if (scope == SC_WARP) {
        if (threadIdx.x < 32)
            rc = gpurma_dev_switch_broadcast_warp(sw, off, src, count, t);
    } else {
        rc = gpurma_dev_switch_broadcast_block(sw, off, src, count, t);
    }
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void gen(gpurma_dtype_t t, int r, unsigned char *out, size_t nelem)
{
    uint64_t s = 0x5357ull * 1000 + (uint64_t)r * 131 + (uint64_t)t;
    size_t es = gpurma_dev_dtype_size(t);
    for (size_t i = 0; i < nelem; i++) {
        uint64_t v;
        do
            v = mix(&s);
        while (!(v & 0xff));
        unsigned char *o = out + i * es;
        if (t == GPURMA_FLOAT16 || t == GPURMA_BFLOAT16) {
            /* |f| < 2048: sums stay finite in f16 (no inf - inf = NaN, whose
             * bits differ between the GPU and the host) */
            float f = (float)((int64_t)(v >> 48) - 32768) / (float)(1u << ((v & 15) + 4));
            uint16_t h = t == GPURMA_FLOAT16 ? gpurma_dev_f32_to_f16(f ? f : 1.0f)
                                             : gpurma_dev_f32_to_bf16(f ? f : 1.0f);
            memcpy(o, &h, 2);
        } else if (t == GPURMA_FLOAT32) {
            float f = (float)((int64_t)(v >> 11) - (1ll << 52)) / (float)(1ull << (v & 63));
            memcpy(o, &f, 4);
        } else if (t == GPURMA_FLOAT64) {
            double d = (double)((int64_t)(v >> 11) - (1ll << 52)) / (double)(1ull << (v & 63));
            memcpy(o, &d, 8);
        } else {
            memcpy(o, &v, es);
        }
    }
}

template <typename T> static T combf(int op, T a, T b)
{
    volatile T r = op == GPURMA_SUM ? a + b : op == GPURMA_MIN ? (b < a ? b : a) : (a < b ? b : a);
    return r;
}

/* Rank-order reference of element at byte offset at. */
static void ref(gpurma_dtype_t t, int op, std::vector<std::vector<unsigned char>> &v, size_t at,
                unsigned char *out)
{
    size_t es = gpurma_dev_dtype_size(t);
    switch (t) {
    case GPURMA_INT8:
    case GPURMA_UINT8:
    case GPURMA_INT32:
    case GPURMA_UINT32:
    case GPURMA_INT64:
    case GPURMA_UINT64: {
        std::vector<void *> rows(nranks);
        for (int r = 0; r < nranks; r++)
            rows[r] = v[r].data();
        /* little-endian: the result's bytes are the low ones */
        uint64_t acc = cr_reduce_int(rows.data(), nranks, at / es, t, (gpurma_redop_t)op);
        memcpy(out, &acc, es);
        return;
    }
    case GPURMA_FLOAT16:
    case GPURMA_BFLOAT16: {
        uint16_t h;
        float acc = 0;
        for (int r = 0; r < nranks; r++) {
            memcpy(&h, &v[r][at], 2);
            float x = t == GPURMA_FLOAT16 ? gpurma_dev_f16_to_f32(h) : gpurma_dev_bf16_to_f32(h);
            acc = r ? combf<float>(op, acc, x) : x;
        }
        h = t == GPURMA_FLOAT16 ? gpurma_dev_f32_to_f16(acc) : gpurma_dev_f32_to_bf16(acc);
        memcpy(out, &h, 2);
        return;
    }
    case GPURMA_FLOAT32: {
        float acc = 0, x;
        for (int r = 0; r < nranks; r++) {
            memcpy(&x, &v[r][at], 4);
            acc = r ? combf<float>(op, acc, x) : x;
        }
        memcpy(out, &acc, 4);
        return;
    }
    case GPURMA_FLOAT64: {
        double acc = 0, x;
        for (int r = 0; r < nranks; r++) {
            memcpy(&x, &v[r][at], 8);
            acc = r ? combf<double>(op, acc, x) : x;
        }
        memcpy(out, &acc, 8);
        return;
    }
    }
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    skip_without_gpu("test_gpu_switch");
    /* Opt in, and make sure the environment refuses: the hardware path must
     * never run on shared GPU machines. */
    setenv("GPURMA_SWITCH", "1", 1);
    const char *nv = getenv("NCCL_NVLS_ENABLE");
    if (!nv || strcmp(nv, "0"))
        setenv("NCCL_NVLS_ENABLE", "0", 1);
    const char *refuser = getenv("GPURMA_DISABLE_SWITCH") ? "GPURMA_DISABLE_SWITCH"
                                                          : "NCCL_NVLS_ENABLE";
    init_bounded();
    rank = gpurma_rank(g_ctx);
    nranks = gpurma_size(g_ctx);
    gpurma_team_t world = gpurma_team_world(g_ctx);
    gpurma_win_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = GPURMA_WIN_FIELD_MEM_KIND;
    wp.mem_kind = GPURMA_MEM_DEVICE;
    void *base;
    gpurma_win_t win;
    GK(gpurma_win_allocate(world, WIN, &wp, &base, &win));
    unsigned char *dbase = (unsigned char *)base;

    /* 1. refusal */
    gpurma_switch_t sw;
    gpurma_switch_info_t info;
    GK(gpurma_switch_create(win, RANGE_OFF, RANGE_LEN, NULL, &sw));
    GK(gpurma_switch_query(sw, &info));
    EXPECT(info.mode == GPURMA_SWITCH_EMULATED, "mode %d, not emulated", (int)info.mode);
    EXPECT(strstr(info.reason, refuser), "the reason does not name %s: \"%s\"", refuser,
           info.reason);
    {
        gpurma_switch_params_t p = {GPURMA_SWITCH_FIELD_REQUEST, GPURMA_SWITCH_REQUEST_MULTICAST};
        gpurma_switch_t s2;
        int rc = gpurma_switch_create(win, RANGE_OFF, RANGE_LEN, &p, &s2);
        EXPECT(rc == GPURMA_ERR_UNSUPPORTED && strstr(gpurma_last_error_message(g_ctx), refuser),
               "multicast request: %d \"%s\"", rc, gpurma_last_error_message(g_ctx));
    }
    gpurma_dev_switch_t dsw;
    GK(gpurma_switch_device(sw, &dsw));

    int *status;
    CK(cudaMalloc(&status, sizeof(int)));
    unsigned char *ddst;
    CK(cudaMalloc(&ddst, RANGE_LEN + 2 * MARGIN + 16));
    std::vector<unsigned char> got(RANGE_LEN + 2 * MARGIN + 16), want(RANGE_LEN);
    std::vector<std::vector<unsigned char>> vals(nranks, std::vector<unsigned char>(RANGE_LEN));
    static const size_t counts[] = {1, 5, 33, 1027, 20001};
    static const size_t eoffs[] = {0, 1, 3, 8};
    long cases = 0;

    /* 2. reduce */
    for (int ti = 0; ti < 10; ti++) {
        gpurma_dtype_t t = k_types[ti];
        size_t es = gpurma_dev_dtype_size(t), nelem = RANGE_LEN / es;
        for (int r = 0; r < nranks; r++)
            gen(t, r, vals[r].data(), nelem);
        CK(cudaMemcpy(dbase + RANGE_OFF, vals[rank].data(), RANGE_LEN, cudaMemcpyHostToDevice));
        CK(cudaDeviceSynchronize());
        GK(gpurma_barrier(world));
        for (int op = GPURMA_SUM; op <= GPURMA_MAX; op++) {
            if (op == GPURMA_PROD)
                continue;
            for (int scope = 0; scope < 3; scope++)
                for (size_t ci = 0; ci < 5; ci++)
                    for (size_t ei = 0; ei < 4; ei++) {
                        size_t count = counts[ci], off = eoffs[ei] * es;
                        if (scope == SC_THREAD && count > 2000)
                            continue;
                        size_t dshift = ((ci + ei) & 1) * es;
                        CK(cudaMemset(ddst, 0xA5, got.size()));
                        CK(cudaMemset(status, 0, sizeof(int)));
                        k_reduce<<<1, 256>>>(dsw, scope, off, ddst + MARGIN + dshift, count, t,
                                             (gpurma_redop_t)op, status);
                        CK(cudaGetLastError());
                        CK(cudaDeviceSynchronize());
                        int st;
                        CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
                        CK(cudaMemcpy(got.data(), ddst, got.size(), cudaMemcpyDeviceToHost));
                        for (size_t i = 0; i < count; i++)
                            ref(t, op, vals, off + i * es, &want[i * es]);
                        long bad = 0;
                        for (size_t i = 0; i < got.size(); i++) {
                            size_t lo = MARGIN + dshift, hi = lo + count * es;
                            unsigned char w = i >= lo && i < hi ? want[i - lo] : 0xA5;
                            bad += got[i] != w;
                        }
                        EXPECT(st == 0 && bad == 0,
                               "reduce %s op %d %s count %zu off %zu: status %d, %ld bytes differ",
                               cr_dtype_names[ti], op, scope_names[scope], count, off, st, bad);
                        cases++;
                    }
        }
        GK(gpurma_barrier(world));
    }

    /* 3. broadcast from every rank */
    unsigned char *dsrc;
    CK(cudaMalloc(&dsrc, RANGE_LEN + 16));
    std::vector<unsigned char> src(RANGE_LEN + 16), win_host(WIN);
    for (int root = 0; root < nranks; root++)
        for (int variant = 0; variant < 3; variant++) {
            gpurma_dtype_t t = k_types[(root * 3 + variant + 4) % 10];
            size_t es = gpurma_dev_dtype_size(t);
            size_t count = variant == 2 ? RANGE_LEN / es : 1001 + 7 * (size_t)variant + root;
            size_t off = variant == 2 ? 0 : es * (size_t)(1 + variant);
            size_t sshift = variant == 1 ? es : 0;
            CK(cudaMemset(dbase, 0xA5, WIN));
            CK(cudaDeviceSynchronize());
            GK(gpurma_barrier(world));
            for (size_t i = 0; i < count * es; i++)
                src[i] = (unsigned char)(pattern_byte((uint64_t)root * 10 + variant, i) | 1);
            if (rank == root) {
                CK(cudaMemcpy(dsrc + sshift, src.data(), count * es, cudaMemcpyHostToDevice));
                CK(cudaMemset(status, 0, sizeof(int)));
                int scope = variant == 0 ? SC_WARP : SC_BLOCK;
                k_broadcast<<<1, 256>>>(dsw, scope, off, dsrc + sshift, count, t, status);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                int st;
                CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
                EXPECT(st == 0, "broadcast status %d", st);
            }
            GK(gpurma_barrier(world));
            CK(cudaMemcpy(win_host.data(), dbase, WIN, cudaMemcpyDeviceToHost));
            long bad = 0;
            size_t lo = RANGE_OFF + off, hi = lo + count * es;
            for (size_t i = 0; i < WIN; i++)
                bad += win_host[i] != (i >= lo && i < hi ? src[i - lo] : 0xA5);
            EXPECT(bad == 0, "broadcast from %d, %s count %zu off %zu: %ld bytes differ", root,
                   cr_dtype_names[(root * 3 + variant + 4) % 10], count, off, bad);
            cases++;
            GK(gpurma_barrier(world));
        }

    /* 4. bad input from a kernel: codes, and nothing written */
    CK(cudaMemset(ddst, 0xA5, got.size()));
    struct bad_case {
        size_t off, count;
        gpurma_dtype_t t;
        gpurma_redop_t op;
        size_t dshift;
        int want;
    } bads[] = {
        {RANGE_LEN - 4, 2, GPURMA_FLOAT32, GPURMA_SUM, 0, GPURMA_ERR_OUT_OF_BOUNDS},
        {0, SIZE_MAX / 2 + 1, GPURMA_UINT32, GPURMA_SUM, 0, GPURMA_ERR_OUT_OF_BOUNDS},
        {0, 1, (gpurma_dtype_t)99, GPURMA_SUM, 0, GPURMA_ERR_INVALID_ARG},
        {0, 1, GPURMA_FLOAT32, GPURMA_PROD, 0, GPURMA_ERR_UNSUPPORTED},
        {0, 1, GPURMA_FLOAT16, GPURMA_AVG, 0, GPURMA_ERR_UNSUPPORTED},
        {2, 1, GPURMA_FLOAT32, GPURMA_SUM, 0, GPURMA_ERR_MISALIGNED},
        {0, 1, GPURMA_FLOAT16, GPURMA_SUM, 1, GPURMA_ERR_MISALIGNED},
    };
    for (auto &b : bads)
        for (int scope = 0; scope < 3; scope++) {
            CK(cudaMemset(status, 0, sizeof(int)));
            k_reduce<<<1, 128>>>(dsw, scope, b.off, ddst + MARGIN + b.dshift, b.count, b.t, b.op,
                                 status);
            CK(cudaDeviceSynchronize());
            int st;
            CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
            EXPECT(st == b.want, "bad reduce (off %zu count %zu dtype %d op %d) %s: %d, want %d",
                   b.off, b.count, (int)b.t, (int)b.op, scope_names[scope], st, b.want);
        }
    CK(cudaMemcpy(got.data(), ddst, got.size(), cudaMemcpyDeviceToHost));
    long touched = 0;
    for (unsigned char c : got)
        touched += c != 0xA5;
    EXPECT(touched == 0, "bad reduces wrote %ld bytes", touched);

    GK(gpurma_switch_free(&sw));
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&win));
    CK(cudaFree(status));
    CK(cudaFree(ddst));
    CK(cudaFree(dsrc));
    GK(gpurma_finalize(g_ctx));
    if (failures) {
        fprintf(stderr, "rank %d: test_gpu_switch: %ld failures\n", rank, failures);
        return 1;
    }
    if (rank == 0)
        printf("PASS test_gpu_switch: %d ranks, %ld cases (emulated; multicast refused: %s)\n",
               nranks, cases, refuser);
    return 0;
}
