/*
 * coll.c - the collectives on gpurma_coll.h, PreMulSum operators, buffer
 * registration and ncclMemAlloc.
 *
 * NCCL forms that gpurma_coll.h has no call for are rebuilt here from
 * calls it has: gather and scatter are alltoallv with one non-empty column
 * or row; NCCL's in-place reduce-scatter (recv inside send at this rank's
 * block) reduces into scratch and copies; PreMulSum scales into scratch
 * and sums. Data-moving calls take FP8 as bytes; FP8 reductions widen to
 * float in scratch, reduce as float and narrow back (fp8.c, gpu_fp8.cu).
 * What gpurma refuses as unsupported goes to the real NCCL when
 * GPURMA_NCCL_FALLBACK names one.
 */
#include <stdlib.h>
#include <string.h>

#include "nccl_internal.h"

static const char *const op_names[NCCL_OP_KINDS] = {
    [NCCL_OP_ALLREDUCE] = "ncclAllReduce", [NCCL_OP_ALLGATHER] = "ncclAllGather",
    [NCCL_OP_REDUCE_SCATTER] = "ncclReduceScatter", [NCCL_OP_BROADCAST] = "ncclBroadcast",
    [NCCL_OP_REDUCE] = "ncclReduce", [NCCL_OP_ALLTOALL] = "ncclAlltoAll",
    [NCCL_OP_GATHER] = "ncclGather", [NCCL_OP_SCATTER] = "ncclScatter",
    [NCCL_OP_SEND] = "ncclSend", [NCCL_OP_RECV] = "ncclRecv", [NCCL_OP_INIT] = "ncclCommInit",
    [NCCL_OP_SPLIT] = "ncclCommSplit",
};

const char *gpurma_nccl_op_name(nccl_op_kind_t kind)
{
    return kind >= 0 && kind < NCCL_OP_KINDS ? op_names[kind] : "?";
}

size_t gpurma_nccl_dtype_size(ncclDataType_t dtype)
{
    switch (dtype) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

/* -1 for FP8, which gpurma cannot reduce. */
static int gpurma_dtype(ncclDataType_t dtype)
{
    switch (dtype) {
    case ncclInt8:     return GPURMA_INT8;
    case ncclUint8:    return GPURMA_UINT8;
    case ncclInt32:    return GPURMA_INT32;
    case ncclUint32:   return GPURMA_UINT32;
    case ncclInt64:    return GPURMA_INT64;
    case ncclUint64:   return GPURMA_UINT64;
    case ncclFloat16:  return GPURMA_FLOAT16;
    case ncclBfloat16: return GPURMA_BFLOAT16;
    case ncclFloat32:  return GPURMA_FLOAT32;
    case ncclFloat64:  return GPURMA_FLOAT64;
    default:           return -1;
    }
}

/* Moving data needs only the element size. */
static gpurma_dtype_t copy_dtype(ncclDataType_t dtype)
{
    int d = gpurma_dtype(dtype);
    return d >= 0 ? (gpurma_dtype_t)d : GPURMA_UINT8;
}

void *gpurma_nccl_stream(ncclComm_t comm, void *stream)
{
    /* cudaStreamLegacy: what NCCL's stream 0 means */
    return comm->gpu && !stream ? (void *)0x1 : stream;
}

ncclResult_t gpurma_nccl_scratch(ncclComm_t comm, size_t bytes, void *stream, nccl_scratch_t *out)
{
    if (comm->gpu && gpurma_nccl_gpu_stream_capturing(stream)) {
        /* A captured graph must not hold the communicator's scratch (it may
         * be reallocated after the capture), nor stream-ordered memory:
         * during the capture that is no GPU memory yet to gpurma's check of
         * stream buffers (cudaPointerGetAttributes: unregistered), which
         * refuses it. The graph gets a buffer of its own, kept until the
         * communicator goes, since the graph may be replayed until then. */
        void **list = realloc(comm->graph_scratch, (comm->graph_scratch_n + 1) * sizeof(*list));
        if (!list)
            return gpurma_nccl_fail(comm, ncclSystemError, "no memory for a scratch list");
        comm->graph_scratch = list;
        if (gpurma_nccl_gpu_malloc_relaxed(&out->ptr, bytes ? bytes : 1))
            return gpurma_nccl_fail(comm, ncclUnhandledCudaError,
                                    "cudaMalloc of %zu bytes of scratch in a graph capture "
                                    "failed", bytes);
        list[comm->graph_scratch_n++] = out->ptr;
        return ncclSuccess;
    }
    if (bytes <= comm->scratch_bytes) {
        out->ptr = comm->scratch;
        return ncclSuccess;
    }
    void *p = NULL;
    if (comm->gpu) {
        if (gpurma_nccl_gpu_malloc(&p, bytes))
            return gpurma_nccl_fail(comm, ncclUnhandledCudaError,
                                    "cudaMalloc of %zu bytes of scratch failed", bytes);
        if (comm->scratch) /* cudaFree waits for the work that used it */
            gpurma_nccl_gpu_free(comm->scratch);
    } else {
        p = malloc(bytes);
        if (!p)
            return gpurma_nccl_fail(comm, ncclSystemError, "no memory for %zu bytes of scratch",
                                    bytes);
        free(comm->scratch);
    }
    comm->scratch = p;
    comm->scratch_bytes = bytes;
    out->ptr = p;
    return ncclSuccess;
}

/* ------------------------------------------------------- PreMulSum */

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man) { /* subnormal: normalize */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    } else {
        bits = sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Round to nearest even, with overflow to infinity and subnormals. */
static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u)
        return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) /* rounds past 65504 */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x33000001u) /* below half the smallest subnormal */
        return (uint16_t)sign;
    int exp = (int)(ax >> 23) - 127;
    uint32_t man = (ax & 0x7fffff) | 0x800000;
    int shift = exp < -14 ? 13 + (-14 - exp) : 13;
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1)))
        q++;
    if (exp < -14)
        return (uint16_t)(sign | q);
    return (uint16_t)(sign | (((uint32_t)(exp + 15) << 10) + (q - 0x400)));
}

