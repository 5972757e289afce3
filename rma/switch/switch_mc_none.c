/*
 * switch_mc_none.c - the switch engine's hardware path in a build without
 * CUDA (the build selects it instead of switch_mc.c): windows are in host
 * memory, so there is no multicast object to bind them to.
 */
#include "switch.h"

#define NO_CUDA "switch multicast: this libgpurma was built without CUDA, so windows are in " \
                "host memory (host backend)"

int gpurma_switch_mc_check(struct gpurma_switch_s *sw)
{
    (void)sw;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, NO_CUDA);
}

int gpurma_switch_mc_setup(struct gpurma_switch_s *sw)
{
    (void)sw;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, NO_CUDA);
}

void gpurma_switch_mc_release(struct gpurma_switch_s *sw) { sw->mc = NULL; }
