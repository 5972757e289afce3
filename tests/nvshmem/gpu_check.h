/*
 * gpu_check.h - what the NVSHMEM layer's GPU tests share: CU (a CUDA call
 * that must succeed), ASSERT (a condition, with a message), sync_all and
 * gpu_check_start.
 * Each failure names the test (GPU_CHECK_NAME, defined before including)
 * and the PE (`me`), and ends the test with status 1. gpu_check_start:
 * the tests' common start.
 */
#ifndef GPURMA_TESTS_NVSHMEM_GPU_CHECK_H
#define GPURMA_TESTS_NVSHMEM_GPU_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <nvshmem.h>
#include <nvshmemx.h>

static int me, npes, next, prev;

#define CU(call)                                                                              \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "FAIL " GPU_CHECK_NAME ": PE %d: %s: %s (line %d)\n", me, #call, \
                    cudaGetErrorString(e_), __LINE__);                                       \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)
#define ASSERT(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "FAIL " GPU_CHECK_NAME ": PE %d (line %d): ", me, __LINE__);     \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* The host barrier orders what the PEs did through the layer; memsets and
 * copies of this process must also be complete on its GPU before a peer,
 * released by the barrier, writes to the same memory. */
static void sync_all(void)
{
    CU(cudaDeviceSynchronize());
    nvshmem_barrier_all();
}

/* The start both tests share: 0 (after a SKIP line) when there is no GPU,
 * else NVSHMEM up (64 MiB heap unless NVSHMEM_SYMMETRIC_SIZE says
 * otherwise), me/npes/next/prev set and the node rank's GPU current, as
 * NVSHMEM programs do (init before cudaSetDevice). */
static int gpu_check_start(void)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP " GPU_CHECK_NAME ": no GPU\n");
        return 0;
    }
    setenv("NVSHMEM_SYMMETRIC_SIZE", "64M", 0);
    nvshmem_init();
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
    CU(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % ndev));
    return 1;
}

#endif
