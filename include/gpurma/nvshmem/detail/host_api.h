/*
 * host_api.h - what libgpurma_nvshmem exports: the host-only NVSHMEM calls
 * under their own names, and the primitives (gpurma_nvshmemi_*) the inline
 * calls of the other headers fall back to in host code. Pointers are
 * symmetric addresses as the program sees them; the library turns them
 * into heap offsets. A primitive given bad input, or one that fails, ends
 * the job through gpurma_abort with a message naming `call` (NVSHMEM's
 * calls return nothing a program could check).
 */
#ifndef GPURMA_NVSHMEM_DETAIL_HOST_API_H
#define GPURMA_NVSHMEM_DETAIL_HOST_API_H

#include "gpurma/nvshmem/detail/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------- NVSHMEM host calls */

GPURMA_API void nvshmem_init(void);
GPURMA_API int  nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t *attr);
GPURMA_API int  nvshmemx_init_thread(int requested, int *provided);
GPURMA_API int  nvshmemx_get_uniqueid(nvshmemx_uniqueid_t *uid);
GPURMA_API int  nvshmemx_set_attr_uniqueid_args(int myrank, int nranks,
                                                const nvshmemx_uniqueid_t *uid,
                                                nvshmemx_init_attr_t *attr);
GPURMA_API int  nvshmemx_init_status(void);
GPURMA_API void nvshmem_finalize(void);
GPURMA_API void nvshmem_global_exit(int status);
GPURMA_API void nvshmem_query_thread(int *provided);
GPURMA_API void nvshmem_info_get_version(int *major, int *minor);
GPURMA_API void nvshmem_info_get_name(char *name);
GPURMA_API void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch);

/* Symmetric heap: collective over the world (same calls, same order on
 * every PE), so the same offsets come out everywhere. */
GPURMA_API void *nvshmem_malloc(size_t size);
GPURMA_API void *nvshmem_calloc(size_t count, size_t size);
GPURMA_API void *nvshmem_align(size_t alignment, size_t size);
GPURMA_API void  nvshmem_free(void *ptr);
GPURMA_API void *nvshmemx_buffer_register_symmetric(void *buf, size_t size, int flags);
GPURMA_API int   nvshmemx_buffer_unregister_symmetric(void *mapped, size_t size);

/* Teams; collective over the parent. */
GPURMA_API int  nvshmem_team_split_strided(nvshmem_team_t parent, int start, int stride,
                                           int size, const nvshmem_team_config_t *config,
                                           long config_mask, nvshmem_team_t *new_team);
GPURMA_API int  nvshmem_team_split_2d(nvshmem_team_t parent, int xrange,
                                      const nvshmem_team_config_t *xaxis_config,
                                      long xaxis_mask, nvshmem_team_t *xaxis_team,
                                      const nvshmem_team_config_t *yaxis_config,
                                      long yaxis_mask, nvshmem_team_t *yaxis_team);
GPURMA_API void nvshmem_team_destroy(nvshmem_team_t team);
GPURMA_API int  nvshmem_team_get_config(nvshmem_team_t team, long config_mask,
                                        nvshmem_team_config_t *config);

/* ------------------------------------------------- primitives (internal) */

typedef void (*gpurma_nvshmemi_update_fn)(const gpurma_nvshmemi_state_t *state);
/* Each unit registers its state's updater (from a constructor); a unit
 * registered after init is updated at once. */
GPURMA_API void gpurma_nvshmemi_register(gpurma_nvshmemi_update_fn update);
GPURMA_API void gpurma_nvshmemi_unregister(gpurma_nvshmemi_update_fn update);
/* Calls update with the current state at once when the layer is
 * initialized (a module handed over after init). */
GPURMA_API void gpurma_nvshmemi_refresh(gpurma_nvshmemi_update_fn update);
/* Ends the job with "call: why" (status: a gpurma_status_t). */
GPURMA_API void gpurma_nvshmemi_fail(const char *call, int status, const char *why)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

GPURMA_API int   gpurma_nvshmemi_my_pe(void);
GPURMA_API int   gpurma_nvshmemi_n_pes(void);
GPURMA_API int   gpurma_nvshmemi_team_my_pe(nvshmem_team_t team);
GPURMA_API int   gpurma_nvshmemi_team_n_pes(nvshmem_team_t team);
GPURMA_API int   gpurma_nvshmemi_team_translate_pe(nvshmem_team_t src, int pe,
                                                   nvshmem_team_t dst);
GPURMA_API void *gpurma_nvshmemi_ptr(const void *addr, int pe);

/* nbi 0: the source may be reused (put) or the data is here (get) on return. */
GPURMA_API void gpurma_nvshmemi_put(const char *call, void *dst, const void *src, size_t bytes,
                                    int pe, int nbi);
GPURMA_API void gpurma_nvshmemi_get(const char *call, void *dst, const void *src, size_t bytes,
                                    int pe, int nbi);
GPURMA_API void gpurma_nvshmemi_put_value(const char *call, void *dst, uint64_t value,
                                          size_t bytes, int pe);
/* kind: GPURMA_DEV__ATOMIC_*, with GPURMA_NVSHMEMI_AMO_NO_FETCH when the old
 * value is not used (then 0 is returned and quiet completes the atomic: the
 * port engine waits for no reply); an 8-byte aligned symmetric word. */
#define GPURMA_NVSHMEMI_AMO_NO_FETCH 0x100
GPURMA_API uint64_t gpurma_nvshmemi_amo64(const char *call, int kind, void *addr,
                                          uint64_t value, uint64_t compare, int pe);
GPURMA_API void gpurma_nvshmemi_flush(const char *call, int pe);
GPURMA_API void gpurma_nvshmemi_fence(const char *call);
GPURMA_API void gpurma_nvshmemi_quiet(const char *call);
/* quiet first when `quiet` is set (barrier), not for sync. */
GPURMA_API void gpurma_nvshmemi_barrier(const char *call, nvshmem_team_t team, int quiet);

/* Stream-ordered forms (stream: a cudaStream_t). */
GPURMA_API void gpurma_nvshmemi_put_on_stream(const char *call, void *dst, const void *src,
                                              size_t bytes, int pe, void *stream);
GPURMA_API void gpurma_nvshmemi_get_on_stream(const char *call, void *dst, const void *src,
                                              size_t bytes, int pe, void *stream);
GPURMA_API void gpurma_nvshmemi_put_value_on_stream(const char *call, void *dst, uint64_t value,
                                                    size_t bytes, int pe, void *stream);
GPURMA_API void gpurma_nvshmemi_quiet_on_stream(const char *call, void *stream);
GPURMA_API void gpurma_nvshmemi_barrier_on_stream(const char *call, nvshmem_team_t team,
                                                  void *stream);

/* Collectives (gpurma_coll.h) on the heap's symmetric buffers: kind is a
 * GPURMA_NVSHMEMI_COLL_*, count in elements of dtype (bytes for the data
 * movers), root a team rank; stream NULL: blocking on host memory. */
enum {
    GPURMA_NVSHMEMI_COLL_ALLREDUCE = 0, GPURMA_NVSHMEMI_COLL_REDUCE_SCATTER,
    GPURMA_NVSHMEMI_COLL_BROADCAST, GPURMA_NVSHMEMI_COLL_ALLGATHER,
    GPURMA_NVSHMEMI_COLL_ALLTOALL
};
GPURMA_API int gpurma_nvshmemi_coll(const char *call, int kind, nvshmem_team_t team, void *dest,
                                    const void *source, size_t count, int dtype, int op,
                                    int root, void *stream);

#ifdef __cplusplus
}
#endif
#endif
