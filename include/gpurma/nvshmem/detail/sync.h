/*
 * sync.h - PE and team queries, ordering (fence, quiet), signals on any
 * symmetric 64-bit word, the wait_until and test families, and barriers.
 */
#ifndef GPURMA_NVSHMEM_DETAIL_SYNC_H
#define GPURMA_NVSHMEM_DETAIL_SYNC_H

#include "gpurma/nvshmem/detail/amo.h"

/* ------------------------------------------------------------- queries */

GPURMA_NVSHMEMI_HD int nvshmem_my_pe(void)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    return gpurma_nvshmemi__devpath("nvshmem_my_pe") ? gpurma_nvshmemi_st.my_pe : -1;
#else
    return gpurma_nvshmemi_my_pe();
#endif
}
GPURMA_NVSHMEMI_HD int nvshmem_n_pes(void)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    return gpurma_nvshmemi__devpath("nvshmem_n_pes") ? gpurma_nvshmemi_st.n_pes : -1;
#else
    return gpurma_nvshmemi_n_pes();
#endif
}

#if GPURMA_NVSHMEMI_DEVICE_PASS
/* The unit's copy of a team, or the call fails. */
GPURMA_NVSHMEMI_D gpurma_nvshmemi_team_t gpurma_nvshmemi__team(const char *call,
                                                               nvshmem_team_t team)
{
    gpurma_nvshmemi__devpath(call);
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || gpurma_nvshmemi_st.teams[team].size <= 0)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "invalid team");
    return gpurma_nvshmemi_st.teams[team];
}
#endif

GPURMA_NVSHMEMI_HD int nvshmem_team_my_pe(nvshmem_team_t team)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS)
        return -1;
    return gpurma_nvshmemi__team("nvshmem_team_my_pe", team).my_pe;
#else
    return gpurma_nvshmemi_team_my_pe(team);
#endif
}
GPURMA_NVSHMEMI_HD int nvshmem_team_n_pes(nvshmem_team_t team)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS)
        return -1;
    return gpurma_nvshmemi__team("nvshmem_team_n_pes", team).size;
#else
    return gpurma_nvshmemi_team_n_pes(team);
#endif
}
GPURMA_NVSHMEMI_HD int nvshmem_team_translate_pe(nvshmem_team_t src_team, int src_pe,
                                                 nvshmem_team_t dest_team)
{
#if GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_team_t s = gpurma_nvshmemi__team("nvshmem_team_translate_pe", src_team);
    gpurma_nvshmemi_team_t d = gpurma_nvshmemi__team("nvshmem_team_translate_pe", dest_team);
    if (src_pe < 0 || src_pe >= s.size || !s.stride || !d.stride)
        return -1;
    int world = s.start + src_pe * s.stride;
    int rel = world - d.start;
    if (rel < 0 || rel % d.stride || rel / d.stride >= d.size)
        return -1;
    return rel / d.stride;
#else
    return gpurma_nvshmemi_team_translate_pe(src_team, src_pe, dest_team);
#endif
}

GPURMA_NVSHMEMI_HD void *nvshmem_ptr(const void *dest, int pe)
{
    return gpurma_nvshmemi__ptr(dest, pe);
}

/* ------------------------------------------------------------ ordering */

GPURMA_NVSHMEMI_HD void nvshmem_fence(void) { gpurma_nvshmemi__fence("nvshmem_fence"); }
GPURMA_NVSHMEMI_HD void nvshmem_quiet(void) { gpurma_nvshmemi__quiet("nvshmem_quiet"); }

/* --------------------------------------------------------------- signals */

#if GPURMA_NVSHMEMI_HAS_DEVPATH
GPURMA_NVSHMEMI_D uint64_t *gpurma_nvshmemi__signal_word_dev(const char *call,
                                                                uint64_t *sig_addr, int pe)
{
    if (!gpurma_nvshmemi__devpath(call))
        return NULL;
    if ((uintptr_t)sig_addr & 7)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_MISALIGNED, "the signal word is not 8-byte aligned");
    int seg;
    size_t off = gpurma_nvshmemi__offset(call, sig_addr, 8, &seg);
    return (uint64_t *)gpurma_nvshmemi__direct(seg, pe, off, 8);
}
#endif

/* The mapped address of pe's signal word (8-byte aligned, in the heap), or
 * NULL when pe is not reached by load/store (or this is host code). */
