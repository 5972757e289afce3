/*
 * config.c - environment variables, parsed once from the X-macro table and
 * the sections components register (config_section.h).
 *
 * Each value is parsed strictly against its entry: a number is the whole text
 * and lies in the entry's range, a word is one of the entry's words. A value
 * that fails leaves the default in gpurma_config_t, and gpurma_config_check()
 * (called by gpurma_init) reports it: a misspelt setting stops the job instead
 * of running it with a value nobody asked for.
 */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_section.h"
#include "gpurma/detail/dev_types.h"

/* The core table is the first section; components add theirs. */
static gpurma_config_t config;
static void core_store(const gpurma_config_value_t *values)
{
    gpurma_config_t *out = &config;
    int i = 0;
    GPURMA_CONFIG_TABLE(GPURMA_CFG_STORE)
}
static const gpurma_config_entry_t core_rows[] = {GPURMA_CONFIG_TABLE(GPURMA_CFG_CORE_ENTRY)};
static gpurma_config_section_t core_section = {
    .name     = "core",
    .rows     = core_rows,
    .num_rows = (int)(sizeof(core_rows) / sizeof(core_rows[0])),
    .store    = core_store,
};

/* Every entry, core first, then the sections in the order they registered
 * (gpurma-info reads them as one array). */
#define MAX_ENTRIES 160
static gpurma_config_entry_t entries[MAX_ENTRIES];
static int num_entries;

/* Sections, core first; guarded by sections_lock, which is held while
 * they are read. */
static gpurma_config_section_t *sections = &core_section;
static pthread_mutex_t sections_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static int  invalid_count;
static char first_invalid[400]; /* message for the first invalid variable */

/* True and false alternate: an even index means true. */
static const char *const bool_words[] = {"1", "0", "yes", "no", "true", "false", "on", "off",
                                         NULL};

typedef gpurma_config_value_t parsed_t;

