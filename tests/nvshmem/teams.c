/*
 * teams.c - team_split_strided (even PEs, a single PE, every third from 1),
 * team_split_2d, translate_pe, node and shared teams, a ring shift and a
 * barrier inside each team, and destroy; a split over a sub-team, where
 * PEs outside it make no call, must still agree with the world.
 */
#include "nvtest.h"

static int me, npes;

/* Inside team t: each member puts its world PE into the next member's slot,
 * barriers on the team, and checks what the previous member sent. */
static void ring_in_team(nvshmem_team_t t, int *slot, const char *what)
{
    int r = nvshmem_team_my_pe(t), n = nvshmem_team_n_pes(t);
    NV_ASSERT(r >= 0 && r < n, "%s: team_my_pe %d of %d", what, r, n);
    int next_world = nvshmem_team_translate_pe(t, (r + 1) % n, NVSHMEM_TEAM_WORLD);
    int prev_world = nvshmem_team_translate_pe(t, (r + n - 1) % n, NVSHMEM_TEAM_WORLD);
    NV_ASSERT(next_world >= 0 && prev_world >= 0, "%s: translate_pe", what);
    NV_ASSERT(nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, me, t) == r,
              "%s: translate of myself", what);
    *slot = -1;
    nvshmem_team_sync(t);
    nvshmem_int_p(slot, me + 1000, next_world);
    nvshmem_barrier(t);
    NV_ASSERT(*slot == prev_world + 1000, "%s: got %d from the previous member, want %d", what,
              *slot, prev_world + 1000);
    nvshmem_team_sync(t);
}

int main(void)
{
    nv_init("teams");
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    int *slot = (int *)nvshmem_malloc(sizeof(int));

    NV_ASSERT(nvshmem_team_n_pes(NVSHMEM_TEAM_WORLD) == npes, "world size");
    int node_n = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE);
    NV_ASSERT(node_n >= 1 && node_n <= npes, "node team size %d", node_n);
    NV_ASSERT(nvshmem_team_n_pes(NVSHMEM_TEAM_SHARED) == node_n, "shared == node");
    ring_in_team(NVSHMEM_TEAM_WORLD, slot, "world");
    ring_in_team(NVSHMEMX_TEAM_NODE, slot, "node");
    NV_ASSERT(nvshmem_team_my_pe(NVSHMEM_TEAM_INVALID) == -1, "team_my_pe(INVALID)");

    for (int round = 0; round < 3; round++) { /* splits and destroys, slots reused */
        nvshmem_team_t even, third, single;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even);
        NV_ASSERT((even != NVSHMEM_TEAM_INVALID) == (me % 2 == 0), "even team membership");
        if (even != NVSHMEM_TEAM_INVALID) {
            NV_ASSERT(nvshmem_team_my_pe(even) == me / 2, "even team rank");
            ring_in_team(even, slot, "even");
            /* a split of the sub-team: every other even PE */
            nvshmem_team_t quarter;
            int en = nvshmem_team_n_pes(even);
            nvshmem_team_split_strided(even, 0, 2, (en + 1) / 2, NULL, 0, &quarter);
            NV_ASSERT((quarter != NVSHMEM_TEAM_INVALID) == (me % 4 == 0), "quarter membership");
            if (quarter != NVSHMEM_TEAM_INVALID) {
                ring_in_team(quarter, slot, "quarter");
                nvshmem_team_destroy(quarter);
            }
            nvshmem_team_destroy(even);
        }
        nvshmem_barrier_all();
        int tn = npes > 1 ? (npes - 2) / 3 + 1 : 0;
        if (npes > 1) {
            nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 1, 3, tn, NULL, 0, &third);
            int member = me >= 1 && (me - 1) % 3 == 0;
            NV_ASSERT((third != NVSHMEM_TEAM_INVALID) == member, "every third from 1");
            if (member) {
                ring_in_team(third, slot, "third");
                nvshmem_team_destroy(third);
            }
        }
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, npes - 1, 1, 1, NULL, 0, &single);
        NV_ASSERT((single != NVSHMEM_TEAM_INVALID) == (me == npes - 1), "single-PE team");
        if (single != NVSHMEM_TEAM_INVALID) {
            ring_in_team(single, slot, "single");
            nvshmem_team_destroy(single);
        }
        nvshmem_barrier_all();
    }

    /* 2-D: rows of xrange PEs and the columns across them */
    int xrange = npes >= 4 ? 2 : 1;
    nvshmem_team_t row, col;
    nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, xrange, NULL, 0, &row, NULL, 0, &col);
    NV_ASSERT(row != NVSHMEM_TEAM_INVALID && col != NVSHMEM_TEAM_INVALID, "2d teams");
    NV_ASSERT(nvshmem_team_my_pe(row) == me % xrange, "row rank %d", nvshmem_team_my_pe(row));
    NV_ASSERT(nvshmem_team_my_pe(col) == me / xrange, "column rank %d", nvshmem_team_my_pe(col));
    ring_in_team(row, slot, "row");
    ring_in_team(col, slot, "column");
    nvshmem_team_destroy(row);
    nvshmem_team_destroy(col);
    nvshmem_free(slot);
    nv_finish();
    return 0;
}
