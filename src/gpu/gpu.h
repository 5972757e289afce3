/*
 * gpu.h - the GPU runtime as the core sees it. Builds without CUDA or ROCm,
 * and machines without a driver, see zero GPUs and run the host backend.
 *
 * The build selects one implementation: gpu_cuda.c over the CUDA runtime
 * (cudart, which reaches the driver itself: libgpurma never links libcuda;
 * the driver calls it needs are gpu_driver.h's table), gpu_hip.c over the
 * HIP runtime (the same source, names mapped by gpu_runtime.h), or
 * gpu_none.c, where the functions exist but report that no GPU is usable.
 * Kernels are launched through gpu_launch.h.
 *
 * Layer 2, src/gpu/: includes only src/common/ and include/. Every CUDA or
 * HIP runtime call of the layers above goes through this header.
 */
#ifndef GPURMA_GPU_H
#define GPURMA_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpurma/detail/dev_types.h"

/* Number of GPUs this process can use; 0 when none or no driver. */
int gpurma_gpu_count(void);

/* Makes `device` current for the calling thread and prepares the library's
 * own stream on it (non-blocking, so that host-initiated operations never
 * wait for user kernels on the legacy default stream). Returns a status. */
int gpurma_gpu_use(int device);

/* 1 when p is device memory (cudaMalloc) of some GPU, 0 otherwise. */
int gpurma_gpu_is_device_ptr(const void *p);

/* ------------------------------------------------------------ windows */

#define GPURMA_GPU_IPC_BYTES 64

/* What one rank publishes about its device window. Signal slots and
 * counters always live in device memory; for win_allocate they sit in the
 * same allocation as the data, after it, so one IPC handle covers both. */
typedef struct gpurma_gpu_export {
    uint8_t  data_ipc[GPURMA_GPU_IPC_BYTES]; /* allocation holding the data      */
    uint8_t  sig_ipc[GPURMA_GPU_IPC_BYTES];  /* allocation holding the signals   */
    uint64_t data_off;  /* window data, from the start of its allocation         */
    uint64_t sig_off;   /* signal slots, from the start of theirs                */
    int32_t  has_data;  /* data_ipc is meaningful (the window has bytes)         */
    int32_t  sig_in_data; /* signals share the data allocation: sig_ipc unused   */
    int32_t  device;    /* GPU ordinal of the owner                              */
    int32_t  pad;
    /* The owner process (a random token of it) and its own addresses of the
     * two allocations: a peer in the same process (several ranks of one
     * process, as nccl-tests -g 2 makes) uses these, since CUDA IPC handles
     * cannot be opened in the process that exported them. */
    uint64_t owner;
    uint64_t data_va, sig_va;
} gpurma_gpu_export_t;

/* One rank's device side of a window. */
typedef struct gpurma_gpu_win {
    int                       device;
    void                     *alloc;     /* our cudaMalloc                          */
    char                     *data;      /* this rank's data (ours or the user's)   */
    gpurma_dev_signal_slot_t *signals;   /* this rank's slots, device memory        */
    uint64_t                 *counters;  /* this rank's counters, device memory     */
    gpurma_dev_peer_t        *dev_peers; /* device copy of the peer table           */
    void                    **mapped;    /* IPC mappings to close, [2 * nranks]     */
    int                       nmapped, nranks;
} gpurma_gpu_win_t;

/* Allocates (user_data NULL) or adopts (user_data: a cudaMalloc buffer) the
 * device memory of this rank's window, with nsig zeroed signal slots and
 * ncnt counters, and fills *exp for the peers. */
int gpurma_gpu_win_open(int device, void *user_data, size_t size, uint32_t nsig, uint32_t ncnt,
                        int nranks, gpurma_gpu_win_t **out, gpurma_gpu_export_t *exp);
/* Maps a peer's window (self: our own, no IPC) into this process. */
int gpurma_gpu_win_map(gpurma_gpu_win_t *g, const gpurma_gpu_export_t *exp, int self,
                       char **data, gpurma_dev_signal_slot_t **signals);
/* Copies the peer table to device memory, where kernels read it. */
int gpurma_gpu_win_publish(gpurma_gpu_win_t *g, const gpurma_dev_peer_t *peers, int n);
/* Unmaps peers and frees what open/publish allocated. */
void gpurma_gpu_win_close(gpurma_gpu_win_t *g);

/* ------------------------------------- a user's allocation, for peers
 *
 * Collectives captured into a CUDA graph use the user's buffers in place
 * (coll/coll_graphreg.c): every member maps the allocations that hold its
 * peers' buffers, for as long as the graph lives. */

typedef struct gpurma_gpu_alloc {
    uint8_t  ipc[GPURMA_GPU_IPC_BYTES];
    uint64_t id;     /* the allocation's buffer id, unique in its process's life */
    uint64_t owner;  /* the owner process (gpurma_gpu_export_t's token)        */
    uint64_t va;     /* the allocation's start, in its owner                   */
    uint64_t len;    /* its length                                             */
    int32_t  device; /* the GPU that holds it                                   */
    int32_t  pad;
} gpurma_gpu_alloc_t;