GPURMA_NVSHMEMI_D uint64_t *gpurma_nvshmemi__signal_word(const char *call, uint64_t *sig_addr,
                                                         int pe)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    uint64_t *fast = (uint64_t *)gpurma_nvshmemi__heap_peer(sig_addr, 8, pe);
    if (fast && !((uintptr_t)sig_addr & 7))
        return fast;
    return gpurma_nvshmemi__signal_word_dev(call, sig_addr, pe);
#else
    (void)call, (void)sig_addr, (void)pe;
    return NULL;
#endif
}

/* The fast path of a signal: pe's copy of an aligned signal word in the
 * heap's program part, or NULL. */
GPURMA_NVSHMEMI_D uint64_t *gpurma_nvshmemi__signal_fast(const uint64_t *sig_addr, int pe)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    uint64_t *fast = (uint64_t *)gpurma_nvshmemi__heap_peer(sig_addr, 8, pe);
    return fast && !((uintptr_t)sig_addr & 7) ? fast : (uint64_t *)0;
#else
    (void)sig_addr, (void)pe;
    return (uint64_t *)0;
#endif
}

/* A signal off the fast path: to a mapped word elsewhere one release store
 * or add; otherwise a fence, then an atomic on the word. */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__signal_body(const char *call, uint64_t *sig_addr,
                                                     uint64_t signal, int sig_op, int pe)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    uint64_t *direct = gpurma_nvshmemi__signal_word(call, sig_addr, pe);
    if (direct) {
        gpurma_nvshmemi__signal_release(direct, signal, sig_op == NVSHMEM_SIGNAL_ADD);
        return;
    }
    if (gpurma_nvshmemi__devpath(call))
        gpurma_nvshmemi__fence_body(call);
    else
#endif
        gpurma_nvshmemi__fence(call);
    gpurma_nvshmemi__amo64(call,
                           sig_op == NVSHMEM_SIGNAL_SET ? GPURMA_DEV__ATOMIC_SWAP
                                                        : GPURMA_DEV__ATOMIC_FETCH_ADD,
                           sig_addr, signal, 0, pe, 0);
}
GPURMA_NVSHMEMI_HD_COLD void gpurma_nvshmemi__signal_general(const char *call, uint64_t *sig_addr,
                                                             uint64_t signal, int sig_op, int pe)
{
    gpurma_nvshmemi__signal_body(call, sig_addr, signal, sig_op, pe);
}

/* Earlier puts of this PE to pe are visible when pe observes the new value:
 * to a mapped PE one release store or add (no fence, no reply to wait
 * for). */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__signal(const char *call, uint64_t *sig_addr,
                                                uint64_t signal, int sig_op, int pe)
{
    if (sig_op != NVSHMEM_SIGNAL_SET && sig_op != NVSHMEM_SIGNAL_ADD)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "sig_op is neither SET nor ADD");
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    uint64_t *fast = gpurma_nvshmemi__signal_fast(sig_addr, pe);
    if (fast) {
        gpurma_nvshmemi__signal_release(fast, signal, sig_op == NVSHMEM_SIGNAL_ADD);
        return;
    }
#endif
    gpurma_nvshmemi__signal_general(call, sig_addr, signal, sig_op, pe);
}

GPURMA_NVSHMEMI_HD void nvshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op,
                                           int pe)
{
    gpurma_nvshmemi__signal("nvshmemx_signal_op", sig_addr, signal, sig_op, pe);
}

/* put_signal off the fast path: the put (which issues the stores, or a
 * descriptor), then the signal (after a mapped word's release or the
 * port engine's fence). */
GPURMA_NVSHMEMI_HD_COLD void gpurma_nvshmemi__put_signal_general(const char *call, void *dest,
                                                                 const void *source, size_t bytes,
                                                                 uint64_t *sig_addr,
                                                                 uint64_t signal, int sig_op,
                                                                 int pe, int nbi)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (gpurma_nvshmemi__devpath(call)) {
        gpurma_nvshmemi__put_body(call, dest, source, bytes, pe, 1);
        if (sig_op != NVSHMEM_SIGNAL_SET && sig_op != NVSHMEM_SIGNAL_ADD)
            gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "sig_op is neither SET nor ADD");
        gpurma_nvshmemi__signal_body(call, sig_addr, signal, sig_op, pe);
        if (!nbi && gpurma_nvshmemi_st.any_port)
            gpurma_nvshmemi__each(call, GPURMA_NVSHMEMI_FLUSH_LOCAL, pe);
        return;
    }
#endif
    gpurma_nvshmemi__put(call, dest, source, bytes, pe, 1);
    gpurma_nvshmemi__signal(call, sig_addr, signal, sig_op, pe);
    if (!nbi)
        gpurma_nvshmemi__flush(call, pe);
}

