/*
 * test_switch.c - the switch engine on the host backend (emulated switch),
 * driven from CPU threads as the host backend runs kernels.
 *
 * 1. Reduce: every dtype x SUM/MIN/MAX x cooperative teams of 1, 3 and 4
 *    threads, odd counts and offsets, random nonzero data, poisoned
 *    destinations; the reference is computed in rank order (integers by
 *    test_coll_ref.h, the collectives' reference; floats here, in the
 *    element type as the switch adds them: f16 with the compiler's
 *    _Float16 where it has one, bf16 by its own rounding) and compared
 *    bitwise, poison around it included.
 * 2. Broadcast from every rank, in turn, with every element size; every
 *    member checks its whole window (data and poison).
 * 3. Bad input: errors, and nothing written; stale and zeroed handles.
 * 4. Refusal: with GPURMA_SWITCH=1 (set here) and, by the argument,
 *    GPURMA_DISABLE_SWITCH=1 ("disable"), NCCL_NVLS_ENABLE=0 ("nccl") or
 *    NVSHMEM_DISABLE_NVLS=1 ("nvshmem"), or none of them (the host backend
 *    refuses), the switch is emulated and its query names the variable; a
 *    request for multicast fails with GPURMA_ERR_UNSUPPORTED naming it.
 *    Windows served by the port engine are refused.
 * 5. The switch as a window's engine (forced by the window's parameters):
 *    it serves every member; put_signal, get and fetch_add through it land
 *    exactly, and a switch over such a window broadcasts into every member.
 */
#include <pthread.h>

#include "common.h"

#include "gpurma_switch.h"
#include "test_coll_ref.h"

enum { SW_DATA = 300, SW_BCAST = 301 };

#define RANGE_OFF 256
#define RANGE_LEN (48u << 10)
#define WIN_LEN   (RANGE_OFF + RANGE_LEN + 256)
#define MARGIN    64

static gpurma_win_t win;
static unsigned char *mem;
static gpurma_switch_t sw;
static gpurma_dev_switch_t dsw;

static const gpurma_dtype_t k_types[] = {GPURMA_INT8,    GPURMA_UINT8,    GPURMA_INT32,
                                         GPURMA_UINT32,  GPURMA_INT64,    GPURMA_UINT64,
                                         GPURMA_FLOAT16, GPURMA_BFLOAT16, GPURMA_FLOAT32,
                                         GPURMA_FLOAT64};
static const gpurma_redop_t k_ops[] = {GPURMA_SUM, GPURMA_MIN, GPURMA_MAX};

static size_t esize(gpurma_dtype_t t) { return gpurma_dev_dtype_size(t); }

/* ------------------------------------------------ reference arithmetic */

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float ref_f16_to_f32(uint16_t h)
{
#ifdef __FLT16_MAX__
    _Float16 v;
    memcpy(&v, &h, 2);
    return (float)v;
#else
    return gpurma_dev_f16_to_f32(h);
#endif
}
static uint16_t ref_f32_to_f16(float f)
{
#ifdef __FLT16_MAX__
    _Float16 v = (_Float16)f; /* IEEE conversion, round to nearest even */
    uint16_t h;
    memcpy(&h, &v, 2);
    return h;
#else
    return gpurma_dev_f32_to_f16(f);
#endif
}
static float ref_bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }
static uint16_t ref_f32_to_bf16(float f)
{
    /* round to nearest even on the 16 bits dropped (no NaN in this test) */
    uint32_t u = f32_bits(f), low = u & 0xffffu, hi = u >> 16;
    if (low > 0x8000u || (low == 0x8000u && (hi & 1)))
        hi++;
    return (uint16_t)hi;
}

/* Random element i of rank r's range for this dtype: nonzero, floats
 * finite and of mixed sign and magnitude (so sums round). */
