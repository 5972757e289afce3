/*
 * uid.c - a TCP rendezvous bootstrap set up like torchrun: RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT (LOCAL_RANK is ignored; node-local ranks are
 * derived by bootstrap.c).
 *
 * Rank 0 listens; every other rank connects and says hello (magic, protocol
 * version, a 32-byte token, rank, size). Rank 0 rejects connections with a
 * wrong magic, token or size or a duplicate or out-of-range rank, and keeps
 * waiting for the right ones. The token comes from GPURMA_UID_TOKEN when set,
 * otherwise from the launch environment; it filters out strays (another job,
 * a port scanner), it is not cryptography: it travels in clear text, and the
 * derived one is guessable. Use GPURMA_UID_TOKEN and a private network.
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
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
#include "gpurma_internal.h"

#define UID_MAGIC        0x47524d55u /* "GRMU" */
#define UID_VERSION      1u
#define UID_TOKEN_BYTES  32
#define UID_HELLO_BYTES  (4 + 4 + UID_TOKEN_BYTES + 4 + 4)
#define UID_REPLY_BYTES  12
#define UID_FRAME_BYTES  24
#define UID_TEXT_MAX     256  /* longest FAIL/ABORT explanation */
#define UID_HELLO_MS     5000 /* a connection that says nothing for this long is dropped */
#define UID_MAX_STRAYS   64   /* connections held beyond the ranks before new ones are refused */
#define UID_CONTROL_MS   1000 /* bound on reading or writing one control frame */
#define UID_DEFAULT_PORT "29500" /* torchrun's default */

enum { FRAME_DATA = 1, FRAME_FAIL = 2, FRAME_ABORT = 3, FRAME_BYE = 4 };
enum { HELLO_OK = 0, HELLO_BAD_TOKEN, HELLO_BAD_SIZE, HELLO_BAD_RANK, HELLO_DUP_RANK };
enum { LINK_LIVE = 0, LINK_GONE, LINK_DEAD };

typedef struct {
    uint32_t type;
    int32_t  rank; /* FAIL/ABORT: the rank the frame is about */
    int32_t  code; /* FAIL: gpurma status; ABORT: the abort code */
    uint64_t len;  /* payload bytes */
} uid_frame_t;

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
} uid_state_t;

/* ---------------------------------------------------------------- wire */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void encode_frame(uint8_t *p, uint32_t type, int rank, int code, uint64_t len)
{
    put32(p, type);
    put32(p + 4, (uint32_t)rank);
    put32(p + 8, (uint32_t)code);
    put32(p + 12, UID_MAGIC); /* catches a stream that fell out of step */
    put32(p + 16, (uint32_t)(len >> 32));
    put32(p + 20, (uint32_t)len);
}

static int decode_frame(const uint8_t *p, uid_frame_t *f)
{
    f->type = get32(p);
    f->rank = (int32_t)get32(p + 4);
    f->code = (int32_t)get32(p + 8);
    f->len  = (uint64_t)get32(p + 16) << 32 | get32(p + 20);
    return get32(p + 12) == UID_MAGIC && f->type >= FRAME_DATA && f->type <= FRAME_BYE &&
           (f->type == FRAME_DATA || f->len <= UID_TEXT_MAX);
}

/* splitmix64's finalizer: spreads every input bit over the output. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Four differently seeded FNV-1a passes, each mixed: a well-spread 32-byte
 * filter value, not a cryptographic digest. */
static void token_from_text(const char *text, uint8_t token[UID_TOKEN_BYTES])
{
    size_t n = strlen(text);
    for (int word = 0; word < UID_TOKEN_BYTES / 8; word++) {
        uint64_t h = 0xcbf29ce484222325ull ^ mix64((uint64_t)word + 1);
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
        h = mix64(h ^ n);
        put32(token + 8 * word, (uint32_t)(h >> 32));
        put32(token + 8 * word + 4, (uint32_t)h);
    }
}

