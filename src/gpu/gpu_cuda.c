/*
 * gpu_cuda.c - the CUDA runtime behind the core: discovery, device
 * selection, device memory of windows with CUDA IPC between the node's
 * processes, and the copies and small kernels of host-initiated operations
 * on them. Built with CUDA only (gpu_none.c otherwise); on a machine
 * without a driver no GPU is seen and the host backend runs.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "checked.h"
#include "gpu.h"
#include "gpurma_internal.h"

#include "gpu_runtime.h"

#define GPURMA_MAX_GPUS 64

/* Where stream-ordered waits report a timeout (gpu.h): pinned host
 * memory, mapped for the GPU; allocated when a GPU is selected. */
static gpurma_gpu_fault_t *fault_host, *fault_dev;

static const char *const cmp_text[] = {"==", "!=", ">", ">=", "<", "<="};

/* The timeout a stream-ordered wait trapped on, if any: a CUDA error that
 * follows it (unspecified launch failure) is explained by it. */
static void fault_text(char *buf, size_t len)
{
    buf[0] = '\0';
    volatile gpurma_gpu_fault_t *f = fault_host;
    if (!f || !f->set)
        return;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    unsigned long long ms = (unsigned long long)(f->timeout_ns / 1000000);
    if (f->kind == GPURMA_GPU_FAULT_BARRIER)
        snprintf(buf, len,
                 "; a stream-ordered barrier timed out on the GPU after %llu ms (team rank %d "
                 "waited for team rank %d, round %u) and stopped its kernel",
                 ms, (int)f->rank, (int)f->peer, (unsigned)f->sig);
    else
        snprintf(buf, len,
                 "; wait_until_on_stream(signal %u %s %llu) of team rank %d timed out on the "
                 "GPU after %llu ms (value %llu) and stopped its kernel",
                 (unsigned)f->sig, f->cmp >= 0 && f->cmp <= 5 ? cmp_text[f->cmp] : "?",
                 (unsigned long long)f->value, (int)f->rank, ms,
                 (unsigned long long)f->observed);
}

/* Reports e as the library's error. The runtime's pending error goes: the
 * caller has it now, and a later launch's check (cudaGetLastError) must
 * not take it for its own (a failed IPC export before a fallback path). */
static int cuda_error(cudaError_t e, const char *what)
{
    (void)cudaGetLastError();
    char tail[256];
    fault_text(tail, sizeof(tail));
    return gpurma_set_error(GPURMA_ERR_GPU, "%s: %s (%s)%s", what, cudaGetErrorString(e),
                            cudaGetErrorName(e), tail);
}

int gpurma_gpu_count(void)
{
    int n = 0;
    /* No driver, no device, or a driver older than the runtime: all mean
     * "no GPU" here, and the host backend takes over. */
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky-free error state */
        return 0;
    }
    return n;
}

int gpurma_gpu_is_device_ptr(const void *p)
{
    struct cudaPointerAttributes a;
    if (!p)
        return 0;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return GPURMA_GPU_PTR_TYPE(a) == cudaMemoryTypeDevice;
}

/* One non-blocking stream per device for the library's own work, created
 * on first use; it lives as long as the process. */
static pthread_mutex_t stream_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t streams[GPURMA_MAX_GPUS];

/* Result of the atomic kernel: pinned host memory, written by the GPU. */
static pthread_mutex_t atomic_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *atomic_result;

static int set_device(int device)
{
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == device)
        return GPURMA_SUCCESS;
    cudaError_t e = cudaSetDevice(device);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "cudaSetDevice");
}

/* Makes device current and gives the library's stream on it. */
static int device_stream(int device, cudaStream_t *out)
{
    if (device < 0 || device >= GPURMA_MAX_GPUS)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "GPU %d: out of range", device);
    int rc = set_device(device);
    if (rc)
        return rc;
    pthread_mutex_lock(&stream_lock);
    if (!streams[device]) {
        cudaError_t e = cudaStreamCreateWithFlags(&streams[device], cudaStreamNonBlocking);
        if (e != cudaSuccess) {
            streams[device] = NULL;
            rc = cuda_error(e, "cudaStreamCreateWithFlags");
        }
    }
    *out = streams[device];
    pthread_mutex_unlock(&stream_lock);
    return rc;
}

