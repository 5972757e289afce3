/*
 * test_strided.c - iput/iget and 2-D/3-D subarray put/get/put_signal, host
 * and device API: random shapes (element sizes 1, 2, 3, 4, 8, 12; odd
 * strides and pitches), random data, poisoned targets, and an exact image of
 * the whole target area computed here, so a byte written outside the shape
 * is caught as surely as one missing inside it. Bad shapes write nothing.
 */
#include "common.h"
#include "gpurma_device.h"

/* Data operations this process's port proxies executed (rma/port.h; this
 * test links libgpurma_core.la for it): a subarray on the port engine must
 * be one descriptor, whatever its rows and planes. */
uint64_t gpurma_port_descriptors(gpurma_ctx_t ctx);

/* Runs op (a subarray call) and completes it; on a peer of the port engine
 * checks it took exactly n descriptors (a subarray: one). */
#define DESCRIPTORS(win, peer, n, op)                                                       \
    do {                                                                                    \
        int port_ = gpurma_win_engine((win), (peer)) == GPURMA_ENGINE_PORT;                 \
        CHECK(gpurma_quiet(win));                                                           \
        uint64_t before_ = gpurma_port_descriptors(t_ctx);                                  \
        CHECK(op);                                                                          \
        CHECK(gpurma_quiet(win));                                                           \
        uint64_t took_ = gpurma_port_descriptors(t_ctx) - before_;                          \
        T_ASSERT(took_ == (uint64_t)(port_ * (n)), "%s took %llu port descriptors (engine %s)", \
                 #op, (unsigned long long)took_,                                            \
                 gpurma_engine_name(gpurma_win_engine((win), (peer))));                     \
        port_subarrays += port_ && (n);                                                     \
    } while (0)
#define ONE_DESCRIPTOR(win, peer, op) DESCRIPTORS(win, peer, 1, op)

enum { ROUNDS = 40, AREA = 6144, PURPOSE = 80, SIG = 3 };

/* The device API's cooperative put of a shape by a team of n "threads"
 * (one after another here); the first failure. */
static gpurma_status_t put_coop(gpurma_dev_win_t dw, int peer, size_t off, const void *src,
                                const gpurma_subarray_t *s, unsigned n)
{
    gpurma_status_t rc = GPURMA_SUCCESS;
    for (unsigned tid = 0; tid < n; tid++) {
        gpurma_status_t r = gpurma_dev_put_subarray_coop(dw, peer, off, src, s, tid, n);
        if (rc == GPURMA_SUCCESS)
            rc = r;
    }
    return rc;
}

/* Applies a shape to a local image: what the target should hold. */
static void apply(unsigned char *img, size_t off, const unsigned char *src,
                  const gpurma_subarray_t *s)
{
    size_t row = s->count[0] * s->elem_bytes;
    for (size_t z = 0; z < s->count[2]; z++)
        for (size_t y = 0; y < s->count[1]; y++)
            memcpy(img + off + z * s->dst_pitch[1] + y * s->dst_pitch[0],
                   src + z * s->src_pitch[1] + y * s->src_pitch[0], row);
}

/* A random shape whose target extent fits AREA - off and source fits AREA. */
static void random_shape(uint64_t *st, gpurma_subarray_t *s, size_t *off, int dims)
{
    static const size_t sizes[] = {1, 2, 3, 4, 8, 12};
    for (;;) {
        memset(s, 0, sizeof(*s));
        s->elem_bytes = sizes[t_below(st, 6)];
        s->count[0] = 1 + t_below(st, 7);
        s->count[1] = dims >= 2 ? 1 + t_below(st, 9) : 1;
        s->count[2] = dims >= 3 ? 1 + t_below(st, 4) : 1;
        size_t row = s->count[0] * s->elem_bytes;
        s->dst_pitch[0] = row + t_below(st, 3 * s->elem_bytes + 1);
        s->src_pitch[0] = row + t_below(st, 40);
        s->dst_pitch[1] = (s->count[1] - 1) * s->dst_pitch[0] + row + t_below(st, 17);
        s->src_pitch[1] = (s->count[1] - 1) * s->src_pitch[0] + row + t_below(st, 9);
        size_t de = (s->count[2] - 1) * s->dst_pitch[1] + (s->count[1] - 1) * s->dst_pitch[0] + row;
        size_t se = (s->count[2] - 1) * s->src_pitch[1] + (s->count[1] - 1) * s->src_pitch[0] + row;
        if (de <= AREA && se <= AREA) {
            *off = t_below(st, AREA - de + 1);
            return;
        }
    }
}

