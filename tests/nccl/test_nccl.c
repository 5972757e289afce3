/*
 * test_nccl.c - libgpurma_nccl on gpurma's host backend, through the NCCL
 * API of our own header (include/gpurma/nccl/nccl.h), like a program built
 * against NCCL: every entry point, random data, odd counts, in place and
 * out of place, poisoned destinations, exact checks, and the error paths.
 *
 * The launcher's gpurma context only hands rank 0's ncclUniqueId to the
 * others (as MPI_Bcast does in nccl-tests); everything else is NCCL API.
 *
 *   test_nccl.mp          the whole suite
 *   test_nccl.mp death    the last rank dies after init; the others must get
 *                         ncclRemoteError from a collective and from
 *                         ncclCommGetAsyncError (tests/nccl/death.sh)
 */
#include "../mp/common.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>

#include "gpurma/nccl/nccl.h"
#include "gpurma_coll.h"

#define NCHECK(call)                                                                        \
    do {                                                                                    \
        ncclResult_t n_rc_ = (call);                                                        \
        if (n_rc_ != ncclSuccess)                                                           \
            T_FAIL("%s returned %d (%s): %s", #call, (int)n_rc_, ncclGetErrorString(n_rc_), \
                   ncclGetLastError(NULL));                                                 \
    } while (0)

/* The call must fail with exactly want and leave a message. */
#define NEXPECT(want, call)                                                                 \
    do {                                                                                    \
        ncclResetDebugInit();                                                               \
        ncclResult_t n_rc_ = (call);                                                        \
        T_ASSERT(n_rc_ == (want), "%s returned %d (%s), expected %d", #call, (int)n_rc_,    \
                 ncclGetErrorString(n_rc_), (int)(want));                                   \
        T_ASSERT(ncclGetLastError(NULL)[0], "%s left no message", #call);                   \
    } while (0)

static ncclUniqueId shared_id(void)
{
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (t_rank == 0)
        NCHECK(ncclGetUniqueId(&id));
    CHECK(gpurma_broadcast(t_world, &id, &id, sizeof id, GPURMA_UINT8, 0, NULL));
    return id;
}

/* ----------------------------------------------------- element values */

static const ncclDataType_t types[] = {ncclInt8,   ncclUint8,   ncclInt32,   ncclUint32,
                                       ncclInt64,  ncclUint64,  ncclFloat16, ncclFloat32,
                                       ncclFloat64, ncclBfloat16};
#define NTYPES (sizeof types / sizeof types[0])

static size_t esize(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
    }
}

static int is_float(ncclDataType_t t)
{
    return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16;
}