/* A mapped PE: the stores, then the signal's release store or add, which
 * publishes them; the source is reusable once they are issued. */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__put_signal(const char *call, void *dest,
                                                    const void *source, size_t bytes,
                                                    uint64_t *sig_addr, uint64_t signal,
                                                    int sig_op, int pe, int nbi)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (sig_op == NVSHMEM_SIGNAL_SET || sig_op == NVSHMEM_SIGNAL_ADD) {
        char *fast = gpurma_nvshmemi__heap_peer(dest, bytes, pe);
        uint64_t *word = gpurma_nvshmemi__signal_fast(sig_addr, pe);
        if (fast && word && (source || !bytes)) {
            gpurma_nvshmemi__copy(fast, source, bytes, 0, 1, 1);
            gpurma_nvshmemi__signal_release(word, signal, sig_op == NVSHMEM_SIGNAL_ADD);
            return;
        }
    }
#endif
    gpurma_nvshmemi__put_signal_general(call, dest, source, bytes, sig_addr, signal, sig_op, pe,
                                        nbi);
}

#if GPURMA_NVSHMEMI_CUDA
/* The group forms off the fast path: the group's put (which meets), then
 * one thread's signal. */
GPURMA_NVSHMEMI_COLD void gpurma_nvshmemi__put_signal_group_general(
    const char *call, void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
    uint64_t signal, int sig_op, int pe, int nbi, int scope)
{
    unsigned tid = scope == GPURMA_NVSHMEMI_WARP ? gpurma_sh_lane() : gpurma_sh_block_tid();
    unsigned nthreads = scope == GPURMA_NVSHMEMI_WARP ? 32u : gpurma_sh_block_threads();
    gpurma_nvshmemi__rma_group_body(call, 0, dest, source, bytes, pe, 1, scope, tid, nthreads);
    if (tid == 0) {
        if (sig_op != NVSHMEM_SIGNAL_SET && sig_op != NVSHMEM_SIGNAL_ADD)
            gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "sig_op is neither SET nor ADD");
        gpurma_nvshmemi__signal_body(call, sig_addr, signal, sig_op, pe);
        if (!nbi && gpurma_nvshmemi_st.any_port)
            gpurma_nvshmemi__each(call, GPURMA_NVSHMEMI_FLUSH_LOCAL, pe);
    }
    gpurma_nvshmemi__group_sync(scope);
}
#endif

