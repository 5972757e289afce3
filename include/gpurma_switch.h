/*
 * gpurma_switch.h - the switch engine: reductions and broadcasts over a
 * range of a window, the same offset in every member of the window's team.
 *
 * A switch object covers [offset, offset + bytes) of every member's window.
 * On the device (kernels, or CPU threads on the host backend):
 *   gpurma_dev_switch_reduce    every member's elements at one offset,
 *                               combined (SUM, MIN, MAX), into local memory
 *   gpurma_dev_switch_broadcast elements stored into every member's range
 * for f16, bf16, f32, f64 and 8-, 32- and 64-bit integers, at thread
 * (plain), cooperative (_coop), warp and block scope.
 *
 * Two implementations behind the same calls:
 *   emulated  loads from every member and a local combine, in rank order
 *             (bitwise the same result on every member); stores to every
 *             member. Works wherever every member is reachable by load and
 *             store (host backend on one node, GPU windows on one node).
 *   multicast NVLink SHARP (multimem.ld_reduce / multimem.st on a CUDA
 *             multicast object). Opt-in only (GPURMA_SWITCH=1) and refused
 *             when GPURMA_DISABLE_SWITCH=1, NCCL_NVLS_ENABLE=0 or
 *             NVSHMEM_DISABLE_NVLS is set, on the host backend, when the
 *             GPU reports no multicast support, or when the window memory
 *             is not VMM-backed (windows are cudaMalloc'd in this version,
 *             so today it is always refused). gpurma_switch_query says which
 *             one an object uses and why.
 *
 * Forced on a window (GPURMA_ENGINE=switch, or the window's engine
 * parameter), the switch is also the window's engine for point-to-point
 * calls to the members on this node: they go through the same mappings as
 * the mem engine's (multicast brings nothing to one peer).
 *
 * Data written with ordinary puts or stores is seen by a reduce after the
 * usual synchronization (a barrier, or a signal); a broadcast is seen by
 * the members after it (gpurma_barrier on the host, or a fence and signal).
 */
#ifndef GPURMA_SWITCH_H
#define GPURMA_SWITCH_H

#include "gpurma.h"
#include "gpurma_device.h"
#include "gpurma/detail/dev_switch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpurma_switch_s *gpurma_switch_t;

typedef enum {
    GPURMA_SWITCH_EMULATED  = 0, /* loads and stores through the peers' mappings */
    GPURMA_SWITCH_MULTICAST = 1  /* NVLink multicast                             */
} gpurma_switch_mode_t;

/* What gpurma_switch_create may use. */
typedef enum {
    GPURMA_SWITCH_REQUEST_AUTO      = 0, /* multicast when allowed and possible, else emulated */
    GPURMA_SWITCH_REQUEST_EMULATED  = 1, /* never multicast                                    */
    GPURMA_SWITCH_REQUEST_MULTICAST = 2  /* multicast or GPURMA_ERR_UNSUPPORTED                */
} gpurma_switch_request_t;

enum { GPURMA_SWITCH_FIELD_REQUEST = 1u << 0 };

typedef struct {
    uint64_t                field_mask; /* GPURMA_SWITCH_FIELD_* that are set */
    gpurma_switch_request_t request;    /* default AUTO                       */
} gpurma_switch_params_t;

#define GPURMA_SWITCH_REASON_MAX 256

typedef struct {
    gpurma_switch_mode_t mode;
    int    rank, size;     /* this member, and the members (the window's team) */
    size_t offset, bytes;  /* the range in every member's window               */
    /* Emulated: why multicast is not used (names the variable or check that
     * refused it); multicast: empty. */
    char   reason[GPURMA_SWITCH_REASON_MAX];
} gpurma_switch_info_t;

/* Collective over the window's team. [offset, offset + bytes) must lie in
 * every member's window, offset a multiple of 16; every member must be
 * reachable by load/store (members on another node, or served by the port
 * engine: GPURMA_ERR_UNSUPPORTED). p may be NULL (AUTO). */
GPURMA_API gpurma_status_t gpurma_switch_create(gpurma_win_t win, size_t offset, size_t bytes,
                                                const gpurma_switch_params_t *p,
                                                gpurma_switch_t *sw);
/* Collective; sets *sw to NULL. Free switches before their window. */
GPURMA_API gpurma_status_t gpurma_switch_free(gpurma_switch_t *sw);
GPURMA_API gpurma_status_t gpurma_switch_query(gpurma_switch_t sw, gpurma_switch_info_t *info);
/* The by-value handle for kernels (or CPU threads on the host backend). */
GPURMA_API gpurma_status_t gpurma_switch_device(gpurma_switch_t sw, gpurma_dev_switch_t *out);
/* Whether reduce accepts dtype with op: GPURMA_SUCCESS, GPURMA_ERR_UNSUPPORTED
 * (PROD, AVG) or GPURMA_ERR_INVALID_ARG (unknown type or operator); the
 * message says which. Not collective; needs no switch. */
GPURMA_API gpurma_status_t gpurma_switch_op_supported(gpurma_dtype_t dtype, gpurma_redop_t op);

#ifdef __cplusplus
}
#endif

#endif /* GPURMA_SWITCH_H */