static int tokens_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0; /* no early exit: timing says nothing about the prefix */
    for (int i = 0; i < UID_TOKEN_BYTES; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

/* ------------------------------------------------------------ deadlines */

static uint64_t deadline_after(int64_t ms)
{
    return ms > 0 ? gpurma_now_ns() + (uint64_t)ms * 1000000ull : 0; /* 0: none */
}

static uint64_t earlier(uint64_t a, uint64_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* poll() timeout until deadline: -1 for none, 0 once passed. */
static int ms_left(uint64_t deadline)
{
    if (!deadline)
        return -1;
    uint64_t now = gpurma_now_ns();
    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int expired(uint64_t deadline) { return deadline && gpurma_now_ns() >= deadline; }

/* Waits for events on fd. Returns 0 (revents in *got), or TIMEOUT. */
static int wait_fd(int fd, short events, uint64_t deadline, short *got)
{
    for (;;) {
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, ms_left(deadline));
        if (n > 0) {
            if (got)
                *got = p.revents;
            return 0;
        }
        if (n == 0 || expired(deadline))
            return GPURMA_ERR_TIMEOUT;
        if (errno != EINTR)
            return GPURMA_ERR_TRANSPORT;
    }
}

/* ---------------------------------------------------------- link I/O */

static int is_peer_gone_errno(int e)
{
    return e == ECONNRESET || e == EPIPE || e == ENOTCONN || e == ETIMEDOUT || e == EHOSTUNREACH;
}

/* Reads exactly len bytes: 0, PEER_FAILED (closed or reset), TIMEOUT or
 * TRANSPORT. */
static int link_recv(uid_link_t *l, void *buf, size_t len, uint64_t deadline)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = recv(l->fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n, len -= (size_t)n;
        } else if (n == 0) {
            return GPURMA_ERR_PEER_FAILED;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int rc = wait_fd(l->fd, POLLIN, deadline, NULL);
            if (rc)
                return rc;
        } else if (errno != EINTR) {
            return is_peer_gone_errno(errno) ? GPURMA_ERR_PEER_FAILED : GPURMA_ERR_TRANSPORT;
        }
    }
    return 0;
}

/* Writes exactly len bytes. With stop_on_input, returns GPURMA_ERR_AGAIN as
 * soon as the peer has something to say (rank 0 only speaks up mid-send
 * to report a failure). A frame left half written marks the link torn. */
static int link_send(uid_link_t *l, const void *buf, size_t len, uint64_t deadline,
                     int stop_on_input)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t n = send(l->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            p += n, len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        int rc = 0;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            short got = 0;
            rc = wait_fd(l->fd, POLLOUT | (stop_on_input ? POLLIN : 0), deadline, &got);
            if (!rc && stop_on_input && (got & POLLIN))
                rc = GPURMA_ERR_AGAIN;
            if (!rc)
                continue;
        } else {
            rc = n < 0 && is_peer_gone_errno(errno) ? GPURMA_ERR_PEER_FAILED : GPURMA_ERR_TRANSPORT;
        }
        if (p != buf)
            l->tx_torn = 1;
        return rc;
    }
    return 0;
}

static int link_send_frame(uid_link_t *l, uint32_t type, int rank, int code, const void *payload,
                           uint64_t len, uint64_t deadline, int stop_on_input)
{
    uint8_t hdr[UID_FRAME_BYTES];
    encode_frame(hdr, type, rank, code, len);
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
            if (l->tx_torn || link_send_frame(l, FRAME_FAIL, failed_rank, status, text, len,
                                              deadline_after(UID_CONTROL_MS), 0))
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

/* Acts on a control frame whose header is already read; reads its text.
 * Returns 0 for BYE (a normal goodbye) or the failure status. */
static int handle_control(uid_state_t *st, uid_link_t *l, const uid_frame_t *f, const char *what)
{
    char text[UID_TEXT_MAX + 1] = "";
    if (f->len) {
        int rc = link_recv(l, text, f->len, deadline_after(UID_CONTROL_MS));
        if (rc)
            return link_failed(st, l, rc, what);
        text[f->len] = '\0';
    }
    int me = st->bs->rank;
    switch (f->type) {
    case FRAME_BYE:
        GPURMA_DEBUG(GPURMA_SUB_BOOT, "uid bootstrap: rank %d closed its bootstrap", l->peer);
        link_close(l, LINK_GONE);
        return 0;
    case FRAME_ABORT: {
        /* From rank 0 the frame names who aborted; from others, the sender. */
        int who = me == 0 ? l->peer : f->rank;
        return fail_job(st, who, GPURMA_ERR_PEER_FAILED,
                        "rank %d aborted the job (code %d): %s", who, f->code, text);
    }
    case FRAME_FAIL:
        if (me == 0) /* only rank 0 reports failures */
            return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP,
                            "rank %d sent rank 0 an unexpected FAIL frame", l->peer);
        if (f->code == GPURMA_ERR_PEER_FAILED)
            return fail_job(st, f->rank, GPURMA_ERR_PEER_FAILED,
                            "rank %d failed (reported by rank 0: %s)", f->rank, text);
        return fail_job(st, f->rank, f->code < 0 ? f->code : GPURMA_ERR_BOOTSTRAP,
                        "rank 0 reported: %s", text);
    }
    return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP, "bad frame from rank %d",
                    l->peer);
}

