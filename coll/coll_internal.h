/*
 * coll_internal.h - what the collectives' files share (coll_scratch.c,
 * coll_select.c, coll_register.c, coll_busy.c, algo_*.c, coll_api.c,
 * coll_stream.c, coll_kernels*.cu). Not installed.
 *
 * The files call each other one way: team.c (teams and their slots) at
 * the bottom; the per-team state above it (coll_scratch.c, algo_ce.c,
 * algo_direct.c, coll_register.c, stream_barrier.c), each in its own
 * slot, released through its own hook; coll_select.c and the launchers
 * (coll_stream.c, coll_kernels*.cu) beside them; coll_api.c on top.
 */
#ifndef GPURMA_COLL_INTERNAL_H
#define GPURMA_COLL_INTERNAL_H

#include "gpurma_coll.h"
#include "gpurma_coll_device.h"
#include "gpurma/detail/coll_direct.h"
#include "coll.h"

typedef enum {
    GPURMA_COLL_ALLREDUCE = 0, GPURMA_COLL_ALLGATHER, GPURMA_COLL_REDUCE_SCATTER,
    GPURMA_COLL_BROADCAST, GPURMA_COLL_REDUCE, GPURMA_COLL_ALLTOALL, GPURMA_COLL_ALLTOALLV,
    GPURMA_COLL_KINDS
} gpurma_coll_kind_t;

/* One call, as checked: what the run needs. */
typedef struct {
    gpurma_coll_kind_t kind;
    struct gpurma_team_s *team;
    const void *send;
    void *recv;
    size_t count;        /* elements per rank (per pair for alltoall) */
    size_t bytes;        /* count * element size                      */
    gpurma_dtype_t dtype;
    gpurma_redop_t op;
    int root;
    void *stream;
    /* alltoallv */
    const size_t *send_counts, *send_displs, *recv_counts, *recv_displs;
    size_t max_count;
    /* alltoallv zero-copy (every member agreed: coll_api.c, agree_counts):
     * where each peer's block for this rank starts in its send (elements),
     * and this rank's send extent; NULL: the scratch path. */
    const uint64_t *v_peer_displs;
    size_t v_send_bytes;
} coll_call_t;

/* The stream path (coll_stream.c): enqueues the kernel that runs the call
 * with algo on c (GPU scratch; ll16: its members' copies as mapped here);
 * UNSUPPORTED in builds without CUDA. */
int gpurma_coll_stream_run(const coll_call_t *a, const gpurma_dev_coll_t *c,
                           const gpurma_dcoll__ll16_bases_t *ll16, gpurma_coll_algo_t algo,
                           unsigned parts);

#ifdef HAVE_CUDA
/* coll_kernels.cu (its kernels: coll_kernels.h): the kernel that runs one
 * collective (kind a gpurma_coll_kind_t) enqueued on stream, and the
 * loading of every collective kernel when a team's GPU scratch window is
 * made (lazy loading would wait for kernels already spinning on the GPU). */
int gpurma_coll_launch(void *stream, const gpurma_dev_coll_t *c, unsigned parts, int kind,
                       void *recv, const void *send, size_t count, int dtype, int op, int root,
                       int algo, const gpurma_dcoll__ll16_bases_t *ll16);
int gpurma_coll_preload_kernels(void);
/* alltoallv: the four arrays (n entries each, n <= GPURMA_COLL_V_MAX_RANKS)
 * travel by value in the kernel's arguments, so the host arrays may change
 * or go once the call returns, and a captured graph keeps the call's.
 * LL16 runs in a kernel of its own (ll16: every member's window). */
int gpurma_coll_launch_v(void *stream, const gpurma_dev_coll_t *c, unsigned parts, void *recv,
                         const void *send, const size_t *send_counts, const size_t *send_displs,
                         const size_t *recv_counts, const size_t *recv_displs, size_t max_count,
                         int dtype, int algo, const gpurma_dcoll__ll16_bases_t *ll16);
