/*
 * port_ucx_base.c - what every part of the UCX transport shares: where its
 * state lives (per port context and per window), its error mapping, and
 * the table of requests in flight that local completion waits for. The
 * execution (port_ucx.c), the active messages (port_ucx_am.c) and the
 * wire-up (port_ucx_wire.c) sit on this file; it calls none of them.
 */
#include <stdlib.h>
#include <string.h>

#include "port_ucx.h"

/* This transport's place in the port engine's list: where its state is
 * kept per context (port->xstate) and per window (xwin). */
int gpurma_ucx_slot(void)
{
    static int slot = -1;
    if (slot < 0) /* by name: this file is below the transport's entry */
        for (int i = 0; i < gpurma_port_nxports; i++)
            if (!strcmp(gpurma_port_xports[i]->name, GPURMA_UCX_XPORT_NAME))
                slot = i;
    return slot;
}

/* The context's UCX, or NULL: window creation opens it in an application
 * thread while the proxy thread is already running. */
struct gpurma_port_ucx *gpurma_ucx_of(const gpurma_port_t *port)
{
    return (struct gpurma_port_ucx *)__atomic_load_n(&port->xstate[gpurma_ucx_slot()],
                                                     __ATOMIC_ACQUIRE);
}

struct gpurma_port_ucx_win *gpurma_ucx_win(const struct gpurma_win_s *w)
{
    gpurma_port_win_t *pw = gpurma_port_win(w);
    return pw ? (struct gpurma_port_ucx_win *)pw->xwin[gpurma_ucx_slot()] : NULL;
}

int gpurma_ucx_error(ucs_status_t st, const char *what)
{
    return gpurma_set_error(st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
                                    st == UCS_ERR_UNREACHABLE
                                ? GPURMA_ERR_PEER_FAILED
                                : GPURMA_ERR_TRANSPORT,
                            "UCX %s: %s", what, ucs_status_string(st));
}

/* Keeps a request until wait_local; reports immediate failures. */
int gpurma_ucx_track(struct gpurma_port_ucx *u, ucs_status_ptr_t req, const char *what)
{
    if (u->stuck && UCS_PTR_IS_PTR(req)) {
        ucp_request_free(req); /* released by UCX when it completes */
        return gpurma_set_error(GPURMA_ERR_TIMEOUT,
                                "UCX %s: earlier requests of this rank never completed (timeout); "
                                "its UCX sends no more", what);
    }
    if (req == NULL)
        return GPURMA_SUCCESS;
    if (UCS_PTR_IS_ERR(req))
        return gpurma_ucx_error(UCS_PTR_STATUS(req), what);
    if (u->npending == u->cap) {
        int cap = u->cap ? 2 * u->cap : 256;
        void **p = realloc(u->pending, (size_t)cap * sizeof(void *));
        if (!p) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS)
                ucp_worker_progress(u->worker);
            ucp_request_free(req);
            return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "UCX: out of memory");
        }
        u->pending = p;
        u->cap = cap;
    }
    u->pending[u->npending++] = req;
    return GPURMA_SUCCESS;
}

ucp_ep_h gpurma_ucx_ep_of(gpurma_port_t *port, struct gpurma_win_s *w, int peer)
{
    return gpurma_ucx_of(port)->eps[w->team->world_ranks[peer]];
}