/* Values are small integers (and halves), exact in every type. */
static uint16_t to_half(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    if (f == 0)
        return (uint16_t)((x >> 16) & 0x8000);
    uint32_t sign = (x >> 16) & 0x8000, exp = ((x >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(sign | (exp << 10) | ((x >> 13) & 0x3ff));
}

static double from_half(uint16_t h)
{
    int exp = (h >> 10) & 0x1f;
    double m = (h & 0x3ff) / 1024.0;
    double v = exp ? ldexp(1 + m, exp - 15) : ldexp(m, -14);
    return h & 0x8000 ? -v : v;
}

static void put(void *buf, size_t i, ncclDataType_t t, double v)
{
    switch (t) {
    case ncclInt8:    ((int8_t *)buf)[i] = (int8_t)(int64_t)v; break;
    case ncclUint8:   ((uint8_t *)buf)[i] = (uint8_t)(int64_t)v; break;
    case ncclInt32:   ((int32_t *)buf)[i] = (int32_t)(int64_t)v; break;
    case ncclUint32:  ((uint32_t *)buf)[i] = (uint32_t)(int64_t)v; break;
    case ncclInt64:   ((int64_t *)buf)[i] = (int64_t)v; break;
    case ncclUint64:  ((uint64_t *)buf)[i] = (uint64_t)(int64_t)v; break;
    case ncclFloat16: ((uint16_t *)buf)[i] = to_half(v); break;
    case ncclFloat32: ((float *)buf)[i] = (float)v; break;
    case ncclFloat64: ((double *)buf)[i] = v; break;
    case ncclBfloat16: {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        ((uint16_t *)buf)[i] = (uint16_t)(x >> 16);
        break;
    }
    default: break;
    }
}

/* Value of rank r's element i in a round, chosen for op: products stay
 * small, sums of signed types go negative too. */
static double value(ncclDataType_t t, ncclRedOp_t op, int r, size_t i, uint64_t round)
{
    uint64_t s = t_seed(0x6e63636c, (uint64_t)r, round * 1000003u + i);
    uint64_t x = t_splitmix64(&s);
    int is_signed = t == ncclInt8 || t == ncclInt32 || t == ncclInt64 || is_float(t);
    if (op == ncclProd)
        return (double)(1 + x % 2) * (is_signed && (x & 4) ? -1 : 1);
    double v = (double)(x % 16);
    return is_signed ? v - 8 : v;
}

/* The expected result element, in the element type. */
static double reduce_ref(ncclDataType_t t, ncclRedOp_t op, int n, size_t i, uint64_t round,
                         double premul)
{
    double acc = 0;
    for (int r = 0; r < n; r++) {
        double v = value(t, op, r, i, round) * premul;
        if (r == 0)
            acc = v;
        else if (op == ncclSum || op == ncclAvg)
            acc += v;
        else if (op == ncclProd)
            acc *= v;
        else if (op == ncclMax)
            acc = v > acc ? v : acc;
        else if (op == ncclMin)
            acc = v < acc ? v : acc;
    }
    if (op == ncclAvg)
        acc = is_float(t) ? acc / n : trunc(acc / n);
    return acc;
}

static void fill_values(void *buf, size_t count, ncclDataType_t t, ncclRedOp_t op, int r,
                        size_t first, uint64_t round)
{
    for (size_t i = 0; i < count; i++)
        put(buf, i, t, value(t, op, r, first + i, round));
}

static void verify_elems(const void *got, size_t count, ncclDataType_t t, ncclRedOp_t op,
                         size_t first, uint64_t round, double premul, const char *what)
{
    size_t es = esize(t);
    unsigned char want[8];
    for (size_t i = 0; i < count; i++) {
        put(want, 0, t, reduce_ref(t, op, t_size, first + i, round, premul));
        if (memcmp((const char *)got + i * es, want, es))
            T_FAIL("%s: dtype %d op %d element %zu of %zu: got %s, expected %g", what, (int)t,
                   (int)op, i, count, t == ncclFloat16 ? "(half)" : "(bytes differ)",
                   t == ncclFloat16 ? from_half(*(const uint16_t *)want)
                                    : reduce_ref(t, op, t_size, first + i, round, premul));
    }
    t_checks += count;
}

/* ------------------------------------------------------- reductions */

static const size_t counts[] = {1, 7, 1027, 65541};

static int avg_exact(ncclDataType_t t)
{
    /* Float averages are exact when size is a power of two. */
    return !is_float(t) || !(t_size & (t_size - 1));
}

static void test_reductions(ncclComm_t comm)
{
    uint64_t round = 1;
    for (size_t ti = 0; ti < NTYPES; ti++) {
        ncclDataType_t t = types[ti];
        size_t es = esize(t);
        for (int op = ncclSum; op <= ncclAvg; op++) {
            if (op == ncclAvg && !avg_exact(t))
                continue;
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                size_t count = counts[ci];
                if (count > 2000 && ti % 3) /* large counts for some types only */
                    continue;
                for (int in_place = 0; in_place < 2; in_place++, round++) {
                    size_t n = (size_t)t_size;
                    /* allreduce */
                    char *send = t_malloc(count * es + 64), *recv = t_malloc(count * es + 64);
                    fill_values(send, count, t, (ncclRedOp_t)op, t_rank, 0, round);
                    memset(recv, T_POISON, count * es + 64);
                    void *dst = in_place ? send : recv;
                    NCHECK(ncclAllReduce(send, dst, count, t, (ncclRedOp_t)op, comm, NULL));
                    verify_elems(dst, count, t, (ncclRedOp_t)op, 0, round, 1, "allreduce");
                    if (!in_place)
                        t_verify_fill(recv + count * es, T_POISON, 64, "allreduce tail", -1, 0);
                    /* reduce, every root */
                    round++;
                    int root = (int)(round % n);
                    fill_values(send, count, t, (ncclRedOp_t)op, t_rank, 0, round);
                    memset(recv, T_POISON, count * es + 64);
                    dst = in_place ? send : recv;
                    NCHECK(ncclReduce(send, dst, count, t, (ncclRedOp_t)op, root, comm, NULL));
                    if (t_rank == root)
                        verify_elems(dst, count, t, (ncclRedOp_t)op, 0, round, 1, "reduce");
                    else if (!in_place)
                        t_verify_fill(recv, T_POISON, count * es, "reduce non-root recv", -1, 0);
                    free(send);
                    free(recv);
                    /* reduce-scatter: NCCL's in place is recv = send + rank * count */
                    round++;
                    char *big = t_malloc(n * count * es + 64);
                    recv = t_malloc(count * es + 64);
                    for (size_t r = 0; r < n; r++)
                        fill_values(big + r * count * es, count, t, (ncclRedOp_t)op, t_rank,
                                    r * count, round);
                    memset(recv, T_POISON, count * es + 64);
                    dst = in_place ? big + (size_t)t_rank * count * es : recv;
                    NCHECK(ncclReduceScatter(big, dst, count, t, (ncclRedOp_t)op, comm, NULL));
                    verify_elems(dst, count, t, (ncclRedOp_t)op, (size_t)t_rank * count, round,
                                 1, "reduce_scatter");
                    free(big);
                    free(recv);
                }
            }
        }
    }
}

/* PreMulSum: the scalar multiplies each input before the sum. */
static void test_premulsum(ncclComm_t comm)
{
    uint64_t round = 900000;
    for (size_t ti = 0; ti < NTYPES; ti++) {
        ncclDataType_t t = types[ti];
        size_t es = esize(t), count = 1031;
        double scalar = is_float(t) ? 0.5 : 3;
        unsigned char sc[8];
        put(sc, 0, t, scalar);
        ncclRedOp_t op;
        NCHECK(ncclRedOpCreatePreMulSum(&op, sc, t, ncclScalarHostImmediate, comm));
        T_ASSERT((int)op >= ncclNumOps, "PreMulSum op %d is a built-in", (int)op);
        char *send = t_malloc(count * es * t_size), *recv = t_malloc(count * es * t_size);
        fill_values(send, count, t, ncclSum, t_rank, 0, round);
        memset(recv, T_POISON, count * es);
        NCHECK(ncclAllReduce(send, recv, count, t, op, comm, NULL));
        verify_elems(recv, count, t, ncclSum, 0, round, scalar, "premulsum allreduce");
        /* in place, and reduce-scatter */
        NCHECK(ncclAllReduce(send, send, count, t, op, comm, NULL));
        verify_elems(send, count, t, ncclSum, 0, round, scalar, "premulsum allreduce in place");
        round++;
        for (int r = 0; r < t_size; r++)
            fill_values(send + (size_t)r * count * es, count, t, ncclSum, t_rank,
                        (size_t)r * count, round);
        NCHECK(ncclReduceScatter(send, recv, count, t, op, comm, NULL));
        verify_elems(recv, count, t, ncclSum, (size_t)t_rank * count, round, scalar,
                     "premulsum reduce_scatter");
        round++;
        NCHECK(ncclRedOpDestroy(op, comm));
        NEXPECT(ncclInvalidArgument, ncclAllReduce(send, recv, count, t, op, comm, NULL));
        NEXPECT(ncclInvalidArgument, ncclRedOpDestroy(op, comm));
        free(send);
        free(recv);
    }
}

/* ------------------------------------------------------------- FP8 */

/* The FP8 byte of v, which must be exact in the format (small integers,
 * powers of two): written here from the formats' definitions, not the
 * library's codec. */
static uint8_t fp8_exact(double v, ncclDataType_t t)
{
    int mant = t == ncclFloat8e5m2 ? 2 : 3, bias = t == ncclFloat8e5m2 ? 15 : 7;
    uint8_t sign = v < 0 ? 0x80 : 0;
    double a = fabs(v);
    if (a == 0)
        return sign;
    int e;
    double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    double m = (f * 2 - 1) * (1 << mant);
    T_ASSERT(m == floor(m) && e - 1 + bias > 0, "%g is not exact in FP8 type %d", v, (int)t);
    return sign | (uint8_t)((e - 1 + bias) << mant) | (uint8_t)m;
}

/* Rank r's element i: small values whose sums, products, minima and
 * maxima are exact in the format (|sum| <= 16 in E4M3, 8 in E5M2, for up
 * to 8 ranks). */
static double fp8_input(ncclDataType_t t, ncclRedOp_t op, int r, size_t i, uint64_t round)
{
    uint64_t h = (round * 1000003u + (uint64_t)r * 7919u + i * 104729u) * 0x9e3779b97f4a7c15ull;
    int k = (int)(h >> 61); /* 0..7 */
    if (op == ncclProd) /* |product| <= 2^8 */
        return k < 3 ? -1.0 : k < 6 ? 1.0 : 2.0;
    if (op == ncclAvg) /* the same on every rank: the average is exact */
        return (double)((int)((round + i) % 5) - 2);
    if (t == ncclFloat8e5m2)
        return (double)(k % 3 - 1);
    return (double)(k % 5 - 2);
}

static double fp8_reduced(ncclDataType_t t, ncclRedOp_t op, size_t i, uint64_t round, double mul)
{
    double acc = fp8_input(t, op, 0, i, round) * mul;
    for (int r = 1; r < t_size; r++) {
        double v = fp8_input(t, op, r, i, round) * mul;
        acc = op == ncclProd ? acc * v : op == ncclMax ? fmax(acc, v)
              : op == ncclMin ? fmin(acc, v) : acc + v;
    }
    return op == ncclAvg ? fp8_input(t, op, 0, i, round) : acc;
}

static void fp8_expect(const uint8_t *got, size_t count, ncclDataType_t t, ncclRedOp_t op,
                       size_t first, uint64_t round, double mul, const char *what)
{
    for (size_t i = 0; i < count; i++) {
        uint8_t want = fp8_exact(fp8_reduced(t, op, first + i, round, mul), t);
        T_ASSERT(got[i] == want, "%s: FP8 type %d op %d element %zu is 0x%02x, expected 0x%02x",
                 what, (int)t, (int)op, first + i, got[i], want);
    }
}

/* FP8 reductions (gpurma has none: the layer reduces them as float) on
 * every operator, PreMulSum included; the narrowing saturates. */
static void test_fp8(ncclComm_t comm)
{
    const ncclDataType_t fp8[] = {ncclFloat8e4m3, ncclFloat8e5m2};
    const size_t count = 1027;
    uint8_t *send = t_malloc(count * t_size), *recv = t_malloc(count * t_size);
    uint64_t round = 700000;
    for (int ti = 0; ti < 2; ti++) {
        ncclDataType_t t = fp8[ti];
        for (int op = ncclSum; op < ncclNumOps; op++, round++) {
            for (size_t i = 0; i < count; i++)
                send[i] = fp8_exact(fp8_input(t, op, t_rank, i, round), t);
            memset(recv, T_POISON, count);
            NCHECK(ncclAllReduce(send, recv, count, t, (ncclRedOp_t)op, comm, NULL));
            fp8_expect(recv, count, t, op, 0, round, 1, "FP8 allreduce");
            NCHECK(ncclAllReduce(send, send, count, t, (ncclRedOp_t)op, comm, NULL));
            fp8_expect(send, count, t, op, 0, round, 1, "FP8 allreduce in place");
            /* reduce: only the root's recv is written */
            int root = (int)(round % (uint64_t)t_size);
            for (size_t i = 0; i < count; i++)
                send[i] = fp8_exact(fp8_input(t, op, t_rank, i, round), t);
            memset(recv, T_POISON, count);
            NCHECK(ncclReduce(send, recv, count, t, (ncclRedOp_t)op, root, comm, NULL));
            if (t_rank == root)
                fp8_expect(recv, count, t, op, 0, round, 1, "FP8 reduce");
            else
                t_verify_fill(recv, T_POISON, count, "FP8 reduce, not the root", -1, 0);
        }
        /* reduce-scatter, out of place and in place (recv is this rank's block) */
        for (int r = 0; r < t_size; r++)
            for (size_t i = 0; i < count; i++)
                send[(size_t)r * count + i] =
                    fp8_exact(fp8_input(t, ncclSum, t_rank, (size_t)r * count + i, round), t);
        memset(recv, T_POISON, count);
        NCHECK(ncclReduceScatter(send, recv, count, t, ncclSum, comm, NULL));
        fp8_expect(recv, count, t, ncclSum, (size_t)t_rank * count, round, 1,
                   "FP8 reduce_scatter");
        uint8_t *mine = send + (size_t)t_rank * count;
        NCHECK(ncclReduceScatter(send, mine, count, t, ncclSum, comm, NULL));
        fp8_expect(mine, count, t, ncclSum, (size_t)t_rank * count, round, 1,
                   "FP8 reduce_scatter in place");
        round++;
        /* PreMulSum, scalar 2 (exact) */
        uint8_t two = fp8_exact(2.0, t);
        ncclRedOp_t pm;
        NCHECK(ncclRedOpCreatePreMulSum(&pm, &two, t, ncclScalarHostImmediate, comm));
        for (size_t i = 0; i < count; i++)
            send[i] = fp8_exact(fp8_input(t, ncclSum, t_rank, i, round), t);
        memset(recv, T_POISON, count);
        NCHECK(ncclAllReduce(send, recv, count, t, pm, comm, NULL));
        fp8_expect(recv, count, t, ncclSum, 0, round, 2, "FP8 PreMulSum allreduce");
        NCHECK(ncclRedOpDestroy(pm, comm));
        round++;
        /* saturation: 256 from every rank sums past the largest finite
         * value (448 in E4M3, 57344 in E5M2 only from 224 ranks) */
        uint8_t big = fp8_exact(256.0, t), sum;
        NCHECK(ncclAllReduce(&big, &sum, 1, t, ncclSum, comm, NULL));
        double want = 256.0 * t_size;
        if (t == ncclFloat8e4m3 && want > 448)
            want = 448;
        T_ASSERT(sum == fp8_exact(want, t), "FP8 type %d: %d x 256 gave 0x%02x, expected %g",
                 (int)t, t_size, sum, want);
        /* rounding to nearest, ties to even: in E4M3 17 lies between 16
         * and 18 and goes to 16 (even mantissa), 19 to 20; in E5M2 9 to 8
         * and 11 to 12 */
        if (t_size >= 2) {
            int e5 = t == ncclFloat8e5m2;
            double a0 = e5 ? 1 : 9, a1 = e5 ? 3 : 11, b = 8;
            uint8_t in[2] = {fp8_exact(t_rank == 0 ? a0 : 0, t), fp8_exact(t_rank == 0 ? a1 : 0, t)};
            if (t_rank == 1)
                in[0] = in[1] = fp8_exact(b, t);
            uint8_t out[2];
            NCHECK(ncclAllReduce(in, out, 2, t, ncclSum, comm, NULL));
            double w0 = e5 ? 8 : 16, w1 = e5 ? 12 : 20;
            T_ASSERT(out[0] == fp8_exact(w0, t) && out[1] == fp8_exact(w1, t),
                     "FP8 type %d: %g + %g and %g + %g gave 0x%02x 0x%02x, expected %g %g",
                     (int)t, a0, b, a1, b, out[0], out[1], w0, w1);
        }
    }
    free(send);
    free(recv);
}

/* ---------------------------------------------------- data movement */

static uint64_t move_seed(int kind, int origin, int block, uint64_t round)
{
    return t_seed(0x6d6f7665u + (uint64_t)kind, (uint64_t)origin, round * 4099 + (uint64_t)block);
}

static void expect_block(const char *got, size_t bytes, uint64_t seed, const char *what,
                         int peer)
{
    char *want = t_malloc(bytes);
    t_fill(want, bytes, seed);
    t_verify(got, want, bytes, what, peer, 0);
    free(want);
}

static void test_movement(ncclComm_t comm)
{
    int n = t_size, me = t_rank;
    uint64_t round = 5000;
    static const ncclDataType_t mtypes[] = {ncclInt8, ncclFloat16, ncclInt32, ncclFloat64,
                                            ncclFloat8e4m3};
    for (size_t ti = 0; ti < sizeof mtypes / sizeof mtypes[0]; ti++) {
        ncclDataType_t t = mtypes[ti];
        size_t es = esize(t);
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            size_t count = counts[ci], b = count * es, all = b * (size_t)n;
            for (int in_place = 0; in_place < 2; in_place++, round++) {
                char *send = t_malloc(all + 64), *recv = t_malloc(all + 64);
                /* allgather: in place is send = recv + rank * count */
                memset(recv, T_POISON, all + 64);
                char *src = in_place ? recv + (size_t)me * b : send;
                t_fill(src, b, move_seed(1, me, 0, round));
                NCHECK(ncclAllGather(src, recv, count, t, comm, NULL));
                for (int r = 0; r < n; r++)
                    expect_block(recv + (size_t)r * b, b, move_seed(1, r, 0, round),
                                 "allgather", r);
                t_verify_fill(recv + all, T_POISON, 64, "allgather tail", -1, 0);
                /* broadcast (ncclBcast in place) */
                int root = (int)(round % (uint64_t)n);
                memset(recv, T_POISON, all + 64);
                if (me == root)
                    t_fill(in_place ? recv : send, b, move_seed(2, root, 0, round));
                if (in_place)
                    NCHECK(ncclBcast(recv, count, t, root, comm, NULL));
                else
                    NCHECK(ncclBroadcast(send, recv, count, t, root, comm, NULL));
                expect_block(recv, b, move_seed(2, root, 0, round), "broadcast", root);
                t_verify_fill(recv + b, T_POISON, 64, "broadcast tail", -1, 0);
                /* alltoall */
                for (int r = 0; r < n; r++)
                    t_fill(send + (size_t)r * b, b, move_seed(3, me, r, round));
                memset(recv, T_POISON, all + 64);
                char *a2a = in_place ? send : recv;
                NCHECK(ncclAlltoAll(send, a2a, count, t, comm, NULL));
                for (int r = 0; r < n; r++)
                    expect_block(a2a + (size_t)r * b, b, move_seed(3, r, me, round), "alltoall", r);
                /* gather: in place at the root is send = recv + root * count */
                memset(recv, T_POISON, all + 64);
                src = in_place && me == root ? recv + (size_t)root * b : send;
                t_fill(src, b, move_seed(4, me, 0, round));
                NCHECK(ncclGather(src, recv, count, t, root, comm, NULL));
                if (me == root)
                    for (int r = 0; r < n; r++)
                        expect_block(recv + (size_t)r * b, b, move_seed(4, r, 0, round),
                                     "gather", r);
                else
                    t_verify_fill(recv, T_POISON, all, "gather non-root recv", -1, 0);
                /* scatter: in place at the root is recv = send + root * count */
                if (me == root)
                    for (int r = 0; r < n; r++)
                        t_fill(send + (size_t)r * b, b, move_seed(5, root, r, round));
                memset(recv, T_POISON, all + 64);
                char *dst = in_place && me == root ? send + (size_t)root * b : recv;
                NCHECK(ncclScatter(send, dst, count, t, root, comm, NULL));
                expect_block(dst, b, move_seed(5, root, me, round), "scatter", root);
                free(send);
                free(recv);
            }
        }
    }
}

