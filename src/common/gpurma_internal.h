/*
 * gpurma_internal.h - core services shared by every layer: configuration,
 * logging, error reporting. Not installed.
 *
 * Layer 1, src/common/: the bottom of the library; includes only include/
 * and its own headers, so that every other folder may include it.
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

typedef enum {
    GPURMA_CFG_INT, GPURMA_CFG_STR, GPURMA_CFG_BOOL, GPURMA_CFG_ENUM, GPURMA_CFG_LIST
} gpurma_cfg_type_t;

/* The members each type gives gpurma_config_t (see config_table.h) and a
 * component's own configuration struct (config_section.h). */
#define GPURMA_CFG_MEMBERS_INT(f)  int64_t f;
#define GPURMA_CFG_MEMBERS_STR(f)  const char *f; int64_t f##_value;
#define GPURMA_CFG_MEMBERS_BOOL(f) int f;
#define GPURMA_CFG_MEMBERS_ENUM(f) const char *f; int f##_index;
#define GPURMA_CFG_MEMBERS_LIST(f) const char *f; uint64_t f##_mask;
#define GPURMA_CFG_MEMBER(field, name, type, def, accepts, help) GPURMA_CFG_MEMBERS_##type(field)
typedef struct {
    GPURMA_CONFIG_TABLE(GPURMA_CFG_MEMBER)
} gpurma_config_t;

typedef struct {
    const char       *env;   /* full variable name, e.g. "GPURMA_TIMEOUT_MS" */
    gpurma_cfg_type_t type;
    const char       *def;
    const char       *help;
    /* What is accepted (set from the table's accepts column). */
    int64_t            min, max;       /* INT */
    const char        *unit;           /* INT */
    const char *const *values;         /* ENUM, LIST: NULL-terminated */
    /* STR: nonzero when text is valid; may store what it read in *value
     * (the field's f_value), so that no user of the value parses it again. */
    int              (*check)(const char *text, int64_t *value);
    const char        *accepts;        /* STR with check: the valid values in words */
    /* Filled when the environment is read. */
    int               is_set;  /* found in the environment */
    const char       *value;   /* text in effect (the environment's, even when invalid) */
    int               invalid; /* value rejected: the field holds the default */
} gpurma_config_entry_t;

/* One parsed value, as a table row's field receives it. */
typedef struct {
    int64_t     num;  /* INT, BOOL; ENUM: index of the word; STR: what check read */
    uint64_t    mask; /* LIST: bit per word present */
    const char *text; /* STR, LIST: the text; ENUM: the word as the table writes it */
} gpurma_config_value_t;

/* Parsed once (thread-safe); later calls return the same object. */
const gpurma_config_t *gpurma_config(void);
/* GPURMA_SUCCESS, or GPURMA_ERR_INVALID_ARG with the calling thread's error
 * message naming the first invalid variable, its value and what it accepts.
 * Covers the core table and every registered section (config_section.h). */
int gpurma_config_check(void);
/* For gpurma-info: the core table, then each registered section, with
 * their values; *n receives the count. */
const gpurma_config_entry_t *gpurma_config_entries(int *n);
/* What an entry accepts, in words ("an integer from 1 to 10 (ms)"); returns buf. */
const char *gpurma_config_accepts(const gpurma_config_entry_t *e, char *buf, size_t len);
/* GPURMA_DEVICE's values: auto, host or a GPU ordinal; *device receives
 * GPURMA_DEVICE_AUTO, GPURMA_DEVICE_HOST or the ordinal. */
int gpurma_config_device_ok(const char *text, int64_t *device);

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

#define GPURMA_LOG_ENABLED(lvl, sub)                                                      \
    GPURMA_UNLIKELY((int)(lvl) <= gpurma_log_threshold && (gpurma_log_mask & (1u << (sub))))
#define GPURMA_LOG(lvl, sub, ...)                                                         \
    do {                                                                                  \
        if (GPURMA_LOG_ENABLED(lvl, sub))                                                 \
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
/* Queries (public calls that return a value rather than a status, such as
 * gpurma_rank or gpurma_win_size) leave the thread's last error as it was,
 * whether they succeed or fail: a program that prints the message after a
 * failed call may call them first. Between mute and unmute (nested,
 * per thread) gpurma_set_error returns the status and records nothing;
 * GPURMA_QUERY wraps one check. */
void gpurma_error_mute(void);
void gpurma_error_unmute(void);
static inline int gpurma_query_check_done(int rc)
{
    gpurma_error_unmute();
    return rc;
}
#define GPURMA_QUERY(check) (gpurma_error_mute(), gpurma_query_check_done(check))

/* Public handles (handle.c). A pointer the user passes is dereferenced
 * only once gpurma_handle_is says the library registered it with that
 * kind; anything else (NULL, 0x10, freed or foreign memory) is refused
 * without a read. */
typedef enum {
    GPURMA_HANDLE_CTX = 1, GPURMA_HANDLE_TEAM, GPURMA_HANDLE_WIN, GPURMA_HANDLE_SWITCH
} gpurma_handle_kind_t;
/* obj is a live object of that kind from now on. */
int gpurma_handle_register(const void *obj, gpurma_handle_kind_t kind);
/* obj's memory may be returned to malloc: lookups fail from now on. */
void gpurma_handle_forget(const void *obj);
/* 1 when h is a registered (live or tombstone) object of that kind. */
int gpurma_handle_is(const void *h, gpurma_handle_kind_t kind);
/* Keeps the struct behind a released handle allocated for good, so that
 * calls on a stale handle read its dead magic, never freed memory; a
 * forgotten handle is known again. */
void gpurma_handle_bury(void *obj);

/* Monotonic clock in nanoseconds. */
uint64_t gpurma_now_ns(void);

/* Spin/yield/sleep step for host waits; call with an increasing iteration
 * count. Keeps oversubscribed runs (8 ranks on 2 cores) moving. */
void gpurma_backoff(uint64_t iter);

#endif