/* Reads frames until a DATA header (returned in *f, payload still
 * unread). Control frames met first are handled; any of them fails the
 * collective, since a goodbye in the middle of one leaves it incomplete. */
static int link_expect_data(uid_state_t *st, uid_link_t *l, uid_frame_t *f, uint64_t deadline,
                            const char *what)
{
    uint8_t hdr[UID_FRAME_BYTES];
    int rc = link_recv(l, hdr, sizeof(hdr), deadline);
    if (rc)
        return link_failed(st, l, rc, what);
    if (!decode_frame(hdr, f))
        return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP,
                        "rank %d got a malformed frame from rank %d during %s", st->bs->rank,
                        l->peer, what);
    if (f->type == FRAME_DATA)
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
        int ready = poll(st->pfds, (nfds_t)n, ms_left(deadline));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            return fail_job(st, -1, GPURMA_ERR_TRANSPORT, "rank 0: poll failed: %s",
                            strerror(errno));
        if (ready == 0 && expired(deadline)) {
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
                return link_failed(st, l, got == 0 || is_peer_gone_errno(errno)
                                              ? GPURMA_ERR_PEER_FAILED : GPURMA_ERR_TRANSPORT,
                                   what);
            if (l->hdr_got < UID_FRAME_BYTES) {
                l->hdr_got += (size_t)got;
                if (l->hdr_got < UID_FRAME_BYTES)
                    continue;
                uid_frame_t f;
                if (!decode_frame(l->hdr, &f))
                    return fail_job(st, l->peer, GPURMA_ERR_BOOTSTRAP,
                                    "rank 0 got a malformed frame from rank %d during %s",
                                    l->peer, what);
                if (f.type != FRAME_DATA) {
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
        int rc = link_send_frame(l, FRAME_DATA, 0, 0, all, total, deadline, 0);
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
    int rc = link_send_frame(root, FRAME_DATA, st->bs->rank, 0, mine, len, deadline, 1);
    if (rc && rc != GPURMA_ERR_AGAIN)
        return link_failed(st, root, rc, what);
    uid_frame_t f;
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
    uint64_t deadline = deadline_after(bs->timeout_ms);
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
        uid_frame_t f;
        ssize_t n = recv(l->fd, hdr, sizeof(hdr), MSG_PEEK | MSG_DONTWAIT);
        if (n == (ssize_t)sizeof(hdr) && decode_frame(hdr, &f) && f.type != FRAME_DATA) {
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
            link_send_frame(l, FRAME_ABORT, bs->rank, code, text, len,
                            deadline_after(UID_CONTROL_MS), 0))
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
        char sink[4096];
        while (recv(st->links[i].fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
        }
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
            link_send_frame(l, FRAME_BYE, bs->rank, 0, NULL, 0, deadline_after(UID_CONTROL_MS),
                            0);
        /* Closing with unread input makes TCP send a reset, which can
         * destroy the goodbye before the peer reads it; drain first. */
        char sink[4096];
        while (recv(l->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
        }
        link_close(l, LINK_GONE);
    }
    uid_free(st);
    bs->impl = NULL;
}

static const gpurma_bootstrap_ops_t uid_ops = {
    .size      = sizeof(gpurma_bootstrap_ops_t),
    .name      = "uid",
    .allgather = uid_allgather,
    .barrier   = uid_barrier,
    .abort     = uid_abort,
    .finalize  = uid_finalize,
};

/* ------------------------------------------------------------- rendezvous */

static void configure_socket(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

#define PEER_TEXT_BYTES (NI_MAXHOST + NI_MAXSERV + 8) /* "host port service" */

static void describe_peer(int fd, char *out, size_t len)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
    if (getpeername(fd, (struct sockaddr *)&sa, &salen) == 0)
        getnameinfo((struct sockaddr *)&sa, salen, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out, len, "%s port %s", host, port);
}

static int open_listener(const char *host, const char *port, uint64_t deadline, int backlog,
                         int *out)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE};
    int warned = 0;
    for (;;) {
        struct addrinfo *list = NULL;
        int gai = getaddrinfo(host, port, &hints, &list);
        if (gai)
            return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: rank 0 cannot resolve "
                                    "listen address %s: %s", host ? host : "*", gai_strerror(gai));
        int err = 0;
        for (struct addrinfo *ai = list; ai; ai = ai->ai_next) {
            int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) {
                err = errno;
                continue;
            }
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0) {
                freeaddrinfo(list);
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                *out = fd;
                return 0;
            }
            err = errno;
            close(fd);
        }
        freeaddrinfo(list);
        /* The port may still belong to a job that is ending. */
        if (err != EADDRINUSE || expired(deadline))
            return gpurma_set_error(err == EADDRINUSE ? GPURMA_ERR_TIMEOUT : GPURMA_ERR_BOOTSTRAP,
                                    "uid bootstrap: rank 0 cannot listen on %s port %s: %s",
                                    host ? host : "*", port, strerror(err));
        if (!warned++)
            GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: %s port %s is in use; retrying",
                        host ? host : "*", port);
        struct timespec pause = {0, 100 * 1000000L};
        nanosleep(&pause, NULL);
    }
}

