/*
 * hip_compile_check.hip - portability check of the public device header:
 * every function of gpurma_device.h (thread, _coop, _warp and _block forms,
 * window and channel forms) is instantiated in a HIP kernel, so that hipcc
 * compiles the whole header for an AMD target (tests/gpu/hip-compile.sh; compile only, nothing runs).
 * The CUDA twin, which also runs, is compile_all.cu.
 */
#include <hip/hip_runtime.h>

#include "gpurma.h"
#include "gpurma_device.h"

#define USE(expr) acc += (long long)(expr)

__global__ void every_device_function(gpurma_dev_win_t w, char *buf, long long *out)
{
    long long acc = 0;
    const unsigned tid = threadIdx.x, nth = blockDim.x;
    uint64_t old = 0;
    /* data movement */
    USE(gpurma_dev_put(w, 1, 0, buf, 8));
    USE(gpurma_dev_put_coop(w, 1, 0, buf, 8, tid, nth));
    USE(gpurma_dev_put_warp(w, 1, 0, buf, 8));
    USE(gpurma_dev_put_block(w, 1, 0, buf, 8));
    USE(gpurma_dev_get(w, 1, buf, 0, 8));
    USE(gpurma_dev_get_coop(w, 1, buf, 0, 8, tid, nth));
    USE(gpurma_dev_get_warp(w, 1, buf, 0, 8));
    USE(gpurma_dev_get_block(w, 1, buf, 0, 8));
    USE(gpurma_dev_put_value(w, 1, 0, 42, 8));
    /* signals */
    USE(gpurma_dev_signal(w, 1, 0, GPURMA_SIGNAL_SET, 1));
    USE(gpurma_dev_put_signal(w, 1, 0, buf, 8, 0, GPURMA_SIGNAL_ADD, 1));
    USE(gpurma_dev_put_signal_coop(w, 1, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1, tid, nth));
    USE(gpurma_dev_put_signal_warp(w, 1, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1));
    USE(gpurma_dev_put_signal_block(w, 1, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1));
    USE(gpurma_dev_signal_read(w, 0));
    USE(gpurma_dev_wait_until(w, 0, GPURMA_CMP_GE, 1));
    USE(gpurma_dev_compare(3, GPURMA_CMP_LT, 4));
    /* completion */
    USE(gpurma_dev_flush(w, GPURMA_ALL_PEERS));
    USE(gpurma_dev_quiet(w));
    USE(gpurma_dev_fence(w));
    /* atomics and counters */
    USE(gpurma_dev_atomic_fetch_add(w, 1, 0, 1, &old));
    USE(gpurma_dev_atomic_swap(w, 1, 8, 2, &old));
    USE(gpurma_dev_atomic_compare_swap(w, 1, 16, 0, 3, &old));
    USE(gpurma_dev_put_counted(w, 1, 0, buf, 8, 0));
    USE(gpurma_dev_counter_read(w, 0));
    USE(gpurma_dev_counter_wait(w, 0, 1));
    /* LL packets, 8 and 16 bytes */
    USE(gpurma_dev_packet8_bytes(13));
    USE(gpurma_dev_packet16_bytes(13));
    USE(gpurma_dev_put_packets(w, 1, 0, buf, 13, 7));
    USE(gpurma_dev_put_packets_coop(w, 1, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_put_packets_warp(w, 1, 0, buf, 13, 7));
    USE(gpurma_dev_put_packets_block(w, 1, 0, buf, 13, 7));
    USE(gpurma_dev_read_packets(w, 0, buf, 13, 7));
    USE(gpurma_dev_read_packets_coop(w, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_read_packets_warp(w, 0, buf, 13, 7));
    USE(gpurma_dev_read_packets_block(w, 0, buf, 13, 7));
    USE(gpurma_dev_put_packets16(w, 1, 0, buf, 13, 7));
    USE(gpurma_dev_put_packets16_coop(w, 1, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_put_packets16_warp(w, 1, 0, buf, 13, 7));
    USE(gpurma_dev_put_packets16_block(w, 1, 0, buf, 13, 7));
    USE(gpurma_dev_read_packets16(w, 0, buf, 13, 7));
    USE(gpurma_dev_read_packets16_coop(w, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_read_packets16_warp(w, 0, buf, 13, 7));
    USE(gpurma_dev_read_packets16_block(w, 0, buf, 13, 7));
    /* channels: one peer of the window, made once */
    const gpurma_dev_chan_t c = gpurma_dev_win_chan(w, 1);
    const gpurma_dev_chan_t self = gpurma_dev_win_chan(w, w.rank);
    USE(gpurma_dev_chan_status(c));
    USE(gpurma_dev_chan_put(c, 0, buf, 8));
    USE(gpurma_dev_chan_put_coop(c, 0, buf, 8, tid, nth));
    USE(gpurma_dev_chan_put_warp(c, 0, buf, 8));
    USE(gpurma_dev_chan_put_block(c, 0, buf, 8));
    USE(gpurma_dev_chan_get(c, buf, 0, 8));
    USE(gpurma_dev_chan_get_coop(c, buf, 0, 8, tid, nth));
    USE(gpurma_dev_chan_get_warp(c, buf, 0, 8));
    USE(gpurma_dev_chan_get_block(c, buf, 0, 8));
    USE(gpurma_dev_chan_put_value(c, 0, 42, 8));
    USE(gpurma_dev_chan_signal(c, 0, GPURMA_SIGNAL_SET, 1));
    USE(gpurma_dev_chan_put_signal(c, 0, buf, 8, 0, GPURMA_SIGNAL_ADD, 1));
    USE(gpurma_dev_chan_put_signal_coop(c, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1, tid, nth));
    USE(gpurma_dev_chan_put_signal_warp(c, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1));
    USE(gpurma_dev_chan_put_signal_block(c, 0, buf, 8, 0, GPURMA_SIGNAL_SET, 1));
    USE(gpurma_dev_chan_flush(c));
    USE(gpurma_dev_chan_atomic_fetch_add(c, 0, 1, &old));
    USE(gpurma_dev_chan_atomic_swap(c, 8, 2, &old));
    USE(gpurma_dev_chan_atomic_compare_swap(c, 16, 0, 3, &old));
    USE(gpurma_dev_chan_put_counted(c, 0, buf, 8, 0));
    USE(gpurma_dev_chan_put_packets(c, 0, buf, 13, 7));
    USE(gpurma_dev_chan_put_packets_coop(c, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_chan_put_packets_warp(c, 0, buf, 13, 7));
    USE(gpurma_dev_chan_put_packets_block(c, 0, buf, 13, 7));
    USE(gpurma_dev_chan_put_packets16(c, 0, buf, 13, 7));
    USE(gpurma_dev_chan_put_packets16_coop(c, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_chan_put_packets16_warp(c, 0, buf, 13, 7));
    USE(gpurma_dev_chan_put_packets16_block(c, 0, buf, 13, 7));
    USE(gpurma_dev_chan_read_packets(self, 0, buf, 13, 7));
    USE(gpurma_dev_chan_read_packets_coop(self, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_chan_read_packets_warp(self, 0, buf, 13, 7));
    USE(gpurma_dev_chan_read_packets_block(self, 0, buf, 13, 7));
    USE(gpurma_dev_chan_read_packets16(self, 0, buf, 13, 7));
    USE(gpurma_dev_chan_read_packets16_coop(self, 0, buf, 13, 7, tid, nth));
    USE(gpurma_dev_chan_read_packets16_warp(self, 0, buf, 13, 7));
    USE(gpurma_dev_chan_read_packets16_block(self, 0, buf, 13, 7));
    USE(old);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

/* The host side of the header: the handle comes from the library and is
 * passed to the kernel by value. */
gpurma_status_t launch_every_device_function(gpurma_win_t win, char *buf, long long *out)
{
    gpurma_dev_win_t w;
    gpurma_status_t rc = gpurma_win_device(win, &w);
    if (rc != GPURMA_SUCCESS)
        return rc;
    hipLaunchKernelGGL(every_device_function, dim3(1), dim3(64), 0, 0, w, buf, out);
    return hipGetLastError() == hipSuccess ? GPURMA_SUCCESS : GPURMA_ERR_GPU;
}
