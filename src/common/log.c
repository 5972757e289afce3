/*
 * log.c - leveled, per-subsystem logging to stderr; lines carry the rank.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpurma_internal.h"

int gpurma_log_threshold = GPURMA_LOG_WARN;
unsigned gpurma_log_mask = ~0u;
/* Set by init and again by every proxy thread it starts (the same value),
 * read by every thread that logs. */
static int log_rank = -1;

/* Upper case in log lines; the configuration's words are lower case. */
static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
static const char *const subsys_names[] = {GPURMA_LOG_SUBSYS_NAMES};

#define NUM_WORDS(...) (sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *))
_Static_assert(NUM_WORDS(GPURMA_LOG_LEVEL_NAMES) == GPURMA_LOG_TRACE + 1 &&
                   sizeof(level_names) / sizeof(level_names[0]) == GPURMA_LOG_TRACE + 1,
               "GPURMA_LOG_LEVEL_NAMES follows gpurma_log_level_t");
_Static_assert(sizeof(subsys_names) / sizeof(subsys_names[0]) == GPURMA_SUB_COUNT,
               "GPURMA_LOG_SUBSYS_NAMES follows gpurma_log_subsys_t");

void gpurma_log_configure(const gpurma_config_t *cfg)
{
    gpurma_log_threshold = cfg->log_level_index;
    /* GPURMA_LOG_SUBSYS's words are the subsystems, then "all". */
    if (cfg->log_subsys_mask & (1ull << GPURMA_SUB_COUNT))
        gpurma_log_mask = ~0u;
    else
        gpurma_log_mask = (unsigned)cfg->log_subsys_mask;
}

void gpurma_log_set_rank(int rank) { __atomic_store_n(&log_rank, rank, __ATOMIC_RELAXED); }

void gpurma_log_write(gpurma_log_level_t lvl, gpurma_log_subsys_t sub, const char *file, int line,
                      const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    int rank = __atomic_load_n(&log_rank, __ATOMIC_RELAXED);
    /* One fprintf per line (stdio locks the stream for it), so that lines of
     * different ranks and of different threads do not interleave. */
    if (rank >= 0)
        fprintf(stderr, "[gpurma %d:%d] %s %s %s:%d %s\n", rank, (int)getpid(),
                level_names[lvl], subsys_names[sub], base ? base + 1 : file, line, msg);
    else
        fprintf(stderr, "[gpurma -:%d] %s %s %s:%d %s\n", (int)getpid(), level_names[lvl],
                subsys_names[sub], base ? base + 1 : file, line, msg);
}