static int alloc_fault_record(void)
{
    int rc = GPURMA_SUCCESS;
    pthread_mutex_lock(&stream_lock);
    if (!fault_host) {
        gpurma_gpu_fault_t *h = NULL;
        void *d = NULL;
        cudaError_t e = cudaHostAlloc((void **)&h, sizeof(*h),
                                      cudaHostAllocPortable | cudaHostAllocMapped);
        if (e == cudaSuccess) {
            memset(h, 0, sizeof(*h));
            e = cudaHostGetDevicePointer(&d, h, 0);
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                d = h; /* unified addressing: the host address works too */
            }
            fault_dev = d;
            fault_host = h;
        } else {
            rc = cuda_error(e, "cudaHostAlloc of the stream fault record");
        }
    }
    pthread_mutex_unlock(&stream_lock);
    return rc;
}

int gpurma_gpu_use(int device)
{
    cudaStream_t s;
    int rc = device_stream(device, &s);
    if (!rc)
        rc = gpurma_gpu_preload_kernels();
    if (!rc)
        rc = alloc_fault_record();
    return rc;
}

static int sync_stream(cudaStream_t s, const char *what)
{
    cudaError_t e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, what);
}

int gpurma_gpu_copy(int device, void *dst, const void *src, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    /* Always the window's GPU: peer memory is mapped in its context only. */
    cudaStream_t s;
    int rc = device_stream(device, &s);
    if (rc)
        return rc;
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
    if (e != cudaSuccess)
        return cuda_error(e, "cudaMemcpyAsync");
    return sync_stream(s, "copy to or from device memory");
}

int gpurma_gpu_load_u64(int device, const uint64_t *p, uint64_t *value)
{
    return gpurma_gpu_copy(device, value, p, sizeof(*value));
}

int gpurma_gpu_store_u64(int device, uint64_t *p, uint64_t value)
{
    return gpurma_gpu_copy(device, p, &value, sizeof(value));
}

int gpurma_gpu_signal(int device, gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                      uint64_t value)
{
    cudaStream_t s;
    int rc = device_stream(device, &s);
    if (!rc)
        rc = gpurma_gpu_launch_signal(s, slot, origin, op, value);
    return rc ? rc : sync_stream(s, "signal kernel");
}

int gpurma_gpu_atomic(int device, uint64_t *p, int kind, uint64_t value, uint64_t compare,
                      uint64_t *old)
{
    cudaStream_t s;
    int rc = device_stream(device, &s);
    if (rc)
        return rc;
    pthread_mutex_lock(&atomic_lock);
    if (!atomic_result) {
        cudaError_t e = cudaHostAlloc((void **)&atomic_result, sizeof(uint64_t),
                                      cudaHostAllocPortable | cudaHostAllocMapped);
        if (e != cudaSuccess) {
            atomic_result = NULL;
            rc = cuda_error(e, "cudaHostAlloc");
        }
    }
    if (!rc)
        rc = gpurma_gpu_launch_atomic(s, p, kind, value, compare, atomic_result);
    if (!rc)
        rc = sync_stream(s, "atomic kernel");
    if (!rc && old)
        *old = *(volatile uint64_t *)atomic_result;
    pthread_mutex_unlock(&atomic_lock);
    return rc;
}

/* ------------------------------------------- stream-ordered operations */

int gpurma_gpu_stream_begin(int device, void *stream)
{
    (void)stream; /* checked below where the runtime can say whose it is */
    int rc = set_device(device);
    if (rc)
        return rc;
#if CUDART_VERSION >= 12080
    /* The legacy and per-thread default streams follow the current device,
     * which is now the window's; a created stream has its own. */
    cudaStream_t s = (cudaStream_t)stream;
    if (s && s != cudaStreamLegacy && s != cudaStreamPerThread) {
        enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        cudaError_t e = cudaStreamIsCapturing(s, &cs);
        if (e == cudaSuccess && cs != cudaStreamCaptureStatusNone)
            return GPURMA_SUCCESS; /* CUDA refuses the device query on a
                                    * capturing stream (and would invalidate
                                    * the capture); a stream of another GPU
                                    * fails at the launch instead */
        int sd = -1;
        if (e == cudaSuccess)
            e = cudaStreamGetDevice(s, &sd);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "stream %p: not a usable CUDA stream "
                                    "(%s)", stream, cudaGetErrorString(e));
        }
        if (sd != device)
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                    "stream %p belongs to GPU %d; the window is on GPU %d",
                                    stream, sd, device);
    }
