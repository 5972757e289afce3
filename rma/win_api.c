/*
 * win_api.c - the public calls that make and free user windows: the
 * window (window.c), then its lock words (lock.c); freeing completes this
 * rank's operations (completion.c) and waits for the team first. On top
 * of those three files, which do not call it.
 */
#include <stdio.h>

#include "rma.h"

/* A user window also gets its lock words (lock.c); when that fails (on any
 * rank: the build agrees), the window goes again. */
static int with_locks(gpurma_win_t *win, const gpurma_win_params_t *p)
{
    int rc = gpurma_win_locks_create(*win, p);
    if (rc) {
        char text[512];
        snprintf(text, sizeof(text), "%s", gpurma_error_text());
        (void)gpurma_win_free(win);
        gpurma_set_error(rc, "%s", text);
    }
    return rc;
}

GPURMA_API gpurma_status_t gpurma_win_allocate(gpurma_team_t team, size_t size,
                                               const gpurma_win_params_t *p, void **base,
                                               gpurma_win_t *win)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return rc;
    if (!win)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_allocate: win is NULL");
    gpurma_exchange_t ex = team->sync->exchange(team);
    rc = gpurma_win_build(team, &ex, GPURMA_WIN_ALLOCATED, NULL, size, p, 0, win);
    if (!rc)
        rc = with_locks(win, p);
    if (!rc && base)
        *base = (*win)->base;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_win_create(gpurma_team_t team, void *base, size_t size,
                                             const gpurma_win_params_t *p, gpurma_win_t *win)
{
    int rc = gpurma_team_check(team);
    if (rc)
        return rc;
    if (!win)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_create: win is NULL");
    gpurma_exchange_t ex = team->sync->exchange(team);
    rc = gpurma_win_build(team, &ex, GPURMA_WIN_CREATED, base, size, p, 0, win);
    return rc ? rc : with_locks(win, p);
}

GPURMA_API gpurma_status_t gpurma_win_free(gpurma_win_t *win)
{
    if (!win)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "win_free: NULL");
    struct gpurma_win_s *w = *win;
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    if (w->internal)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "window %p is internal", (void *)w);
    /* Our operations complete, then nobody may still be reading or
     * writing the memory we unmap. */
    rc = gpurma_quiet(w);
    int brc = w->team->sync->barrier(w->team);
    if (!rc)
        rc = brc;
    gpurma_win_unlink(w);
    gpurma_win_destroy(w);
    gpurma_handle_bury(w); /* a kept copy of the handle gives ERR_FREED */
    *win = NULL;
    return rc;
}
