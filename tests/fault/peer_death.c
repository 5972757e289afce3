/*
 * peer_death.c - a rank dies in the middle of a ring; every survivor must be
 * told, naming the dead rank, within a bounded time.
 *
 * The ranks pass a token around a ring: each round, rank 0 sends a payload
 * (seeded random bytes, a different size and odd offset each round) to rank
 * 1 with put_signal, every rank waits for its left neighbour's payload,
 * checks it byte for byte, poisons it and forwards a fresh one to its right.
 * With PD_PHASE=barrier every round also ends in a barrier over the world.
 *
 * Environment (all optional):
 *   PD_MODE       self      the victim raises SIGKILL after PD_ROUNDS rounds
 *                 external  the victim writes its pid to PD_PIDFILE after
 *                           PD_ROUNDS rounds and keeps going until killed
 *                 none      nobody dies: PD_ROUNDS rounds, clean finalize
 *   PD_VICTIM     rank that dies (default: the last one)
 *   PD_ROUNDS     rounds before the death, or in all for mode none (default 20)
 *   PD_PHASE      wait (default): the victim dies holding the token, so the
 *                 survivors are all inside wait_until; barrier: it dies just
 *                 before a barrier, so they are inside gpurma_barrier;
 *                 stream: after the rounds the survivors only put to the
 *                 victim and flush / quiet (no waits) while it dies, and
 *                 must learn it from flush or quiet; alloc: the victim
 *                 dies inside gpurma_win_allocate of a second window, once
 *                 its shared-memory segment exists (a thread watches
 *                 /dev/shm), and the survivors must fail that call
 *   PD_PIDFILE    where the victim writes its pid (mode external)
 *   PD_MAX_SECONDS give up after this long without a failure (default 60)
 *   PD_RESULT_DIR  each rank also writes its exit code to DIR/rank.R, for
 *                 launchers that do not pass exit codes on (mpirun)
 *   PD_DEATH_FILE  mode self: the victim writes its CLOCK_MONOTONIC time
 *                 there just before it dies; survivors print how long after
 *                 it they were told ("detected after N ms")
 *   PD_DETECT_MAX_MS   fail a survivor told later than that (needs the above)
 *   PD_TEARDOWN_MAX_MS fail a survivor whose barrier + win_free + finalize
 *                 after the failure take longer than that
 *
 * Every rank prints "peer_death: rank R: pid P" first.
 *
 * Each survivor prints one line
 *   peer_death: rank R: SURVIVOR <op> -> GPURMA_ERR_...: <message>
 * and exits 3 for GPURMA_ERR_PEER_FAILED, 4 for GPURMA_ERR_TIMEOUT. Other
 * exits: 0 clean run (mode none), 1 wrong data or an unexpected error,
 * 2 initialization failed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpurma.h>

#include "../shm_segments.h"
#include "status_name.h"

enum { EXIT_PEER_FAILED = 3, EXIT_TIMED_OUT = 4 };

#include <pthread.h>

#define WIN_BYTES  (2u << 20)
#define TOKEN_SIG  0u

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Payload bytes of (round, origin): xorshift64* seeded by both, so a stale
 * payload of another round or origin never passes the check. */
static void fill_payload(uint8_t *p, size_t n, long round, int origin)
{
    uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)round << 20) ^ (uint64_t)(origin + 1);
    for (size_t i = 0; i < n; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        p[i] = (uint8_t)((x * 0x2545f4914f6cdd1dull) >> 56);
    }
}

/* Sizes cycle through every class from 1 byte to over a MiB, all odd
 * multiples or odd remainders; offsets are odd too. */
static void round_shape(long round, size_t *off, size_t *bytes)
{
    static const size_t sizes[] = {1, 7, 64, 1000, 4099, 65537, 262147, 1048573, 3, 8191};
    *bytes = sizes[round % (long)(sizeof(sizes) / sizeof(sizes[0]))];
    *off = (size_t)(round * 37 % 4093) | 1;
}

static int exit_with(int rank, int code)
{
    const char *dir = getenv("PD_RESULT_DIR");
    if (dir && *dir && rank >= 0) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/rank.%d", dir, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%d\n", code);
            fclose(f);
        }
    }
    return code;
}

typedef struct {
    gpurma_ctx_t ctx;
    gpurma_win_t win;
    uint8_t     *inbox; /* this rank's window */
    uint8_t     *payload, *expect;
    int          rank, left, right;
    int          finalized;
    double       t_start;
} ring_t;

