/*
 * test_config.c - the environment table (strict typed parsing, the check that
 * gpurma_init relies on), status strings and error text, in one process
 * (links the internal core library).
 *
 * The table is read once per process, so each parsing case runs in a child
 * of its own with only its variables set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "config_section.h"

static int failures;

#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__,     \
                    __LINE__, #cond);                                        \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* ------------------------------------------------------------ one child per case */

/* A section of this program's own, as a component declares one. */
#define TEST_CONFIG(X)                                                                    \
    X(count, GPURMA_TEST_SECTION_COUNT, INT, "5", GPURMA_CFG_RANGE(1, 9, "things"),       \
      "A section's integer, for test_config")                                             \
    X(mode, GPURMA_TEST_SECTION_MODE, ENUM, "slow", GPURMA_CFG_ONE_OF("slow", "fast"),    \
      "A section's word, for test_config")
GPURMA_CONFIG_SECTION(test, TEST_CONFIG)

/* One registered by hand after the configuration was read, as a library
 * loaded later (dlopen) registers its own. */
#define LATE_CONFIG(X)                                                                    \
    X(flag, GPURMA_TEST_LATE_FLAG, BOOL, "0", GPURMA_CFG_ANY,                             \
      "A late section's flag, for test_config")
static int late_flag = -1;
static void late_store(const gpurma_config_value_t *values)
{
    late_flag = (int)values[0].num;
}
static const gpurma_config_entry_t late_rows[] = {LATE_CONFIG(GPURMA_CFG_SECTION_ENTRY)};
static gpurma_config_section_t late_section = {
    .name = "late", .rows = late_rows, .num_rows = 1, .store = late_store};

#define VAR_NAME(field, name, type, def, accepts, help) "GPURMA_" #name,
#define SECTION_VAR_NAME(field, name, type, def, accepts, help) #name,
/* The core table, the library's sections and this program's. */
static const char *const table_vars[] = {GPURMA_CONFIG_TABLE(VAR_NAME)
    "GPURMA_BOOTSTRAP", "GPURMA_MPI_PLUGIN", "GPURMA_UID_TOKEN",
    "NCCL_NVLS_ENABLE", "NVSHMEM_DISABLE_NVLS", TEST_CONFIG(SECTION_VAR_NAME)};
#undef VAR_NAME
#undef SECTION_VAR_NAME
#define NUM_TABLE_VARS (int)(sizeof(table_vars) / sizeof(table_vars[0]))

/* Runs body in a child whose environment holds none of the table's variables
 * but the pairs given (NULL-terminated name, value, ...); 0 when it passed. */
