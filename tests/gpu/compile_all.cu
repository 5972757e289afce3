/*
 * compile_all.cu - instantiates every function of gpurma_device.h in a
 * kernel (thread, _coop, _warp and _block forms, window and channel
 * forms), so that nvcc checks the whole header for each architecture of
 * the build. At run time (one GPU,
 * one process, no library context) the kernel calls each function with
 * bad arguments on a hand-made window and the host checks that every one
 * returned the documented error and wrote nothing. Exits 77 without a GPU.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "gpurma_device.h"

enum { NRESULTS = 160 };

#define RECORD(expr) out[n++] = (int)(expr)

/* One window of one rank (rank 0, 256 bytes, 4 signals, 2 counters). */
__global__ void every_function(gpurma_dev_win_t w, int *out, int *count, char *local)
{
    int n = 0;
    const int bad_peer = 7;
    const unsigned tid = threadIdx.x, nth = blockDim.x;
    /* Bad peer everywhere a peer is taken. */
    RECORD(gpurma_dev_put(w, bad_peer, 0, local, 8));
    RECORD(gpurma_dev_put_coop(w, bad_peer, 0, local, 8, tid, nth));
    RECORD(gpurma_dev_put_warp(w, bad_peer, 0, local, 8));
    RECORD(gpurma_dev_put_block(w, bad_peer, 0, local, 8));
    RECORD(gpurma_dev_get(w, bad_peer, local, 0, 8));
    RECORD(gpurma_dev_get_coop(w, bad_peer, local, 0, 8, tid, nth));
    RECORD(gpurma_dev_get_warp(w, bad_peer, local, 0, 8));
    RECORD(gpurma_dev_get_block(w, bad_peer, local, 0, 8));
    RECORD(gpurma_dev_put_value(w, bad_peer, 0, 1, 8));
    RECORD(gpurma_dev_signal(w, bad_peer, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_put_signal(w, bad_peer, 0, local, 8, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_put_signal_coop(w, bad_peer, 0, local, 8, 0, GPURMA_SIGNAL_ADD, 1, tid,
                                      nth));
    RECORD(gpurma_dev_put_signal_warp(w, bad_peer, 0, local, 8, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_put_signal_block(w, bad_peer, 0, local, 8, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_flush(w, bad_peer));
    uint64_t old = 0;
    RECORD(gpurma_dev_atomic_fetch_add(w, bad_peer, 0, 1, &old));
    RECORD(gpurma_dev_atomic_swap(w, bad_peer, 0, 1, &old));
    RECORD(gpurma_dev_atomic_compare_swap(w, bad_peer, 0, 0, 1, &old));
    RECORD(gpurma_dev_put_counted(w, bad_peer, 0, local, 8, 0));
    RECORD(gpurma_dev_put_packets(w, bad_peer, 0, local, 8, 1));
    RECORD(gpurma_dev_put_packets_coop(w, bad_peer, 0, local, 8, 1, tid, nth));
    RECORD(gpurma_dev_put_packets_warp(w, bad_peer, 0, local, 8, 1));
    RECORD(gpurma_dev_put_packets_block(w, bad_peer, 0, local, 8, 1));
    RECORD(gpurma_dev_put_packets16(w, bad_peer, 0, local, 8, 1));
    RECORD(gpurma_dev_put_packets16_coop(w, bad_peer, 0, local, 8, 1, tid, nth));
    RECORD(gpurma_dev_put_packets16_warp(w, bad_peer, 0, local, 8, 1));
    RECORD(gpurma_dev_put_packets16_block(w, bad_peer, 0, local, 8, 1));
    /* Every channel operation on the channel of a bad peer. */
    const gpurma_dev_chan_t bad = gpurma_dev_win_chan(w, bad_peer);
    RECORD(gpurma_dev_chan_status(bad));
    RECORD(gpurma_dev_chan_put(bad, 0, local, 8));
    RECORD(gpurma_dev_chan_put_coop(bad, 0, local, 8, tid, nth));
    RECORD(gpurma_dev_chan_put_warp(bad, 0, local, 8));
    RECORD(gpurma_dev_chan_put_block(bad, 0, local, 8));
    RECORD(gpurma_dev_chan_get(bad, local, 0, 8));
    RECORD(gpurma_dev_chan_get_coop(bad, local, 0, 8, tid, nth));
    RECORD(gpurma_dev_chan_get_warp(bad, local, 0, 8));
    RECORD(gpurma_dev_chan_get_block(bad, local, 0, 8));
    RECORD(gpurma_dev_chan_put_value(bad, 0, 1, 8));
    RECORD(gpurma_dev_chan_signal(bad, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_chan_put_signal(bad, 0, local, 8, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_chan_put_signal_coop(bad, 0, local, 8, 0, GPURMA_SIGNAL_ADD, 1, tid, nth));
    RECORD(gpurma_dev_chan_put_signal_warp(bad, 0, local, 8, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_chan_put_signal_block(bad, 0, local, 8, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_chan_flush(bad));
    RECORD(gpurma_dev_chan_atomic_fetch_add(bad, 0, 1, &old));
    RECORD(gpurma_dev_chan_atomic_swap(bad, 0, 1, &old));
    RECORD(gpurma_dev_chan_atomic_compare_swap(bad, 0, 0, 1, &old));
    RECORD(gpurma_dev_chan_put_counted(bad, 0, local, 8, 0));
    RECORD(gpurma_dev_chan_put_packets(bad, 0, local, 8, 1));
    RECORD(gpurma_dev_chan_put_packets_coop(bad, 0, local, 8, 1, tid, nth));
    RECORD(gpurma_dev_chan_put_packets_warp(bad, 0, local, 8, 1));
    RECORD(gpurma_dev_chan_put_packets_block(bad, 0, local, 8, 1));
    RECORD(gpurma_dev_chan_put_packets16(bad, 0, local, 8, 1));
    RECORD(gpurma_dev_chan_put_packets16_coop(bad, 0, local, 8, 1, tid, nth));
    RECORD(gpurma_dev_chan_put_packets16_warp(bad, 0, local, 8, 1));
    RECORD(gpurma_dev_chan_put_packets16_block(bad, 0, local, 8, 1));
    RECORD(gpurma_dev_chan_read_packets(bad, 0, local, 4, 1));
    RECORD(gpurma_dev_chan_read_packets_coop(bad, 0, local, 4, 1, tid, nth));
    RECORD(gpurma_dev_chan_read_packets_warp(bad, 0, local, 4, 1));
    RECORD(gpurma_dev_chan_read_packets_block(bad, 0, local, 4, 1));
    RECORD(gpurma_dev_chan_read_packets16(bad, 0, local, 4, 1));
    RECORD(gpurma_dev_chan_read_packets16_coop(bad, 0, local, 4, 1, tid, nth));
    RECORD(gpurma_dev_chan_read_packets16_warp(bad, 0, local, 4, 1));
    RECORD(gpurma_dev_chan_read_packets16_block(bad, 0, local, 4, 1));
    int n_bad_peer = n;
    const gpurma_dev_chan_t me = gpurma_dev_win_chan(w, 0);
    RECORD(gpurma_dev_chan_put(me, 250, local, 8));
    RECORD(gpurma_dev_chan_put_block(me, 256, local, 1));
    RECORD(gpurma_dev_chan_get_warp(me, local, 200, 57));
    RECORD(gpurma_dev_chan_put_signal_block(me, 255, local, 2, 0, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_chan_put_packets16_warp(me, 240, local, 9, 1));
    RECORD(gpurma_dev_chan_read_packets_block(me, 256, local, 4, 1));
    /* Out of bounds on a valid peer (window of 256 bytes). */
    RECORD(gpurma_dev_put(w, 0, 250, local, 8));
    RECORD(gpurma_dev_put_block(w, 0, 256, local, 1));
    RECORD(gpurma_dev_get_warp(w, 0, local, 200, 57));
    RECORD(gpurma_dev_read_packets(w, 256, local, 4, 1));
    RECORD(gpurma_dev_read_packets_coop(w, 256, local, 4, 1, tid, nth));
    RECORD(gpurma_dev_read_packets_warp(w, 256, local, 4, 1));
    RECORD(gpurma_dev_read_packets_block(w, 256, local, 4, 1));
    RECORD(gpurma_dev_read_packets16(w, 256, local, 4, 1));
    RECORD(gpurma_dev_read_packets16_coop(w, 256, local, 4, 1, tid, nth));
    RECORD(gpurma_dev_read_packets16_warp(w, 256, local, 4, 1));
    RECORD(gpurma_dev_read_packets16_block(w, 256, local, 4, 1));
    int n_oob = n;
    /* Bad signal, counter, compare, op, size, alignment. */
    RECORD(gpurma_dev_wait_until(w, 4, GPURMA_CMP_GE, 1));
    RECORD(gpurma_dev_wait_until(w, 0, (gpurma_cmp_t)9, 1));
    RECORD(gpurma_dev_counter_wait(w, 2, 1));
    RECORD(gpurma_dev_put_counted(w, 0, 0, local, 8, 2));
    RECORD(gpurma_dev_signal(w, 0, 4, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_signal(w, 0, 0, (gpurma_signal_op_t)5, 1));
    RECORD(gpurma_dev_put_signal_block(w, 0, 0, local, 8, 4, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_put_signal_warp(w, 0, 0, local, 8, 0, (gpurma_signal_op_t)5, 1));
    RECORD(gpurma_dev_put_value(w, 0, 0, 1, 3));
    RECORD(gpurma_dev_chan_signal(me, 4, GPURMA_SIGNAL_SET, 1));
    RECORD(gpurma_dev_chan_put_value(me, 0, 1, 3));
    RECORD(gpurma_dev_chan_put_counted(me, 0, local, 8, 2));
    RECORD(gpurma_dev_chan_put_signal_warp(me, 0, local, 8, 0, (gpurma_signal_op_t)5, 1));
    RECORD(gpurma_dev_chan_read_packets_coop(me, 0, local, 4, 1, nth, nth));
    int n_inval = n;
    RECORD(gpurma_dev_put_value(w, 0, 2, 1, 4));
    RECORD(gpurma_dev_atomic_fetch_add(w, 0, 4, 1, &old));
    RECORD(gpurma_dev_put_packets(w, 0, 4, local, 4, 1));
    RECORD(gpurma_dev_put_packets16_block(w, 0, 8, local, 4, 1));
    RECORD(gpurma_dev_chan_atomic_swap(me, 12, 1, &old));
    RECORD(gpurma_dev_chan_put_packets_block(me, 4, local, 4, 1));
    RECORD(gpurma_dev_chan_read_packets16_warp(me, 8, local, 4, 1));
    int n_misaligned = n;
    /* Calls that succeed (and read without side effects). */
    RECORD(gpurma_dev_quiet(w));
    RECORD(gpurma_dev_fence(w));
    RECORD(gpurma_dev_flush(w, GPURMA_ALL_PEERS));
    RECORD(gpurma_dev_signal_read(w, 0) == 0 ? 0 : -100);
    RECORD(gpurma_dev_counter_read(w, 0) == 0 ? 0 : -100);
    {
        uint64_t sig_v = 1, cnt_v = 1;
        RECORD(gpurma_dev_signal_read_checked(w, 0, &sig_v));
        RECORD(gpurma_dev_counter_read_checked(w, 0, &cnt_v));
        RECORD(sig_v == 0 && cnt_v == 0 ? 0 : -100);
    }
    RECORD(gpurma_dev_packet8_bytes(5) == 16 ? 0 : -100);
    RECORD(gpurma_dev_packet16_bytes(9) == 32 ? 0 : -100);
    RECORD(gpurma_dev_compare(3, GPURMA_CMP_GT, 2) ? 0 : -100);
    RECORD(gpurma_dev_chan_status(me));
    RECORD(gpurma_dev_chan_flush(me));
    RECORD(gpurma_dev_chan_flush_local(me));
    RECORD(gpurma_dev_flush_local(w, GPURMA_ALL_PEERS));
    RECORD(gpurma_dev_order(w));
    {
        uint32_t sigs[1] = {0};
        size_t index = 0, count = 0, idx[1];
        int ok = 0;
        /* Slot 0 holds 0: every form below is satisfied at once. */
        RECORD(gpurma_dev_wait_until_all(w, sigs, 1, NULL, GPURMA_CMP_EQ, 0));
        RECORD(gpurma_dev_wait_until_any(w, sigs, 1, NULL, GPURMA_CMP_EQ, 0, &index));
        RECORD(gpurma_dev_wait_until_some(w, NULL, 1, NULL, GPURMA_CMP_EQ, 0, idx, &count));
        RECORD(gpurma_dev_test(w, 0, GPURMA_CMP_EQ, 0, &ok));
        RECORD(gpurma_dev_test_all(w, sigs, 1, NULL, GPURMA_CMP_EQ, 0, &ok));
        RECORD(gpurma_dev_test_any(w, sigs, 1, NULL, GPURMA_CMP_EQ, 0, &index));
        RECORD(gpurma_dev_test_some(w, sigs, 1, NULL, GPURMA_CMP_EQ, 0, idx, &count));
        RECORD(index == 0 && count == 1 && ok == 1 ? 0 : -100);
        /* Strided forms, to oneself: 2 rows of 4 bytes read, then written
         * back unchanged (the window is compared afterwards). */
        gpurma_subarray_t from_win = {4, {1, 2, 1}, {4, 0}, {8, 0}};
        gpurma_subarray_t to_win = {4, {1, 2, 1}, {8, 0}, {4, 0}};
        RECORD(gpurma_dev_get_subarray(w, 0, local, 64, &from_win));
        RECORD(gpurma_dev_put_subarray(w, 0, 64, local, &to_win));
        RECORD(gpurma_dev_put_subarray_coop(w, 0, 64, local, &to_win, 0, 1));
        RECORD(gpurma_dev_put_subarray_signal(w, 0, 64, local, &to_win, 0, GPURMA_SIGNAL_ADD, 0));
        RECORD(gpurma_dev_iget(w, 0, local, 1, 96, 2, 4, 2));
        RECORD(gpurma_dev_iput(w, 0, 96, 2, local, 1, 4, 2));
        /* Accumulates that leave the (finite, nonzero) poison as it was:
         * native f64/f32 adds of -0.0, integer adds of 0, BOR 0, MAX with
         * the type's minimum, a CAS loop (f16 SUM of -0), NO_OP, and a
         * compare_and_swap of a value with itself. */
        double mz = -0.0;
        float mzf = -0.0f;
        unsigned zero32 = 0;
        unsigned long long zero64 = 0, got64 = 0;
        long long min64 = (long long)(~0ull >> 1) * -1 - 1;
        unsigned short mz16 = 0x8000;
        RECORD(gpurma_dev_accumulate(w, 0, 128, &mz, 1, GPURMA_FLOAT64, GPURMA_ACC_SUM));
        RECORD(gpurma_dev_accumulate(w, 0, 136, &mzf, 1, GPURMA_FLOAT32, GPURMA_ACC_SUM));
        RECORD(gpurma_dev_accumulate(w, 0, 140, &zero32, 1, GPURMA_INT32, GPURMA_ACC_SUM));
        RECORD(gpurma_dev_accumulate(w, 0, 144, &zero64, 1, GPURMA_UINT64, GPURMA_ACC_BOR));
        RECORD(gpurma_dev_accumulate(w, 0, 152, &min64, 1, GPURMA_INT64, GPURMA_ACC_MAX));
        RECORD(gpurma_dev_accumulate(w, 0, 160, &mz16, 1, GPURMA_FLOAT16, GPURMA_ACC_SUM));
        RECORD(gpurma_dev_fetch_and_op(w, 0, 168, &zero64, &got64, GPURMA_UINT64,
                                       GPURMA_ACC_NO_OP));
        RECORD(gpurma_dev_compare_and_swap(w, 0, 168, &got64, &got64, &zero64, GPURMA_UINT64));
        RECORD(zero64 == got64 ? 0 : -100);
    }
    if (threadIdx.x == 0) {
        count[0] = n_bad_peer;
        count[1] = n_oob;
        count[2] = n_inval;
        count[3] = n_misaligned;
        count[4] = n;
    }
}

#define CK(x)                                                                               \
    do {                                                                                    \
        cudaError_t e_ = (x);                                                               \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

int main(void)
{
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) {
        printf("compile_all: no GPU, skipping the run (the header compiled)\n");
        return 77;
    }
    const size_t win_bytes = 256;
    char *data, *local;
    gpurma_dev_signal_slot_t *slots;
    uint64_t *counters;
    gpurma_dev_peer_t *peers;
    int *out, *count;
    CK(cudaMalloc(&data, win_bytes));
    CK(cudaMalloc(&local, 64));
    CK(cudaMalloc(&slots, 4 * sizeof(*slots)));
    CK(cudaMalloc(&counters, 2 * sizeof(uint64_t)));
    CK(cudaMalloc(&peers, sizeof(*peers)));
    CK(cudaMallocHost(&out, NRESULTS * sizeof(int)));
    CK(cudaMallocHost(&count, 8 * sizeof(int)));
    unsigned char poison[256];
    for (size_t i = 0; i < sizeof(poison); i++)
        poison[i] = (unsigned char)(0x5a ^ (i * 37));
    CK(cudaMemcpy(data, poison, win_bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(slots, 0, 4 * sizeof(*slots)));
    CK(cudaMemset(counters, 0, 2 * sizeof(uint64_t)));
    CK(cudaMemset(local, 0x33, 64));
    gpurma_dev_peer_t hp = {data, slots, win_bytes, GPURMA_ENGINE_MEM, GPURMA_DEV_PATH_LOADSTORE};
    CK(cudaMemcpy(peers, &hp, sizeof(hp), cudaMemcpyHostToDevice));
    gpurma_dev_win_t w;
    memset(&w, 0, sizeof(w));
    w.peers = peers;
    w.signals = slots;
    w.counters = counters;
    w.timeout_ns = 1000000; /* nothing here should wait */
    w.rank = 0;
    w.size = 1;
    w.num_signals = 4;
    w.num_counters = 2;
    w.magic = GPURMA_DEV_WIN_MAGIC;
    memset(out, 0x7f, NRESULTS * sizeof(int));
    every_function<<<1, 64>>>(w, out, count, local);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int failures = 0;
    for (int i = 0; i < count[4]; i++) {
        int want = i < count[0]   ? GPURMA_ERR_INVALID_ARG
                   : i < count[1] ? GPURMA_ERR_OUT_OF_BOUNDS
                   : i < count[2] ? GPURMA_ERR_INVALID_ARG
                   : i < count[3] ? GPURMA_ERR_MISALIGNED
                                  : GPURMA_SUCCESS;
        if (out[i] != want) {
            fprintf(stderr, "compile_all: call %d returned %d, expected %d\n", i, out[i], want);
            failures++;
        }
    }
    unsigned char back[256];
    CK(cudaMemcpy(back, data, win_bytes, cudaMemcpyDeviceToHost));
    if (memcmp(back, poison, win_bytes)) {
        fprintf(stderr, "compile_all: a rejected call wrote into the window\n");
        failures++;
    }
    uint64_t sig[8];
    CK(cudaMemcpy(sig, slots, sizeof(sig), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 8; i++)
        if (sig[i]) {
            fprintf(stderr, "compile_all: a rejected call wrote a signal slot\n");
            failures++;
            break;
        }
    printf("compile_all: %d calls checked, %d failures\n", count[4], failures);
    return failures ? 1 : 0;
}