/* Milliseconds since the victim wrote PD_DEATH_FILE, or -1. */
static long ms_since_death(void)
{
    const char *path = getenv("PD_DEATH_FILE");
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    double t = -1;
    if (f) {
        if (fscanf(f, "%lf", &t) != 1)
            t = -1;
        fclose(f);
    }
    return t < 0 ? -1 : (long)((now_s() - t) * 1000);
}

/* A survivor reports what it got and ends; the exit code says which error.
 * Everything is released on the way out, so that a leak checker (ASan) sees
 * the failure path as clean as the normal one. */
static int survivor_report(ring_t *g, long round, const char *op, gpurma_status_t rc)
{
    long detect_ms = ms_since_death();
    printf("peer_death: rank %d: SURVIVOR %s in round %ld -> %s (%d): %s\n", g->rank, op, round,
           status_name(rc), (int)rc, gpurma_last_error_message(g->ctx));
    if (detect_ms >= 0)
        printf("peer_death: rank %d: detected after %ld ms\n", g->rank, detect_ms);
    /* The job is broken: a barrier must fail as well, and promptly; freeing
     * the window and finalizing must return (with an error) without hanging. */
    double t0 = now_s(), t_teardown = t0;
    gpurma_status_t brc = gpurma_barrier(gpurma_team_world(g->ctx));
    printf("peer_death: rank %d: barrier after the failure -> %s (%.2f s)\n", g->rank,
           status_name(brc), now_s() - t0);
    t0 = now_s();
    gpurma_status_t wrc = gpurma_win_free(&g->win);
    gpurma_status_t frc = gpurma_finalize(g->ctx);
    g->finalized = 1;
    double teardown = now_s() - t_teardown;
    printf("peer_death: rank %d: win_free -> %s, finalize -> %s (%.2f s); %.2f s since start\n",
           g->rank, status_name(wrc), status_name(frc), now_s() - t0, now_s() - g->t_start);
    if (brc == GPURMA_SUCCESS) {
        printf("peer_death: rank %d: FAIL: barrier succeeded although a rank is dead\n", g->rank);
        return 1;
    }
    long detect_max = env_long("PD_DETECT_MAX_MS", 0), teardown_max = env_long("PD_TEARDOWN_MAX_MS", 0);
    if (detect_max && (detect_ms < 0 || detect_ms > detect_max)) {
        printf("peer_death: rank %d: FAIL: told %ld ms after the death (at most %ld)\n", g->rank,
               detect_ms, detect_max);
        return 1;
    }
    if (teardown_max && teardown * 1000 > (double)teardown_max) {
        printf("peer_death: rank %d: FAIL: barrier, win_free and finalize after the failure took "
               "%.0f ms (at most %ld)\n", g->rank, teardown * 1000, teardown_max);
        return 1;
    }
    if (rc == GPURMA_ERR_PEER_FAILED)
        return EXIT_PEER_FAILED;
    if (rc == GPURMA_ERR_TIMEOUT)
        return EXIT_TIMED_OUT;
    return 1;
}

/* Waits for the left neighbour's payload of this round and checks it.
 * Returns -1 when it arrived intact, else the exit code. */
static int receive(ring_t *g, long round, size_t off, size_t bytes)
{
    gpurma_status_t rc = gpurma_wait_until(g->win, TOKEN_SIG, GPURMA_CMP_GE, (uint64_t)round + 1);
    if (rc)
        return survivor_report(g, round, "wait_until", rc);
    fill_payload(g->expect, bytes, round, g->left);
    if (memcmp(g->inbox + off, g->expect, bytes) != 0) {
        printf("peer_death: rank %d: FAIL: round %ld: %zu bytes at offset %zu from rank %d "
               "differ\n", g->rank, round, bytes, off, g->left);
        return 1;
    }
    memset(g->inbox + off, 0xa5, bytes); /* a stale payload must not pass next time */
    return -1;
}

static int forward(ring_t *g, long round, size_t off, size_t bytes)
{
    fill_payload(g->payload, bytes, round, g->rank);
    gpurma_status_t rc = gpurma_put_signal(g->win, g->right, off, g->payload, bytes, TOKEN_SIG,
                                           GPURMA_SIGNAL_ADD, 1);
    if (!rc)
        rc = gpurma_flush(g->win, g->right); /* payload is reused next round */
    return rc ? survivor_report(g, round, "put_signal", rc) : -1;
}