/* Group forms: the group puts, then one thread signals. A mapped PE: each
 * thread stores its share, the group meets once, and one thread's release
 * store or add publishes all of it. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__put_signal_group(const char *call, void *dest,
                                                         const void *source, size_t bytes,
                                                         uint64_t *sig_addr, uint64_t signal,
                                                         int sig_op, int pe, int nbi, int scope)
{
#if GPURMA_NVSHMEMI_CUDA
    if (sig_op == NVSHMEM_SIGNAL_SET || sig_op == NVSHMEM_SIGNAL_ADD) {
        char *fast = gpurma_nvshmemi__heap_peer(dest, bytes, pe);
        uint64_t *word = gpurma_nvshmemi__signal_fast(sig_addr, pe);
        if (fast && word && (source || !bytes)) {
            unsigned tid =
                scope == GPURMA_NVSHMEMI_WARP ? gpurma_sh_lane() : gpurma_sh_block_tid();
            unsigned nthreads =
                scope == GPURMA_NVSHMEMI_WARP ? 32u : gpurma_sh_block_threads();
            gpurma_nvshmemi__copy(fast, source, bytes, tid, nthreads,
                                  scope == GPURMA_NVSHMEMI_WARP);
            gpurma_nvshmemi__group_sync(scope);
            if (tid == 0)
                gpurma_nvshmemi__signal_release(word, signal, sig_op == NVSHMEM_SIGNAL_ADD);
            return;
        }
    }
    gpurma_nvshmemi__put_signal_group_general(call, dest, source, bytes, sig_addr, signal, sig_op,
                                              pe, nbi, scope);
#else
    gpurma_nvshmemi__rma_group(call, 0, dest, source, bytes, pe, 1, scope);
    if (gpurma_nvshmemi__group_leader(scope)) {
        gpurma_nvshmemi__signal(call, sig_addr, signal, sig_op, pe);
        if (!nbi)
            gpurma_nvshmemi__flush(call, pe);
    }
    gpurma_nvshmemi__group_sync(scope);
#endif
}

#define GPURMA_NVSHMEMI_PUT_SIGNAL(PUT, TYPE, ESIZE)                                        \
    GPURMA_NVSHMEMI_HD void PUT##_signal(TYPE *dest, const TYPE *source, size_t nelems,     \
                                         uint64_t *sig_addr, uint64_t signal, int sig_op,   \
                                         int pe)                                            \
    {                                                                                       \
        gpurma_nvshmemi__put_signal(#PUT "_signal", dest, source,                           \
                                    gpurma_nvshmemi__bytes(#PUT, nelems, ESIZE), sig_addr,  \
                                    signal, sig_op, pe, 0);                                 \
    }                                                                                       \
    GPURMA_NVSHMEMI_HD void PUT##_signal_nbi(TYPE *dest, const TYPE *source, size_t nelems, \
                                             uint64_t *sig_addr, uint64_t signal,           \
                                             int sig_op, int pe)                            \
    {                                                                                       \
        gpurma_nvshmemi__put_signal(#PUT "_signal_nbi", dest, source,                       \
                                    gpurma_nvshmemi__bytes(#PUT, nelems, ESIZE), sig_addr,  \
                                    signal, sig_op, pe, 1);                                 \
    }
#define GPURMA_NVSHMEMI_PUT_SIGNAL_GROUP(XPUT, TYPE, ESIZE, SCOPE, S)                       \
    GPURMA_NVSHMEMI_D void XPUT##_signal_##SCOPE(TYPE *dest, const TYPE *source,            \
                                                 size_t nelems, uint64_t *sig_addr,         \
                                                 uint64_t signal, int sig_op, int pe)       \
    {                                                                                       \
        gpurma_nvshmemi__put_signal_group(#XPUT "_signal_" #SCOPE, dest, source,            \
                                          gpurma_nvshmemi__bytes(#XPUT, nelems, ESIZE),     \
                                          sig_addr, signal, sig_op, pe, 0, S);              \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void XPUT##_signal_nbi_##SCOPE(TYPE *dest, const TYPE *source,        \
                                                     size_t nelems, uint64_t *sig_addr,     \
                                                     uint64_t signal, int sig_op, int pe)   \
    {                                                                                       \
        gpurma_nvshmemi__put_signal_group(#XPUT "_signal_nbi_" #SCOPE, dest, source,        \
                                          gpurma_nvshmemi__bytes(#XPUT, nelems, ESIZE),     \
                                          sig_addr, signal, sig_op, pe, 1, S);              \
    }
#define GPURMA_NVSHMEMI_PUT_SIGNAL_ALL(PUT, XPUT, TYPE, ESIZE)                              \
    GPURMA_NVSHMEMI_PUT_SIGNAL(PUT, TYPE, ESIZE)                                            \
    GPURMA_NVSHMEMI_PUT_SIGNAL_GROUP(XPUT, TYPE, ESIZE, warp, GPURMA_NVSHMEMI_WARP)         \
    GPURMA_NVSHMEMI_PUT_SIGNAL_GROUP(XPUT, TYPE, ESIZE, block, GPURMA_NVSHMEMI_BLOCK)
#define GPURMA_NVSHMEMI_PUT_SIGNAL_TYPED(NAME, TYPE)                                        \
    GPURMA_NVSHMEMI_PUT_SIGNAL_ALL(nvshmem_##NAME##_put, nvshmemx_##NAME##_put, TYPE,       \
                                   sizeof(TYPE))
#define GPURMA_NVSHMEMI_PUT_SIGNAL_SIZED(BITS, TYPE)                                        \
    GPURMA_NVSHMEMI_PUT_SIGNAL_ALL(nvshmem_put##BITS, nvshmemx_put##BITS, void, BITS / 8)
GPURMA_NVSHMEMI_RMA_TYPES(GPURMA_NVSHMEMI_PUT_SIGNAL_TYPED)
GPURMA_NVSHMEMI_SIZED_TYPES(GPURMA_NVSHMEMI_PUT_SIGNAL_SIZED)
GPURMA_NVSHMEMI_PUT_SIGNAL_ALL(nvshmem_putmem, nvshmemx_putmem, void, 1)

/* ------------------------------------------------------ local waits */

/* One acquire load of this PE's own word of 2, 4 or 8 bytes, zero-extended. */
GPURMA_NVSHMEMI_D uint64_t gpurma_nvshmemi__load(const void *addr, size_t size)
{
    /* ld.acquire, not a load and a full fence per poll */
    return gpurma_nvshmemi__load_acquire(addr, size);
}

