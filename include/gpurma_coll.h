/*
 * gpurma_coll.h - collectives on a team, built on the window API.
 *
 * Every call is collective over the team: all its ranks call it with the
 * same count, dtype, op and root. Buffers are host memory when stream is
 * NULL (the call blocks until this rank's result is complete), and GPU
 * memory when stream is a cudaStream_t (the call is stream-ordered, never
 * synchronizes the host, and may be captured in a CUDA graph).
 *
 * Ranks and roots are team ranks. In place: send == recv (for allgather,
 * send is this rank's slot of recv: recv + rank * count elements). Results
 * are bitwise identical on every rank: reductions combine contributions in
 * rank order. AVG on integers truncates toward zero; MIN and MAX on floats
 * propagate NaN.
 *
 * Bad arguments (unknown dtype or op, a byte size that overflows, a root
 * out of range, NULL buffers with count > 0, buffers that overlap without
 * being the same) return GPURMA_ERR_INVALID_ARG with a message
 * (gpurma_last_error_message) and nothing is written.
 *
 * Ranks that pass one call different counts (0 included), dtypes, ops or
 * roots all fail (GPURMA_ERR_INVALID_ARG, or GPURMA_ERR_TIMEOUT for a rank
 * left waiting), never a wrong result; a count of 0 still meets the
 * other ranks. Two calls of this header on one team at once (another
 * thread; coll_register and coll_deregister included) are refused; the
 * team's calls fail from then on (README, "Thread safety").
 */
#ifndef GPURMA_COLL_API_H
#define GPURMA_COLL_API_H

#include "gpurma.h"

#ifdef __cplusplus
extern "C" {
#endif

/* recv[i] = op over ranks of send[i], count elements. */
GPURMA_API gpurma_status_t gpurma_allreduce(gpurma_team_t team, const void *send, void *recv,
                                            size_t count, gpurma_dtype_t dtype,
                                            gpurma_redop_t op, void *stream);
/* recv[r * count + i] = send of rank r [i]; count per rank. */
GPURMA_API gpurma_status_t gpurma_allgather(gpurma_team_t team, const void *send, void *recv,
                                            size_t count, gpurma_dtype_t dtype, void *stream);
/* recv[i] = op over ranks of send[rank * count + i]; count per rank. */
GPURMA_API gpurma_status_t gpurma_reduce_scatter(gpurma_team_t team, const void *send,
                                                 void *recv, size_t count, gpurma_dtype_t dtype,
                                                 gpurma_redop_t op, void *stream);
/* recv = send of root; the root's send is read, its recv written too. */
GPURMA_API gpurma_status_t gpurma_broadcast(gpurma_team_t team, const void *send, void *recv,
                                            size_t count, gpurma_dtype_t dtype, int root,
                                            void *stream);
/* The root's recv = op over ranks of send; recv is not touched elsewhere. */
GPURMA_API gpurma_status_t gpurma_reduce(gpurma_team_t team, const void *send, void *recv,
                                         size_t count, gpurma_dtype_t dtype, gpurma_redop_t op,
                                         int root, void *stream);
/* recv[r * count + i] = send of rank r [rank * count + i]; count per pair. */
GPURMA_API gpurma_status_t gpurma_alltoall(gpurma_team_t team, const void *send, void *recv,
                                           size_t count, gpurma_dtype_t dtype, void *stream);
/* Counts and displacements in elements, one per team rank. */
GPURMA_API gpurma_status_t gpurma_alltoallv(gpurma_team_t team, const void *send,
                                            const size_t *send_counts, const size_t *send_displs,
                                            void *recv, const size_t *recv_counts,
                                            const size_t *recv_displs, gpurma_dtype_t dtype,
                                            void *stream);

/* Optional: makes buf (bytes long) reachable by the team's peers without a
 * copy in later collectives on a stream (calls past what LL packets take:
 * GPURMA_COLL_DIRECT_MIN; every rank passes the same offsets of its
 * registrations).
 * Collective over the team. Calls captured into a CUDA graph need none:
 * the members map each other's buffers at capture time, for as long as
 * the graph lives (GPURMA_COLL_GRAPH_REGISTER, README). */
GPURMA_API gpurma_status_t gpurma_coll_register(gpurma_team_t team, void *buf, size_t bytes);
GPURMA_API gpurma_status_t gpurma_coll_deregister(gpurma_team_t team, void *buf);

#ifdef __cplusplus
}
#endif

#endif /* GPURMA_COLL_API_H */