static int in_child(int (*body)(const void *), const void *arg, const char *const *env)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        for (int i = 0; i < NUM_TABLE_VARS; i++)
            unsetenv(table_vars[i]);
        /* And any other component's (sections this list does not know). */
        for (int again = 1; again;) {
            again = 0;
            for (char **e = environ; *e; e++)
                if (!strncmp(*e, "GPURMA_", 7)) {
                    char name[256];
                    snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
                    unsetenv(name);
                    again = 1;
                    break;
                }
        }
        for (; env && env[0]; env += 2)
            setenv(env[0], env[1], 1);
        failures = 0;
        int failed = body(arg);
        fflush(stderr);
        _exit(failed ? 1 : 0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return 1;
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

static const gpurma_config_entry_t *entry(const char *var)
{
    int n;
    const gpurma_config_entry_t *e = gpurma_config_entries(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(e[i].env, var))
            return &e[i];
    return NULL;
}

/* The parsed field of a variable, as a number: INT and BOOL values, the
 * index of an ENUM's word, a LIST's mask. */
static int64_t number_field(const gpurma_config_t *c, const char *var)
{
    if (!strcmp(var, "GPURMA_TIMEOUT_MS"))     return c->timeout_ms;
    if (!strcmp(var, "GPURMA_LIVENESS_MS"))    return c->liveness_ms;
    if (!strcmp(var, "GPURMA_SPIN_US"))        return c->spin_us;
    if (!strcmp(var, "GPURMA_NUM_SIGNALS"))    return c->num_signals;
    if (!strcmp(var, "GPURMA_NUM_COUNTERS"))   return c->num_counters;
    if (!strcmp(var, "GPURMA_PORT_CONTEXTS"))  return c->port_contexts;
    if (!strcmp(var, "GPURMA_DISABLE_SWITCH")) return c->disable_switch;
    if (!strcmp(var, "GPURMA_DEVICE"))         return c->device_value;
    if (!strcmp(var, "GPURMA_TEST_SECTION_COUNT")) return test_config()->count;
    if (!strcmp(var, "GPURMA_TEST_SECTION_MODE"))  return test_config()->mode_index;
    if (!strcmp(var, "GPURMA_ENGINE"))         return c->engine_index;
    if (!strcmp(var, "GPURMA_LOG_LEVEL"))      return c->log_level_index;
    if (!strcmp(var, "GPURMA_LOG_SUBSYS"))     return (int64_t)c->log_subsys_mask;
    return -1;
}

/* The parsed field of a variable that holds text. */
static const char *text_field(const gpurma_config_t *c, const char *var)
{
    if (!strcmp(var, "GPURMA_ENGINE"))     return c->engine;
    if (!strcmp(var, "GPURMA_LOG_LEVEL"))  return c->log_level;
    if (!strcmp(var, "GPURMA_LOG_SUBSYS")) return c->log_subsys;
    if (!strcmp(var, "GPURMA_DEVICE"))     return c->device;
    if (!strcmp(var, "GPURMA_NODE_ID"))    return c->node_id;
    if (!strcmp(var, "GPURMA_TEST_SECTION_MODE")) return test_config()->mode;
    return NULL;
}

/* "auto, mem, port, ..." as an ENUM variable's messages list its words,
 * from its own entry: adding an engine or a bootstrap needs no edit here. */
static const char *words_of(const char *var)
{
    static char words[256];
    const gpurma_config_entry_t *e = entry(var);
    size_t len = 0;
    words[0] = '\0';
    for (int k = 0; e && e->values && e->values[k] && len < sizeof(words); k++)
        len += (size_t)snprintf(words + len, sizeof(words) - len, "%s%s", k ? ", " : "",
                                e->values[k]);
    return words;
}

typedef struct {
    const char *var, *text;
    int         valid;
    int64_t     number;  /* valid: number_field (ignored when -1) */
    const char *word;    /* valid: text_field (ignored when NULL) */
    /* invalid: the whole message, %s standing for the variable's words (NULL:
     * only its start is checked) */
    const char *message;
} config_case_t;

#define OK(var, text, number, word)  {"GPURMA_" #var, text, 1, number, word, NULL}
#define BAD(var, text)               {"GPURMA_" #var, text, 0, -1, NULL, NULL}
#define BAD_SAYS(var, text, message) {"GPURMA_" #var, text, 0, -1, NULL, message}
#define SUBSYS(s) (1 << GPURMA_SUB_##s)

static const config_case_t cases[] = {
    OK(TIMEOUT_MS, "1", 1, NULL),
    OK(TIMEOUT_MS, "604800000", 604800000, NULL),
    OK(TIMEOUT_MS, "0x10", 16, NULL),
    OK(TIMEOUT_MS, "0XfF", 255, NULL),
    OK(TIMEOUT_MS, "010", 10, NULL), /* decimal, not octal */
    BAD_SAYS(TIMEOUT_MS, "12abc",
             "GPURMA_TIMEOUT_MS=12abc: expected an integer from 1 to 604800000 (milliseconds)"),
    BAD(TIMEOUT_MS, "1x"),
    BAD_SAYS(TIMEOUT_MS, "",
             "GPURMA_TIMEOUT_MS=\"\": expected an integer from 1 to 604800000 (milliseconds)"),
    BAD(TIMEOUT_MS, "18446744073710"), /* wrapped to 0.5 ms once multiplied to ns */
    BAD(TIMEOUT_MS, "18446744073709551616"),
    BAD(TIMEOUT_MS, "99999999999999999999999999"),
    BAD(TIMEOUT_MS, "0x10000000000000000"),
    BAD(TIMEOUT_MS, "604800001"),
    BAD(TIMEOUT_MS, "0"),
    BAD(TIMEOUT_MS, "-1"),
    BAD(TIMEOUT_MS, "-0"),
    BAD(TIMEOUT_MS, "+5"),
    BAD(TIMEOUT_MS, " 5"),
    BAD(TIMEOUT_MS, "5 "),
    BAD(TIMEOUT_MS, "1.5"),
    BAD(TIMEOUT_MS, "0x"),
    BAD(TIMEOUT_MS, "-"),
    BAD(TIMEOUT_MS, "1k"),            /* no suffixes */
    BAD(TIMEOUT_MS, "99999999999g"),
    OK(LIVENESS_MS, "60000", 60000, NULL),
    BAD(LIVENESS_MS, "60001"),
    BAD(LIVENESS_MS, "0"),
    OK(SPIN_US, "0", 0, NULL),
    OK(SPIN_US, "1000000", 1000000, NULL),
    BAD(SPIN_US, "1000001"),
    BAD(SPIN_US, "-1"),
    OK(NUM_SIGNALS, "0", 0, NULL),
    OK(NUM_SIGNALS, "1048576", 1048576, NULL),
    BAD(NUM_SIGNALS, "1048577"),
    BAD(NUM_SIGNALS, "2k"),
    BAD(NUM_SIGNALS, "-1"),
    OK(NUM_COUNTERS, "0x100000", 1048576, NULL),
    BAD(NUM_COUNTERS, "99999999999g"),
    BAD(NUM_COUNTERS, "4294967296"),  /* would be 0 once cast to uint32_t */
    OK(PORT_CONTEXTS, "1", 1, NULL),
    OK(PORT_CONTEXTS, "4", 4, NULL),
    BAD(PORT_CONTEXTS, "0"),
    BAD(PORT_CONTEXTS, "5"),

    OK(DISABLE_SWITCH, "1", 1, NULL),
    OK(DISABLE_SWITCH, "0", 0, NULL),
    OK(DISABLE_SWITCH, "yes", 1, NULL),
    OK(DISABLE_SWITCH, "No", 0, NULL),
    OK(DISABLE_SWITCH, "TRUE", 1, NULL),
    OK(DISABLE_SWITCH, "false", 0, NULL),
    OK(DISABLE_SWITCH, "on", 1, NULL),
    OK(DISABLE_SWITCH, "OFF", 0, NULL),
    BAD_SAYS(DISABLE_SWITCH, "maybe",
             "GPURMA_DISABLE_SWITCH=maybe: expected one of 1, 0, yes, no, true, false, on, off"),
    BAD(DISABLE_SWITCH, ""),
    BAD(DISABLE_SWITCH, "2"),
    BAD(DISABLE_SWITCH, "y"),
    BAD(DISABLE_SWITCH, "tru"),
    BAD(DISABLE_SWITCH, "onn"),
    BAD(DISABLE_SWITCH, "10"),

    OK(ENGINE, "auto", 0, "auto"),
    OK(ENGINE, "mem", 1, "mem"),
    OK(ENGINE, "PORT", 2, "port"),    /* the field holds the canonical word */
    OK(ENGINE, "Switch", 3, "switch"),
    BAD_SAYS(ENGINE, "bogus", "GPURMA_ENGINE=bogus: expected one of %s"),
    BAD(ENGINE, ""),
    BAD(ENGINE, "mem,port"),
    BAD(ENGINE, "me"),
    BAD(ENGINE, "memory"),
    /* bootstrap.c's section: its words come from the list of bootstraps. */
    OK(BOOTSTRAP, "uid", -1, NULL),
    OK(BOOTSTRAP, "Single", -1, NULL),
    OK(BOOTSTRAP, "MPI", -1, NULL),
    BAD_SAYS(BOOTSTRAP, "tcp",
             "GPURMA_BOOTSTRAP=tcp: expected one of %s"),
    BAD(BOOTSTRAP, ""),
    OK(UID_TOKEN, "s3cret", -1, NULL),
    OK(LOG_LEVEL, "error", GPURMA_LOG_ERROR, "error"),
    OK(LOG_LEVEL, "DEBUG", GPURMA_LOG_DEBUG, "debug"),
    OK(LOG_LEVEL, "trace", GPURMA_LOG_TRACE, "trace"),
    BAD_SAYS(LOG_LEVEL, "loud",
             "GPURMA_LOG_LEVEL=loud: expected one of error, warn, info, debug, trace"),

    OK(LOG_SUBSYS, "init,port", SUBSYS(INIT) | SUBSYS(PORT), NULL),
    OK(LOG_SUBSYS, "WIN", SUBSYS(WIN), NULL),
    OK(LOG_SUBSYS, "all", 1 << GPURMA_SUB_COUNT, NULL),
    OK(LOG_SUBSYS, "boot,all", SUBSYS(BOOT) | (1 << GPURMA_SUB_COUNT), NULL),
    BAD_SAYS(LOG_SUBSYS, "init,foo",
             "GPURMA_LOG_SUBSYS=init,foo: expected a comma-separated list of init, boot, win, "
             "rma, mem, port, all"),
    BAD(LOG_SUBSYS, ""),
    BAD(LOG_SUBSYS, "initport"),
    BAD(LOG_SUBSYS, "init,"),
    BAD(LOG_SUBSYS, "init,,port"),
    BAD(LOG_SUBSYS, "init port"),

    OK(DEVICE, "auto", -1, "auto"), /* -1 is GPURMA_DEVICE_AUTO: checked in check_defaults */
    OK(DEVICE, "HOST", GPURMA_DEVICE_HOST, "HOST"),
    OK(DEVICE, "0", 0, "0"),
    OK(DEVICE, "7", 7, "7"),
    OK(DEVICE, "010", 10, "010"),
    OK(DEVICE, "2147483647", 2147483647, "2147483647"),
    BAD_SAYS(DEVICE, "-3", "GPURMA_DEVICE=-3: expected auto, host or a GPU ordinal (0 or more)"),
    BAD(DEVICE, "abc"),
    BAD(DEVICE, ""),
    BAD(DEVICE, "1x"),
    BAD(DEVICE, "0x1"),
    BAD(DEVICE, "+1"),
    BAD(DEVICE, " 1"),
    BAD(DEVICE, "2147483648"),
    BAD(DEVICE, "99999999999999999999"),

    /* A section declared in this file, parsed and checked with the core. */
    OK(TEST_SECTION_COUNT, "7", 7, NULL),
    BAD_SAYS(TEST_SECTION_COUNT, "10",
             "GPURMA_TEST_SECTION_COUNT=10: expected an integer from 1 to 9 (things)"),
    OK(TEST_SECTION_MODE, "FAST", 1, "fast"),
    BAD_SAYS(TEST_SECTION_MODE, "medium",
             "GPURMA_TEST_SECTION_MODE=medium: expected one of slow, fast"),

    OK(NODE_ID, "", -1, ""),          /* free text */
    OK(NODE_ID, "rack 3, node 7", -1, "rack 3, node 7"),
};

static int check_case(const void *arg)
{
    const config_case_t *c = arg;
    const gpurma_config_t *cfg = gpurma_config();
    const gpurma_config_entry_t *e = entry(c->var);
    EXPECT(e != NULL);
    if (!e)
        return failures;
    EXPECT(e->is_set && !strcmp(e->value, c->text));
    int rc = gpurma_config_check();
    if (c->valid) {
        EXPECT(rc == GPURMA_SUCCESS && !e->invalid);
        if (c->number != -1)
            EXPECT(number_field(cfg, c->var) == c->number);
        if (c->word)
            EXPECT(text_field(cfg, c->var) && !strcmp(text_field(cfg, c->var), c->word));
        if (!strcmp(c->var, "GPURMA_LOG_LEVEL"))
            EXPECT(gpurma_log_threshold == c->number);
        if (!strcmp(c->var, "GPURMA_LOG_SUBSYS"))
            EXPECT(gpurma_log_mask == ((c->number >> GPURMA_SUB_COUNT) ? ~0u : (unsigned)c->number));
        return failures;
    }
    EXPECT(rc == GPURMA_ERR_INVALID_ARG && e->invalid);
    const char *msg = gpurma_error_text();
    char start[256];
    snprintf(start, sizeof(start), "%s=%s: expected ", c->var, c->text[0] ? c->text : "\"\"");
    EXPECT(!strncmp(msg, start, strlen(start)));
    if (c->message) {
        char whole[512];
        snprintf(whole, sizeof(whole), c->message, words_of(c->var));
        EXPECT(!strcmp(msg, whole));
    }
    /* The library never uses the rejected text: the field keeps the default. */
    int64_t number = number_field(cfg, c->var);
    const char *text = text_field(cfg, c->var);
    if (e->type == GPURMA_CFG_INT || e->type == GPURMA_CFG_BOOL)
        EXPECT(number == strtoll(e->def, NULL, 0));
    if (text)
        EXPECT(!strcmp(text, e->def));
    if (failures)
        fprintf(stderr, "  (message was \"%s\")\n", msg);
    return failures;
}

static int check_foreign(const void *arg)
{
    (void)arg;
    EXPECT(gpurma_config_check() == GPURMA_SUCCESS);
    /* The switch component's section: any text accepted and kept. */
    const gpurma_config_entry_t *e = entry("NVSHMEM_DISABLE_NVLS");
    EXPECT(e && e->is_set && !e->invalid && !strcmp(e->def, "0") &&
           !strcmp(e->value, "anything"));
    e = entry("NCCL_NVLS_ENABLE");
    EXPECT(e && e->is_set && !e->invalid && !strcmp(e->value, "0"));
    return failures;
}

/* No variable set: every default is valid and in the fields. */
static int check_defaults(const void *arg)
{
    (void)arg;
    const gpurma_config_t *cfg = gpurma_config();
    int n;
    const gpurma_config_entry_t *e = gpurma_config_entries(&n);
    EXPECT(n >= NUM_TABLE_VARS); /* more when a component adds a section */
    for (int k = 0; k < NUM_TABLE_VARS; k++)
        EXPECT(entry(table_vars[k]) != NULL);
    for (int i = 0; i < n; i++) {
        EXPECT(!e[i].is_set && !e[i].invalid && !strcmp(e[i].value, e[i].def));
        char accepts[256];
        EXPECT(strlen(gpurma_config_accepts(&e[i], accepts, sizeof(accepts))) > 5);
    }
    EXPECT(gpurma_config_check() == GPURMA_SUCCESS);
    EXPECT(cfg->timeout_ms == 60000 && cfg->liveness_ms == 20 && cfg->spin_us == 50);
    EXPECT(cfg->num_signals == 64 && cfg->num_counters == 16 && cfg->port_contexts == 1);
    EXPECT(!strcmp(cfg->engine, "auto") && cfg->engine_index == 0);
    EXPECT(!strcmp(cfg->device, "auto") && cfg->device_value == GPURMA_DEVICE_AUTO);
    EXPECT(test_config()->count == 5 && !strcmp(test_config()->mode, "slow"));
    EXPECT(test_config_section.invalid == 0 && test_config_section.entries != NULL);
    EXPECT(!strcmp(cfg->log_level, "warn") && cfg->log_level_index == GPURMA_LOG_WARN);
    EXPECT(cfg->log_subsys_mask == 1u << GPURMA_SUB_COUNT && gpurma_log_mask == ~0u);
    EXPECT(gpurma_log_threshold == GPURMA_LOG_WARN);
    EXPECT(cfg->disable_switch == 0 && !strcmp(cfg->node_id, ""));
    return failures;
}

/* Several invalid values: the first in table order is named, the rest counted. */
static int check_several_invalid(const void *arg)
{
    (void)arg;
    EXPECT(gpurma_config_check() == GPURMA_ERR_INVALID_ARG);
    const char *msg = gpurma_error_text();
    char start[512];
    snprintf(start, sizeof(start), "GPURMA_ENGINE=bogus: expected one of %s (and 2 more invalid",
             words_of("GPURMA_ENGINE"));
    EXPECT(!strncmp(msg, start, strlen(start)));
    int n, invalid = 0;
    const gpurma_config_entry_t *e = gpurma_config_entries(&n);
    for (int i = 0; i < n; i++)
        invalid += e[i].invalid;
    EXPECT(invalid == 3);
    return failures;
}

/* Through the public error API, as gpurma_init reports it. */
static int check_public_error(const void *arg)
{
    (void)arg;
    EXPECT(gpurma_config_check() == GPURMA_ERR_INVALID_ARG);
    EXPECT(!strcmp(gpurma_last_error_message(NULL),
                   "GPURMA_TIMEOUT_MS=12abc: expected an integer from 1 to 604800000 "
                   "(milliseconds)"));
    EXPECT(gpurma_config()->timeout_ms == 60000);
    /* The check fails every time it is asked, not only the first. */
    EXPECT(gpurma_config_check() == GPURMA_ERR_INVALID_ARG);
    /* gpurma_init refuses to start with the invalid value. */
    gpurma_ctx_t ctx = (gpurma_ctx_t)&ctx;
    EXPECT(gpurma_init(NULL, &ctx) == GPURMA_ERR_INVALID_ARG && ctx == NULL);
    EXPECT(strstr(gpurma_last_error_message(NULL), "GPURMA_TIMEOUT_MS=12abc: expected") != NULL);
    return failures;
}

/* A long value is shortened in the message, not the message cut off. */
static int check_long_value(const void *arg)
{
    (void)arg;
    EXPECT(gpurma_config_check() == GPURMA_ERR_INVALID_ARG);
    const char *msg = gpurma_error_text();
    char words[512];
    snprintf(words, sizeof(words), "...: expected one of %s", words_of("GPURMA_ENGINE"));
    EXPECT(strstr(msg, words) != NULL);
    return failures;
}

/* A section registered once the configuration was read is read at once:
 * its value lands in its field and an invalid one fails the check. */
static int check_late_section(const void *arg)
{
    int valid = *(const int *)arg;
    int n0, n1;
    EXPECT(gpurma_config_check() == GPURMA_SUCCESS);
    gpurma_config_entries(&n0);
    gpurma_config_register(&late_section);
    gpurma_config_register(&late_section); /* once only */
    const gpurma_config_entry_t *e = gpurma_config_entries(&n1);
    EXPECT(n1 == n0 + 1 && !strcmp(e[n1 - 1].env, "GPURMA_TEST_LATE_FLAG"));
    EXPECT(gpurma_config_section_read(&late_section) == !valid);
    if (valid) {
        EXPECT(late_flag == 1 && gpurma_config_check() == GPURMA_SUCCESS);
    } else {
        EXPECT(late_flag == 0 && gpurma_config_check() == GPURMA_ERR_INVALID_ARG);
        EXPECT(!strncmp(gpurma_error_text(), "GPURMA_TEST_LATE_FLAG=sometimes: expected", 41));
    }
    return failures;
}

/* GPURMA_DEVICE=host, read once by the configuration, is what init uses. */
static int check_device_in_use(const void *arg)
{
    (void)arg;
    gpurma_ctx_t ctx = NULL;
    int device = 12345;
    EXPECT(gpurma_device_in_use(NULL, &device) != GPURMA_SUCCESS && device == 12345);
    EXPECT(gpurma_init(NULL, &ctx) == GPURMA_SUCCESS && ctx != NULL);
    if (!ctx)
        return failures;
    EXPECT(gpurma_device_in_use(ctx, &device) == GPURMA_SUCCESS &&
           device == GPURMA_DEVICE_HOST);
    EXPECT(gpurma_device_in_use(ctx, NULL) == GPURMA_ERR_INVALID_ARG);
    EXPECT(gpurma_finalize(ctx) == GPURMA_SUCCESS);
    return failures;
}

/* Runs body in a child (see in_child) and counts a failure under the name what. */
static void expect_child(const char *what, int (*body)(const void *), const void *arg,
                         const char *const *env)
{
    if (in_child(body, arg, env)) {
        fprintf(stderr, "%s failed\n", what);
        failures++;
    }
}

static void run_parsing_cases(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *env[] = {cases[i].var, cases[i].text, NULL};
        char what[160];
        snprintf(what, sizeof(what), "case %s=\"%s\" (%s)", cases[i].var, cases[i].text,
                 cases[i].valid ? "valid" : "invalid");
        expect_child(what, check_case, &cases[i], env);
    }
    expect_child("defaults", check_defaults, NULL, NULL);
    const char *several[] = {"GPURMA_TIMEOUT_MS", "12abc", "GPURMA_ENGINE", "bogus",
                             "GPURMA_DISABLE_SWITCH", "maybe", "GPURMA_SPIN_US", "7", NULL};
    expect_child("several invalid values", check_several_invalid, NULL, several);
    const char *public_env[] = {"GPURMA_TIMEOUT_MS", "12abc", NULL};
    expect_child("public error message", check_public_error, NULL, public_env);
    /* Other projects' variables: whatever those projects accept is no
     * error of ours; the fields hold the text as set. */
    const char *foreign_env[] = {"NCCL_NVLS_ENABLE", "0", "NVSHMEM_DISABLE_NVLS", "anything",
                                 NULL};
    expect_child("other projects' variables", check_foreign, NULL, foreign_env);
    char long_value[1000];
    memset(long_value, 'x', sizeof(long_value) - 1);
    long_value[sizeof(long_value) - 1] = '\0';
    const char *long_env[] = {"GPURMA_ENGINE", long_value, NULL};
    expect_child("long value", check_long_value, NULL, long_env);
    static const int late_valid = 1, late_invalid = 0;
    const char *late_on[] = {"GPURMA_TEST_LATE_FLAG", "on", NULL};
    expect_child("late section", check_late_section, &late_valid, late_on);
    const char *late_bad[] = {"GPURMA_TEST_LATE_FLAG", "sometimes", NULL};
    expect_child("late section, invalid", check_late_section, &late_invalid, late_bad);
    const char *host_env[] = {"GPURMA_DEVICE", "host", "GPURMA_BOOTSTRAP", "single", NULL};
    expect_child("device in use", check_device_in_use, NULL, host_env);
}

