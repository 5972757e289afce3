/*
 * uid.c - a TCP rendezvous bootstrap set up like torchrun: RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT (node-local ranks are derived by bootstrap.c, so
 * LOCAL_RANK is not read). Any of those or LOCAL_RANK/LOCAL_WORLD_SIZE set
 * marks a launch of several processes: an environment that lacks what the
 * bootstrap needs, or holds a value out of range, fails the open rather
 * than leave each process to run alone. This file is the protocol;
 * uid_rendezvous.c connects the ranks, uid_wire.c encodes what travels,
 * uid_sock.c moves bytes under deadlines, uid_owner.c tells which user owns
 * a socket of this host.
 *
 * Rank 0 listens; every other rank connects and says hello with the job's
 * token (uid_wire.h says where it comes from). It filters out strays
 * (another job, a port scanner), it is not cryptography: it travels in
 * clear text, and the derived one is guessable. Use GPURMA_UID_TOKEN and a
 * private network.
 *
 * Traffic is a star: an allgather sends every block to rank 0, which sends
 * the assembled array back; a barrier is an allgather of 0 bytes. Every
 * read and write is bounded by poll() against the call's deadline.
 *
 * Failures: a peer whose connection closes or resets without saying goodbye
 * is dead. Rank 0 then sends a FAIL frame naming it to everyone else, so all
 * ranks fail fast with the same rank named. A watcher thread notices deaths
 * between collectives as well: it polls the sockets while no collective
 * runs (io_mu excludes the two), peeks at what arrived, consumes only
 * control frames (FAIL, ABORT, BYE) and leaves data for the next collective.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config_section.h"
#include "uid_rendezvous.h"
#include "uid_sock.h"
#include "uid_wire.h"

#define UID_DEFAULT_PORT "29500" /* torchrun's default */

/* The uid bootstrap's own option. RANK, WORLD_SIZE, MASTER_ADDR and
 * MASTER_PORT are not options but the launcher's rendezvous (torchrun's
 * variables, with its meanings): they are read when the bootstrap opens. */
#define UID_CONFIG(X)                                                                     \
    X(token, GPURMA_UID_TOKEN, STR, "", GPURMA_CFG_ANY,                                   \
      "Shared secret for the uid bootstrap; connections without it are rejected")
GPURMA_CONFIG_SECTION(uid, UID_CONFIG)

enum { LINK_LIVE = 0, LINK_GONE, LINK_DEAD };

typedef struct {
    int fd;
    int peer;         /* rank at the other end */
    int state;        /* LINK_* */
    int data_pending; /* the watcher saw the next collective's data at the head */
    int tx_torn;      /* a frame was left half sent: no more frames may follow */
    /* receive progress of the current collective (rank 0) */
    size_t hdr_got, body_got;
    uint8_t hdr[UID_FRAME_BYTES];
} uid_link_t;

typedef struct {
    gpurma_bootstrap_t *bs;
    uid_link_t         *links;  /* rank 0: ranks 1..size-1 at [rank-1]; others: rank 0 at [0] */
    int                 nlinks;
    struct pollfd      *pfds;   /* nlinks, for rank 0's receive phase */
    int                *pfd_link; /* link index of each pfds entry */
    pthread_mutex_t     io_mu;  /* held by a collective, or by the watcher while it acts */
    pthread_t           watcher;
    int                 watcher_started;
    int                 wake[2]; /* pipe that stops the watcher */
    int                 stopping;
    int                 broken;  /* status after which the streams are out of step */
    char                broken_msg[512];
    char                job_addr[96]; /* GPURMA_UID_ADDR, else where rank 0 listens */
} uid_state_t;

/* ---------------------------------------------------------- link I/O */

/* Reads exactly len bytes: 0, PEER_FAILED (closed or reset), TIMEOUT or
 * TRANSPORT. */
static int link_recv(uid_link_t *l, void *buf, size_t len, uint64_t deadline)
{
    return gpurma_sock_recv(l->fd, buf, len, deadline);
}

/* Writes exactly len bytes (see gpurma_sock_send). A frame left half
 * written marks the link torn. */
static int link_send(uid_link_t *l, const void *buf, size_t len, uint64_t deadline,
                     int stop_on_input)
{
    size_t sent = 0;
    int rc = gpurma_sock_send(l->fd, buf, len, deadline, stop_on_input, &sent);
    if (rc && sent)
        l->tx_torn = 1;
    return rc;
}

