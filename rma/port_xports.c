/*
 * port_xports.c - the port engine's transports, listed once.
 *
 * Adding a transport: its own file, one line below and the build list; a
 * transport of an optional dependency is built only with it (Makefile.am),
 * and its line is there under the same condition.
 * For each peer of a window the port engine takes the transport with the
 * highest preference (reach); ties go to the earlier one.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "port.h"

extern const gpurma_port_xport_t gpurma_port_xport_ce;     /* port_ce.c     */
extern const gpurma_port_xport_t gpurma_port_xport_memcpy; /* port_memcpy.c */
extern const gpurma_port_xport_t gpurma_port_xport_ucx;    /* port_ucx*.c   */

const gpurma_port_xport_t *const gpurma_port_xports[] = {
#ifdef HAVE_CUDA /* built only then (Makefile.am: GPURMA_CUDA_PORT_SOURCES) */
    &gpurma_port_xport_ce,
#endif
    &gpurma_port_xport_memcpy,
#ifdef HAVE_UCX /* built only then (Makefile.am: GPURMA_UCX_SOURCES) */
    &gpurma_port_xport_ucx,
#endif
};
const int gpurma_port_nxports = (int)(sizeof(gpurma_port_xports) / sizeof(gpurma_port_xports[0]));

_Static_assert(sizeof(gpurma_port_xports) / sizeof(gpurma_port_xports[0]) <= GPURMA_PORT_MAX_XPORTS,
               "raise GPURMA_PORT_MAX_XPORTS");