/* ------------------------------------------------------ send / recv */

static void test_p2p(ncclComm_t comm)
{
    int n = t_size, me = t_rank;
    uint64_t round = 70000;
    /* Ring both ways in one group, larger than the staging slots (256 KiB),
     * two messages per pair, odd sizes. */
    static const size_t sizes[] = {0, 1, 13, 300001, 700003};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, round++) {
        size_t bytes = sizes[si];
        int right = (me + 1) % n, left = (me + n - 1) % n;
        char *s1 = t_malloc(bytes + 1), *s2 = t_malloc(bytes / 2 + 1);
        char *r1 = t_malloc(bytes + 65), *r2 = t_malloc(bytes / 2 + 65);
        t_fill(s1, bytes, move_seed(10, me, 0, round));
        t_fill(s2, bytes / 2, move_seed(11, me, 0, round));
        memset(r1, T_POISON, bytes + 65);
        memset(r2, T_POISON, bytes / 2 + 65);
        NCHECK(ncclGroupStart());
        NCHECK(ncclRecv(r1, bytes, ncclInt8, left, comm, NULL));
        NCHECK(ncclSend(s1, bytes, ncclUint8, right, comm, NULL));
        NCHECK(ncclSend(s2, bytes / 2, ncclInt8, right, comm, NULL));
        NCHECK(ncclRecv(r2, bytes / 2, ncclInt8, left, comm, NULL));
        NCHECK(ncclGroupEnd());
        expect_block(r1, bytes, move_seed(10, left, 0, round), "ring recv 1", left);
        expect_block(r2, bytes / 2, move_seed(11, left, 0, round), "ring recv 2", left);
        t_verify_fill(r1 + bytes, T_POISON, 65, "ring recv tail", left, bytes);
        free(s1), free(s2), free(r1), free(r2);
    }
    /* All pairs, self included, as torch's all_to_all_single does it:
     * float32 elements, a different count per pair. */
    size_t *cnt = t_malloc(sizeof(size_t) * (size_t)n * n);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            cnt[a * n + b] = 1 + (size_t)((a * 7 + b * 13) % 5) * 40000;
    char **sb = t_malloc(sizeof(char *) * n), **rb = t_malloc(sizeof(char *) * n);
    NCHECK(ncclGroupStart());
    for (int p = 0; p < n; p++) {
        sb[p] = t_malloc(cnt[me * n + p] * 4);
        rb[p] = t_malloc(cnt[p * n + me] * 4);
        t_fill(sb[p], cnt[me * n + p] * 4, move_seed(12, me, p, round));
        memset(rb[p], T_POISON, cnt[p * n + me] * 4);
        NCHECK(ncclSend(sb[p], cnt[me * n + p], ncclFloat32, p, comm, NULL));
        NCHECK(ncclRecv(rb[p], cnt[p * n + me], ncclFloat32, p, comm, NULL));
    }
    NCHECK(ncclGroupEnd());
    for (int p = 0; p < n; p++) {
        expect_block(rb[p], cnt[p * n + me] * 4, move_seed(12, p, me, round), "all pairs", p);
        free(sb[p]);
        free(rb[p]);
    }
    free(sb), free(rb), free(cnt);
    /* Outside a group, rank pairs (0,1), (2,3), ...: even sends first. */
    int peer = me ^ 1;
    if (peer < n) {
        char buf[4099], want[4099];
        t_fill(want, sizeof want, move_seed(13, me & ~1, 0, round));
        if (!(me & 1)) {
            NCHECK(ncclSend(want, sizeof want, ncclChar, peer, comm, NULL));
        } else {
            memset(buf, T_POISON, sizeof buf);
            NCHECK(ncclRecv(buf, sizeof buf, ncclChar, peer, comm, NULL));
            t_verify(buf, want, sizeof buf, "plain send/recv", peer, 0);
        }
    }
}