static int link_send_frame(uid_link_t *l, uint32_t type, int rank, int code, const void *payload,
                           uint64_t len, uint64_t deadline, int stop_on_input)
{
    uint8_t hdr[UID_FRAME_BYTES];
    gpurma_uid_encode_frame(hdr, type, rank, code, len);
    int rc = link_send(l, hdr, sizeof(hdr), deadline, stop_on_input);
    if (!rc && len) {
        rc = link_send(l, payload, len, deadline, stop_on_input);
        if (rc)
            l->tx_torn = 1;
    }
    return rc;
}

static void link_close(uid_link_t *l, int state)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd    = -1;
    l->state = state;
}

static uid_link_t *link_of_rank(uid_state_t *st, int rank)
{
    for (int i = 0; i < st->nlinks; i++)
        if (st->links[i].peer == rank)
            return &st->links[i];
    return NULL;
}

/* ------------------------------------------------------------- failures */

/* Records why the job cannot go on and, on rank 0, tells every other rank.
 * status PEER_FAILED names failed_rank as dead and sets bs->peer_failed;
 * other statuses (timeout, size mismatch) only put the streams out of step.
 * Returns status with the message set for the calling thread. */
GPURMA_PRINTF(4, 5)
static int fail_job(uid_state_t *st, int failed_rank, int status, const char *fmt, ...)
{
    gpurma_bootstrap_t *bs = st->bs;
    char text[UID_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);

    if (!st->broken) {
        st->broken = status;
        snprintf(st->broken_msg, sizeof(st->broken_msg), "%s", text);
        GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: %s", text);
    }
    if (status == GPURMA_ERR_PEER_FAILED && !__atomic_load_n(&bs->peer_failed, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&bs->failed_rank, failed_rank, __ATOMIC_RELAXED);
        __atomic_store_n(&bs->peer_failed, 1, __ATOMIC_RELEASE);
    }
    uid_link_t *dead = status == GPURMA_ERR_PEER_FAILED ? link_of_rank(st, failed_rank) : NULL;
    if (dead && dead->state == LINK_LIVE)
        link_close(dead, LINK_DEAD);

    if (bs->rank == 0) {
        /* Small frames fit in any socket buffer, so this does not block; a
         * link that cannot take one whole frame is closed instead, which its
         * rank reads as rank 0 failing: less precise, equally fast. */
        size_t len = strlen(text);
        for (int i = 0; i < st->nlinks; i++) {
            uid_link_t *l = &st->links[i];
            if (l->state != LINK_LIVE)
                continue;
            if (l->tx_torn || link_send_frame(l, UID_FRAME_FAIL, failed_rank, status, text, len,
                                              gpurma_sock_deadline_after(UID_CONTROL_MS), 0))
                shutdown(l->fd, SHUT_RDWR);
        }
    }
    return gpurma_set_error(status, "%s", text);
}

/* The message for a link error met while doing `what`. */
static int link_failed(uid_state_t *st, uid_link_t *l, int rc, const char *what)
{
    int me = st->bs->rank;
    switch (rc) {
    case GPURMA_ERR_PEER_FAILED:
        return fail_job(st, l->peer, rc,
                        "rank %d lost rank %d during %s: connection closed without goodbye "
                        "(process died?)", me, l->peer, what);
    case GPURMA_ERR_TIMEOUT:
        return fail_job(st, l->peer, rc,
                        "rank %d timed out after %lld ms during %s waiting for rank %d%s", me,
                        (long long)st->bs->timeout_ms, what, l->peer,
                        me ? " (the uid root, which waits for every rank)" : "");
    default:
        return fail_job(st, l->peer, GPURMA_ERR_TRANSPORT,
                        "rank %d: socket error with rank %d during %s: %s", me, l->peer, what,
                        strerror(errno));
    }
}

/* What a peer's control frame says is checked before it is used: its
 * text reaches logs and messages with control characters (escape
 * sequences, line breaks that would forge log lines) shown as '?', a rank
 * outside the job is "unknown" (-1), and a status that is not one of
 * gpurma's errors is GPURMA_ERR_BOOTSTRAP. */
static void clean_text(char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            text[i] = '?';
}
static int frame_rank(const uid_state_t *st, int32_t rank)
{
    return rank >= 0 && rank < st->bs->size ? rank : -1;
}
static int frame_status(int32_t code)
{
    return code <= GPURMA_ERR_INVALID_ARG && code >= GPURMA_ERR_MISALIGNED ? code
                                                                          : GPURMA_ERR_BOOTSTRAP;
}

