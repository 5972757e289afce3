/*
 * test_config.c - the environment table, status strings and error text,
 * in one process (links the internal core library).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpurma_internal.h"

static int failures;

#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__,     \
                    __LINE__, #cond);                                        \
            failures++;                                                      \
        }                                                                    \
    } while (0)

int main(void)
{
    /* Set before the first gpurma_config() call: the table is read once. */
    setenv("GPURMA_TIMEOUT_MS", "1234", 1);
    setenv("GPURMA_NUM_SIGNALS", "2k", 1);
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
        EXPECT(!strncmp(e[i].env, "GPURMA_", 7));
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