/* ------------------------------------------------------------------ main */

int main(void)
{
    /* Before this process reads the table itself: children inherit it read. */
    run_parsing_cases();

    setenv("GPURMA_TIMEOUT_MS", "1234", 1);
    setenv("GPURMA_NUM_SIGNALS", "0x800", 1);
    setenv("GPURMA_DISABLE_SWITCH", "yes", 1);
    setenv("GPURMA_ENGINE", "mem", 1);
    unsetenv("GPURMA_NUM_COUNTERS");

    const gpurma_config_t *cfg = gpurma_config();
    EXPECT(cfg->timeout_ms == 1234);
    EXPECT(cfg->num_signals == 2048);
    EXPECT(cfg->disable_switch == 1);
    EXPECT(!strcmp(cfg->engine, "mem"));
    EXPECT(cfg->num_counters == 16); /* default */
    EXPECT(gpurma_config() == cfg);  /* parsed once */

    int n = 0, seen_timeout = 0;
    const gpurma_config_entry_t *e = gpurma_config_entries(&n);
    EXPECT(n >= 10);
    for (int i = 0; i < n; i++) {
        /* Sections may read other projects' variables under their names. */
        EXPECT(!strncmp(e[i].env, "GPURMA_", 7) || !strcmp(e[i].env, "NCCL_NVLS_ENABLE") ||
               !strcmp(e[i].env, "NVSHMEM_DISABLE_NVLS") || !strncmp(e[i].env, "NVSHMEM_", 8));
        EXPECT(e[i].help && strlen(e[i].help) > 10);
        EXPECT(e[i].def != NULL && e[i].value != NULL);
        if (!strcmp(e[i].env, "GPURMA_TIMEOUT_MS")) {
            seen_timeout = 1;
            EXPECT(e[i].is_set && !strcmp(e[i].value, "1234") && !strcmp(e[i].def, "60000"));
        }
        if (!strcmp(e[i].env, "GPURMA_NUM_COUNTERS"))
            EXPECT(!e[i].is_set && !strcmp(e[i].value, e[i].def));
    }
    EXPECT(seen_timeout);

    /* Every status has its own text. */
    for (int s = GPURMA_SUCCESS; s >= GPURMA_ERR_MISALIGNED; s--) {
        const char *t = gpurma_strerror((gpurma_status_t)s);
        EXPECT(strcmp(t, "unknown status") != 0);
        for (int k = s + 1; k <= 0; k++)
            EXPECT(strcmp(t, gpurma_strerror((gpurma_status_t)k)) != 0);
    }
    EXPECT(!strcmp(gpurma_strerror((gpurma_status_t)-999), "unknown status"));

    /* gpurma_set_error returns its status and keeps the text per thread. */
    EXPECT(gpurma_set_error(GPURMA_ERR_OUT_OF_BOUNDS, "offset %d past %d", 17, 16) ==
           GPURMA_ERR_OUT_OF_BOUNDS);
    EXPECT(!strcmp(gpurma_error_text(), "offset 17 past 16"));
    EXPECT(!strcmp(gpurma_last_error_message(NULL), "offset 17 past 16"));

    /* Calls on a NULL context fail cleanly. */
    EXPECT(gpurma_rank(NULL) == -1 && gpurma_team_world(NULL) == NULL);
    EXPECT(gpurma_finalize(NULL) == GPURMA_ERR_NOT_INITIALIZED);

    if (failures) {
        fprintf(stderr, "test_config: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_config: PASS\n");
    return 0;
}