/* Acts on a control frame whose header is already read; reads its text.
 * Returns 0 for BYE (a normal goodbye) or the failure status. */
static int handle_control(uid_state_t *st, uid_link_t *l, const gpurma_uid_frame_t *f, const char *what)
{
    char text[UID_TEXT_MAX + 1] = "";
    if (f->len) {
        int rc = link_recv(l, text, f->len, gpurma_sock_deadline_after(UID_CONTROL_MS));
        if (rc)
            return link_failed(st, l, rc, what);
        text[f->len] = '\0';
        clean_text(text, f->len);
    }
    /* me: this rank; named: the rank a FAIL or ABORT from rank 0 names */
    const int me = st->bs->rank, named = frame_rank(st, f->rank);
    switch (f->type) {
    case UID_FRAME_BYE:
        GPURMA_DEBUG(GPURMA_SUB_BOOT, "uid bootstrap: rank %d closed its bootstrap", l->peer);
        link_close(l, LINK_GONE);
        return 0;
    case UID_FRAME_ABORT: {
        /* From rank 0 the frame names who aborted; from others, the sender. */
        int who = me == 0 ? l->peer : named;
        return fail_job(st, who, GPURMA_ERR_PEER_FAILED,
                        "rank %d aborted the job (code %d): %s", who, f->code, text);
    }
    case UID_FRAME_FAIL:
        if (me == 0) /* only rank 0 reports failures */
            return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP,
                            "rank %d sent rank 0 an unexpected FAIL frame", l->peer);
        if (f->code == GPURMA_ERR_PEER_FAILED)
            return fail_job(st, named, GPURMA_ERR_PEER_FAILED,
                            "rank %d failed (reported by rank 0: %s)", named, text);
        return fail_job(st, named, frame_status(f->code), "rank 0 reported: %s", text);
    }
    return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP, "bad frame from rank %d",
                    l->peer);
}

/* Reads frames until a DATA header (returned in *f, payload still
 * unread). Control frames met first are handled; any of them fails the
 * collective, since a goodbye in the middle of one leaves it incomplete. */
static int link_expect_data(uid_state_t *st, uid_link_t *l, gpurma_uid_frame_t *f, uint64_t deadline,
                            const char *what)
{
    uint8_t hdr[UID_FRAME_BYTES];
    int rc = link_recv(l, hdr, sizeof(hdr), deadline);
    if (rc)
        return link_failed(st, l, rc, what);
    if (!gpurma_uid_decode_frame(hdr, f))
        return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP,
                        "rank %d got a malformed frame from rank %d during %s", st->bs->rank,
                        l->peer, what);
    if (f->type == UID_FRAME_DATA)
        return 0;
    rc = handle_control(st, l, f, what);
    if (rc)
        return rc;
    return fail_job(st, l->peer, GPURMA_ERR_PEER_FAILED,
                    "rank %d closed the bootstrap while rank %d waits in %s", l->peer,
                    st->bs->rank, what);
}

/* ------------------------------------------------------------ collectives */