static void gen_elem(gpurma_dtype_t t, uint64_t *s, void *out)
{
    uint64_t v;
    do
        v = t_splitmix64(s);
    while (!(v & 0xffu));
    switch (t) {
    case GPURMA_FLOAT16: {
        /* |f| < 2048: sums of 8 members stay finite (no inf - inf = NaN,
         * whose bits differ between processors) */
        float f = (float)((int64_t)(v >> 48) - 32768) / (float)(1 << ((v & 15) + 4));
        uint16_t h = ref_f32_to_f16(f ? f : 1.0f);
        memcpy(out, &h, 2);
        break;
    }
    case GPURMA_BFLOAT16: {
        float f = (float)((int64_t)(v >> 40) - (1 << 23)) / (float)(1u << (v & 31));
        uint16_t b = ref_f32_to_bf16(f ? f : 1.0f);
        memcpy(out, &b, 2);
        break;
    }
    case GPURMA_FLOAT32: {
        float f = (float)((int64_t)(v >> 11) - (1ll << 52)) / (float)(1ull << (v & 63));
        memcpy(out, &f, 4);
        break;
    }
    case GPURMA_FLOAT64: {
        double d = (double)((int64_t)(v >> 11) - (1ll << 52)) / (double)(1ull << (v & 63));
        memcpy(out, &d, 8);
        break;
    }
    default: memcpy(out, &v, esize(t)); break; /* little-endian: the low, nonzero bytes */
    }
}

static void gen_range(gpurma_dtype_t t, int r, unsigned char *dst, size_t nelem)
{
    uint64_t s = t_seed(SW_DATA, (uint64_t)r, (uint64_t)t);
    for (size_t i = 0; i < nelem; i++)
        gen_elem(t, &s, dst + i * esize(t));
}

#define COMBINE(op, a, b) ((op) == GPURMA_SUM ? (a) + (b) : (op) == GPURMA_MIN ? ((b) < (a) ? (b) : (a)) : ((a) < (b) ? (b) : (a)))

/* Reference of one element from the members' values vals[r] (raw bytes). */
static void ref_elem(gpurma_dtype_t t, gpurma_redop_t op, unsigned char *const *vals, size_t at,
                     void *out)
{
    size_t es = esize(t);
    switch (t) {
    case GPURMA_INT8:
    case GPURMA_UINT8:
    case GPURMA_INT32:
    case GPURMA_UINT32:
    case GPURMA_INT64:
    case GPURMA_UINT64: {
        /* little-endian: the result's bytes are the low ones */
        uint64_t acc = cr_reduce_int((void *const *)vals, t_size, at / es, t, op);
        memcpy(out, &acc, es);
        return;
    }
    case GPURMA_FLOAT16:
    case GPURMA_BFLOAT16: {
        uint16_t h;
        memcpy(&h, vals[0] + at, 2);
        float acc = t == GPURMA_FLOAT16 ? ref_f16_to_f32(h) : ref_bf16_to_f32(h);
        for (int r = 1; r < t_size; r++) {
            memcpy(&h, vals[r] + at, 2);
            float v = t == GPURMA_FLOAT16 ? ref_f16_to_f32(h) : ref_bf16_to_f32(h);
            acc = COMBINE(op, acc, v);
        }
        h = t == GPURMA_FLOAT16 ? ref_f32_to_f16(acc) : ref_f32_to_bf16(acc);
        memcpy(out, &h, 2);
        return;
    }
    case GPURMA_FLOAT32: {
        volatile float acc, v; /* one IEEE single operation at a time */
        memcpy((void *)&acc, vals[0] + at, 4);
        for (int r = 1; r < t_size; r++) {
            float x;
            memcpy(&x, vals[r] + at, 4);
            v = x;
            acc = COMBINE(op, acc, v);
        }
        float a = acc;
        memcpy(out, &a, 4);
        return;
    }
    case GPURMA_FLOAT64: {
        double acc, v;
        memcpy(&acc, vals[0] + at, 8);
        for (int r = 1; r < t_size; r++) {
            memcpy(&v, vals[r] + at, 8);
            acc = COMBINE(op, acc, v);
        }
        memcpy(out, &acc, 8);
        return;
    }
    }
}

/* --------------------------------------------------- cooperative teams */

typedef struct {
    int is_reduce;
    size_t off, count;
    void *buf;
    gpurma_dtype_t t;
    gpurma_redop_t op;
    unsigned tid, n;
    int rc;
} job_t;

