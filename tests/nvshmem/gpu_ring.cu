/*
 * gpu_ring.cu - NVSHMEM programs on the GPU, built against gpurma's
 * nvshmem.h with plain nvcc (no -rdc: gpu_ring.mp) and with -rdc
 * (gpu_ring_rdc.mp), from two translation units, plus a module loaded with
 * dlopen after init (libgpu_module.so), and reductions on a stream and in
 * a kernel where gpurma has them, objects past NVSHMEM_SYMMETRIC_SIZE (the
 * heap grows) and a registered cudaMalloc buffer, and the tile API.
 * nvshmem_init runs before
 * cudaSetDevice, which then takes the node rank, as NVSHMEM programs do.
 * Exits 77 without a GPU.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvshmem.h>
#include <nvshmemx.h>

#include "device_host/nvshmem_tensor.h"
#include "gpu_kernels.h"

#define GPU_CHECK_NAME "gpu_ring"
#include "gpu_check.h"

static unsigned char pattern(int pe, size_t i, unsigned round)
{
    return (unsigned char)((pe * 131 + i * 7 + round * 29) % 251 + 1);
}

static __global__ void ring_p(int *dst, int value, int pe) { nvshmem_int_p(dst, value, pe); }
/* The layer's own and/or/xor reduction, one block. */
static __global__ void or_reduce_block(unsigned *dest, const unsigned *source, size_t n)
{
    nvshmemx_uint32_or_reduce_block(NVSHMEM_TEAM_WORLD, dest, source, n);
}

/* A tile of 8 x cols floats (column-major), summed over the team, and
 * gathered side by side (dst is npes times wider), by one block. */
template <typename T> static __global__ void tile_block(T *sum, T *gathered, T *source, int cols,
                                                        int npes)
{
    struct empty {};
    auto shape = nvshmemx::make_shape<ConstInt<8>, int>(ConstInt<8>{}, cols);
    auto wide = nvshmemx::make_shape<ConstInt<8>, int>(ConstInt<8>{}, cols * npes);
    auto stride = nvshmemx::make_stride<ConstInt<1>, int>(ConstInt<1>{}, 8);
    auto src = nvshmemx::Tensor<T, decltype(nvshmemx::make_layout(shape, stride))>(
        source, nvshmemx::make_layout(shape, stride));
    auto dst = nvshmemx::Tensor<T, decltype(nvshmemx::make_layout(shape, stride))>(
        sum, nvshmemx::make_layout(shape, stride));
    auto all = nvshmemx::Tensor<T, decltype(nvshmemx::make_layout(wide, stride))>(
        gathered, nvshmemx::make_layout(wide, stride));
    constexpr nvshmemx::tile_coll_algo_t algo = nvshmemx::tile_coll_algo_t::NVLS_ONE_SHOT_PUSH_NBI;
    nvshmemx::tile_sum_allreduce_block<decltype(src), decltype(dst), empty, algo>(
        NVSHMEM_TEAM_WORLD, src, dst, {}, {}, 0, 0);
    nvshmemx::tile_allgather_block<decltype(src), decltype(all), empty, algo>(NVSHMEM_TEAM_WORLD,
                                                                              src, all, {}, {}, 0);
    nvshmemx::tile_collective_wait_block<algo>(NVSHMEM_TEAM_WORLD, 0);
}

static __global__ void barrier_in_collective(int *dst)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    if (threadIdx.x == 0)
        nvshmem_int_p(dst, 3000 + me, (me + 1) % n);
    nvshmemx_barrier_all_block(); /* every block thread; quiet included */
    if (threadIdx.x == 0)
        dst[1] = dst[0]; /* read after the barrier: the previous PE's value */
}