#endif
    return GPURMA_SUCCESS;
}

int gpurma_gpu_stream_copy(void *stream, void *dst, const void *src, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, (cudaStream_t)stream);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "cudaMemcpyAsync on the stream");
}

/* The address through which a kernel on `device` reads src, or NULL when
 * only a copy can (pageable host memory, another GPU's memory). */
static const void *kernel_readable(int device, const void *src)
{
    struct cudaPointerAttributes a;
    int saved;
    gpurma_gpu_capture_relax(&saved); /* a query: see gpurma_gpu_stream_begin */
    cudaError_t e = cudaPointerGetAttributes(&a, src);
    gpurma_gpu_capture_restore(saved);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    switch (GPURMA_GPU_PTR_TYPE(a)) {
    case cudaMemoryTypeDevice:
        return a.device == device ? src : NULL;
    case cudaMemoryTypeManaged:
        return src;
    case cudaMemoryTypeHost: /* pinned: mapped unless registered without */
        return a.devicePointer;
    default:
        return NULL;
    }
}

int gpurma_gpu_stream_copy_2d(int device, void *stream, void *dst, size_t dpitch,
                              const void *src, size_t spitch, size_t width, size_t height,
                              int user_is_dst)
{
    if (!width || !height)
        return GPURMA_SUCCESS;
    if (width < GPURMA_GPU_STREAM_NARROW_ROW && height > 1) {
        /* Only within this GPU (the window's side is on it, as when ranks
         * share it): over NVLink a column's 8-byte stores took 1.9x the
         * copy engine's time (2x H100, 2026-11-26), while on one GPU the
         * kernel reached 0.94x a packed put against the engine's 0.8x. */
        const void *user = kernel_readable(device, user_is_dst ? dst : src);
        if (user && kernel_readable(device, user_is_dst ? src : dst))
            return gpurma_gpu_launch_copy_2d(stream, user_is_dst ? (char *)user : (char *)dst,
                                             dpitch, user_is_dst ? (const char *)src : user,
                                             spitch, width, height);
    }
    cudaError_t e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDefault,
                                      (cudaStream_t)stream);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "cudaMemcpy2DAsync on the stream");
}

int gpurma_gpu_stream_put_signal(int device, void *stream, char *dst, const void *src, size_t n,
                                 gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                                 uint64_t value)
{
    /* Small messages: one launch (the block copies, then one thread
     * signals), which halves the latency of copy + signal kernel. Large
     * ones go to the copy engines, which match a full grid's bandwidth
     * without taking SMs from the user's kernels. */
    if (n <= GPURMA_GPU_STREAM_FUSED_MAX) {
        const void *ksrc = n ? kernel_readable(device, src) : src;
        if (!n || ksrc)
            return gpurma_gpu_launch_put_signal(stream, dst, ksrc, n, slot, origin, op, value);
    }
    int rc = gpurma_gpu_stream_copy(stream, dst, src, n);
    return rc ? rc : gpurma_gpu_launch_signal(stream, slot, origin, op, value);
}

int gpurma_gpu_stream_signal(void *stream, gpurma_dev_signal_slot_t *slot, uint32_t origin,
                             int op, uint64_t value)
{
    return gpurma_gpu_launch_signal(stream, slot, origin, op, value);
}

int gpurma_gpu_stream_put_value(void *stream, char *dst, uint64_t value, size_t bytes)
{
    return gpurma_gpu_launch_put_value(stream, dst, value, bytes);
}

int gpurma_gpu_stream_wait(void *stream, const gpurma_dev_win_t *w, uint32_t sig, int cmp,
                           uint64_t value)
{
    return gpurma_gpu_launch_wait(stream, w, sig, cmp, value, fault_dev);
}

/* 1 while the driver's stream writes work here, 0 once it said it does
 * not support them (-1: not asked yet). */
static int stream_writes = -1;

