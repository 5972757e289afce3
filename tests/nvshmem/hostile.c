/*
 * hostile.c - the NVSHMEM layer under the input a careless or hostile
 * program gives it. In the job (every PE): nvshmem_malloc of 0, SIZE_MAX
 * and more than the heap gives NULL on every PE and leaves the heap
 * usable; nvshmem_ptr outside the heap or to a PE out of range gives NULL;
 * a second nvshmem_finalize does nothing. Then (in jobs of 1 and 2 PEs)
 * PE 0 runs each misuse in a child process of its own (one PE, no
 * launcher: the single bootstrap), whose void NVSHMEM call must end it
 * through the layer's abort: exit
 * status non-zero (never a crash by signal, never a hang: the child has
 * 30 s) and a message on stderr that names the call.
 */
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvtest.h"

extern char **environ;

/* ------------------------------------------------------- the misuses */

typedef struct {
    const char *name, *call; /* the case, and the call its message must name */
    void (*run)(void);
    const char *wrong; /* a text the message must not hold, or NULL */
} misuse_t;

static void before_init_malloc(void) { (void)nvshmem_malloc(64); }
static void before_init_put(void)
{
    static char buf[8];
    nvshmem_putmem(buf, buf, sizeof buf, 0);
}
static void before_init_barrier(void) { nvshmem_barrier_all(); }
static void after_finalize_malloc(void)
{
    nvshmem_init();
    nvshmem_finalize();
    (void)nvshmem_malloc(64);
}
static void after_finalize_put(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(64);
    nvshmem_finalize();
    char v[8] = {1};
    nvshmem_putmem(p, v, sizeof v, 0);
}
static void free_foreign(void)
{
    static char mine[64];
    nvshmem_init();
    nvshmem_free(mine);
}
static void free_twice(void)
{
    nvshmem_init();
    void *p = nvshmem_malloc(64);
    nvshmem_free(p);
    nvshmem_free(p);
}
static void free_interior(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(256);
    nvshmem_free(p + 64);
}
static void put_pe_size(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(64), v[8] = {1};
    nvshmem_putmem(p, v, sizeof v, nvshmem_n_pes());
}
static void put_pe_negative(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(64), v[8] = {1};
    nvshmem_putmem(p, v, sizeof v, -1);
}
static void p_pe_int_max(void)
{
    nvshmem_init();
    int *p = (int *)nvshmem_malloc(64);
    nvshmem_int_p(p, 5, INT_MAX);
}
static void get_outside_heap(void)
{
    static char outside[64];
    char v[8];
    nvshmem_init();
    nvshmem_getmem(v, outside, sizeof v, 0);
}
static void put_past_heap(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(64), v[8] = {1};
    nvshmem_putmem(p + ((size_t)1 << 40), v, sizeof v, 0);
}
static void put_wraps(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(64), v[8] = {1};
    nvshmem_putmem(p, v, SIZE_MAX - 4, 0);
}
static void split_start_negative(void)
{
    nvshmem_team_t t;
    nvshmem_init();
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, -1, 1, 1, NULL, 0, &t);
}
static void split_size_zero(void)
{
    nvshmem_team_t t;
    nvshmem_init();
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, 0, NULL, 0, &t);
}
static void split_past_parent(void)
{
    nvshmem_team_t t; /* start + (size - 1) * stride overflows an int */
    nvshmem_init();
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, INT_MAX, 3, NULL, 0, &t);
}
static void split_stride_negative(void)
{
    nvshmem_team_t t;
    nvshmem_init();
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, -1, 2, NULL, 0, &t);
}
static void split_bad_parent(void)
{
    nvshmem_team_t t;
    nvshmem_init();
    nvshmem_team_split_strided((nvshmem_team_t)57, 0, 1, 1, NULL, 0, &t);
}
static void align_not_power(void)
{
    nvshmem_init();
    (void)nvshmem_align(48, 64);
}
static void calloc_overflow(void)
{
    nvshmem_init();
    (void)nvshmem_calloc(SIZE_MAX / 2, 4);
}
static void destroy_world(void)
{
    nvshmem_init();
    nvshmem_team_destroy(NVSHMEM_TEAM_WORLD);
}

