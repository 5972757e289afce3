/*
 * gpurma_internal.h - core services shared by every layer: configuration,
 * logging, error reporting. Not installed.
 */
#ifndef GPURMA_INTERNAL_H
#define GPURMA_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "gpurma.h"
#include "config_table.h"

#define GPURMA_HIDDEN __attribute__((visibility("hidden")))
#define GPURMA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define GPURMA_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------ configuration */

typedef enum { GPURMA_CFG_INT, GPURMA_CFG_SIZE, GPURMA_CFG_STR, GPURMA_CFG_BOOL } gpurma_cfg_type_t;

#define GPURMA_CFG_CTYPE_INT  int64_t
#define GPURMA_CFG_CTYPE_SIZE uint64_t
#define GPURMA_CFG_CTYPE_STR  const char *
#define GPURMA_CFG_CTYPE_BOOL int
#define GPURMA_CFG_FIELD(field, name, type, def, help) GPURMA_CFG_CTYPE_##type field;
typedef struct {
    GPURMA_CONFIG_TABLE(GPURMA_CFG_FIELD)
} gpurma_config_t;
#undef GPURMA_CFG_FIELD

typedef struct {
    const char       *env;   /* full variable name, e.g. "GPURMA_TIMEOUT_MS" */
    gpurma_cfg_type_t type;
    const char       *def;
    const char       *help;
    int               is_set; /* found in the environment */
    const char       *value;  /* text in effect */
} gpurma_config_entry_t;

/* Parsed once (thread-safe); later calls return the same object. */
const gpurma_config_t *gpurma_config(void);
/* For gpurma-info: the table with values; *n receives the count. */
const gpurma_config_entry_t *gpurma_config_entries(int *n);

/* ------------------------------------------------------------------ logging */

typedef enum {
    GPURMA_LOG_ERROR = 0, GPURMA_LOG_WARN, GPURMA_LOG_INFO, GPURMA_LOG_DEBUG, GPURMA_LOG_TRACE
} gpurma_log_level_t;

typedef enum {
    GPURMA_SUB_INIT = 0, GPURMA_SUB_BOOT, GPURMA_SUB_WIN, GPURMA_SUB_RMA,
    GPURMA_SUB_MEM, GPURMA_SUB_PORT, GPURMA_SUB_COUNT
} gpurma_log_subsys_t;

extern int gpurma_log_threshold;     /* effective level, set from config */
extern unsigned gpurma_log_mask;     /* bit per subsystem               */
void gpurma_log_set_rank(int rank);  /* prefix of every line            */
/* Sets level and subsystems; called once when the configuration is read. */
void gpurma_log_configure(const gpurma_config_t *cfg);
void gpurma_log_write(gpurma_log_level_t lvl, gpurma_log_subsys_t sub, const char *file,
                      int line, const char *fmt, ...) GPURMA_PRINTF(5, 6);

#define GPURMA_LOG(lvl, sub, ...)                                                         \
    do {                                                                                  \
        if (GPURMA_UNLIKELY((int)(lvl) <= gpurma_log_threshold &&                         \
                            (gpurma_log_mask & (1u << (sub)))))                           \
            gpurma_log_write((lvl), (sub), __FILE__, __LINE__, __VA_ARGS__);              \
    } while (0)
#define GPURMA_WARN(sub, ...)  GPURMA_LOG(GPURMA_LOG_WARN, sub, __VA_ARGS__)
#define GPURMA_INFO(sub, ...)  GPURMA_LOG(GPURMA_LOG_INFO, sub, __VA_ARGS__)
#define GPURMA_DEBUG(sub, ...) GPURMA_LOG(GPURMA_LOG_DEBUG, sub, __VA_ARGS__)

/* ------------------------------------------------------------------- errors */

/* Records the message for gpurma_last_error_message() of the calling thread,
 * logs it at debug level, and returns status, so that callers can write
 * `return gpurma_set_error(GPURMA_ERR_..., "...", ...);`. */
int gpurma_set_error(int status, const char *fmt, ...) GPURMA_PRINTF(2, 3);
const char *gpurma_error_text(void);

/* Monotonic clock in nanoseconds. */
uint64_t gpurma_now_ns(void);

/* Spin/yield/sleep step for host waits; call with an increasing iteration
 * count. Keeps oversubscribed runs (8 ranks on 2 cores) moving. */
void gpurma_backoff(uint64_t iter);

#endif