/* Whether the wait that began at *start (0 before the first poll) is over
 * its time; a wait longer than GPURMA_TIMEOUT_MS ends the job with the
 * call's name instead of hanging it. */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__poll(const char *call, uint64_t iter, uint64_t *start)
{
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    if (gpurma_nvshmemi_st.magic != GPURMA_NVSHMEMI_STATE_LIVE)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_NOT_INITIALIZED, "called before nvshmem_init");
#endif
    if (gpurma_dev__expired(iter, start, gpurma_nvshmemi_st.win.timeout_ns))
        gpurma_nvshmemi__fail(call, GPURMA_ERR_TIMEOUT,
                              "no value satisfied the comparison within GPURMA_TIMEOUT_MS");
    gpurma_sh_pause_n(iter);
}

#define GPURMA_NVSHMEMI_CMP(TYPE, a, cmp, b)                                                \
    ((cmp) == NVSHMEM_CMP_EQ   ? (a) == (b)                                                 \
     : (cmp) == NVSHMEM_CMP_NE ? (a) != (b)                                                 \
     : (cmp) == NVSHMEM_CMP_GT ? (a) > (b)                                                  \
     : (cmp) == NVSHMEM_CMP_GE ? (a) >= (b)                                                 \
     : (cmp) == NVSHMEM_CMP_LT ? (a) < (b)                                                  \
                               : (a) <= (b))

/* The wait and test families of one type. status[i] != 0 excludes ivars[i];
 * status may be NULL. _vector forms compare each ivars[i] to values[i]. */
