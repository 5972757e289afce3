/*
 * test_gpu_coll.cu - the collectives of gpurma_coll.h on GPU buffers and a
 * stream, and the device collectives of gpurma_coll_device.h inside a user
 * kernel. Exits 77 without a GPU.
 *
 *   test_gpu_coll [REPLAYS] [--quick]    (default 1000 replays)
 *
 * 1. every collective x dtype x operator x in/out of place at odd counts
 *    (one LL step up to several data steps), results checked on the host
 *    against tests/mp/test_coll_ref.h (integers exact, floats within the
 *    stated tolerance), poison around the results, the same bytes on every
 *    rank;
 *    then bursts: every collective on its own buffers, in place and not,
 *    issued back to back with no host synchronization and checked after,
 *    and a chain of in-place allreduces on one buffer; a failure prints
 *    where the first wrong bytes of a block lie and whether they are poison;
 *    allreduce on registered buffers (zero-copy) likewise, and back to back;
 * 2. a CUDA graph of (change the input, allreduce, check on the GPU)
 *    replayed REPLAYS times at an LL size and a multi-step size: every
 *    replay's result is checked by the graph's own kernel (epochs live on
 *    the GPU; nothing is updated from the host between replays); before
 *    that, every collective captured on buffers nobody registered, at
 *    other offsets of their allocations on each rank (graph registration:
 *    zero-copy past what LL16 keeps), twice, on new allocations the second time;
 * 3. a user kernel calling gpurma_dev_coll_barrier_block and
 *    gpurma_dev_coll_allreduce_block;
 * 4. bad input: host memory with a stream, a misaligned GPU buffer;
 * 5. alltoallv on a stream with per-pair counts (zero included) and
 *    poison between the blocks, plainly and captured in a graph replayed
 *    several times after the host arrays were overwritten (the counts
 *    travel by value); then with send registered (zero-copy: each rank
 *    pulls its blocks from the peers' send buffers), plainly and in a graph.
 * Runs with any number of ranks, several per GPU included.
 *
 *   test_gpu_coll direct-mismatch | direct-absent | peer-death   (2 ranks or more)
 *
 * 6. a zero-copy call some rank does not agree to: another offset
 *    (refused by the fingerprint, quickly) or buffers not registered
 *    (refused by the timeout); every rank must end with an error;
 * 7. peer-death: a rank dies; the others' collectives on a stream end
 *    without a trap once their host knows it, and their contexts live on.
 */
#include <algorithm>
#include <ctime>
#include <csignal>
#include <unistd.h>

#include "gpu_common.h"
#include "gpurma_coll.h"
#include "gpurma_coll_device.h"
#include "../mp/test_coll_ref.h"

gpurma_ctx_t g_ctx;
static int me, nranks;
static long failures;
static gpurma_team_t world;
static cudaStream_t stream;
static uint64_t round_no;

#define POISON 0xA5
#define GUARD 64

/* Host-to-device copies and memsets run on the legacy default stream,
 * which the collectives' non-blocking stream does not wait for, and a
 * pageable cudaMemcpy may return before its DMA lands: every upload is
 * followed by a device synchronization, or a collective could read its
 * input (or be overwritten by poison) half-way. */
static void h2d(void *dst, const void *src, size_t bytes)
{
    CK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
}

/* A device buffer of n bytes between poisoned guards. */
struct dbuf {
    unsigned char *base = nullptr, *p = nullptr;
    size_t n = 0;
    explicit dbuf(size_t bytes) : n(bytes)
    {
        CK(cudaMalloc(&base, bytes + 2 * GUARD));
        CK(cudaMemset(base, POISON, bytes + 2 * GUARD));
        CK(cudaDeviceSynchronize());
        p = base + GUARD;
    }
    ~dbuf() { cudaFree(base); }
    std::vector<unsigned char> all() const
    {
        std::vector<unsigned char> h(n + 2 * GUARD);
        CK(cudaMemcpy(h.data(), base, h.size(), cudaMemcpyDeviceToHost));
        return h;
    }
};

static long poison_left(const unsigned char *h, size_t n)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += h[i] != POISON;
    return bad;
}

static std::vector<std::vector<unsigned char>> inputs(size_t elems, gpurma_dtype_t t,
                                                      gpurma_redop_t op, uint64_t rd)
{
    std::vector<std::vector<unsigned char>> in(nranks);
    for (int r = 0; r < nranks; r++) {
        in[r].resize(elems * cr_esize(t) + 1);
        cr_gen(in[r].data(), elems, t, op, r, rd);
    }
    return in;
}

/* Every rank holds the same bytes: hashes gathered by the host path. */
static void same_everywhere(const unsigned char *h, size_t n, const char *what)
{
    uint64_t x = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        x = (x ^ h[i]) * 1099511628211ull;
    std::vector<uint64_t> all(nranks);
    GK(gpurma_allgather(world, &x, all.data(), 1, GPURMA_UINT64, NULL));
    for (int r = 0; r < nranks; r++)
        EXPECT(all[r] == x, "%s: rank %d holds other bytes", what, r);
}

enum { K_ALLREDUCE, K_REDUCE_SCATTER, K_REDUCE, K_ALLGATHER, K_ALLTOALL, K_BROADCAST };
static const char *const kind_names[] = {"allreduce", "reduce_scatter", "reduce",
                                         "allgather", "alltoall",       "broadcast"};

/* Where the first byte of block b that differs from want lies, and what
 * the wrong bytes look like (poison, zero, or another rank's input: which
 * tells a lost write from a stale slot or a wrong source). */
static long block_diff(const unsigned char *got, const unsigned char *want, size_t bytes,
                       const char *what, int b)
{
    size_t i = 0;
    while (i < bytes && got[i] == want[i])
        i++;
    if (i == bytes)
        return 0;
    size_t last = bytes;
    while (last > i && got[last - 1] == want[last - 1])
        last--;
    fprintf(stderr, "rank %d: %s: block %d bytes [%zu, %zu) of %zu differ: got %02x, want %02x%s\n",
            me, what, b, i, last, bytes, got[i], want[i],
            got[i] == POISON ? " (poison: never written)" : "");
    return 1;
}

/* One collective call: its inputs (every rank's, for the reference), its
 * buffers, and what it passed. Issued without synchronizing, so that
 * several calls run back to back on the stream. */
struct call {
    int kind, inplace, root;
    gpurma_dtype_t t;
    gpurma_redop_t op;
    size_t count, block, in_elems, out_bytes;
    std::vector<std::vector<unsigned char>> in;
    dbuf send, recv;
    const void *s = nullptr;
    char what[160];
    call(int kind_, gpurma_dtype_t t_, gpurma_redop_t op_, size_t count_, int inplace_,
         size_t in_elems_, size_t out_bytes_)
        : kind(kind_), inplace(inplace_), t(t_), op(op_), count(count_),
          block(count_ * cr_esize(t_)), in_elems(in_elems_), out_bytes(out_bytes_),
          send(in_elems_ * cr_esize(t_)), recv(out_bytes_)
    {
    }
};