static float bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* dst = src * scalar in the element type, as NCCL's PreMulSum does. */
static void scale_host(void *dst, const void *src, size_t n, ncclDataType_t dtype, double s)
{
#define SCALE_INT(T)                                     \
    for (size_t i = 0; i < n; i++)                       \
        ((T *)dst)[i] = (T)(((const T *)src)[i] * (T)s); \
    break;
    switch (dtype) {
    case ncclInt8:    SCALE_INT(int8_t)
    case ncclUint8:   SCALE_INT(uint8_t)
    case ncclInt32:   SCALE_INT(int32_t)
    case ncclUint32:  SCALE_INT(uint32_t)
    case ncclInt64:   SCALE_INT(int64_t)
    case ncclUint64:  SCALE_INT(uint64_t)
    case ncclFloat32: SCALE_INT(float)
    case ncclFloat64: SCALE_INT(double)
    case ncclFloat16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = float_to_half(half_to_float(((const uint16_t *)src)[i]) *
                                                 half_to_float(float_to_half((float)s)));
        break;
    case ncclBfloat16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = float_to_bf16(bf16_to_float(((const uint16_t *)src)[i]) *
                                                 bf16_to_float(float_to_bf16((float)s)));
        break;
    default: break;
    }
#undef SCALE_INT
}

static double scalar_from(const void *p, ncclDataType_t dtype)
{
    switch (dtype) {
    case ncclInt8:     return *(const int8_t *)p;
    case ncclUint8:    return *(const uint8_t *)p;
    case ncclInt32:    return *(const int32_t *)p;
    case ncclUint32:   return *(const uint32_t *)p;
    case ncclInt64:    return (double)*(const int64_t *)p;
    case ncclUint64:   return (double)*(const uint64_t *)p;
    case ncclFloat16:  return half_to_float(*(const uint16_t *)p);
    case ncclBfloat16: return bf16_to_float(*(const uint16_t *)p);
    case ncclFloat32:  return *(const float *)p;
    case ncclFloat64:  return *(const double *)p;
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return gpurma_nccl_fp8_to_float(*(const uint8_t *)p, dtype);
    default:           return 0;
    }
}

