/*
 * switch.h - the switch engine's host side (rma/switch/). Not installed.
 *
 * switch_engine.c: the switch as a window's engine (point-to-point
 * operations through the mem engine's mappings);
 * switch.c: the switch object (create, free, query, device handle), the
 * emulated setup (the window's own peer table) and the refusal rules;
 * switch_mc.c: the NVLink multicast setup, reached only when nothing
 * refuses it.
 */
#ifndef GPURMA_RMA_SWITCH_H
#define GPURMA_RMA_SWITCH_H

#include "rma.h"
#include "gpurma_switch.h"

struct gpurma_switch_mc;

struct gpurma_switch_s {
    uint32_t                 magic; /* GPURMA_DEV_HOST_SWITCH_LIVE while live (first member) */
    struct gpurma_win_s     *win;
    size_t                   offset, bytes;
    gpurma_switch_mode_t     mode;
    char                     reason[GPURMA_SWITCH_REASON_MAX];
    gpurma_dev_switch_t      dev;
    struct gpurma_switch_mc *mc;    /* multicast state, NULL when emulated */
    /* The window's switches (its engine_state[GPURMA_ENGINE_SWITCH], under
     * ctx->lock): a window's release releases those still there. */
    struct gpurma_switch_s  *next;
};

/* The switch engine in the engine table (switch_engine.c): forced on a
 * window, it serves the peers of this node through the mem engine's
 * mappings. */
extern const gpurma_engine_ops_t gpurma_engine_switch_ops;

/* Releases the switches still over window w (its release, after the
 * window's free passed a barrier). */
void gpurma_switch_release_win(struct gpurma_win_s *w);

/* Whether the hardware (multicast) path may be tried, by the environment
 * alone and before any driver call: GPURMA_SUCCESS, or
 * GPURMA_ERR_UNSUPPORTED with a message naming the variable that refuses
 * it (GPURMA_DISABLE_SWITCH, NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS, or
 * GPURMA_SWITCH not set). */
int gpurma_switch_refusal(void);

/* switch_mc.c. The local checks that follow the environment's (host
 * backend, device attribute, VMM-backed window memory): GPURMA_SUCCESS or
 * GPURMA_ERR_UNSUPPORTED with the reason. May keep state in sw->mc. */
int gpurma_switch_mc_check(struct gpurma_switch_s *sw);
/* Collective over the window's team, called by every member once all of
 * them passed the checks: creates the multicast object, adds every
 * member's GPU, binds the range and maps it. On failure everything is
 * undone, on every member, and the status is the same everywhere. */
int gpurma_switch_mc_setup(struct gpurma_switch_s *sw);
/* Undoes check and setup (not collective; call after a barrier). */
void gpurma_switch_mc_release(struct gpurma_switch_s *sw);

#endif