static call *prepare(int kind, gpurma_dtype_t t, gpurma_redop_t op, size_t count, int inplace)
{
    const size_t es = cr_esize(t), n = (size_t)nranks;
    const uint64_t rd = ++round_no;
    const int scatter_in = kind == K_REDUCE_SCATTER || kind == K_ALLTOALL;
    const int gather_out = kind == K_ALLGATHER || kind == K_ALLTOALL || kind == K_REDUCE_SCATTER;
    const size_t in_elems = scatter_in ? n * count : count;
    call *c = new call(kind, t, op, count, inplace, in_elems, gather_out ? n * count * es : count * es);
    c->root = (int)(rd % n);
    c->in = inputs(in_elems, t, op, rd);
    h2d(c->send.p, c->in[me].data(), in_elems * es);
    c->s = c->send.p;
    if (inplace) {
        size_t at = kind == K_ALLGATHER ? (size_t)me * c->block : 0;
        if (kind != K_BROADCAST || me == c->root)
            h2d(c->recv.p + at, c->in[me].data(),
                          kind == K_ALLGATHER ? c->block : in_elems * es);
        c->s = c->recv.p + at;
    }
    snprintf(c->what, sizeof(c->what), "%s %s %s count %zu%s", kind_names[kind],
             cr_dtype_names[t], cr_op_names[op], count, inplace ? " in place" : "");
    return c;
}

static void issue(call *c)
{
    void *r = c->recv.p;
    int rc = GPURMA_ERR_INTERNAL;
    switch (c->kind) {
    case K_ALLREDUCE: rc = gpurma_allreduce(world, c->s, r, c->count, c->t, c->op, stream); break;
    case K_REDUCE_SCATTER:
        rc = gpurma_reduce_scatter(world, c->s, r, c->count, c->t, c->op, stream);
        break;
    case K_REDUCE: rc = gpurma_reduce(world, c->s, r, c->count, c->t, c->op, c->root, stream); break;
    case K_ALLGATHER: rc = gpurma_allgather(world, c->s, r, c->count, c->t, stream); break;
    case K_ALLTOALL: rc = gpurma_alltoall(world, c->s, r, c->count, c->t, stream); break;
    case K_BROADCAST: rc = gpurma_broadcast(world, c->s, r, c->count, c->t, c->root, stream); break;
    }
    GK(rc);
}

/* Checks c's result (the stream synchronized) and frees it. */
static void check(call *c)
{
    const int kind = c->kind;
    const size_t block = c->block, count = c->count;
    const char *what = c->what;
    std::vector<void *> inp(nranks);
    for (int r = 0; r < nranks; r++)
        inp[r] = c->in[r].data();
    auto h = c->recv.all();
    const unsigned char *got = h.data() + GUARD;
    EXPECT(!poison_left(h.data(), GUARD) && !poison_left(got + c->out_bytes, GUARD),
           "%s: a guard byte was written", what);
    long bad = 0;
    switch (kind) {
    case K_ALLREDUCE:
        bad = cr_check_reduced(got, inp.data(), nranks, 0, count, c->t, c->op, what);
        same_everywhere(got, block, what);
        break;
    case K_REDUCE_SCATTER:
        bad = cr_check_reduced(got, inp.data(), nranks, (size_t)me * count, count, c->t, c->op,
                               what);
        break;
    case K_REDUCE:
        if (me == c->root)
            bad = cr_check_reduced(got, inp.data(), nranks, 0, count, c->t, c->op, what);
        else if (!c->inplace)
            bad = poison_left(got, block);
        break;
    case K_ALLGATHER:
        for (int r = 0; r < nranks; r++)
            bad += block_diff(got + (size_t)r * block, c->in[r].data(), block, what, r);
        break;
    case K_ALLTOALL:
        for (int r = 0; r < nranks; r++)
            bad += block_diff(got + (size_t)r * block, c->in[r].data() + (size_t)me * block,
                              block, what, r);
        break;
    case K_BROADCAST:
        bad = block_diff(got, c->in[c->root].data(), block, what, c->root);
        break;
    }
    EXPECT(!bad, "%s: %ld wrong", what, bad);
    delete c;
}

static void one(int kind, gpurma_dtype_t t, gpurma_redop_t op, size_t count, int inplace)
{
    call *c = prepare(kind, t, op, count, inplace);
    issue(c);
    CK(cudaStreamSynchronize(stream));
    check(c);
}

/* Calls back to back with no host synchronization between them: every
 * collective at once on its own buffers (in place and not, alternating),
 * then checked; a slot reused before its reader is done, an epoch or an
 * acknowledgement lost across calls shows here. */
static void burst(gpurma_dtype_t t, size_t count, int rounds)
{
    std::vector<call *> calls;
    for (int k = 0; k < rounds; k++)
        for (int kind = K_ALLREDUCE; kind <= K_BROADCAST; kind++) {
            gpurma_redop_t op = (gpurma_redop_t)((k + kind) % CR_NOPS);
            if (kind > K_REDUCE)
                op = GPURMA_SUM;
            calls.push_back(prepare(kind, t, op, count, (k + kind) & 1));
        }
    CK(cudaDeviceSynchronize());
    for (call *c : calls)
        issue(c);
    CK(cudaStreamSynchronize(stream));
    for (call *c : calls)
        check(c);
}

/* The same buffer through back-to-back in-place allreduces: int32 sums,
 * exact with wrapping (after the first, every rank holds the same S, and
 * each later call multiplies by n). */
static void chain(size_t count, int calls)
{
    auto in = inputs(count, GPURMA_INT32, GPURMA_SUM, ++round_no);
    std::vector<uint32_t> want(count);
    for (size_t i = 0; i < count; i++) {
        uint32_t acc = 0;
        for (int r = 0; r < nranks; r++)
            acc += (uint32_t)((int32_t *)in[r].data())[i];
        for (int k = 1; k < calls; k++)
            acc *= (uint32_t)nranks;
        want[i] = acc;
    }
    dbuf b(count * 4);
    h2d(b.p, in[me].data(), count * 4);
    for (int k = 0; k < calls; k++)
        GK(gpurma_allreduce(world, b.p, b.p, count, GPURMA_INT32, GPURMA_SUM, stream));
    CK(cudaStreamSynchronize(stream));
    auto h = b.all();
    char what[96];
    snprintf(what, sizeof(what), "chain of %d in-place allreduces, count %zu", calls, count);
    EXPECT(!block_diff(h.data() + GUARD, (const unsigned char *)want.data(), count * 4, what, 0),
           "%s: wrong", what);
}