int gpurma_gpu_stream_store_u64(void *stream, uint64_t *p, uint64_t value)
{
    /* The driver's stream write: the stream's front end stores the word
     * once the work queued before it is done, behind a fence (the default
     * flags), with no kernel to launch and schedule; a one-thread kernel
     * where the driver cannot (no entry point, or stream memory operations
     * not supported). */
    int ok = __atomic_load_n(&stream_writes, __ATOMIC_RELAXED);
    if (ok < 0) {
        ok = GPURMA_DRIVER_NEED(cuStreamWriteValue64, "stream store") == GPURMA_SUCCESS;
        __atomic_store_n(&stream_writes, ok, __ATOMIC_RELAXED);
    }
    if (ok) {
        CUresult r = gpurma_driver.cuStreamWriteValue64(
            (CUstream)stream, (CUdeviceptr)(uintptr_t)p, (cuuint64_t)value,
            CU_STREAM_WRITE_VALUE_DEFAULT);
        if (r == CUDA_SUCCESS)
            return GPURMA_SUCCESS;
        if (r != CUDA_ERROR_NOT_SUPPORTED)
            return gpurma_set_error(GPURMA_ERR_GPU, "stream write: CUDA driver error %d", (int)r);
        __atomic_store_n(&stream_writes, 0, __ATOMIC_RELAXED);
        GPURMA_INFO(GPURMA_SUB_RMA,
                    "the driver does not support stream writes; stores are kernels from now on");
    }
    return gpurma_gpu_launch_store_u64(stream, p, value);
}

int gpurma_gpu_stream_fence(void *stream) { return gpurma_gpu_launch_fence(stream); }

int gpurma_gpu_stream_barrier(void *stream, const gpurma_dev_win_t *w)
{
    return gpurma_gpu_launch_barrier(stream, w, fault_dev);
}

void gpurma_gpu_capture_relax(int *saved)
{
    enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) {
        (void)cudaGetLastError();
        m = cudaStreamCaptureModeRelaxed; /* nothing was changed */
    }
    *saved = (int)m;
}

void gpurma_gpu_capture_restore(int saved)
{
    enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)saved;
    if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess)
        (void)cudaGetLastError();
}

/* ------------------------------------------------------------ windows */

/* The IPC handle of a user's buffer names its whole allocation, so peers
 * need the buffer's offset in it. *len: the allocation's (may be NULL). */
static int allocation_range(const void *p, char **base, size_t *len, const char *who)
{
    if (GPURMA_DRIVER_NEED(cuMemGetAddressRange, who))
        return gpurma_set_error(GPURMA_ERR_GPU, "cuMemGetAddressRange is not available");
    CUdeviceptr b = 0;
    size_t n = 0;
    if (gpurma_driver.cuMemGetAddressRange(&b, &n, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "%s: %p is not inside a cudaMalloc allocation", who, p);
    *base = (char *)(uintptr_t)b;
    if (len)
        *len = n;
    return GPURMA_SUCCESS;
}

/* This process, as the windows' exports name their owner: random, so that
 * processes with the same pid in other containers of the node differ. */
static uint64_t owner_token;
static pthread_once_t owner_once = PTHREAD_ONCE_INIT;

static void make_owner_token(void)
{
    uint64_t t = 0;
    if (getrandom(&t, sizeof t, 0) != (ssize_t)sizeof t) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    }
    owner_token = t ? t : 1;
}

static uint64_t this_process(void)
{
    pthread_once(&owner_once, make_owner_token);
    return owner_token;
}

/* A kernel or copy on the current GPU reaching memory of `peer` in this
 * process needs peer access (IPC mappings turn it on by themselves). */
static int enable_peer_access(int self, int peer)
{
    if (self == peer)
        return GPURMA_SUCCESS;
    int can = 0;
    cudaError_t e = cudaDeviceCanAccessPeer(&can, self, peer);
    if (e != cudaSuccess)
        return cuda_error(e, "cudaDeviceCanAccessPeer");
    if (!can)
        return gpurma_set_error(GPURMA_ERR_GPU,
                                "GPU %d cannot access GPU %d directly (no peer access between "
                                "them), which two ranks of one process on them need",
                                self, peer);
    e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
        e = cudaSuccess;
    }
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "cudaDeviceEnablePeerAccess");
}

static int export_handle(void *alloc, uint8_t out[GPURMA_GPU_IPC_BYTES])
{
    cudaIpcMemHandle_t h;
    cudaError_t e = cudaIpcGetMemHandle(&h, alloc);
    if (e != cudaSuccess)
        return cuda_error(e, "cudaIpcGetMemHandle");
    _Static_assert(sizeof(h) == GPURMA_GPU_IPC_BYTES, "CUDA IPC handles are 64 bytes");
    memcpy(out, &h, sizeof(h));
    return GPURMA_SUCCESS;
}