#define GPURMA_NVSHMEMI_P2P(NAME, TYPE)                                                     \
    GPURMA_NVSHMEMI_D int gpurma_nvshmemi__test_##NAME(const char *call, TYPE *ivar, int cmp, \
                                                       TYPE value)                          \
    {                                                                                       \
        if (cmp < NVSHMEM_CMP_EQ || cmp >= NVSHMEM_CMP_SENTINEL)                            \
            gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "unknown comparison");      \
        uint64_t bits = gpurma_nvshmemi__load(ivar, sizeof(TYPE));                          \
        TYPE v;                                                                             \
        memcpy(&v, &bits, sizeof(TYPE));                                                    \
        return GPURMA_NVSHMEMI_CMP(TYPE, v, cmp, value);                                    \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmem_##NAME##_test(TYPE *ivar, int cmp, TYPE value)            \
    {                                                                                       \
        return gpurma_nvshmemi__test_##NAME("nvshmem_" #NAME "_test", ivar, cmp, value);    \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void nvshmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE value)     \
    {                                                                                       \
        uint64_t start = 0;                                                                 \
        for (uint64_t it = 0;                                                               \
             !gpurma_nvshmemi__test_##NAME("nvshmem_" #NAME "_wait_until", ivar, cmp, value); \
             it++)                                                                          \
            gpurma_nvshmemi__poll("nvshmem_" #NAME "_wait_until", it, &start);              \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void nvshmem_##NAME##_wait(TYPE *ivar, TYPE value)                    \
    {                                                                                       \
        nvshmem_##NAME##_wait_until(ivar, NVSHMEM_CMP_NE, value);                           \
    }                                                                                       \
    /* Over the included ivars: how many satisfy (their indices in idx, if given),          \
     * the first that does in *first (SIZE_MAX: none), how many are included. */            \
    GPURMA_NVSHMEMI_D size_t gpurma_nvshmemi__scan_##NAME(const char *call, TYPE *ivars,    \
                                                          size_t nelems, const int *status, \
                                                          int cmp, TYPE value,              \
                                                          const TYPE *values, size_t *idx,  \
                                                          size_t *first, size_t *included)  \
    {                                                                                       \
        size_t hits = 0;                                                                    \
        *included = 0;                                                                      \
        *first = SIZE_MAX;                                                                  \
        for (size_t i = 0; i < nelems; i++) {                                               \
            if (status && status[i])                                                        \
                continue;                                                                   \
            ++*included;                                                                    \
            if (gpurma_nvshmemi__test_##NAME(call, &ivars[i], cmp, values ? values[i] : value)) { \
                if (idx)                                                                    \
                    idx[hits] = i;                                                          \
                if (!hits)                                                                  \
                    *first = i;                                                             \
                hits++;                                                                     \
            }                                                                               \
        }                                                                                   \
        return hits;                                                                        \
    }                                                                                       \
    /* mode 0: all, 1: any (returns the index), 2: some (returns the count). */             \
    GPURMA_NVSHMEMI_D size_t gpurma_nvshmemi__wait_##NAME(const char *call, TYPE *ivars,    \
                                                          size_t nelems, const int *status, \
                                                          int cmp, TYPE value,              \
                                                          const TYPE *values, size_t *idx,  \
                                                          int mode, int once)               \
    {                                                                                       \
        uint64_t start = 0;                                                                 \
        for (uint64_t it = 0;; it++) {                                                      \
            size_t first, included;                                                         \
            size_t hits = gpurma_nvshmemi__scan_##NAME(call, ivars, nelems, status, cmp,    \
                                                       value, values,                       \
                                                       mode == 2 ? idx : (size_t *)0, &first, \
                                                       &included);                          \
            if (mode == 0 && hits == included)                                              \
                return 1;                                                                   \
            if (mode == 1 && (hits || !included))                                           \
                return hits ? first : SIZE_MAX;                                             \
            if (mode == 2 && (hits || !included))                                           \
                return hits;                                                                \
            if (once)                                                                       \
                return mode == 1 ? SIZE_MAX : 0;                                            \
            gpurma_nvshmemi__poll(call, it, &start);                                        \
        }                                                                                   \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void nvshmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems,      \
                                                           const int *status, int cmp,      \
                                                           TYPE value)                      \
    {                                                                                       \
        gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_wait_until_all", ivars, nelems,     \
                                     status, cmp, value, (const TYPE *)0, (size_t *)0, 0, 0); \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems,    \
                                                             const int *status, int cmp,    \
                                                             TYPE value)                    \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_wait_until_any", ivars,      \
                                            nelems, status, cmp, value, (const TYPE *)0,    \
                                            (size_t *)0, 1, 0);                             \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems,   \
                                                              size_t *indices,              \
                                                              const int *status, int cmp,   \
                                                              TYPE value)                   \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_wait_until_some", ivars,     \
                                            nelems, status, cmp, value, (const TYPE *)0,    \
                                            indices, 2, 0);                                 \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void nvshmem_##NAME##_wait_until_all_vector(                          \
        TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE *values)               \
    {                                                                                       \
        gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_wait_until_all_vector", ivars,      \
                                     nelems, status, cmp, 0, values, (size_t *)0, 0, 0);    \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_wait_until_any_vector(                        \
        TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE *values)               \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_wait_until_any_vector",      \
                                            ivars, nelems, status, cmp, 0, values,          \
                                            (size_t *)0, 1, 0);                             \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_wait_until_some_vector(                       \
        TYPE *ivars, size_t nelems, size_t *indices, const int *status, int cmp,            \
        TYPE *values)                                                                       \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_wait_until_some_vector",     \
                                            ivars, nelems, status, cmp, 0, values, indices, \
                                            2, 0);                                          \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmem_##NAME##_test_all(TYPE *ivars, size_t nelems,             \
                                                    const int *status, int cmp, TYPE value) \
    {                                                                                       \
        return (int)gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_test_all", ivars, nelems, \
                                                 status, cmp, value, (const TYPE *)0,       \
                                                 (size_t *)0, 0, 1);                        \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_test_any(TYPE *ivars, size_t nelems,          \
                                                       const int *status, int cmp,          \
                                                       TYPE value)                          \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_test_any", ivars, nelems,    \
                                            status, cmp, value, (const TYPE *)0,            \
                                            (size_t *)0, 1, 1);                             \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_test_some(TYPE *ivars, size_t nelems,         \
                                                        size_t *indices, const int *status, \
                                                        int cmp, TYPE value)                \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_test_some", ivars, nelems,   \
                                            status, cmp, value, (const TYPE *)0, indices, 2, \
                                            1);                                             \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems,      \
                                                           const int *status, int cmp,      \
                                                           TYPE *values)                    \
    {                                                                                       \
        return (int)gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_test_all_vector", ivars, \
                                                 nelems, status, cmp, 0, values,            \
                                                 (size_t *)0, 0, 1);                        \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems,   \
                                                              const int *status, int cmp,   \
                                                              TYPE *values)                 \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_test_any_vector", ivars,     \
                                            nelems, status, cmp, 0, values, (size_t *)0, 1, \
                                            1);                                             \
    }                                                                                       \
    GPURMA_NVSHMEMI_D size_t nvshmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems,  \
                                                               size_t *indices,             \
                                                               const int *status, int cmp,  \
                                                               TYPE *values)                \
    {                                                                                       \
        return gpurma_nvshmemi__wait_##NAME("nvshmem_" #NAME "_test_some_vector", ivars,    \
                                            nelems, status, cmp, 0, values, indices, 2, 1); \
    }
GPURMA_NVSHMEMI_P2P_TYPES(GPURMA_NVSHMEMI_P2P)

