/*
 * handle.c - handles outlive what they stand for.
 *
 * A window, team or context handle is a pointer the user may keep after
 * gpurma_win_free, gpurma_team_free or gpurma_finalize. So that any later
 * call on it reads a "dead" magic word instead of freed memory, the struct
 * behind a released handle is never returned to malloc: its resources go,
 * the struct stays as a tombstone (a few hundred bytes per freed window or
 * team, for the life of the process). The list keeps tombstones reachable,
 * so leak checkers see them as live memory, not as leaks.
 */
#include <pthread.h>
#include <stdlib.h>

#include "gpurma_internal.h"

static pthread_mutex_t tomb_lock = PTHREAD_MUTEX_INITIALIZER;
static void **tombs;
static size_t ntombs, cap;

void gpurma_handle_bury(void *obj)
{
    pthread_mutex_lock(&tomb_lock);
    if (ntombs == cap) {
        size_t ncap = cap ? 2 * cap : 64;
        void **n = realloc(tombs, ncap * sizeof(*n));
        if (!n) { /* still never freed: at worst invisible to leak checkers */
            pthread_mutex_unlock(&tomb_lock);
            return;
        }
        tombs = n;
        cap = ncap;
    }
    tombs[ntombs++] = obj;
    pthread_mutex_unlock(&tomb_lock);
}
