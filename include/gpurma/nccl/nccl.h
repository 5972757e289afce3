/*
 * nccl.h - the NCCL 2.28 API as libgpurma_nccl implements it.
 *
 * Written for gpurma from NCCL's public documentation: the names, values,
 * struct layouts and signatures are those of NCCL 2.28 (ABI: libnccl.so.2),
 * so that a program built against NVIDIA's nccl.h runs on libgpurma_nccl
 * unchanged, and one built against this header runs on NVIDIA's library.
 * Only the host API is declared (no nccl_device.h).
 *
 * Compile with -I$(includedir)/gpurma/nccl; link -lgpurma_nccl, or put
 * $(libdir)/gpurma-nccl (libnccl.so.2) first on the library path.
 */
#ifndef NCCL_H_
#define NCCL_H_

#include <limits.h>
#include <stddef.h>

/* The CUDA runtime's own spelling, so that including cuda_runtime.h before
 * or after this header repeats an identical typedef. */
struct CUstream_st;
typedef struct CUstream_st *cudaStream_t;

#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 9
#define NCCL_SUFFIX ""
#define NCCL_VERSION(X, Y, Z) \
    (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#define NCCL_VERSION_CODE NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncclComm *ncclComm_t;
typedef struct ncclWindow_vidmem *ncclWindow_t;
#define NCCL_COMM_NULL NULL

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
    ncclSuccess            = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError        = 2,
    ncclInternalError      = 3,
    ncclInvalidArgument    = 4,
    ncclInvalidUsage       = 5,
    ncclRemoteError        = 6,
    ncclInProgress         = 7, /* non-blocking communicator still initializing */
    ncclNumResults         = 8
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR (-1)
#define NCCL_UNDEF_FLOAT (-1.0f)

#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01
#define NCCL_REVOKE_DEFAULT 0x00

/* Layout of NCCL 2.28's ncclConfig_v22800: never reorder. */
typedef struct ncclConfig_v22800 {
    size_t       size;    /* filled by NCCL_CONFIG_INITIALIZER */
    unsigned int magic;   /* 0xcafebeef */
    unsigned int version; /* NCCL_VERSION_CODE of the caller's header */
    int          blocking;
    int          cgaClusterSize;
    int          minCTAs;
    int          maxCTAs;
    const char  *netName;
    int          splitShare;
    int          trafficClass;
    const char  *commName;
    int          collnetEnable;
    int          CTAPolicy;
    int          shrinkShare;
    int          nvlsCTAs;
    int          nChannelsPerNetPeer;
    int          nvlinkCentricSched;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                               \
    {                                                                                         \
        sizeof(ncclConfig_t), 0xcafebeef, NCCL_VERSION_CODE, NCCL_CONFIG_UNDEF_INT,           \
            NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
            NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
            NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
            NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
            NCCL_CONFIG_UNDEF_INT                                                             \
    }

typedef struct ncclSimInfo_v22200 {
    size_t       size;
    unsigned int magic; /* 0x74685283 */
    unsigned int version;
    float        estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER \
    { sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION_CODE, NCCL_UNDEF_FLOAT }

/* An enum as wide as int, whatever the compiler's enum sizing. */
typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum {
    ncclSum      = 0,
    ncclProd     = 1,
    ncclMax      = 2,
    ncclMin      = 3,
    ncclAvg      = 4,
    ncclNumOps   = 5, /* built-in ops; ncclRedOpCreatePreMulSum returns others */
    ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

typedef enum {
    ncclInt8       = 0,
    ncclChar       = 0,
    ncclUint8      = 1,
    ncclInt32      = 2,
    ncclInt        = 2,
    ncclUint32     = 3,
    ncclInt64      = 4,
    ncclUint64     = 5,
    ncclFloat16    = 6,
    ncclHalf       = 6,
    ncclFloat32    = 7,
    ncclFloat      = 7,
    ncclFloat64    = 8,
    ncclDouble     = 8,
    ncclBfloat16   = 9,
    ncclFloat8e4m3 = 10,
    ncclFloat8e5m2 = 11,
    ncclNumTypes   = 12
} ncclDataType_t;

typedef enum { ncclScalarDevice = 0, ncclScalarHostImmediate = 1 } ncclScalarResidence_t;

/* Every function also exists with a 'p' prefix (pncclAllReduce), the
 * profiling interface's names. */
#define GPURMA_NCCL_DECLARE(ret, name, args) ret name args; ret p##name args;

GPURMA_NCCL_DECLARE(ncclResult_t, ncclMemAlloc, (void **ptr, size_t size))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclMemFree, (void *ptr))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclGetVersion, (int *version))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclGetUniqueId, (ncclUniqueId *uniqueId))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommInitRankConfig,
                    (ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                     ncclConfig_t *config))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommInitRank,
                    (ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommInitAll, (ncclComm_t *comm, int ndev, const int *devlist))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommInitRankScalable,
                    (ncclComm_t *newcomm, int nranks, int myrank, int nId, ncclUniqueId *commIds,
                     ncclConfig_t *config))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommFinalize, (ncclComm_t comm))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommDestroy, (ncclComm_t comm))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommAbort, (ncclComm_t comm))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommRevoke, (ncclComm_t comm, int revokeFlags))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommSplit,
                    (ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                     ncclConfig_t *config))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommShrink,
                    (ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                     ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags))
GPURMA_NCCL_DECLARE(const char *, ncclGetErrorString, (ncclResult_t result))
GPURMA_NCCL_DECLARE(const char *, ncclGetLastError, (ncclComm_t comm))
GPURMA_NCCL_DECLARE(void, ncclResetDebugInit, (void))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t *asyncError))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommCount, (const ncclComm_t comm, int *count))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommCuDevice, (const ncclComm_t comm, int *device))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommUserRank, (const ncclComm_t comm, int *rank))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommRegister,
                    (const ncclComm_t comm, void *buff, size_t size, void **handle))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommDeregister, (const ncclComm_t comm, void *handle))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommWindowRegister,
                    (ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclCommWindowDeregister, (ncclComm_t comm, ncclWindow_t win))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclRedOpCreatePreMulSum,
                    (ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                     ncclScalarResidence_t residence, ncclComm_t comm))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclRedOpDestroy, (ncclRedOp_t op, ncclComm_t comm))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclReduce,
                    (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclBcast,
                    (void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                     cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclBroadcast,
                    (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclAllReduce,
                    (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclReduceScatter,
                    (const void *sendbuff, void *recvbuff, size_t recvcount,
                     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                     cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclAllGather,
                    (const void *sendbuff, void *recvbuff, size_t sendcount,
                     ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclAlltoAll,
                    (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclGather,
                    (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclScatter,
                    (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclSend,
                    (const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                     ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclRecv,
                    (void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                     ncclComm_t comm, cudaStream_t stream))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclGroupStart, (void))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclGroupEnd, (void))
GPURMA_NCCL_DECLARE(ncclResult_t, ncclGroupSimulateEnd, (ncclSimInfo_t *simInfo))

#undef GPURMA_NCCL_DECLARE

#ifdef __cplusplus
}
#endif

#endif /* NCCL_H_ */