static void *job_run(void *a)
{
    job_t *j = a;
    j->rc = j->is_reduce ? gpurma_dev_switch_reduce_coop(dsw, j->off, j->buf, j->count, j->t,
                                                         j->op, j->tid, j->n)
                         : gpurma_dev_switch_broadcast_coop(dsw, j->off, j->buf, j->count, j->t,
                                                            j->tid, j->n);
    return NULL;
}

static void team_call(int is_reduce, unsigned n, size_t off, void *buf, size_t count,
                      gpurma_dtype_t t, gpurma_redop_t op)
{
    pthread_t th[8];
    job_t jobs[8];
    for (unsigned k = 0; k < n; k++) {
        jobs[k] = (job_t){is_reduce, off, count, buf, t, op, k, n, 0};
        if (pthread_create(&th[k], NULL, job_run, &jobs[k]))
            T_FAIL("pthread_create");
    }
    for (unsigned k = 0; k < n; k++) {
        pthread_join(th[k], NULL);
        EXPECT_CODE(GPURMA_SUCCESS, jobs[k].rc);
    }
}

/* ------------------------------------------------------------ 1. reduce */

static void test_reduce(void)
{
    static const size_t counts[] = {1, 3, 17, 64, 333, 4099};
    static const size_t elem_offs[] = {0, 1, 5, 16};
    static const unsigned teams[] = {1, 3, 4};
    unsigned char **vals = t_malloc((size_t)t_size * sizeof(*vals));
    for (int r = 0; r < t_size; r++)
        vals[r] = t_malloc(RANGE_LEN);
    unsigned char *got = t_malloc(RANGE_LEN + 2 * MARGIN + 16);
    unsigned char *want = t_malloc(RANGE_LEN);
    for (size_t ti = 0; ti < sizeof(k_types) / sizeof(k_types[0]); ti++) {
        gpurma_dtype_t t = k_types[ti];
        size_t es = esize(t), nelem = RANGE_LEN / es;
        for (int r = 0; r < t_size; r++)
            gen_range(t, r, vals[r], nelem);
        memcpy(mem + RANGE_OFF, vals[t_rank], nelem * es);
        CHECK(gpurma_barrier(t_world));
        for (size_t oi = 0; oi < 3; oi++)
            for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
                for (size_t ei = 0; ei < sizeof(elem_offs) / sizeof(elem_offs[0]); ei++) {
                    gpurma_redop_t op = k_ops[oi];
                    size_t count = counts[ci], off = elem_offs[ei] * es;
                    unsigned n = teams[(ci + ei + oi) % 3];
                    /* the destination at an odd element position too */
                    size_t dshift = ((ci + ei) & 1) * es;
                    unsigned char *dst = got + MARGIN + dshift;
                    memset(got, T_POISON, RANGE_LEN + 2 * MARGIN + 16);
                    team_call(1, n, off, dst, count, t, op);
                    for (size_t i = 0; i < count; i++)
                        ref_elem(t, op, vals, off + i * es, want + i * es);
                    char what[128];
                    snprintf(what, sizeof(what), "reduce %s %s count %zu off %zu, %u threads",
                             cr_dtype_names[ti], cr_op_names[op], count, off, n);
                    t_verify_fill(got, T_POISON, MARGIN + dshift, what, t_rank, 0);
                    t_verify(dst, want, count * es, what, t_rank, off);
                    t_verify_fill(dst + count * es, T_POISON, MARGIN + 16 - dshift, what, t_rank,
                                  off + count * es);
                }
        /* the whole range once, with 4 threads */
        memset(got, T_POISON, RANGE_LEN + 2 * MARGIN);
        team_call(1, 4, 0, got + MARGIN, nelem, t, GPURMA_SUM);
        for (size_t i = 0; i < nelem; i++)
            ref_elem(t, GPURMA_SUM, vals, i * es, want + i * es);
        t_verify(got + MARGIN, want, nelem * es, "reduce whole range", t_rank, 0);
        CHECK(gpurma_barrier(t_world)); /* nobody reads while the next type is written */
    }
    for (int r = 0; r < t_size; r++)
        free(vals[r]);
    free(vals);
    free(got);
    free(want);
}

