/*
 * common.h - helpers shared by the multi-process tests (tests/mp/).
 *
 * Every test program includes this first. It gives:
 *   t_init / t_finish        init (optionally with a short timeout); PASS line on rank 0
 *   CHECK(call)              the call must succeed; otherwise its status, the status
 *                            string and the library's last message are printed
 *   T_ASSERT(cond, fmt, ...) a condition, with an explanation when it does not hold
 *   EXPECT_ERR(code, call)   the call must fail with exactly code and write a message
 *                            of its own (the old one is replaced by a known text first)
 *   EXPECT_CODE(code, call)  exact status of device-API calls, which write no message
 *   t_seed / t_fill          deterministic random bytes per (purpose, origin, round):
 *                            any rank can regenerate what any other rank sent
 *   t_verify / t_verify_fill / t_verify_window
 *                            exact byte checks of data and of the poison around it; a
 *                            mismatch names rank, size, offset, the first differing
 *                            byte and the expected and actual values
 *   t_launcher_rank          the rank the launcher set, before init (-1: none)
 *
 * A failing rank exits at once: the launcher then ends the job, and peers
 * blocked in a wait see the death (GPURMA_ERR_PEER_FAILED) instead of hanging.
 */
#ifndef GPURMA_TESTS_MP_COMMON_H
#define GPURMA_TESTS_MP_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpurma.h"

#define T_POISON 0xA5 /* what destinations hold before anything is written */

static gpurma_ctx_t t_ctx;
static gpurma_team_t t_world;
static int t_rank = -1, t_size = 0;
static const char *t_name = "?";
static double t_start;
static uint64_t t_checks; /* verified bytes and outcomes, for the PASS line */

/* This process's rank from the launcher's variables (Open MPI's or
 * PMIx's), for tests that set a variable before init; -1 (the caller
 * skips) without them. */
static inline int t_launcher_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r)
        r = getenv("PMIX_RANK");
    return r ? atoi(r) : -1;
}

static inline double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((format(printf, 3, 4), noreturn)) static inline void
t_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s: rank %d of %d (%s:%d): ", t_name, t_rank, t_size, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}
#define T_FAIL(...) t_fail_at(__FILE__, __LINE__, __VA_ARGS__)

#define CHECK(call)                                                                                \
    do {                                                                                           \
        gpurma_status_t t_rc_ = (call);                                                            \
        if (t_rc_ != GPURMA_SUCCESS)                                                               \
            T_FAIL("%s returned %d (%s): %s", #call, (int)t_rc_, gpurma_strerror(t_rc_),           \
                   gpurma_last_error_message(t_ctx));                                              \
    } while (0)

/* Boolean assertion with a formatted explanation. */
#define T_ASSERT(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            T_FAIL(__VA_ARGS__);                                                                   \
        __atomic_add_fetch(&t_checks, 1, __ATOMIC_RELAXED);                                        \
    } while (0)

/* Before a call that must fail, the thread's message is set to a known text
 * (by a call that is itself an error: an init claiming a future API
 * version), so that a call that fails without writing its own message is
 * caught. The text is remembered as the library wrote it. */
static __thread char t_stale_message[512];
static inline void t_arm_message(void)
{
    gpurma_ctx_t unused;
    (void)gpurma_init_version(0xFFFF0000u, NULL, &unused);
    snprintf(t_stale_message, sizeof(t_stale_message), "%s", gpurma_last_error_message(t_ctx));
}

static inline void t_expect_err_at(int got, int want, const char *what, const char *file, int line)
{
    if (got != want)
        t_fail_at(file, line, "%s returned %d (%s), expected %d (%s); message: %s", what, got,
                  gpurma_strerror((gpurma_status_t)got), want,
                  gpurma_strerror((gpurma_status_t)want), gpurma_last_error_message(t_ctx));
    const char *m = gpurma_last_error_message(t_ctx);
    if (!m || !*m || !strcmp(m, t_stale_message))
        t_fail_at(file, line, "%s returned %s but left no message of its own (\"%s\")", what,
                  gpurma_strerror((gpurma_status_t)got), m ? m : "(null)");
    __atomic_add_fetch(&t_checks, 1, __ATOMIC_RELAXED);
}
#define EXPECT_ERR(want, call)                                                                     \
    do {                                                                                           \
        t_arm_message();                                                                           \
        t_expect_err_at((int)(call), (int)(want), #call, __FILE__, __LINE__);                      \
    } while (0)

#define EXPECT_CODE(want, call)                                                                    \
    do {                                                                                           \
        int t_got_ = (int)(call);                                                                  \
        if (t_got_ != (int)(want))                                                                 \
            T_FAIL("%s returned %d (%s), expected %d (%s)", #call, t_got_,                         \
                   gpurma_strerror((gpurma_status_t)t_got_), (int)(want),                          \
                   gpurma_strerror((gpurma_status_t)(want)));                                      \
        __atomic_add_fetch(&t_checks, 1, __ATOMIC_RELAXED);                                        \
    } while (0)

/* ------------------------------------------------------------ random data */

static inline uint64_t t_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One seed per (purpose, origin rank, round): every rank can regenerate what
 * any other rank sent without communicating. */
static inline uint64_t t_seed(uint64_t purpose, uint64_t origin, uint64_t round)
{
    uint64_t s = purpose * 0x100000001B3ull ^ (origin << 40) ^ round;
    t_splitmix64(&s);
    return t_splitmix64(&s);
}

static inline void t_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t s = seed;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = t_splitmix64(&s);
        memcpy(p + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = t_splitmix64(&s);
        memcpy(p + i, &v, n - i);
    }
}

