/*
 * nvtest.h - helpers of the NVSHMEM-style tests: they are NVSHMEM programs
 * (nvshmem.h and nvshmemx.h only, from gpurma's include/gpurma/nvshmem)
 * plus a failure macro that names the PE and deterministic random data any
 * PE can regenerate for any other.
 */
#ifndef GPURMA_TESTS_NVTEST_H
#define GPURMA_TESTS_NVTEST_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvshmem.h>
#include <nvshmemx.h>

static const char *nv_name = "?";
static uint64_t nv_checks;

__attribute__((format(printf, 3, 4), noreturn)) static inline void
nv_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s: PE %d of %d (%s:%d): ", nv_name, nvshmem_my_pe(), nvshmem_n_pes(),
            file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}
#define NV_ASSERT(cond, ...)                                                                  \
    do {                                                                                     \
        nv_checks++;                                                                         \
        if (!(cond))                                                                         \
            nv_fail_at(__FILE__, __LINE__, __VA_ARGS__);                                     \
    } while (0)

/* A small heap keeps eight PEs of shared memory cheap; the environment wins. */
static inline void nv_init(const char *name)
{
    nv_name = name;
    setenv("NVSHMEM_SYMMETRIC_SIZE", "48M", 0);
    nvshmem_init();
}

static inline void nv_finish(void)
{
    nvshmem_barrier_all();
    if (nvshmem_my_pe() == 0)
        printf("PASS %s: %d PEs, %" PRIu64 " checks on PE 0\n", nv_name, nvshmem_n_pes(),
               nv_checks);
    nvshmem_finalize();
}

/* splitmix64: the random stream of (purpose, pe, round). */
static inline uint64_t nv_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static inline uint64_t nv_seed(uint64_t purpose, int pe, uint64_t round)
{
    return nv_mix(nv_mix(purpose * 1000003u + (uint64_t)pe) ^ round);
}
/* bytes of random data, never all zero (each byte's stream differs). */
static inline void nv_fill(void *buf, size_t bytes, uint64_t seed)
{
    unsigned char *p = (unsigned char *)buf;
    uint64_t s = seed;
    for (size_t i = 0; i < bytes; i++) {
        if (i % 8 == 0)
            s = nv_mix(s);
        p[i] = (unsigned char)(s >> (8 * (i % 8))) | (i % 3 == 0 ? 1 : 0);
    }
}
#define NV_POISON 0xA5

/* The first byte where got differs from want, or -1. */
static inline long nv_diff(const void *got, const void *want, size_t bytes)
{
    const unsigned char *g = (const unsigned char *)got, *w = (const unsigned char *)want;
    for (size_t i = 0; i < bytes; i++)
        if (g[i] != w[i])
            return (long)i;
    return -1;
}
/* got must equal want byte for byte; the message says what was checked. */
#define NV_EXPECT_BYTES(got, want, bytes, ...)                                                \
    do {                                                                                     \
        long d_ = nv_diff((got), (want), (bytes));                                           \
        nv_checks++;                                                                         \
        if (d_ >= 0) {                                                                       \
            char what_[256];                                                                 \
            snprintf(what_, sizeof what_, __VA_ARGS__);                                      \
            nv_fail_at(__FILE__, __LINE__, "%s: byte %ld of %zu differs (got 0x%02x, want 0x%02x)", \
                       what_, d_, (size_t)(bytes), ((const unsigned char *)(got))[d_],       \
                       ((const unsigned char *)(want))[d_]);                                 \
        }                                                                                    \
    } while (0)

#endif