/* --------------------------------------------------------- 2. broadcast */

static void test_broadcast(void)
{
    unsigned char *src = t_malloc(RANGE_LEN + 16);
    unsigned char *want = t_malloc(WIN_LEN);
    for (int root = 0; root < t_size; root++) {
        for (int variant = 0; variant < 3; variant++) {
            gpurma_dtype_t t = k_types[(root * 3 + variant) % 10];
            size_t es = esize(t);
            size_t count = variant == 2 ? (RANGE_LEN / es) : (size_t)(17 + 1000 * variant) + root;
            size_t off = variant == 2 ? 0 : es * (size_t)(3 + variant);
            unsigned n = (unsigned)(1 + (root + variant) % 4);
            memset(mem, T_POISON, WIN_LEN);
            CHECK(gpurma_barrier(t_world));
            /* the source at an offset not congruent to the destination */
            unsigned char *s = src + (variant == 1 ? es : 0);
            t_fill(s, count * es, t_seed(SW_BCAST, (uint64_t)root, (uint64_t)variant));
            if (t_rank == root)
                team_call(0, n, off, s, count, t, GPURMA_SUM);
            CHECK(gpurma_barrier(t_world));
            char what[96];
            snprintf(what, sizeof(what), "broadcast from %d, %s, %zu at %zu", root,
                     cr_dtype_names[(root * 3 + variant) % 10], count, off);
            t_verify_window(mem, WIN_LEN, RANGE_OFF + off, s, count * es, what, root);
            CHECK(gpurma_barrier(t_world));
        }
    }
    free(src);
    free(want);
}

/* -------------------------------------------------------- 3. bad input */