int main(void)
{
    if (!gpu_check_start())
        return 77;
    cudaStream_t s;
    CU(cudaStreamCreate(&s));

    /* 1. ring shift with p */
    int *word = (int *)nvshmem_malloc(2 * sizeof(int)), host[2];
    CU(cudaMemset(word, 0xa5, 2 * sizeof(int)));
    sync_all();
    ring_p<<<1, 1, 0, s>>>(word, 1000 + me, next);
    CU(cudaStreamSynchronize(s));
    sync_all();
    CU(cudaMemcpy(host, word, sizeof host, cudaMemcpyDeviceToHost));
    ASSERT(host[0] == 1000 + prev, "ring p: %d, want %d", host[0], 1000 + prev);

    /* 2. ring broadcast (second unit): block puts + fence + signal_op */
    const size_t bytes = (1u << 20) + 13;
    char *data = (char *)nvshmem_malloc(bytes);
    uint64_t *sig = (uint64_t *)nvshmem_calloc(64, sizeof(uint64_t));
    unsigned char *want = (unsigned char *)malloc(bytes), *got = (unsigned char *)malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        want[i] = pattern(0, i, 1);
    if (me == 0)
        CU(cudaMemcpy(data, want, bytes, cudaMemcpyHostToDevice));
    else
        CU(cudaMemset(data, 0xa5, bytes));
    sync_all();
    launch_ring_broadcast(data, bytes, sig, s);
    CU(cudaStreamSynchronize(s));
    sync_all();
    CU(cudaMemcpy(got, data, bytes, cudaMemcpyDeviceToHost));
    ASSERT(!memcmp(got, want, bytes), "ring broadcast data differs");

    /* 3. ring reduce on 8 blocks with put_signal_nbi_block */
    const size_t n = 100003;
    int *partial = (int *)nvshmem_malloc(n * sizeof(int));
    int *acc = (int *)nvshmem_malloc(n * sizeof(int));
    int *mine = (int *)nvshmem_malloc(n * sizeof(int));
    int *hv = (int *)malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        hv[i] = (int)pattern(me, i, 3) - 100;
    CU(cudaMemcpy(mine, hv, n * sizeof(int), cudaMemcpyHostToDevice));
    CU(cudaMemset(sig, 0, 64 * sizeof(uint64_t)));
    sync_all();
    launch_ring_reduce(partial, acc, mine, n, sig, 8, s);
    CU(cudaStreamSynchronize(s));
    sync_all();
    if (me == npes - 1) {
        CU(cudaMemcpy(hv, acc, n * sizeof(int), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) {
            int sum = 0;
            for (int pe = 0; pe < npes; pe++)
                sum += (int)pattern(pe, i, 3) - 100;
            ASSERT(hv[i] == sum, "reduce element %zu: %d, want %d", i, hv[i], sum);
        }
    }

    /* 4. on-stream: put, barrier on the stream, and the peer's data after it */
    CU(cudaMemset(word, 0, 2 * sizeof(int)));
    sync_all();
    nvshmemx_int_p_on_stream(word, 2000 + me, next, s);
    nvshmemx_barrier_all_on_stream(s);
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(host, word, sizeof host, cudaMemcpyDeviceToHost));
    ASSERT(host[0] == 2000 + prev, "on-stream p + barrier: %d", host[0]);

    /* 5. device barrier inside a collective launch */
    sync_all();
    void *args[] = {&word};
    ASSERT(nvshmemx_collective_launch((const void *)barrier_in_collective, dim3(1), dim3(64), args,
                                      0, s) == 0,
           "collective launch");
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(host, word, sizeof host, cudaMemcpyDeviceToHost));
    ASSERT(host[1] == 3000 + prev, "value read after the device barrier: %d", host[1]);

    /* 6. MoE all-to-all with signals, two rounds */
    const size_t slot = 4096 + 24;
    char *recv = (char *)nvshmem_malloc((size_t)npes * slot);
    char *send = (char *)nvshmem_malloc((size_t)npes * slot);
    size_t *nbytes_d, *nbytes = (size_t *)malloc((size_t)npes * sizeof(size_t));
    unsigned char *hs = (unsigned char *)malloc((size_t)npes * slot);
    CU(cudaMalloc(&nbytes_d, (size_t)npes * sizeof(size_t)));
    CU(cudaMemset(sig, 0, 64 * sizeof(uint64_t)));
    for (unsigned round = 1; round <= 2; round++) {
        for (int to = 0; to < npes; to++) {
            nbytes[to] = (size_t)(me * 977 + to * 131 + round * 17) % slot;
            for (size_t i = 0; i < slot; i++)
                hs[(size_t)to * slot + i] = pattern(me * 64 + to, i, round);
        }
        CU(cudaMemcpy(send, hs, (size_t)npes * slot, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(nbytes_d, nbytes, (size_t)npes * sizeof(size_t), cudaMemcpyHostToDevice));
        CU(cudaMemset(recv, 0xa5, (size_t)npes * slot));
        sync_all();
        launch_moe(recv, send, slot, nbytes_d, sig, round, s);
        CU(cudaStreamSynchronize(s));
        CU(cudaMemcpy(hs, recv, (size_t)npes * slot, cudaMemcpyDeviceToHost));
        for (int from = 0; from < npes; from++) {
            size_t nb = (size_t)(from * 977 + me * 131 + round * 17) % slot;
            for (size_t i = 0; i < slot; i++) {
                unsigned char w = i < nb ? pattern(from * 64 + me, i, round) : 0xa5;
                ASSERT(hs[(size_t)from * slot + i] == w, "MoE from PE %d byte %zu", from, i);
            }
        }
        sync_all();
    }

    /* 7. typed atomics from the device */
    char *amo = (char *)nvshmem_calloc(1, 64);
    sync_all();
    launch_atomics((int *)amo, (long long *)(amo + 8), (unsigned *)(amo + 16),
                   (uint64_t *)(amo + 24), s);
    CU(cudaStreamSynchronize(s));
    sync_all();
    char ha[64];
    CU(cudaMemcpy(ha, amo, 64, cudaMemcpyDeviceToHost));
    int i32[2], x = 0;
    long long i64;
    unsigned u32, ors = 0;
    uint64_t u64[2];
    memcpy(i32, ha, 8), memcpy(&i64, ha + 8, 8), memcpy(&u32, ha + 16, 4), memcpy(u64, ha + 24, 16);
    for (int pe = 0; pe < npes; pe++)
        x ^= 1 << (pe % 31), ors |= 1u << (pe % 32);
    ASSERT(i32[0] == npes * (npes + 1) / 2 && i32[1] == x, "int add %d, xor neighbour %d", i32[0],
           i32[1]);
    ASSERT(i64 == (long long)npes * (npes + 1) / 2 && u32 == ors, "longlong add, uint or");
    ASSERT(u64[0] == (uint64_t)npes && u64[1] == 7, "uint64 fetch_inc %llu, compare_swap %llu",
           (unsigned long long)u64[0], (unsigned long long)u64[1]);

    /* 8. reductions: on a stream (gpurma's collectives, where this
     * libgpurma has them) and in a kernel (its device collectives, where
     * they exist) */
    const size_t rn = 4099;
    for (size_t i = 0; i < rn; i++)
        hv[i] = (int)pattern(me, i, 9) - 100;
    CU(cudaMemcpy(mine, hv, rn * sizeof(int), cudaMemcpyHostToDevice));
    for (int how = 0; how < 2; how++) {
        CU(cudaMemset(acc, 0xa5, rn * sizeof(int)));
        sync_all();
        if (how == 0 && dlsym(RTLD_DEFAULT, "gpurma_allreduce"))
            nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, acc, mine, rn, s);
        else if (how == 0 || !launch_reduce_block(acc, mine, rn, s))
            continue;
        CU(cudaStreamSynchronize(s));
        CU(cudaMemcpy(hv, acc, rn * sizeof(int), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < rn; i++) {
            int sum = 0;
            for (int pe = 0; pe < npes; pe++)
                sum += (int)pattern(pe, i, 9) - 100;
            ASSERT(hv[i] == sum, "%s reduce [%zu]: %d, want %d", how ? "device" : "on-stream", i,
                   hv[i], sum);
        }
    }

    /* 8b. and/or/xor reductions (the layer's own): xor on a stream, or
     * in a kernel at block scope; random words, poisoned destination */
    unsigned *umine = (unsigned *)mine, *uacc = (unsigned *)acc, *uh = (unsigned *)hv;
    for (size_t i = 0; i < rn; i++)
        uh[i] = (unsigned)pattern(me, i, 11) * 0x01010101u ^ (unsigned)pattern(me, i, 12) << 8;
    CU(cudaMemcpy(umine, uh, rn * sizeof(unsigned), cudaMemcpyHostToDevice));
    for (int how = 0; how < 2; how++) {
        CU(cudaMemset(uacc, 0xa5, (rn + 1) * sizeof(unsigned)));
        sync_all();
        if (how == 0)
            nvshmemx_uint32_xor_reduce_on_stream(NVSHMEM_TEAM_WORLD, uacc, umine, rn, s);
        else
            or_reduce_block<<<1, 256, 0, s>>>(uacc, umine, rn);
        CU(cudaStreamSynchronize(s));
        CU(cudaMemcpy(uh, uacc, (rn + 1) * sizeof(unsigned), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < rn; i++) {
            unsigned want = 0;
            for (int pe = 0; pe < npes; pe++) {
                unsigned w = (unsigned)pattern(pe, i, 11) * 0x01010101u ^
                             (unsigned)pattern(pe, i, 12) << 8;
                want = how == 0 ? want ^ w : want | w;
            }
            ASSERT(uh[i] == want, "%s reduce [%zu]: %08x, want %08x", how ? "or (block)" : "xor",
                   i, uh[i], want);
        }
        ASSERT(uh[rn] == 0xa5a5a5a5u, "bitwise reduce wrote past its %zu elements", rn);
    }

    /* 10. objects past the 64 MiB heap: the heap grows; a kernel's p, the
     * stream barrier and a reduction on a stream work on them (issue 17:
     * these failed once several allocations had filled the heap) */
    const size_t big = (40u << 20) + 4096;
    int *objs[3];
    for (int k = 0; k < 3; k++) {
        objs[k] = (int *)nvshmem_malloc(big);
        ASSERT(objs[k], "object %d of %zu bytes past the heap: NULL", k, big);
    }
    int *far = objs[2];
    CU(cudaMemset(far, 0xa5, 2 * sizeof(int)));
    sync_all();
    ring_p<<<1, 1, 0, s>>>(far + 1, 6000 + me, next);
    nvshmemx_barrier_all_on_stream(s);
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(host, far, sizeof host, cudaMemcpyDeviceToHost));
    ASSERT(host[1] == 6000 + prev, "p into a grown segment + stream barrier: %d", host[1]);
    for (size_t i = 0; i < rn; i++)
        hv[i] = (int)pattern(me, i, 13) - 100;
    CU(cudaMemcpy(objs[1], hv, rn * sizeof(int), cudaMemcpyHostToDevice));
    CU(cudaMemset(objs[2], 0xa5, rn * sizeof(int)));
    sync_all();
    if (dlsym(RTLD_DEFAULT, "gpurma_allreduce")) {
        nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, objs[2], objs[1], rn, s);
        nvshmemx_barrier_all_on_stream(s);
        CU(cudaStreamSynchronize(s));
        CU(cudaMemcpy(hv, objs[2], rn * sizeof(int), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < rn; i++) {
            int sum = 0;
            for (int pe = 0; pe < npes; pe++)
                sum += (int)pattern(pe, i, 13) - 100;
            ASSERT(hv[i] == sum, "reduce in grown segments [%zu]: %d, want %d", i, hv[i], sum);
        }
    }

    /* 11. a cudaMalloc buffer registered as symmetric takes a kernel's p */
    int *own;
    CU(cudaMalloc(&own, 4096));
    int *reg = (int *)nvshmemx_buffer_register_symmetric(own, 4096, 0);
    ASSERT(reg == own, "register_symmetric returned %p", (void *)reg);
    CU(cudaMemset(reg, 0xa5, 2 * sizeof(int)));
    sync_all();
    ring_p<<<1, 1, 0, s>>>(reg, 7000 + me, next);
    CU(cudaStreamSynchronize(s));
    sync_all();
    CU(cudaMemcpy(host, reg, sizeof host, cudaMemcpyDeviceToHost));
    ASSERT(host[0] == 7000 + prev, "p into a registered buffer: %d", host[0]);
    ASSERT(nvshmemx_buffer_unregister_symmetric(reg, 4096) == 0, "unregister");
    CU(cudaFree(own));

    /* 12. the tile API: sum and gather of 8 x 37 float tiles, one block */
    const int cols = 37, tn = 8 * cols;
    float *tsrc = (float *)nvshmem_malloc(tn * sizeof(float));
    float *tsum = (float *)nvshmem_malloc(tn * sizeof(float));
    float *tall = (float *)nvshmem_malloc((size_t)tn * npes * sizeof(float));
    float *hf = (float *)malloc((size_t)tn * npes * sizeof(float));
    for (int i = 0; i < tn; i++)
        hf[i] = (float)pattern(me, (size_t)i, 14) - 100.0f;
    CU(cudaMemcpy(tsrc, hf, tn * sizeof(float), cudaMemcpyHostToDevice));
    CU(cudaMemset(tsum, 0xa5, tn * sizeof(float)));
    CU(cudaMemset(tall, 0xa5, (size_t)tn * npes * sizeof(float)));
    sync_all();
    tile_block<float><<<1, 128, 0, s>>>(tsum, tall, tsrc, cols, npes);
    CU(cudaStreamSynchronize(s));
    sync_all();
    CU(cudaMemcpy(hf, tsum, tn * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < tn; i++) {
        float want = 0;
        for (int pe = 0; pe < npes; pe++)
            want += (float)pattern(pe, (size_t)i, 14) - 100.0f;
        ASSERT(hf[i] == want, "tile sum [%d]: %g, want %g", i, hf[i], want);
    }
    CU(cudaMemcpy(hf, tall, (size_t)tn * npes * sizeof(float), cudaMemcpyDeviceToHost));
    for (int pe = 0; pe < npes; pe++)
        for (int i = 0; i < tn; i++)
            ASSERT(hf[pe * tn + i] == (float)pattern(pe, (size_t)i, 14) - 100.0f,
                   "tile gather block %d [%d]: %g", pe, i, hf[pe * tn + i]);
    free(hf);

    /* 13. put_signal on a stream: a device source (one fused launch) and a
     * pageable host source (copy, then the signal kernel), each waited for
     * on the receiver's stream; odd sizes, poisoned destinations */
    const size_t psz[2] = {4099, (300u << 10) + 5};
    unsigned char *pdst = (unsigned char *)nvshmem_malloc(psz[1]);
    unsigned char *psrc = (unsigned char *)nvshmem_malloc(psz[1]);
    uint64_t *psig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    unsigned char *ph = (unsigned char *)malloc(psz[1]), *pw = (unsigned char *)malloc(psz[1]);
    unsigned round13 = 0;
    for (int host_src = 0; host_src < 2; host_src++)
        for (int k = 0; k < 2; k++) {
            round13++;
            for (size_t i = 0; i < psz[k]; i++)
                ph[i] = pattern(me, i, 20 + round13);
            CU(cudaMemcpy(psrc, ph, psz[k], cudaMemcpyHostToDevice));
            CU(cudaMemset(pdst, 0xa5, psz[1]));
            sync_all();
            nvshmemx_putmem_signal_on_stream(pdst, host_src ? (const void *)ph : (const void *)psrc,
                                             psz[k], psig, round13, NVSHMEM_SIGNAL_SET, next, s);
            nvshmemx_signal_wait_until_on_stream(psig, NVSHMEM_CMP_EQ, round13, s);
            CU(cudaStreamSynchronize(s));
            CU(cudaMemcpy(ph, pdst, psz[1], cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < psz[1]; i++)
                pw[i] = i < psz[k] ? pattern(prev, i, 20 + round13) : 0xa5;
            ASSERT(!memcmp(ph, pw, psz[1]), "put_signal_on_stream (%s source, %zu bytes) differs",
                   host_src ? "host" : "device", psz[k]);
        }
    /* the same, captured into a graph (global capture mode) and replayed */
    round13++;
    for (size_t i = 0; i < psz[0]; i++)
        ph[i] = pattern(me, i, 20 + round13);
    CU(cudaMemcpy(psrc, ph, psz[0], cudaMemcpyHostToDevice));
    CU(cudaMemset(pdst, 0xa5, psz[1]));
    sync_all();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    nvshmemx_putmem_signal_on_stream(pdst, psrc, psz[0], psig, round13, NVSHMEM_SIGNAL_SET, next, s);
    nvshmemx_signal_wait_until_on_stream(psig, NVSHMEM_CMP_EQ, round13, s);
    CU(cudaStreamEndCapture(s, &graph));
    CU(cudaGraphInstantiate(&exec, graph, 0));
    CU(cudaGraphLaunch(exec, s));
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(ph, pdst, psz[0], cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < psz[0]; i++)
        pw[i] = pattern(prev, i, 20 + round13);
    ASSERT(!memcmp(ph, pw, psz[0]), "put_signal_on_stream in a graph differs");
    CU(cudaGraphExecDestroy(exec));
    CU(cudaGraphDestroy(graph));
    free(ph), free(pw);

    /* 9. a module loaded after init */
    void *mod = dlopen(getenv("NVT_GPU_MODULE") ? getenv("NVT_GPU_MODULE")
                                                : "tests/nvshmem/libgpu_module.so",
                       RTLD_NOW);
    ASSERT(mod, "dlopen: %s", dlerror());
    int (*module_ring)(int *) = (int (*)(int *))dlsym(mod, "gpu_module_ring");
    ASSERT(module_ring, "dlsym gpu_module_ring");
    sync_all();
    ASSERT(module_ring(word) == 0, "module kernel failed");
    sync_all();
    CU(cudaMemcpy(host, word, sizeof host, cudaMemcpyDeviceToHost));
    ASSERT(host[0] == 5000 + prev, "module ring: %d", host[0]);

    sync_all();
    if (me == 0)
        printf("PASS gpu_ring: %d PEs\n", npes);
    nvshmem_finalize();
    dlclose(mod);
    return 0;
}