static void reduce_overflow(void)
{
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(64), *s = (int *)nvshmem_malloc(64);
    nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, d, s, SIZE_MAX / 2);
}
static void reducescatter_overflow(void)
{
    nvshmem_init();
    double *d = (double *)nvshmem_malloc(64), *s = (double *)nvshmem_malloc(64);
    nvshmem_double_max_reducescatter(NVSHMEM_TEAM_WORLD, d, s, (SIZE_MAX >> 3) + 2);
}
static void fcollect_overflow(void)
{
    nvshmem_init();
    int64_t *d = (int64_t *)nvshmem_malloc(64), *s = (int64_t *)nvshmem_malloc(64);
    nvshmem_int64_fcollect(NVSHMEM_TEAM_WORLD, d, s, SIZE_MAX / 4);
}
static void broadcast_root(void)
{
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(64), *s = (int *)nvshmem_malloc(64);
    nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, d, s, 4, nvshmem_n_pes());
}
static void reduce_bad_team(void)
{
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(64), *s = (int *)nvshmem_malloc(64);
    nvshmem_int_sum_reduce((nvshmem_team_t)63, d, s, 4);
}

static void reduce_destroyed_team(void)
{
    nvshmem_team_t t;
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(64), *s = (int *)nvshmem_malloc(64);
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, nvshmem_n_pes(), NULL, 0, &t);
    nvshmem_team_destroy(t);
    nvshmem_int_sum_reduce(t, d, s, 4);
}
static void destroy_twice(void)
{
    nvshmem_team_t t;
    nvshmem_init();
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, nvshmem_n_pes(), NULL, 0, &t);
    nvshmem_team_destroy(t);
    nvshmem_team_destroy(t);
}
static void put_src_null(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(64);
    nvshmem_putmem(p, NULL, 8, 0);
}
static void atomic_misaligned(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(64);
    nvshmem_int64_atomic_add((int64_t *)(p + 4), 1, 0);
}
static void wait_bad_cmp(void)
{
    nvshmem_init();
    uint64_t *p = (uint64_t *)nvshmem_calloc(1, 8);
    (void)nvshmem_signal_wait_until(p, 77, 0);
}

/* Issue 16: element counts that run past the end of the heap (no size
 * overflow: the buffer simply does not fit), and one whose bytes overflow. */
#define PAST_HEAP ((size_t)64 << 20) /* 256 MiB of ints beside a heap of 4 (or 48) MiB */
static void reduce_past_heap(void)
{
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(64), *s = (int *)nvshmem_malloc(64);
    nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, d, s, PAST_HEAP);
}
static void broadcast_past_heap(void)
{
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(64), *s = (int *)nvshmem_malloc(64);
    nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, d, s, PAST_HEAP, 0);
}
static void fcollect_past_heap(void)
{
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(64), *s = (int *)nvshmem_malloc(64);
    nvshmem_int_fcollect(NVSHMEM_TEAM_WORLD, d, s, PAST_HEAP);
}
static void alltoall_past_heap(void)
{
    nvshmem_init();
    int64_t *d = (int64_t *)nvshmem_malloc(64), *s = (int64_t *)nvshmem_malloc(64);
    nvshmem_int64_alltoall(NVSHMEM_TEAM_WORLD, d, s, PAST_HEAP);
}
static void alltoall_overflow(void)
{
    nvshmem_init();
    int64_t *d = (int64_t *)nvshmem_malloc(64), *s = (int64_t *)nvshmem_malloc(64);
    nvshmem_int64_alltoall(NVSHMEM_TEAM_WORLD, d, s, SIZE_MAX / 4);
}
/* Issue 16: the layer's own words below the first allocation (barrier
 * counters, team handles) are no program's to write. */