static void test_bad_input(void)
{
    unsigned char buf[256];
    uint32_t vals[16];
    memset(mem, T_POISON, WIN_LEN);
    memset(buf, T_POISON, sizeof(buf));
    for (int i = 0; i < 16; i++)
        vals[i] = 0x01010101u * (uint32_t)(i + 1);
    CHECK(gpurma_barrier(t_world));
    gpurma_dev_switch_t z;
    memset(&z, 0, sizeof(z));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_switch_reduce(z, 0, buf, 1, GPURMA_UINT8, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_switch_broadcast(z, 0, vals, 1, GPURMA_UINT8));
    /* Copies of the real handle with another range or window table: the
     * library compares every field with the switch's own (host backend),
     * so the range check cannot be widened past the members' windows. */
    gpurma_dev_switch_t wide = dsw, moved = dsw, table = dsw;
    wide.bytes = 2 * dsw.bytes + WIN_LEN;
    moved.offset = dsw.offset + 8;
    table.win.peers = table.win.peers + 1;
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(wide, RANGE_LEN + 4, buf, 1, GPURMA_UINT8, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(moved, 0, buf, 1, GPURMA_UINT8, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_switch_broadcast(moved, 0, vals, 1, GPURMA_UINT8));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(table, 0, buf, 1, GPURMA_UINT8, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_switch_reduce(dsw, RANGE_LEN - 4, buf, 2, GPURMA_FLOAT32, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_switch_reduce(dsw, RANGE_LEN + 4, buf, 0, GPURMA_FLOAT32, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_switch_reduce(dsw, 0, buf, SIZE_MAX / 2 + 1, GPURMA_UINT32, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_switch_broadcast(dsw, 8, vals, SIZE_MAX / 8 + 1, GPURMA_UINT64));
    EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS,
                gpurma_dev_switch_broadcast(dsw, RANGE_LEN - 8, vals, 3, GPURMA_UINT32));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(dsw, 0, buf, 1, (gpurma_dtype_t)99, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_broadcast(dsw, 0, vals, 1, (gpurma_dtype_t)-1));
    EXPECT_CODE(GPURMA_ERR_UNSUPPORTED,
                gpurma_dev_switch_reduce(dsw, 0, buf, 1, GPURMA_FLOAT32, GPURMA_PROD));
    EXPECT_CODE(GPURMA_ERR_UNSUPPORTED,
                gpurma_dev_switch_reduce(dsw, 0, buf, 1, GPURMA_INT32, GPURMA_AVG));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(dsw, 0, buf, 1, GPURMA_INT32, (gpurma_redop_t)77));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED,
                gpurma_dev_switch_reduce(dsw, 2, buf, 1, GPURMA_FLOAT32, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED,
                gpurma_dev_switch_reduce(dsw, 0, buf + 1, 1, GPURMA_FLOAT16, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_MISALIGNED,
                gpurma_dev_switch_broadcast(dsw, 4, vals, 1, GPURMA_UINT64));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(dsw, 0, NULL, 1, GPURMA_UINT8, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_broadcast(dsw, 0, NULL, 1, GPURMA_UINT8));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce_coop(dsw, 0, buf, 1, GPURMA_UINT8, GPURMA_SUM, 2, 2));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_broadcast_coop(dsw, 0, vals, 1, GPURMA_UINT8, 0, 0));
    /* overlapping this member's own range */
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(dsw, 0, mem + RANGE_OFF + 8, 4, GPURMA_UINT32, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_broadcast(dsw, 16, mem + RANGE_OFF + 20, 4, GPURMA_UINT32));
    /* inside the range but away from the elements at off: still this
     * member's range (once accepted, and the destination written) */
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(dsw, 0, mem + RANGE_OFF + RANGE_LEN - 16, 4,
                                         GPURMA_UINT32, GPURMA_SUM));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_reduce(dsw, RANGE_LEN - 16, mem + RANGE_OFF, 4, GPURMA_UINT32,
                                         GPURMA_MAX));
    EXPECT_CODE(GPURMA_ERR_INVALID_ARG,
                gpurma_dev_switch_broadcast(dsw, 0, mem + RANGE_OFF + RANGE_LEN - 4, 1,
                                            GPURMA_UINT32));
    /* a wild switch handle: refused, not read */
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_switch_query((gpurma_switch_t)(uintptr_t)0x10, NULL));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_switch_query((gpurma_switch_t)(void *)vals, NULL));
    EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_switch_reduce(dsw, 0, buf, 0, GPURMA_UINT8, GPURMA_SUM));
    CHECK(gpurma_barrier(t_world));
    t_verify_fill(buf, T_POISON, sizeof(buf), "bad reduce wrote its destination", t_rank, 0);
    t_verify_fill(mem, T_POISON, WIN_LEN, "bad broadcast wrote a window", t_rank, 0);

    /* host API */
    EXPECT_ERR(GPURMA_ERR_UNSUPPORTED, gpurma_switch_op_supported(GPURMA_FLOAT32, GPURMA_PROD));
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_switch_op_supported((gpurma_dtype_t)42, GPURMA_SUM));
    CHECK(gpurma_switch_op_supported(GPURMA_BFLOAT16, GPURMA_MAX));
    gpurma_switch_t bad = NULL;
    EXPECT_ERR(GPURMA_ERR_MISALIGNED, gpurma_switch_create(win, 8, 64, NULL, &bad));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_switch_create(win, 256, WIN_LEN, NULL, &bad));
    EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_switch_create(win, SIZE_MAX & ~(size_t)15, 16, NULL, &bad));
    gpurma_switch_params_t sp = {GPURMA_SWITCH_FIELD_REQUEST, (gpurma_switch_request_t)9};
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_switch_create(win, 0, 64, &sp, &bad));
    sp.field_mask = 1u << 7;
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_switch_create(win, 0, 64, &sp, &bad));
    T_ASSERT(bad == NULL, "a failed create left a handle");
    EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_switch_query(NULL, NULL));

    /* a freed switch: host and device calls */
    gpurma_switch_t tmp;
    gpurma_dev_switch_t dtmp;
    CHECK(gpurma_switch_create(win, 0, 64, NULL, &tmp));
    CHECK(gpurma_switch_device(tmp, &dtmp));
    gpurma_switch_t stale = tmp;
    CHECK(gpurma_switch_free(&tmp));
    T_ASSERT(tmp == NULL, "switch_free left the handle");
    gpurma_switch_info_t info;
    EXPECT_ERR(GPURMA_ERR_FREED, gpurma_switch_query(stale, &info));
    EXPECT_CODE(GPURMA_ERR_FREED, gpurma_dev_switch_reduce(dtmp, 0, buf, 1, GPURMA_UINT8, GPURMA_SUM));
    t_verify_fill(buf, T_POISON, sizeof(buf), "reduce on a freed switch", t_rank, 0);
}

