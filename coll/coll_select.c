/*
 * coll_select.c - which algorithm runs a collective: one table, first row
 * that fits wins; GPURMA_COLL_ALGO forces one (a forced algorithm that
 * does not apply to the collective gives oneshot). docs/collectives.md
 * has the table with the measurements behind it.
 */
#include <stddef.h>

#include "coll_internal.h"
#include "gpurma_internal.h"

#define KIND(k) (1u << GPURMA_COLL_##k)
#define ALL_KINDS ((1u << GPURMA_COLL_KINDS) - 1)

typedef struct {
    gpurma_coll_algo_t algo;
    unsigned           kinds;      /* collectives it runs                          */
    int                proxied;    /* 1: only when some peer goes through the port
                                      engine (other nodes); 0: any team          */
    int                min_ranks;  /* team size at least                           */
    size_t             min_bytes;  /* per-peer piece at least (0: any)             */
    int                fits_ll;    /* 1: only when a piece fits one LL slot        */
} coll_select_row_t;

static const coll_select_row_t table[] = {
    /* Small pieces: one step of LL packets, no signal, no round trip. */
    {GPURMA_COLL_ALGO_ONESHOT_LL, ALL_KINDS, 0, 1, 0, 1},
    /* Other nodes: the chain keeps each link to one neighbour. */
    {GPURMA_COLL_ALGO_RING, KIND(ALLREDUCE), 1, 3, 0, 0},
    /* Large allreduce: each rank reduces 1/n of the data, not all of it. */
    {GPURMA_COLL_ALGO_TWOSHOT, KIND(ALLREDUCE), 0, 3, 65536, 0},
    {GPURMA_COLL_ALGO_ONESHOT, ALL_KINDS, 0, 1, 0, 0},
};

static const unsigned applies[] = {
    [GPURMA_COLL_ALGO_AUTO] = 0,
    [GPURMA_COLL_ALGO_ONESHOT_LL] = ALL_KINDS,
    [GPURMA_COLL_ALGO_ONESHOT] = ALL_KINDS,
    [GPURMA_COLL_ALGO_TWOSHOT] = KIND(ALLREDUCE),
    [GPURMA_COLL_ALGO_RING] = KIND(ALLREDUCE),
    /* Forced only: no GPU measurement puts it in the table yet. */
    [GPURMA_COLL_ALGO_CE] = KIND(ALLGATHER) | KIND(ALLTOALL) | KIND(ALLTOALLV) | KIND(BROADCAST),
    /* Taken before the table (coll_api.c) when the buffers are registered;
     * forced otherwise, it gives oneshot. */
    [GPURMA_COLL_ALGO_DIRECT] = 0,
};

static const char *const names[] = {GPURMA_COLL_ALGO_NAMES};

const char *gpurma_coll_algo_name(gpurma_coll_algo_t algo)
{
    return (unsigned)algo < sizeof(names) / sizeof(names[0]) ? names[algo] : "?";
}

gpurma_coll_algo_t gpurma_coll_select(gpurma_coll_kind_t kind, const gpurma_dev_coll_t *c,
                                      size_t bytes)
{
    gpurma_coll_algo_t forced = (gpurma_coll_algo_t)gpurma_config()->coll_algo_index;
    if (forced != GPURMA_COLL_ALGO_AUTO)
        return applies[forced] & (1u << kind) ? forced : GPURMA_COLL_ALGO_ONESHOT;
    int proxied = c->win.nports > 0;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        const coll_select_row_t *r = &table[i];
        if (!(r->kinds & (1u << kind)) || (r->proxied && !proxied) || c->size < r->min_ranks ||
            bytes < r->min_bytes || (r->fits_ll && bytes > gpurma_dcoll__slot_data(c, 1)))
            continue;
        return r->algo;
    }
    return GPURMA_COLL_ALGO_ONESHOT;
}

unsigned gpurma_coll_parts(const gpurma_dev_coll_t *c, size_t piece)
{
    size_t parts = piece / (2 * (size_t)c->slot);
    return parts < 1 ? 1 : parts > c->nchannels ? c->nchannels : (unsigned)parts;
}
