/*
 * atomics_load.c - threads of every rank hammer rank 0's window with
 * fetch-add and compare-swap pairs, then everyone checks the exact totals
 * and finalizes. Run by atomics-load.sh on simulated UCX nodes with the
 * cores taken by spinning processes: under that load ranks used to crash
 * in the UCX transport while their target was finalizing.
 *
 * Word 0 of rank 0's window counts fetch-adds (each adds 1): it must end
 * at exactly ranks * AL_THREADS * AL_PAIRS. Word 1 is a compare-swap
 * ticket: each thread reads it and swaps in the next value until it wins,
 * so it ends at the same count, and every fetch-add ticket 0..N-1 is taken
 * exactly once (checked through a bitmap on rank 0).
 *
 * Environment: AL_THREADS (default 4), AL_PAIRS per thread (default 2000),
 * AL_EARLY=1: no totals; every rank finalizes once its threads are done.
 * With a short GPURMA_TIMEOUT_MS, rank 0 (whose own atomics are fast)
 * gives up on finalize's barrier and leaves while the rank on the other
 * node still has thousands of atomics to issue at it: those must fail
 * with an error (the threads go on calling), never crash. This is where
 * the UCX transport's table of atomics in flight used to overflow.
 *
 * AL_STALL=ms (with AL_EARLY): a child of rank 0 stops it (SIGSTOP) for
 * that long, AL_STALL_AFTER ms (default 300) after its window exists, then
 * lets it go on: a target that does not answer, alive. The other node's
 * atomics in flight time out (GPURMA_TIMEOUT_MS); their readers give up
 * before the proxy does, and the FIFO result slots they leave must not
 * hold up later atomics (each cost a whole timeout a lap, for as long as
 * the run lasted).
 *
 * AL_DEVICE=1: the threads call the device API (gpurma_device.h as plain C)
 * instead of the host API; peers of the port engine then push from the
 * kernels' side of the FIFO, whose readers give their result slots up on a
 * timeout the same way.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpurma.h"
#include "gpurma_device.h"

static gpurma_ctx_t ctx;
static gpurma_win_t win;
static gpurma_dev_win_t dwin;
static int rank, size, nthreads = 4, early, device;
static long pairs = 2000;
static uint64_t *tickets; /* [nthreads * pairs]: this rank's fetch-add results */
static int failed_calls;

#define FAIL(...)                                                                  \
    do {                                                                           \
        fprintf(stderr, "FAIL atomics_load: rank %d: ", rank);                     \
        fprintf(stderr, __VA_ARGS__);                                              \
        fputc('\n', stderr);                                                       \
        exit(1);                                                                   \
    } while (0)

static void *worker(void *arg)
{
    long t = (long)arg;
    for (long i = 0; i < pairs; i++) {
        uint64_t old = 0;
        int rc = device ? gpurma_dev_atomic_fetch_add(dwin, 0, 0, 1, &old)
                        : gpurma_atomic_fetch_add(win, 0, 0, 1, &old);
        if (rc) {
            if (early && rank) { /* the target may be gone: an error is fine */
                __atomic_fetch_add(&failed_calls, 1, __ATOMIC_RELAXED);
                continue; /* and the next call must not crash either */
            }
            FAIL("fetch_add: %s: %s", gpurma_strerror(rc),
                 device ? "(device API)" : gpurma_last_error_message(ctx));
        }
        tickets[t * pairs + i] = old;
        uint64_t seen = 0, cur = 0;
        for (;;) {
            rc = device ? gpurma_dev_atomic_compare_swap(dwin, 0, 8, cur, cur + 1, &seen)
                        : gpurma_atomic_compare_swap(win, 0, 8, cur, cur + 1, &seen);
            if (rc) {
                if (early && rank) {
                    __atomic_fetch_add(&failed_calls, 1, __ATOMIC_RELAXED);
                    break;
                }
                FAIL("compare_swap: %s: %s", gpurma_strerror(rc),
                     device ? "(device API)" : gpurma_last_error_message(ctx));
            }
            if (seen == cur)
                break;
            cur = seen;
        }
    }
    return NULL;
}