/* Describes the cudaMalloc allocation that holds p (device's memory) for
 * peers; fails for memory CUDA IPC cannot share (host, cuMemCreate). */
int gpurma_gpu_alloc_export(int device, const void *p, gpurma_gpu_alloc_t *out);
/* Maps a peer's allocation: *base is its start here. Opening one twice
 * counts (CUDA returns the same address); every import is closed once. */
int gpurma_gpu_alloc_import(int device, const gpurma_gpu_alloc_t *a, char **base);
void gpurma_gpu_alloc_close(int device, const gpurma_gpu_alloc_t *a, char *base);
/* 1 and the graph when stream is being captured, else 0. */
int gpurma_gpu_capture_graph(void *stream, void **graph);
/* release(arg) runs once the graph and every instance of it are gone, on
 * a thread of the runtime's (it must make no GPU call). It runs also when
 * this fails: right away or later. */
int gpurma_gpu_graph_on_destroy(void *graph, void (*release)(void *), void *arg);

/* ------------------------------------------- host-initiated operations */

/* Copies n bytes between host memory and device memory mapped in the
 * context of `device` (the window's GPU), and returns once the copy has
 * completed (the library's stream on that GPU is synchronized). */
int gpurma_gpu_copy(int device, void *dst, const void *src, size_t n);
/* Signal slot update (op: GPURMA_SIGNAL_SET/ADD) by a one-thread kernel on
 * the library's stream, as a system-scope release (or atomic add); returns
 * once it is done. Data copied by earlier calls is visible first. */
int gpurma_gpu_signal(int device, gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                      uint64_t value);
/* 64-bit atomic (GPURMA_DEV__ATOMIC_*) on device memory, by a kernel. */
int gpurma_gpu_atomic(int device, uint64_t *p, int kind, uint64_t value, uint64_t compare,
                      uint64_t *old);
/* 8-byte reads and writes of device memory from the host. */
int gpurma_gpu_load_u64(int device, const uint64_t *p, uint64_t *value);
int gpurma_gpu_store_u64(int device, uint64_t *p, uint64_t value);

/* ------------------------------------------- stream-ordered operations
 *
 * The GPU side of the *_on_stream calls (rma/stream.c and
 * coll/stream_barrier.c, which have checked every argument): each enqueues
 * work on the caller's stream (a cudaStream_t, NULL for the legacy default
 * stream) and returns without waiting for it, so that the calls can be
 * captured into CUDA graphs. */

/* What a stream-ordered wait leaves behind when it times out, in pinned
 * host memory that the GPU writes and the host can read even once the
 * trap that follows has made the CUDA context unusable. */
typedef struct gpurma_gpu_fault {
    uint32_t set;        /* nonzero once a wait has timed out            */
    int32_t  kind;       /* GPURMA_GPU_FAULT_*                           */
    int32_t  rank;       /* team rank of the waiter                      */
    int32_t  peer;       /* barrier: team rank waited for; else -1      */
    uint32_t sig;        /* signal slot waited on                        */
    int32_t  cmp;        /* gpurma_cmp_t                                 */
    uint64_t value;      /* wanted                                       */
    uint64_t observed;   /* last value seen                              */
    uint64_t timeout_ns;
} gpurma_gpu_fault_t;

enum { GPURMA_GPU_FAULT_WAIT = 1, GPURMA_GPU_FAULT_BARRIER = 2 };

/* Makes `device` current and checks that the stream belongs to it. */
int gpurma_gpu_stream_begin(int device, void *stream);
/* cudaMemcpyAsync of n bytes (any direction the addresses imply). */
int gpurma_gpu_stream_copy(void *stream, void *dst, const void *src, size_t n);
/* height rows of width bytes, pitches in bytes, between a window's mapping
 * and a user's buffer (user_is_dst: a get). Narrow rows (below
 * GPURMA_GPU_STREAM_NARROW_ROW bytes) go to one kernel on `device` when
 * both sides are memory of that GPU (ranks sharing it): the copy engine
 * walks a column of doubles one 8-byte row at a time. Else
 * cudaMemcpy2DAsync (one descriptor for the copy engine, whatever the
 * number of rows). */
int gpurma_gpu_stream_copy_2d(int device, void *stream, void *dst, size_t dpitch,
                              const void *src, size_t spitch, size_t width, size_t height,
                              int user_is_dst);
#define GPURMA_GPU_STREAM_NARROW_ROW 512u
/* put_signal: one kernel (copy, then signal) when src is small and a
 * kernel on `device` can read it, else a copy and a signal kernel. */
int gpurma_gpu_stream_put_signal(int device, void *stream, char *dst, const void *src, size_t n,
                                 gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                                 uint64_t value);
