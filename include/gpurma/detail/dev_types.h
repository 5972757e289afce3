/*
 * dev_types.h - by-value device handles shared by the library and kernels.
 * Not ABI: the library fills them, users only pass them around.
 */
#ifndef GPURMA_DETAIL_DEV_TYPES_H
#define GPURMA_DETAIL_DEV_TYPES_H

#include <stdint.h>

#define GPURMA_DEV_WIN_MAGIC 0x67726d61u /* "grma" */
#define GPURMA_DEV_MAX_PORTS 4           /* proxy contexts a window spreads over */

/* Host backend: dev.host_win points to the library's window struct, whose
 * first member is a uint32_t that equals GPURMA_DEV_HOST_WIN_LIVE while the
 * window is live and anything else once it is freed (or the context
 * finalized). The library never releases that struct's memory (a
 * tombstone), so a kept handle can always read it: every device operation
 * compiled as plain C has the library check it first
 * (gpurma_dev_host_win_state: the pointer is looked up in the handle
 * registry before it is read, so a forged one is refused) and returns
 * GPURMA_ERR_FREED instead of touching the freed peer table, signals or
 * counters. GPU code never reads it (a host pointer). */
#define GPURMA_DEV_HOST_WIN_LIVE 0x57494e44u /* "WIND" */

/* One signal slot: the value, and the rank that last wrote it (for timeout
 * messages). 16 bytes, so a slot never straddles a cache line. */
typedef struct gpurma_dev_signal_slot {
    uint64_t value;
    uint32_t last_origin;
    uint32_t reserved;
} gpurma_dev_signal_slot_t;

/* How the executing processor reaches a peer's window. */
typedef enum {
    GPURMA_DEV_PATH_LOADSTORE = 0, /* base/signals are mapped here          */
    GPURMA_DEV_PATH_HOSTCALL  = 1, /* host backend: library call (CMA copy) */
    GPURMA_DEV_PATH_FIFO      = 2, /* port engine: descriptor to a proxy    */
    GPURMA_DEV_PATH_NONE      = 3  /* not reachable from this processor     */
} gpurma_dev_path_t;

typedef struct gpurma_dev_peer {
    char                     *base;    /* peer window data, mapped; or NULL  */
    gpurma_dev_signal_slot_t *signals; /* peer signal slots, mapped; or NULL */
    uint64_t                  size;    /* bytes in the peer's window         */
    int32_t                   engine;  /* gpurma_engine_t                    */
    int16_t                   path;    /* gpurma_dev_path_t                  */
    int16_t                   port;    /* FIFO path: which proxy context     */
} gpurma_dev_peer_t;

/* 32 bytes: kernels load an entry with two 16-byte loads. */
#if defined(__cplusplus)
static_assert(sizeof(gpurma_dev_peer_t) == 32, "peer entry must stay 32 bytes");
#else
_Static_assert(sizeof(gpurma_dev_peer_t) == 32, "peer entry must stay 32 bytes");
#endif

typedef struct gpurma_dev_win {
    const gpurma_dev_peer_t  *peers;     /* [size], readable where the code runs */
    gpurma_dev_signal_slot_t *signals;   /* this rank's slots                    */
    uint64_t                 *counters;  /* this rank's local-completion counters */
    /* Port engine: the FIFOs of the window's proxy contexts, and the
     * window's id at each; nports is 0 when no peer uses the port engine. */
    void                     *ports[GPURMA_DEV_MAX_PORTS];
    uint32_t                  port_win_ids[GPURMA_DEV_MAX_PORTS];
    uint32_t                  nports;
    void                     *host_win;  /* the gpurma_win_t; see HOST_WIN_LIVE */
    uint64_t                  timeout_ns;
    int32_t                   rank, size; /* in the window's team                */
    uint32_t                  num_signals, num_counters;
    uint32_t                  magic;
} gpurma_dev_win_t;

/* One peer of a window, by value (gpurma_dev_win_chan): what every
 * operation to that peer needs, loaded once, so that a kernel builds it
 * before its loop and each operation in the loop reads registers only. A
 * channel made for a bad peer or handle has magic 0 and the reason in
 * status; every operation on it returns that status and touches nothing. */
#define GPURMA_DEV_CHAN_MAGIC 0x6368616eu /* "chan" */

typedef struct gpurma_dev_chan {
    gpurma_dev_peer_t pe;          /* the peer's entry of the window's table      */
    void             *fifo;        /* FIFO path: the proxy context's FIFO         */
    uint64_t         *counters;    /* this rank's local-completion counters       */
    void             *host_win;    /* the gpurma_win_t; see HOST_WIN_LIVE         */
    uint64_t          timeout_ns;  /* waits of the operations                     */
    uint32_t          port_win_id; /* FIFO path: the window's id at that context  */
    int32_t           rank, peer;  /* origin and target, in the window's team     */
    uint32_t          num_signals, num_counters;
    int32_t           status;      /* GPURMA_SUCCESS, or why the channel is unusable */
    uint32_t          magic;
} gpurma_dev_chan_t;

#endif
