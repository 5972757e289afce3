/*
 * test_gpu_port_subarray.cu - host-API subarrays on windows in GPU memory,
 * two or more ranks (exit 77 without a GPU). Under GPURMA_ENGINE=port each
 * call is one descriptor that the proxy executes as one 2-D/3-D copy on its
 * copy-engine stream (run-device.sh runs it so, and on the default engine):
 * 3-D shapes whose plane pitches are whole numbers of rows (one
 * cudaMemcpy3DAsync) and are not (one 2-D copy per plane), odd row sizes,
 * sources in device and in host memory; random data, poisoned targets and
 * an exact image of the whole target area; put_subarray_signal's signal is
 * waited for, so every row must be there when it is seen; get_subarray
 * reads the rows back into a poisoned device buffer. Every other round
 * goes through the device API from a kernel instead (put_subarray_signal
 * from one thread, or put_subarray_coop by a block and then a signal;
 * get_subarray), which on the port engine pushes the same one descriptor.
 */
#include "gpu_common.h"

gpurma_ctx_t g_ctx;

enum { AREA = 1 << 16, ROUNDS = 16, SIG = 4 };

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static size_t below(uint64_t *st, size_t n)
{
    *st = mix(*st);
    return (size_t)(*st % n);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(mix(seed + i) >> 17);
}

/* What the target should hold after s moved src to off of img. */
static void apply(unsigned char *img, size_t off, const unsigned char *src,
                  const gpurma_subarray_t *s)
{
    size_t row = s->count[0] * s->elem_bytes;
    for (size_t z = 0; z < s->count[2]; z++)
        for (size_t y = 0; y < s->count[1]; y++)
            memcpy(img + off + z * s->dst_pitch[1] + y * s->dst_pitch[0],
                   src + z * s->src_pitch[1] + y * s->src_pitch[0], row);
}

static size_t extent(const gpurma_subarray_t *s, const size_t pitch[2])
{
    return (s->count[2] - 1) * pitch[1] + (s->count[1] - 1) * pitch[0] +
           s->count[0] * s->elem_bytes;
}

/* Round r of rank: its shape (plane pitches whole rows on even rounds) and
 * offset, both sides inside AREA. */
static void shape_of(int rank, int r, gpurma_subarray_t *s, size_t *off)
{
    uint64_t st = mix(((uint64_t)rank << 32) | (uint64_t)r);
    for (;;) {
        memset(s, 0, sizeof(*s));
        s->elem_bytes = 1 + below(&st, 3) * 3; /* 1, 4 or 7 bytes */
        s->count[0] = 1 + below(&st, 97);
        s->count[1] = 1 + below(&st, 40);
        s->count[2] = 1 + below(&st, 4);
        size_t row = s->count[0] * s->elem_bytes;
        s->dst_pitch[0] = row + below(&st, 50);
        s->src_pitch[0] = row + below(&st, 20);
        if (r % 2 == 0) {
            s->dst_pitch[1] = s->dst_pitch[0] * (s->count[1] + below(&st, 3));
            s->src_pitch[1] = s->src_pitch[0] * (s->count[1] + below(&st, 2));
        } else {
            s->dst_pitch[1] = (s->count[1] - 1) * s->dst_pitch[0] + row + 1 + below(&st, 31);
            s->src_pitch[1] = (s->count[1] - 1) * s->src_pitch[0] + row + below(&st, 9);
        }
        size_t de = extent(s, s->dst_pitch), se = extent(s, s->src_pitch);
        if (de <= AREA && se <= AREA) {
            *off = below(&st, AREA - de + 1);
            return;
        }
    }
}

/* form 0: put_subarray_signal from one thread; 1: put_subarray_coop by the
 * block, then thread 0 signals; 2: get_subarray from one thread. */
__global__ void subarray_kernel(gpurma_dev_win_t w, int peer, size_t off, unsigned char *buf,
                                gpurma_subarray_t s, int form, int *status)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    if (form == 1) {
        rc = gpurma_dev_put_subarray_coop(w, peer, off, buf, &s, threadIdx.x, blockDim.x);
        __threadfence_system();
        __syncthreads();
        if (threadIdx.x == 0 && rc == GPURMA_SUCCESS)
            rc = gpurma_dev_signal(w, peer, SIG, GPURMA_SIGNAL_ADD, 1);
    } else if (threadIdx.x == 0) {
        rc = form == 0 ? gpurma_dev_put_subarray_signal(w, peer, off, buf, &s, SIG,
                                                        GPURMA_SIGNAL_ADD, 1)
                       : gpurma_dev_get_subarray(w, peer, buf, off, &s);
    }
    if (rc != GPURMA_SUCCESS)
        atomicExch(status, (int)rc);
}

static int run_kernel(gpurma_dev_win_t w, int peer, size_t off, unsigned char *buf,
                      const gpurma_subarray_t &s, int form, int *dstatus)
{
    int status = 0;
    CK(cudaMemset(dstatus, 0, sizeof(int)));
    subarray_kernel<<<1, form == 1 ? 64 : 1>>>(w, peer, off, buf, s, form, dstatus);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&status, dstatus, sizeof(int), cudaMemcpyDeviceToHost));
    return status;
}

