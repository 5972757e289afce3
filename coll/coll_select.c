/*
 * coll_select.c - which algorithm runs a collective: the rows of the
 * algorithms' list (include/gpurma/detail/coll_algos.h), tried by their
 * order, first that fits wins; GPURMA_COLL_ALGO forces one (a forced
 * algorithm that does not apply to the collective gives oneshot).
 * docs/collectives.md has the table with the measurements behind it.
 */
#include <stddef.h>

#include "coll_internal.h"
#include "gpurma_internal.h"

#define K(k) (1u << GPURMA_COLL_##k)
#define K_ALL ((1u << GPURMA_COLL_KINDS) - 1)

typedef struct {
    gpurma_coll_algo_t algo;
    const char        *name;
    unsigned           kinds;      /* collectives it runs                          */
    int                order;      /* tried by increasing order; 0: forced only    */
    int                proxied;    /* 1: only when some peer goes through the port
                                      engine (other nodes); -1: only when none
                                      does; 0: any team                          */
    int                min_ranks;  /* team size at least                           */
    size_t             min_bytes;  /* per-peer piece at least (0: any)             */
    int                fits_ll;    /* 1: only when a piece fits one LL slot; 2:
                                      the channels' LL16 slots                   */
} coll_algo_row_t;

#define ROW(ID, name, kinds, order, proxied, min_ranks, min_bytes, fits_ll, own)                \
    {GPURMA_COLL_ALGO_##ID, #name, kinds, order, proxied, min_ranks, min_bytes, fits_ll},
/* Indexed by gpurma_coll_algo_t: the list numbers the algorithms too. */
static const coll_algo_row_t rows[] = {GPURMA_COLL_ALGOS(ROW)};
#undef ROW

_Static_assert(sizeof(rows) / sizeof(rows[0]) == GPURMA_COLL_ALGO__COUNT,
               "one row per algorithm");

const char *gpurma_coll_algo_name(gpurma_coll_algo_t algo)
{
    return (unsigned)algo < GPURMA_COLL_ALGO__COUNT ? rows[algo].name : "?";
}

gpurma_coll_algo_t gpurma_coll_select(gpurma_coll_kind_t kind, const gpurma_dev_coll_t *c,
                                      size_t bytes)
{
    gpurma_coll_algo_t forced = (gpurma_coll_algo_t)gpurma_config()->coll_algo_index;
    if (forced != GPURMA_COLL_ALGO_AUTO)
        return rows[forced].kinds & (1u << kind) ? forced : GPURMA_COLL_ALGO_ONESHOT;
    int proxied = c->win.nports > 0;
    const coll_algo_row_t *best = NULL;
    for (size_t i = 0; i < GPURMA_COLL_ALGO__COUNT; i++) {
        const coll_algo_row_t *r = &rows[i];
        if (!r->order || (best && best->order <= r->order) || !(r->kinds & (1u << kind)) ||
            (r->proxied > 0 && !proxied) || (r->proxied < 0 && proxied) ||
            c->size < r->min_ranks || bytes < r->min_bytes ||
            (r->fits_ll == 1 && bytes > gpurma_dcoll__slot_data(c, 1)) ||
            (r->fits_ll == 2 && !gpurma_dcoll__ll16_parts(c, bytes)))
            continue;
        best = r;
    }
    return best ? best->algo : GPURMA_COLL_ALGO_ONESHOT;
}

/* LL16's parts: as few as its slots allow, and on a GPU at least one per
 * GPURMA_COLL_LL16_PART_BYTES of the piece (a part is a block: a piece of
 * some KiB then spreads over several SMs), at most the channels. */
static unsigned ll16_parts(const gpurma_dev_coll_t *c, size_t piece, int gpu)
{
    const unsigned need = gpurma_dcoll__ll16_parts(c, piece);
    const size_t each = (size_t)gpurma_config()->coll_ll16_part_bytes;
    if (!need || !gpu || !each)
        return need;
    const size_t want = gpurma_sh_div_ceil(piece, each);
    return want <= need ? need : want >= c->nchannels ? c->nchannels : (unsigned)want;
}

unsigned gpurma_coll_parts(const gpurma_dev_coll_t *c, size_t piece, gpurma_coll_algo_t algo,
                           int gpu)
{
    unsigned ll16 = rows[algo].fits_ll == 2 ? ll16_parts(c, piece, gpu) : 0;
    if (ll16)
        return ll16;
    /* The other algorithms keep to the blocks they were measured with:
     * their blocks of 512 threads wait on the peers' (the channels are
     * there for LL16's). */
    const size_t most = c->nchannels < GPURMA_COLL_SCRATCH_PARTS ? c->nchannels
                                                                 : GPURMA_COLL_SCRATCH_PARTS;
    size_t parts = piece / (2 * (size_t)c->slot);
    return parts < 1 ? 1 : parts > most ? (unsigned)most : (unsigned)parts;
}