NCCL_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
                                               ncclDataType_t datatype,
                                               ncclScalarResidence_t residence, ncclComm_t comm)
{
    ncclResult_t res = gpurma_nccl_check_comm(comm, "ncclRedOpCreatePreMulSum");
    if (res != ncclSuccess)
        return res;
    if (!op || !scalar || !gpurma_nccl_dtype_size(datatype) ||
        (residence != ncclScalarDevice && residence != ncclScalarHostImmediate))
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "ncclRedOpCreatePreMulSum: op %p, scalar %p, dtype %d, residence "
                                "%d", (void *)op, scalar, (int)datatype, (int)residence);
    if (residence == ncclScalarDevice && !comm->gpu)
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "ncclRedOpCreatePreMulSum: ncclScalarDevice on a communicator "
                                "without a GPU");
    pthread_mutex_lock(&comm->lock);
    int i = 0;
    while (i < NCCL_MAX_USER_OPS && comm->ops[i].live)
        i++;
    if (i == NCCL_MAX_USER_OPS) {
        pthread_mutex_unlock(&comm->lock);
        return gpurma_nccl_fail(comm, ncclInvalidUsage,
                                "ncclRedOpCreatePreMulSum: %d operators live; destroy some",
                                NCCL_MAX_USER_OPS);
    }
    comm->ops[i] = (nccl_user_op_t){.live = 1, .dtype = datatype,
                                    .on_device = residence == ncclScalarDevice};
    if (residence == ncclScalarDevice)
        comm->ops[i].scalar_dev = scalar;
    else
        comm->ops[i].scalar_host = scalar_from(scalar, datatype);
    pthread_mutex_unlock(&comm->lock);
    *op = (ncclRedOp_t)(ncclNumOps + i);
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclRedOpCreatePreMulSum)

NCCL_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    ncclResult_t res = gpurma_nccl_check_comm_cleanup(comm, "ncclRedOpDestroy");
    if (res != ncclSuccess)
        return res;
    int i = (int)op - ncclNumOps;
    if (i < 0 || i >= NCCL_MAX_USER_OPS || !comm->ops[i].live)
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "ncclRedOpDestroy: %d is not an operator this communicator "
                                "created", (int)op);
    comm->ops[i].live = 0;
    return ncclSuccess;
}
NCCL_PROFILING_ALIAS(ncclRedOpDestroy)

/* ------------------------------------------------------------- FP8 */

/* gpurma's collectives have no FP8 type: the input is widened to float in
 * scratch (PreMulSum's scaling done in FP8 first, as NCCL does), reduced as
 * float, and the result narrowed into recv (round to nearest even,
 * saturating, as cuda_fp8.h). One rounding at the end: a sum is at least
 * as exact as NCCL's, which rounds at each step. */
static ncclResult_t run_fp8(const nccl_op_t *a, gpurma_redop_t op, const nccl_user_op_t *user,
                            void *stream)
{
    ncclComm_t comm = a->comm;
    const char *name = gpurma_nccl_op_name(a->kind);
    /* count * size fits a size_t (checked by the caller) */
    size_t n_in = a->kind == NCCL_OP_REDUCE_SCATTER ? a->count * (size_t)comm->size : a->count;
    size_t bytes;
    if (__builtin_add_overflow(n_in, a->count, &bytes) ||
        __builtin_mul_overflow(bytes, sizeof(float), &bytes))
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "%s: FP8 count %zu is too large to widen to float", name,
                                a->count);
    nccl_scratch_t tmp = {NULL};
    ncclResult_t res = gpurma_nccl_scratch(comm, bytes, stream, &tmp);
    if (res != ncclSuccess)
        return res;
    float *wide_in = tmp.ptr, *wide_out = wide_in + n_in;
    double scalar = user ? user->scalar_host : 0;
    const double *scaled = user && !user->on_device ? &scalar : NULL;
    const void *scalar_dev = user && user->on_device ? user->scalar_dev : NULL;
    if (comm->gpu) {
        if (gpurma_nccl_gpu_fp8_widen_async(wide_in, a->send, n_in, a->dtype, scaled, scalar_dev,
                                            stream))
            res = gpurma_nccl_fail(comm, ncclUnhandledCudaError,
                                   "%s: the FP8 widening kernel failed", name);
    } else {
        gpurma_nccl_fp8_widen_host(wide_in, a->send, n_in, a->dtype, scaled);
    }
    gpurma_status_t st = GPURMA_SUCCESS;
    if (res == ncclSuccess) {
        gpurma_team_t team = comm->team;
        switch (a->kind) {
        case NCCL_OP_ALLREDUCE:
            st = gpurma_allreduce(team, wide_in, wide_out, a->count, GPURMA_FLOAT32, op, stream);
            break;
        case NCCL_OP_REDUCE:
            st = gpurma_reduce(team, wide_in, wide_out, a->count, GPURMA_FLOAT32, op, a->root,
                               stream);
            break;
        default:
            st = gpurma_reduce_scatter(team, wide_in, wide_out, a->count, GPURMA_FLOAT32, op,
                                       stream);
            break;
        }
    }
    /* NCCL's reduce writes only the root's recv */
    int writes = a->kind != NCCL_OP_REDUCE || comm->rank == a->root;
    if (res == ncclSuccess && st == GPURMA_SUCCESS && writes) {
        if (!comm->gpu)
            gpurma_nccl_fp8_narrow_host(a->recv, wide_out, a->count, a->dtype);
        else if (gpurma_nccl_gpu_fp8_narrow_async(a->recv, wide_out, a->count, a->dtype, stream))
            res = gpurma_nccl_fail(comm, ncclUnhandledCudaError,
                                   "%s: the FP8 narrowing kernel failed", name);
    }
    if (res != ncclSuccess)
        return res;
    return st == GPURMA_SUCCESS ? ncclSuccess : gpurma_nccl_fail_rc(comm, st, name);
}

