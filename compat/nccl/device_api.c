/*
 * device_api.c - the host functions of NCCL 2.28's device API
 * (nccl_device.h). Teams are answered from the communicator. Device
 * communicators and their resource requirements are refused with
 * ncclInvalidUsage and the reason: an ncclDevComm is NCCL's own layout,
 * read by NCCL's inline device code, so neither gpurma nor a forwarding
 * (whose windows would not be the program's) can fill one.
 *
 * They are exported so that programs importing them (torch's NCCL
 * symmetric-memory kernels, nccl-tests' -D) load and get an error that
 * says why, instead of a missing symbol at their first call.
 */
#include "nccl_internal.h"

/* nccl_device.h's struct ncclTeam, returned by value as NCCL does */
typedef struct {
    int nRanks, rank, stride;
} nccl_team_t;

static int live(ncclComm_t comm, const char *call)
{
    return gpurma_nccl_check_comm(comm, call) == ncclSuccess;
}

NCCL_API nccl_team_t ncclTeamWorld(ncclComm_t comm)
{
    if (!live(comm, "ncclTeamWorld"))
        return (nccl_team_t){0, 0, 0};
    return (nccl_team_t){comm->size, comm->rank, 1};
}
NCCL_PROFILING_ALIAS(ncclTeamWorld)

/* Whether every rank of comm is on this node (load/store reachable, as
 * NCCL's LSA team means on one NVLink domain). */
static int one_node(ncclComm_t comm)
{
    int node = gpurma_node_size(comm->ctx->ctx);
    return comm->size == 1 ||
           (!comm->own_team && node == gpurma_size(comm->ctx->ctx) && node == comm->size);
}

/* The whole communicator when it is on one node, else this rank alone
 * (always a correct LSA team, if a small one). */
NCCL_API nccl_team_t ncclTeamLsa(ncclComm_t comm)
{
    if (!live(comm, "ncclTeamLsa"))
        return (nccl_team_t){0, 0, 0};
    return one_node(comm) ? (nccl_team_t){comm->size, comm->rank, 1}
                          : (nccl_team_t){1, 0, 1};
}
NCCL_PROFILING_ALIAS(ncclTeamLsa)

/* The ranks of the same LSA index on the other LSA teams. */
NCCL_API nccl_team_t ncclTeamRail(ncclComm_t comm)
{
    if (!live(comm, "ncclTeamRail"))
        return (nccl_team_t){0, 0, 0};
    return one_node(comm) ? (nccl_team_t){1, 0, comm->size}
                          : (nccl_team_t){comm->size, comm->rank, 1};
}
NCCL_PROFILING_ALIAS(ncclTeamRail)

/* team rank -> comm rank; -1 when outside the communicator */
NCCL_API int ncclTeamRankToWorld(ncclComm_t comm, nccl_team_t team, int rank)
{
    if (!live(comm, "ncclTeamRankToWorld") || rank < 0 || rank >= team.nRanks)
        return -1;
    long long world = comm->rank + (long long)(rank - team.rank) * team.stride;
    return world >= 0 && world < comm->size ? (int)world : -1;
}
NCCL_PROFILING_ALIAS(ncclTeamRankToWorld)

/* team rank -> rank in this rank's LSA team; -1 when not in it */
NCCL_API int ncclTeamRankToLsa(ncclComm_t comm, nccl_team_t team, int rank)
{
    int world = ncclTeamRankToWorld(comm, team, rank);
    if (world < 0)
        return -1;
    nccl_team_t lsa = ncclTeamLsa(comm);
    int lsa_rank = world - (comm->rank - lsa.rank);
    return lsa_rank >= 0 && lsa_rank < lsa.nRanks ? lsa_rank : -1;
}
NCCL_PROFILING_ALIAS(ncclTeamRankToLsa)

static ncclResult_t refuse(ncclComm_t comm, const char *call)
{
    return gpurma_nccl_fail(comm && comm->magic == GPURMA_NCCL_COMM_MAGIC ? comm : NULL,
                            ncclInvalidUsage,
                            "%s: NCCL's device API (nccl_device.h) is not provided by gpurma's "
                            "NCCL layer: an ncclDevComm is read by NCCL's own device code. "
                            "Use the collectives, or NVIDIA's libnccl.so.2", call);
}

NCCL_API ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void *reqs, void *outDevComm)
{
    (void)reqs, (void)outDevComm;
    return refuse(comm, "ncclDevCommCreate");
}
NCCL_PROFILING_ALIAS(ncclDevCommCreate)

NCCL_API ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void *devComm)
{
    (void)devComm;
    return refuse(comm, "ncclDevCommDestroy");
}
NCCL_PROFILING_ALIAS(ncclDevCommDestroy)

NCCL_API ncclResult_t ncclLsaBarrierCreateRequirement(nccl_team_t team, int nBarriers,
                                                      void *outHandle, void *outReq)
{
    (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
    return refuse(NULL, "ncclLsaBarrierCreateRequirement");
}
NCCL_PROFILING_ALIAS(ncclLsaBarrierCreateRequirement)

NCCL_API ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, nccl_team_t team,
                                                      int nBarriers, void *outHandle,
                                                      void *outReq)
{
    (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
    return refuse(comm, "ncclGinBarrierCreateRequirement");
}
NCCL_PROFILING_ALIAS(ncclGinBarrierCreateRequirement)
