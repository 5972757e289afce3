/*
 * hello_ring.c - the shortest gpurma program: every rank writes a greeting
 * into its right neighbour's window and waits for the one from its left.
 *
 *   mpirun -np 4 ./hello_ring
 */
#include <gpurma.h>
#include <stdio.h>

/* On error: say why, then end every rank (peers would otherwise wait). */
#define CHECK(call)                                                               \
    do {                                                                          \
        if ((call) != GPURMA_SUCCESS) {                                           \
            fprintf(stderr, "%s: %s\n", #call, gpurma_last_error_message(ctx));   \
            gpurma_abort(ctx, 1, #call);                                          \
        }                                                                         \
    } while (0)

int main(void)
{
    gpurma_ctx_t ctx = NULL;
    CHECK(gpurma_init(NULL, &ctx));
    int me = gpurma_rank(ctx), n = gpurma_size(ctx);

    char *inbox; /* this rank's part of the window: 64 bytes */
    gpurma_win_t win;
    CHECK(gpurma_win_allocate(gpurma_team_world(ctx), 64, NULL, (void **)&inbox, &win));

    char msg[64];
    int len = snprintf(msg, sizeof(msg), "hello from rank %d", me) + 1;
    /* The data, then signal 0 set to 1: when the neighbour sees the signal,
     * the data is there too. */
    CHECK(gpurma_put_signal(win, (me + 1) % n, 0, msg, (size_t)len, 0, GPURMA_SIGNAL_SET, 1));
    CHECK(gpurma_wait_until(win, 0, GPURMA_CMP_EQ, 1));
    printf("rank %d of %d got \"%s\"\n", me, n, inbox);

    CHECK(gpurma_win_free(&win)); /* collective: nobody frees while others put */
    CHECK(gpurma_finalize(ctx));
    return 0;
}