#endif

/* Largest team alltoallv runs on a stream for: 4 x 256 x 8 bytes = 8 KiB of
 * kernel arguments (CUDA takes up to 32 KiB). */
#define GPURMA_COLL_V_MAX_RANKS 256

/* coll/algo_direct.c: zero-copy allreduce on registered GPU buffers. A
 * registration of GPU memory makes a window over it (collective; host
 * memory gets none: *out NULL); seq numbers the team's registrations in
 * the order every member makes them. */
typedef struct gpurma_coll_direct_reg gpurma_coll_direct_reg_t;
int gpurma_coll_direct_register(struct gpurma_team_s *team, void *buf, size_t bytes,
                                uint64_t seq, gpurma_coll_direct_reg_t **out);
void gpurma_coll_direct_release(gpurma_coll_direct_reg_t *r);
/* Folds v into the hash h (identities and fingerprints of calls). */
static inline uint64_t gpurma_coll_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* Zero-copy runs (allreduce, allgather, reduce-scatter, alltoall,
 * broadcast, reduce on a stream). _sides: the call's device kind (0: none)
 * and the bytes of send peers read and of recv peers write (0: only this
 * rank uses that side); *ropt: the recv side may be left out (NULL then);
 * *stay: this member's call cannot go zero-copy (in place), which in a
 * graph capture it still tells its peers, so that none does.
 * The caller finds every member's buffer of those sides: in registered
 * buffers (coll_register.c, gpurma_coll_direct_side) or, in a graph
 * capture, where the members say they are (coll_graphreg.c). _try with
 * them (NULL where the side needs none): 1 when it was tried (*rc its
 * status), 0 when the call takes the scratch path (the same on every
 * member: what it checks, they all see alike). */
typedef struct gpurma_coll_side {
    const void *at[GPURMA_DCOLL_DIRECT_MAX]; /* every member's buffer, as this process reaches it */
    uint64_t    id; /* the same on every member: the buffers' identity (nonzero) */
} gpurma_coll_side_t;
int gpurma_coll_direct_sides(const coll_call_t *a, size_t *sbytes, size_t *rbytes, int *ropt,
                             int *stay);
/* A registration's side at offset off; 0 when a member is not mapped here
 * by load/store (another node, a proxied engine). */
int gpurma_coll_direct_side(const gpurma_coll_direct_reg_t *g, size_t off,
                            gpurma_coll_side_t *out);
/* alltoallv pulls from the peers' registered send buffers: what this rank
 * brings to the agreement on that (s: its send's registration, os: the
 * offset in it): an identity every member must share (the registration
 * and offset), or 0 when this rank cannot take part. */
uint64_t gpurma_coll_direct_v_identity(const coll_call_t *a, const gpurma_coll_direct_reg_t *s,
                                       size_t os);
int gpurma_coll_direct_try(const coll_call_t *a, const gpurma_dev_coll_t *c, int kind,
                           const gpurma_coll_side_t *s, const gpurma_coll_side_t *r, int *rc);
/* coll/coll_graphreg.c: a zero-copy call in a graph capture on buffers
 * nobody registered: the members tell each other where their buffers are
 * and map each other's allocations for as long as the graph lives. -1:
 * not for this call (not capturing, too small ...: the same on every
 * member), then registrations decide; else as _try. _sweep: closes the
 * mappings of graphs that are gone (at every collective's start). */
int gpurma_coll_graphreg_try(const coll_call_t *a, const gpurma_dev_coll_t *c, int kind,
                             size_t sbytes, size_t rbytes, int ropt, int stay, int *rc);
void gpurma_coll_graphreg_sweep(struct gpurma_team_s *team);

#ifdef HAVE_CUDA
/* Blocks of the zero-copy kernel that GPU `device` holds at once (0:
 * unknown). */