typedef struct {
    int      fd;
    uint64_t since;
    size_t   got;
    uint8_t  hello[UID_HELLO_BYTES];
} pending_conn_t;

static void reply_hello(int fd, uint32_t status)
{
    uint8_t reply[UID_REPLY_BYTES];
    put32(reply, UID_MAGIC);
    put32(reply + 4, UID_VERSION);
    put32(reply + 8, status);
    uid_link_t tmp = {.fd = fd};
    link_send(&tmp, reply, sizeof(reply), deadline_after(UID_CONTROL_MS), 0);
}

static const char *hello_verdict_text(uint32_t v)
{
    switch (v) {
    case HELLO_BAD_TOKEN:
        return "token mismatch (GPURMA_UID_TOKEN, or where it is unset MASTER_ADDR, "
               "MASTER_PORT, WORLD_SIZE or TORCHELASTIC_RUN_ID, differ from rank 0's)";
    case HELLO_BAD_SIZE:  return "WORLD_SIZE differs from rank 0's";
    case HELLO_BAD_RANK:  return "rank out of range";
    case HELLO_DUP_RANK:  return "another process already connected with this rank";
    }
    return "unknown reason";
}

/* Checks a complete hello; accepts the connection as a rank's link or
 * rejects it. Returns 1 when a rank was accepted. */