GPURMA_NVSHMEMI_D uint64_t nvshmem_signal_fetch(const uint64_t *sig_addr)
{
    return gpurma_nvshmemi__load(sig_addr, 8);
}
/* Returns the value that satisfied the comparison. */
GPURMA_NVSHMEMI_D uint64_t nvshmem_signal_wait_until(uint64_t *sig_addr, int cmp,
                                                     uint64_t cmp_value)
{
    uint64_t start = 0;
    for (uint64_t it = 0;; it++) {
        uint64_t v = gpurma_nvshmemi__load(sig_addr, 8);
        if (cmp < NVSHMEM_CMP_EQ || cmp >= NVSHMEM_CMP_SENTINEL)
            gpurma_nvshmemi__fail("nvshmem_signal_wait_until", GPURMA_ERR_INVALID_ARG,
                                  "unknown comparison");
        if (GPURMA_NVSHMEMI_CMP(uint64_t, v, cmp, cmp_value))
            return v;
        gpurma_nvshmemi__poll("nvshmem_signal_wait_until", it, &start);
    }
}

/* ------------------------------------------------------------ barriers */

/* Whether a live window of the heap reaches some PE through the port engine. */
GPURMA_NVSHMEMI_D int gpurma_nvshmemi__any_port(void)
{
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    for (uint32_t k = 0; k <= s->nsegments && k <= GPURMA_NVSHMEMI_MAX_SEGMENTS; k++)
        if ((!k || s->segments[k - 1].base) && gpurma_nvshmemi__win((int)k)->nports)
            return 1;
    return 0;
}

/*
 * The device barrier of a strided team: for each other member m, one atomic
 * add to arrivals[me] at m, then a wait until arrivals[m] here reaches the
 * number of barriers this PE entered with m (entered[m]). Counting per
 * pair, not per team, needs no agreement on team slots: two PEs agree on
 * how many barriers they shared as long as their barriers are ordered the
 * same way on both, which NVSHMEM requires of collectives anyway.
 *
 * One round and one fence: the barrier's quiet (fence.sc, and the port
 * engine's completion where a window has port peers) or, for a sync, one
 * release fence, then relaxed adds to every member. A fence followed by a
 * relaxed atomic is a release of that atomic, so each member that acquires
 * our arrival sees everything this PE (or its group, met before) did before
 * the fence, cumulatively: also its puts to third PEs. A release on each add
 * would be one fence per member, each waiting for the add before it.
 */
GPURMA_NVSHMEMI_D void gpurma_nvshmemi__team_sync(const char *call, nvshmem_team_t team,
                                                  int quiet)
{
    gpurma_nvshmemi__devpath(call);
    const gpurma_nvshmemi_state_t *s = &gpurma_nvshmemi_st;
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || s->teams[team].size <= 0)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "invalid team");
    gpurma_nvshmemi_team_t t = s->teams[team];
    if (t.my_pe < 0 || (t.size > 1 && t.stride <= 0))
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              t.my_pe < 0 ? "this PE is not in the team"
                                          : "the team's PEs are not strided in the world");
    /* The quiet's own fence comes before its wait for port peers; what the
     * proxies completed after it needs a release of its own. */
    if (quiet)
        gpurma_nvshmemi__quiet(call);
    if (!quiet || gpurma_nvshmemi__any_port())
        gpurma_nvshmemi__fence_release();
    uint64_t *arrivals = (uint64_t *)s->heap_base, *entered = arrivals + s->n_pes;
    for (int i = 0; i < t.size; i++) {
        int pe = t.start + i * t.stride;
        if (pe == s->my_pe)
            continue;
        entered[pe]++;
        /* The counters are the layer's own words, which the program's
         * address check refuses: straight to the peer (a relaxed add that
         * waits for no reply, released by the fence above) or to the
         * device API. */
        uint64_t *arrival = (uint64_t *)gpurma_nvshmemi__direct(0, pe, (size_t)s->my_pe * 8, 8);
        if (arrival)
            (void)gpurma_nvshmemi__atomic64(arrival, 4 /* add */, 1, 0, 0);
        else
            gpurma_nvshmemi__check(call, gpurma_dev_atomic_fetch_add(s->win, pe,
                                                                     (size_t)s->my_pe * 8, 1,
                                                                     NULL));
    }
    uint64_t start = 0, it = 0;
    for (int i = 0; i < t.size; i++) {
        int pe = t.start + i * t.stride;
        if (pe == s->my_pe)
            continue;
        while (gpurma_nvshmemi__load(&arrivals[pe], 8) < entered[pe])
            gpurma_nvshmemi__poll(call, it++, &start);
    }
}