/* Signal slot update after the stream's earlier work (system-scope fence). */
int gpurma_gpu_stream_signal(void *stream, gpurma_dev_signal_slot_t *slot, uint32_t origin,
                             int op, uint64_t value);
/* One store of 1, 2, 4 or 8 bytes at dst, a peer's mapping (value taken now). */
int gpurma_gpu_stream_put_value(void *stream, char *dst, uint64_t value, size_t bytes);
/* Waits on the GPU for this rank's slot sig of w; times out with a trap. */
int gpurma_gpu_stream_wait(void *stream, const gpurma_dev_win_t *w, uint32_t sig, int cmp,
                           uint64_t value);
/* 8-byte store, queued behind the stream's work and fenced after it, into
 * memory the device maps (the device's, or mapped host memory). */
int gpurma_gpu_stream_store_u64(void *stream, uint64_t *p, uint64_t value);
/* System-scope fence after the stream's earlier work. */
int gpurma_gpu_stream_fence(void *stream);
/* Dissemination barrier over the members of w (a window made for it: one
 * signal per round, counter 0 holds this rank's barrier epoch). */
int gpurma_gpu_stream_barrier(void *stream, const gpurma_dev_win_t *w);
/* Setup work (allocations, synchronous copies) that may happen while the
 * calling thread captures a stream: relaxed capture mode lets it run
 * outside the graph. Restore with the value saved. */
void gpurma_gpu_capture_relax(int *saved);
void gpurma_gpu_capture_restore(int saved);

/* Kernels of gpu_kernels.cu (gpu_kernels_hip.hip in a HIP build), for the
 * shim's own runtime file; the stream is the runtime's stream. */
int gpurma_gpu_preload_kernels(void);
int gpurma_gpu_launch_signal(void *stream, gpurma_dev_signal_slot_t *slot, uint32_t origin,
                             int op, uint64_t value);
int gpurma_gpu_launch_atomic(void *stream, uint64_t *p, int kind, uint64_t value,
                             uint64_t compare, uint64_t *old_out);
int gpurma_gpu_launch_put_signal(void *stream, char *dst, const void *src, size_t n,
                                 gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                                 uint64_t value);
int gpurma_gpu_launch_put_value(void *stream, char *dst, uint64_t value, size_t bytes);
int gpurma_gpu_launch_copy_2d(void *stream, char *dst, size_t dpitch, const char *src,
                              size_t spitch, size_t width, size_t height);
int gpurma_gpu_launch_wait(void *stream, const gpurma_dev_win_t *w, uint32_t sig, int cmp,
                           uint64_t value, gpurma_gpu_fault_t *fault);
int gpurma_gpu_launch_store_u64(void *stream, uint64_t *p, uint64_t value);
int gpurma_gpu_launch_fence(void *stream);
int gpurma_gpu_launch_add_u64(void *stream, uint64_t *p, uint64_t value);
/* LL packets of psize (8 or 16) bytes built from bytes of src, at dst. */
int gpurma_gpu_launch_packets(void *stream, uint64_t *dst, const void *src, size_t bytes,
                              uint32_t flag, int psize);
int gpurma_gpu_launch_barrier(void *stream, const gpurma_dev_win_t *w, gpurma_gpu_fault_t *fault);
/* Largest put_signal_on_stream done by one kernel (one block copies). */
#define GPURMA_GPU_STREAM_FUSED_MAX (64u << 10)

/* ---------------------------------------------------------------------
 * For the port engine: its FIFOs and its copy engine transport. */

/* Pinned host memory mapped for every GPU (the FIFOs kernels push into);
 * NULL on failure or without CUDA. */
void *gpurma_gpu_host_alloc(size_t len);
void gpurma_gpu_host_free(void *p);
/* A zeroed 64-bit word in the current GPU's memory, or NULL. */
uint64_t *gpurma_gpu_alloc_u64(void);
void gpurma_gpu_free(void *p);
/* A non-blocking stream of device's, which becomes current in the thread. */
int gpurma_gpu_stream_create(int device, void **stream);
void gpurma_gpu_stream_destroy(void *stream);
int gpurma_gpu_stream_sync(void *stream);
/* An asynchronous copy on stream; between two GPUs a peer copy, which
 * takes the copy engines' direct path. */
int gpurma_gpu_stream_copy_peer(void *stream, void *dst, const void *src, size_t n);
/* An asynchronous copy of depth planes of height rows of width bytes (a
 * 2-D copy when depth is 1); pitches in bytes, between rows ([0]) and
 * planes ([1]) of each side. One cudaMemcpy3D(Peer)Async where the plane
 * pitches are whole numbers of rows, else one 2-D copy per plane. */
int gpurma_gpu_stream_copy_3d(void *stream, void *dst, const size_t dst_pitch[2], const void *src,
                              const size_t src_pitch[2], size_t width, size_t height,
                              size_t depth);
/* device's PCI address ("0000:3b:00.0", lower case); nonzero if unknown. */
int gpurma_gpu_pci_bus_id(int device, char *buf, size_t len);

#endif