int main()
{
    skip_without_gpu("test_gpu_port_subarray");
    init_bounded();
    int rank = gpurma_rank(g_ctx), n = gpurma_size(g_ctx);
    int peer = (rank + 1) % n, from = (rank - 1 + n) % n;
    gpurma_team_t world = gpurma_team_world(g_ctx);
    size_t win_bytes = (size_t)n * AREA;
    unsigned char *base;
    gpurma_win_t win;
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_MEM_KIND;
    p.mem_kind = GPURMA_MEM_DEVICE;
    GK(gpurma_win_allocate(world, win_bytes, &p, (void **)&base, &win));
    unsigned char *dsrc, *dget;
    int *dstatus;
    CK(cudaMalloc(&dsrc, AREA));
    CK(cudaMalloc(&dget, AREA));
    CK(cudaMalloc(&dstatus, sizeof(int)));
    gpurma_dev_win_t dw;
    GK(gpurma_win_device(win, &dw));
    std::vector<unsigned char> hsrc(AREA), want(AREA), got(AREA), theirs(AREA);
    long failures = 0;
    const char *engine = gpurma_engine_name(gpurma_win_engine(win, peer));
    for (int r = 0; r < ROUNDS; r++) {
        gpurma_subarray_t s;
        size_t off;
        shape_of(rank, r, &s, &off);
        fill(hsrc.data(), AREA, mix(0x5B5Bull ^ ((uint64_t)rank << 40) ^ (uint64_t)r));
        CK(cudaMemcpy(dsrc, hsrc.data(), AREA, cudaMemcpyHostToDevice));
        CK(cudaMemset(base + (size_t)from * AREA, 0xA5, AREA));
        CK(cudaDeviceSynchronize());
        GK(gpurma_barrier(world));
        /* Rounds 0, 2 (mod 4): the host API from device, then host memory;
         * 1, 3: a kernel (its source must be global memory). */
        int device_form = r % 2;
        const void *src = r % 4 != 2 ? (const void *)dsrc : (const void *)hsrc.data();
        if (device_form)
            GK(run_kernel(dw, peer, (size_t)rank * AREA + off, dsrc, s, r % 4 == 1 ? 0 : 1,
                          dstatus));
        else
            GK(gpurma_put_subarray_signal(win, peer, (size_t)rank * AREA + off, src, &s, SIG,
                                          GPURMA_SIGNAL_ADD, 1));
        GK(gpurma_flush(win, peer));
        GK(gpurma_wait_until(win, SIG, GPURMA_CMP_GE, (uint64_t)r + 1));

        /* What from put into my window: the exact image of its area. */
        gpurma_subarray_t fs;
        size_t foff;
        shape_of(from, r, &fs, &foff);
        fill(theirs.data(), AREA, mix(0x5B5Bull ^ ((uint64_t)from << 40) ^ (uint64_t)r));
        memset(want.data(), 0xA5, AREA);
        apply(want.data(), foff, theirs.data(), &fs);
        CK(cudaMemcpy(got.data(), base + (size_t)from * AREA, AREA, cudaMemcpyDeviceToHost));
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < AREA; i++)
            if (got[i] != want[i] && !bad++)
                first = i;
        EXPECT(!bad, "round %d (%s): %zu bytes differ in the area of rank %d, first at %zu "
                     "(%zu x %zu x %zu of %zu bytes)", r, engine, bad, from, first, fs.count[0],
               fs.count[1], fs.count[2], fs.elem_bytes);

        /* And back: my rows from the peer's window into a poisoned device
         * buffer, in my source's layout. */
        gpurma_subarray_t back = s;
        memcpy(back.dst_pitch, s.src_pitch, sizeof(back.dst_pitch));
        memcpy(back.src_pitch, s.dst_pitch, sizeof(back.src_pitch));
        CK(cudaMemset(dget, 0x3C, AREA));
        CK(cudaDeviceSynchronize());
        if (device_form)
            GK(run_kernel(dw, peer, (size_t)rank * AREA + off, dget, back, 2, dstatus));
        else
            GK(gpurma_get_subarray(win, peer, dget, (size_t)rank * AREA + off, &back));
        GK(gpurma_flush_local(win, peer));
        gpurma_subarray_t same = s;
        memcpy(same.dst_pitch, s.src_pitch, sizeof(same.dst_pitch));
        memset(want.data(), 0x3C, AREA);
        apply(want.data(), 0, hsrc.data(), &same);
        CK(cudaMemcpy(got.data(), dget, AREA, cudaMemcpyDeviceToHost));
        bad = 0;
        for (size_t i = 0; i < AREA; i++)
            if (got[i] != want[i] && !bad++)
                first = i;
        EXPECT(!bad, "round %d (%s): get_subarray: %zu bytes differ, first at %zu", r, engine,
               bad, first);
        GK(gpurma_barrier(world));
    }
    GK(gpurma_win_free(&win));
    CK(cudaFree(dsrc));
    CK(cudaFree(dget));
    CK(cudaFree(dstatus));
    GK(gpurma_finalize(g_ctx));
    if (rank == 0)
        printf("%s test_gpu_port_subarray: %d ranks, %d rounds of 3-D put_subarray_signal and "
               "get_subarray, host and device API (engine %s)\n",
               failures ? "FAIL" : "PASS", n, ROUNDS, engine);
    return failures ? 1 : 0;
}