/* --------------------------------------------------------- dispatch */

static ncclResult_t gpurma_fail(const nccl_op_t *a, gpurma_status_t rc)
{
    return gpurma_nccl_fail_rc(a->comm, rc, gpurma_nccl_op_name(a->kind));
}

/* The scaled copy of a PreMulSum's input, in scratch. */
static ncclResult_t premul(const nccl_op_t *a, const nccl_user_op_t *u, size_t n, size_t es,
                           void *stream, nccl_scratch_t *tmp, const void **scaled)
{
    ncclResult_t res = gpurma_nccl_scratch(a->comm, n * es, stream, tmp);
    if (res != ncclSuccess)
        return res;
    void *dst = tmp->ptr;
    if (!n) {
        *scaled = a->send;
        return ncclSuccess;
    }
    if (a->comm->gpu) {
        if (gpurma_nccl_gpu_scale_async(dst, a->send, n, a->dtype, u->scalar_host,
                                        u->on_device ? u->scalar_dev : NULL, stream)) {
            return gpurma_nccl_fail(a->comm, ncclUnhandledCudaError,
                                    "%s: the PreMulSum scaling kernel failed",
                                    gpurma_nccl_op_name(a->kind));
        }
    } else {
        scale_host(dst, a->send, n, a->dtype, u->scalar_host);
    }
    *scaled = dst;
    return ncclSuccess;
}

static ncclResult_t copy(ncclComm_t comm, void *dst, const void *src, size_t bytes, void *stream)
{
    if (!bytes)
        return ncclSuccess;
    if (!comm->gpu) {
        memmove(dst, src, bytes);
        return ncclSuccess;
    }
    return gpurma_nccl_gpu_copy_async(dst, src, bytes, stream)
               ? gpurma_nccl_fail(comm, ncclUnhandledCudaError, "cudaMemcpyAsync failed")
               : ncclSuccess;
}

/* Gather and scatter as alltoallv: one column (gather) or row (scatter)
 * of the exchange is non-empty; the root's own block is skipped in place. */