int gpurma_gpu_win_open(int device, void *user_data, size_t size, uint32_t nsig, uint32_t ncnt,
                        int nranks, gpurma_gpu_win_t **out, gpurma_gpu_export_t *exp)
{
    *out = NULL;
    memset(exp, 0, sizeof(*exp));
    exp->device = device;
    int rc = set_device(device);
    if (rc)
        return rc;
    gpurma_gpu_win_t *g = calloc(1, sizeof(*g));
    if (!g)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "device window: out of memory");
    g->device = device;
    g->nranks = nranks;
    g->mapped = calloc(2 * (size_t)nranks, sizeof(void *));
    if (!g->mapped) {
        free(g);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "device window: out of memory");
    }
    /* [data (allocated windows only)][signal slots][counters], each part
     * 256-byte aligned like cudaMalloc itself. */
    size_t data_len = 0, sig_len, cnt_len, total;
    if ((!user_data && gpurma_size_round_up(size, 256, &data_len)) ||
        gpurma_size_array(nsig, sizeof(gpurma_dev_signal_slot_t), 256, &sig_len) ||
        gpurma_size_array(ncnt ? ncnt : 1, sizeof(uint64_t), 256, &cnt_len) ||
        gpurma_size_add(data_len, sig_len, &total) || gpurma_size_add(total, cnt_len, &total)) {
        rc = gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                              "device window of %zu bytes: the allocation size overflows", size);
        goto fail;
    }
    cudaError_t e = cudaMalloc(&g->alloc, total);
    if (e != cudaSuccess) {
        rc = e == cudaErrorMemoryAllocation
                 ? gpurma_set_error(GPURMA_ERR_NO_MEMORY,
                                    "cudaMalloc of %zu bytes on GPU %d: out of device memory",
                                    total, device)
                 : cuda_error(e, "cudaMalloc");
        g->alloc = NULL;
        goto fail;
    }
    /* Zeroed like the host backend's segments; slots say "never signalled".
     * The library's stream, not the legacy one, so that a user kernel still
     * running elsewhere on the device does not hold this up. */
    cudaStream_t s;
    rc = device_stream(device, &s);
    if (rc)
        goto fail;
    e = cudaMemsetAsync(g->alloc, 0, total, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        rc = cuda_error(e, "cudaMemset");
        goto fail;
    }
    g->signals = (gpurma_dev_signal_slot_t *)((char *)g->alloc + data_len);
    g->counters = (uint64_t *)((char *)g->alloc + data_len + sig_len);
    if (nsig) {
        gpurma_dev_signal_slot_t *init = calloc(nsig, sizeof(*init));
        if (!init) {
            rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "device window: out of memory");
            goto fail;
        }
        for (uint32_t i = 0; i < nsig; i++)
            init[i].last_origin = UINT32_MAX;
        e = cudaMemcpyAsync(g->signals, init, nsig * sizeof(*init), cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s);
        free(init);
        if (e != cudaSuccess) {
            rc = cuda_error(e, "cudaMemcpy");
            goto fail;
        }
    }
    rc = export_handle(g->alloc, exp->sig_ipc);
    if (rc)
        goto fail;
    exp->owner = this_process();
    exp->sig_va = (uint64_t)(uintptr_t)g->alloc;
    if (user_data) {
        char *base = NULL;
        rc = allocation_range(user_data, &base, NULL, "win_create");
        if (!rc)
            rc = export_handle(base, exp->data_ipc);
        if (rc)
            goto fail;
        g->data = user_data;
        exp->data_off = (uint64_t)((char *)user_data - base);
        exp->data_va = (uint64_t)(uintptr_t)base;
        exp->has_data = 1;
    } else {
        g->data = g->alloc;
        memcpy(exp->data_ipc, exp->sig_ipc, GPURMA_GPU_IPC_BYTES);
        exp->data_va = exp->sig_va;
        exp->has_data = 1;
        exp->sig_in_data = 1;
        exp->data_off = 0;
    }
    exp->sig_off = (uint64_t)data_len;
    *out = g;
    return GPURMA_SUCCESS;
fail:
    gpurma_gpu_win_close(g);
    return rc;
}

/* A peer's allocation (owner: its process token; owner_device: its GPU):
 * through its IPC handle, or, when the peer lives in this process, at its
 * own address (*opened 0: nothing to close later). */