int main(void)
{
    const char *e;
    if ((e = getenv("AL_THREADS")))
        nthreads = atoi(e);
    if ((e = getenv("AL_PAIRS")))
        pairs = atol(e);
    early = (e = getenv("AL_EARLY")) && !strcmp(e, "1");
    device = (e = getenv("AL_DEVICE")) && !strcmp(e, "1");
    if (nthreads < 1 || nthreads > 64 || pairs < 1)
        FAIL("bad AL_THREADS or AL_PAIRS");
    int rc = gpurma_init(NULL, &ctx);
    if (rc)
        FAIL("init: %s", gpurma_strerror(rc));
    rank = gpurma_rank(ctx);
    size = gpurma_size(ctx);
    uint64_t *base;
    rc = gpurma_win_allocate(gpurma_team_world(ctx), 64, NULL, (void **)&base, &win);
    if (rc)
        FAIL("win_allocate: %s: %s", gpurma_strerror(rc), gpurma_last_error_message(ctx));
    if (device && (rc = gpurma_win_device(win, &dwin)))
        FAIL("win_device: %s: %s", gpurma_strerror(rc), gpurma_last_error_message(ctx));
    long stall_ms = (e = getenv("AL_STALL")) ? atol(e) : 0;
    long stall_after = (e = getenv("AL_STALL_AFTER")) ? atol(e) : 300;
    if (stall_ms > 0 && early && rank == 0) {
        pid_t target = getpid();
        /* The child only sleeps and signals (async-signal-safe after fork). */
        if (fork() == 0) {
            struct timespec after = {stall_after / 1000, stall_after % 1000 * 1000000L},
                            stall = {stall_ms / 1000, stall_ms % 1000 * 1000000L};
            nanosleep(&after, NULL);
            if (getppid() != target) /* rank 0 is gone: its pid may be another's */
                _exit(0);
            kill(target, SIGSTOP);
            nanosleep(&stall, NULL);
            kill(target, SIGCONT);
            _exit(0);
        }
    }
    tickets = calloc((size_t)nthreads * (size_t)pairs, sizeof(*tickets));
    if (!tickets)
        FAIL("out of memory");
    pthread_t th[64];
    for (long t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)t))
            FAIL("pthread_create");
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    if (early) {
        /* Rank 0 leaves at once; the others finalize whatever their last
         * atomics returned. */
        printf("atomics_load: rank %d: done (%d call(s) failed after the target left)\n", rank,
               failed_calls);
        fflush(stdout); /* out before finalize, which may meet the job's end */
        free(tickets);
        rc = gpurma_finalize(ctx);
        /* A finalize that reports the peer that finished first is fine. */
        if (rc && rc != GPURMA_ERR_PEER_FAILED && rc != GPURMA_ERR_TIMEOUT)
            FAIL("finalize: %s", gpurma_strerror(rc));
        return 0;
    }
    /* Every rank's tickets to rank 0, which checks that each of 0..N-1 was
     * handed out exactly once and that both words hold N. */
    uint64_t total = (uint64_t)size * (uint64_t)nthreads * (uint64_t)pairs;
    size_t mine = (size_t)nthreads * (size_t)pairs;
    gpurma_win_t tw;
    uint64_t *tbase;
    rc = gpurma_win_allocate(gpurma_team_world(ctx), rank == 0 ? total * 8 : 0, NULL,
                             (void **)&tbase, &tw);
    if (rc)
        FAIL("ticket window: %s: %s", gpurma_strerror(rc), gpurma_last_error_message(ctx));
    if ((rc = gpurma_put(tw, 0, (size_t)rank * mine * 8, tickets, mine * 8)) ||
        (rc = gpurma_flush(tw, 0)) || (rc = gpurma_barrier(gpurma_team_world(ctx))))
        FAIL("gathering tickets: %s: %s", gpurma_strerror(rc), gpurma_last_error_message(ctx));
    if (rank == 0) {
        if (base[0] != total || base[1] != total)
            FAIL("fetch-add word %llu, compare-swap word %llu, expected %llu each",
                 (unsigned long long)base[0], (unsigned long long)base[1],
                 (unsigned long long)total);
        unsigned char *seen = calloc(total, 1);
        if (!seen)
            FAIL("out of memory");
        for (uint64_t i = 0; i < total; i++) {
            if (tbase[i] >= total || seen[tbase[i]]++)
                FAIL("ticket %llu handed out twice or out of range",
                     (unsigned long long)tbase[i]);
        }
        free(seen);
        printf("atomics_load: %d ranks x %d threads x %ld pairs: exact\n", size, nthreads,
               pairs);
    }
    if ((rc = gpurma_barrier(gpurma_team_world(ctx))) || (rc = gpurma_win_free(&tw)) ||
        (rc = gpurma_win_free(&win)))
        FAIL("teardown: %s: %s", gpurma_strerror(rc), gpurma_last_error_message(ctx));
    free(tickets);
    rc = gpurma_finalize(ctx);
    if (rc)
        FAIL("finalize: %s", gpurma_strerror(rc));
    return 0;
}