static int root_allgather(uid_state_t *st, const void *mine, void *all, size_t len,
                          uint64_t deadline, const char *what)
{
    gpurma_bootstrap_t *bs = st->bs;
    if (len && all != mine)
        memmove(all, mine, len);
    for (int i = 0; i < st->nlinks; i++) {
        uid_link_t *l = &st->links[i];
        if (l->state != LINK_LIVE)
            return fail_job(st, l->peer, GPURMA_ERR_PEER_FAILED,
                            "rank %d closed the bootstrap before rank 0's %s", l->peer, what);
        l->hdr_got = l->body_got = 0;
    }

    /* Receive from everyone at once, so that any rank's death is seen at
     * once, even while an earlier rank is still busy elsewhere. */
    int remaining = st->nlinks;
    while (remaining) {
        int n = 0;
        for (int i = 0; i < st->nlinks; i++) {
            uid_link_t *l = &st->links[i];
            if (l->hdr_got < UID_FRAME_BYTES || l->body_got < len) {
                st->pfd_link[n] = i;
                st->pfds[n++]   = (struct pollfd){l->fd, POLLIN, 0};
            }
        }
        int ready = poll(st->pfds, (nfds_t)n, gpurma_sock_ms_left(deadline));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            return fail_job(st, -1, GPURMA_ERR_TRANSPORT, "rank 0: poll failed: %s",
                            strerror(errno));
        if (ready == 0 && gpurma_sock_expired(deadline)) {
            for (int i = 0; i < st->nlinks; i++) {
                uid_link_t *l = &st->links[i];
                if (l->hdr_got < UID_FRAME_BYTES || l->body_got < len)
                    return fail_job(st, l->peer, GPURMA_ERR_TIMEOUT,
                                    "rank 0 timed out after %lld ms in %s waiting for rank %d "
                                    "(%d ranks missing)", (long long)bs->timeout_ms, what,
                                    l->peer, remaining);
            }
        }
        for (int k = 0; k < n; k++) {
            if (!st->pfds[k].revents)
                continue;
            uid_link_t *l = &st->links[st->pfd_link[k]];
            void *dst;
            size_t want;
            if (l->hdr_got < UID_FRAME_BYTES) {
                dst  = l->hdr + l->hdr_got;
                want = UID_FRAME_BYTES - l->hdr_got;
            } else {
                dst  = (char *)all + (size_t)l->peer * len + l->body_got;
                want = len - l->body_got;
            }
            ssize_t got = recv(l->fd, dst, want, MSG_DONTWAIT);
            if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                continue;
            if (got <= 0)
                return link_failed(st, l, got == 0 || gpurma_sock_peer_gone(errno)
                                              ? GPURMA_ERR_PEER_FAILED : GPURMA_ERR_TRANSPORT,
                                   what);
            if (l->hdr_got < UID_FRAME_BYTES) {
                l->hdr_got += (size_t)got;
                if (l->hdr_got < UID_FRAME_BYTES)
                    continue;
                gpurma_uid_frame_t f;
                if (!gpurma_uid_decode_frame(l->hdr, &f))
                    return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP,
                                    "rank 0 got a malformed frame from rank %d during %s",
                                    l->peer, what);
                if (f.type != UID_FRAME_DATA) {
                    int rc = handle_control(st, l, &f, what);
                    return rc ? rc : fail_job(st, l->peer, GPURMA_ERR_PEER_FAILED,
                                              "rank %d closed the bootstrap while rank 0 waits "
                                              "in %s", l->peer, what);
                }
                if (f.len != len)
                    return fail_job(st, l->peer, GPURMA_ERR_INVALID_ARG,
                                    "%s size mismatch: rank %d passed %llu bytes, rank 0 "
                                    "passed %zu", what, l->peer, (unsigned long long)f.len, len);
            } else {
                l->body_got += (size_t)got;
            }
            if (l->hdr_got == UID_FRAME_BYTES && l->body_got == len) {
                l->data_pending = 0;
                remaining--;
            }
        }
    }

    size_t total = len * (size_t)bs->size;
    for (int i = 0; i < st->nlinks; i++) {
        uid_link_t *l = &st->links[i];
        int rc = link_send_frame(l, UID_FRAME_DATA, 0, 0, all, total, deadline, 0);
        if (rc)
            return link_failed(st, l, rc, what);
    }
    return 0;
}

static int member_allgather(uid_state_t *st, const void *mine, void *all, size_t len,
                            uint64_t deadline, const char *what)
{
    uid_link_t *root = &st->links[0];
    if (root->state != LINK_LIVE)
        return fail_job(st, 0, GPURMA_ERR_PEER_FAILED,
                        "rank 0 closed the bootstrap before rank %d's %s", st->bs->rank, what);
    /* Rank 0 only talks before our block is in when something failed:
     * stop sending and read what it says. */
    int rc = link_send_frame(root, UID_FRAME_DATA, st->bs->rank, 0, mine, len, deadline, 1);
    if (rc && rc != GPURMA_ERR_AGAIN)
        return link_failed(st, root, rc, what);
    gpurma_uid_frame_t f;
    int rrc = link_expect_data(st, root, &f, deadline, what);
    if (rrc)
        return rrc;
    size_t total = len * (size_t)st->bs->size;
    if (rc == GPURMA_ERR_AGAIN || f.len != total)
        return fail_job(st, 0, GPURMA_ERR_BOOTSTRAP,
                        "rank %d got %llu bytes from rank 0 in %s, expected %zu", st->bs->rank,
                        (unsigned long long)f.len, what, total);
    rc = link_recv(root, all, total, deadline);
    return rc ? link_failed(st, root, rc, what) : 0;
}

