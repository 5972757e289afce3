/*
 * log.c - leveled, per-subsystem logging to stderr; lines carry the rank.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gpurma_internal.h"

int gpurma_log_threshold = GPURMA_LOG_WARN;
unsigned gpurma_log_mask = ~0u;
static int log_rank = -1;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
static const char *const subsys_names[GPURMA_SUB_COUNT] = {"init", "boot", "win", "rma", "mem",
                                                           "port"};

void gpurma_log_configure(const gpurma_config_t *cfg)
{
    for (int l = 0; l <= GPURMA_LOG_TRACE; l++)
        if (!strcasecmp(cfg->log_level, level_names[l]))
            gpurma_log_threshold = l;
    if (strcasecmp(cfg->log_subsys, "all")) {
        gpurma_log_mask = 0;
        for (int s = 0; s < GPURMA_SUB_COUNT; s++)
            if (strstr(cfg->log_subsys, subsys_names[s]))
                gpurma_log_mask |= 1u << s;
    }
}

void gpurma_log_set_rank(int rank) { log_rank = rank; }

void gpurma_log_write(gpurma_log_level_t lvl, gpurma_log_subsys_t sub, const char *file, int line,
                      const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    /* One fprintf per line so that lines of different ranks do not interleave. */
    if (log_rank >= 0)
        fprintf(stderr, "[gpurma %d:%d] %s %s %s:%d %s\n", log_rank, (int)getpid(),
                level_names[lvl], subsys_names[sub], base ? base + 1 : file, line, msg);
    else
        fprintf(stderr, "[gpurma -:%d] %s %s %s:%d %s\n", (int)getpid(), level_names[lvl],
                subsys_names[sub], base ? base + 1 : file, line, msg);
}
