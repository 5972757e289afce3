/*
 * validate.c - checks of the context and team handles every public call
 * starts with. They live in the core, below windows and teams, so that
 * every layer can validate a handle it is given.
 */
#include "context.h"

int gpurma_ctx_check(const struct gpurma_ctx_s *ctx)
{
    if (!ctx)
        return gpurma_set_error(GPURMA_ERR_NOT_INITIALIZED, "context is NULL (call gpurma_init)");
    if (!gpurma_handle_is(ctx, GPURMA_HANDLE_CTX))
        return gpurma_set_error(GPURMA_ERR_NOT_INITIALIZED,
                                "%p is not a context gpurma_init returned", (const void *)ctx);
    if (ctx->magic == GPURMA_DEAD_MAGIC)
        return gpurma_set_error(GPURMA_ERR_NOT_INITIALIZED, "context %p was finalized",
                                (const void *)ctx);
    if (ctx->magic != GPURMA_CTX_MAGIC)
        return gpurma_set_error(GPURMA_ERR_NOT_INITIALIZED, "%p is not a live context",
                                (const void *)ctx);
    return GPURMA_SUCCESS;
}

int gpurma_handle_dead(uint32_t magic, const char *what, const void *h)
{
    if (magic == GPURMA_GONE_MAGIC)
        return gpurma_set_error(GPURMA_ERR_NOT_INITIALIZED,
                                "%s %p belonged to a context that was finalized", what, h);
    return gpurma_set_error(GPURMA_ERR_FREED, "%s %p was freed", what, h);
}

int gpurma_team_check(const struct gpurma_team_s *t)
{
    if (!t)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "team handle is NULL");
    if (!gpurma_handle_is(t, GPURMA_HANDLE_TEAM))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%p is not a team handle",
                                (const void *)t);
    if (t->magic == GPURMA_DEAD_MAGIC || t->magic == GPURMA_GONE_MAGIC)
        return gpurma_handle_dead(t->magic, "team", t);
    if (t->magic != GPURMA_TEAM_MAGIC)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "%p is not a live team", (const void *)t);
    return gpurma_ctx_check(t->ctx);
}