static int map_allocation(int device, uint64_t owner, int owner_device,
                          const uint8_t bytes[GPURMA_GPU_IPC_BYTES], uint64_t va, char **out,
                          int *opened)
{
    *opened = 0;
    if (owner == this_process()) {
        /* The token travels to every peer: an export that claims it must
         * also name the start of a live allocation of this process. */
        char *base = NULL;
        if (allocation_range((void *)(uintptr_t)va, &base, NULL, "a peer's export") ||
            base != (char *)(uintptr_t)va)
            return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                    "a peer's window names address 0x%llx of this process, "
                                    "which starts no GPU allocation here",
                                    (unsigned long long)va);
        int rc = enable_peer_access(device, owner_device);
        if (rc)
            return rc;
        *out = base;
        return GPURMA_SUCCESS;
    }
    cudaIpcMemHandle_t h;
    memcpy(&h, bytes, sizeof(h));
    void *p = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess)
        return cuda_error(e, "cudaIpcOpenMemHandle (are the GPUs peer-capable?)");
    *opened = 1;
    *out = p;
    return GPURMA_SUCCESS;
}

static int open_handle(gpurma_gpu_win_t *g, const gpurma_gpu_export_t *exp,
                       const uint8_t bytes[GPURMA_GPU_IPC_BYTES], uint64_t va, char **out)
{
    int opened = 0;
    int rc = map_allocation(g->device, exp->owner, exp->device, bytes, va, out, &opened);
    if (!rc && opened)
        g->mapped[g->nmapped++] = *out;
    return rc;
}

int gpurma_gpu_win_map(gpurma_gpu_win_t *g, const gpurma_gpu_export_t *exp, int self,
                       char **data, gpurma_dev_signal_slot_t **signals)
{
    if (self) {
        *data = g->data;
        *signals = g->signals;
        return GPURMA_SUCCESS;
    }
    int rc = set_device(g->device);
    if (rc)
        return rc;
    char *sig_base, *data_base = NULL;
    rc = open_handle(g, exp, exp->sig_ipc, exp->sig_va, &sig_base);
    if (rc)
        return rc;
    if (exp->sig_in_data)
        data_base = sig_base;
    else if (exp->has_data && (rc = open_handle(g, exp, exp->data_ipc, exp->data_va, &data_base)))
        return rc;
    *data = data_base ? data_base + exp->data_off : NULL;
    *signals = (gpurma_dev_signal_slot_t *)(sig_base + exp->sig_off);
    return GPURMA_SUCCESS;
}

int gpurma_gpu_win_publish(gpurma_gpu_win_t *g, const gpurma_dev_peer_t *peers, int n)
{
    int rc = set_device(g->device);
    if (rc)
        return rc;
    cudaError_t e = cudaMalloc((void **)&g->dev_peers, (size_t)n * sizeof(*peers));
    if (e != cudaSuccess) {
        g->dev_peers = NULL;
        return cuda_error(e, "cudaMalloc of the peer table");
    }
    return gpurma_gpu_copy(g->device, g->dev_peers, peers, (size_t)n * sizeof(*peers));
}

void gpurma_gpu_win_close(gpurma_gpu_win_t *g)
{
    if (!g)
        return;
    set_device(g->device);
    /* Kernels the user left running on this window would fault below; the
     * caller has passed a barrier, so none of ours are. */
    for (int i = 0; i < g->nmapped; i++)
        cudaIpcCloseMemHandle(g->mapped[i]);
    if (g->dev_peers)
        cudaFree(g->dev_peers);
    if (g->alloc)
        cudaFree(g->alloc);
    (void)cudaGetLastError();
    free(g->mapped);
    free(g);
}


/* ------------------------------------- a user's allocation, for peers */

int gpurma_gpu_alloc_export(int device, const void *p, gpurma_gpu_alloc_t *out)
{
    memset(out, 0, sizeof(*out));
    int rc = set_device(device);
    char *base = NULL;
    size_t len = 0;
    if (!rc)
        rc = allocation_range(p, &base, &len, "graph registration");
    if (rc)
        return rc;
#ifndef GPURMA_GPU_HIP
    /* The buffer id, not the address: an allocation freed and another made
     * at the same address must not meet the first one's mappings. */
    unsigned long long id = 0;
    if ((rc = GPURMA_DRIVER_NEED(cuPointerGetAttribute, "graph registration")))
        return rc;
    if (gpurma_driver.cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                            (CUdeviceptr)(uintptr_t)base) != CUDA_SUCCESS || !id)
        return gpurma_set_error(GPURMA_ERR_GPU, "graph registration: %p has no buffer id", p);
    out->id = id;
