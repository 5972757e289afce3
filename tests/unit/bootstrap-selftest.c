/*
 * bootstrap-selftest.c - exercises whichever bootstrap gpurma_bootstrap_open
 * picks: allgathers of seeded random data of several sizes (0 and 100000
 * bytes included), each byte checked against what every rank's generator
 * produces, barriers, and node information.
 *
 * Built against the bootstrap sources directly (not libgpurma): every .c
 * file of bootstrap/ but mpi_plugin.c, with src/{config,log,error}.c, e.g.
 *   cc -std=gnu11 -Iinclude -Isrc -Ibootstrap $BOOTSTRAP_SOURCES \
 *      src/{config,log,error}.c tests/unit/bootstrap-selftest.c -lpthread -ldl
 * Add -DHAVE_PMIX -lpmix for PMIx; build with mpicc and -DSELFTEST_WITH_MPI
 * to test the MPI plugin (GPURMA_SELFTEST_MPI=1).
 *
 * Environment (all optional):
 *   GPURMA_SELFTEST_MODE    normal | sleep | watch | abort
 *   GPURMA_SELFTEST_VICTIM  rank that sleeps (sleep, watch) or aborts (abort)
 *   GPURMA_SELFTEST_MARKER  file the victim creates when it starts sleeping
 *   GPURMA_SELFTEST_EXPECT_NODES  number of nodes the run must find
 * Exit: 0 pass, 1 wrong data or setup, 2 a bootstrap call failed, 3 the
 * watcher reported a failed peer (watch mode).
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef SELFTEST_WITH_MPI
#include <mpi.h>
#endif

#include "bootstrap.h"
#include "gpurma_internal.h"

#define ROUNDS_BEFORE_VICTIM 3

static const size_t sizes[] = {0, 1, 7, 64, 128, 4096, 100000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The block rank r contributes in a given round for a given size. */
static void fill_block(uint8_t *p, size_t len, int rank, int round, size_t size_index)
{
    uint64_t s = ((uint64_t)rank << 40) ^ ((uint64_t)round << 20) ^ (size_index * 7919 + len);
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)next_random(&s);
}

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

static double ms_since(uint64_t t0) { return (double)(gpurma_now_ns() - t0) / 1e6; }

static int report_failure(gpurma_bootstrap_t *bs, const char *what, int rc, uint64_t t0)
{
    printf("rank %d: %s failed after %.0f ms: %s (%d): %s\n", bs->rank, what, ms_since(t0),
           gpurma_strerror(rc), rc, gpurma_error_text());
    fflush(stdout);
    return 2;
}

/* One round: an allgather of every size, each followed by a barrier. */
static int run_round(gpurma_bootstrap_t *bs, int round)
{
    size_t maxlen = sizes[NSIZES - 1];
    uint8_t *mine = malloc(maxlen), *all = malloc(maxlen * (size_t)bs->size);
    uint8_t *expect = malloc(maxlen);
    if (!mine || !all || !expect) {
        printf("rank %d: out of memory\n", bs->rank);
        return 1;
    }
    int result = 0;
    for (size_t k = 0; k < NSIZES && !result; k++) {
        size_t len = sizes[k];
        fill_block(mine, len, bs->rank, round, k);
        memset(all, 0xee, len * (size_t)bs->size);
        uint64_t t0 = gpurma_now_ns();
        int rc = gpurma_bootstrap_allgather(bs, mine, all, len);
        if (rc) {
            char what[64];
            snprintf(what, sizeof(what), "allgather of %zu bytes (round %d)", len, round);
            result = report_failure(bs, what, rc, t0);
            break;
        }
        for (int r = 0; r < bs->size && !result; r++) {
            fill_block(expect, len, r, round, k);
            for (size_t i = 0; i < len; i++) {
                if (all[(size_t)r * len + i] != expect[i]) {
                    printf("rank %d: round %d size %zu: byte %zu of rank %d's block is %#x, "
                           "expected %#x\n", bs->rank, round, len, i, r,
                           all[(size_t)r * len + i], expect[i]);
                    result = 1;
                    break;
                }
            }
        }
        t0 = gpurma_now_ns();
        if (!result && (rc = gpurma_bootstrap_barrier(bs)))
            result = report_failure(bs, "barrier", rc, t0);
    }
    free(mine);
    free(all);
    free(expect);
    return result;
}