/* ------------------------------------------------- groups, comms */

/* Count 0 (nccl-tests' smallest sizes divided among ranks): no effect,
 * NULL buffers allowed. */
static void test_zero_counts(ncclComm_t comm)
{
    char buf[16];
    memset(buf, T_POISON, sizeof buf);
    NCHECK(ncclAllReduce(NULL, NULL, 0, ncclFloat32, ncclSum, comm, NULL));
    NCHECK(ncclAllReduce(buf, buf, 0, ncclFloat32, ncclSum, comm, NULL));
    NCHECK(ncclAllGather(buf, buf, 0, ncclInt8, comm, NULL));
    NCHECK(ncclReduceScatter(buf, buf, 0, ncclInt32, ncclMax, comm, NULL));
    NCHECK(ncclBroadcast(buf, buf, 0, ncclInt8, 0, comm, NULL));
    NCHECK(ncclReduce(buf, buf, 0, ncclInt8, ncclSum, 0, comm, NULL));
    NCHECK(ncclAlltoAll(buf, buf, 0, ncclInt8, comm, NULL));
    NCHECK(ncclGather(buf, buf, 0, ncclInt8, 0, comm, NULL));
    NCHECK(ncclScatter(buf, buf, 0, ncclInt8, 0, comm, NULL));
    NCHECK(ncclGroupStart());
    NCHECK(ncclSend(NULL, 0, ncclInt8, (t_rank + 1) % t_size, comm, NULL));
    NCHECK(ncclRecv(NULL, 0, ncclInt8, (t_rank + t_size - 1) % t_size, comm, NULL));
    NCHECK(ncclGroupEnd());
    t_verify_fill(buf, T_POISON, sizeof buf, "count 0 calls", -1, 0);
}