unsigned gpurma_coll_direct_resident(int device);
/* kind: a GPURMA_DCOLL__K_* of coll_direct.h's. */
int gpurma_coll_launch_direct(void *stream, const gpurma_dev_coll_t *c, unsigned blocks,
                              const gpurma_dcoll__direct_t *d, int kind, size_t count, int dtype,
                              int op, int root);
#endif

/* coll/algo_ce.c: allgather, alltoall(v) and broadcast moved by the port
 * engine / copy engines (no SM), on the host or on a->stream. */
int gpurma_coll_ce_run(const coll_call_t *a);

/* coll/coll_register.c: the registration of team's that holds
 * [p, p + bytes) and has a window (GPU memory), and p's offset in it;
 * NULL when none does. */
const gpurma_coll_direct_reg_t *gpurma_coll_registered(struct gpurma_team_s *team, const void *p,
                                                        size_t bytes, size_t *off);

/* coll/coll_busy.c: takes team t for one call of gpurma_coll.h (what:
 * its name, for messages): INVALID_ARG when another runs on it at this
 * rank now (and the team is marked misused) or ran beside one before;
 * leave gives it back and turns the call's SUCCESS (rc) into INVALID_ARG
 * when another call came while it ran. */
int gpurma_coll_team_enter(struct gpurma_team_s *t, const char *what);
/* The flag alone, without enter's marks and messages (team_free): 1 when
 * this call took it, 0 when a call runs on the team. */
int gpurma_coll_team_claim(struct gpurma_team_s *t);
void gpurma_coll_team_unclaim(struct gpurma_team_s *t);
int gpurma_coll_team_leave(struct gpurma_team_s *t, const char *what, int rc);

/* A buffer of n bytes at p that runs past the end of the address space. */
static inline int gpurma_coll_wraps(const void *p, size_t n)
{
    return (uintptr_t)p > UINTPTR_MAX - n;
}

/* [a, a + an) and [b, b + bn) share a byte. */
static inline int gpurma_coll_overlaps(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return an && bn && x < y + bn && y < x + an;
}

/* Channels of a GPU scratch window at most (GPURMA_COLL_CHANNELS: the
 * blocks a stream collective spreads over at most). */
#define GPURMA_COLL_GPU_CHANNELS 256

/* Parts a collective is cut into: for LL16, as few as its slots allow
 * (on a GPU, gpu != 0: at least one per GPURMA_COLL_LL16_PART_BYTES), at
 * most the handle's channels; otherwise one per two data slots of the
 * piece one rank sends one peer, at most the channels and
 * GPURMA_COLL_SCRATCH_PARTS. */
#define GPURMA_COLL_SCRATCH_PARTS 8u
unsigned gpurma_coll_parts(const gpurma_dev_coll_t *c, size_t piece, gpurma_coll_algo_t algo,
                           int gpu);

/* The handle of team's scratch window in host memory (device 0) or GPU
 * memory (device 1), made collectively on the first call (coll_scratch.c). */
int gpurma_coll_scratch(struct gpurma_team_s *team, int device, gpurma_dev_coll_t *out);
/* The same, and every member's copy of it as mapped here (LL16's kernel
 * takes them by value: no table read before its first packet). */
int gpurma_coll_scratch_ll16(struct gpurma_team_s *team, int device, gpurma_dev_coll_t *out,
                             gpurma_dcoll__ll16_bases_t *bases);
/* The most members of team that share one GPU, as its GPU scratch window
 * counted them (the team's size before that window exists). */
int gpurma_coll_gpu_sharers(struct gpurma_team_s *team);

/* The algorithm for one call (coll_select.c): GPURMA_COLL_ALGO when set and
 * applicable, else the first row of the table that fits. bytes: the largest
 * piece one rank sends to one peer. */
gpurma_coll_algo_t gpurma_coll_select(gpurma_coll_kind_t kind, const gpurma_dev_coll_t *c,
                                      size_t bytes);
const char *gpurma_coll_algo_name(gpurma_coll_algo_t algo);

#endif