static int uid_exchange(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len,
                        const char *what)
{
    uid_state_t *st = bs->impl;
    uint64_t deadline = gpurma_sock_deadline_after(bs->timeout_ms);
    pthread_mutex_lock(&st->io_mu);
    int rc;
    if (st->broken)
        rc = gpurma_set_error(st->broken, "uid bootstrap unusable after an earlier error: %s",
                              st->broken_msg);
    else if (bs->rank == 0)
        rc = root_allgather(st, mine, all, len, deadline, what);
    else
        rc = member_allgather(st, mine, all, len, deadline, what);
    for (int i = 0; i < st->nlinks; i++)
        st->links[i].data_pending = 0;
    pthread_mutex_unlock(&st->io_mu);
    return rc;
}

static int uid_allgather(gpurma_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    return uid_exchange(bs, mine, all, len, "allgather");
}

static int uid_barrier(gpurma_bootstrap_t *bs)
{
    return uid_exchange(bs, NULL, NULL, 0, "barrier");
}

/* ------------------------------------------------------------- watcher */

/* Between collectives nothing but control frames, or the start of the next
 * collective's data, can arrive. Called with io_mu held. */
static void watch_link(uid_state_t *st, uid_link_t *l, short revents)
{
    if ((revents & POLLIN) && !l->data_pending) {
        uint8_t hdr[UID_FRAME_BYTES];
        gpurma_uid_frame_t f;
        ssize_t n = recv(l->fd, hdr, sizeof(hdr), MSG_PEEK | MSG_DONTWAIT);
        if (n == (ssize_t)sizeof(hdr) && gpurma_uid_decode_frame(hdr, &f) && f.type != UID_FRAME_DATA) {
            recv(l->fd, hdr, sizeof(hdr), MSG_DONTWAIT); /* consume the peeked header */
            handle_control(st, l, &f, "the wait between collectives");
        } else if (n > 0) {
            l->data_pending = 1; /* the next collective reads it */
        }
    }
    if (l->state == LINK_LIVE && (revents & (POLLRDHUP | POLLHUP | POLLERR))) {
        char probe;
        ssize_t n = recv(l->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
        /* Unread control frames first: an ABORT explains the hang-up. */
        if (n > 0 && !l->data_pending)
            return;
        link_failed(st, l, GPURMA_ERR_PEER_FAILED, "the wait between collectives");
    }
}

/* The links the watcher listens to; with io_mu held. Returns the count,
 * the wake pipe last. */
static int watch_set(uid_state_t *st, struct pollfd *pfds)
{
    int n = 0;
    for (int i = 0; i < st->nlinks; i++) {
        uid_link_t *l = &st->links[i];
        if (l->state == LINK_LIVE)
            pfds[n++] = (struct pollfd){l->fd, (short)(POLLRDHUP | (l->data_pending ? 0 : POLLIN)),
                                        0};
    }
    pfds[n++] = (struct pollfd){st->wake[0], POLLIN, 0};
    return n;
}

static void *uid_watch(void *arg)
{
    uid_state_t *st = arg;
    struct pollfd *pfds = malloc(((size_t)st->nlinks + 1) * sizeof(*pfds));
    if (!pfds)
        return NULL;
    pthread_mutex_lock(&st->io_mu);
    while (!st->stopping && !st->broken) {
        /* Sleep without the lock until any link stirs, then take the lock,
         * which waits out a running collective. */
        int n = watch_set(st, pfds);
        pthread_mutex_unlock(&st->io_mu);
        int woke = poll(pfds, (nfds_t)n, -1);
        pthread_mutex_lock(&st->io_mu);
        if ((woke < 0 && errno != EINTR) || st->stopping || st->broken)
            break;
        /* Look again: the collective may have consumed what woke us, and
         * links may have closed meanwhile. */
        n = watch_set(st, pfds);
        if (poll(pfds, (nfds_t)n, 0) <= 0)
            continue;
        for (int k = 0; k < n - 1 && !st->broken; k++) {
            for (int i = 0; i < st->nlinks; i++) {
                uid_link_t *l = &st->links[i];
                if (pfds[k].revents && l->fd == pfds[k].fd && l->state == LINK_LIVE) {
                    watch_link(st, l, pfds[k].revents);
                    break;
                }
            }
        }
    }
    pthread_mutex_unlock(&st->io_mu);
    free(pfds);
    return NULL;
}

/* ------------------------------------------------------- abort/finalize */

static void uid_abort(gpurma_bootstrap_t *bs, int code, const char *why)
{
    uid_state_t *st = bs->impl;
    const char *text = why ? why : "";
    size_t len = strnlen(text, UID_TEXT_MAX);
    /* Best effort and quick: if a collective holds the lock, interleaving a
     * frame would corrupt its stream, so hang up instead; peers read the
     * hang-up as this rank's death. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100 * 1000000L;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    int locked = pthread_mutex_timedlock(&st->io_mu, &until) == 0;
    for (int i = 0; i < st->nlinks; i++) {
        uid_link_t *l = &st->links[i];
        if (l->state != LINK_LIVE)
            continue;
        if (!locked || l->tx_torn ||
            link_send_frame(l, UID_FRAME_ABORT, bs->rank, code, text, len,
                            gpurma_sock_deadline_after(UID_CONTROL_MS), 0))
            shutdown(l->fd, SHUT_RDWR);
    }
    if (locked)
        pthread_mutex_unlock(&st->io_mu);
}

static void uid_free(uid_state_t *st)
{
    for (int i = 0; i < st->nlinks; i++) {
        if (st->links[i].fd < 0)
            continue;
        /* Unread input would turn the close into a reset that can destroy
         * a FAIL frame just sent (failed rendezvous): drain it first. */
        gpurma_sock_drain(st->links[i].fd);
        close(st->links[i].fd);
    }
    if (st->wake[0] >= 0)
        close(st->wake[0]), close(st->wake[1]);
    pthread_mutex_destroy(&st->io_mu);
    free(st->links);
    free(st->pfds);
    free(st->pfd_link);
    free(st);
}