static void test_group_collectives(ncclComm_t comm)
{
    enum { K = 5 };
    size_t count = 513;
    int32_t *buf[K];
    NCHECK(ncclGroupStart());
    for (int k = 0; k < K; k++) {
        buf[k] = t_malloc(count * 4);
        fill_values(buf[k], count, ncclInt32, ncclSum, t_rank, 0, 123000 + (uint64_t)k);
        NCHECK(ncclAllReduce(buf[k], buf[k], count, ncclInt32, ncclSum, comm, NULL));
    }
    NCHECK(ncclGroupStart()); /* nested: runs at the outer end */
    NCHECK(ncclGroupEnd());
    NCHECK(ncclGroupEnd());
    for (int k = 0; k < K; k++) {
        verify_elems(buf[k], count, ncclInt32, ncclSum, 0, 123000 + (uint64_t)k, 1,
                     "grouped allreduce");
        free(buf[k]);
    }
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    int32_t x = 1;
    NCHECK(ncclGroupStart());
    NCHECK(ncclAllReduce(&x, &x, 1, ncclInt32, ncclSum, comm, NULL));
    NCHECK(ncclGroupSimulateEnd(&sim));
    T_ASSERT(x == 1 && sim.estimatedTime > 0, "simulated group ran (x %d) or gave no estimate %f",
             (int)x, (double)sim.estimatedTime);
}

static void allreduce_check(ncclComm_t comm, const char *what, uint64_t round)
{
    int n = 0, r = -1;
    NCHECK(ncclCommCount(comm, &n));
    NCHECK(ncclCommUserRank(comm, &r));
    size_t count = 1001;
    int64_t *v = t_malloc(count * 8);
    for (size_t i = 0; i < count; i++)
        v[i] = (int64_t)(round * 1000 + i) * (r + 1);
    NCHECK(ncclAllReduce(v, v, count, ncclInt64, ncclSum, comm, NULL));
    for (size_t i = 0; i < count; i++)
        T_ASSERT(v[i] == (int64_t)(round * 1000 + i) * n * (n + 1) / 2,
                 "%s: element %zu is %lld", what, i, (long long)v[i]);
    free(v);
}

static void test_split(ncclComm_t comm)
{
    ncclComm_t sub = NULL, none = (ncclComm_t)&sub;
    /* parity, reversed order */
    NCHECK(ncclCommSplit(comm, t_rank % 2, -t_rank, &sub, NULL));
    int n = 0, r = -1;
    NCHECK(ncclCommCount(sub, &n));
    NCHECK(ncclCommUserRank(sub, &r));
    int want_n = (t_size + 1 - t_rank % 2) / 2;
    T_ASSERT(n == want_n && r == want_n - 1 - t_rank / 2, "split: rank %d of %d", r, n);
    allreduce_check(sub, "split allreduce", 7);
    /* only rank 0 gets a communicator */
    NCHECK(ncclCommSplit(comm, t_rank == 0 ? 5 : NCCL_SPLIT_NOCOLOR, 0, &none, NULL));
    T_ASSERT((t_rank == 0) == (none != NULL), "NOCOLOR split gave %p", (void *)none);
    if (none) {
        allreduce_check(none, "solo allreduce", 8);
        NCHECK(ncclCommDestroy(none));
    }
    NCHECK(ncclCommDestroy(sub));
}

/* The last rank leaves; the others shrink around it. */
static void test_shrink(ncclComm_t comm)
{
    if (t_size < 2)
        return;
    int gone = t_size - 1;
    if (t_rank != gone) {
        ncclComm_t small = NULL;
        NCHECK(ncclCommShrink(comm, &gone, 1, &small, NULL, NCCL_SHRINK_DEFAULT));
        int n = 0;
        NCHECK(ncclCommCount(small, &n));
        T_ASSERT(n == t_size - 1, "shrunk communicator has %d ranks", n);
        allreduce_check(small, "shrunk allreduce", 9);
        NCHECK(ncclCommDestroy(small));
    }
    CHECK(gpurma_barrier(t_world));
}