/* ------------------------------------------------------------ registered */

/* allreduce on buffers registered with gpurma_coll_register: the
 * zero-copy path (peers read and write them directly). Every rank uses
 * the same offsets in its registrations, as the API asks; results are
 * checked with poison around them, several calls back to back included. */
static void registered(int quick)
{
    static const size_t counts[] = {1, 37, 4099, 300007, 2500001};
    const size_t max_bytes = 2500001 * 8 + 4 * GUARD;
    dbuf sendb(max_bytes), recvb(max_bytes);
    GK(gpurma_coll_register(world, sendb.p, max_bytes));
    GK(gpurma_coll_register(world, recvb.p, max_bytes));
    for (int t = GPURMA_INT8; t <= GPURMA_FLOAT64; t++) {
        if (quick && t != GPURMA_INT8 && t != GPURMA_INT32 && t != GPURMA_FLOAT32 &&
            t != GPURMA_FLOAT64)
            continue;
        const size_t es = cr_esize((gpurma_dtype_t)t);
        for (size_t count : counts)
            for (int op = 0; op < CR_NOPS; op++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    if (count == counts[4] && (op != GPURMA_SUM || t != GPURMA_FLOAT32))
                        continue;
                    auto in = inputs(count, (gpurma_dtype_t)t, (gpurma_redop_t)op, ++round_no);
                    std::vector<void *> inp(nranks);
                    for (int r = 0; r < nranks; r++)
                        inp[r] = in[r].data();
                    /* recv at GUARD; for one count 4 bytes further (elements up to 4
                     * bytes stay aligned, 16-byte vectors do not: the element loop) */
                    size_t at = GUARD + (count == 37 && es <= 4 ? 4 : 0);
                    CK(cudaMemset(recvb.p, POISON, max_bytes));
                    unsigned char *r = recvb.p + at, *snd = inplace ? r : sendb.p + at;
                    h2d(snd, in[me].data(), count * es);
                    GK(gpurma_allreduce(world, snd, r, count, (gpurma_dtype_t)t,
                                        (gpurma_redop_t)op, stream));
                    CK(cudaStreamSynchronize(stream));
                    std::vector<unsigned char> h(count * es + 2 * GUARD);
                    CK(cudaMemcpy(h.data(), r - GUARD, h.size(), cudaMemcpyDeviceToHost));
                    char what[128];
                    snprintf(what, sizeof(what), "registered allreduce %s %s count %zu%s",
                             cr_dtype_names[t], cr_op_names[op], count, inplace ? " in place" : "");
                    EXPECT(!poison_left(h.data(), GUARD) &&
                               !poison_left(h.data() + GUARD + count * es, GUARD),
                           "%s: a guard byte was written", what);
                    long bad = cr_check_reduced(h.data() + GUARD, inp.data(), nranks, 0, count,
                                                (gpurma_dtype_t)t, (gpurma_redop_t)op, what);
                    same_everywhere(h.data() + GUARD, count * es, what);
                    EXPECT(!bad, "%s: %ld wrong", what, bad);
                }
    }
    /* Back to back, no host synchronization: 8 allreduces of int32 sums on
     * disjoint slices, alternately in place, each checked after. */
    const size_t count = 100003, slice = (count * 4 + 255) / 256 * 256;
    std::vector<std::vector<std::vector<unsigned char>>> ins;
    CK(cudaMemset(recvb.p, POISON, max_bytes));
    for (int k = 0; k < 8; k++) {
        ins.push_back(inputs(count, GPURMA_INT32, GPURMA_SUM, ++round_no));
        unsigned char *dst = (k & 1 ? recvb.p : sendb.p) + k * slice;
        h2d(dst, ins[k][me].data(), count * 4);
    }
    for (int k = 0; k < 8; k++) {
        unsigned char *r = recvb.p + k * slice, *snd = k & 1 ? r : sendb.p + k * slice;
        GK(gpurma_allreduce(world, snd, r, count, GPURMA_INT32, GPURMA_SUM, stream));
    }
    CK(cudaStreamSynchronize(stream));
    for (int k = 0; k < 8; k++) {
        std::vector<unsigned char> h(count * 4);
        std::vector<void *> inp(nranks);
        for (int r = 0; r < nranks; r++)
            inp[r] = ins[k][r].data();
        CK(cudaMemcpy(h.data(), recvb.p + k * slice, h.size(), cudaMemcpyDeviceToHost));
        EXPECT(!cr_check_reduced(h.data(), inp.data(), nranks, 0, count, GPURMA_INT32, GPURMA_SUM,
                                 "registered burst"),
               "registered burst call %d wrong", k);
    }
    GK(gpurma_coll_deregister(world, sendb.p));
    GK(gpurma_coll_deregister(world, recvb.p));
}

/* One call of registered_kinds, inplace 2: a reduce whose non-roots pass
 * a recv that is not registered (the root then reads every send; with
 * every recv registered the members but the root each reduce a share
 * into the root's recv). */
static void registered_one(const dbuf &sendb, const dbuf &recvb, int kind, gpurma_dtype_t t,
                           gpurma_redop_t op, size_t count, int inplace)
{
    const int mixed = inplace == 2;
    call *c = prepare(kind, t, op, count, mixed ? 0 : inplace);
    const int own = !mixed || me == c->root; /* recv registered */
    const size_t sb = c->send.n + 2 * GUARD, rb = c->recv.n + 2 * GUARD;
    CK(cudaMemcpy(sendb.base, c->send.base, sb, cudaMemcpyDeviceToDevice));
    if (own)
        CK(cudaMemcpy(recvb.base, c->recv.base, rb, cudaMemcpyDeviceToDevice));
    CK(cudaDeviceSynchronize());
    c->s = inplace == 1 ? recvb.base + ((const unsigned char *)c->s - c->recv.base) : sendb.p;
    if (own)
        c->recv.p = recvb.p;
    issue(c);
    CK(cudaStreamSynchronize(stream));
    if (own) {
        CK(cudaMemcpy(c->recv.base, recvb.base, rb, cudaMemcpyDeviceToDevice));
        c->recv.p = c->recv.base + GUARD;
    }
    snprintf(c->what + strlen(c->what), sizeof(c->what) - strlen(c->what),
             mixed ? " (registered, non-roots' recv not)" : " (registered)");
    check(c);
}