#else
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "graph registration: not in a HIP build");
#endif
    rc = export_handle(base, out->ipc); /* fails for cuMemCreate memory */
    if (rc)
        return rc;
    /* the GPU that holds it, which a peer in this process needs access to */
    struct cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, base);
    if (e != cudaSuccess)
        return cuda_error(e, "cudaPointerGetAttributes");
    out->owner = this_process();
    out->va = (uint64_t)(uintptr_t)base;
    out->len = (uint64_t)len;
    out->device = at.device;
    return GPURMA_SUCCESS;
}

int gpurma_gpu_alloc_import(int device, const gpurma_gpu_alloc_t *a, char **base)
{
    int opened = 0;
    int rc = set_device(device);
    return rc ? rc : map_allocation(device, a->owner, a->device, a->ipc, a->va, base, &opened);
}

void gpurma_gpu_alloc_close(int device, const gpurma_gpu_alloc_t *a, char *base)
{
    if (a->owner == this_process() || set_device(device))
        return; /* our own address: nothing was opened */
    if (cudaIpcCloseMemHandle(base) != cudaSuccess)
        (void)cudaGetLastError();
}

int gpurma_gpu_capture_graph(void *stream, void **graph)
{
    *graph = NULL;
#ifndef GPURMA_GPU_HIP
    cudaStream_t s = (cudaStream_t)stream;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaGraph_t g = NULL;
#if CUDART_VERSION >= 13000
    cudaError_t e = cudaStreamGetCaptureInfo(s, &cs, NULL, &g, NULL, NULL, NULL);
#else
    cudaError_t e = cudaStreamGetCaptureInfo_v2(s, &cs, NULL, &g, NULL, NULL);
#endif
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (cs != cudaStreamCaptureStatusActive || !g)
        return 0;
    *graph = g;
    return 1;
#else
    (void)stream;
    return 0;
#endif
}

int gpurma_gpu_graph_on_destroy(void *graph, void (*release)(void *), void *arg)
{
#ifndef GPURMA_GPU_HIP
    cudaUserObject_t o;
    cudaError_t e = cudaUserObjectCreate(&o, arg, release, 1, cudaUserObjectNoDestructorSync);
    if (e != cudaSuccess) {
        release(arg);
        return cuda_error(e, "cudaUserObjectCreate");
    }
    /* The graph takes our reference; its instances take their own. */
    e = cudaGraphRetainUserObject((cudaGraph_t)graph, o, 1, cudaGraphUserObjectMove);
    if (e != cudaSuccess) {
        cudaUserObjectRelease(o, 1); /* release runs, now or later */
        return cuda_error(e, "cudaGraphRetainUserObject");
    }
    return GPURMA_SUCCESS;
#else
    (void)graph;
    release(arg);
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "graph registration: not in a HIP build");
#endif
}

/* ------------------------------------------------ for the port engine */


void *gpurma_gpu_host_alloc(size_t len)
{
    void *p = NULL;
    return cudaHostAlloc(&p, len, cudaHostAllocMapped | cudaHostAllocPortable) == cudaSuccess
               ? p
               : NULL;
}

void gpurma_gpu_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}

uint64_t *gpurma_gpu_alloc_u64(void)
{
    uint64_t *p = NULL;
    if (cudaMalloc((void **)&p, sizeof(*p)) != cudaSuccess)
        return NULL;
    /* cudaMemset runs on the legacy stream, asynchronously: wait for it, or
     * a kernel on a non-blocking stream could see the head before it. */
    if (cudaMemset(p, 0, sizeof(*p)) != cudaSuccess || cudaStreamSynchronize(0) != cudaSuccess) {
        cudaFree(p);
        return NULL;
    }
    return p;
}

void gpurma_gpu_free(void *p)
{
    if (p)
        cudaFree(p);
}

int gpurma_gpu_stream_create(int device, void **stream)
{
    cudaStream_t s;
    int rc = set_device(device);
    if (rc)
        return rc;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return cuda_error(e, "cudaStreamCreateWithFlags");
    *stream = s;
    return GPURMA_SUCCESS;
}

void gpurma_gpu_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
}