static void test_nonblocking(ncclUniqueId id)
{
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    cfg.commName = "nonblocking";
    ncclComm_t comm = NULL;
    ncclResult_t res = ncclCommInitRankConfig(&comm, t_size, id, t_rank, &cfg);
    T_ASSERT(res == ncclSuccess || res == ncclInProgress, "non-blocking init: %d", (int)res);
    ncclResult_t st = ncclInProgress;
    double until = t_now() + 60;
    while (st == ncclInProgress && t_now() < until)
        NCHECK(ncclCommGetAsyncError(comm, &st));
    T_ASSERT(st == ncclSuccess, "non-blocking init ended with %d", (int)st);
    allreduce_check(comm, "non-blocking comm", 10);
    /* What the communicator made is released between finalize and destroy
     * (torch deregisters there); new work is refused. */
    static char reg[256];
    void *h = NULL;
    float two = 2;
    ncclRedOp_t pm;
    NCHECK(ncclCommRegister(comm, reg, sizeof reg, &h));
    NCHECK(ncclRedOpCreatePreMulSum(&pm, &two, ncclFloat32, ncclScalarHostImmediate, comm));
    NCHECK(ncclCommFinalize(comm));
    NEXPECT(ncclInvalidUsage, ncclAllReduce(&st, &st, 1, ncclInt32, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidUsage, ncclCommRegister(comm, reg, sizeof reg, &h));
    NCHECK(ncclCommDeregister(comm, h));
    NCHECK(ncclRedOpDestroy(pm, comm));
    NCHECK(ncclCommDestroy(comm));
}

/* Two ranks in this process, as ncclCommInitAll and nccl-tests -g 2 make
 * them: each rank of the job runs a pair. */
/* An allreduce on both communicators of the pair, in one group: rank k
 * gives (k + base) * (i + t_rank) at element i. */
static void pair_allreduce(ncclComm_t pair[2], int base, const char *what)
{
    int32_t v[2][257];
    NCHECK(ncclGroupStart());
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 257; i++)
            v[k][i] = (k + base) * (i + t_rank);
        NCHECK(ncclAllReduce(v[k], v[k], 257, ncclInt32, ncclSum, pair[k], NULL));
    }
    NCHECK(ncclGroupEnd());
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 257; i++)
            T_ASSERT(v[k][i] == (2 * base + 1) * (i + t_rank), "%s %d element %d: %d", what, k,
                     i, v[k][i]);
}

static void test_two_per_process(void)
{
    ncclComm_t pair[2];
    NCHECK(ncclCommInitAll(pair, 2, NULL));
    pair_allreduce(pair, 1, "pair");
    /* sends between the two ranks of this process, in one group */
    char a[100000], b[100000], ra[100000], rb[100000];
    t_fill(a, sizeof a, 1), t_fill(b, sizeof b, 2);
    NCHECK(ncclGroupStart());
    NCHECK(ncclSend(a, sizeof a, ncclInt8, 1, pair[0], NULL));
    NCHECK(ncclRecv(ra, sizeof ra, ncclInt8, 1, pair[0], NULL));
    NCHECK(ncclSend(b, sizeof b, ncclInt8, 0, pair[1], NULL));
    NCHECK(ncclRecv(rb, sizeof rb, ncclInt8, 0, pair[1], NULL));
    NCHECK(ncclGroupEnd());
    t_verify(ra, b, sizeof ra, "pair recv 0", 1, 0);
    t_verify(rb, a, sizeof rb, "pair recv 1", 0, 0);
    /* both ranks split in one group on this thread (NCCL queues the
     * splits to ncclGroupEnd; run at the call, the first waited for the
     * second, which this thread had not made yet) */
    ncclComm_t half[2] = {NULL, NULL};
    NCHECK(ncclGroupStart());
    for (int k = 0; k < 2; k++)
        NCHECK(ncclCommSplit(pair[k], 5, 1 - k, &half[k], NULL));
    NEXPECT(ncclInvalidUsage, ncclCommDestroy(half[0]));
    NCHECK(ncclGroupEnd());
    for (int k = 0; k < 2; k++) {
        int r = -1;
        NCHECK(ncclCommUserRank(half[k], &r));
        T_ASSERT(r == 1 - k, "split by key: rank %d has rank %d", k, r);
    }
    pair_allreduce(half, 3, "split pair");
    NCHECK(ncclCommDestroy(half[0]));
    NCHECK(ncclCommDestroy(half[1]));
    /* one after the other on one thread, as nccl-tests does */
    NCHECK(ncclCommDestroy(pair[0]));
    NCHECK(ncclCommDestroy(pair[1]));
}

static void test_registration(ncclComm_t comm)
{
    void *mem = NULL, *h = NULL;
    ncclWindow_t win = NULL;
    NCHECK(ncclMemAlloc(&mem, 1 << 20));
    T_ASSERT(((uintptr_t)mem & 4095) == 0, "ncclMemAlloc gave %p", mem);
    NCHECK(ncclCommRegister(comm, mem, 1 << 20, &h));
    NCHECK(ncclCommWindowRegister(comm, mem, 1 << 20, &win, NCCL_WIN_COLL_SYMMETRIC));
    int32_t *v = mem;
    for (int i = 0; i < 4099; i++)
        v[i] = i * (t_rank + 1);
    NCHECK(ncclAllReduce(v, v, 4099, ncclInt32, ncclSum, comm, NULL));
    for (int i = 0; i < 4099; i++)
        T_ASSERT(v[i] == i * t_size * (t_size + 1) / 2, "registered allreduce %d: %d", i, v[i]);
    NCHECK(ncclCommWindowDeregister(comm, win));
    NCHECK(ncclCommDeregister(comm, h));
    NEXPECT(ncclInvalidArgument, ncclCommDeregister(comm, h == mem ? NULL : mem));
    NCHECK(ncclMemFree(mem));
}

/* -------------------------------------------------------- error paths */

