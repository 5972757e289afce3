/*
 * shim_overhead.c - what libgpurma_nccl adds to a call: the same small
 * allreduce issued N times through ncclAllReduce and straight through
 * gpurma_allreduce, on the same buffers (GPU memory on the legacy stream
 * when the communicator has a GPU, else host memory), the best of several
 * rounds each. On a stream the time is the host's cost of enqueuing (the
 * GPU runs in the background); on the host backend it includes the whole
 * collective, so the difference is still the shim's.
 *
 *   mpirun -np N tests/nccl/shim_overhead [calls]
 *
 * Prints "overhead_us D shim_us S gpurma_us G mode M" on rank 0.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpurma.h"
#include "gpurma_coll.h"
#include "gpurma/nccl/nccl.h"
#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

#define DIE(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(1))

static void sync_all(int gpu, gpurma_team_t team)
{
#ifdef HAVE_CUDA
    if (gpu && cudaDeviceSynchronize() != cudaSuccess)
        DIE("cudaDeviceSynchronize failed");
#endif
    (void)gpu;
    if (gpurma_barrier(team))
        DIE("barrier failed");
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 0;
    gpurma_ctx_t ctx;
    if (gpurma_init(NULL, &ctx))
        DIE("gpurma_init: %s", gpurma_last_error_message(NULL));
    gpurma_team_t world = gpurma_team_world(ctx);
    int rank = gpurma_rank(ctx), size = gpurma_size(ctx);
    ncclUniqueId id;
    if (rank == 0 && ncclGetUniqueId(&id))
        DIE("ncclGetUniqueId: %s", ncclGetLastError(NULL));
    if (gpurma_broadcast(world, &id, &id, sizeof id, GPURMA_UINT8, 0, NULL))
        DIE("broadcast: %s", gpurma_last_error_message(ctx));
    ncclComm_t comm;
    if (ncclCommInitRank(&comm, size, id, rank))
        DIE("ncclCommInitRank: %s", ncclGetLastError(NULL));
    int dev = -1;
    ncclCommCuDevice(comm, &dev);
    int gpu = dev >= 0;
    size_t count = 256;
    float *buf = NULL;
    void *stream = NULL;
    if (gpu) {
        if (ncclMemAlloc((void **)&buf, count * sizeof *buf))
            DIE("ncclMemAlloc: %s", ncclGetLastError(NULL));
        stream = (void *)0x1; /* cudaStreamLegacy: what NCCL's stream 0 is */
    } else {
        buf = calloc(count, sizeof *buf);
    }
    if (!calls)
        calls = gpu ? 200 : 2000;
    double best_shim = 1e30, best_direct = 1e30;
    for (int round = 0; round < 7; round++) {
        sync_all(gpu, world);
        double t0 = now_us();
        for (int i = 0; i < calls; i++)
            if (ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, comm, NULL))
                DIE("ncclAllReduce: %s", ncclGetLastError(comm));
        double t1 = now_us();
        sync_all(gpu, world);
        double t2 = now_us();
        for (int i = 0; i < calls; i++)
            if (gpurma_allreduce(world, buf, buf, count, GPURMA_FLOAT32, GPURMA_SUM, stream))
                DIE("gpurma_allreduce: %s", gpurma_last_error_message(ctx));
        double t3 = now_us();
        if (round == 0)
            continue; /* warm-up: setup of both paths */
        if ((t1 - t0) / calls < best_shim)
            best_shim = (t1 - t0) / calls;
        if ((t3 - t2) / calls < best_direct)
            best_direct = (t3 - t2) / calls;
    }
    sync_all(gpu, world);
    if (rank == 0)
        printf("overhead_us %.3f shim_us %.3f gpurma_us %.3f mode %s ranks %d calls %d\n",
               best_shim - best_direct, best_shim, best_direct, gpu ? "gpu-enqueue" : "host",
               size, calls);
    if (gpu)
        ncclMemFree(buf);
    else
        free(buf);
    ncclCommDestroy(comm);
    return gpurma_finalize(ctx) ? 1 : 0;
}
