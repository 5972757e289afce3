/*
 * test_gpu_strided.cu - issue 19's GPU paths, two ranks (sharing a GPU or
 * not; exit 77 without one):
 *   1. a halo column (strided) to the peer with
 *      gpurma_put_subarray_signal_on_stream + gpurma_wait_until_on_stream,
 *      and from a kernel with gpurma_dev_put_subarray_signal; exact check
 *      of the column and of the poison around it;
 *   1b. narrow odd rows on the stream (the 2-D copy kernel): a 13-byte x
 *      257 x 2 put to an odd offset with a signal, then gets of it back
 *      (13-byte and 12-byte rows) into poisoned device buffers; exact
 *      images of the whole areas;
 *   2. device accumulate under contention: every thread of a 4 x 256 grid
 *      on both ranks adds 1.0 (f64, native atomicAdd) and 1 (int32) and
 *      takes an f32 fetch-add ticket on rank 0's window; exact totals;
 *   3. timing: the strided column put on the stream against a packed put
 *      of the same bytes (a contiguous column), medians of 7 rounds; the
 *      issue's target is strided >= 0.9x packed (print only; a GPU shared
 *      under MPS is noisy).
 */
#include <algorithm>

#include "gpu_common.h"

gpurma_ctx_t g_ctx;

enum { N = 4096, SIG_COL = 1, SIG_KCOL = 2, SIG_ODD = 3 };

/* The bytes of rank r's source block (host[i] = r * 1e7 + i * 0.5). */
static std::vector<unsigned char> source_bytes(int r)
{
    std::vector<double> h(N * 4);
    for (size_t i = 0; i < h.size(); i++)
        h[i] = r * 1e7 + (double)i * 0.5;
    std::vector<unsigned char> b(h.size() * sizeof(double));
    memcpy(b.data(), h.data(), b.size());
    return b;
}

/* Byte (x, y, z) of a subarray at pitches p: its offset. */
static size_t at3(const size_t p[2], size_t x, size_t y, size_t z) { return x + y * p[0] + z * p[1]; }

/* Counts the bytes of img (n long) that differ from what the shape c at
 * pitches p from offset off should hold (want(x, y, z)), poison elsewhere. */
template <typename F>
static long check_image(const unsigned char *img, size_t n, size_t off, const size_t c[3],
                        const size_t p[2], unsigned char poison, F want)
{
    std::vector<unsigned char> expect(n, poison);
    for (size_t z = 0; z < c[2]; z++)
        for (size_t y = 0; y < c[1]; y++)
            for (size_t x = 0; x < c[0]; x++)
                expect[off + at3(p, x, y, z)] = want(x, y, z);
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += img[i] != expect[i];
    return bad;
}

__global__ void kernel_column(gpurma_dev_win_t w, int peer, size_t off, const double *src,
                              gpurma_subarray_t s, int *rc)
{
    if (threadIdx.x == 0)
        *rc = gpurma_dev_put_subarray_signal(w, peer, off, src, &s, SIG_KCOL, GPURMA_SIGNAL_ADD, 1);
}

__global__ void kernel_accumulate(gpurma_dev_win_t w, size_t off, int *bad)
{
    double one = 1.0;
    int ione = 1;
    float fone = 1.0f, ticket = -1.0f;
    if (gpurma_dev_accumulate(w, 0, off, &one, 1, GPURMA_FLOAT64, GPURMA_ACC_SUM) ||
        gpurma_dev_accumulate(w, 0, off + 8, &ione, 1, GPURMA_INT32, GPURMA_ACC_SUM) ||
        gpurma_dev_fetch_and_op(w, 0, off + 16, &fone, &ticket, GPURMA_FLOAT32, GPURMA_ACC_SUM))
        atomicAdd(bad, 1);
    if (ticket < 0.0f)
        atomicAdd(bad, 1);
}