/* allgather, reduce-scatter, alltoall, broadcast and reduce on registered
 * buffers: the zero-copy path past what LL16 keeps (smaller calls, and
 * alltoall and reduce-scatter in place, take the scratch path on the same
 * buffers; a broadcast over more than two ranks forwards, in chunks from
 * 8 MiB). Each call's buffers, guards and poison included, are copied
 * into the registrations at the same offsets on every rank, the call runs
 * there, and its recv comes back to be checked as every other call is. */
static void registered_kinds(int quick)
{
    static const size_t counts[] = {37, 20011, 300007};
    /* a broadcast in several chunks: 8 MiB and more over 3 ranks or more */
    const size_t big_bcast = (9u << 20) + 13;
    size_t max_bytes = (size_t)nranks * 300007 * 8;
    max_bytes = max_bytes > big_bcast ? max_bytes : big_bcast;
    dbuf sendb(max_bytes), recvb(max_bytes);
    GK(gpurma_coll_register(world, sendb.base, max_bytes + 2 * GUARD));
    GK(gpurma_coll_register(world, recvb.base, max_bytes + 2 * GUARD));
    for (int kind : {K_ALLGATHER, K_REDUCE_SCATTER, K_ALLTOALL, K_BROADCAST, K_REDUCE})
        for (int t = GPURMA_INT8; t <= GPURMA_FLOAT64; t++) {
            if (quick && t != GPURMA_INT8 && t != GPURMA_BFLOAT16 && t != GPURMA_FLOAT32 &&
                t != GPURMA_FLOAT64)
                continue;
            for (size_t count : counts)
                for (int op = 0; op < (kind == K_REDUCE_SCATTER || kind == K_REDUCE ? CR_NOPS : 1);
                     op++)
                    for (int inplace = 0; inplace < 2 + (kind == K_REDUCE); inplace++)
                        registered_one(sendb, recvb, kind, (gpurma_dtype_t)t, (gpurma_redop_t)op,
                                       count, inplace);
        }
    for (int inplace = 0; inplace < 2; inplace++)
        registered_one(sendb, recvb, K_BROADCAST, GPURMA_INT8, GPURMA_SUM, big_bcast, inplace);
    GK(gpurma_coll_deregister(world, sendb.base));
    GK(gpurma_coll_deregister(world, recvb.base));
}

/* ------------------------------------------------------ graph registration */

/* A device copy of buffer b (guards included) at offset shift of a larger
 * allocation of its own, so that each rank's buffer lies elsewhere in its
 * allocation. */
struct moved {
    unsigned char *alloc = nullptr, *base = nullptr;
    size_t len;
    moved(const dbuf &b, size_t shift) : len(b.n + 2 * GUARD)
    {
        CK(cudaMalloc(&alloc, len + shift));
        base = alloc + shift;
        CK(cudaMemcpy(base, b.base, len, cudaMemcpyDeviceToDevice));
        CK(cudaDeviceSynchronize());
    }
    ~moved() { cudaFree(alloc); }
    unsigned char *at(const void *p, const dbuf &b) const
    {
        return base + ((const unsigned char *)p - b.base);
    }
};

/* One collective captured into a graph on buffers nobody registered
 * (graph registration: past what LL16 keeps, the members map each other's
 * allocations and run zero-copy). Each rank's buffers sit at another
 * offset of their allocation. Out of place the graph is replayed three
 * times, the recv poisoned before each; in place once (replays > 0: that
 * many times, the same on every rank). */
static void graph_one(int kind, gpurma_dtype_t t, gpurma_redop_t op, size_t count, int inplace,
                      int replays = 0)
{
    if (replays <= 0)
        replays = inplace ? 1 : 3;
    call *c = prepare(kind, t, op, count, inplace);
    {
        moved ms(c->send, 512 * (size_t)me + 256), mr(c->recv, 512 * (size_t)(nranks - me));
        const void *s0 = c->s;
        c->s = inplace ? (const void *)mr.at(s0, c->recv) : (const void *)ms.at(s0, c->send);
        unsigned char *rp = c->recv.p;
        c->recv.p = mr.at(rp, c->recv);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        issue(c);
        CK(cudaStreamEndCapture(stream, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        for (int i = 0; i < replays; i++) {
            if (!inplace)
                CK(cudaMemsetAsync(c->recv.p, POISON, c->out_bytes, stream));
            CK(cudaGraphLaunch(exec, stream));
        }
        CK(cudaStreamSynchronize(stream));
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(graph));
        CK(cudaMemcpy(c->recv.base, mr.base, mr.len, cudaMemcpyDeviceToDevice));
        c->recv.p = rp;
        /* a collective after the graph is gone, before the buffers go, as
         * docs/collectives.md asks (the peers close their mappings of them) */
        int one = 1, sum = 0;
        GK(gpurma_allreduce(world, &one, &sum, 1, GPURMA_INT32, GPURMA_SUM, NULL));
    }
    snprintf(c->what + strlen(c->what), sizeof(c->what) - strlen(c->what), " (graph, unregistered)");
    check(c);
}

/* Every zero-copy collective in graphs on unregistered buffers, twice:
 * the second round's buffers are new allocations (often at the first
 * round's freed addresses), which the mappings of the first must not
 * stand in for. Calls LL16 keeps (GPURMA_COLL_DIRECT_MIN) take it. */
static void graph_registered(int quick)
{
    for (int pass = 0; pass < 2; pass++)
        for (int kind = K_ALLREDUCE; kind <= K_BROADCAST; kind++)
            for (gpurma_dtype_t t : {GPURMA_INT32, GPURMA_BFLOAT16, GPURMA_FLOAT64}) {
                if (quick && pass && t != GPURMA_INT32)
                    continue;
                for (size_t count : {(size_t)1000, (size_t)40009, (size_t)300007}) {
                    int nops = kind <= K_REDUCE ? CR_NOPS : 1;
                    for (int op = 0; op < nops; op += quick ? 2 : 1)
                        for (int inplace = 0; inplace < 2; inplace++)
                            graph_one(kind, t, (gpurma_redop_t)op, count, inplace);
                }
            }
    /* Ranks that differ on in place (rank 0 in place, the others not), for
     * the two collectives that run in place on the scratch path only: all
     * must still agree on that path, not wait for each other's exchange. */
    for (int kind : {K_REDUCE_SCATTER, K_ALLTOALL})
        graph_one(kind, GPURMA_INT32, GPURMA_SUM, 40009, me == 0, 1);
}

/* ------------------------------------------------------------ graph replay */

__global__ void bump(int32_t *send, size_t count, int32_t by)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        send[i] += by;
}

/* Replay k (1, 2, ...) expects base[i] + k * n(n+1)/2 (wrapping); counts
 * wrong elements of wrong replays, then moves the replay counter on. */
