/*
 * graphreg_wire.h - what graph registration's members tell each other
 * (coll_graphreg.c) and the decision every member draws from the same
 * wires: pure, so that tests/unit/test_graphreg_decide.c checks it
 * without a GPU. Not installed.
 */
#ifndef GPURMA_GRAPHREG_WIRE_H
#define GPURMA_GRAPHREG_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h" /* gpurma_gpu_alloc_t */

/* One member: per side (0 send, 1 recv), its buffer's allocation and the
 * buffer's offset in it, ok 0 when it could not say (not shareable GPU
 * memory, or too short); stay: its call cannot go zero-copy at all. */
typedef struct {
    gpurma_gpu_alloc_t alloc[2];
    uint64_t off[2];
    uint32_t ok[2];
    uint32_t stay, pad;
} gr_wire_t;

/* Whether member w's side k holds need bytes where it says (the member
 * checked; this keeps a wire that disagrees from reaching a kernel). */
static inline int gr_side_fits(const gr_wire_t *w, int k, size_t need)
{
    return w->ok[k] && w->off[k] <= w->alloc[k].len && need <= w->alloc[k].len - w->off[k];
}

/* The decision from n wires: 1 when the call goes in place, with *use_s
 * and *use_r the sides it maps; 0 for the scratch path. A needed side
 * (sbytes, rbytes nonzero) must fit on every member; a reduce's recv
 * (ropt) is used only where it fits on every member, else left out. */
static inline int gr_decide(const gr_wire_t *all, int n, size_t sbytes, size_t rbytes, int ropt,
                            int *use_s, int *use_r)
{
    int s = sbytes > 0, r = rbytes > 0, go = 1;
    for (int p = 0; p < n; p++) {
        if (all[p].stay || (s && !gr_side_fits(&all[p], 0, sbytes)))
            go = 0;
        if (r && !gr_side_fits(&all[p], 1, rbytes)) {
            if (ropt)
                r = 0;
            else
                go = 0;
        }
    }
    *use_s = go && s;
    *use_r = go && r;
    return go;
}

#endif
