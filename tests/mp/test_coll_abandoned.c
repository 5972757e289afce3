/*
 * test_coll_abandoned.c - a call its peers gave up is refused, never
 * matched with a later call. Rank 0 passes a NULL send buffer and is
 * refused at once, before any step (its epoch does not move); its peers
 * wait out the timeout. Then rank 0 calls again, alone, with good
 * arguments: the peers' pieces of the first call are still in its window,
 * of the same collective, count, dtype and epoch, and used to be taken:
 * SUCCESS with the peers' data of a call they had reported failed (or,
 * where the call has several parts or steps, an error after part of recv
 * was written). Now every member whose call failed tells its peers which
 * epoch it gave up, and rank 0 must be refused with nothing of a peer's
 * in recv.
 * allreduce, reduce (root 0) and allgather, at counts that take LL16 in
 * one part, LL16 in two parts and the shared protocol's steps. Each case
 * on a team of its own: the team is out of step after it.
 */
#include "common.h"
#include "gpurma_coll.h"
#include "settle.h"

#define TIMEOUT_MS 1000

static const size_t counts[] = {1, 3000, 100003};
enum { ALLREDUCE, REDUCE, ALLGATHER, KINDS };
static const char *const names[KINDS] = {"allreduce", "reduce", "allgather"};

static gpurma_status_t call(int kind, gpurma_team_t t, const void *in, void *out, size_t count)
{
    switch (kind) {
    case ALLREDUCE: return gpurma_allreduce(t, in, out, count, GPURMA_UINT32, GPURMA_SUM, NULL);
    case REDUCE:    return gpurma_reduce(t, in, out, count, GPURMA_UINT32, GPURMA_SUM, 0, NULL);
    default:        return gpurma_allgather(t, in, out, count, GPURMA_UINT32, NULL);
    }
}

int main(void)
{
    t_init("test_coll_abandoned", TIMEOUT_MS);
    t_settle_init();
    if (t_size < 2)
        return t_finish("needs 2 ranks or more");
    for (int kind = 0; kind < KINDS; kind++)
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            const size_t count = counts[i], out_n = kind == ALLGATHER ? count * t_size : count;
            uint32_t *in = t_malloc(count * 4), *out = t_malloc(out_n * 4);
            t_fill(in, count * 4, t_seed(70, (uint64_t)t_rank, i));
            gpurma_team_t t;
            CHECK(gpurma_team_split(t_world, 0, t_rank, &t));
            CHECK(call(kind, t, in, out, count)); /* the team's first call: every rank */
            gpurma_status_t rc = call(kind, t, t_rank == 0 ? NULL : in, out, count);
            T_ASSERT(rc == (t_rank == 0 ? GPURMA_ERR_INVALID_ARG : GPURMA_ERR_TIMEOUT),
                     "%s of %zu: the call rank 0 refused returned %d", names[kind], count,
                     (int)rc);
            t_settle(10.0 * TIMEOUT_MS / 1000);
            if (t_rank == 0) {
                memset(out, T_POISON, out_n * 4);
                rc = call(kind, t, in, out, count);
                T_ASSERT(rc != GPURMA_SUCCESS,
                         "%s of %zu: rank 0's next call, which no peer made, returned SUCCESS "
                         "(with the peers' data of the call they gave up)",
                         names[kind], count);
                /* nothing of a peer's: poison, or (a call of several
                 * steps refused after its first) this rank's own input
                 * where the call puts it */
                const size_t own = kind == ALLGATHER ? (size_t)t_rank * count : 0;
                uint32_t poison;
                memset(&poison, T_POISON, sizeof poison);
                for (size_t j = 0; j < out_n; j++)
                    T_ASSERT(out[j] == poison || (j >= own && j - own < count &&
                                                  out[j] == in[j - own]),
                             "%s of %zu: recv element %zu of a refused call holds %#x, neither "
                             "poison nor this rank's own input",
                             names[kind], count, j, (unsigned)out[j]);
            }
            t_settle(10.0 * TIMEOUT_MS / 1000);
            free(in), free(out);
            /* t stays: freeing is collective over a team out of step */
        }
    return t_finish(NULL);
}