static int judge_hello(uid_state_t *st, pending_conn_t *c, const uint8_t *token)
{
    char who[PEER_TEXT_BYTES];
    describe_peer(c->fd, who, sizeof(who));
    int size = st->bs->size;
    uint32_t rank = get32(c->hello + 8 + UID_TOKEN_BYTES);
    uint32_t their_size = get32(c->hello + 12 + UID_TOKEN_BYTES);
    uint32_t verdict = HELLO_OK;
    if (get32(c->hello) != UID_MAGIC || get32(c->hello + 4) != UID_VERSION) {
        GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: rejected connection from %s: not a gpurma "
                    "uid bootstrap client of protocol %u", who, UID_VERSION);
        return 0; /* not ours: say nothing */
    }
    if (!tokens_equal(c->hello + 8, token))
        verdict = HELLO_BAD_TOKEN;
    else if (their_size != (uint32_t)size)
        verdict = HELLO_BAD_SIZE;
    else if (rank == 0 || rank >= (uint32_t)size)
        verdict = HELLO_BAD_RANK;
    else if (st->links[rank - 1].fd >= 0)
        verdict = HELLO_DUP_RANK;
    reply_hello(c->fd, verdict);
    if (verdict != HELLO_OK) {
        GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: rejected connection from %s claiming rank "
                    "%u of %u: %s", who, rank, their_size, hello_verdict_text(verdict));
        return 0;
    }
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "uid bootstrap: rank %u connected from %s", rank, who);
    st->links[rank - 1].fd = c->fd;
    c->fd = -1;
    return 1;
}

static int root_rendezvous(uid_state_t *st, const char *host, const char *port,
                           const uint8_t *token, uint64_t deadline)
{
    int size = st->bs->size;
    int listener = -1;
    int rc = open_listener(host, port, deadline, size < 4096 ? size : 4096, &listener);
    if (rc)
        return rc;
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "uid bootstrap: rank 0 listening on %s port %s for %d ranks",
                 host ? host : "*", port, size - 1);

    /* Hellos are read from all connections at once, so a silent or slow
     * stray cannot hold up the ranks queued behind it. */
    int cap = (size - 1 < 1024 ? size - 1 : 1024) + UID_MAX_STRAYS;
    int npend = 0, accepted = 0;
    pending_conn_t *pend = calloc((size_t)cap, sizeof(*pend));
    struct pollfd *pfds = calloc((size_t)cap + 1, sizeof(*pfds));
    if (!pend || !pfds) {
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "uid bootstrap: no memory");
        goto out;
    }
    while (accepted < size - 1) {
        uint64_t wake = deadline;
        for (int i = 0; i < npend; i++)
            wake = earlier(wake, pend[i].since + UID_HELLO_MS * 1000000ull);
        pfds[0] = (struct pollfd){listener, POLLIN, 0};
        for (int i = 0; i < npend; i++)
            pfds[i + 1] = (struct pollfd){pend[i].fd, POLLIN, 0};
        int ready = poll(pfds, (nfds_t)npend + 1, ms_left(wake));
        if (ready < 0 && errno != EINTR) {
            rc = gpurma_set_error(GPURMA_ERR_TRANSPORT, "uid bootstrap: poll: %s", strerror(errno));
            goto out;
        }
        if (expired(deadline)) {
            int missing = -1, nmissing = 0;
            for (int r = size - 1; r >= 1; r--)
                if (st->links[r - 1].fd < 0)
                    missing = r, nmissing++;
            /* The ranks already here are told why, rather than seeing rank 0
             * hang up as if it had died. */
            rc = fail_job(st, missing, GPURMA_ERR_TIMEOUT, "uid bootstrap: rank 0 timed out after "
                          "%lld ms waiting for rank %d to connect to %s port %s (%d of %d ranks "
                          "missing)", (long long)st->bs->timeout_ms, missing, host ? host : "*",
                          port, nmissing, size - 1);
            goto out;
        }
        for (int i = 0; ready > 0 && i < npend; i++) {
            pending_conn_t *c = &pend[i];
            if (!pfds[i + 1].revents)
                continue;
            ssize_t n = recv(c->fd, c->hello + c->got, sizeof(c->hello) - c->got, MSG_DONTWAIT);
            if (n > 0 && (c->got += (size_t)n) == sizeof(c->hello)) {
                accepted += judge_hello(st, c, token);
                if (c->fd >= 0)
                    close(c->fd), c->fd = -1;
            } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                close(c->fd), c->fd = -1;
            }
        }
        uint64_t now = gpurma_now_ns();
        int kept = 0;
        for (int i = 0; i < npend; i++) {
            if (pend[i].fd >= 0 && now > pend[i].since + UID_HELLO_MS * 1000000ull) {
                char who[PEER_TEXT_BYTES];
                describe_peer(pend[i].fd, who, sizeof(who));
                GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: dropped connection from %s: no "
                            "hello within %d ms", who, UID_HELLO_MS);
                close(pend[i].fd), pend[i].fd = -1;
            }
            if (pend[i].fd >= 0)
                pend[kept++] = pend[i];
        }
        npend = kept;
        if (ready > 0 && pfds[0].revents) {
            for (;;) {
                int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                    break;
                if (npend == cap) {
                    char who[PEER_TEXT_BYTES];
                    describe_peer(fd, who, sizeof(who));
                    GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: refused connection from %s: "
                                "too many connections without a hello", who);
                    close(fd);
                    continue;
                }
                pend[npend++] = (pending_conn_t){.fd = fd, .since = now};
            }
        }
    }
