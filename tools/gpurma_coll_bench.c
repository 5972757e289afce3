/*
 * gpurma-coll-bench - time of the collectives of gpurma_coll.h, with the
 * columns of nccl-tests, and (on GPUs, builds with nccl.h) the system
 * NCCL measured in the same run in its two best modes.
 *
 *   mpirun -np N gpurma-coll-bench [options]
 *
 * Options:
 *   --coll LIST    allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall,
 *                  alltoallv or all (default all)
 *   --min SIZE     smallest size (default 1k); k, m, g suffixes
 *   --max SIZE     largest size (default 1g on GPUs, 16m on the host)
 *   --dtype T      int8 uint8 int32 uint32 int64 uint64 float16 bfloat16
 *                  float32 float64 (default float32)
 *   --op OP        sum prod min max avg (default sum)
 *   --iters N      timed operations per size at most (default 100; fewer for
 *                  large sizes, at least 5)
 *   --host         host buffers and stream NULL (the host backend); the
 *                  default without a GPU
 *   --gpu          GPU buffers on a stream (CUDA builds; default with a GPU)
 *   --graph MODE   GPU: off, on or both (default both): ops back to back on
 *                  the stream, or captured into one CUDA graph
 *   --no-nccl      GPU: leave NCCL out
 *   --no-floors    GPU: leave the floors out
 *   -h, --help
 *
 * Columns: size (bytes of the larger buffer of one rank, as nccl-tests),
 * count (its elements), type, redop, root, time (us, the slowest rank),
 * algbw = size / time, busbw = algbw x the collective's factor (allreduce
 * 2(n-1)/n; allgather, reduce_scatter, alltoall (n-1)/n; broadcast,
 * reduce 1), #wrong (elements not as expected in a checked run). With
 * NCCL: its time on plain buffers and on symmetric ones, and the ratio of
 * gpurma's time to the better of the two (below 1: gpurma is faster). NCCL
 * runs with NCCL_GRAPH_MIXING_SUPPORT=0 and NCCL_NVLS_ENABLE=0.
 *
 * alltoallv moves a mixture of experts' skewed traffic
 * (gpurma_coll_bench_skew.c: Zipf-hot ranks, scattered sources, empty
 * pairs); its size is the largest buffer of any rank, its busbw the bytes
 * the busiest rank sends to or receives from its peers over the time, and
 * NCCL runs it as grouped ncclSend/ncclRecv of the same counts (NCCL has no
 * alltoallv; MoE layers on NCCL do this).
 *
 * Floors (GPU, 2 to 64 ranks whose windows are load/store mapped), measured
 * first in the same run (gpurma_coll_bench_floors.cu) and printed as
 * "# floor ..." lines and four last columns:
 *   floor(us)    max(LL, B x factor / copy): LL is the time of one kernel
 *                in which every rank stores a 16-byte LL packet into every
 *                peer and waits for every peer's (timed like the
 *                collectives: same op count, same graph mode); B x factor
 *                the bytes a rank must move over its links (busbw's
 *                factor) and copy the SM copy bandwidth into a peer, every
 *                rank copying at once (the slowest rank's)
 *   x_floor      time / floor(us)
 *   floor_busbw  the SM copy bandwidth: the busbw of a collective that
 *                moved its bytes at copy speed (sizes from 1 MiB)
 *   busbw/floor  busbw / floor_busbw (sizes from 1 MiB)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gpurma.h"
#include "gpurma_coll.h"
#include "gpurma_coll_bench.h"
#include "gpurma/detail/dev_reduce.h"

static const char *const kind_names[CB_KINDS] = {"allreduce", "allgather", "reduce_scatter",
                                                 "broadcast", "reduce",    "alltoall",
                                                 "alltoallv"};
static const char *const dtype_names[] = {"int8",    "uint8",    "int32",   "uint32",
                                          "int64",   "uint64",   "float16", "bfloat16",
                                          "float32", "float64"};
static const char *const op_names[] = {"sum", "prod", "min", "max", "avg"};

typedef struct {
    unsigned kinds; /* bit per CB_* */
    size_t   min, max;
    int      dtype, op, iters, gpu, graph_modes, nccl, max_given, floors;
} opts_t;

static gpurma_ctx_t ctx;
static gpurma_team_t world;
static int me, nranks;
/* The floors of this run (GPU): us per LL exchange by graph mode, the SM
 * copy bandwidth into a peer in GB/s. */