/* ---------------------------------------------------------- 4. refusal */

static int contains(const char *s, const char *w) { return s && strstr(s, w) != NULL; }

/* AUTO: emulated, the reason names var; MULTICAST: refused, naming it. */
static void expect_refused(const char *var)
{
    gpurma_switch_t s;
    gpurma_switch_info_t info;
    CHECK(gpurma_switch_create(win, RANGE_OFF, 1024, NULL, &s));
    CHECK(gpurma_switch_query(s, &info));
    T_ASSERT(info.mode == GPURMA_SWITCH_EMULATED, "%s: mode %d, not emulated", var,
             (int)info.mode);
    T_ASSERT(contains(info.reason, var), "%s: the reason does not name it: \"%s\"", var,
             info.reason);
    T_ASSERT(info.rank == t_rank && info.size == t_size && info.offset == RANGE_OFF &&
                 info.bytes == 1024,
             "query: rank %d size %d offset %zu bytes %zu", info.rank, info.size, info.offset,
             info.bytes);
    CHECK(gpurma_switch_free(&s));
    gpurma_switch_params_t p = {GPURMA_SWITCH_FIELD_REQUEST, GPURMA_SWITCH_REQUEST_MULTICAST};
    EXPECT_ERR(GPURMA_ERR_UNSUPPORTED, gpurma_switch_create(win, RANGE_OFF, 1024, &p, &s));
    T_ASSERT(contains(gpurma_last_error_message(t_ctx), var),
             "%s: the refusal does not name it: \"%s\"", var, gpurma_last_error_message(t_ctx));
}

/* The environment is read once, at init: main sets it for the mode, and
 * refuser names the variable that must be named (NULL: none refuses, the
 * host backend does). */
static void test_refusal(const char *refuser)
{
    expect_refused(refuser ? refuser : "host");
    /* the emulated switch asked for by name says so */
    gpurma_switch_params_t p = {GPURMA_SWITCH_FIELD_REQUEST, GPURMA_SWITCH_REQUEST_EMULATED};
    gpurma_switch_t s;
    gpurma_switch_info_t info;
    CHECK(gpurma_switch_create(win, 0, 64, &p, &s));
    CHECK(gpurma_switch_query(s, &info));
    T_ASSERT(info.mode == GPURMA_SWITCH_EMULATED && contains(info.reason, "requested"),
             "emulated request: mode %d reason \"%s\"", (int)info.mode, info.reason);
    CHECK(gpurma_switch_free(&s));

    /* members served by the port engine are not reachable by load/store */
    gpurma_win_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = GPURMA_WIN_FIELD_ENGINE;
    wp.engine = GPURMA_ENGINE_PORT;
    gpurma_win_t pw;
    void *pbase;
    if (gpurma_win_allocate(t_world, 4096, &wp, &pbase, &pw) == GPURMA_SUCCESS) {
        EXPECT_ERR(GPURMA_ERR_UNSUPPORTED, gpurma_switch_create(pw, 0, 1024, NULL, &s));
        T_ASSERT(contains(gpurma_last_error_message(t_ctx), "port engine"),
                 "port window refusal: \"%s\"", gpurma_last_error_message(t_ctx));
        CHECK(gpurma_win_free(&pw));
    }
}

/* ------------------------------------------- 5. the switch as an engine */

enum { SWE_PUT = 310, SWE_GET = 311 };
#define SWE_LEN 4099 /* odd: no access happens to be aligned by luck */

/* A window forced on the switch engine: every member on this node is
 * served by it, point-to-point calls land through the mem engine's
 * mappings, and a switch over the window broadcasts into every member. */