out:
    for (int i = 0; pend && i < npend; i++)
        if (pend[i].fd >= 0)
            close(pend[i].fd);
    free(pend);
    free(pfds);
    close(listener); /* later strays find the port closed */
    return rc;
}

/* One attempt: connect, say hello, read the verdict. Returns 0 (connected,
 * *fd set), GPURMA_ERR_AGAIN (worth retrying, reason in why) or a final
 * error. */
static int try_connect(uid_state_t *st, const struct addrinfo *ai, const uint8_t *hello,
                       uint64_t deadline, int *fd_out, char *why, size_t why_len)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        snprintf(why, why_len, "socket: %s", strerror(errno));
        return GPURMA_ERR_AGAIN;
    }
    int err = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
            short got = 0;
            if (wait_fd(fd, POLLOUT, deadline, &got) != 0) {
                err = ETIMEDOUT;
            } else {
                socklen_t len = sizeof(err);
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            }
        }
    }
    if (err) {
        snprintf(why, why_len, "connect: %s", strerror(err));
        close(fd);
        return GPURMA_ERR_AGAIN;
    }
    uid_link_t l = {.fd = fd};
    uint8_t reply[UID_REPLY_BYTES];
    int rc = link_send(&l, hello, UID_HELLO_BYTES, deadline, 0);
    if (!rc)
        rc = link_recv(&l, reply, sizeof(reply), deadline);
    if (rc) {
        /* A listener that closes on us may be an old job's, about to go. */
        snprintf(why, why_len, "no answer to hello (%s)", gpurma_strerror(rc));
        close(fd);
        return GPURMA_ERR_AGAIN;
    }
    if (get32(reply) != UID_MAGIC || get32(reply + 4) != UID_VERSION) {
        close(fd);
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: rank %d: the process at "
                                "MASTER_ADDR:MASTER_PORT does not speak gpurma uid protocol %u",
                                st->bs->rank, UID_VERSION);
    }
    if (get32(reply + 8) != HELLO_OK) {
        close(fd);
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: rank 0 rejected rank %d: "
                                "%s", st->bs->rank, hello_verdict_text(get32(reply + 8)));
    }
    *fd_out = fd;
    return 0;
}

