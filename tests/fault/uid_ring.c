/*
 * uid_ring.c - a real exchange over a job bootstrapped by the uid (TCP
 * rendezvous) bootstrap, started by hand: RANK, WORLD_SIZE, MASTER_ADDR,
 * MASTER_PORT and GPURMA_UID_TOKEN, the way torchrun starts ranks.
 *
 * Checks that the bootstrap is "uid" (or UID_RING_BOOTSTRAP) and that rank
 * and size match RANK and WORLD_SIZE (0 and 1 when unset); then, on a
 * window whose size differs per rank:
 *   - gets of every size class at odd offsets from every rank (self
 *     included) of data the owner wrote, checked byte for byte;
 *   - rounds of puts to every rank into a per-origin region (half fused
 *     put_signal, half put then signal), with fresh seeded data each round
 *     and poisoned destinations, then a wait_until on the arrival count;
 *   - a signal SET from the right neighbour carrying a value only it knows.
 *
 * Prints how long gpurma_init took ("uid_ring: rank R: init took T ms"),
 * then "uid_ring: rank R of N: PASS" and exits 0; 1 on wrong data or an
 * unexpected error. When init fails it prints
 *   uid_ring: rank R: init -> GPURMA_ERR_...: <message>
 * and exits 2, which uid-bootstrap.sh expects for a job missing a rank.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpurma.h>

#include "status_name.h"

#define SLOT_BYTES  (256u << 10) /* per-origin region of the put phase  */
#define ROUNDS      3
#define ARRIVAL_SIG 0u
#define HELLO_SIG   1u

/* Byte i of a stream seeded by (a, b, c): a hash of the position, so any
 * byte can be checked without generating those before it. */
static uint8_t pattern(uint64_t a, uint64_t b, uint64_t c, uint64_t i)
{
    uint64_t x = (a * 0x9e3779b97f4a7c15ull) ^ (b << 40) ^ (c << 20) ^ i;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    return (uint8_t)(x >> 56);
}

static size_t window_bytes(int rank, int size)
{
    /* per-origin regions for the put phase, then an odd tail that differs
     * per rank (asymmetric windows) for the get phase */
    return (size_t)size * SLOT_BYTES + 1048573u + (size_t)rank * 4099u;
}

static int g_rank = -1;
static int g_errors;