static void test_switch_window(void)
{
    gpurma_win_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = GPURMA_WIN_FIELD_ENGINE;
    wp.engine = GPURMA_ENGINE_SWITCH;
    gpurma_win_t sw_win;
    void *base;
    CHECK(gpurma_win_allocate(t_world, SWE_LEN, &wp, &base, &sw_win));
    unsigned char *m = base;
    for (int i = 0; i < t_size; i++)
        T_ASSERT(gpurma_win_engine(sw_win, i) == GPURMA_ENGINE_SWITCH,
                 "forced switch window: team rank %d is served by engine %d", i,
                 (int)gpurma_win_engine(sw_win, i));
    /* put_signal to the next rank at an odd offset and length */
    int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    size_t off = 3 + (size_t)t_rank, n = SWE_LEN - 2 * off;
    unsigned char *src = t_malloc(SWE_LEN), *want = t_malloc(SWE_LEN);
    memset(m, T_POISON, SWE_LEN);
    CHECK(gpurma_signal_reset(sw_win, 0));
    CHECK(gpurma_barrier(t_world));
    t_fill(src, n, t_seed(SWE_PUT, (uint64_t)t_rank, 0));
    CHECK(gpurma_put_signal(sw_win, next, off, src, n, 0, GPURMA_SIGNAL_ADD, 1));
    CHECK(gpurma_wait_until(sw_win, 0, GPURMA_CMP_EQ, 1));
    uint64_t sig = 0;
    CHECK(gpurma_signal_read(sw_win, 0, &sig));
    T_ASSERT(sig == 1, "signal after one put_signal: %llu", (unsigned long long)sig);
    size_t poff = 3 + (size_t)prev, pn = SWE_LEN - 2 * poff;
    t_fill(want, pn, t_seed(SWE_PUT, (uint64_t)prev, 0));
    t_verify_window(m, SWE_LEN, poff, want, pn, "put_signal through the switch engine", prev);
    /* get what the previous rank received, back from it */
    CHECK(gpurma_barrier(t_world));
    size_t qoff = 3 + (size_t)((prev + t_size - 1) % t_size), qn = SWE_LEN - 2 * qoff;
    unsigned char *got = t_malloc(SWE_LEN);
    memset(got, T_POISON, SWE_LEN);
    CHECK(gpurma_get(sw_win, prev, got + 1, qoff, qn));
    CHECK(gpurma_quiet(sw_win));
    t_fill(want, qn, t_seed(SWE_PUT, (uint64_t)((prev + t_size - 1) % t_size), 0));
    t_verify(got + 1, want, qn, "get through the switch engine", prev, qoff);
    t_verify_fill(got, T_POISON, 1, "get: byte before the destination", prev, 0);
    t_verify_fill(got + 1 + qn, T_POISON, SWE_LEN - 1 - qn, "get: bytes after the destination",
                  prev, qoff + qn);
    /* atomics: every rank adds its rank + 1 to rank 0's word at offset 8 */
    CHECK(gpurma_barrier(t_world));
    uint64_t zero = 0, old;
    if (t_rank == 0)
        memcpy(m + 8, &zero, 8);
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_atomic_fetch_add(sw_win, 0, 8, (uint64_t)t_rank + 1, &old));
    CHECK(gpurma_barrier(t_world));
    CHECK(gpurma_atomic_fetch_add(sw_win, 0, 8, 0, &old));
    T_ASSERT(old == (uint64_t)t_size * (uint64_t)(t_size + 1) / 2,
             "fetch_add through the switch engine: %llu", (unsigned long long)old);
    CHECK(gpurma_win_free(&sw_win));
    free(src);
    free(want);
    free(got);
}

/* The switch over a window forced on the switch engine: broadcasts as in
 * test_broadcast, on that window. */
