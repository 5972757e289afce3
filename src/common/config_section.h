/*
 * config_section.h - configuration entries a component declares in its own
 * file, so that the core table never lists a component's options.
 *
 * A section has the columns of config_table.h, except that the NAME column
 * is the whole variable name (a component may read another program's
 * variable, such as NVSHMEM_SYMMETRIC_SIZE):
 *
 *   #define UID_CONFIG(X)                                                  \
 *       X(token, GPURMA_UID_TOKEN, STR, "", GPURMA_CFG_ANY,                \
 *         "Shared secret for the uid bootstrap")
 *   GPURMA_CONFIG_SECTION(uid, UID_CONFIG)
 *
 * defines the type uid_config_t (the members gpurma_config_t would have),
 * `static const uid_config_t *uid_config(void)` (the values, parsed on
 * first use with the rest of the configuration) and `uid_config_section`,
 * and registers the entries when the library is loaded. From then on they
 * are parsed, checked by gpurma_config_check() (so gpurma_init refuses an
 * invalid value) and printed by gpurma-info exactly like the core's rows.
 * A section lives in the file that reads it: a component the build leaves
 * out leaves its variables out too.
 */
#ifndef GPURMA_CONFIG_SECTION_H
#define GPURMA_CONFIG_SECTION_H

#include "gpurma_internal.h"

/* The accepts column, as initializers of gpurma_config_entry_t (see
 * config_table.h for what each means). */
#define GPURMA_CFG_RANGE(lo, hi, u)   .min = (lo), .max = (hi), .unit = (u)
#define GPURMA_CFG_ONE_OF(...)        .values = (const char *const[]){__VA_ARGS__, NULL}
/* Words as a plug-in list generates them: each followed by a comma. */
#define GPURMA_CFG_ONE_OF_EACH(...)   .values = (const char *const[]){__VA_ARGS__ NULL}
#define GPURMA_CFG_CHECKED(fn, words) .check = (fn), .accepts = (words)
#define GPURMA_CFG_ANY                .values = NULL

/* Rows as initializers: the core's names get the GPURMA_ prefix, a
 * section's are written whole. (No helper macro between: the accepts
 * column holds commas outside parentheses once expanded.) */
#define GPURMA_CFG_CORE_ENTRY(field, name_, type_, def_, accepts_, help_)                  \
    {.env = "GPURMA_" #name_, .type = GPURMA_CFG_##type_, .def = def_, .help = help_,     \
     accepts_},
#define GPURMA_CFG_SECTION_ENTRY(field, name_, type_, def_, accepts_, help_)               \
    {.env = #name_, .type = GPURMA_CFG_##type_, .def = def_, .help = help_, accepts_},

/* Rows as stores of parsed values: `out` is the struct, `values` the parsed
 * values of its rows in order, `i` the row. */
#define GPURMA_CFG_STORE_INT(o, f, v)  (o)->f = (v).num;
#define GPURMA_CFG_STORE_BOOL(o, f, v) (o)->f = (int)(v).num;
#define GPURMA_CFG_STORE_STR(o, f, v)  (o)->f = (v).text; (o)->f##_value = (v).num;
#define GPURMA_CFG_STORE_ENUM(o, f, v) (o)->f = (v).text; (o)->f##_index = (int)(v).num;
#define GPURMA_CFG_STORE_LIST(o, f, v) (o)->f = (v).text; (o)->f##_mask = (v).mask;
#define GPURMA_CFG_STORE(field, name, type, def, accepts, help)                           \
    GPURMA_CFG_STORE_##type(out, field, values[i]) i++;

/* Exported from libgpurma (not API): gpurma's own layers above it, such as
 * the NVSHMEM layer, declare sections too. */
#define GPURMA_CONFIG_EXPORT __attribute__((visibility("default")))

typedef struct gpurma_config_section {
    const char                   *name;    /* the component, for messages */
    const gpurma_config_entry_t  *rows;    /* as declared */
    int                           num_rows;
    void (*store)(const gpurma_config_value_t *values); /* one per row */
    /* Set by the configuration. */
    struct gpurma_config_section *next;
    const gpurma_config_entry_t  *entries; /* the rows with their values, once read */
    int                           invalid; /* rows whose value was rejected */
} gpurma_config_section_t;

/* Adds a section (once; the section macro calls it when the library is
 * loaded). A section registered after the configuration was read is read
 * at once. */
GPURMA_CONFIG_EXPORT void gpurma_config_register(gpurma_config_section_t *section);
/* Reads the configuration if no one has yet; returns section->invalid. */
GPURMA_CONFIG_EXPORT int gpurma_config_section_read(const gpurma_config_section_t *section);

#define GPURMA_CONFIG_SECTION(sect, TABLE)                                                \
    typedef struct {                                                                      \
        TABLE(GPURMA_CFG_MEMBER)                                                          \
    } sect##_config_t;                                                                    \
    static sect##_config_t sect##_config_values;                                         \
    static void sect##_config_store(const gpurma_config_value_t *values)                 \
    {                                                                                     \
        sect##_config_t *out = &sect##_config_values;                                    \
        int i = 0;                                                                        \
        TABLE(GPURMA_CFG_STORE)                                                           \
        (void)i;                                                                          \
    }                                                                                     \
    static const gpurma_config_entry_t sect##_config_rows[] = {                          \
        TABLE(GPURMA_CFG_SECTION_ENTRY)};                                                 \
    static gpurma_config_section_t sect##_config_section = {                             \
        .name     = #sect,                                                                \
        .rows     = sect##_config_rows,                                                   \
        .num_rows = (int)(sizeof(sect##_config_rows) / sizeof(sect##_config_rows[0])),    \
        .store    = sect##_config_store,                                                  \
    };                                                                                    \
    __attribute__((constructor)) static void sect##_config_register(void)                \
    {                                                                                     \
        gpurma_config_register(&sect##_config_section);                                   \
    }                                                                                     \
    static inline const sect##_config_t *sect##_config(void)                             \
    {                                                                                     \
        gpurma_config_section_read(&sect##_config_section);                               \
        return &sect##_config_values;                                                     \
    }

#endif
