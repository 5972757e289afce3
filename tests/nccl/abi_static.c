/*
 * abi_static.c - NCCL 2.28's ABI as compile-time facts: every struct size
 * and field offset, every enum and macro value, the config and sim-info
 * initializers, and the type of every entry point, asserted against the
 * numbers of NCCL 2.28.9 (x86-64, LP64), written out here by hand.
 *
 * Built against include/gpurma/nccl/nccl.h (abi_static_ours) and, where
 * configure found NVIDIA's nccl.h, against that one too (abi_static_real):
 * both build only if both headers say the same thing, even on a machine
 * where abi.sh has no NVIDIA header to compare dumps with. A build that
 * compiles has passed; running it checks the initializers' bytes, which a
 * constant expression cannot read.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#ifdef GPURMA_OWN_HEADER
#include "gpurma/nccl/nccl.h"
#else
#include <nccl.h>
#endif

#define SAME(a, b) _Static_assert((a) == (b), #a " is not " #b " as in NCCL 2.28")
#define OFF(t, f, n) SAME(offsetof(t, f), n)
/* The entry point's type is exactly NCCL's prototype (and so is pncclX's). */
#define PROTO(name, type)                                                   \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), type) && \
                       __builtin_types_compatible_p(__typeof__(&p##name), type), \
                   #name " does not have NCCL 2.28's prototype")

/* version */
SAME(NCCL_MAJOR, 2);
SAME(NCCL_MINOR, 28);
SAME(NCCL_PATCH, 9);
SAME(NCCL_VERSION_CODE, 22809);
SAME(NCCL_VERSION(2, 8, 4), 2804); /* the old encoding up to 2.8 */
SAME(NCCL_VERSION(2, 9, 0), 20900);
SAME(NCCL_VERSION(3, 0, 1), 30001);

/* sizes of the public types */
SAME(NCCL_UNIQUE_ID_BYTES, 128);
SAME(sizeof(ncclUniqueId), 128);
SAME(sizeof(ncclConfig_t), 80);
SAME(sizeof(ncclSimInfo_t), 24);
SAME(sizeof(ncclResult_t), 4);
SAME(sizeof(ncclRedOp_t), 4);
SAME(sizeof(ncclDataType_t), 4);
SAME(sizeof(ncclScalarResidence_t), 4);
SAME(sizeof(ncclComm_t), sizeof(void *));
SAME(sizeof(ncclWindow_t), sizeof(void *));
SAME(sizeof(cudaStream_t), sizeof(void *));

/* ncclConfig_v22800 */
OFF(ncclConfig_t, size, 0);
OFF(ncclConfig_t, magic, 8);
OFF(ncclConfig_t, version, 12);
OFF(ncclConfig_t, blocking, 16);
OFF(ncclConfig_t, cgaClusterSize, 20);
OFF(ncclConfig_t, minCTAs, 24);
OFF(ncclConfig_t, maxCTAs, 28);
OFF(ncclConfig_t, netName, 32);
OFF(ncclConfig_t, splitShare, 40);
OFF(ncclConfig_t, trafficClass, 44);
OFF(ncclConfig_t, commName, 48);
OFF(ncclConfig_t, collnetEnable, 56);
OFF(ncclConfig_t, CTAPolicy, 60);
OFF(ncclConfig_t, shrinkShare, 64);
OFF(ncclConfig_t, nvlsCTAs, 68);
OFF(ncclConfig_t, nChannelsPerNetPeer, 72);
OFF(ncclConfig_t, nvlinkCentricSched, 76);
/* ncclSimInfo_v22200 */
OFF(ncclSimInfo_t, size, 0);
OFF(ncclSimInfo_t, magic, 8);
OFF(ncclSimInfo_t, version, 12);
OFF(ncclSimInfo_t, estimatedTime, 16);

/* macros */
SAME(NCCL_CONFIG_UNDEF_INT, INT_MIN);
SAME(NCCL_SPLIT_NOCOLOR, -1);
SAME(NCCL_WIN_DEFAULT, 0);
SAME(NCCL_WIN_COLL_SYMMETRIC, 1);
SAME(NCCL_WIN_REQUIRED_ALIGNMENT, 4096);
SAME(NCCL_CTA_POLICY_DEFAULT, 0);
SAME(NCCL_CTA_POLICY_EFFICIENCY, 1);
SAME(NCCL_CTA_POLICY_ZERO, 2);
SAME(NCCL_SHRINK_DEFAULT, 0);
SAME(NCCL_SHRINK_ABORT, 1);
SAME(NCCL_REVOKE_DEFAULT, 0);
SAME(NCCL_UNDEF_FLOAT, -1.0f);

/* ncclResult_t */
SAME(ncclSuccess, 0);
SAME(ncclUnhandledCudaError, 1);
SAME(ncclSystemError, 2);
SAME(ncclInternalError, 3);
SAME(ncclInvalidArgument, 4);
SAME(ncclInvalidUsage, 5);
SAME(ncclRemoteError, 6);
SAME(ncclInProgress, 7);
SAME(ncclNumResults, 8);
/* ncclRedOp_t: PreMulSum operators are ncclNumOps and up */
SAME(ncclSum, 0);
SAME(ncclProd, 1);
SAME(ncclMax, 2);
SAME(ncclMin, 3);
SAME(ncclAvg, 4);
SAME(ncclNumOps, 5);
SAME(ncclMaxRedOp, INT_MAX);
/* ncclDataType_t */
SAME(ncclInt8, 0);
SAME(ncclChar, 0);
SAME(ncclUint8, 1);
SAME(ncclInt32, 2);
SAME(ncclInt, 2);
SAME(ncclUint32, 3);
SAME(ncclInt64, 4);
SAME(ncclUint64, 5);
SAME(ncclFloat16, 6);
SAME(ncclHalf, 6);
SAME(ncclFloat32, 7);
SAME(ncclFloat, 7);
SAME(ncclFloat64, 8);
SAME(ncclDouble, 8);
SAME(ncclBfloat16, 9);
SAME(ncclFloat8e4m3, 10);
SAME(ncclFloat8e5m2, 11);
SAME(ncclNumTypes, 12);
/* ncclScalarResidence_t */
SAME(ncclScalarDevice, 0);
SAME(ncclScalarHostImmediate, 1);

/* the 41 functions of nccl.h, each with NCCL's prototype */
typedef ncclResult_t (*coll_red_t)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                   ncclComm_t, cudaStream_t);
typedef ncclResult_t (*coll_move_t)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                                    cudaStream_t);
typedef ncclResult_t (*coll_rooted_t)(const void *, void *, size_t, ncclDataType_t, int,
                                      ncclComm_t, cudaStream_t);
