/*
 * srun_ring.c - a gpurma job started by "srun --mpi=pmix".
 *
 * Checks that the PMIx bootstrap was selected on its own and that rank and
 * size agree with SLURM_PROCID and SLURM_NTASKS (and the node-local rank
 * with SLURM_LOCALID), then runs a put_signal ring: each round every rank
 * sends seeded random bytes of a new size (1 B to over a MiB, odd offsets)
 * to its right neighbour into a poisoned window, waits for its left
 * neighbour's, and checks every byte; a barrier separates the rounds.
 *
 * Prints "srun_ring: rank R of N: PASS" and exits 0, or 1 with the reason.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpurma.h>

#define WIN_BYTES (2u << 20)
#define RING_SIG  0u

static int g_rank = -1;

#define CHECK(call)                                                                          \
    do {                                                                                     \
        gpurma_status_t rc_ = (call);                                                        \
        if (rc_ != GPURMA_SUCCESS) {                                                         \
            printf("srun_ring: rank %d: FAIL: %s -> %d (%s): %s\n", g_rank, #call, (int)rc_,   \
                   gpurma_strerror(rc_), gpurma_last_error_message(ctx));                    \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

static uint8_t pattern(uint64_t round, uint64_t origin, uint64_t i)
{
    uint64_t x = (round * 0x9e3779b97f4a7c15ull) ^ (origin << 48) ^ i;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    return (uint8_t)(x >> 56);
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : -1;
}

static int ring(gpurma_ctx_t ctx)
{
    int rank = gpurma_rank(ctx), size = gpurma_size(ctx);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    gpurma_team_t world = gpurma_team_world(ctx);
    gpurma_win_params_t wp = {.field_mask = GPURMA_WIN_FIELD_MEM_KIND,
                              .mem_kind = GPURMA_MEM_HOST};
    void *base = NULL;
    gpurma_win_t win = NULL;
    CHECK(gpurma_win_allocate(world, WIN_BYTES, &wp, &base, &win));
    uint8_t *inbox = base, *src = malloc(WIN_BYTES);
    if (!src)
        return 1;
    static const size_t sizes[] = {1, 3, 8, 100, 4097, 65535, 1048577, WIN_BYTES - 1};
    int errors = 0;
    for (int round = 0; round < (int)(sizeof(sizes) / sizeof(sizes[0])); round++) {
        size_t n = sizes[round], off = (WIN_BYTES - n) / 2 | (n < WIN_BYTES - 1 ? 1 : 0);
        memset(inbox, 0xa5, WIN_BYTES);
        CHECK(gpurma_barrier(world)); /* everyone poisoned before anyone puts */
        for (size_t i = 0; i < n; i++)
            src[i] = pattern((uint64_t)round, (uint64_t)rank, i);
        CHECK(gpurma_put_signal(win, right, off, src, n, RING_SIG, GPURMA_SIGNAL_ADD, 1));
        CHECK(gpurma_flush(win, right));
        CHECK(gpurma_wait_until(win, RING_SIG, GPURMA_CMP_GE, (uint64_t)round + 1));
        for (size_t i = 0; i < n; i++)
            if (inbox[off + i] != pattern((uint64_t)round, (uint64_t)left, i)) {
                printf("srun_ring: rank %d: FAIL: round %d: byte %zu of %zu from rank %d is "
                       "0x%02x, want 0x%02x\n", rank, round, i, n, left, inbox[off + i],
                       pattern((uint64_t)round, (uint64_t)left, i));
                errors++;
                break;
            }
        /* nothing outside the payload may have been touched */
        for (size_t i = 0; i < WIN_BYTES; i++)
            if ((i < off || i >= off + n) && inbox[i] != 0xa5) {
                printf("srun_ring: rank %d: FAIL: round %d: byte %zu outside the payload "
                       "changed\n", rank, round, i);
                errors++;
                break;
            }
        CHECK(gpurma_barrier(world)); /* all have checked before the next poisoning */
    }
    free(src);
    CHECK(gpurma_win_free(&win));
    return errors ? 1 : 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    gpurma_init_params_t ip = {.field_mask = GPURMA_INIT_FIELD_DEVICE,
                               .device = GPURMA_DEVICE_HOST};
    gpurma_ctx_t ctx;
    gpurma_status_t rc = gpurma_init(&ip, &ctx);
    if (rc) {
        printf("srun_ring: SLURM_PROCID %d: FAIL: init -> %d (%s): %s\n", env_int("SLURM_PROCID"),
               (int)rc, gpurma_strerror(rc), gpurma_last_error_message(NULL));
        return 1;
    }
    g_rank = gpurma_rank(ctx);
    int size = gpurma_size(ctx), bad = 0;
    char name[32];
    snprintf(name, sizeof(name), "%s", gpurma_bootstrap_name(ctx) ? gpurma_bootstrap_name(ctx) : "");
    if (strcmp(name, "pmix") != 0) {
        printf("srun_ring: rank %d: FAIL: bootstrap is '%s', want pmix\n", g_rank, name);
        bad = 1;
    }
    if (g_rank != env_int("SLURM_PROCID") || size != env_int("SLURM_NTASKS") ||
        gpurma_node_rank(ctx) != env_int("SLURM_LOCALID")) {
        printf("srun_ring: FAIL: rank %d of %d, node rank %d; SLURM_PROCID %d, SLURM_NTASKS %d, "
               "SLURM_LOCALID %d\n", g_rank, size, gpurma_node_rank(ctx), env_int("SLURM_PROCID"),
               env_int("SLURM_NTASKS"), env_int("SLURM_LOCALID"));
        bad = 1;
    }
    int result = bad ? 1 : ring(ctx);
    rc = gpurma_finalize(ctx);
    if (rc) {
        printf("srun_ring: rank %d: FAIL: finalize -> %s\n", g_rank, gpurma_strerror(rc));
        result = 1;
    }
    if (!result)
        printf("srun_ring: rank %d of %d: bootstrap %s: PASS\n", g_rank, size, name);
    return result;
}