static void uid_finalize(gpurma_bootstrap_t *bs)
{
    uid_state_t *st = bs->impl;
    if (st->watcher_started) {
        pthread_mutex_lock(&st->io_mu);
        st->stopping = 1;
        pthread_mutex_unlock(&st->io_mu);
        ssize_t w = write(st->wake[1], "x", 1);
        (void)w;
        pthread_join(st->watcher, NULL);
    }
    for (int i = 0; i < st->nlinks; i++) {
        uid_link_t *l = &st->links[i];
        if (l->state != LINK_LIVE)
            continue;
        /* The goodbye tells the peer this close is not a death. */
        if (!l->tx_torn)
            link_send_frame(l, UID_FRAME_BYE, bs->rank, 0, NULL, 0, gpurma_sock_deadline_after(UID_CONTROL_MS),
                            0);
        /* Closing with unread input makes TCP send a reset, which can
         * destroy the goodbye before the peer reads it; drain first. */
        gpurma_sock_drain(l->fd);
        link_close(l, LINK_GONE);
    }
    uid_free(st);
    bs->impl = NULL;
}

/* The derived token keeps strays of this host's other jobs out at best:
 * across hosts anyone who can read the launch environment (or guess it)
 * can join. Said once per process, by rank 0. */
static void uid_opened(gpurma_bootstrap_t *bs)
{
    static int warned;
    if (bs->num_nodes > 1 && bs->rank == 0 && !uid_config()->token[0] &&
        !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        GPURMA_WARN(GPURMA_SUB_BOOT,
                    "uid bootstrap: this job spans %d hosts and GPURMA_UID_TOKEN is not set: "
                    "the token that admits ranks is derived from the launch environment "
                    "(MASTER_ADDR, MASTER_PORT, WORLD_SIZE, job ids), which other users can "
                    "guess; set GPURMA_UID_TOKEN to the same random value on every rank",
                    bs->num_nodes);
}

static const char *uid_job_address(gpurma_bootstrap_t *bs)
{
    const uid_state_t *st = bs->impl;
    return st && st->job_addr[0] ? st->job_addr : NULL;
}

static const gpurma_bootstrap_ops_t uid_ops = {
    .size      = sizeof(gpurma_bootstrap_ops_t),
    .name      = "uid",
    .allgather = uid_allgather,
    .barrier   = uid_barrier,
    .abort     = uid_abort,
    .finalize  = uid_finalize,
    .opened    = uid_opened,
    .job_address = uid_job_address,
};

/* ------------------------------------------------------------------ open */

/* A torchrun-style launch sets these; any one of them set means the process
 * was started as one rank of several. */
static const char *const launch_vars[] = {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                          "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
#define NUM_LAUNCH_VARS (sizeof(launch_vars) / sizeof(launch_vars[0]))
#define NUM_NEEDED_VARS 3 /* the first ones; MASTER_PORT defaults to torchrun's 29500 */

/* "A", "A and B", "A, B and C": those of the first count launch_vars that
 * are set (want_set) or not. Returns how many. */
static int list_vars(int want_set, size_t count, char *out, size_t len)
{
    const char *names[NUM_LAUNCH_VARS];
    int n = 0;
    for (size_t i = 0; i < count; i++)
        if (gpurma_bootstrap_env_set(launch_vars[i]) == want_set)
            names[n++] = launch_vars[i];
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s",
                                 i == 0 ? "" : i + 1 < n ? ", " : " and ", names[i]);
    return n;
}

/* INVALID_ARG naming what is missing, when a variable the bootstrap needs
 * is unset. */
static int check_launch_complete(void)
{
    char missing[128], set[128], others[256] = "";
    int nmissing = list_vars(0, NUM_NEEDED_VARS, missing, sizeof(missing));
    if (!nmissing)
        return 0;
    int nset = list_vars(1, NUM_LAUNCH_VARS, set, sizeof(set));
    if (nset)
        snprintf(others, sizeof(others), ", or unset %s (or set GPURMA_BOOTSTRAP=single) to run "
                 "this process alone", set);
    return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                            "uid bootstrap: incomplete torchrun-style launch environment: %s %s "
                            "not set%s%s%s; the uid bootstrap needs RANK, WORLD_SIZE and "
                            "MASTER_ADDR (MASTER_PORT defaults to %s): set them%s",
                            missing, nmissing > 1 ? "are" : "is", nset ? ", but " : "", set,
                            !nset ? "" : nset > 1 ? " are" : " is", UID_DEFAULT_PORT, others);
}

