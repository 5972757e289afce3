/*
 * single.c - the bootstrap of a job of one process.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "gpurma_internal.h"

static int single_allgather(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    (void)bs;
    if (len && all != mine)
        memmove(all, mine, len);
    return 0;
}

static int single_barrier(gpurma_bootstrap_t *bs)
{
    (void)bs;
    return 0;
}

/* Nobody else to tell; gpurma_abort ends this process itself. */
static void single_abort(gpurma_bootstrap_t *bs, int code, const char *why)
{
    (void)bs;
    (void)code;
    (void)why;
}

static void single_finalize(gpurma_bootstrap_t *bs) { bs->impl = NULL; }

static const gpurma_bootstrap_ops_t single_ops = {
    .size      = sizeof(gpurma_bootstrap_ops_t),
    .name      = "single",
    .allgather = single_allgather,
    .barrier   = single_barrier,
    .abort     = single_abort,
    .finalize  = single_finalize,
};

static int single_open(const gpurma_bootstrap_args_t *args, gpurma_bootstrap_t **out)
{
    gpurma_bootstrap_t *bs = calloc(1, sizeof(*bs));
    if (!bs)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "single bootstrap: no memory");
    bs->ops         = &single_ops;
    bs->rank        = 0;
    bs->size        = 1;
    bs->timeout_ms  = args->timeout_ms;
    bs->failed_rank = -1;
    *out = bs;
    return 0;
}

/* The last resort of automatic selection. */
static int single_detect(const gpurma_bootstrap_args_t *args, const char **why)
{
    (void)args;
    *why = "no launcher detected";
    return 1;
}

const gpurma_bootstrap_entry_t gpurma_bootstrap_single = {
    .name   = "single",
    .detect = single_detect,
    .open   = single_open,
};
