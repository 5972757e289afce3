/*
 * config.c - environment variables, parsed once from the X-macro table.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpurma_internal.h"

#define GPURMA_CFG_ENTRY(field, name, type, def, help) \
    {"GPURMA_" #name, GPURMA_CFG_##type, def, help, 0, def},
static gpurma_config_entry_t entries[] = {GPURMA_CONFIG_TABLE(GPURMA_CFG_ENTRY)};
#undef GPURMA_CFG_ENTRY

static gpurma_config_t config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static int parse_bool(const char *s)
{
    return s[0] == '1' || s[0] == 'y' || s[0] == 'Y' || s[0] == 't' || s[0] == 'T' ||
           !strcasecmp(s, "on");
}

/* Integers accept k/m/g suffixes (powers of 1024) so sizes read naturally. */
static int64_t parse_int(const char *s)
{
    char *end;
    int64_t v = strtoll(s, &end, 0);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
    }
    return v;
}

static void config_load(void)
{
    int i = 0;
    for (size_t k = 0; k < sizeof(entries) / sizeof(entries[0]); k++) {
        const char *v = getenv(entries[k].env);
        if (v) {
            entries[k].is_set = 1;
            entries[k].value  = v;
        }
    }
#define GPURMA_CFG_INT(v)  parse_int(v)
#define GPURMA_CFG_SIZE(v) (uint64_t)parse_int(v)
#define GPURMA_CFG_STR(v)  (v)
#define GPURMA_CFG_BOOL(v) parse_bool(v)
#define GPURMA_CFG_LOAD(field, name, type, def, help) \
    config.field = GPURMA_CFG_##type(entries[i].value); i++;
    GPURMA_CONFIG_TABLE(GPURMA_CFG_LOAD)
#undef GPURMA_CFG_LOAD
    gpurma_log_configure(&config);
}

const gpurma_config_t *gpurma_config(void)
{
    pthread_once(&config_once, config_load);
    return &config;
}

const gpurma_config_entry_t *gpurma_config_entries(int *n)
{
    gpurma_config();
    *n = (int)(sizeof(entries) / sizeof(entries[0]));
    return entries;
}