/* Reads the value v of variable name, a whole number from min to max:
 * digits only. */
static int parse_whole(const char *name, const char *v, const char *what, long long min,
                       long long max, int *out)
{
    size_t digits = strspn(v, "0123456789");
    long long x = digits && !v[digits] && digits <= 18 ? strtoll(v, NULL, 10) : -1;
    if (x < min || x > max)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "uid bootstrap: %s='%s' is not %s (a "
                                "whole number, %lld-%lld)", name, v, what, min, max);
    *out = (int)x;
    return 0;
}

typedef struct {
    int         rank, size;
    const char *addr, *port;
} launch_env_t;

/* The launch environment, every value checked. */
static int read_launch_env(launch_env_t *env)
{
    int port = 0;
    int rc = check_launch_complete();
    if (!rc)
        rc = parse_whole("RANK", getenv("RANK"), "a rank", 0, INT_MAX - 1, &env->rank);
    if (!rc)
        rc = parse_whole("WORLD_SIZE", getenv("WORLD_SIZE"), "a number of processes", 1, INT_MAX,
                         &env->size);
    if (rc)
        return rc;
    if (env->rank >= env->size)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "uid bootstrap: RANK=%d is not below "
                                "WORLD_SIZE=%d (ranks are 0 to %d)", env->rank, env->size,
                                env->size - 1);
    env->addr = getenv("MASTER_ADDR");
    env->port = getenv("MASTER_PORT");
    if (!env->port || !env->port[0])
        env->port = UID_DEFAULT_PORT;
    /* getaddrinfo would take 70000 as 4464, and "http" as 80. */
    return parse_whole("MASTER_PORT", env->port, "a TCP port", 1, 65535, &port);
}

/* Connects the ranks: rank 0 admits the others, which join it. */
static int connect_ranks(uid_state_t *st, const char *addr, const char *port,
                         const uint8_t *token, uint64_t deadline)
{
    gpurma_bootstrap_t *bs = st->bs;
    if (bs->rank != 0)
        return gpurma_uid_join_root(addr, port, token, bs->rank, bs->size, bs->timeout_ms,
                                    deadline, &st->links[0].fd);
    const char *listen_on = gpurma_config()->uid_iface;
    if (!listen_on || !listen_on[0])
        listen_on = addr;
    int *fds = malloc((size_t)bs->size * sizeof(*fds));
    if (!fds)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "uid bootstrap: no memory");
    for (int r = 0; r < bs->size; r++)
        fds[r] = -1;
    int rc = gpurma_uid_admit_ranks(strcmp(listen_on, "*") ? listen_on : NULL, port, token,
                                    bs->size, bs->timeout_ms, deadline, fds);
    int missing = -1;
    for (int r = bs->size - 1; r >= 1; r--) {
        st->links[r - 1].fd = fds[r];
        if (fds[r] < 0)
            missing = r;
    }
    free(fds);
    /* The ranks already here are told why, rather than seeing rank 0 hang
     * up as if it had died. */
    if (rc == GPURMA_ERR_TIMEOUT)
        rc = fail_job(st, missing, rc, "%s", gpurma_error_text());
    return rc;
}