static void victim_sleep(gpurma_bootstrap_t *bs)
{
    const char *marker = getenv("GPURMA_SELFTEST_MARKER");
    printf("rank %d: victim sleeping (pid %d)\n", bs->rank, (int)getpid());
    fflush(stdout);
    if (marker) {
        FILE *f = fopen(marker, "w");
        if (f)
            fprintf(f, "%d\n", (int)getpid()), fclose(f);
    }
    sleep(600);
}

/* Waits, issuing no collective, for the bootstrap to notice a dead peer. */
static int wait_for_watcher(gpurma_bootstrap_t *bs)
{
    uint64_t t0 = gpurma_now_ns();
    while (ms_since(t0) < 30000) {
        if (__atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE)) {
            printf("rank %d: watcher reported rank %d failed (noticed %.0f ms into the wait)\n",
                   bs->rank, __atomic_load_n(&bs->failed_rank, __ATOMIC_RELAXED), ms_since(t0));
            fflush(stdout);
            return 3;
        }
        usleep(10000);
    }
    printf("rank %d: watcher noticed nothing within 30 s\n", bs->rank);
    return 1;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *mode = getenv("GPURMA_SELFTEST_MODE");
    mode = mode ? mode : "normal";
    int victim = env_int("GPURMA_SELFTEST_VICTIM", -1);
    void *mpi_comm = NULL;
#ifdef SELFTEST_WITH_MPI
    MPI_Comm world = MPI_COMM_WORLD;
    if (env_int("GPURMA_SELFTEST_MPI", 0)) {
        MPI_Init(&argc, &argv);
        mpi_comm = &world;
    }
#endif
    int64_t timeout_ms = gpurma_config()->timeout_ms;
    gpurma_bootstrap_t *bs = NULL;
    uint64_t t0 = gpurma_now_ns();
    int rc = gpurma_bootstrap_open(NULL, mpi_comm, timeout_ms, &bs);
    if (rc) {
        printf("bootstrap open failed after %.0f ms: %s (%d): %s\n", ms_since(t0),
               gpurma_strerror(rc), rc, gpurma_error_text());
        return 2;
    }
    printf("rank %d of %d: bootstrap %s, node %d of %d, local rank %d of %d\n", bs->rank,
           bs->size, bs->ops->name, bs->node_id, bs->num_nodes, bs->local_rank, bs->local_size);
    fflush(stdout);

    int result = 0;
    int expect_nodes = env_int("GPURMA_SELFTEST_EXPECT_NODES", 0);
    if (expect_nodes && bs->num_nodes != expect_nodes) {
        printf("rank %d: found %d nodes, expected %d\n", bs->rank, bs->num_nodes, expect_nodes);
        result = 1;
    }
    /* node_of must agree with this rank's own numbers. */
    int local = 0;
    for (int r = 0; r < bs->size; r++)
        local += bs->node_of[r] == bs->node_id;
    if (bs->node_of[bs->rank] != bs->node_id || local != bs->local_size) {
        printf("rank %d: node_of[] disagrees with node_id/local_size\n", bs->rank);
        result = 1;
    }

    int rounds = strcmp(mode, "normal") ? ROUNDS_BEFORE_VICTIM + 2 : 5;
    for (int round = 0; round < rounds && !result; round++) {
        if (round == ROUNDS_BEFORE_VICTIM && strcmp(mode, "normal")) {
            if (bs->rank == victim && !strcmp(mode, "abort")) {
                printf("rank %d: aborting\n", bs->rank);
                fflush(stdout);
                bs->ops->abort(bs, 7, "selftest abort\x1b[2J\nforged line");
                raise(SIGKILL); /* what gpurma_abort does after the bootstrap's abort */
            }
            if (bs->rank == victim)
                victim_sleep(bs);
            if (!strcmp(mode, "watch")) {
                result = wait_for_watcher(bs);
                break;
            }
        }
        result = run_round(bs, round);
    }
    if (!result)
        printf("rank %d: PASS\n", bs->rank);
    fflush(stdout);
    gpurma_bootstrap_close(bs);
#ifdef SELFTEST_WITH_MPI
    if (mpi_comm)
        MPI_Finalize();
#endif
    return result;
}