GPURMA_NVSHMEMI_D void gpurma_nvshmemi__team_sync_group(const char *call, nvshmem_team_t team,
                                                        int quiet, int scope)
{
    gpurma_nvshmemi__group_sync(scope);
    if (gpurma_nvshmemi__group_leader(scope))
        gpurma_nvshmemi__team_sync(call, team, quiet);
    gpurma_nvshmemi__group_sync(scope);
}

/* Host code: the library's barrier (gpurma_barrier on the team); device code
 * and the host backend in C: the counting barrier above. */
GPURMA_NVSHMEMI_HD void gpurma_nvshmemi__barrier(const char *call, nvshmem_team_t team, int quiet)
{
#if GPURMA_NVSHMEMI_HAS_DEVPATH
    if (gpurma_nvshmemi__devpath(call)) {
        gpurma_nvshmemi__team_sync(call, team, quiet);
        return;
    }
#endif
#if !GPURMA_NVSHMEMI_DEVICE_PASS
    gpurma_nvshmemi_barrier(call, team, quiet);
#endif
}

GPURMA_NVSHMEMI_HD void nvshmem_barrier_all(void)
{
    gpurma_nvshmemi__barrier("nvshmem_barrier_all", NVSHMEM_TEAM_WORLD, 1);
}
GPURMA_NVSHMEMI_HD void nvshmem_sync_all(void)
{
    gpurma_nvshmemi__barrier("nvshmem_sync_all", NVSHMEM_TEAM_WORLD, 0);
}
GPURMA_NVSHMEMI_HD int nvshmem_barrier(nvshmem_team_t team)
{
    gpurma_nvshmemi__barrier("nvshmem_barrier", team, 1);
    return 0;
}
GPURMA_NVSHMEMI_HD int nvshmem_team_sync(nvshmem_team_t team)
{
    gpurma_nvshmemi__barrier("nvshmem_team_sync", team, 0);
    return 0;
}
GPURMA_NVSHMEMI_HD int nvshmem_sync(nvshmem_team_t team) { return nvshmem_team_sync(team); }

#define GPURMA_NVSHMEMI_SYNC_GROUP(SCOPE, S)                                                \
    GPURMA_NVSHMEMI_D void nvshmemx_barrier_all_##SCOPE(void)                               \
    {                                                                                       \
        gpurma_nvshmemi__team_sync_group("nvshmemx_barrier_all_" #SCOPE, NVSHMEM_TEAM_WORLD, \
                                         1, S);                                             \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void nvshmemx_sync_all_##SCOPE(void)                                  \
    {                                                                                       \
        gpurma_nvshmemi__team_sync_group("nvshmemx_sync_all_" #SCOPE, NVSHMEM_TEAM_WORLD, 0, \
                                         S);                                                \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmemx_barrier_##SCOPE(nvshmem_team_t team)                     \
    {                                                                                       \
        gpurma_nvshmemi__team_sync_group("nvshmemx_barrier_" #SCOPE, team, 1, S);           \
        return 0;                                                                           \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmemx_team_sync_##SCOPE(nvshmem_team_t team)                   \
    {                                                                                       \
        gpurma_nvshmemi__team_sync_group("nvshmemx_team_sync_" #SCOPE, team, 0, S);         \
        return 0;                                                                           \
    }                                                                                       \
    GPURMA_NVSHMEMI_D int nvshmemx_sync_##SCOPE(nvshmem_team_t team)                        \
    {                                                                                       \
        return nvshmemx_team_sync_##SCOPE(team);                                            \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void nvshmemx_quiet_##SCOPE(void)                                     \
    {                                                                                       \
        gpurma_nvshmemi__group_sync(S);                                                     \
        if (gpurma_nvshmemi__group_leader(S))                                               \
            gpurma_nvshmemi__quiet("nvshmemx_quiet_" #SCOPE);                               \
        gpurma_nvshmemi__group_sync(S);                                                     \
    }                                                                                       \
    GPURMA_NVSHMEMI_D void nvshmemx_fence_##SCOPE(void)                                     \
    {                                                                                       \
        gpurma_nvshmemi__group_sync(S);                                                     \
        if (gpurma_nvshmemi__group_leader(S))                                               \
            gpurma_nvshmemi__fence("nvshmemx_fence_" #SCOPE);                               \
        gpurma_nvshmemi__group_sync(S);                                                     \
    }
GPURMA_NVSHMEMI_SYNC_GROUP(warp, GPURMA_NVSHMEMI_WARP)
GPURMA_NVSHMEMI_SYNC_GROUP(block, GPURMA_NVSHMEMI_BLOCK)

#endif