static int member_connect(uid_state_t *st, const char *host, const char *port,
                          const uint8_t *token, uint64_t deadline)
{
    uint8_t hello[UID_HELLO_BYTES];
    put32(hello, UID_MAGIC);
    put32(hello + 4, UID_VERSION);
    memcpy(hello + 8, token, UID_TOKEN_BYTES);
    put32(hello + 8 + UID_TOKEN_BYTES, (uint32_t)st->bs->rank);
    put32(hello + 12 + UID_TOKEN_BYTES, (uint32_t)st->bs->size);

    char why[256] = "not tried";
    long pause_ms = 10;
    /* Rank 0 may start later than us, so refusals are retried until the
     * deadline, with a growing pause. */
    for (;;) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        struct addrinfo *list = NULL;
        int gai = getaddrinfo(host, port, &hints, &list);
        if (gai) {
            snprintf(why, sizeof(why), "cannot resolve: %s", gai_strerror(gai));
        } else {
            for (struct addrinfo *ai = list; ai; ai = ai->ai_next) {
                int fd = -1;
                int rc = try_connect(st, ai, hello, deadline, &fd, why, sizeof(why));
                if (rc != GPURMA_ERR_AGAIN) {
                    freeaddrinfo(list);
                    if (!rc)
                        st->links[0].fd = fd;
                    return rc;
                }
            }
            freeaddrinfo(list);
        }
        if (expired(deadline))
            return gpurma_set_error(GPURMA_ERR_TIMEOUT, "uid bootstrap: rank %d timed out after "
                                    "%lld ms connecting to rank 0 at %s port %s: %s",
                                    st->bs->rank, (long long)st->bs->timeout_ms, host, port, why);
        int left = ms_left(deadline);
        struct timespec pause = {0, (left >= 0 && left < pause_ms ? left : pause_ms) * 1000000L};
        nanosleep(&pause, NULL);
        pause_ms = pause_ms * 2 > 500 ? 500 : pause_ms * 2;
    }
}

/* ------------------------------------------------------------------ open */

static int parse_rank_env(const char *name, int *out)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: %s is not set (the uid "
                                "bootstrap reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT "
                                "like torchrun)", name);
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > INT_MAX)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: %s='%s' is not a "
                                "non-negative integer", name, v);
    *out = (int)x;
    return 0;
}

int gpurma_bootstrap_uid_open(int64_t timeout_ms, gpurma_bootstrap_t **out)
{
    int rank = 0, size = 0;
    int rc = parse_rank_env("RANK", &rank);
    if (!rc)
        rc = parse_rank_env("WORLD_SIZE", &size);
    if (rc)
        return rc;
    if (size < 1 || rank >= size)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: RANK=%d outside "
                                "WORLD_SIZE=%d", rank, size);
    const char *addr = getenv("MASTER_ADDR");
    const char *port = getenv("MASTER_PORT");
    if (!addr || !*addr)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: MASTER_ADDR is not set");
    if (!port || !*port)
        port = UID_DEFAULT_PORT;

    uint8_t token[UID_TOKEN_BYTES];
    const char *secret = gpurma_config()->uid_token;
    if (secret && secret[0]) {
        token_from_text(secret, token);
    } else {
        const char *run_id = getenv("TORCHELASTIC_RUN_ID");
        char text[1024];
        snprintf(text, sizeof(text), "gpurma-uid|%s|%s|%d|%s", addr, port, size,
                 run_id ? run_id : "");
        token_from_text(text, token);
    }

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
    st->nlinks = nlinks;
    st->wake[0] = st->wake[1] = -1;
    pthread_mutex_init(&st->io_mu, NULL);
    for (int i = 0; i < nlinks; i++)
        st->links[i] = (uid_link_t){.fd = -1, .peer = rank == 0 ? i + 1 : 0};
    bs->ops         = &uid_ops;
    bs->rank        = rank;
    bs->size        = size;
    bs->timeout_ms  = timeout_ms;
    bs->failed_rank = -1;
    bs->impl        = st;

    uint64_t deadline = deadline_after(timeout_ms);
    if (size > 1) {
        if (rank == 0) {
            const char *listen_on = gpurma_config()->uid_iface;
            if (!listen_on || !listen_on[0])
                listen_on = addr;
            rc = root_rendezvous(st, strcmp(listen_on, "*") ? listen_on : NULL, port, token,
                                 deadline);
        } else {
            rc = member_connect(st, addr, port, token, deadline);
        }
    }
    for (int i = 0; !rc && i < nlinks; i++)
        configure_socket(st->links[i].fd);
    if (!rc && size > 1) {
        if (pipe2(st->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
            st->wake[0] = st->wake[1] = -1;
            rc = gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: pipe: %s", strerror(errno));
        } else {
            /* The watcher blocks every signal, so that the application's
             * handlers keep running on the application's threads. */
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);
            st->watcher_started = pthread_create(&st->watcher, NULL, uid_watch, st) == 0;
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            if (!st->watcher_started)
                rc = gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: cannot start the "
                                      "watcher thread");
        }
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