#define CHECK(call)                                                                          \
    do {                                                                                     \
        gpurma_status_t rc_ = (call);                                                        \
        if (rc_ != GPURMA_SUCCESS) {                                                         \
            printf("uid_ring: rank %d: FAIL: %s -> %s: %s\n", g_rank, #call, status_name(rc_), \
                   gpurma_last_error_message(ctx));                                          \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

static int check_bytes(const uint8_t *got, uint64_t a, uint64_t b, uint64_t c, size_t first,
                       size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t want = pattern(a, b, c, first + i);
        if (got[i] != want) {
            printf("uid_ring: rank %d: FAIL: %s: byte %zu of %zu is 0x%02x, want 0x%02x\n", g_rank,
                   what, i, n, got[i], want);
            g_errors++;
            return 1;
        }
    }
    return 0;
}

static int exchange(gpurma_ctx_t ctx)
{
    int rank = gpurma_rank(ctx), size = gpurma_size(ctx);
    gpurma_team_t world = gpurma_team_world(ctx);
    size_t my_bytes = window_bytes(rank, size), tail = (size_t)size * SLOT_BYTES;
    gpurma_win_params_t wp = {.field_mask = GPURMA_WIN_FIELD_MEM_KIND,
                              .mem_kind = GPURMA_MEM_HOST};
    void *base = NULL;
    gpurma_win_t win = NULL;
    CHECK(gpurma_win_allocate(world, my_bytes, &wp, &base, &win));
    uint8_t *mine = base;
    for (int p = 0; p < size; p++)
        if (gpurma_win_size(win, p) != window_bytes(p, size)) {
            printf("uid_ring: rank %d: FAIL: window of rank %d is %zu bytes, want %zu\n", rank, p,
                   gpurma_win_size(win, p), window_bytes(p, size));
            return 1;
        }

    /* get phase: the owner writes its tail, everyone reads pieces of it */
    memset(mine, 0x5a, tail);
    for (size_t i = tail; i < my_bytes; i++)
        mine[i] = pattern(7, (uint64_t)rank, 0, i);
    CHECK(gpurma_barrier(world));
    static const size_t get_sizes[] = {1, 2, 3, 8, 13, 255, 4097, 65536 + 5, 1048573};
    uint8_t *buf = malloc(1u << 21);
    if (!buf)
        return 1;
    for (int p = 0; p < size; p++) {
        size_t peer_bytes = window_bytes(p, size);
        for (size_t k = 0; k < sizeof(get_sizes) / sizeof(get_sizes[0]); k++) {
            size_t n = get_sizes[k];
            /* odd offsets, the last one ending exactly at the window's end */
            size_t off = k + 1 == sizeof(get_sizes) / sizeof(get_sizes[0])
                             ? peer_bytes - n : tail + 1 + 2 * k * 997;
            memset(buf, 0xc3, n + 16);
            CHECK(gpurma_get(win, p, buf, off, n));
            char what[96];
            snprintf(what, sizeof(what), "get of %zu bytes at offset %zu of rank %d", n, off, p);
            if (check_bytes(buf, 7, (uint64_t)p, 0, off, n, what))
                break;
            for (size_t i = n; i < n + 16; i++)
                if (buf[i] != 0xc3) {
                    printf("uid_ring: rank %d: FAIL: %s wrote past its end\n", rank, what);
                    g_errors++;
                    break;
                }
        }
    }
    /* A get past the end must be refused, not clipped. */
    if (gpurma_get(win, 0, buf, window_bytes(0, size) - 3, 4) != GPURMA_ERR_OUT_OF_BOUNDS) {
        printf("uid_ring: rank %d: FAIL: get past the end of rank 0's window not refused\n", rank);
        g_errors++;
    }

    /* put phase: every rank puts to every rank (itself included) */
    static const size_t put_sizes[] = {1, 5, 64, 1023, 8191, 65537, SLOT_BYTES - 3};
    for (int round = 0; round < ROUNDS; round++) {
        size_t n = put_sizes[(size_t)(round * 3 + rank) % (sizeof(put_sizes) / sizeof(put_sizes[0]))];
        for (int p = 0; p < size; p++) {
            size_t off = (size_t)rank * SLOT_BYTES + (size_t)(round & 1) * 3;
            for (size_t i = 0; i < n; i++)
                buf[i] = pattern((uint64_t)round + 100, (uint64_t)rank, (uint64_t)p, i);
            if ((p + round) & 1) {
                CHECK(gpurma_put_signal(win, p, off, buf, n, ARRIVAL_SIG, GPURMA_SIGNAL_ADD, 1));
            } else {
                CHECK(gpurma_put(win, p, off, buf, n));
                CHECK(gpurma_signal(win, p, ARRIVAL_SIG, GPURMA_SIGNAL_ADD, 1));
            }
            CHECK(gpurma_flush(win, p)); /* buf is refilled for the next peer */
        }
        CHECK(gpurma_wait_until(win, ARRIVAL_SIG, GPURMA_CMP_GE, (uint64_t)(round + 1) * size));
        for (int o = 0; o < size; o++) {
            size_t on = put_sizes[(size_t)(round * 3 + o) % (sizeof(put_sizes) / sizeof(put_sizes[0]))];
            size_t off = (size_t)o * SLOT_BYTES + (size_t)(round & 1) * 3;
            char what[96];
            snprintf(what, sizeof(what), "round %d: put of %zu bytes from rank %d", round, on, o);
            check_bytes(mine + off, (uint64_t)round + 100, (uint64_t)o, (uint64_t)rank, 0, on,
                        what);
        }
        memset(mine, 0x5a, tail); /* poison before anyone writes the next round */
        CHECK(gpurma_barrier(world));
    }
    uint64_t arrivals = 0;
    CHECK(gpurma_signal_read(win, ARRIVAL_SIG, &arrivals));
    if (arrivals != (uint64_t)ROUNDS * size) {
        printf("uid_ring: rank %d: FAIL: %llu arrivals counted, want %d\n", rank,
               (unsigned long long)arrivals, ROUNDS * size);
        g_errors++;
    }

    /* a SET carrying a value only the left neighbour knows */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    uint64_t hello = 0xabcd000000000000ull | ((uint64_t)rank << 16) | (uint64_t)size;
    CHECK(gpurma_signal(win, right, HELLO_SIG, GPURMA_SIGNAL_SET, hello));
    uint64_t want = 0xabcd000000000000ull | ((uint64_t)left << 16) | (uint64_t)size;
    CHECK(gpurma_wait_until(win, HELLO_SIG, GPURMA_CMP_EQ, want));

    free(buf);
    CHECK(gpurma_win_free(&win));
    return g_errors ? 1 : 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *env_rank = getenv("RANK"), *env_size = getenv("WORLD_SIZE");
    gpurma_init_params_t ip = {.field_mask = GPURMA_INIT_FIELD_DEVICE,
                               .device = GPURMA_DEVICE_HOST};
    gpurma_ctx_t ctx;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gpurma_status_t rc = gpurma_init(&ip, &ctx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        printf("uid_ring: rank %s: init -> %s: %s\n", env_rank ? env_rank : "?", status_name(rc),
               gpurma_last_error_message(NULL));
        return 2;
    }
    g_rank = gpurma_rank(ctx);
    int size = gpurma_size(ctx);
    printf("uid_ring: rank %d: init took %ld ms\n", g_rank,
           (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
    char bootstrap[32];
    snprintf(bootstrap, sizeof(bootstrap), "%s",
             gpurma_bootstrap_name(ctx) ? gpurma_bootstrap_name(ctx) : "(null)");
    const char *want_bootstrap = getenv("UID_RING_BOOTSTRAP") ? getenv("UID_RING_BOOTSTRAP") : "uid";
    int bad = 0;
    if (strcmp(bootstrap, want_bootstrap) != 0) {
        printf("uid_ring: rank %d: FAIL: bootstrap is %s, want %s\n", g_rank, bootstrap,
               want_bootstrap);
        bad = 1;
    }
    /* Without RANK and WORLD_SIZE, a job of one process. */
    if ((env_rank ? atoi(env_rank) : 0) != g_rank || (env_size ? atoi(env_size) : 1) != size) {
        printf("uid_ring: rank %d of %d: FAIL: RANK=%s WORLD_SIZE=%s\n", g_rank, size,
               env_rank ? env_rank : "unset", env_size ? env_size : "unset");
        bad = 1;
    }
    int result = bad ? 1 : exchange(ctx);
    rc = gpurma_finalize(ctx);
    if (rc) {
        printf("uid_ring: rank %d: FAIL: finalize -> %s\n", g_rank, status_name(rc));
        result = 1;
    }
    if (result == 0)
        printf("uid_ring: rank %d of %d: bootstrap %s: PASS\n", g_rank, size, bootstrap);
    return result;
}