static gpurma_status_t rooted_exchange(const nccl_op_t *a, size_t es, void *stream)
{
    ncclComm_t comm = a->comm;
    int n = comm->size, me = comm->rank, root = a->root;
    size_t *v = calloc((size_t)n * 4, sizeof *v);
    if (!v)
        return GPURMA_ERR_NO_MEMORY;
    size_t *sc = v, *sd = v + n, *rc = v + 2 * n, *rd = v + 3 * n;
    const char *send = a->send;
    char *recv = a->recv;
    int gather = a->kind == NCCL_OP_GATHER;
    if (gather) {
        int in_place = me == root && send == recv + (size_t)root * a->count * es;
        sc[root] = in_place ? 0 : a->count;
        if (me == root)
            for (int r = 0; r < n; r++) {
                rc[r] = r == root && in_place ? 0 : a->count;
                rd[r] = (size_t)r * a->count;
            }
    } else {
        int in_place = me == root && recv == send + (size_t)root * a->count * es;
        if (me == root)
            for (int r = 0; r < n; r++) {
                sc[r] = r == root && in_place ? 0 : a->count;
                sd[r] = (size_t)r * a->count;
            }
        rc[root] = in_place ? 0 : a->count;
    }
    gpurma_status_t st = gpurma_alltoallv(comm->team, send, sc, sd, recv, rc, rd,
                                          copy_dtype(a->dtype), stream);
    free(v);
    return st;
}

static int reduces(nccl_op_kind_t kind)
{
    return kind == NCCL_OP_ALLREDUCE || kind == NCCL_OP_REDUCE_SCATTER || kind == NCCL_OP_REDUCE;
}

/* gpurma's operator for a's, and the PreMulSum a names (NULL for the
 * built-in ones); 0, or -1 when a->op is neither. */
static int map_op(const nccl_op_t *a, gpurma_redop_t *op, const nccl_user_op_t **user)
{
    static const gpurma_redop_t ops[ncclNumOps] = {[ncclSum] = GPURMA_SUM,
                                                   [ncclProd] = GPURMA_PROD,
                                                   [ncclMax] = GPURMA_MAX,
                                                   [ncclMin] = GPURMA_MIN,
                                                   [ncclAvg] = GPURMA_AVG};
    *user = NULL;
    *op = GPURMA_SUM;
    if ((int)a->op < 0)
        return -1;
    if ((int)a->op < ncclNumOps) {
        *op = ops[a->op];
        return 0;
    }
    int i = (int)a->op - ncclNumOps;
    if (i >= NCCL_MAX_USER_OPS || !a->comm->ops[i].live || a->comm->ops[i].dtype != a->dtype)
        return -1;
    *user = &a->comm->ops[i];
    return 0;
}

/* Which buffers a call reads and writes on this rank when count > 0. */
static void buffers_used(const nccl_op_t *a, int rank, int *reads, int *writes)
{
    int root = rank == a->root;
    switch (a->kind) {
    case NCCL_OP_BROADCAST: *reads = root, *writes = 1; break;
    case NCCL_OP_REDUCE:
    case NCCL_OP_GATHER:    *reads = 1, *writes = root; break;
    case NCCL_OP_SCATTER:   *reads = root, *writes = 1; break;
    case NCCL_OP_SEND:      *reads = 1, *writes = 0; break;
    case NCCL_OP_RECV:      *reads = 0, *writes = 1; break;
    default:                *reads = 1, *writes = 1; break;
    }
}

