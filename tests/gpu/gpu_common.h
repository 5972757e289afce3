/*
 * gpu_common.h - helpers of the GPU tests and benchmark: error checks, the
 * skip rule (exit 77 without a GPU), seeded data patterns and poison.
 *
 * Tests run under any launcher the library bootstraps from (mpirun, the uid
 * environment of tests/gpu/run-device.sh); ranks on one node spread over
 * the GPUs (GPURMA_DEVICE_AUTO) and share one when there are fewer GPUs.
 */
#ifndef GPURMA_TESTS_GPU_COMMON_H
#define GPURMA_TESTS_GPU_COMMON_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "gpurma.h"
#include "gpurma_device.h"

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

extern gpurma_ctx_t g_ctx;

#define GK(x)                                                                                 \
    do {                                                                                      \
        int s_ = (x);                                                                         \
        if (s_ != GPURMA_SUCCESS) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #x,                    \
                    gpurma_strerror((gpurma_status_t)s_), gpurma_last_error_message(g_ctx));  \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

/* A check that lets the test go on, so that one run reports every
 * mismatch: counts into the including test's `static long failures`, which
 * decides its exit status. The rank comes from gpurma_rank, which leaves
 * the error message a check may be printing alone. */
#define EXPECT(cond, ...)                                                                     \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", gpurma_rank(g_ctx), __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                     \
            fputc('\n', stderr);                                                              \
            failures++;                                                                       \
        }                                                                                     \
    } while (0)

/* Exits 77 (skip) when this process sees no GPU. */
static inline void skip_without_gpu(const char *name)
{
    /* Kernels of these tests wait for kernels launched after them (in this
     * process or a peer's); with lazy loading, loading the later one would
     * wait for the running one. Must precede the first CUDA call. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("%s: no GPU, skipped\n", name);
        exit(77);
    }
}

/* gpurma_init with a 30 s bound on every wait, so that a lost signal fails
 * the test instead of hanging it. */
static inline void init_bounded(void)
{
    gpurma_init_params_t ip;
    memset(&ip, 0, sizeof(ip));
    ip.field_mask = GPURMA_INIT_FIELD_TIMEOUT_MS;
    ip.timeout_ms = 30000;
    GK(gpurma_init(&ip, &g_ctx));
}

/* Byte i of the stream named by seed: a hash, so that any shift, loss or
 * duplication of data shows. Defined for any 64-bit index. */
__host__ __device__ inline uint8_t pattern_byte(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
    z ^= z >> 31;
    z *= 0xd6e9f7c5a2b14e77ull;
    z ^= z >> 29;
    return (uint8_t)z;
}

/* dst[i] = pattern(seed, i - shift), or its complement (poison that differs
 * from the expected data in every byte). */
__global__ void fill_pattern(uint8_t *dst, size_t n, uint64_t seed, uint64_t shift, int invert)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint8_t b = pattern_byte(seed, (uint64_t)i - shift);
        dst[i] = invert ? (uint8_t)~b : b;
    }
}

static inline void fill(void *dst, size_t n, uint64_t seed, uint64_t shift, int invert,
                        cudaStream_t s = 0)
{
    if (!n)
        return;
    unsigned blocks = (unsigned)((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024);
    fill_pattern<<<blocks, 256, 0, s>>>((uint8_t *)dst, n, seed, shift, invert);
    CK(cudaGetLastError());
}

/* Checks device memory [0, n): bytes in [lo, hi) must be pattern(seed,
 * i - lo), all others its complement (the poison). Returns mismatches and
 * prints the first few. */
static inline long check_region(const char *what, const void *dev, size_t n, size_t lo,
                                size_t hi, uint64_t seed)
{
    std::vector<uint8_t> h(n);
    if (n)
        CK(cudaMemcpy(h.data(), dev, n, cudaMemcpyDefault));
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t want = pattern_byte(seed, (uint64_t)i - lo);
        if (i < lo || i >= hi)
            want = (uint8_t)~want;
        if (h[i] != want) {
            if (bad < 4)
                fprintf(stderr, "  %s: byte %zu is 0x%02x, expected 0x%02x (%s)\n", what, i, h[i],
                        want, i < lo || i >= hi ? "poison outside the transfer" : "data");
            bad++;
        }
    }
    return bad;
}

/* The size classes of every data test: 1 B to several MiB, odd ones too. */
static const size_t k_sizes[] = {1,    3,    8,     15,     16,      17,          31,
                                 64,   255,  4096,  4103,   65539,   (1u << 20) + 5,
                                 4u << 20};
static const int k_nsizes = (int)(sizeof(k_sizes) / sizeof(k_sizes[0]));

#endif