static int digit_value(char c, unsigned base)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (base == 16 && c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (base == 16 && c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The whole text is [-](decimal | 0x hex) and the value lies in [min, max].
 * No suffixes: no entry is a byte size, and counts and times read plainly.
 * Nothing may wrap. */
static int parse_number(const char *s, int64_t min, int64_t max, int64_t *out)
{
    int neg = *s == '-';
    if (neg && min >= 0)
        return 0;
    s += neg;
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    uint64_t v = 0;
    const char *digits = s;
    for (int d; (d = digit_value(*s, base)) >= 0; s++) {
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            return 0;
        v = v * base + (uint64_t)d;
    }
    if (s == digits || *s)
        return 0;
    int64_t value;
    if (!neg) {
        if (v > (uint64_t)INT64_MAX)
            return 0;
        value = (int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX + 1)
            return 0;
        value = v ? -(int64_t)(v - 1) - 1 : 0;
    }
    if (value < min || value > max)
        return 0;
    *out = value;
    return 1;
}

static int word_index(const char *const *words, const char *s, size_t len)
{
    for (int i = 0; words[i]; i++)
        if (strlen(words[i]) == len && !strncasecmp(words[i], s, len))
            return i;
    return -1;
}

/* Comma list of the entry's words, none empty; a bit per word present. */
static int parse_list(const char *const *words, const char *s, uint64_t *mask)
{
    *mask = 0;
    for (;;) {
        size_t len = strcspn(s, ",");
        int i = word_index(words, s, len);
        if (i < 0 || i >= 64)
            return 0;
        *mask |= 1ull << i;
        if (!s[len])
            return 1;
        s += len + 1;
    }
}

/* Fills *p from text as e's type reads it; 0 when text is not valid. */
static int parse_value(const gpurma_config_entry_t *e, const char *text, parsed_t *p)
{
    int i;
    memset(p, 0, sizeof(*p));
    p->text = text;
    switch (e->type) {
    case GPURMA_CFG_INT:
        return parse_number(text, e->min, e->max, &p->num);
    case GPURMA_CFG_BOOL:
        if ((i = word_index(bool_words, text, strlen(text))) < 0)
            return 0;
        p->num = i % 2 == 0;
        return 1;
    case GPURMA_CFG_ENUM:
        if ((i = word_index(e->values, text, strlen(text))) < 0)
            return 0;
        p->num = i;
        p->text = e->values[i];
        return 1;
    case GPURMA_CFG_LIST:
        return parse_list(e->values, text, &p->mask);
    case GPURMA_CFG_STR:
        return !e->check || e->check(text, &p->num);
    }
    return 0;
}

static const char *join_words(const char *const *words, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; words[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", words[i]);
    return buf;
}

const char *gpurma_config_accepts(const gpurma_config_entry_t *e, char *buf, size_t len)
{
    char words[256];
    switch (e->type) {
    case GPURMA_CFG_INT:
        snprintf(buf, len, "an integer from %lld to %lld (%s)", (long long)e->min,
                 (long long)e->max, e->unit);
        break;
    case GPURMA_CFG_BOOL:
        snprintf(buf, len, "one of %s", join_words(bool_words, words, sizeof(words)));
        break;
    case GPURMA_CFG_ENUM:
        snprintf(buf, len, "one of %s", join_words(e->values, words, sizeof(words)));
        break;
    case GPURMA_CFG_LIST:
        snprintf(buf, len, "a comma-separated list of %s",
                 join_words(e->values, words, sizeof(words)));
        break;
    case GPURMA_CFG_STR:
        snprintf(buf, len, "%s", e->check ? e->accepts : "any text");
        break;
    }
    return buf;
}

int gpurma_config_device_ok(const char *s, int64_t *device)
{
    if (!strcasecmp(s, "auto") || !strcasecmp(s, "host")) {
        *device = tolower((unsigned char)s[0]) == 'a' ? GPURMA_DEVICE_AUTO : GPURMA_DEVICE_HOST;
        return 1;
    }
    /* Decimal only: "010" is GPU 10, as a user who counts GPUs means it. */
    size_t n = strspn(s, "0123456789");
    if (!n || s[n] || n > 10 || strtoll(s, NULL, 10) > INT_MAX)
        return 0;
    *device = strtoll(s, NULL, 10);
    return 1;
}

static void record_invalid(const gpurma_config_entry_t *e)
{
    if (invalid_count++)
        return;
    enum { SHOWN = 80 }; /* of a long value, enough to recognise it */
    char accepts[256];
    size_t vlen = strlen(e->value);
    snprintf(first_invalid, sizeof(first_invalid), "%s=%s%.*s%s: expected %s", e->env,
             vlen ? "" : "\"\"", SHOWN, e->value, vlen > SHOWN ? "..." : "",
             gpurma_config_accepts(e, accepts, sizeof(accepts)));
}

/* Reads one section's variables into entries[] and its fields. Called with
 * sections_lock held. */
static void read_section(gpurma_config_section_t *sec)
{
    if (sec->num_rows > MAX_ENTRIES - num_entries) {
        /* A build with more rows than MAX_ENTRIES: refuse to start rather
         * than run with a component's variables unread. */
        if (!invalid_count++)
            snprintf(first_invalid, sizeof(first_invalid), "configuration section '%s' does "
                     "not fit (more than %d variables in all)", sec->name, MAX_ENTRIES);
        sec->invalid = sec->num_rows;
        return;
    }
    gpurma_config_entry_t *mine = &entries[num_entries];
    parsed_t parsed[MAX_ENTRIES];
    for (int k = 0; k < sec->num_rows; k++) {
        gpurma_config_entry_t *e = &mine[k];
        *e = sec->rows[k];
        const char *v = getenv(e->env);
        e->is_set = v != NULL;
        e->value = v ? v : e->def;
        if (parse_value(e, e->value, &parsed[k]))
            continue;
        e->invalid = 1;
        sec->invalid++;
        record_invalid(e);
        if (!parse_value(e, e->def, &parsed[k])) /* a table bug; test_config guards */
            memset(&parsed[k], 0, sizeof(parsed[k]));
    }
    num_entries += sec->num_rows;
    sec->entries = mine;
    sec->store(parsed);
}

static void config_load(void)
{
    pthread_mutex_lock(&sections_lock);
    for (gpurma_config_section_t *sec = sections; sec; sec = sec->next)
        read_section(sec);
    loaded = 1;
    pthread_mutex_unlock(&sections_lock);
    gpurma_log_configure(&config);
}

void gpurma_config_register(gpurma_config_section_t *section)
{
    pthread_mutex_lock(&sections_lock);
    gpurma_config_section_t **tail = &sections;
    while (*tail && *tail != section)
        tail = &(*tail)->next;
    if (!*tail) {
        section->next = NULL;
        *tail = section;
        if (loaded) /* a library loaded later (dlopen) */
            read_section(section);
    }
    pthread_mutex_unlock(&sections_lock);
}

int gpurma_config_section_read(const gpurma_config_section_t *section)
{
    gpurma_config();
    return section->invalid;
}

const gpurma_config_t *gpurma_config(void)
{
    pthread_once(&config_once, config_load);
    return &config;
}

int gpurma_config_check(void)
{
    gpurma_config();
    if (!invalid_count)
        return GPURMA_SUCCESS;
    if (invalid_count == 1)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%s", first_invalid);
    return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                            "%s (and %d more invalid GPURMA_* variables; gpurma-info -c lists "
                            "them)", first_invalid, invalid_count - 1);
}

const gpurma_config_entry_t *gpurma_config_entries(int *n)
{
    gpurma_config();
    pthread_mutex_lock(&sections_lock);
    *n = num_entries;
    pthread_mutex_unlock(&sections_lock);
    return entries;
}
