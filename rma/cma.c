/*
 * cma.c - windows on private memory (gpurma_win_create on malloc'd memory)
 * on the host backend.
 *
 * Such memory cannot be mapped by peers, so data moves with cross-memory
 * attach (process_vm_writev/readv): one kernel copy, complete when the call
 * returns, so a signal stored afterwards is ordered after the data. Atomics
 * cannot be done by the kernel, so they take a robust process-shared lock
 * that lives in the owner's signal segment, around a read-modify-write;
 * every rank, the owner included, takes it, so atomics on the window are
 * atomic with respect to each other (as for MPI accumulates).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rma.h"

int gpurma_cma_xfer(struct gpurma_win_s *w, int peer, int is_put, size_t off, void *buf,
                    size_t n)
{
    char *remote = (char *)(uintptr_t)w->remote_base[peer] + off;
    if (w->pids[peer] == getpid()) {
        if (is_put)
            memmove(remote, buf, n);
        else
            memmove(buf, remote, n);
        return GPURMA_SUCCESS;
    }
    size_t done = 0;
    while (done < n) {
        struct iovec local = {(char *)buf + done, n - done}, far = {remote + done, n - done};
        ssize_t k = is_put ? process_vm_writev(w->pids[peer], &local, 1, &far, 1, 0)
                           : process_vm_readv(w->pids[peer], &local, 1, &far, 1, 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            int dead = errno == ESRCH;
            return gpurma_set_error(dead ? GPURMA_ERR_PEER_FAILED : GPURMA_ERR_TRANSPORT,
                                    "rank %d: %s of %zu bytes to team rank %d: %s", w->ctx->rank,
                                    is_put ? "put" : "get", n, peer,
                                    dead ? "the process has died" : strerror(errno));
        }
        done += (size_t)k;
    }
    return GPURMA_SUCCESS;
}

int gpurma_cma_atomic(struct gpurma_win_s *w, int peer, gpurma_atomic_kind_t kind, size_t off,
                      uint64_t v, uint64_t compare, uint64_t *old)
{
    pthread_mutex_t *lock = w->atomic_locks[peer];
    int err = pthread_mutex_lock(lock);
    if (err == EOWNERDEAD) /* the holder died between its read and write */
        pthread_mutex_consistent(lock);
    else if (err)
        return gpurma_set_error(GPURMA_ERR_INTERNAL, "atomic lock: %s", strerror(err));
    uint64_t cur, next;
    int rc = gpurma_cma_xfer(w, peer, 0, off, &cur, sizeof(cur));
    if (!rc) {
        next = kind == GPURMA_ATOMIC_FETCH_ADD ? cur + v
               : kind == GPURMA_ATOMIC_SWAP    ? v
               : cur == compare                ? v
                                               : cur;
        if (next != cur || kind != GPURMA_ATOMIC_CAS)
            rc = gpurma_cma_xfer(w, peer, 1, off, &next, sizeof(next));
    }
    pthread_mutex_unlock(lock);
    if (!rc)
        *old = cur;
    return rc;
}

GPURMA_API gpurma_status_t gpurma_dev_host_call(const gpurma_dev_win_t *dw, int op, int peer,
                                                size_t off, void *buf, size_t bytes, uint64_t a,
                                                uint64_t b, uint64_t *old)
{
    struct gpurma_win_s *w = dw ? dw->host_win : NULL;
    int rc = gpurma_win_check(w);
    if (rc)
        return rc;
    /* The inline device code checks before it calls (and lends only the
     * host window, dev_host.h), but this entry point is exported: what
     * reaches it is checked again, and nothing moves for a peer, range,
     * buffer or alignment that is wrong. */
    static const char *const names[] = {[GPURMA_DEV_OP_PUT] = "put", [GPURMA_DEV_OP_GET] = "get",
                                        [GPURMA_DEV_OP_FETCH_ADD] = "fetch_add",
                                        [GPURMA_DEV_OP_SWAP] = "swap", [GPURMA_DEV_OP_CAS] = "cas"};
    if (op < 0 || op >= (int)(sizeof names / sizeof names[0]) || !names[op])
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "unknown host call %d", op);
    int atomic = op != GPURMA_DEV_OP_PUT && op != GPURMA_DEV_OP_GET;
    rc = atomic ? gpurma_check_range(w, names[op], peer, off, sizeof(uint64_t), old)
                : gpurma_check_range(w, names[op], peer, off, bytes, buf);
    if (rc)
        return rc;
    if (atomic && off % sizeof(uint64_t))
        return gpurma_set_error(GPURMA_ERR_MISALIGNED,
                                "rank %d: %s at offset %zu on peer %d: must be 8-byte aligned",
                                w->ctx->rank, names[op], off, peer);
    if (!w->atomic_locks || !w->atomic_locks[peer]) /* set for private memory alone */
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "rank %d: host %s to peer %d: the window's memory there is "
                                "mapped or reached through the port engine; host calls reach "
                                "private memory only",
                                w->ctx->rank, names[op], peer);
    switch (op) {
    case GPURMA_DEV_OP_PUT: return gpurma_cma_xfer(w, peer, 1, off, buf, bytes);
    case GPURMA_DEV_OP_GET: return gpurma_cma_xfer(w, peer, 0, off, buf, bytes);
    case GPURMA_DEV_OP_FETCH_ADD:
        return gpurma_cma_atomic(w, peer, GPURMA_ATOMIC_FETCH_ADD, off, a, b, old);
    case GPURMA_DEV_OP_SWAP: return gpurma_cma_atomic(w, peer, GPURMA_ATOMIC_SWAP, off, a, b, old);
    default: return gpurma_cma_atomic(w, peer, GPURMA_ATOMIC_CAS, off, a, b, old);
    }
}

/* Cross-memory attach may be forbidden (ptrace scope, seccomp); find out at
 * creation rather than on the first put. */
int gpurma_cma_probe(struct gpurma_win_s *w, int peer)
{
    char byte;
    struct iovec local = {&byte, 1}, remote = {(void *)(uintptr_t)w->remote_base[peer], 1};
    if (!w->peers[peer].size || w->pids[peer] == getpid())
        return GPURMA_SUCCESS;
    if (process_vm_readv(w->pids[peer], &local, 1, &remote, 1, 0) == 1)
        return GPURMA_SUCCESS;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "win_create on private memory reaches peers with process_vm_writev, "
                            "which failed for team rank %d (pid %d): %s; use gpurma_win_allocate "
                            "or allow ptrace between the job's processes",
                            peer, (int)w->pids[peer], strerror(errno));
}

