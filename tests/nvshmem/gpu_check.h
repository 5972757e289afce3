/*
 * gpu_check.h - what the NVSHMEM layer's GPU tests share: CU (a CUDA call
 * that must succeed), ASSERT (a condition, with a message) and sync_all.
 * Each failure names the test (GPU_CHECK_NAME, defined before including)
 * and the PE (the test's `me`), and ends the test with status 1.
 */
#ifndef GPURMA_TESTS_NVSHMEM_GPU_CHECK_H
#define GPURMA_TESTS_NVSHMEM_GPU_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <nvshmem.h>

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

#endif
