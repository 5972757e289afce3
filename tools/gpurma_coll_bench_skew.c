/*
 * gpurma_coll_bench_skew.c - the count matrix of gpurma-coll-bench's
 * alltoallv: the traffic of a mixture-of-experts layer, where every rank
 * routes tokens to every rank's experts and a few experts are hot.
 *
 * Rank d's popularity follows Zipf's law (weight 1 / (d + 1): rank 0 is
 * the hottest), every source scatters around it (x 0.5 .. 1.5, from a hash
 * of the pair), and one pair in eight carries nothing (no token of that
 * source chose those experts; from 4 ranks). The matrix is scaled so that the largest
 * buffer of any rank, sent or received, holds max_elems elements: the
 * hot ranks receive that much, the cold ones far less. Every rank builds
 * the same matrix, so each can tell what any peer sends it.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "gpurma_coll_bench.h"

/* A hash of the pair in [0, 1): the source's scatter. */
static double pair_hash(int s, int d)
{
    uint64_t x = (uint64_t)s * 0x9E3779B97F4A7C15ull ^ ((uint64_t)d + 1) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (double)(x >> 11) / (double)(1ull << 53);
}

static double weight(int n, int s, int d)
{
    double h = pair_hash(s, d);
    if (h < 0.125 && s != d && n >= 4) /* with fewer, a rank could have no peer at all */
        return 0;
    return (0.5 + h) / (d + 1);
}

void cb_skew_free(cb_skew_t *m)
{
    free(m->count);
    m->count = NULL;
}

int cb_skew_build(int n, size_t max_elems, cb_skew_t *m)
{
    m->n = n;
    m->count = calloc((size_t)n * n, sizeof(*m->count));
    if (!m->count)
        return 1;
    /* the heaviest row or column of the weights sets the scale */
    double heaviest = 0;
    for (int a = 0; a < n; a++) {
        double row = 0, col = 0;
        for (int b = 0; b < n; b++)
            row += weight(n, a, b), col += weight(n, b, a);
        heaviest = row > heaviest ? row : heaviest;
        heaviest = col > heaviest ? col : heaviest;
    }
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++)
            m->count[(size_t)s * n + d] = (size_t)(weight(n, s, d) / heaviest * (double)max_elems);
    return 0;
}

size_t cb_skew_send_displ(const cb_skew_t *m, int s, int d)
{
    size_t at = 0;
    for (int b = 0; b < d; b++)
        at += m->count[(size_t)s * m->n + b];
    return at;
}

size_t cb_skew_recv_displ(const cb_skew_t *m, int d, int s)
{
    size_t at = 0;
    for (int a = 0; a < s; a++)
        at += m->count[(size_t)a * m->n + d];
    return at;
}

size_t cb_skew_busiest(const cb_skew_t *m)
{
    size_t most = 0;
    for (int a = 0; a < m->n; a++) {
        size_t out = 0, in = 0;
        for (int b = 0; b < m->n; b++)
            if (a != b)
                out += m->count[(size_t)a * m->n + b], in += m->count[(size_t)b * m->n + a];
        most = out > most ? out : most;
        most = in > most ? in : most;
    }
    return most;
}