static void put_below_first_malloc(void)
{
    nvshmem_init();
    uint64_t *p = (uint64_t *)nvshmem_malloc(64), v = 99;
    nvshmem_putmem((char *)p - 4096, &v, sizeof v, 0);
}
static void p_below_first_malloc(void)
{
    nvshmem_init();
    int *p = (int *)nvshmem_malloc(64);
    nvshmem_int_p(p - 16, 7, 0);
}
static void atomic_below_first_malloc(void)
{
    nvshmem_init();
    uint64_t *p = (uint64_t *)nvshmem_malloc(64);
    nvshmem_uint64_atomic_add(p - 64, 1, 0);
}
/* A stride that makes i * stride * 4 wrap to an address below the object. */
static void iput_stride_wraps(void)
{
    nvshmem_init();
    int *d = (int *)nvshmem_malloc(256), s[3] = {1, 2, 3};
    nvshmem_int_iput(d, s, PTRDIFF_MAX / 2, 1, 3, 0);
}
static void iget_stride_wraps(void)
{
    nvshmem_init();
    int *src = (int *)nvshmem_malloc(256), d[3];
    nvshmem_int_iget(d, src, 1, PTRDIFF_MAX / 2, 3, 0);
}

/* Issue 17: registered buffers (the heap's own memory is symmetric
 * already; a buffer unregistered is no longer symmetric). */
static void register_heap_memory(void)
{
    nvshmem_init();
    char *p = (char *)nvshmem_malloc(4096);
    (void)nvshmemx_buffer_register_symmetric(p + 256, 1024, 0);
}
static void register_around_registered(void)
{
    static char own[8192];
    nvshmem_init();
    (void)nvshmemx_buffer_register_symmetric(own + 1024, 1024, 0);
    (void)nvshmemx_buffer_register_symmetric(own, sizeof own, 0);
}
static void put_after_unregister(void)
{
    static char own[4096];
    char v[8] = {1};
    nvshmem_init();
    char *p = (char *)nvshmemx_buffer_register_symmetric(own, sizeof own, 0);
    nvshmemx_buffer_unregister_symmetric(p, sizeof own);
    nvshmem_putmem(p, v, sizeof v, 0);
}
static void unregister_unknown(void)
{
    static char own[4096];
    nvshmem_init();
    nvshmemx_buffer_unregister_symmetric(own, sizeof own);
}

static const misuse_t misuses[] = {
    {"register_heap_memory", "nvshmemx_buffer_register_symmetric", register_heap_memory, NULL},
    {"register_around_registered", "nvshmemx_buffer_register_symmetric",
     register_around_registered, NULL},
    {"put_after_unregister", "nvshmem_putmem", put_after_unregister, NULL},
    {"unregister_unknown", "nvshmemx_buffer_unregister_symmetric", unregister_unknown, NULL},
    {"reduce_past_heap", "nvshmem_int_sum_reduce", reduce_past_heap, NULL},
    {"broadcast_past_heap", "nvshmem_int_broadcast", broadcast_past_heap, NULL},
    {"fcollect_past_heap", "nvshmem_int_fcollect", fcollect_past_heap, NULL},
    {"alltoall_past_heap", "nvshmem_int64_alltoall", alltoall_past_heap, NULL},
    {"alltoall_overflow", "nvshmem_int64_alltoall", alltoall_overflow, NULL},
    {"put_below_first_malloc", "nvshmem_putmem", put_below_first_malloc, NULL},
    {"p_below_first_malloc", "nvshmem_int_p", p_below_first_malloc, NULL},
    {"atomic_below_first_malloc", "nvshmem_uint64_atomic_add", atomic_below_first_malloc, NULL},
    {"iput_stride_wraps", "nvshmem_int_iput", iput_stride_wraps, NULL},
    {"iget_stride_wraps", "nvshmem_int_iget", iget_stride_wraps, NULL},
    {"reduce_destroyed_team", "nvshmem_int_sum_reduce", reduce_destroyed_team, NULL},
    {"destroy_twice", "nvshmem_team_destroy", destroy_twice, NULL},
    {"put_src_null", "nvshmem_putmem", put_src_null, NULL},
    {"atomic_misaligned", "nvshmem_int64_atomic_add", atomic_misaligned, NULL},
    {"wait_bad_cmp", "nvshmem_signal_wait_until", wait_bad_cmp, NULL},
    {"reduce_overflow", "nvshmem_int_sum_reduce", reduce_overflow, NULL},
    {"reducescatter_overflow", "nvshmem_double_max_reducescatter", reducescatter_overflow, NULL},
    {"fcollect_overflow", "nvshmem_int64_fcollect", fcollect_overflow, NULL},
    {"broadcast_root", "nvshmem_int_broadcast", broadcast_root, NULL},
    {"reduce_bad_team", "nvshmem_int_sum_reduce", reduce_bad_team, NULL},
    {"before_init_malloc", "nvshmem_malloc", before_init_malloc, NULL},
    {"before_init_put", "nvshmem_putmem", before_init_put, NULL},
    {"before_init_barrier", "nvshmem_barrier_all", before_init_barrier, NULL},
    {"after_finalize_malloc", "nvshmem_malloc", after_finalize_malloc, "before nvshmem_init"},
    {"after_finalize_put", "nvshmem_putmem", after_finalize_put, "before nvshmem_init"},
    {"free_foreign", "nvshmem_free", free_foreign, NULL},
    {"free_twice", "nvshmem_free", free_twice, NULL},
    {"free_interior", "nvshmem_free", free_interior, NULL},
    {"put_pe_size", "nvshmem_putmem", put_pe_size, NULL},
    {"put_pe_negative", "nvshmem_putmem", put_pe_negative, NULL},
    {"p_pe_int_max", "nvshmem_int_p", p_pe_int_max, NULL},
    {"get_outside_heap", "nvshmem_getmem", get_outside_heap, NULL},
    {"put_past_heap", "nvshmem_putmem", put_past_heap, NULL},
    {"put_wraps", "nvshmem_putmem", put_wraps, NULL},
    {"split_start_negative", "nvshmem_team_split_strided", split_start_negative, NULL},
    {"split_size_zero", "nvshmem_team_split_strided", split_size_zero, NULL},
    {"split_past_parent", "nvshmem_team_split_strided", split_past_parent, NULL},
    {"split_stride_negative", "nvshmem_team_split_strided", split_stride_negative, NULL},
    {"split_bad_parent", "nvshmem_team_split_strided", split_bad_parent, NULL},
    {"align_not_power", "nvshmem_align", align_not_power, NULL},
    {"calloc_overflow", "nvshmem_calloc", calloc_overflow, NULL},
    {"destroy_world", "nvshmem_team_destroy", destroy_world, NULL},
};
#define NMISUSES (sizeof misuses / sizeof *misuses)