typedef ncclResult_t (*comm_only_t)(ncclComm_t);
#define NCCL_FUNCTIONS(X) \
    X(ncclMemAlloc, ncclResult_t (*)(void **, size_t)) \
    X(ncclMemFree, ncclResult_t (*)(void *)) \
    X(ncclGetVersion, ncclResult_t (*)(int *)) \
    X(ncclGetUniqueId, ncclResult_t (*)(ncclUniqueId *)) \
    X(ncclCommInitRankConfig, ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *)) \
    X(ncclCommInitRank, ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int)) \
    X(ncclCommInitAll, ncclResult_t (*)(ncclComm_t *, int, const int *)) \
    X(ncclCommInitRankScalable, ncclResult_t (*)(ncclComm_t *, int, int, int, ncclUniqueId *, ncclConfig_t *)) \
    X(ncclCommFinalize, comm_only_t) \
    X(ncclCommDestroy, comm_only_t) \
    X(ncclCommAbort, comm_only_t) \
    X(ncclCommRevoke, ncclResult_t (*)(ncclComm_t, int)) \
    X(ncclCommSplit, ncclResult_t (*)(ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *)) \
    X(ncclCommShrink, ncclResult_t (*)(ncclComm_t, int *, int, ncclComm_t *, ncclConfig_t *, int)) \
    X(ncclGetErrorString, const char *(*)(ncclResult_t)) \
    X(ncclGetLastError, const char *(*)(ncclComm_t)) \
    X(ncclResetDebugInit, void (*)(void)) \
    X(ncclCommGetAsyncError, ncclResult_t (*)(ncclComm_t, ncclResult_t *)) \
    X(ncclCommCount, ncclResult_t (*)(const ncclComm_t, int *)) \
    X(ncclCommCuDevice, ncclResult_t (*)(const ncclComm_t, int *)) \
    X(ncclCommUserRank, ncclResult_t (*)(const ncclComm_t, int *)) \
    X(ncclCommRegister, ncclResult_t (*)(const ncclComm_t, void *, size_t, void **)) \
    X(ncclCommDeregister, ncclResult_t (*)(const ncclComm_t, void *)) \
    X(ncclCommWindowRegister, ncclResult_t (*)(ncclComm_t, void *, size_t, ncclWindow_t *, int)) \
    X(ncclCommWindowDeregister, ncclResult_t (*)(ncclComm_t, ncclWindow_t)) \
    X(ncclRedOpCreatePreMulSum, ncclResult_t (*)(ncclRedOp_t *, void *, ncclDataType_t, ncclScalarResidence_t, ncclComm_t)) \
    X(ncclRedOpDestroy, ncclResult_t (*)(ncclRedOp_t, ncclComm_t)) \
    X(ncclReduce, ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t)) \
    X(ncclBcast, ncclResult_t (*)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)) \
    X(ncclBroadcast, coll_rooted_t) \
    X(ncclAllReduce, coll_red_t) \
    X(ncclReduceScatter, coll_red_t) \
    X(ncclAllGather, coll_move_t) \
    X(ncclAlltoAll, coll_move_t) \
    X(ncclGather, coll_rooted_t) \
    X(ncclScatter, coll_rooted_t) \
    X(ncclSend, ncclResult_t (*)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)) \
    X(ncclRecv, ncclResult_t (*)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)) \
    X(ncclGroupStart, ncclResult_t (*)(void)) \
    X(ncclGroupEnd, ncclResult_t (*)(void)) \
    X(ncclGroupSimulateEnd, ncclResult_t (*)(ncclSimInfo_t *))