static int start_watcher(uid_state_t *st)
{
    if (pipe2(st->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        st->wake[0] = st->wake[1] = -1;
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: pipe: %s", strerror(errno));
    }
    /* The watcher blocks every signal, so that the application's handlers
     * keep running on the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    st->watcher_started = pthread_create(&st->watcher, NULL, uid_watch, st) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!st->watcher_started)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: cannot start the watcher "
                                "thread");
    return 0;
}

static int uid_open(const gpurma_bootstrap_args_t *args, gpurma_bootstrap_t **out)
{
    launch_env_t env;
    uint8_t token[UID_TOKEN_BYTES];
    int rc = 0;
    if (args->uid) { /* a unique id, not the environment, names the job */
        env = (launch_env_t){args->uid->rank, args->uid->size, args->uid->addr, args->uid->port};
        memcpy(token, args->uid->token, sizeof(token));
    } else {
        rc = read_launch_env(&env);
        if (rc)
            return rc;
        gpurma_uid_job_token(uid_config()->token, env.addr, env.port, env.size, token);
    }
    int rank = env.rank, size = env.size;
    const char *addr = env.addr, *port = env.port;

    uid_state_t *st = calloc(1, sizeof(*st));
    gpurma_bootstrap_t *bs = calloc(1, sizeof(*bs));
    int nlinks = rank == 0 ? size - 1 : 1;
    if (st) {
        st->links = calloc((size_t)(nlinks ? nlinks : 1), sizeof(*st->links));
        st->pfds     = calloc((size_t)nlinks + 1, sizeof(*st->pfds));
        st->pfd_link = calloc((size_t)nlinks + 1, sizeof(*st->pfd_link));
    }
    if (!st || !bs || !st->links || !st->pfds || !st->pfd_link) {
        if (st)
            free(st->links), free(st->pfds), free(st->pfd_link);
        free(st);
        free(bs);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "uid bootstrap: no memory for %d links",
                                nlinks);
    }
    st->bs     = bs;
    snprintf(st->job_addr, sizeof(st->job_addr), "%s",
             gpurma_config()->uid_iface[0] ? gpurma_config()->uid_iface : addr ? addr : "");
    st->nlinks = nlinks;
    st->wake[0] = st->wake[1] = -1;
    pthread_mutex_init(&st->io_mu, NULL);
    for (int i = 0; i < nlinks; i++)
        st->links[i] = (uid_link_t){.fd = -1, .peer = rank == 0 ? i + 1 : 0};
    bs->ops         = &uid_ops;
    bs->rank        = rank;
    bs->size        = size;
    bs->timeout_ms  = args->timeout_ms;
    bs->failed_rank = -1;
    bs->impl        = st;

    if (size > 1) {
        rc = connect_ranks(st, addr, port, token, gpurma_sock_deadline_after(args->timeout_ms));
        for (int i = 0; !rc && i < nlinks; i++)
            gpurma_sock_configure(st->links[i].fd);
        if (!rc)
            rc = start_watcher(st);
    }
    if (rc) {
        uid_free(st);
        free(bs);
        return rc;
    }
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "uid bootstrap: rank %d of %d connected via %s port %s", rank,
                 size, addr, port);
    *out = bs;
    return 0;
}

/* A launch that set some of the variables but not all that are needed is
 * refused here: running each process as a job of its own would be wrong
 * in a way nobody notices. */
static int uid_detect(const gpurma_bootstrap_args_t *args, const char **why)
{
    (void)args;
    char set[128];
    if (!list_vars(1, NUM_LAUNCH_VARS, set, sizeof(set)))
        return 0;
    int rc = check_launch_complete();
    if (rc)
        return rc;
    *why = "RANK, WORLD_SIZE and MASTER_ADDR are set (torchrun-style launch)";
    return 1;
}

const gpurma_bootstrap_entry_t gpurma_bootstrap_uid = {
    .name   = "uid",
    .detect = uid_detect,
    .open   = uid_open,
};