ncclResult_t gpurma_nccl_check_op(const nccl_op_t *a)
{
    const char *name = gpurma_nccl_op_name(a->kind);
    ncclComm_t comm = a->comm;
    int size, rank, host = 0;
    /* A communicator whose init the open group holds: its rank and size
     * are known, the rest once the group ends (run_coll checks again). */
    if (comm && comm->magic == GPURMA_NCCL_COMM_MAGIC &&
        __atomic_load_n(&comm->init_state, __ATOMIC_ACQUIRE) == ncclInProgress &&
        gpurma_nccl_group_holds(comm, NCCL_OP_INIT)) {
        size = comm->init_size, rank = comm->init_rank;
    } else {
        ncclResult_t res = gpurma_nccl_check_comm(comm, name);
        if (res != ncclSuccess)
            return res;
        size = comm->size, rank = comm->rank, host = !comm->gpu;
    }
    size_t es = gpurma_nccl_dtype_size(a->dtype), bytes, total;
    if (!es)
        return gpurma_nccl_fail(comm, ncclInvalidArgument, "%s: unknown datatype %d", name,
                                (int)a->dtype);
    gpurma_redop_t op;
    const nccl_user_op_t *user;
    if (reduces(a->kind) && map_op(a, &op, &user))
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "%s: operator %d is neither a built-in one nor a live PreMulSum "
                                "of datatype %d", name, (int)a->op, (int)a->dtype);
    int rooted = a->kind == NCCL_OP_BROADCAST || a->kind == NCCL_OP_REDUCE ||
                 a->kind == NCCL_OP_GATHER || a->kind == NCCL_OP_SCATTER ||
                 a->kind == NCCL_OP_SEND || a->kind == NCCL_OP_RECV;
    if (rooted && (a->root < 0 || a->root >= size))
        return gpurma_nccl_fail(comm, ncclInvalidArgument, "%s: %s %d is not a rank of %d", name,
                                a->kind == NCCL_OP_SEND || a->kind == NCCL_OP_RECV ? "peer"
                                                                                   : "root",
                                a->root, size);
    /* every buffer size the calls compute fits a size_t */
    if (__builtin_mul_overflow(a->count, es, &bytes) ||
        __builtin_mul_overflow(bytes, (size_t)size, &total))
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "%s: count %zu of %zu-byte elements for %d ranks overflows", name,
                                a->count, es, size);
    int reads, writes;
    buffers_used(a, rank, &reads, &writes);
    if (bytes && ((reads && !a->send) || (writes && !a->recv)))
        return gpurma_nccl_fail(comm, ncclInvalidArgument,
                                "%s: %s buffer is NULL with count %zu", name,
                                reads && !a->send ? "send" : "recv", a->count);
    if (host && a->stream)
        return gpurma_nccl_fail(comm, ncclInvalidUsage,
                                "%s: this communicator runs on gpurma's host backend (no GPU): "
                                "pass stream NULL and host buffers", name);
    return ncclSuccess;
}

/* After gpurma_nccl_check_op. */
static ncclResult_t run_checked(const nccl_op_t *a)
{
    ncclComm_t comm = a->comm;
    size_t es = gpurma_nccl_dtype_size(a->dtype);
    void *stream = gpurma_nccl_stream(comm, a->stream);
    gpurma_redop_t op = GPURMA_SUM;
    const nccl_user_op_t *user = NULL;
    if (reduces(a->kind)) {
        map_op(a, &op, &user);
        if (gpurma_nccl_is_fp8(a->dtype))
            return run_fp8(a, op, user, stream);
    }
    gpurma_dtype_t dt =
        reduces(a->kind) ? (gpurma_dtype_t)gpurma_dtype(a->dtype) : copy_dtype(a->dtype);
    gpurma_team_t team = comm->team;
    gpurma_status_t st = GPURMA_SUCCESS;
    const void *send = a->send;
    nccl_scratch_t tmp = {NULL};
    ncclResult_t res = ncclSuccess;
    switch (a->kind) {
    case NCCL_OP_ALLREDUCE:
    case NCCL_OP_REDUCE:
        if (user && (res = premul(a, user, a->count, es, stream, &tmp, &send)) != ncclSuccess)
            return res;
        st = a->kind == NCCL_OP_ALLREDUCE
                 ? gpurma_allreduce(team, send, a->recv, a->count, dt, op, stream)
                 : gpurma_reduce(team, send, a->recv, a->count, dt, op, a->root, stream);
        break;
    case NCCL_OP_REDUCE_SCATTER: {
        size_t total = a->count * (size_t)comm->size; /* no overflow: checked by the caller */
        if (user) {
            if ((res = premul(a, user, total, es, stream, &tmp, &send)) != ncclSuccess)
                return res;
            st = gpurma_reduce_scatter(team, send, a->recv, a->count, dt, op, stream);
            break;
        }
        /* NCCL's in place: recv is this rank's block of send. */
        if (a->count && (const char *)a->recv == (const char *)send + comm->rank * a->count * es) {
            if ((res = gpurma_nccl_scratch(comm, a->count * es, stream, &tmp)) != ncclSuccess)
                return res;
            st = gpurma_reduce_scatter(team, send, tmp.ptr, a->count, dt, op, stream);
            if (st == GPURMA_SUCCESS)
                res = copy(comm, a->recv, tmp.ptr, a->count * es, stream);
            break;
        }
        st = gpurma_reduce_scatter(team, send, a->recv, a->count, dt, op, stream);
        break;
    }
    case NCCL_OP_ALLGATHER:
        st = gpurma_allgather(team, send, a->recv, a->count, dt, stream);
        break;
    case NCCL_OP_BROADCAST:
        st = gpurma_broadcast(team, send, a->recv, a->count, dt, a->root, stream);
        break;
    case NCCL_OP_ALLTOALL:
        st = gpurma_alltoall(team, send, a->recv, a->count, dt, stream);
        break;
    case NCCL_OP_GATHER:
    case NCCL_OP_SCATTER:
        st = rooted_exchange(a, es, stream);
        break;
    default:
        return gpurma_nccl_fail(comm, ncclInternalError, "not a collective: %d", (int)a->kind);
    }
    if (res != ncclSuccess)
        return res;
    if (st == GPURMA_ERR_UNSUPPORTED && gpurma_nccl_fallback_available())
        return gpurma_nccl_fallback_run(a, gpurma_last_error_message(comm->ctx->ctx));
    return st == GPURMA_SUCCESS ? ncclSuccess : gpurma_fail(a, st);
}