static void test_switch_window_broadcast(void)
{
    gpurma_win_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = GPURMA_WIN_FIELD_ENGINE;
    wp.engine = GPURMA_ENGINE_SWITCH;
    gpurma_win_t saved_win = win;
    unsigned char *saved_mem = mem;
    gpurma_dev_switch_t saved_dsw = dsw;
    void *base;
    gpurma_switch_t s;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, &wp, &base, &win));
    mem = base;
    CHECK(gpurma_switch_create(win, RANGE_OFF, RANGE_LEN, NULL, &s));
    CHECK(gpurma_switch_device(s, &dsw));
    test_broadcast();
    CHECK(gpurma_switch_free(&s));
    CHECK(gpurma_win_free(&win));
    win = saved_win;
    mem = saved_mem;
    dsw = saved_dsw;
}

int main(int argc, char **argv)
{
    /* The mode says which variable refuses multicast (read once, at init):
     * none (the host backend refuses), "disable" (GPURMA_DISABLE_SWITCH,
     * first in the order: named even with the two others set), "nccl"
     * (NCCL_NVLS_ENABLE=0) or "nvshmem" (NVSHMEM_DISABLE_NVLS=1, with
     * NCCL_NVLS_ENABLE=1, which does not refuse). */
    const char *mode = argc > 1 ? argv[1] : "";
    const char *refuser = NULL;
    /* The host backend whatever the machine: the refusal cases unset
     * NCCL_NVLS_ENABLE and NVSHMEM_DISABLE_NVLS, which must never leave a
     * GPU's multicast checks to the driver (test_gpu_switch covers GPUs,
     * with them set). Opt in: the host backend must refuse anyway. */
    setenv("GPURMA_DEVICE", "host", 1);
    setenv("GPURMA_SWITCH", "1", 1);
    unsetenv("NCCL_NVLS_ENABLE");
    unsetenv("NVSHMEM_DISABLE_NVLS");
    if (!strcmp(mode, "disable")) {
        setenv("GPURMA_DISABLE_SWITCH", "1", 1);
        setenv("NCCL_NVLS_ENABLE", "0", 1);
        setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
        refuser = "GPURMA_DISABLE_SWITCH";
    } else if (!strcmp(mode, "nccl")) {
        setenv("NCCL_NVLS_ENABLE", "0", 1);
        refuser = "NCCL_NVLS_ENABLE";
    } else if (!strcmp(mode, "nvshmem")) {
        setenv("NCCL_NVLS_ENABLE", "1", 1);
        setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
        refuser = "NVSHMEM_DISABLE_NVLS";
    } else if (mode[0]) {
        fprintf(stderr, "test_switch: unknown mode %s (disable, nccl or nvshmem)\n", mode);
        return 2;
    }
    t_init("test_switch", 0);
    void *base;
    CHECK(gpurma_win_allocate(t_world, WIN_LEN, NULL, &base, &win));
    mem = base;
    /* Run with every window on the port engine (GPURMA_ENGINE=port, or
     * ranks split into nodes by tests/mp/engines-*.sh): a switch needs
     * members reachable by load/store and refuses; nothing else to test. */
    {
        gpurma_switch_t probe;
        t_arm_message();
        gpurma_status_t rc = gpurma_switch_create(win, 0, 64, NULL, &probe);
        if (rc == GPURMA_ERR_UNSUPPORTED) {
            T_ASSERT(contains(gpurma_last_error_message(t_ctx), "port engine"),
                     "refused for another reason: %s", gpurma_last_error_message(t_ctx));
            CHECK(gpurma_win_free(&win));
            t_finish("SKIP: members on the port engine, refused as they must be");
            return 77;
        }
        CHECK(rc);
        CHECK(gpurma_switch_free(&probe));
    }
    test_refusal(refuser);
    CHECK(gpurma_switch_create(win, RANGE_OFF, RANGE_LEN, NULL, &sw));
    CHECK(gpurma_switch_device(sw, &dsw));
    gpurma_switch_info_t info;
    CHECK(gpurma_switch_query(sw, &info));
    T_ASSERT(info.mode == GPURMA_SWITCH_EMULATED, "host backend: mode %d", (int)info.mode);
    if (!refuser) {
        test_reduce();
        test_broadcast();
        test_switch_window();
        test_switch_window_broadcast();
    }
    test_bad_input();
    CHECK(gpurma_switch_free(&sw));
    CHECK(gpurma_win_free(&win));
    return t_finish(refuser ? refuser : "");
}