__global__ void verify_replay(const int32_t *recv, const int32_t *base, size_t count,
                              uint32_t step, unsigned long long *replays,
                              unsigned long long *bad)
{
    uint32_t k = (uint32_t)*replays + 1;
    for (size_t i = threadIdx.x; i < count; i += blockDim.x)
        if ((uint32_t)recv[i] != (uint32_t)base[i] + k * step)
            atomicAdd(bad, 1ull);
    __syncthreads();
    if (threadIdx.x == 0)
        *replays = k;
}

static void graph_replay(size_t count, int replays)
{
    auto in = inputs(count, GPURMA_INT32, GPURMA_SUM, ++round_no);
    std::vector<int32_t> base(count);
    for (size_t i = 0; i < count; i++) {
        uint32_t acc = 0;
        for (int r = 0; r < nranks; r++)
            acc += (uint32_t)((int32_t *)in[r].data())[i];
        base[i] = (int32_t)acc;
    }
    int32_t *send, *recv, *dbase;
    unsigned long long *ctr;
    CK(cudaMalloc(&send, count * 4));
    CK(cudaMalloc(&recv, count * 4));
    CK(cudaMalloc(&dbase, count * 4));
    CK(cudaMalloc(&ctr, 16));
    CK(cudaMemset(ctr, 0, 16));
    CK(cudaDeviceSynchronize());
    h2d(send, in[me].data(), count * 4);
    h2d(dbase, base.data(), count * 4);
    /* The first call makes the GPU scratch window (collective setup,
     * outside any graph); later ones are captured. */
    GK(gpurma_barrier_on_stream(world, stream));
    CK(cudaStreamSynchronize(stream));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    bump<<<64, 256, 0, stream>>>(send, count, me + 1);
    GK(gpurma_allreduce(world, send, recv, count, GPURMA_INT32, GPURMA_SUM, stream));
    verify_replay<<<1, 512, 0, stream>>>(recv, dbase, count,
                                         (uint32_t)(nranks * (nranks + 1) / 2), ctr, ctr + 1);
    CK(cudaStreamEndCapture(stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < replays; i++)
        CK(cudaGraphLaunch(exec, stream));
    CK(cudaStreamSynchronize(stream));
    unsigned long long h[2];
    CK(cudaMemcpy(h, ctr, 16, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == (unsigned long long)replays && h[1] == 0,
           "graph replay, count %zu: %llu of %d replays ran, %llu wrong elements", count, h[0],
           replays, h[1]);
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    cudaFree(send), cudaFree(recv), cudaFree(dbase), cudaFree(ctr);
}

/* ------------------------------------------------------------ alltoallv */

/* Rank s sends rank d (s * 5 + d * 3 + round) % 7 * scale elements. */
static size_t v_count(int s, int d, uint64_t rd, size_t scale)
{
    return (size_t)(((uint64_t)s * 5 + (uint64_t)d * 3 + rd) % 7) * scale;
}

/* Blocks packed with one element of poison between them; replays > 0:
 * captured, the host arrays overwritten, then the graph launched replays
 * times into a re-poisoned recv. registered: send registered on every
 * rank, so that large blocks go zero-copy (each rank pulls
 * its blocks from the peers' send buffers). */
static void alltoallv_one(gpurma_dtype_t t, size_t scale, int replays, int registered = 0)
{
    const size_t es = cr_esize(t);
    const uint64_t rd = ++round_no;
    std::vector<size_t> sc(nranks), sd(nranks), rc(nranks), rdp(nranks);
    std::vector<std::vector<unsigned char>> in(nranks);
    std::vector<size_t> stot(nranks, 0);
    size_t rtot = 0;
    for (int s = 0; s < nranks; s++) {
        for (int p = 0; p < nranks; p++)
            stot[s] += v_count(s, p, rd, scale) + 1;
        in[s].resize(stot[s] * es + 1);
        cr_gen(in[s].data(), stot[s], t, GPURMA_SUM, s, rd);
    }
    for (size_t p = 0, at = 0; p < (size_t)nranks; p++) {
        sc[p] = v_count(me, (int)p, rd, scale), sd[p] = at, at += sc[p] + 1;
        rc[p] = v_count((int)p, me, rd, scale), rdp[p] = rtot, rtot += rc[p] + 1;
    }
    dbuf send(stot[me] * es), recv(rtot * es);
    h2d(send.p, in[me].data(), stot[me] * es);
    if (registered)
        GK(gpurma_coll_register(world, send.base, send.n + 2 * GUARD));
    char what[128];
    snprintf(what, sizeof(what), "alltoallv %s scale %zu%s%s", cr_dtype_names[t], scale,
             replays ? " graph" : "", registered ? " registered" : "");
    if (!replays) {
        GK(gpurma_alltoallv(world, send.p, sc.data(), sd.data(), recv.p, rc.data(), rdp.data(), t,
                            stream));
    } else {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        GK(gpurma_alltoallv(world, send.p, sc.data(), sd.data(), recv.p, rc.data(), rdp.data(), t,
                            stream));
        CK(cudaStreamEndCapture(stream, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        std::fill(sc.begin(), sc.end(), (size_t)-1); /* the graph must not read these */
        std::fill(rc.begin(), rc.end(), (size_t)-1);
        for (int i = 0; i < replays; i++) {
            CK(cudaMemsetAsync(recv.p, POISON, rtot * es, stream));
            CK(cudaGraphLaunch(exec, stream));
        }
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(graph));
    }
    CK(cudaStreamSynchronize(stream));
    auto h = recv.all();
    const unsigned char *got = h.data() + GUARD;
    EXPECT(!poison_left(h.data(), GUARD) && !poison_left(got + rtot * es, GUARD),
           "%s: a guard byte was written", what);
    long bad = 0;
    for (int s = 0; s < nranks; s++) {
        size_t soff = 0; /* where s's block for this rank starts in s's buffer */
        for (int p = 0; p < me; p++)
            soff += v_count(s, p, rd, scale) + 1;
        const size_t n_s = v_count(s, me, rd, scale);
        bad += memcmp(got + rdp[s] * es, in[s].data() + soff * es, n_s * es) != 0;
        bad += poison_left(got + (rdp[s] + n_s) * es, es);
    }
    EXPECT(!bad, "%s: %ld wrong blocks or poison bytes", what, bad);
    if (registered)
        GK(gpurma_coll_deregister(world, send.base));
}

/* ------------------------------------------------------------ device API */

__global__ void user_kernel(gpurma_dev_coll_t c, float *recv, const float *send, size_t count,
                            int *status)
{
    gpurma_status_t rc = gpurma_dev_coll_barrier_block(c);
    if (rc == GPURMA_SUCCESS)
        rc = gpurma_dev_coll_allreduce_block(c, recv, send, count, GPURMA_FLOAT32, GPURMA_MAX);
    if (threadIdx.x == 0)
        *status = (int)rc;
}

static void device_api(void)
{
    gpurma_dev_coll_t c;
    GK(gpurma_coll_device(world, GPURMA_MEM_DEVICE, &c));
    const size_t count = 1001;
    auto in = inputs(count, GPURMA_FLOAT32, GPURMA_MAX, ++round_no);
    std::vector<void *> inp(nranks);
    for (int r = 0; r < nranks; r++)
        inp[r] = in[r].data();
    dbuf send(count * 4), recv(count * 4);
    int *status;
    CK(cudaMalloc(&status, sizeof(int)));
    h2d(send.p, in[me].data(), count * 4);
    user_kernel<<<1, 256, 0, stream>>>(c, (float *)recv.p, (const float *)send.p, count, status);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    int st = -1;
    CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(st == GPURMA_SUCCESS, "user kernel: status %d", st);
    auto h = recv.all();
    EXPECT(!cr_check_reduced(h.data() + GUARD, inp.data(), nranks, 0, count, GPURMA_FLOAT32,
                             GPURMA_MAX, "user kernel allreduce"),
           "user kernel allreduce wrong");
    cudaFree(status);
}

/* Progress on rank 0, so that a run stopped by its time limit says where. */
static void phase(const char *what)
{
    if (me == 0) {
        printf("test_gpu_coll: %s\n", what);
        fflush(stdout);
    }
}

/* ------------------------------------------------- zero-copy refusals */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* After init, for the modes below: the world team and a stream; 77 (and
 * finalized) with fewer than 2 ranks. */
static int mode_start(const char *mode)
{
    world = gpurma_team_world(g_ctx);
    me = gpurma_team_rank(world);
    nranks = gpurma_team_size(world);
    if (nranks < 2) {
        printf("test_gpu_coll: %s needs 2 ranks or more, skipped\n", mode);
        (void)gpurma_finalize(g_ctx);
        return 77;
    }
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return 0;
}

/* "test_gpu_coll direct-mismatch" and "direct-absent" (separate runs: each
 * ends with the CUDA context gone). mismatch: the last rank passes its
 * registered buffers 256 bytes further than the others (another
 * fingerprint), so every rank's zero-copy kernel must stop with an error
 * well before the timeout, not run the call nor hang. absent: the last
 * rank's buffers are not registered (it runs another algorithm), so the
 * others never see its record and must fail at the timeout (run it with a
 * short GPURMA_TIMEOUT_MS). 1 MiB and a tail a rank, so that the call
 * goes zero-copy at the default GPURMA_COLL_DIRECT_MIN (past LL16's slots
 * too). */
static int direct_refusal_run(int absent)
{
    /* mismatch: a 30 s timeout, so that a quick failure is the fingerprint's;
     * absent: GPURMA_TIMEOUT_MS from the environment */
    if (absent)
        GK(gpurma_init(NULL, &g_ctx));
    else
        init_bounded();
    const int started = mode_start(absent ? "direct-absent" : "direct-mismatch");
    if (started)
        return started;
    const size_t count = (1u << 20) / 4 + 37, bytes = count * 4, shift = 256;
    dbuf sendb(bytes + shift), recvb(bytes + shift);
    std::vector<unsigned char> in(bytes + shift);
    for (size_t i = 0; i < in.size(); i++)
        in[i] = pattern_byte(0xd1ec7 + (uint64_t)me, i);
    CK(cudaMemcpy(sendb.p, in.data(), in.size(), cudaMemcpyHostToDevice));
    const int odd = me == nranks - 1;
    /* Registration is collective: the absent rank registers other buffers
     * beside the others' (kept to the end), so that its own are not. */
    dbuf other_s(absent && odd ? bytes + shift : 16), other_r(absent && odd ? bytes + shift : 16);
    GK(gpurma_coll_register(world, absent && odd ? other_s.p : sendb.p, bytes + shift));
    GK(gpurma_coll_register(world, absent && odd ? other_r.p : recvb.p, bytes + shift));
    GK(gpurma_barrier(world));
    const size_t at = !absent && odd ? shift : 0;
    double t0 = now_s();
    int rc = gpurma_allreduce(world, sendb.p + at, recvb.p + at, count, GPURMA_INT32, GPURMA_SUM,
                              stream);
    cudaError_t e = rc == GPURMA_SUCCESS ? cudaStreamSynchronize(stream) : cudaSuccess;
    double dt = now_s() - t0;
    printf("rank %d: zero-copy allreduce with %s: gpurma %d, stream %s after %.2f s\n", me,
           absent ? "a rank unregistered" : "another offset on one rank", rc,
           cudaGetErrorString(e), dt);
    EXPECT(rc != GPURMA_SUCCESS || e != cudaSuccess,
           "the allreduce completed although the ranks did not agree");
    if (!absent)
        EXPECT(dt < 10.0, "the mismatch took %.2f s: refused by a timeout, not the fingerprint",
               dt);
    (void)gpurma_finalize(g_ctx); /* the CUDA context is gone: errors expected */
    printf("rank %d: direct-%s %s\n", me, absent ? "absent" : "mismatch",
           failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}

/* Element i of rank r's send in the first-call test: small, so that sums
 * of up to 64 ranks stay exact in int32. */
__host__ __device__ inline int32_t first_value(int r, size_t i)
{
    return (int32_t)pattern_byte(0xf125700 + (uint64_t)r, i) - 128;
}

/* Counts the elements of recv that are not the sum over n ranks, on the
 * stream right after the collective, before any host synchronisation. */
__global__ void first_check(const int32_t *recv, size_t count, int n, unsigned long long *bad)
{
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        int32_t want = 0;
        for (int r = 0; r < n; r++)
            want += first_value(r, i);
        mine += recv[i] != want;
    }
    if (mine)
        atomicAdd(bad, mine);
}

/* The first zero-copy call of a team, one member slow: the last rank moves
 * its share with one thread block (GPURMA_COLL_DIRECT_BLOCKS=1, set before
 * init on that rank only), the others with up to 64. A member must not end
 * its call before every member is done with its buffers. Until 29d2395 the
 * first call's last meeting passed at once (the record's later-meeting word
 * started at the window's "never signalled" origin, UINT32_MAX): the fast
 * members ended with the slow one's share of their recv still unwritten,
 * which the check kernel, queued right behind the allreduce, counts. */
static int first_direct_run(void)
{
    const char *rank_env = getenv("RANK") ? getenv("RANK") : getenv("OMPI_COMM_WORLD_RANK");
    const char *size_env =
        getenv("WORLD_SIZE") ? getenv("WORLD_SIZE") : getenv("OMPI_COMM_WORLD_SIZE");
    if (!rank_env || !size_env) {
        printf("test_gpu_coll: direct-first picks its slow rank before init, from RANK and "
               "WORLD_SIZE or Open MPI's variables: none set, skipped\n");
        return 77;
    }
    const int slow = atoi(rank_env) == atoi(size_env) - 1;
    if (slow)
        setenv("GPURMA_COLL_DIRECT_BLOCKS", "1", 1);
    init_bounded();
    const int started = mode_start("direct-first");
    if (started)
        return started;
    const size_t count = (size_t)16 << 20, bytes = count * 4; /* 64 MiB: zero-copy */
    dbuf sendb(bytes), recvb(bytes);
    std::vector<int32_t> in(count);
    for (size_t i = 0; i < count; i++)
        in[i] = first_value(me, i);
    CK(cudaMemcpy(sendb.p, in.data(), bytes, cudaMemcpyHostToDevice));
    unsigned long long *bad = nullptr;
    CK(cudaMallocManaged(&bad, sizeof(*bad)));
    *bad = 0;
    GK(gpurma_coll_register(world, sendb.p, bytes));
    GK(gpurma_coll_register(world, recvb.p, bytes));
    GK(gpurma_barrier(world));
    double t0 = now_s();
    GK(gpurma_allreduce(world, sendb.p, recvb.p, count, GPURMA_INT32, GPURMA_SUM, stream));
    first_check<<<264, 512, 0, stream>>>((const int32_t *)recvb.p, count, nranks, bad);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    const double dt = now_s() - t0;
    printf("rank %d (%s): first zero-copy allreduce of %zu MiB: %llu elements wrong, %.1f ms\n",
           me, slow ? "one block" : "fast", bytes >> 20, *bad, 1e3 * dt);
    EXPECT(*bad == 0, "%llu elements of the first zero-copy allreduce were not there when the "
                      "call ended",
           *bad);
    const std::vector<unsigned char> h = recvb.all();
    EXPECT(!poison_left(h.data(), GUARD) && !poison_left(h.data() + GUARD + bytes, GUARD),
           "the first zero-copy allreduce wrote outside its recv");
    CK(cudaFree(bad));
    GK(gpurma_barrier(world));
    GK(gpurma_finalize(g_ctx));
    printf("rank %d: direct-first %s\n", me, failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}

/* "test_gpu_coll peer-death" (2 ranks or more, started without a launcher
 * that ends the job when a rank dies, e.g. the uid bootstrap; run with a
 * long GPURMA_TIMEOUT_MS): after one good allreduce the last rank kills
 * itself, a second later, while every other rank's next allreduce (an
 * LL16 count) waits for it on the stream. The host learns of the death
 * (gpurma_team_check_peers, which ncclCommGetAsyncError calls for torch's
 * watchdog); the kernel must then end without a trap, long before the
 * timeout, the CUDA context stay usable, and the team's later calls (past
 * LL16, zero-copy) be refused with PEER_FAILED before any kernel. A trap
 * breaks the context, and under MPS every process's on the GPU (on
 * 2026-11-28 a killed torch rank's peer trapped after the timeout and ended
 * the nccl-tests runs beside it). */
static int peer_death_run(void)
{
    GK(gpurma_init(NULL, &g_ctx));
    const int started = mode_start("peer-death");
    if (started)
        return started;
    const size_t big = (2u << 20) / 4 + 37, bytes = big * 4;
    dbuf sendb(bytes), recvb(bytes), regs(bytes), regr(bytes);
    std::vector<unsigned char> in(bytes);
    for (size_t i = 0; i < bytes; i++)
        in[i] = pattern_byte(0xdea7 + (uint64_t)me, i);
    CK(cudaMemcpy(sendb.p, in.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(regs.p, in.data(), bytes, cudaMemcpyHostToDevice));
    GK(gpurma_coll_register(world, regs.p, bytes));
    GK(gpurma_coll_register(world, regr.p, bytes));
    GK(gpurma_allreduce(world, sendb.p, recvb.p, 1000, GPURMA_INT32, GPURMA_SUM, stream));
    CK(cudaStreamSynchronize(stream));
    GK(gpurma_barrier(world));
    if (me == nranks - 1) { /* as torch's killed rank (exit status 137) */
        usleep(1000 * 1000);
        printf("rank %d: killing itself\n", me);
        fflush(stdout);
        raise(SIGKILL);
    }
    const double t0 = now_s();
    GK(gpurma_allreduce(world, sendb.p, recvb.p, 37, GPURMA_INT32, GPURMA_SUM, stream));
    int known;
    while (!(known = gpurma_team_check_peers(world) == GPURMA_ERR_PEER_FAILED) &&
           now_s() - t0 < 30)
        usleep(1000);
    const double t_known = now_s() - t0;
    EXPECT(known, "the death went unnoticed for %.1f s", t_known);
    cudaError_t e;
    while ((e = cudaStreamQuery(stream)) == cudaErrorNotReady && now_s() - t0 < 40)
        usleep(1000);
    const double t_done = now_s() - t0;
    EXPECT(e == cudaSuccess, "the stream after the death: %s after %.1f s (a trap, or still "
                             "waiting)", cudaGetErrorString(e), t_done);
    const struct {
        const char *what;
        void *send, *recv;
    } later[] = {{"stepped", sendb.p, recvb.p}, {"zero-copy", regs.p, regr.p}};
    for (const auto &c : later) {
        const int rc = gpurma_allreduce(world, c.send, c.recv, big, GPURMA_INT32, GPURMA_SUM,
                                        stream);
        EXPECT(rc == GPURMA_ERR_PEER_FAILED && strstr(gpurma_last_error_message(g_ctx), "died"),
               "%s allreduce after the death: %d (%s)", c.what, rc,
               gpurma_last_error_message(g_ctx));
    }
    /* the context is whole: a copy on it works */
    if (e == cudaSuccess) {
        CK(cudaMemsetAsync(recvb.p, 0x5a, 64, stream));
        CK(cudaStreamSynchronize(stream));
        EXPECT(recvb.all()[GUARD] == 0x5a, "a memset after the death did not land");
    }
    printf("rank %d: death known after %.2f s, stream drained after %.2f s (%s)\n", me, t_known,
           t_done, cudaGetErrorString(e));
    (void)gpurma_finalize(g_ctx); /* PEER_FAILED expected */
    printf("rank %d: peer-death %s\n", me, failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    skip_without_gpu("test_gpu_coll");
    if (argc > 1 && !strcmp(argv[1], "direct-mismatch"))
        return direct_refusal_run(0);
    if (argc > 1 && !strcmp(argv[1], "direct-absent"))
        return direct_refusal_run(1);
    if (argc > 1 && !strcmp(argv[1], "direct-first"))
        return first_direct_run();
    if (argc > 1 && !strcmp(argv[1], "peer-death"))
        return peer_death_run();
    int replays = 1000, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: test_gpu_coll [REPLAYS] [--quick]\n"
                   "       test_gpu_coll direct-mismatch|direct-absent|direct-first|peer-death\n"
                   "  REPLAYS  graph replays per size (default 1000)\n"
                   "  --quick  int8, int32, float32 and float64 only, in the per-call matrix\n"
                   "  direct-mismatch, direct-absent: a zero-copy call one rank does not agree\n"
                   "           to or misses (refused, the kernels trapped)\n"
                   "  direct-first: a new team's first zero-copy call, the last rank slow\n"
                   "  peer-death: the last rank dies; the others' collectives end, no trap\n");
            return 0;
        } else
            replays = atoi(argv[i]);
    }
    init_bounded();
    world = gpurma_team_world(g_ctx);
    me = gpurma_team_rank(world);
    nranks = gpurma_team_size(world);
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    /* Bad input first: host memory with a stream. */
    std::vector<float> hostbuf(16);
    int rc = gpurma_allreduce(world, hostbuf.data(), hostbuf.data(), 16, GPURMA_FLOAT32,
                              GPURMA_SUM, stream);
    EXPECT(rc == GPURMA_ERR_INVALID_ARG, "host memory with a stream: %d", rc);
    /* and GPU buffers not aligned to their element size, refused before
     * any kernel could fault on them */
    {
        dbuf b(64);
        rc = gpurma_allreduce(world, b.p + 4, b.p + 4, 4, GPURMA_FLOAT64, GPURMA_SUM, stream);
        EXPECT(rc == GPURMA_ERR_INVALID_ARG, "misaligned float64 buffer: %d", rc);
        EXPECT(!poison_left(b.all().data(), 0) && b.all()[GUARD + 4] == POISON,
               "misaligned float64 buffer: written");
    }

    /* A count of 0 on every rank: each collective still takes one step of
     * empty pieces (so that a rank passing 0 beside ranks that pass more
     * fails with them); here every rank agrees, so each succeeds, writes
     * nothing, and the team stays in step for the calls after it. */
    phase("count 0 on every rank");
    {
        dbuf b(256);
        for (int kind = K_ALLREDUCE; kind <= K_BROADCAST; kind++)
            for (int root = 0; root < (kind == K_REDUCE || kind == K_BROADCAST ? nranks : 1);
                 root++) {
                void *in = b.p, *out = b.p + 128;
                switch (kind) {
                case K_ALLREDUCE:
                    rc = gpurma_allreduce(world, in, out, 0, GPURMA_INT32, GPURMA_SUM, stream);
                    break;
                case K_REDUCE_SCATTER:
                    rc = gpurma_reduce_scatter(world, in, out, 0, GPURMA_FLOAT32, GPURMA_MAX,
                                               stream);
                    break;
                case K_REDUCE:
                    rc = gpurma_reduce(world, in, out, 0, GPURMA_INT64, GPURMA_SUM, root, stream);
                    break;
                case K_ALLGATHER:
                    rc = gpurma_allgather(world, in, out, 0, GPURMA_INT8, stream);
                    break;
                case K_ALLTOALL:
                    rc = gpurma_alltoall(world, in, out, 0, GPURMA_UINT32, stream);
                    break;
                default:
                    rc = gpurma_broadcast(world, in, out, 0, GPURMA_FLOAT64, root, stream);
                    break;
                }
                EXPECT(rc == GPURMA_SUCCESS, "%s with count 0 on every rank: %d",
                       kind_names[kind], rc);
            }
        CK(cudaStreamSynchronize(stream));
        EXPECT(!poison_left(b.all().data(), b.n + 2 * GUARD), "count 0: a byte was written");
    }

    /* Odd counts: one LL step, one data step, several (128 KiB slots);
     * 261001 four-byte elements fill LL16's 128 channels (one rank a GPU)
     * to within 16 bytes of their slots (parts of 8160 bytes a peer, 8176
     * fit); ranks sharing a GPU share its channels, and take another path. */
    static const size_t counts[] = {1, 37, 4099, 300007, 261001};
    phase("every collective, one call at a time");
    for (int kind = K_ALLREDUCE; kind <= K_BROADCAST; kind++)
        for (int t = GPURMA_INT8; t <= GPURMA_FLOAT64; t++) {
            if (quick && t != GPURMA_INT8 && t != GPURMA_INT32 && t != GPURMA_FLOAT32 &&
                t != GPURMA_FLOAT64)
                continue;
            for (size_t ci = 0; ci < 5; ci++) {
                /* the two largest counts for two types, the rest for all */
                if (ci >= 3 && t != GPURMA_INT32 && t != GPURMA_FLOAT32)
                    continue;
                int nops = kind <= K_REDUCE ? CR_NOPS : 1;
                for (int op = 0; op < nops; op++)
                    for (int inplace = 0; inplace < 2; inplace++)
                        one(kind, (gpurma_dtype_t)t, (gpurma_redop_t)op, counts[ci], inplace);
            }
        }
    phase("bursts and chains");
    for (size_t count : counts) {
        burst(GPURMA_INT32, count, 2);
        burst(GPURMA_FLOAT64, count, 1);
        chain(count, 6);
    }
    phase("alltoallv");
    for (int t = GPURMA_INT8; t <= GPURMA_FLOAT64; t++)
        for (size_t scale : {(size_t)1, (size_t)13, (size_t)20011})
            alltoallv_one((gpurma_dtype_t)t, scale, 0);
    alltoallv_one(GPURMA_INT32, 13, 5);
    alltoallv_one(GPURMA_FLOAT64, 20011, 5);
    for (int t : {GPURMA_INT8, GPURMA_BFLOAT16, GPURMA_FLOAT64})
        alltoallv_one((gpurma_dtype_t)t, 40009, 0, 1);
    alltoallv_one(GPURMA_INT32, 20011, 5, 1);
    phase("registered buffers (zero-copy collectives)");
    registered(quick);
    registered_kinds(quick);
    phase("graph registration (zero-copy on unregistered buffers)");
    graph_registered(quick);
    phase("graph replays");
    graph_replay(100, replays);
    graph_replay(70001, replays);
    device_api();

    GK(gpurma_barrier(world));
    if (me == 0)
        printf("%s test_gpu_coll: %d ranks, %d graph replays\n", failures ? "FAIL" : "PASS",
               nranks, replays);
    GK(gpurma_finalize(g_ctx));
    return failures ? 1 : 0;
}