int main(void)
{
    t_init("test_strided", 0);
    size_t win_len = (size_t)t_size * AREA + 7; /* odd: the last area ends off a word */
    gpurma_win_t w;
    void *vbase;
    CHECK(gpurma_win_allocate(t_world, win_len, NULL, &vbase, &w));
    unsigned char *base = vbase;
    gpurma_dev_win_t dw;
    CHECK(gpurma_win_device(w, &dw));
    unsigned char *src = t_malloc(AREA), *img = t_malloc(AREA), *got = t_malloc(AREA);
    int next = (t_rank + 1) % t_size, prev = (t_rank - 1 + t_size) % t_size;
    int port_subarrays = 0;
    for (int r = 0; r < ROUNDS; r++) {
        /* Every round: poison my area for prev's writes, then prev writes. */
        memset(base + (size_t)prev * AREA, T_POISON, AREA);
        CHECK(gpurma_barrier(t_world));
        uint64_t st = t_seed(PURPOSE, (uint64_t)t_rank, (uint64_t)r);
        gpurma_subarray_t s;
        size_t off;
        random_shape(&st, &s, &off, 1 + r % 3);
        t_fill(src, AREA, t_seed(PURPOSE + 1, (uint64_t)t_rank, (uint64_t)r));
        size_t area = (size_t)t_rank * AREA;
        int how = r % 5;
        if (how == 0) {
            ONE_DESCRIPTOR(w, next, gpurma_put_subarray(w, next, area + off, src, &s));
            CHECK(gpurma_flush(w, next));
            CHECK(gpurma_signal(w, next, SIG, GPURMA_SIGNAL_ADD, 1));
        } else if (how == 1) {
            ONE_DESCRIPTOR(w, next, gpurma_put_subarray_signal(w, next, area + off, src, &s, SIG,
                                                            GPURMA_SIGNAL_ADD, 1));
        } else if (how == 2) { /* iput: one element per row */
            size_t ds = s.dst_pitch[0] / s.elem_bytes, ss = s.src_pitch[0] / s.elem_bytes;
            size_t n = s.count[1] * s.count[2];
            while (n && (n - 1) * ds * s.elem_bytes + s.elem_bytes + off > AREA)
                n--;
            while (n && (n - 1) * ss * s.elem_bytes + s.elem_bytes > AREA)
                n--;
            s.count[0] = 1;
            s.count[1] = n;
            s.count[2] = 1;
            s.dst_pitch[0] = ds * s.elem_bytes;
            s.src_pitch[0] = ss * s.elem_bytes;
            CHECK(gpurma_iput(w, next, area + off, ds, src, ss, s.elem_bytes, n));
            CHECK(gpurma_put_signal(w, next, 0, NULL, 0, SIG, GPURMA_SIGNAL_ADD, 1));
        } else if (how == 3) { /* device API, one thread */
            ONE_DESCRIPTOR(w, next, gpurma_dev_put_subarray_signal(dw, next, area + off, src, &s,
                                                                   SIG, GPURMA_SIGNAL_ADD, 1));
        } else { /* device API, rows split over 3 "threads", then a signal */
            ONE_DESCRIPTOR(w, next, put_coop(dw, next, area + off, src, &s, 3));
            EXPECT_CODE(GPURMA_SUCCESS, gpurma_dev_signal(dw, next, SIG, GPURMA_SIGNAL_ADD, 1));
        }
        CHECK(gpurma_wait_until(w, SIG, GPURMA_CMP_GE, (uint64_t)r + 1));
        /* What prev wrote into my copy of its area: exact image. */
        uint64_t pst = t_seed(PURPOSE, (uint64_t)prev, (uint64_t)r);
        gpurma_subarray_t ps;
        size_t poff;
        random_shape(&pst, &ps, &poff, 1 + r % 3);
        if (how == 2) {
            size_t ds = ps.dst_pitch[0] / ps.elem_bytes, ss = ps.src_pitch[0] / ps.elem_bytes;
            size_t n = ps.count[1] * ps.count[2];
            while (n && (n - 1) * ds * ps.elem_bytes + ps.elem_bytes + poff > AREA)
                n--;
            while (n && (n - 1) * ss * ps.elem_bytes + ps.elem_bytes > AREA)
                n--;
            ps.count[0] = 1;
            ps.count[1] = n;
            ps.count[2] = 1;
            ps.dst_pitch[0] = ds * ps.elem_bytes;
            ps.src_pitch[0] = ss * ps.elem_bytes;
        }
        t_fill(got, AREA, t_seed(PURPOSE + 1, (uint64_t)prev, (uint64_t)r));
        memset(img, T_POISON, AREA);
        apply(img, poff, got, &ps);
        t_verify(base + (size_t)prev * AREA, img, AREA, "subarray put image", prev,
                 (size_t)prev * AREA);
        /* And back: get the same shape from prev's window (my own area
         * there is what I wrote... read prev's copy of next's writes). */
        gpurma_subarray_t gs = ps; /* local buffer gets src layout, target the dst layout */
        gs.src_pitch[0] = ps.dst_pitch[0];
        gs.src_pitch[1] = ps.dst_pitch[1];
        gs.dst_pitch[0] = ps.src_pitch[0];
        gs.dst_pitch[1] = ps.src_pitch[1];
        memset(img, 0x5C, AREA);
        if (r % 2)
            CHECK(gpurma_get_subarray(w, t_rank, img, (size_t)prev * AREA + poff, &gs));
        else
            ONE_DESCRIPTOR(w, t_rank,
                           gpurma_dev_get_subarray(dw, t_rank, img, (size_t)prev * AREA + poff,
                                                   &gs));
        CHECK(gpurma_flush_local(w, t_rank));
        for (size_t z = 0; z < ps.count[2]; z++)
            for (size_t y = 0; y < ps.count[1]; y++) {
                size_t at = z * ps.src_pitch[1] + y * ps.src_pitch[0];
                t_verify(img + at, got + at, ps.count[0] * ps.elem_bytes, "get_subarray", t_rank,
                         at);
            }
        /* And what I put into next this round, read back from there with the
         * same shape (sides swapped) into a poisoned buffer. */
        if (r % 4 == 3) {
            gpurma_subarray_t bs = s;
            bs.src_pitch[0] = s.dst_pitch[0];
            bs.src_pitch[1] = s.dst_pitch[1];
            bs.dst_pitch[0] = s.src_pitch[0];
            bs.dst_pitch[1] = s.src_pitch[1];
            CHECK(gpurma_flush(w, next));
            memset(img, 0xA7, AREA);
            ONE_DESCRIPTOR(w, next, gpurma_get_subarray(w, next, img, area + off, &bs));
            memset(got, 0xA7, AREA);
            apply(got, 0, src, &(gpurma_subarray_t){s.elem_bytes,
                                                     {s.count[0], s.count[1], s.count[2]},
                                                     {s.src_pitch[0], s.src_pitch[1]},
                                                     {s.src_pitch[0], s.src_pitch[1]}});
            t_verify(img, got, AREA, "get_subarray from next", next, area + off);
        }
        CHECK(gpurma_barrier(t_world));
    }
    /* Odd shapes through the device API: one row, one column, 3-D, pitches
     * far larger than the rows, 12-byte elements, an empty shape with a
     * signal. Each put form (one thread, a team of 4, with a signal, iput)
     * lands an exact image in poisoned memory at next, and the same shape
     * comes back with get_subarray (or iget) into a poisoned buffer; on the
     * port engine every call is one descriptor. */
    {
        enum { ODD_SIG = 4 };
        static const gpurma_subarray_t odd[] = {
            {1, {13, 1, 1}, {13, 0}, {13, 0}},              /* one row of bytes          */
            {8, {1, 17, 1}, {24, 0}, {40, 0}},              /* one column of doubles     */
            {4, {3, 5, 4}, {20, 5 * 20 + 12}, {16, 5 * 16 + 4}}, /* 3-D                   */
            {2, {3, 4, 2}, {100, 450}, {64, 300}},          /* pitches far past the rows */
            {12, {2, 3, 3}, {31, 3 * 31 + 5}, {24, 3 * 24}}, /* 12-byte elements, odd pitch */
            {8, {1, 1, 1}, {8, 0}, {8, 0}},                 /* one element               */
            {4, {5, 0, 2}, {20, 40}, {20, 40}},             /* empty: the signal alone   */
        };
        uint64_t signals = 0;
        for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
            for (int form = 0; form < 4; form++) {
                gpurma_subarray_t s = odd[i];
                size_t off = 5 + 3 * i, area = (size_t)t_rank * AREA, ext;
                int iput = form == 3;
                if (iput && (s.count[0] != 1 || s.count[2] != 1))
                    continue; /* iput moves one element per row */
                CHECK(gpurma_dev__shape_extent(&s, s.dst_pitch, &ext));
                T_ASSERT(off + ext <= AREA, "odd shape %zu fits", i);
                memset(base + (size_t)prev * AREA, T_POISON, AREA);
                CHECK(gpurma_barrier(t_world));
                uint64_t seed = t_seed(PURPOSE + 4, (uint64_t)t_rank, i * 4 + (uint64_t)form);
                t_fill(src, AREA, seed);
                int n = s.count[1] != 0; /* an empty shape: none (its signal: one) */
                size_t eb = s.elem_bytes;
                if (form == 0)
                    DESCRIPTORS(w, next, n, gpurma_dev_put_subarray(dw, next, area + off, src, &s));
                else if (form == 1)
                    DESCRIPTORS(w, next, n, put_coop(dw, next, area + off, src, &s, 4));
                else if (form == 2)
                    ONE_DESCRIPTOR(w, next,
                                   gpurma_dev_put_subarray_signal(dw, next, area + off, src, &s,
                                                                  ODD_SIG, GPURMA_SIGNAL_ADD, 1));
                else
                    ONE_DESCRIPTOR(w, next,
                                   gpurma_dev_iput(dw, next, area + off, s.dst_pitch[0] / eb, src,
                                                   s.src_pitch[0] / eb, eb, s.count[1]));
                signals += form == 2;
                CHECK(gpurma_quiet(w));
                CHECK(gpurma_barrier(t_world));
                if (form == 2)
                    CHECK(gpurma_wait_until(w, ODD_SIG, GPURMA_CMP_GE, signals));
                t_fill(got, AREA, t_seed(PURPOSE + 4, (uint64_t)prev, i * 4 + (uint64_t)form));
                memset(img, T_POISON, AREA);
                apply(img, off, got, &s);
                t_verify(base + (size_t)prev * AREA, img, AREA, "odd device subarray put", prev,
                         (size_t)prev * AREA);
                /* Back from next (what I just put there) into a poisoned
                 * buffer laid out as my source. */
                gpurma_subarray_t back = s;
                memcpy(back.dst_pitch, s.src_pitch, sizeof(back.dst_pitch));
                memcpy(back.src_pitch, s.dst_pitch, sizeof(back.src_pitch));
                memset(img, 0x3C, AREA);
                if (iput)
                    ONE_DESCRIPTOR(w, next,
                                   gpurma_dev_iget(dw, next, img, s.src_pitch[0] / eb, area + off,
                                                   s.dst_pitch[0] / eb, eb, s.count[1]));
                else
                    DESCRIPTORS(w, next, n,
                                gpurma_dev_get_subarray(dw, next, img, area + off, &back));
                memset(got, 0x3C, AREA);
                gpurma_subarray_t same = s;
                memcpy(same.dst_pitch, s.src_pitch, sizeof(same.dst_pitch));
                apply(got, 0, src, &same);
                t_verify(img, got, AREA, "odd device subarray get", next, area + off);
                CHECK(gpurma_barrier(t_world));
            }
    }
    /* A shape past one UCX message (3 planes of 29 rows of 1001 bytes, 87 KB):
     * rows back to back there, the signal after the last; still one
     * descriptor on the port engine. Then read back from next. */
    {
        enum { BROW = 1001, BROWS = 29, BPLANES = 3, BSIG = 5 };
        gpurma_subarray_t bs = {1, {BROW, BROWS, BPLANES}, {1013, 1013 * BROWS + 17},
                                {1006, 1006 * BROWS + 3}};
        size_t blen = BPLANES * bs.dst_pitch[1] + 5, slen = BPLANES * bs.src_pitch[1];
        gpurma_win_t bw;
        void *bv;
        CHECK(gpurma_win_allocate(t_world, blen, NULL, &bv, &bw));
        unsigned char *bsrc = t_malloc(slen), *bimg = t_malloc(blen), *bgot = t_malloc(slen);
        t_fill(bsrc, slen, t_seed(PURPOSE + 2, (uint64_t)t_rank, 0));
        memset(bv, T_POISON, blen);
        CHECK(gpurma_barrier(t_world));
        ONE_DESCRIPTOR(bw, next, gpurma_put_subarray_signal(bw, next, 2, bsrc, &bs, BSIG,
                                                            GPURMA_SIGNAL_ADD, 1));
        CHECK(gpurma_wait_until(bw, BSIG, GPURMA_CMP_GE, 1));
        t_fill(bgot, slen, t_seed(PURPOSE + 2, (uint64_t)prev, 0));
        memset(bimg, T_POISON, blen);
        apply(bimg, 2, bgot, &bs);
        t_verify(bv, bimg, blen, "87 KB subarray put image", prev, 0);
        gpurma_subarray_t back = bs; /* my buffer in the source layout */
        memcpy(back.dst_pitch, bs.src_pitch, sizeof(back.dst_pitch));
        memcpy(back.src_pitch, bs.dst_pitch, sizeof(back.src_pitch));
        memset(bgot, 0x3C, slen);
        ONE_DESCRIPTOR(bw, next, gpurma_get_subarray(bw, next, bgot, 2, &back));
        memset(bimg, 0x3C, slen);
        gpurma_subarray_t same = bs;
        memcpy(same.dst_pitch, bs.src_pitch, sizeof(same.dst_pitch));
        apply(bimg, 0, bsrc, &same);
        t_verify(bgot, bimg, slen, "87 KB subarray get", next, 2);
        CHECK(gpurma_barrier(t_world));
        CHECK(gpurma_win_free(&bw));
        free(bsrc);
        free(bimg);
        free(bgot);
    }
    /* The same on a window over private (malloc'd) memory: peers reach it
     * by cross-memory attach, a row at a time, still one descriptor. */
    {
        enum { PROWS = 7, PPLANES = 2, PSIG = 6 };
        gpurma_subarray_t ps = {4, {5, PROWS, PPLANES}, {23, 23 * PROWS + 9}, {20, 20 * PROWS}};
        size_t plen = PPLANES * ps.dst_pitch[1] + 3, slen = PPLANES * ps.src_pitch[1];
        unsigned char *pmem = t_malloc(plen + 1) + 1; /* odd address */
        memset(pmem, T_POISON, plen);
        gpurma_win_t pw;
        CHECK(gpurma_win_create(t_world, pmem, plen, NULL, &pw));
        unsigned char *psrc = t_malloc(slen), *pimg = t_malloc(plen);
        t_fill(psrc, slen, t_seed(PURPOSE + 3, (uint64_t)t_rank, 0));
        CHECK(gpurma_barrier(t_world));
        ONE_DESCRIPTOR(pw, next, gpurma_put_subarray_signal(pw, next, 1, psrc, &ps, PSIG,
                                                            GPURMA_SIGNAL_ADD, 1));
        CHECK(gpurma_wait_until(pw, PSIG, GPURMA_CMP_GE, 1));
        t_fill(psrc, slen, t_seed(PURPOSE + 3, (uint64_t)prev, 0));
        memset(pimg, T_POISON, plen);
        apply(pimg, 1, psrc, &ps);
        t_verify(pmem, pimg, plen, "subarray put into private memory", prev, 0);
        CHECK(gpurma_barrier(t_world));
        CHECK(gpurma_win_free(&pw));
        free(pmem - 1);
        free(psrc);
        free(pimg);
    }
    /* iget of a column (8-byte elements, stride 3) from my area in next's
     * window (what I wrote last round, poison between), against a plain get. */
    {
        size_t n = 100;
        uint64_t *col = t_malloc(n * 8);
        memset(col, 0x11, n * 8);
        CHECK(gpurma_iget(w, next, col, 1, (size_t)t_rank * AREA, 3, 8, n));
        CHECK(gpurma_flush_local(w, next));
        unsigned char *block = t_malloc(n * 24);
        CHECK(gpurma_get(w, next, block, (size_t)t_rank * AREA, n * 24 - 16));
        CHECK(gpurma_flush_local(w, next));
        for (size_t i = 0; i < n; i++)
            T_ASSERT(!memcmp(&col[i], block + i * 24, 8), "iget element %zu", i);
        free(col);
        free(block);
    }
    /* Bad shapes and ranges: refused, nothing written. */
    {
        gpurma_subarray_t s = {8, {4, 3, 1}, {16, 0}, {32, 0}};
        memset(got, 0x77, AREA);
        unsigned char before[64];
        CHECK(gpurma_barrier(t_world));
        memcpy(before, base, 64);
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_subarray(w, next, 0, got, &s)); /* rows overlap */
        s.dst_pitch[0] = 32;
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_put_subarray(w, next, win_len - 64, got, &s));
        s.elem_bytes = 0;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_subarray(w, next, 0, got, &s));
        s.elem_bytes = 8;
        s.count[0] = SIZE_MAX / 4;
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_subarray(w, next, 0, got, &s));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_put_subarray(w, next, 0, got, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_iput(w, next, 0, 0, got, 1, 8, 4));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_iput(w, next, 0, SIZE_MAX / 2, got, 1, 8, 4));
        EXPECT_ERR(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_iput(w, next, 0, 1000, got, 1, 8, 1000));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_iput(w, t_size, 0, 1, got, 1, 8, 4));
        EXPECT_CODE(GPURMA_ERR_OUT_OF_BOUNDS, gpurma_dev_iput(dw, next, 0, 1000, got, 1, 8, 1000));
        s.count[0] = 4;
        EXPECT_ERR(GPURMA_ERR_UNSUPPORTED, /* host window: no stream forms */
                   gpurma_put_subarray_on_stream(w, next, 0, got, &s, NULL));
        EXPECT_ERR(GPURMA_ERR_UNSUPPORTED,
                   gpurma_put_subarray_signal_on_stream(w, next, 0, got, &s, 0, GPURMA_SIGNAL_ADD,
                                                        1, NULL));
        EXPECT_ERR(GPURMA_ERR_INVALID_ARG, gpurma_get_subarray_on_stream(w, next, got, 0, NULL,
                                                                         NULL));
        EXPECT_CODE(GPURMA_ERR_INVALID_ARG, gpurma_dev_iget(dw, next, got, 1, 0, 0, 8, 4));
        CHECK(gpurma_barrier(t_world));
        t_verify(base, before, 64, "window after refused strided calls", t_rank, 0);
    }
    /* A subarray from a rank to itself whose source lies in the
     * destination's range (rows 24 bytes apart written 12 bytes past rows
     * 20 apart): as memmove, the result is that of reading the source whole
     * first; row by row, later rows would read bytes earlier rows wrote.
     * put_subarray, put_subarray_signal and get_subarray, in my own area of
     * my window, which no peer writes. */
    {
        const gpurma_subarray_t ov = {4, {5, 9, 2}, {24, 24 * 9 + 8}, {20, 20 * 9 + 4}};
        unsigned char *mine = base + (size_t)t_rank * AREA;
        const size_t area = (size_t)t_rank * AREA;
        CHECK(gpurma_barrier(t_world));
        for (int form = 0; form < 3; form++) {
            t_fill(mine, AREA, t_seed(PURPOSE + 6, (uint64_t)t_rank, (uint64_t)form));
            memcpy(img, mine, AREA);
            memcpy(got, mine, AREA);
            apply(got, 12, img, &ov);
            if (form == 0)
                CHECK(gpurma_put_subarray(w, t_rank, area + 12, mine, &ov));
            else if (form == 1)
                CHECK(gpurma_put_subarray_signal(w, t_rank, area + 12, mine, &ov, SIG,
                                                 GPURMA_SIGNAL_ADD, 0));
            else
                CHECK(gpurma_get_subarray(w, t_rank, mine + 12, area, &ov));
            CHECK(gpurma_flush(w, t_rank));
            t_verify(mine, got, AREA, form == 2 ? "overlapping get_subarray to itself"
                                                : "overlapping put_subarray to itself",
                     t_rank, area);
        }
        CHECK(gpurma_barrier(t_world));
    }
    CHECK(gpurma_win_free(&w));
    free(src);
    free(img);
    free(got);
    if (t_rank == 0 && port_subarrays)
        printf("%d subarray calls on the port engine, one descriptor each\n", port_subarrays);
    return t_finish("iput/iget, 1-3-D subarrays, put_subarray_signal, device forms");
}