ncclResult_t gpurma_nccl_run_coll(const nccl_op_t *a)
{
    ncclResult_t res = gpurma_nccl_check_op(a);
    return res != ncclSuccess ? res : run_checked(a);
}

/* Checked, then queued inside a group or run now outside one. */
static ncclResult_t submit(const nccl_op_t *op)
{
    ncclResult_t res = gpurma_nccl_check_op(op);
    if (res != ncclSuccess) {
        gpurma_nccl_group_refuse(res);
        return res;
    }
    if (gpurma_nccl_group_enqueue(op, &res))
        return res;
    if (op->kind == NCCL_OP_SEND || op->kind == NCCL_OP_RECV)
        return gpurma_nccl_p2p_run(op->comm, op, 1);
    return run_checked(op);
}

NCCL_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                    cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_ALLREDUCE, .comm = comm, .send = sendbuff, .recv = recvbuff,
                   .count = count, .dtype = datatype, .op = op, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclAllReduce)

NCCL_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_ALLGATHER, .comm = comm, .send = sendbuff, .recv = recvbuff,
                   .count = sendcount, .dtype = datatype, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclAllGather)

NCCL_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                        cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_REDUCE_SCATTER, .comm = comm, .send = sendbuff,
                   .recv = recvbuff, .count = recvcount, .dtype = datatype, .op = op,
                   .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclReduceScatter)

NCCL_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, int root, ncclComm_t comm,
                                    cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_BROADCAST, .comm = comm, .send = sendbuff, .recv = recvbuff,
                   .count = count, .dtype = datatype, .root = root, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclBroadcast)

NCCL_API ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream)
{
    return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}
NCCL_PROFILING_ALIAS(ncclBcast)

NCCL_API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                 ncclDataType_t datatype, ncclRedOp_t op, int root,
                                 ncclComm_t comm, cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_REDUCE, .comm = comm, .send = sendbuff, .recv = recvbuff,
                   .count = count, .dtype = datatype, .op = op, .root = root,
                   .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclReduce)

NCCL_API ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                                   ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_ALLTOALL, .comm = comm, .send = sendbuff, .recv = recvbuff,
                   .count = count, .dtype = datatype, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclAlltoAll)

NCCL_API ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count,
                                 ncclDataType_t datatype, int root, ncclComm_t comm,
                                 cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_GATHER, .comm = comm, .send = sendbuff, .recv = recvbuff,
                   .count = count, .dtype = datatype, .root = root, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclGather)

NCCL_API ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_SCATTER, .comm = comm, .send = sendbuff, .recv = recvbuff,
                   .count = count, .dtype = datatype, .root = root, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclScatter)

NCCL_API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
                               int peer, ncclComm_t comm, cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_SEND, .comm = comm, .send = sendbuff, .recv = NULL,
                   .count = count, .dtype = datatype, .root = peer, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclSend)

NCCL_API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                               ncclComm_t comm, cudaStream_t stream)
{
    nccl_op_t a = {.kind = NCCL_OP_RECV, .comm = comm, .send = NULL, .recv = recvbuff,
                   .count = count, .dtype = datatype, .root = peer, .stream = stream};
    return submit(&a);
}
NCCL_PROFILING_ALIAS(ncclRecv)