static void die_now(int rank, long round, const char *where)
{
    printf("peer_death: rank %d: raising SIGKILL in round %ld, %s\n", rank, round, where);
    fflush(stdout);
    const char *path = getenv("PD_DEATH_FILE");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%.6f\n", now_s());
        fclose(f);
    }
    raise(SIGKILL);
}

/* Phase stream: the survivors put to the victim and complete with flush and
 * quiet only, so nothing but those calls can tell them. */
static int stream_to_victim(ring_t *g, int victim, double max_s)
{
    if (g->rank == victim) {
        usleep(200 * 1000); /* the others are streaming by now */
        die_now(g->rank, 0, "while the others stream puts to it");
    }
    fill_payload(g->payload, 4096, 1, g->rank);
    size_t off = (size_t)g->rank * 4096 % (WIN_BYTES - 4096);
    for (long i = 0;; i++) {
        if (now_s() - g->t_start > max_s) {
            printf("peer_death: rank %d: FAIL: flush and quiet still succeed after %.0f s of "
                   "puts to dead rank %d\n", g->rank, max_s, victim);
            return 1;
        }
        gpurma_status_t rc = gpurma_put(g->win, victim, off, g->payload, 4096);
        if (rc)
            return survivor_report(g, i, "put", rc);
        rc = gpurma_flush(g->win, victim);
        if (rc)
            return survivor_report(g, i, "flush", rc);
        if ((i & 15) == 15 && (rc = gpurma_quiet(g->win)))
            return survivor_report(g, i, "quiet", rc);
    }
}

/* Phase alloc: a thread of the victim raises SIGKILL as soon as a new
 * shared-memory segment of this process appears, i.e. inside the
 * gpurma_win_allocate that created it. */
static void *die_on_new_segment(void *arg)
{
    int before = *(int *)arg;
    while (t_own_segments() <= before)
        usleep(200);
    die_now(-1, 0, "inside gpurma_win_allocate (its segment exists)");
    return NULL;
}

static int allocate_with_death(ring_t *g, int victim)
{
    static int before;
    pthread_t t;
    if (g->rank == victim) {
        before = t_own_segments();
        if (pthread_create(&t, NULL, die_on_new_segment, &before))
            return 2;
    } else {
        usleep(300 * 1000); /* the victim is inside the call first */
    }
    gpurma_win_params_t wp = {.field_mask = GPURMA_WIN_FIELD_MEM_KIND,
                              .mem_kind = GPURMA_MEM_HOST};
    gpurma_win_t second = NULL;
    gpurma_status_t rc =
        gpurma_win_allocate(gpurma_team_world(g->ctx), 8u << 20, &wp, NULL, &second);
    if (g->rank == victim)
        pause(); /* the thread ends the process */
    if (rc == GPURMA_SUCCESS) {
        printf("peer_death: rank %d: FAIL: win_allocate succeeded although rank %d died in it\n",
               g->rank, victim);
        gpurma_win_free(&second);
        return 1;
    }
    return survivor_report(g, 0, "win_allocate", rc);
}