/* Random value in [0, bound). */
static inline uint64_t t_below(uint64_t *state, uint64_t bound)
{
    return bound ? t_splitmix64(state) % bound : 0;
}

/* ------------------------------------------------------------ verification */

/* got[0..n) must equal want[0..n). off is where got sits in the window it
 * came from (for the message), peer the rank whose data it is. */
static inline void t_verify_at(const void *got, const void *want, size_t n, const char *what,
                               int peer, size_t off, const char *file, int line)
{
    __atomic_add_fetch(&t_checks, n, __ATOMIC_RELAXED);
    if (!memcmp(got, want, n))
        return;
    const unsigned char *g = got, *w = want;
    size_t first = n, bad = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i]) {
            if (first == n)
                first = i;
            bad++;
        }
    if (first == n) /* a second look found it right: it was still being written */
        t_fail_at(file, line,
                  "%s: peer %d, size %zu at offset %zu: the bytes changed while being checked "
                  "(data still arriving after the signal or flag that announced it)",
                  what, peer, n, off);
    t_fail_at(file, line,
              "%s: peer %d, size %zu at offset %zu: byte %zu (window offset %zu) expected 0x%02x "
              "got 0x%02x; %zu of %zu bytes differ",
              what, peer, n, off, first, off + first, w[first], g[first], bad, n);
}
#define t_verify(got, want, n, what, peer, off)                                                    \
    t_verify_at((got), (want), (n), (what), (peer), (off), __FILE__, __LINE__)

/* buf[0..n) must all be byte (poison that must have survived). */
static inline void t_verify_fill_at(const void *buf, int byte, size_t n, const char *what, int peer,
                                    size_t off, const char *file, int line)
{
    unsigned char ref[4096]; /* local: threads of one rank verify concurrently */
    const unsigned char *b = buf;
    memset(ref, byte, sizeof(ref));
    __atomic_add_fetch(&t_checks, n, __ATOMIC_RELAXED);
    for (size_t at = 0; at < n; at += sizeof(ref)) {
        size_t len = n - at < sizeof(ref) ? n - at : sizeof(ref);
        if (!memcmp(b + at, ref, len))
            continue;
        size_t i = at;
        while (i < n && b[i] == (unsigned char)byte)
            i++;
        if (i == n) /* changed under us: someone is still writing */
            t_fail_at(file, line,
                      "%s: peer %d, range of %zu bytes at offset %zu changed while being checked",
                      what, peer, n, off);
        size_t bad = 0;
        for (size_t k = i; k < n; k++)
            bad += b[k] != (unsigned char)byte;
        t_fail_at(file, line,
                  "%s: peer %d, range of %zu bytes at offset %zu: byte at offset %zu expected "
                  "0x%02x got 0x%02x; %zu bytes overwritten",
                  what, peer, n, off, off + i, (unsigned char)byte, b[i], bad);
    }
}
#define t_verify_fill(buf, byte, n, what, peer, off)                                               \
    t_verify_fill_at((buf), (byte), (n), (what), (peer), (off), __FILE__, __LINE__)

/* A window of len bytes, poisoned except [off, off+n), must hold want there. */
static inline void t_verify_window_at(const unsigned char *win, size_t len, size_t off,
                                      const void *want, size_t n, const char *what, int peer,
                                      const char *file, int line)
{
    t_verify_fill_at(win, T_POISON, off, what, peer, 0, file, line);
    t_verify_at(win + off, want, n, what, peer, off, file, line);
    t_verify_fill_at(win + off + n, T_POISON, len - off - n, what, peer, off + n, file, line);
}
#define t_verify_window(win, len, off, want, n, what, peer)                                        \
    t_verify_window_at((win), (len), (off), (want), (n), (what), (peer), __FILE__, __LINE__)

static inline void *t_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        T_FAIL("out of memory (%zu bytes)", n);
    return p;
}

/* --------------------------------------------------------------- lifecycle */

/* timeout_ms 0: the default (GPURMA_TIMEOUT_MS, which run-mp.sh sets). */
static inline void t_init(const char *name, int64_t timeout_ms)
{
    gpurma_init_params_t p;
    memset(&p, 0, sizeof(p));
    if (timeout_ms > 0) {
        p.field_mask = GPURMA_INIT_FIELD_TIMEOUT_MS;
        p.timeout_ms = timeout_ms;
    }
    t_name = name;
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK(gpurma_init(&p, &t_ctx));
    t_rank = gpurma_rank(t_ctx);
    t_size = gpurma_size(t_ctx);
    t_world = gpurma_team_world(t_ctx);
    if (t_rank < 0 || t_size < 1 || t_rank >= t_size || !t_world)
        T_FAIL("bad rank %d / size %d / world team %p", t_rank, t_size, (void *)t_world);
    t_start = t_now();
}

static inline int t_finish(const char *detail)
{
    CHECK(gpurma_barrier(t_world));
    double elapsed = t_now() - t_start;
    CHECK(gpurma_finalize(t_ctx));
    if (t_rank == 0)
        printf("PASS %s: %d ranks, %.2f s, %" PRIu64 " checks on rank 0%s%s\n", t_name, t_size,
               elapsed, t_checks, detail && *detail ? "; " : "", detail ? detail : "");
    return 0;
}

#endif