static int have_floors;
static double floor_ll_us[2], floor_copy_gbs;

static void usage(FILE *f)
{
    fputs("usage: mpirun -np N gpurma-coll-bench [--coll LIST|all] [--min SIZE] [--max SIZE]\n"
          "         [--dtype T] [--op OP] [--iters N] [--host|--gpu] [--graph off|on|both]\n"
          "         [--no-nccl] [--no-floors]\n"
          "Times gpurma's collectives with nccl-tests' columns (size count type redop root\n"
          "time algbw busbw #wrong); on GPUs also NCCL on plain and symmetric buffers in the\n"
          "same run (nccl(us) nccl_sym, and ratio: gpurma's time over the better NCCL mode).\n"
          "On GPUs the floors of the same GPUs, measured first, end each row:\n"
          "  floor(us)    max(LL, bytes a rank moves / copy), where LL is one kernel in which\n"
          "               every rank stores a 16-byte LL packet into every peer and waits for\n"
          "               all of theirs (same op count and graph mode as the table), bytes =\n"
          "               size x busbw's factor, copy = SM copy bandwidth into a peer with\n"
          "               every rank copying at once (the slowest rank's)\n"
          "  x_floor      time / floor(us)\n"
          "  floor_busbw  copy: the busbw of moving the bytes at copy speed (from 1 MiB)\n"
          "  busbw/floor  busbw / floor_busbw (from 1 MiB)\n"
          "busbw factors: allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall (n-1)/n;\n"
          "broadcast, reduce 1. alltoallv: a mixture of experts' skewed counts (Zipf-hot\n"
          "ranks, empty pairs; NCCL: grouped send/recv), size = the largest buffer of any\n"
          "rank, busbw = bytes the busiest rank moves to or from peers / time.\n"
          "The host backend has no floors.\n",
          f);
}

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static int parse(int argc, char **argv, opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--host")) {
            o->gpu = 0;
        } else if (!strcmp(a, "--gpu")) {
            o->gpu = 1;
        } else if (!strcmp(a, "--no-nccl")) {
            o->nccl = 0;
        } else if (!strcmp(a, "--no-floors")) {
            o->floors = 0;
        } else if (!v) {
            fprintf(stderr, "gpurma-coll-bench: %s needs a value\n", a);
            return 2;
        } else if (!strcmp(a, "--coll")) {
            o->kinds = 0;
            char buf[256];
            snprintf(buf, sizeof(buf), "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = lookup(t, kind_names, CB_KINDS);
                if (!strcmp(t, "all"))
                    o->kinds = (1u << CB_KINDS) - 1;
                else if (k < 0) {
                    fprintf(stderr, "gpurma-coll-bench: unknown collective %s\n", t);
                    return 2;
                } else
                    o->kinds |= 1u << k;
            }
            i++;
        } else if (!strcmp(a, "--min") || !strcmp(a, "--max")) {
            size_t s;
            if (parse_size(v, (size_t)1 << 40, &s)) {
                fprintf(stderr, "gpurma-coll-bench: bad size %s\n", v);
                return 2;
            }
            if (a[2] == 'm' && a[3] == 'i')
                o->min = s;
            else
                o->max = s, o->max_given = 1;
            i++;
        } else if (!strcmp(a, "--dtype") || !strcmp(a, "--op")) {
            int d = a[2] == 'd' ? lookup(v, dtype_names, 10) : lookup(v, op_names, 5);
            if (d < 0) {
                fprintf(stderr, "gpurma-coll-bench: unknown %s %s\n", a + 2, v);
                return 2;
            }
            *(a[2] == 'd' ? &o->dtype : &o->op) = d;
            i++;
        } else if (!strcmp(a, "--iters")) {
            o->iters = atoi(v);
            if (o->iters < 1) {
                fprintf(stderr, "gpurma-coll-bench: bad --iters %s\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--graph")) {
            o->graph_modes = !strcmp(v, "off") ? 1 : !strcmp(v, "on") ? 2 : !strcmp(v, "both") ? 3 : 0;
            if (!o->graph_modes) {
                fprintf(stderr, "gpurma-coll-bench: --graph takes off, on or both\n");
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "gpurma-coll-bench: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (o->min < 1 || o->min > o->max) {
        fprintf(stderr, "gpurma-coll-bench: need 1 <= --min <= --max\n");
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------ data */

/* Small integers, exact in every type and in sums over up to 32 ranks:
 * element i of rank r. */
static double value(int r, size_t i) { return (double)((r * 3 + i) % 8 + 1); }

static void put_elem(void *buf, int t, size_t i, double v)
{
    char *p = (char *)buf + i * gpurma_dev_dtype_size((gpurma_dtype_t)t);
    switch (t) {
    case GPURMA_INT8: case GPURMA_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case GPURMA_INT32: case GPURMA_UINT32: *(uint32_t *)p = (uint32_t)v; break;
    case GPURMA_INT64: case GPURMA_UINT64: *(uint64_t *)p = (uint64_t)v; break;
    case GPURMA_FLOAT16: *(uint16_t *)p = gpurma_dev_f32_to_f16((float)v); break;
    case GPURMA_BFLOAT16: *(uint16_t *)p = gpurma_dev_f32_to_bf16((float)v); break;
    case GPURMA_FLOAT32: *(float *)p = (float)v; break;
    default: *(double *)p = v; break;
    }
}

static double get_elem(const void *buf, int t, size_t i)
{
    const char *p = (const char *)buf + i * gpurma_dev_dtype_size((gpurma_dtype_t)t);
    switch (t) {
    case GPURMA_INT8: return *(const int8_t *)p;
    case GPURMA_UINT8: return *(const uint8_t *)p;
    case GPURMA_INT32: return *(const int32_t *)p;
    case GPURMA_UINT32: return *(const uint32_t *)p;
    case GPURMA_INT64: return (double)*(const int64_t *)p;
    case GPURMA_UINT64: return (double)*(const uint64_t *)p;
    case GPURMA_FLOAT16: return gpurma_dev_f16_to_f32(*(const uint16_t *)p);
    case GPURMA_BFLOAT16: return gpurma_dev_bf16_to_f32(*(const uint16_t *)p);
    case GPURMA_FLOAT32: return *(const float *)p;
    default: return *(const double *)p;
    }
}

/* op over ranks of value(r, i), as the small integers combine; AVG of
 * integer types truncates. */
static double reduced(int op, int t, size_t i)
{
    double acc = value(0, i);
    for (int r = 1; r < nranks; r++) {
        double v = value(r, i);
        acc = op == GPURMA_PROD ? acc * v : op == GPURMA_MIN ? (v < acc ? v : acc)
              : op == GPURMA_MAX ? (v > acc ? v : acc) : acc + v;
    }
    if (op == GPURMA_AVG) {
        acc /= nranks;
        if (t < GPURMA_FLOAT16)
            acc = (double)(long long)acc;
    }
    return acc;
}

/* alltoallv: the matrix of the size in hand, and what element j of this
 * rank's recv must hold (from the peer whose block holds j). */
static cb_skew_t skew;

static double v_expected(size_t j)
{
    for (int p = 0; p < nranks; p++) {
        size_t at = cb_skew_recv_displ(&skew, me, p), cnt = skew.count[(size_t)p * nranks + me];
        if (j >= at && j < at + cnt)
            return value(p, cb_skew_send_displ(&skew, p, me) + (j - at));
    }
    return -1; /* no block: recv is packed, not reached */
}

/* Elements of recv (recv_elems) not as op requires; small-integer data, so
 * floats compare exactly except PROD, AVG and 16-bit types (relative 1%). */
static long count_wrong(const cb_op_t *op, const void *recv, size_t recv_elems)
{
    long bad = 0;
    size_t c = op->count;
    for (size_t j = 0; j < recv_elems; j++) {
        double want;
        switch (op->kind) {
        case CB_ALLREDUCE: want = reduced(op->op, op->dtype, j); break;
        case CB_REDUCE: if (me != op->root) return 0; want = reduced(op->op, op->dtype, j); break;
        case CB_REDUCE_SCATTER: want = reduced(op->op, op->dtype, (size_t)me * c + j); break;
        case CB_ALLGATHER: want = value((int)(j / c), j % c); break;
        case CB_ALLTOALL: want = value((int)(j / c), (size_t)me * c + j % c); break;
        case CB_ALLTOALLV: want = v_expected(j); break;
        default: want = value(op->root, j); break;
        }
        double got = get_elem(recv, op->dtype, j);
        /* integers wrap like the type does */
        if (op->dtype < GPURMA_FLOAT16) {
            size_t es = gpurma_dev_dtype_size(op->dtype);
            uint64_t w = (uint64_t)(long long)want, g = (uint64_t)(long long)got;
            if (es < 8)
                w &= (1ull << (8 * es)) - 1, g &= (1ull << (8 * es)) - 1;
            bad += w != g;
        } else {
            double tol = (op->op == GPURMA_PROD || op->op == GPURMA_AVG ||
                          op->dtype <= GPURMA_BFLOAT16) ? 0.01 * (want < 0 ? -want : want) : 0;
            double d = got - want;
            bad += !(d <= tol && -d <= tol);
        }
    }
    return bad;
}

/* ------------------------------------------------------------ host backend */

static unsigned char *h_send, *h_recv;

static gpurma_status_t host_run(const cb_op_t *o)
{
    switch (o->kind) {
    case CB_ALLREDUCE: return gpurma_allreduce(world, h_send, h_recv, o->count, o->dtype, o->op, NULL);
    case CB_ALLGATHER: return gpurma_allgather(world, h_send, h_recv, o->count, o->dtype, NULL);
    case CB_REDUCE_SCATTER: return gpurma_reduce_scatter(world, h_send, h_recv, o->count, o->dtype, o->op, NULL);
    case CB_BROADCAST: return gpurma_broadcast(world, h_send, h_recv, o->count, o->dtype, o->root, NULL);
    case CB_REDUCE: return gpurma_reduce(world, h_send, h_recv, o->count, o->dtype, o->op, o->root, NULL);
    case CB_ALLTOALLV:
        return gpurma_alltoallv(world, h_send, o->v->send_counts, o->v->send_displs, h_recv,
                                o->v->recv_counts, o->v->recv_displs, o->dtype, NULL);
    default: return gpurma_alltoall(world, h_send, h_recv, o->count, o->dtype, NULL);
    }
}

static int host_time(const cb_op_t *o, int iters, double *us)
{
    for (int i = 0; i < 3; i++)
        if (host_run(o))
            return 1;
    if (gpurma_barrier(world))
        return 1;
    double t0 = now_s();
    for (int i = 0; i < iters; i++)
        if (host_run(o))
            return 1;
    *us = (now_s() - t0) * 1e6 / iters;
    return 0;
}

/* ------------------------------------------------------------ the run */

static void fail(const char *what, int rc)
{
    fprintf(stderr, "gpurma-coll-bench: rank %d: %s: %s (%s)\n", me, what,
            gpurma_strerror((gpurma_status_t)rc), gpurma_last_error_message(ctx));
    gpurma_abort(ctx, 1, what);
}

/* The slowest rank's time. */
static double slowest(double us)
{
    double all = 0;
    int rc = gpurma_allreduce(world, &us, &all, 1, GPURMA_FLOAT64, GPURMA_MAX, NULL);
    if (rc)
        fail("allreduce of the times", rc);
    return all;
}

static int upload(const opts_t *o, int impl, const void *h, size_t bytes)
{
#ifdef HAVE_CUDA
    if (o->gpu)
        return cbg_upload(impl, h, bytes);
#endif
    (void)o, (void)impl;
    memcpy(h_send, h, bytes);
    return 0;
}

/* One checked run of impl; the number of wrong elements. */
static long checked(const opts_t *o, int impl, const cb_op_t *op, size_t recv_bytes,
                    unsigned char *scratch)
{
    size_t es = gpurma_dev_dtype_size(op->dtype);
    memset(scratch, 0xA5, recv_bytes);
#ifdef HAVE_CUDA
    if (o->gpu) {
        if (cbg_poison(impl, recv_bytes) || cbg_run(impl, op) ||
            cbg_download(impl, scratch, recv_bytes))
            return -1;
        return count_wrong(op, scratch, recv_bytes / es);
    }
#endif
    (void)o, (void)impl;
    memset(h_recv, 0xA5, recv_bytes);
    int rc = host_run(op);
    if (rc)
        fail(kind_names[op->kind], rc);
    return count_wrong(op, h_recv, recv_bytes / es);
}

/* alltoallv at a size whose largest buffer holds max_elems: the matrix,
 * this rank's arrays (v), its bytes to send and receive, and the elements
 * the busiest rank moves to or from its peers (busbw's numerator). */
static size_t v_sizes(size_t max_elems, size_t es, const cb_v_t *v, size_t *send_bytes,
                      size_t *recv_bytes)
{
    cb_skew_free(&skew);
    if (cb_skew_build(nranks, max_elems, &skew))
        fail("out of memory", GPURMA_ERR_NO_MEMORY);
    size_t *sc = (size_t *)v->send_counts, *sd = (size_t *)v->send_displs;
    size_t *rc = (size_t *)v->recv_counts, *rd = (size_t *)v->recv_displs;
    size_t out = 0, in = 0;
    for (int p = 0; p < nranks; p++) {
        sc[p] = skew.count[(size_t)me * nranks + p];
        sd[p] = cb_skew_send_displ(&skew, me, p);
        rc[p] = skew.count[(size_t)p * nranks + me];
        rd[p] = cb_skew_recv_displ(&skew, me, p);
        out += sc[p], in += rc[p];
    }
    *send_bytes = out * es;
    *recv_bytes = in * es;
    return cb_skew_busiest(&skew);
}

/* What each rank receives and sends, as a share of the largest buffer
 * (rank 0 is the hottest), and the empty pairs. */
static void print_skew(void)
{
    const size_t scale = 1000000;
    if (cb_skew_build(nranks, scale, &skew))
        fail("out of memory", GPURMA_ERR_NO_MEMORY);
    int empty = 0;
    printf("# skew (%% of the largest buffer) rank:recv/send");
    for (int a = 0; a < nranks; a++) {
        size_t in = 0, out = 0;
        for (int b = 0; b < nranks; b++) {
            in += skew.count[(size_t)b * nranks + a];
            out += skew.count[(size_t)a * nranks + b];
            empty += !skew.count[(size_t)a * nranks + b];
        }
        printf(" %d:%.0f/%.0f", a, 100.0 * in / scale, 100.0 * out / scale);
    }
    printf("; %d of %d pairs empty\n", empty, nranks * nranks);
    cb_skew_free(&skew);
}

/* The floor columns of a row: total bytes, busbw's factor, the graph mode,
 * gpurma's time and busbw. */
static void print_floors(size_t total, double factor, int graph, double us, double busbw)
{
    double copy_us = (double)total * factor / (floor_copy_gbs * 1e3);
    double floor_us = floor_ll_us[graph] > copy_us ? floor_ll_us[graph] : copy_us;
    printf(" %10.2f %8.3f", floor_us, us / floor_us);
    if (total >= ((size_t)1 << 20))
        printf(" %11.2f %11.3f", floor_copy_gbs, busbw / floor_copy_gbs);
    else
        printf(" %11s %11s", "-", "-");
}

static void run_kind(const opts_t *o, int kind, int graph, unsigned char *host_in,
                     unsigned char *scratch)
{
    const size_t es = gpurma_dev_dtype_size((gpurma_dtype_t)o->dtype);
    const int per_rank = kind == CB_ALLGATHER || kind == CB_REDUCE_SCATTER || kind == CB_ALLTOALL;
    double factor = kind == CB_ALLREDUCE ? 2.0 * (nranks - 1) / nranks
                    : kind == CB_BROADCAST || kind == CB_REDUCE ? 1.0
                                                                : (double)(nranks - 1) / nranks;
    size_t *v_arrays = calloc(4 * (size_t)nranks, sizeof(size_t));
    if (!v_arrays)
        fail("out of memory", GPURMA_ERR_NO_MEMORY);
    const cb_v_t v = {v_arrays, v_arrays + nranks, v_arrays + 2 * nranks, v_arrays + 3 * nranks};
    int nccl = 0;
#ifdef HAVE_CUDA
    nccl = o->gpu && (cbg_available(CB_NCCL_PLAIN) || cbg_available(CB_NCCL_SYM));
#endif
    if (me == 0) {
        printf("\n# %s, %d ranks, %s%s\n", kind_names[kind], nranks,
               o->gpu ? "GPU buffers on a stream" : "host buffers (stream NULL)",
               o->gpu ? (graph ? ", CUDA graph" : ", no graph") : "");
        if (kind == CB_ALLTOALLV)
            print_skew();
        printf("# %12s %12s %9s %6s %5s %11s %9s %9s %7s", "size", "count", "type", "redop",
               "root", "time(us)", "algbw", "busbw", "#wrong");
        if (nccl)
            printf(" %11s %11s %7s", "nccl(us)", "nccl_sym", "ratio");
        if (have_floors)
            printf(" %10s %8s %11s %11s", "floor(us)", "x_floor", "floor_busbw", "busbw/floor");
        printf("\n");
    }
    for (size_t size = o->min; size <= o->max; size *= 2) {
        size_t unit = es * (per_rank ? (size_t)nranks : 1);
        size_t elems = size / unit; /* per rank / pair, or the whole buffer */
        if (!elems)
            continue;
        cb_op_t op = {kind, elems, (gpurma_dtype_t)o->dtype, (gpurma_redop_t)o->op, 0, &v};
        size_t total = elems * unit, send_bytes = kind == CB_ALLGATHER ? elems * es : total;
        size_t recv_bytes = kind == CB_REDUCE_SCATTER ? elems * es : total;
        if (kind == CB_ALLTOALLV)
            factor = v_sizes(elems, es, &v, &send_bytes, &recv_bytes) * es / (double)total;
        size_t in_elems = send_bytes / es;
        for (size_t i = 0; i < in_elems; i++)
            put_elem(host_in, o->dtype, i, value(me, i));
        int iters = (int)clamp_long((long)((256ull << 20) / total), 5, o->iters);
        double t[CB_IMPLS] = {0};
        long wrong[CB_IMPLS] = {0};
        for (int impl = 0; impl < CB_IMPLS; impl++) {
            int avail = impl == CB_GPURMA;
#ifdef HAVE_CUDA
            avail = o->gpu ? cbg_available(impl) : avail;
#endif
            if (!avail)
                continue;
            if (upload(o, impl, host_in, send_bytes))
                fail("upload", GPURMA_ERR_GPU);
            wrong[impl] = checked(o, impl, &op, recv_bytes, scratch);
            int rc = 0;
#ifdef HAVE_CUDA
            if (o->gpu)
                rc = cbg_time(impl, &op, iters, graph, &t[impl]);
            else
#endif
                rc = host_time(&op, iters, &t[impl]);
            if (rc)
                fail("timing", GPURMA_ERR_INTERNAL);
            t[impl] = slowest(t[impl]);
        }
        if (me == 0) {
            double algbw = (double)total / (t[0] * 1e3);
            printf("  %12zu %12zu %9s %6s %5d %11.2f %9.2f %9.2f %7ld", total, total / es,
                   dtype_names[o->dtype], op_names[o->op], 0, t[0], algbw, algbw * factor,
                   wrong[0]);
            if (nccl) {
                double best = 0;
                for (int impl = CB_NCCL_PLAIN; impl < CB_IMPLS; impl++)
                    if (t[impl] > 0 && (best == 0 || t[impl] < best))
                        best = t[impl];
                printf(" %11.2f %11.2f %7.3f", t[CB_NCCL_PLAIN], t[CB_NCCL_SYM],
                       best > 0 ? t[0] / best : 0.0);
            }
            if (have_floors)
                print_floors(total, factor, graph, t[0], algbw * factor);
            if (nccl && (wrong[CB_NCCL_PLAIN] || wrong[CB_NCCL_SYM]))
                printf("  (nccl #wrong %ld/%ld)", wrong[CB_NCCL_PLAIN], wrong[CB_NCCL_SYM]);
            printf("\n");
        }
        if (size > ((size_t)1 << 62) / 2)
            break;
    }
    free(v_arrays);
    cb_skew_free(&skew);
}

/* The floors of this run, before the collectives' buffers exist (their
 * window of 256 MiB + 4 KiB is freed again); the slowest rank's figures. */
static void measure_floors(const opts_t *o)
{
#ifdef HAVE_CUDA
    const size_t copy_bytes = (size_t)256 << 20;
    cbg_floor_params_t fp = {(int)clamp_long((long)((256ull << 20) / 16), 5, o->iters),
                             o->graph_modes, copy_bytes};
    cbg_floors_t f;
    int rc = cbg_floors(world, &fp, &f);
    if (rc == 77) {
        if (me == 0)
            printf("# no floors: %s\n", f.why);
        return;
    }
    if (rc)
        fail("floors", GPURMA_ERR_GPU);
    for (int g = 0; g < 2; g++)
        floor_ll_us[g] = slowest(f.ll_us[g]);
    double gbs = 0;
    rc = gpurma_allreduce(world, &f.copy_gbs, &gbs, 1, GPURMA_FLOAT64, GPURMA_MIN, NULL);
    if (rc)
        fail("allreduce of the copy bandwidths", rc);
    floor_copy_gbs = gbs;
    have_floors = gbs > 0;
    if (me == 0) {
        printf("# floor ll_exchange_us");
        for (int g = 0; g < 2; g++)
            if ((o->graph_modes >> g) & 1)
                printf(" %s %.3f", g ? "graph" : "no_graph", floor_ll_us[g]);
        printf("  (one kernel per op: a 16-byte LL packet to every peer, then all of theirs"
               " awaited; %d ops, slowest rank)\n", fp.iters);
        printf("# floor sm_copy_GBps %.2f  (%zu MiB from every rank into the next rank's"
               " window at once, slowest rank)\n", floor_copy_gbs, copy_bytes >> 20);
    }
#else
    (void)o;
#endif
}

int main(int argc, char **argv)
{
    opts_t o = {(1u << CB_KINDS) - 1, 1024, 16u << 20, GPURMA_FLOAT32, GPURMA_SUM, 100, -1, 3, 1, 0,
                1};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
#ifdef HAVE_CUDA
    /* Before any CUDA call: kernels wait for kernels launched after them
     * (a peer's), which lazy loading would make wait for the first. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    if (o.gpu < 0)
        o.gpu = cbg_have_gpu();
    if (o.gpu == 1 && !cbg_have_gpu()) {
        fprintf(stderr, "gpurma-coll-bench: --gpu: no GPU here\n");
        return 77;
    }
#else
    if (o.gpu == 1) {
        fprintf(stderr, "gpurma-coll-bench: --gpu needs a build with CUDA\n");
        return 2;
    }
    o.gpu = 0;
#endif
    gpurma_init_params_t p = {0};
    if (o.gpu == 0) {
        p.field_mask = GPURMA_INIT_FIELD_DEVICE;
        p.device = GPURMA_DEVICE_HOST;
    }
    rc = gpurma_init(&p, &ctx);
    if (rc) {
        fprintf(stderr, "gpurma-coll-bench: init: %s (%s)\n", gpurma_strerror(rc),
                gpurma_last_error_message(NULL));
        return 1;
    }
    world = gpurma_team_world(ctx);
    me = gpurma_team_rank(world);
    nranks = gpurma_team_size(world);
    if (!o.max_given)
        o.max = o.gpu ? (size_t)1 << 30 : (size_t)16 << 20;
    size_t max_total = o.max + (size_t)nranks * 16;
    unsigned char *host_in = malloc(max_total), *scratch = malloc(max_total);
    if (!host_in || !scratch)
        fail("out of memory", GPURMA_ERR_NO_MEMORY);
    if (me == 0)
        printf("# gpurma-coll-bench: %d ranks, %s, dtype %s, op %s, %zu B .. %zu B\n", nranks,
               o.gpu ? "GPU" : "host backend", dtype_names[o.dtype], op_names[o.op], o.min,
               o.max);
    if (o.gpu && o.floors)
        measure_floors(&o);
    else if (me == 0)
        printf("# no floors: %s\n", o.gpu ? "--no-floors" : "they are measured on GPUs only");
#ifdef HAVE_CUDA
    if (o.gpu && cbg_setup(world, max_total, max_total, o.nccl))
        fail("GPU setup", GPURMA_ERR_GPU);
#endif
    if (!o.gpu) {
        h_send = malloc(max_total);
        h_recv = malloc(max_total);
        if (!h_send || !h_recv)
            fail("out of memory", GPURMA_ERR_NO_MEMORY);
    }
    for (int kind = 0; kind < CB_KINDS; kind++) {
        if (!(o.kinds & (1u << kind)))
            continue;
        for (int graph = 0; graph < 2; graph++)
            if (o.gpu ? (o.graph_modes >> graph) & 1 : !graph)
                run_kind(&o, kind, graph, host_in, scratch);
    }
#ifdef HAVE_CUDA
    if (o.gpu)
        cbg_teardown();
#endif
    free(host_in), free(scratch), free(h_send), free(h_recv);
    rc = gpurma_finalize(ctx);
    return rc ? 1 : 0;
}