static int write_pidfile(int rank, long round)
{
    const char *pidfile = getenv("PD_PIDFILE");
    FILE *f = pidfile && *pidfile ? fopen(pidfile, "w") : NULL;
    if (!f) {
        printf("peer_death: rank %d: PD_PIDFILE is not set or cannot be written\n", rank);
        return 2;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    printf("peer_death: rank %d: pid %d written in round %ld, running until killed\n", rank,
           (int)getpid(), round);
    return -1;
}

/* The whole program; returns the exit code. */
static int run(ring_t *g)
{
    gpurma_init_params_t ip = {.field_mask = GPURMA_INIT_FIELD_DEVICE,
                               .device = GPURMA_DEVICE_HOST};
    gpurma_status_t rc = gpurma_init(&ip, &g->ctx);
    if (rc) {
        printf("peer_death: init -> %s: %s\n", status_name(rc), gpurma_last_error_message(NULL));
        return 2;
    }
    int size = gpurma_size(g->ctx);
    g->rank = gpurma_rank(g->ctx);
    g->left = (g->rank + size - 1) % size;
    g->right = (g->rank + 1) % size;
    const char *mode = getenv("PD_MODE") ? getenv("PD_MODE") : "self";
    const char *phase = getenv("PD_PHASE") ? getenv("PD_PHASE") : "wait";
    int victim = (int)env_long("PD_VICTIM", size - 1);
    long rounds = env_long("PD_ROUNDS", 20);
    double max_s = (double)env_long("PD_MAX_SECONDS", 60);
    int self_kill = !strcmp(mode, "self"), external = !strcmp(mode, "external");
    int in_barrier = !strcmp(phase, "barrier"), in_stream = !strcmp(phase, "stream");
    int in_alloc = !strcmp(phase, "alloc");
    printf("peer_death: rank %d: pid %d\n", g->rank, (int)getpid());
    if (size < 2 || victim < 0 || victim >= size || rounds < 1 ||
        (!self_kill && !external && strcmp(mode, "none")) ||
        (!in_barrier && !in_stream && !in_alloc && strcmp(phase, "wait")) ||
        ((in_stream || in_alloc) && !self_kill)) {
        printf("peer_death: bad setup: %d ranks (2 or more needed), PD_MODE %s, PD_PHASE %s, "
               "PD_VICTIM %d, PD_ROUNDS %ld\n", size, mode, phase, victim, rounds);
        return 2;
    }

    gpurma_win_params_t wp = {.field_mask = GPURMA_WIN_FIELD_MEM_KIND,
                              .mem_kind = GPURMA_MEM_HOST};
    void *base = NULL;
    rc = gpurma_win_allocate(gpurma_team_world(g->ctx), WIN_BYTES, &wp, &base, &g->win);
    if (rc) {
        printf("peer_death: rank %d: win_allocate -> %s: %s\n", g->rank, status_name(rc),
               gpurma_last_error_message(g->ctx));
        return 2;
    }
    g->inbox = base;
    g->payload = malloc(WIN_BYTES);
    g->expect = malloc(WIN_BYTES);
    if (!g->payload || !g->expect)
        return 2;
    memset(g->inbox, 0xa5, WIN_BYTES);
    rc = gpurma_barrier(gpurma_team_world(g->ctx)); /* poisoned everywhere before any put */
    if (rc) {
        printf("peer_death: rank %d: first barrier -> %s\n", g->rank, status_name(rc));
        return 2;
    }
    if (g->rank == 0)
        printf("peer_death: %d ranks, bootstrap %s, mode %s, phase %s, victim %d after %ld "
               "rounds\n", size, gpurma_bootstrap_name(g->ctx), mode, phase, victim, rounds);

    if (in_stream)
        return stream_to_victim(g, victim, max_s);
    if (in_alloc)
        return allocate_with_death(g, victim);
    for (long round = 0; self_kill || external || round < rounds; round++) {
        if (now_s() - g->t_start > max_s) {
            printf("peer_death: rank %d: FAIL: no failure reported after %.0f s (round %ld)\n",
                   g->rank, max_s, round);
            return 1;
        }
        size_t off, bytes;
        round_shape(round, &off, &bytes);
        int victim_now = g->rank == victim && round == rounds;
        int code;
        /* Rank 0 starts a round; the others first receive it from the left. */
        if (g->rank != 0 && (code = receive(g, round, off, bytes)) >= 0)
            return code;
        if (victim_now && self_kill && !in_barrier)
            die_now(g->rank, round, "holding the token");
        if (victim_now && external && (code = write_pidfile(g->rank, round)) >= 0)
            return code;
        if ((code = forward(g, round, off, bytes)) >= 0)
            return code;
        if (g->rank == 0 && (code = receive(g, round, off, bytes)) >= 0)
            return code;
        if (in_barrier) {
            if (victim_now && self_kill)
                die_now(g->rank, round, "before the barrier");
            rc = gpurma_barrier(gpurma_team_world(g->ctx));
            if (rc)
                return survivor_report(g, round, "barrier", rc);
        }
    }

    rc = gpurma_win_free(&g->win);
    gpurma_status_t frc = gpurma_finalize(g->ctx);
    g->finalized = 1;
    if (rc || frc) {
        printf("peer_death: rank %d: FAIL: win_free -> %s, finalize -> %s\n", g->rank,
               status_name(rc), status_name(frc));
        return 1;
    }
    printf("peer_death: rank %d: clean run of %ld rounds PASS\n", g->rank, rounds);
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    ring_t g = {.rank = -1, .t_start = now_s()};
    int code = run(&g);
    if (g.ctx && !g.finalized) { /* an early exit: release what is left */
        if (g.win)
            gpurma_win_free(&g.win);
        gpurma_finalize(g.ctx);
    }
    free(g.payload);
    free(g.expect);
    return exit_with(g.rank, code);
}