int gpurma_gpu_stream_sync(void *stream)
{
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "cudaStreamSynchronize");
}

/* GPU memory of which device, or -1 for host memory. */
static int device_of(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return GPURMA_GPU_PTR_TYPE(a) == cudaMemoryTypeDevice ? a.device : -1;
}

int gpurma_gpu_stream_copy_peer(void *stream, void *dst, const void *src, size_t n)
{
    if (!n)
        return GPURMA_SUCCESS;
    cudaStream_t s = (cudaStream_t)stream;
    int ddev = device_of(dst), sdev = device_of(src);
    cudaError_t e = ddev >= 0 && sdev >= 0 && ddev != sdev
                        ? cudaMemcpyPeerAsync(dst, ddev, src, sdev, n, s)
                        : cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "copy on the stream");
}

int gpurma_gpu_pci_bus_id(int device, char *buf, size_t len)
{
    if (cudaDeviceGetPCIBusId(buf, (int)len, device) != cudaSuccess) {
        (void)cudaGetLastError(); /* not a later launch's error */
        return -1;
    }
    for (char *c = buf; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return 0;
}

/* --------------------------------------- 2-D / 3-D copies (port engine) */

/* Rows per plane of a side as cudaPitchedPtr counts them (its plane pitch
 * is pitch * ysize), or 0 when the plane pitch is no whole number of rows
 * or holds fewer than height. */
static size_t rows_per_plane(const size_t pitch[2], size_t height, size_t depth)
{
    if (depth == 1)
        return height;
    if (!pitch[0] || pitch[1] % pitch[0] || pitch[1] / pitch[0] < height)
        return 0;
    return pitch[1] / pitch[0];
}

static cudaError_t copy_3d(cudaStream_t s, void *dst, size_t dpitch, size_t drows,
                           const void *src, size_t spitch, size_t srows, size_t width,
                           size_t height, size_t depth)
{
    int ddev = device_of(dst), sdev = device_of(src);
    struct cudaExtent ext = {.width = width, .height = height, .depth = depth};
    struct cudaPitchedPtr d = {.ptr = dst, .pitch = dpitch, .xsize = width, .ysize = drows};
    struct cudaPitchedPtr f = {.ptr = (void *)(uintptr_t)src, .pitch = spitch, .xsize = width,
                               .ysize = srows};
#ifndef GPURMA_GPU_HIP /* HIP has no 3-D peer copy; unified addresses serve below */
    if (ddev >= 0 && sdev >= 0 && ddev != sdev) {
        struct cudaMemcpy3DPeerParms p;
        memset(&p, 0, sizeof(p));
        p.dstPtr = d;
        p.dstDevice = ddev;
        p.srcPtr = f;
        p.srcDevice = sdev;
        p.extent = ext;
        return cudaMemcpy3DPeerAsync(&p, s);
    }
#else
    (void)ddev, (void)sdev;
#endif
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.dstPtr = d;
    p.srcPtr = f;
    p.extent = ext;
    p.kind = cudaMemcpyDefault;
    return cudaMemcpy3DAsync(&p, s);
}

int gpurma_gpu_stream_copy_3d(void *stream, void *dst, const size_t dst_pitch[2], const void *src,
                              const size_t src_pitch[2], size_t width, size_t height,
                              size_t depth)
{
    if (!width || !height || !depth)
        return GPURMA_SUCCESS;
    cudaStream_t s = (cudaStream_t)stream;
    /* One row per "row" of a single-row shape: pitches of 0 are legal there. */
    size_t dpitch = height > 1 ? dst_pitch[0] : width, spitch = height > 1 ? src_pitch[0] : width;
    size_t dp[2] = {dpitch, dst_pitch[1]}, sp[2] = {spitch, src_pitch[1]};
    size_t drows = rows_per_plane(dp, height, depth), srows = rows_per_plane(sp, height, depth);
    cudaError_t e = cudaSuccess;
    if (drows && srows)
        e = copy_3d(s, dst, dpitch, drows, src, spitch, srows, width, height, depth);
    else
        for (size_t z = 0; z < depth && e == cudaSuccess; z++)
            e = copy_3d(s, (char *)dst + z * dst_pitch[1], dpitch, height,
                        (const char *)src + z * src_pitch[1], spitch, height, width, height, 1);
    return e == cudaSuccess ? GPURMA_SUCCESS : cuda_error(e, "2-D/3-D copy on the stream");
}