/* In the child: the misuse, which must not return. */
static int run_misuse(const char *name)
{
    setenv("NVSHMEM_SYMMETRIC_SIZE", "4M", 0);
    for (size_t i = 0; i < NMISUSES; i++)
        if (!strcmp(misuses[i].name, name)) {
            misuses[i].run();
            fprintf(stderr, "MISUSE RETURNED: %s\n", name);
            return 3; /* distinct from the layer's abort status */
        }
    fprintf(stderr, "no misuse named %s\n", name);
    return 2;
}

/* The launcher's variables would make the child join (or wait for) the job. */
static int launcher_var(const char *kv)
{
    static const char *const prefixes[] = {"OMPI_", "PMIX_", "PMI_", "SLURM_", "RANK=",
                                           "WORLD_SIZE=", "MASTER_ADDR=", "MASTER_PORT=",
                                           "LOCAL_RANK=", "GPURMA_BOOTSTRAP="};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(kv, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

/* Runs self with the misuse's name; its stderr into out. The wait status. */
static int run_child(const char *self, const char *name, char *out, size_t cap)
{
    int fds[2];
    NV_ASSERT(pipe(fds) == 0, "pipe failed");
    pid_t pid = fork();
    NV_ASSERT(pid >= 0, "fork failed");
    if (!pid) {
        size_t n = 0;
        while (environ[n])
            n++;
        char **env = calloc(n + 1, sizeof *env);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!launcher_var(environ[i]))
                env[k++] = environ[i];
        dup2(fds[1], 2);
        dup2(fds[1], 1);
        close(fds[0]);
        alarm(30); /* survives exec: a hang ends by SIGALRM, which fails the case */
        char *argv[] = {(char *)self, (char *)name, NULL};
        execve(self, argv, env);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while ((r = read(fds[0], out + got, cap - 1 - got)) > 0 && got + (size_t)r < cap - 1)
        got += (size_t)r;
    if (r > 0)
        got += (size_t)r;
    out[got] = 0;
    while (read(fds[0], &r, 1) > 0) /* drain what did not fit */
        ;
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

/* ------------------------------------------------------- in the job */

static void heap_edges(void)
{
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    NV_ASSERT(nvshmem_malloc(0) == NULL, "nvshmem_malloc(0) is not NULL");
    NV_ASSERT(nvshmem_malloc(SIZE_MAX) == NULL, "nvshmem_malloc(SIZE_MAX) is not NULL");
    NV_ASSERT(nvshmem_malloc(SIZE_MAX - 63) == NULL, "nvshmem_malloc(SIZE_MAX - 63) is not NULL");
    NV_ASSERT(nvshmem_malloc((size_t)1 << 40) == NULL, "1 TiB from a 48 MiB heap is not NULL");
    NV_ASSERT(nvshmem_align(1 << 20, (size_t)1 << 40) == NULL, "aligned 1 TiB is not NULL");
    NV_ASSERT(nvshmem_calloc(0, 8) == NULL && nvshmem_calloc(8, 0) == NULL,
              "nvshmem_calloc of 0 bytes is not NULL");
    nvshmem_free(NULL); /* no-op, as in NVSHMEM */

    /* the heap still works, and an odd size holds exactly what was put */
    const size_t bytes = 1237;
    unsigned char *a = (unsigned char *)nvshmem_malloc(bytes);
    unsigned char *b = (unsigned char *)nvshmem_malloc(bytes);
    NV_ASSERT(a && b && a != b, "allocations after the failed ones: %p %p", (void *)a, (void *)b);
    memset(b, NV_POISON, bytes);
    unsigned char *mine = malloc(bytes), *want = malloc(bytes);
    nv_fill(mine, bytes, nv_seed(1, me, 0));
    nvshmem_barrier_all();
    nvshmem_putmem(b, mine, bytes, (me + 1) % n);
    nvshmem_barrier_all();
    nv_fill(want, bytes, nv_seed(1, (me + n - 1) % n, 0));
    NV_EXPECT_BYTES(b, want, bytes, "put from PE %d after failed allocations", (me + n - 1) % n);

    /* nvshmem_ptr: NULL outside the heap and for PEs out of range */
    static char outside[16];
    NV_ASSERT(nvshmem_ptr(outside, me) == NULL, "nvshmem_ptr of a non-heap address");
    NV_ASSERT(nvshmem_ptr(a, -1) == NULL && nvshmem_ptr(a, n) == NULL &&
                  nvshmem_ptr(a, INT_MAX) == NULL,
              "nvshmem_ptr of a PE out of range");
    NV_ASSERT(nvshmem_ptr(a, me) != NULL, "nvshmem_ptr of my own heap is NULL");
    nvshmem_free(b);
    nvshmem_free(a);
    free(mine), free(want);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return run_misuse(argv[1]);
    nv_init("hostile");
    heap_edges();
    /* The children are jobs of their own: once per run-mp.sh series is enough. */
    if (nvshmem_my_pe() == 0 && nvshmem_n_pes() <= 2) {
        char out[8192];
        for (size_t i = 0; i < NMISUSES; i++) {
            int st = run_child("/proc/self/exe", misuses[i].name, out, sizeof out);
            NV_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3 &&
                          WEXITSTATUS(st) != 127,
                      "%s: the child %s %d; its output:\n%s", misuses[i].name,
                      WIFEXITED(st) ? "exited with" : "died of signal",
                      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), out);
            NV_ASSERT(strstr(out, "NVSHMEM layer") && strstr(out, misuses[i].call),
                      "%s: the message does not name %s:\n%s", misuses[i].name, misuses[i].call,
                      out);
            /* A refusal of the layer's own quotes no older message of the
             * library (on the host backend, init leaves this one behind). */
            const char *stale = "device memory requested but no GPU";
            NV_ASSERT(!strstr(out, stale) && !(misuses[i].wrong && strstr(out, misuses[i].wrong)),
                      "%s: the message misleads:\n%s", misuses[i].name, out);
        }
    }
    nv_finish();
    nvshmem_finalize(); /* a second finalize does nothing */
    return 0;
}