static void test_errors(ncclComm_t comm, ncclUniqueId id)
{
    char buf[64], guard[64];
    memset(buf, T_POISON, sizeof buf);
    memset(guard, T_POISON, sizeof guard);
    ncclComm_t c;
    NEXPECT(ncclInvalidArgument, ncclGetUniqueId(NULL));
    NEXPECT(ncclInvalidArgument, ncclCommInitRank(&c, 0, id, 0));
    NEXPECT(ncclInvalidArgument, ncclCommInitRank(&c, 2, id, 2));
    NEXPECT(ncclInvalidArgument, ncclCommInitRank(NULL, 2, id, 0));
    ncclConfig_t bad = NCCL_CONFIG_INITIALIZER;
    bad.magic = 0;
    NEXPECT(ncclInvalidArgument, ncclCommInitRankConfig(&c, 1, id, 0, &bad));
    ncclUniqueId junk;
    memset(&junk, 0x5a, sizeof junk);
    NEXPECT(ncclInvalidArgument, ncclCommInitRank(&c, 1, junk, 0));
    NEXPECT(ncclInvalidArgument, ncclAllReduce(buf, buf, 1, ncclInt32, ncclSum, NULL, NULL));
    NEXPECT(ncclInvalidArgument,
            ncclAllReduce(buf, buf + 4, 1, (ncclDataType_t)99, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidArgument,
            ncclAllReduce(buf, buf + 4, 1, ncclInt32, (ncclRedOp_t)77, comm, NULL));
    NEXPECT(ncclInvalidArgument,
            ncclAllReduce(buf, buf + 4, 1, ncclInt32, (ncclRedOp_t)-3, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclAllReduce(buf, buf + 2, 8, ncclInt32, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclAllReduce(NULL, buf, 4, ncclInt32, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclBroadcast(buf, buf, 1, ncclInt32, t_size, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclReduce(buf, buf, 1, ncclInt32, ncclSum, -1, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclGather(buf, buf, 1, ncclInt32, t_size + 3, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclSend(buf, 1, ncclInt32, t_size, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclRecv(buf, 1, ncclInt32, -1, comm, NULL));
    NEXPECT(ncclInvalidArgument,
            ncclAllReduce(buf, buf, SIZE_MAX / 2, ncclInt64, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidUsage, ncclAllReduce(buf, buf + 8, 1, ncclInt32, ncclSum, comm,
                                            (cudaStream_t)0x1234));
    NEXPECT(ncclInvalidUsage, ncclGroupEnd());
    NEXPECT(ncclInvalidArgument, ncclCommCount(comm, NULL));
    ncclRedOp_t op;
    NEXPECT(ncclInvalidArgument,
            ncclRedOpCreatePreMulSum(&op, buf, (ncclDataType_t)42, ncclScalarHostImmediate, comm));
    NEXPECT(ncclInvalidArgument,
            ncclRedOpCreatePreMulSum(&op, buf, ncclFloat32, ncclScalarDevice, comm));
    NEXPECT(ncclInvalidArgument, ncclCommRevoke(comm, 5));
    ncclSimInfo_t sim = {0};
    NCHECK(ncclGroupStart());
    NEXPECT(ncclInvalidArgument, ncclGroupSimulateEnd(&sim));
    NCHECK(ncclGroupEnd());
    /* nothing was written by any refused call */
    t_verify(buf, guard, sizeof buf, "buffer of refused calls", -1, 0);
    for (int r = ncclSuccess; r <= ncclNumResults; r++)
        T_ASSERT(ncclGetErrorString((ncclResult_t)r)[0], "no string for %d", r);
    int version = 0;
    NCHECK(ncclGetVersion(&version));
    T_ASSERT(version == NCCL_VERSION_CODE && version == 22809, "version %d", version);
    int dev = 7;
    NCHECK(ncclCommCuDevice(comm, &dev));
    T_ASSERT(dev == -1, "host backend communicator on device %d", dev);
}

/* Calls are checked when they are made: a bad one inside a group returns
 * its error there, and the group then runs none of its calls and ends with
 * that error, so a good call queued before it writes nothing either. Every
 * rank makes the same calls, so no peer waits on a call that never runs. */
static void test_group_errors(ncclComm_t comm)
{
    int32_t good[8], out[8], guard[8];
    t_fill(good, sizeof good, t_seed(41, (uint64_t)t_rank, 0));
    memset(out, T_POISON, sizeof out);
    memset(guard, T_POISON, sizeof guard);
    /* FP8 and PreMulSum reductions read and write through the layer's own
     * scratch: NULL buffers are refused before it */
    NEXPECT(ncclInvalidArgument, ncclAllReduce(NULL, out, 4, ncclFloat8e4m3, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclAllReduce(good, NULL, 4, ncclFloat8e5m2, ncclMax, comm, NULL));
    NEXPECT(ncclInvalidArgument,
            ncclReduceScatter(NULL, out, 1, ncclFloat8e4m3, ncclSum, comm, NULL));
    float scalar = 0.5f;
    ncclRedOp_t premul;
    NCHECK(ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
    NEXPECT(ncclInvalidArgument, ncclAllReduce(NULL, out, 4, ncclFloat32, premul, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclReduceScatter(NULL, out, 1, ncclFloat32, premul, comm, NULL));
    NCHECK(ncclRedOpDestroy(premul, comm));
    /* a good call, then a bad one, in one group */
    NCHECK(ncclGroupStart());
    NCHECK(ncclAllReduce(good, out, 8, ncclInt32, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclAllReduce(good, out, 8, (ncclDataType_t)99, ncclSum, comm,
                                               NULL));
    NEXPECT(ncclInvalidArgument, ncclGroupEnd());
    NCHECK(ncclGroupStart());
    NCHECK(ncclAllReduce(good, out, 8, ncclInt32, ncclSum, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclAllReduce(good, out, 8, ncclInt32, ncclSum, NULL, NULL));
    NEXPECT(ncclInvalidArgument, ncclSend(good, 8, ncclInt32, t_size, comm, NULL));
    NEXPECT(ncclInvalidArgument, ncclGroupEnd());
    t_verify(out, guard, sizeof out, "recv of a group that held a refused call", -1, 0);
    /* a communicator whose init or calls a group holds cannot go before
     * the group ends; an abort drops them */
    ncclUniqueId id = shared_id();
    ncclComm_t c = NULL;
    NCHECK(ncclGroupStart());
    NCHECK(ncclCommInitRank(&c, t_size, id, t_rank));
    NEXPECT(ncclInvalidUsage, ncclCommDestroy(c));
    NEXPECT(ncclInvalidUsage, ncclCommFinalize(c));
    NCHECK(ncclGroupEnd());
    NCHECK(ncclGroupStart());
    NCHECK(ncclAllReduce(good, out, 8, ncclInt32, ncclSum, c, NULL));
    NEXPECT(ncclInvalidUsage, ncclCommDestroy(c));
    NCHECK(ncclCommAbort(c));
    NCHECK(ncclGroupEnd());
    t_verify(out, guard, sizeof out, "recv of a call on a communicator aborted in its group", -1,
             0);
    NCHECK(ncclCommDestroy(c));
}

/* A thread with no error of its own reads the process's last one (torch
 * asks from its watchdog thread); once it has its own, that one. */
static void *last_error_reader(void *arg)
{
    char **out = arg;
    out[0] = strdup(ncclGetLastError(NULL));
    ncclResult_t rc = ncclGetUniqueId(NULL);
    out[1] = rc == ncclInvalidArgument ? strdup(ncclGetLastError(NULL)) : NULL;
    return NULL;
}

static void test_last_error_threads(ncclComm_t comm)
{
    char buf[8];
    ncclResetDebugInit();
    NEXPECT(ncclInvalidArgument, ncclBroadcast(buf, buf, 1, ncclInt8, -7, comm, NULL));
    char mine[1024];
    snprintf(mine, sizeof mine, "%s", ncclGetLastError(comm));
    T_ASSERT(strstr(mine, "-7"), "the last error does not name root -7: %s", mine);
    char *seen[2] = {NULL, NULL};
    pthread_t th;
    T_ASSERT(pthread_create(&th, NULL, last_error_reader, seen) == 0, "pthread_create");
    pthread_join(th, NULL);
    T_ASSERT(seen[0] && !strcmp(seen[0], mine), "another thread read '%s', expected '%s'",
             seen[0] ? seen[0] : "(null)", mine);
    T_ASSERT(seen[1] && strstr(seen[1], "ncclGetUniqueId"),
             "the thread's own error is '%s'", seen[1] ? seen[1] : "(null)");
    /* this thread keeps its own */
    T_ASSERT(!strcmp(ncclGetLastError(NULL), mine), "this thread's error became '%s'",
             ncclGetLastError(NULL));
    free(seen[0]);
    free(seen[1]);
}

/* The host functions of nccl_device.h, which our header does not declare:
 * NCCL 2.28's prototypes. */
typedef struct {
    int nRanks, rank, stride;
} team_t;
team_t ncclTeamWorld(ncclComm_t comm);
team_t ncclTeamLsa(ncclComm_t comm);
team_t ncclTeamRail(ncclComm_t comm);
int ncclTeamRankToWorld(ncclComm_t comm, team_t team, int rank);
int ncclTeamRankToLsa(ncclComm_t comm, team_t team, int rank);
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void *reqs, void *outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void *devComm);

/* Teams come from the communicator (one host here: the LSA team is all of
 * it, each rail one rank); device communicators are refused with a reason
 * and nothing written. */
static void test_device_api(ncclComm_t comm)
{
    team_t w = ncclTeamWorld(comm), l = ncclTeamLsa(comm), r = ncclTeamRail(comm);
    T_ASSERT(w.nRanks == t_size && w.rank == t_rank && w.stride == 1, "world team %d %d %d",
             w.nRanks, w.rank, w.stride);
    T_ASSERT(l.nRanks == t_size && l.rank == t_rank && l.stride == 1, "LSA team %d %d %d",
             l.nRanks, l.rank, l.stride);
    T_ASSERT(r.nRanks == 1 && r.rank == 0, "rail team %d %d %d", r.nRanks, r.rank, r.stride);
    for (int i = 0; i < t_size; i++) {
        T_ASSERT(ncclTeamRankToWorld(comm, w, i) == i, "world rank of %d", i);
        T_ASSERT(ncclTeamRankToLsa(comm, w, i) == i, "LSA rank of %d", i);
    }
    T_ASSERT(ncclTeamRankToWorld(comm, w, t_size) == -1 && ncclTeamRankToWorld(comm, w, -1) == -1,
             "ranks outside the team are not -1");
    T_ASSERT(ncclTeamRankToWorld(comm, r, 0) == t_rank, "rail rank 0 is not this rank");
    unsigned char dev[256];
    memset(dev, T_POISON, sizeof dev);
    NEXPECT(ncclInvalidUsage, ncclDevCommCreate(comm, dev, dev));
    T_ASSERT(strstr(ncclGetLastError(NULL), "device API"), "no reason: %s",
             ncclGetLastError(NULL));
    t_verify_fill(dev, T_POISON, sizeof dev, "ncclDevCommCreate's output", -1, 0);
    NEXPECT(ncclInvalidUsage, ncclDevCommDestroy(comm, dev));
    team_t none = ncclTeamWorld(NULL);
    T_ASSERT(none.nRanks == 0, "a team of no communicator has %d ranks", none.nRanks);
}

/* Abort is local: other ranks are not asked. */
static void test_abort(ncclUniqueId id)
{
    ncclComm_t comm;
    NCHECK(ncclCommInitRank(&comm, t_size, id, t_rank));
    NCHECK(ncclCommAbort(comm));
    ncclResult_t st;
    NCHECK(ncclCommGetAsyncError(comm, &st));
    T_ASSERT(st == ncclRemoteError, "async error after abort: %d", (int)st);
    int32_t x = 1;
    NEXPECT(ncclInvalidUsage, ncclAllReduce(&x, &x, 1, ncclInt32, ncclSum, comm, NULL));
    NCHECK(ncclCommDestroy(comm));
}

/* ------------------------------------------------------------- death */

static int run_death(void)
{
    ncclUniqueId id = shared_id();
    ncclComm_t comm;
    NCHECK(ncclCommInitRank(&comm, t_size, id, t_rank));
    allreduce_check(comm, "before the death", 1);
    if (t_rank == t_size - 1)
        raise(SIGKILL);
    /* The watchdog's question first, with no call in flight. */
    double start = t_now();
    ncclResult_t st = ncclSuccess;
    while (st == ncclSuccess && t_now() < start + 10)
        NCHECK(ncclCommGetAsyncError(comm, &st));
    T_ASSERT(st == ncclRemoteError, "async error with a dead rank is %d after %.1f s", (int)st,
             t_now() - start);
    printf("rank %d: ncclCommGetAsyncError: ncclRemoteError after %.3f s: %s\n", t_rank,
           t_now() - start, ncclGetLastError(comm));
    int32_t v[64] = {0};
    ncclResult_t res = ncclAllReduce(v, v, 64, ncclInt32, ncclSum, comm, NULL);
    T_ASSERT(res == ncclRemoteError, "allreduce with a dead rank returned %d (%s): %s", (int)res,
             ncclGetErrorString(res), ncclGetLastError(comm));
    NCHECK(ncclCommGetAsyncError(comm, &st));
    T_ASSERT(st == ncclRemoteError, "async error is %d", (int)st);
    printf("rank %d: ncclAllReduce: ncclRemoteError after %.1f s: %s\n", t_rank, t_now() - start,
           ncclGetLastError(comm));
    NCHECK(ncclCommAbort(comm));
    fflush(stdout);
    _exit(0); /* the launcher's context would wait for the dead rank */
}

int main(int argc, char **argv)
{
    t_init("test_nccl", 0);
    if (argc > 1 && !strcmp(argv[1], "death"))
        return run_death();
    ncclUniqueId id = shared_id();
    ncclComm_t comm;
    NCHECK(ncclCommInitRank(&comm, t_size, id, t_rank));
    test_errors(comm, id);
    test_group_errors(comm);
    test_last_error_threads(comm);
    test_device_api(comm);
    test_reductions(comm);
    test_premulsum(comm);
    test_fp8(comm);
    test_movement(comm);
    test_p2p(comm);
    test_zero_counts(comm);
    test_group_collectives(comm);
    test_registration(comm);
    test_split(comm);
    test_shrink(comm);
    test_nonblocking(shared_id());
    test_abort(shared_id());
    test_two_per_process();
    NCHECK(ncclCommDestroy(comm));
    return t_finish(NULL);
}