/* NVIDIA's header marks ncclResetDebugInit deprecated: naming it is not a use. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define PROTO_CHECK(name, type) PROTO(name, type);
NCCL_FUNCTIONS(PROTO_CHECK)

/* The initializers' bytes: what NCCL reads to tell which fields a caller's
 * header has (size, magic, version) and which it left unset. */
int main(void)
{
    /* Taking each address makes the link resolve every name (and its
     * pncclX) in the library. */
#define ADDRESS(name, type) (const void *)(type)&name, (const void *)(type)&p##name,
    const void *const functions[] = {NCCL_FUNCTIONS(ADDRESS)};
    size_t nfunctions = sizeof functions / sizeof functions[0] / 2;
    for (size_t i = 0; i < 2 * nfunctions; i++)
        if (!functions[i]) {
            printf("FAIL: function %zu has no address\n", i);
            return 1;
        }
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    int bad = 0;
#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            printf("FAIL: %s\n", #c);                                     \
            bad = 1;                                                      \
        }                                                                 \
    } while (0)
    CHECK(cfg.size == 80 && cfg.magic == 0xcafebeefu && cfg.version == 22809);
    const int ints[] = {cfg.blocking,   cfg.cgaClusterSize, cfg.minCTAs,      cfg.maxCTAs,
                        cfg.splitShare, cfg.trafficClass,   cfg.collnetEnable, cfg.CTAPolicy,
                        cfg.shrinkShare, cfg.nvlsCTAs, cfg.nChannelsPerNetPeer,
                        cfg.nvlinkCentricSched};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        CHECK(ints[i] == INT_MIN);
    CHECK(cfg.netName == NULL && cfg.commName == NULL);
    CHECK(sim.size == 24 && sim.magic == 0x74685283u && sim.version == 22809 &&
          sim.estimatedTime == -1.0f);
    if (!bad)
        printf("ok: NCCL 2.28.9's layouts, values, initializers and %zu prototypes (%s)\n",
               nfunctions,
#ifdef GPURMA_OWN_HEADER
               "gpurma's nccl.h"
#else
               "NVIDIA's nccl.h"
#endif
        );
    return bad;
}