int main()
{
    skip_without_gpu("test_gpu_strided");
    init_bounded();
    int rank = gpurma_rank(g_ctx), n = gpurma_size(g_ctx), peer = (rank + 1) % n;
    gpurma_team_t world = gpurma_team_world(g_ctx);
    /* A column of N doubles out of an N x 4 row-major block: pitch 4 doubles. */
    const size_t pitch = 4 * sizeof(double), block = (size_t)N * pitch;
    size_t win_bytes = 2 * block + 64;
    char *base;
    gpurma_win_t win;
    gpurma_win_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = GPURMA_WIN_FIELD_MEM_KIND;
    p.mem_kind = GPURMA_MEM_DEVICE;
    GK(gpurma_win_allocate(world, win_bytes, &p, (void **)&base, &win));
    gpurma_dev_win_t dw;
    GK(gpurma_win_device(win, &dw));
    std::vector<double> host(N * 4);
    for (size_t i = 0; i < host.size(); i++)
        host[i] = rank * 1e7 + (double)i * 0.5;
    double *src;
    CK(cudaMalloc(&src, block));
    CK(cudaMemcpy(src, host.data(), block, cudaMemcpyHostToDevice));
    CK(cudaMemset(base, 0xA5, win_bytes));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    GK(gpurma_barrier(world));
    long failures = 0;

    gpurma_subarray_t col;
    memset(&col, 0, sizeof(col));
    col.elem_bytes = sizeof(double);
    col.count[0] = 1;
    col.count[1] = N;
    col.count[2] = 1;
    col.src_pitch[0] = col.dst_pitch[0] = pitch;
    /* 1. column 1 of our block -> column 2 of the peer's first block (stream),
     *    column 3 -> column 0 of its second block (kernel). */
    GK(gpurma_put_subarray_signal_on_stream(win, peer, 2 * sizeof(double),
                                            (char *)src + sizeof(double), &col, SIG_COL,
                                            GPURMA_SIGNAL_ADD, 1, s));
    int *krc;
    CK(cudaMallocManaged(&krc, sizeof(int)));
    *krc = -1;
    kernel_column<<<1, 32, 0, s>>>(dw, peer, block, (const double *)((char *)src + 3 * sizeof(double)), col, krc);
    GK(gpurma_wait_until_on_stream(win, SIG_COL, GPURMA_CMP_GE, 1, s));
    GK(gpurma_wait_until_on_stream(win, SIG_KCOL, GPURMA_CMP_GE, 1, s));
    CK(cudaStreamSynchronize(s));
    if (*krc != GPURMA_SUCCESS) {
        fprintf(stderr, "kernel put_subarray_signal returned %d\n", *krc);
        failures++;
    }
    std::vector<unsigned char> got(win_bytes);
    CK(cudaMemcpy(got.data(), base, win_bytes, cudaMemcpyDeviceToHost));
    int from = (rank - 1 + n) % n;
    for (size_t y = 0; y < N; y++)
        for (int c = 0; c < 4; c++) {
            double v1, v2;
            memcpy(&v1, got.data() + y * pitch + c * 8, 8);
            memcpy(&v2, got.data() + block + y * pitch + c * 8, 8);
            uint64_t poison = 0xA5A5A5A5A5A5A5A5ull, b1, b2;
            memcpy(&b1, &v1, 8);
            memcpy(&b2, &v2, 8);
            double want1 = from * 1e7 + (double)(y * 4 + 1) * 0.5;
            double want2 = from * 1e7 + (double)(y * 4 + 3) * 0.5;
            if (c == 2 ? v1 != want1 : b1 != poison)
                failures++;
            if (c == 0 ? v2 != want2 : b2 != poison)
                failures++;
        }
    if (failures)
        fprintf(stderr, "rank %d: %ld wrong cells after the column puts\n", rank, failures);

    /* 1b. narrow odd rows on the stream, both ways. */
    {
        GK(gpurma_barrier(world));
        CK(cudaMemset(base, 0x5A, win_bytes));
        CK(cudaDeviceSynchronize());
        GK(gpurma_barrier(world));
        gpurma_subarray_t sh;
        memset(&sh, 0, sizeof(sh));
        sh.elem_bytes = 1;
        sh.count[0] = 13, sh.count[1] = 257, sh.count[2] = 2;
        sh.src_pitch[0] = 32, sh.src_pitch[1] = 257 * 32;
        sh.dst_pitch[0] = 40, sh.dst_pitch[1] = 257 * 40 + 8;
        const size_t off = 3;
        GK(gpurma_put_subarray_signal_on_stream(win, peer, off, src, &sh, SIG_ODD,
                                                GPURMA_SIGNAL_ADD, 1, s));
        GK(gpurma_wait_until_on_stream(win, SIG_ODD, GPURMA_CMP_GE, 1, s));
        CK(cudaStreamSynchronize(s));
        const std::vector<unsigned char> theirs = source_bytes(from), mine = source_bytes(rank);
        const size_t area = off + at3(sh.dst_pitch, 13, 256, 1) + 64;
        std::vector<unsigned char> img(area);
        CK(cudaMemcpy(img.data(), base, area, cudaMemcpyDeviceToHost));
        long bad = check_image(img.data(), area, off, sh.count, sh.dst_pitch, 0x5A,
                               [&](size_t x, size_t y, size_t z) {
                                   return theirs[at3(sh.src_pitch, x, y, z)];
                               });
        /* The peer's window holds our bytes now: read them back. */
        GK(gpurma_barrier(world));
        for (size_t width : {13, 12}) {
            gpurma_subarray_t g = sh;
            g.count[0] = width;
            g.src_pitch[0] = sh.dst_pitch[0], g.src_pitch[1] = sh.dst_pitch[1];
            g.dst_pitch[0] = 16, g.dst_pitch[1] = 257 * 16;
            const size_t goff = off + 13 - width; /* 12-byte rows: 4-byte words */
            const size_t glen = at3(g.dst_pitch, 0, 0, 2) + 32;
            unsigned char *dst;
            CK(cudaMalloc(&dst, glen));
            CK(cudaMemset(dst, 0xC3, glen));
            GK(gpurma_get_subarray_on_stream(win, peer, dst, goff, &g, s));
            CK(cudaStreamSynchronize(s));
            std::vector<unsigned char> gimg(glen);
            CK(cudaMemcpy(gimg.data(), dst, glen, cudaMemcpyDeviceToHost));
            bad += check_image(gimg.data(), glen, 0, g.count, g.dst_pitch, 0xC3,
                               [&](size_t x, size_t y, size_t z) {
                                   return mine[at3(sh.src_pitch, x + 13 - width, y, z)];
                               });
            CK(cudaFree(dst));
        }
        if (bad) {
            fprintf(stderr, "rank %d: %ld wrong bytes in the narrow-row subarrays\n", rank, bad);
            failures += bad;
        }
        GK(gpurma_barrier(world));
    }

    /* 2. device accumulate, both ranks at once on rank 0's last 64 bytes. */
    GK(gpurma_barrier(world));
    if (rank == 0)
        CK(cudaMemset(base + 2 * block, 0, 64));
    GK(gpurma_barrier(world));
    int *bad;
    CK(cudaMallocManaged(&bad, sizeof(int)));
    *bad = 0;
    kernel_accumulate<<<4, 256, 0, s>>>(dw, 2 * block, bad);
    CK(cudaStreamSynchronize(s));
    GK(gpurma_barrier(world));
    if (rank == 0) {
        double d;
        int i32;
        float f;
        CK(cudaMemcpy(&d, base + 2 * block, 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&i32, base + 2 * block + 8, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&f, base + 2 * block + 16, 4, cudaMemcpyDeviceToHost));
        double want = 1024.0 * n;
        if (d != want || i32 != 1024 * n || f != (float)want || *bad) {
            fprintf(stderr, "accumulate: f64 %g, int32 %d, f32 %g (want %g), %d bad calls\n", d,
                    i32, (double)f, want, *bad);
            failures++;
        }
    }

    /* 3. strided column vs packed put of the same bytes, on the stream. */
    GK(gpurma_barrier(world));
    double ts[7], tp[7];
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < 7; r++) {
        float ms;
        CK(cudaEventRecord(e0, s));
        for (int k = 0; k < 20; k++)
            GK(gpurma_put_subarray_on_stream(win, peer, 0, src, &col, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ts[r] = ms / 20;
        CK(cudaEventRecord(e0, s));
        for (int k = 0; k < 20; k++)
            GK(gpurma_put_on_stream(win, peer, block, src, (size_t)N * sizeof(double), s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        tp[r] = ms / 20;
    }
    std::sort(ts, ts + 7);
    std::sort(tp, tp + 7);
    if (rank == 0)
        printf("test_gpu_strided: column of %d doubles: strided put %.2f us, packed put %.2f us: "
               "%.2fx of packed (target >= 0.9x)\n",
               N, ts[3] * 1e3, tp[3] * 1e3, tp[3] / ts[3]);
    GK(gpurma_barrier(world));
    GK(gpurma_win_free(&win));
    GK(gpurma_finalize(g_ctx));
    if (failures) {
        printf("test_gpu_strided: FAIL (%ld)\n", failures);
        return 1;
    }
    if (rank == 0)
        printf("test_gpu_strided: PASS (%d ranks)\n", n);
    return 0;
}
