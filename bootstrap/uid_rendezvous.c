/*
 * uid_rendezvous.c - rank 0 admits the other ranks of a uid bootstrap job;
 * the others connect to it.
 *
 * Rank 0 must get its ranks in while anything else connects to its port:
 * port scanners, clients of other protocols, strays of another job, or
 * hundreds of connections that say nothing and stay open. So:
 *   - hellos are read from all connections at once, and a connection's
 *     first bytes are read as soon as it is accepted: a rank, which sends
 *     its hello right after connecting, is admitted at once;
 *   - a connection whose first bytes are not a hello's is dropped at once;
 *   - one that has not sent a whole hello after the hello deadline (a
 *     fraction of the job's timeout, at most two seconds) is dropped;
 *   - when the table of connections waiting for their hello is full, the
 *     oldest is dropped to make room: a new connection is never refused,
 *     so a rank always gets its turn however many are held open;
 *   - the listening queue is as long as the system allows, so a burst of
 *     connections cannot make the kernel drop a rank's connection request;
 *   - what is dropped is logged in a few lines a second: the first drop of
 *     each kind in a second with the peer's address, then one summary line
 *     a second with the counts.
 * Connections with the right token but a wrong size or rank come from the
 * job's own processes (few, and misconfigured): each is logged.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gpurma_internal.h"
#include "uid_owner.h"
#include "uid_rendezvous.h"
#include "uid_sock.h"
#include "uid_wire.h"

#define UID_HELLO_MS_MIN 500  /* bounds of the hello deadline */
#define UID_HELLO_MS_MAX 2000
#define UID_MAX_STRAYS   64   /* connections waiting for a hello, beyond the ranks */
#define UID_ACCEPT_BATCH 64   /* accepts between two reads of the waiting connections */
#define UID_LOG_NS       1000000000ull /* one line of each kind, and one summary, a second */

/* ------------------------------------------------------------------ rank 0 */

/* Why a connection was dropped. */
enum { DROP_SILENT, DROP_EVICTED, DROP_FOREIGN, DROP_BAD_TOKEN, DROP_KINDS };

typedef struct {
    int      fd;
    uint64_t since;
    size_t   got;
    uint8_t  hello[UID_HELLO_BYTES];
} pending_conn_t;

typedef struct {
    int      hello_ms;
    uint64_t quiet_until[DROP_KINDS]; /* no line of that kind before this time */
    unsigned dropped[DROP_KINDS];     /* since the last summary */
    unsigned total;                   /* their sum */
    unsigned silenced;                /* of those, dropped without a line of their own */
    uint64_t since;                   /* first drop counted */
    uint64_t summary_after;           /* no summary before this time */
} drop_log_t;

typedef struct {
    const uint8_t  *token;
    int             size;
    int            *fds;      /* [size]: admitted ranks' sockets */
    int             admitted;
    pending_conn_t *pend;     /* in order of arrival: the oldest first */
    int             npend, cap;
    drop_log_t      log;
} admission_t;

/* A rank sends its hello as soon as it is connected, so a fraction of the
 * job's timeout is plenty, even for a rank descheduled on a loaded node. */
static int hello_deadline_ms(int64_t timeout_ms)
{
    int64_t ms = timeout_ms > 0 ? timeout_ms / 10 : UID_HELLO_MS_MAX;
    return ms < UID_HELLO_MS_MIN ? UID_HELLO_MS_MIN : ms > UID_HELLO_MS_MAX ? UID_HELLO_MS_MAX
                                                                         : (int)ms;
}

GPURMA_PRINTF(4, 5)
static void drop(admission_t *a, pending_conn_t *c, int kind, const char *fmt, ...)
{
    drop_log_t *log = &a->log;
    uint64_t now = gpurma_now_ns();
    if (!log->total++) {
        /* A summary covers a second at least (the last one, whatever is left). */
        log->since = now;
        if (log->summary_after < now + UID_LOG_NS)
            log->summary_after = now + UID_LOG_NS;
    }
    log->dropped[kind]++;
    if (now < log->quiet_until[kind]) {
        log->silenced++;
    } else {
        log->quiet_until[kind] = now + UID_LOG_NS;
        char who[GPURMA_SOCK_PEER_TEXT], why[512];
        gpurma_sock_describe_peer(c->fd, who, sizeof(who));
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: %s connection from %s%s",
                    kind == DROP_FOREIGN || kind == DROP_BAD_TOKEN ? "rejected" : "dropped", who,
                    why);
    }
    /* A wrong token got its verdict: let it arrive. Nothing else is owed a
     * goodbye, and a reset leaves no TIME_WAIT behind. */
    if (kind == DROP_BAD_TOKEN)
        close(c->fd);
    else
        gpurma_sock_abort(c->fd);
    c->fd = -1;
}

/* One line for the drops that had none of their own, once a second, and
 * a last one for what is left. */
static void report_drops(drop_log_t *log, int final)
{
    uint64_t now = gpurma_now_ns();
    if (!log->silenced || (!final && now < log->summary_after))
        return;
    GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: dropped %u connections that did not authenticate "
                "within %d ms (%u silent, %u evicted for newer ones, %u of another protocol, %u "
                "with a wrong token) in the last %.1f s", log->total, log->hello_ms,
                log->dropped[DROP_SILENT], log->dropped[DROP_EVICTED], log->dropped[DROP_FOREIGN],
                log->dropped[DROP_BAD_TOKEN], (double)(now - log->since) / 1e9);
    memset(log->dropped, 0, sizeof(log->dropped));
    log->total         = 0;
    log->silenced      = 0;
    log->summary_after = now + UID_LOG_NS;
}

static void reply_hello(int fd, uint32_t verdict)
{
    uint8_t reply[UID_REPLY_BYTES];
    gpurma_uid_encode_reply(reply, verdict);
    gpurma_sock_send(fd, reply, sizeof(reply), gpurma_sock_deadline_after(UID_CONTROL_MS), 0, NULL);
}

/* A process of another user on this host, where the OS can tell: it could
 * not map this job's shared memory (0600) anyway, and it has no business
 * in the job even when it knows the token. A connection from this host
 * whose owner the OS's readable tables do not list (one reset right after
 * its hello, say) is refused too: admitted, it would hold the rank it
 * claimed and lock out the real one. */
static int other_user(int fd)
{
    unsigned long uid;
    int known = gpurma_sock_local_peer_uid(fd, &uid);
    return known < 0 || (known > 0 && uid != (unsigned long)geteuid());
}

/* Checks a complete hello; admits the connection as a rank's or rejects
 * it. */
static void judge_hello(admission_t *a, pending_conn_t *c)
{
    gpurma_uid_hello_t h;
    gpurma_uid_decode_hello(c->hello, &h);
    uint32_t verdict = UID_HELLO_OK;
    if (!gpurma_uid_tokens_equal(h.token, a->token))
        verdict = UID_HELLO_BAD_TOKEN;
    else if (h.size != (uint32_t)a->size)
        verdict = UID_HELLO_BAD_SIZE;
    else if (h.rank == 0 || h.rank >= (uint32_t)a->size)
        verdict = UID_HELLO_BAD_RANK;
    else if (a->fds[h.rank] >= 0)
        verdict = UID_HELLO_DUP_RANK;
    else if (other_user(c->fd))
        verdict = UID_HELLO_OTHER_USER;
    reply_hello(c->fd, verdict);
    if (verdict == UID_HELLO_BAD_TOKEN) {
        drop(a, c, DROP_BAD_TOKEN, " claiming rank %u of %u: %s", h.rank, h.size,
             gpurma_uid_verdict_text(verdict));
        return;
    }
    char who[GPURMA_SOCK_PEER_TEXT];
    gpurma_sock_describe_peer(c->fd, who, sizeof(who));
    if (verdict != UID_HELLO_OK) {
        GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: rejected connection from %s claiming rank "
                    "%u of %u: %s", who, h.rank, h.size, gpurma_uid_verdict_text(verdict));
        close(c->fd);
        c->fd = -1;
        return;
    }
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "uid bootstrap: rank %u connected from %s", h.rank, who);
    a->fds[h.rank] = c->fd;
    a->admitted++;
    c->fd = -1;
}

/* Reads what the connection has sent; judges it once its hello is whole.
 * Leaves c->fd open only while the hello may still come. */
static void read_hello(admission_t *a, pending_conn_t *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, c->hello + c->got, sizeof(c->hello) - c->got, MSG_DONTWAIT);
        if (n > 0) {
            c->got += (size_t)n;
            if (!gpurma_uid_hello_prefix_ok(c->hello, c->got))
                drop(a, c, DROP_FOREIGN, ": not a gpurma uid bootstrap client of protocol %u",
                     UID_VERSION);
            else if (c->got == sizeof(c->hello))
                judge_hello(a, c);
            else
                continue;
            return;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            close(c->fd), c->fd = -1; /* gone before its hello: nothing to say */
        return;
    }
}

/* Keeps the waiting connections in order of arrival, open ones only. */
static void compact_pending(admission_t *a)
{
    int kept = 0;
    for (int i = 0; i < a->npend; i++)
        if (a->pend[i].fd >= 0)
            a->pend[kept++] = a->pend[i];
    a->npend = kept;
}

/* Accepts what the listening queue holds, a batch at a time. */
static void accept_batch(admission_t *a, int listener)
{
    for (int n = 0; n < UID_ACCEPT_BATCH; n++) {
        int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            if (!a->npend) {
                /* Nothing to give up: let the queue wait rather than spin. */
                struct timespec pause = {0, 10 * 1000000L};
                nanosleep(&pause, NULL);
                return;
            }
            drop(a, &a->pend[0], DROP_EVICTED, ": no hello yet, and no file descriptor left "
                 "for a newer connection");
            compact_pending(a);
            continue;
        }
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0)
            return;
        pending_conn_t c = {.fd = fd, .since = gpurma_now_ns()};
        read_hello(a, &c);
        if (c.fd < 0)
            continue;
        if (a->npend == a->cap) {
            drop(a, &a->pend[0], DROP_EVICTED, ": no hello yet, and %d connections are waiting "
                 "for theirs (the oldest makes room)", a->cap);
            compact_pending(a);
        }
        a->pend[a->npend++] = c;
    }
}

static int timed_out(const char *host, const char *port, int size, int64_t timeout_ms,
                     const int *fds)
{
    int missing = -1, nmissing = 0;
    for (int r = size - 1; r >= 1; r--)
        if (fds[r] < 0)
            missing = r, nmissing++;
    return gpurma_set_error(GPURMA_ERR_TIMEOUT, "uid bootstrap: rank 0 timed out after %lld ms "
                            "waiting for rank %d to connect to %s port %s (%d of %d ranks "
                            "missing)", (long long)timeout_ms, missing, host ? host : "*", port,
                            nmissing, size - 1);
}

int gpurma_uid_admit_ranks(const char *host, const char *port, const uint8_t *token, int size,
                           int64_t timeout_ms, uint64_t deadline, int *fds)
{
    int listener = -1;
    int rc = gpurma_sock_listen(host, port, SOMAXCONN, deadline, &listener);
    if (rc)
        return rc;
    GPURMA_DEBUG(GPURMA_SUB_BOOT, "uid bootstrap: rank 0 listening on %s port %s for %d ranks",
                 host ? host : "*", port, size - 1);

    admission_t a = {.token = token, .size = size, .fds = fds,
                     .cap = (size - 1 < 1024 ? size - 1 : 1024) + UID_MAX_STRAYS,
                     .log = {.hello_ms = hello_deadline_ms(timeout_ms)}};
    uint64_t hello_ns = (uint64_t)a.log.hello_ms * 1000000ull;
    a.pend = calloc((size_t)a.cap, sizeof(*a.pend));
    struct pollfd *pfds = calloc((size_t)a.cap + 1, sizeof(*pfds));
    if (!a.pend || !pfds) {
        rc = gpurma_set_error(GPURMA_ERR_NO_MEMORY, "uid bootstrap: no memory");
        goto out;
    }
    while (a.admitted < size - 1) {
        uint64_t wake = deadline;
        if (a.npend)
            wake = gpurma_sock_earlier(wake, a.pend[0].since + hello_ns);
        if (a.log.silenced)
            wake = gpurma_sock_earlier(wake, a.log.summary_after);
        pfds[0] = (struct pollfd){listener, POLLIN, 0};
        for (int i = 0; i < a.npend; i++)
            pfds[i + 1] = (struct pollfd){a.pend[i].fd, POLLIN, 0};
        int ready = poll(pfds, (nfds_t)a.npend + 1, gpurma_sock_ms_left(wake));
        if (ready < 0 && errno != EINTR) {
            rc = gpurma_set_error(GPURMA_ERR_TRANSPORT, "uid bootstrap: poll: %s", strerror(errno));
            goto out;
        }
        if (gpurma_sock_expired(deadline)) {
            rc = timed_out(host, port, size, timeout_ms, fds);
            goto out;
        }
        for (int i = 0; ready > 0 && i < a.npend; i++)
            if (pfds[i + 1].revents)
                read_hello(&a, &a.pend[i]);
        uint64_t now = gpurma_now_ns();
        for (int i = 0; i < a.npend; i++)
            if (a.pend[i].fd >= 0 && now >= a.pend[i].since + hello_ns)
                drop(&a, &a.pend[i], DROP_SILENT, ": no hello within %d ms", a.log.hello_ms);
        compact_pending(&a);
        if (ready > 0 && pfds[0].revents)
            accept_batch(&a, listener);
        report_drops(&a.log, 0);
    }
out:
    report_drops(&a.log, 1);
    for (int i = 0; a.pend && i < a.npend; i++)
        close(a.pend[i].fd);
    free(a.pend);
    free(pfds);
    close(listener); /* later strays find the port closed */
    return rc;
}

/* --------------------------------------------------------------- other ranks */

/* Whether the listener at the other end of fd is a process of another user
 * on this host, which no rank 0 of this job is (it could not share the
 * job's memory): a process that took the port first. The hello would hand
 * it the job's token, and its OK would make it the job's rank 0, so nothing
 * is sent; the reason goes to why, and to the log once per join. */
static int listener_of_other_user(int fd, int rank, int *warned, char *why, size_t why_len)
{
    unsigned long owner, me = (unsigned long)geteuid();
    if (gpurma_sock_local_peer_uid(fd, &owner) <= 0 || owner == me)
        return 0;
    snprintf(why, why_len, "the process listening there belongs to user %lu, not to this "
             "rank's user %lu: not this job's rank 0, so the hello with the job's token was "
             "not sent", owner, me);
    if (!(*warned)++)
        GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: rank %d: %s; retrying until the timeout "
                    "(the port may be freed for rank 0)", rank, why);
    return 1;
}

/* A connect to a port of this host that nothing listens on can meet
 * itself: when the kernel picks that very port as the source, the socket
 * is connected to itself, and would read its own hello back as rank 0's
 * verdict. */
static int connected_to_itself(int fd)
{
    struct sockaddr_storage a, b;
    socklen_t alen = sizeof(a), blen = sizeof(b);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    return !getsockname(fd, (struct sockaddr *)&a, &alen) &&
           !getpeername(fd, (struct sockaddr *)&b, &blen) && alen == blen && !memcmp(&a, &b, alen);
}

/* One attempt: connect, say hello, read the verdict. Returns 0 (admitted,
 * *fd_out set), GPURMA_ERR_AGAIN (worth retrying, reason in why) or a final
 * error. */
static int try_join(const struct addrinfo *ai, const uint8_t *hello, int rank, uint64_t deadline,
                    int *fd_out, int *warned, char *why, size_t why_len)
{
    int fd = -1;
    int rc = gpurma_sock_connect(ai, deadline, &fd, why, why_len);
    if (rc)
        return rc;
    if (connected_to_itself(fd)) {
        snprintf(why, why_len, "connected to itself (TCP simultaneous open while nothing "
                               "listened on the port)");
        /* closed at once, with no TIME_WAIT: the port is rank 0's to take */
        struct linger now = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
        close(fd);
        return GPURMA_ERR_AGAIN;
    }
    if (listener_of_other_user(fd, rank, warned, why, why_len)) {
        close(fd);
        return GPURMA_ERR_AGAIN;
    }
    uint8_t reply[UID_REPLY_BYTES];
    rc = gpurma_sock_send(fd, hello, UID_HELLO_BYTES, deadline, 0, NULL);
    if (!rc)
        rc = gpurma_sock_recv(fd, reply, sizeof(reply), deadline);
    if (rc) {
        /* A listener that closes on us may be an old job's, about to go. */
        snprintf(why, why_len, "no answer to hello (%s)", gpurma_strerror(rc));
        close(fd);
        return GPURMA_ERR_AGAIN;
    }
    uint32_t verdict;
    if (!gpurma_uid_decode_reply(reply, &verdict)) {
        close(fd);
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: rank %d: the process at "
                                "MASTER_ADDR:MASTER_PORT does not speak gpurma uid protocol %u",
                                rank, UID_VERSION);
    }
    if (verdict != UID_HELLO_OK) {
        close(fd);
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "uid bootstrap: rank 0 rejected rank %d: "
                                "%s", rank, gpurma_uid_verdict_text(verdict));
    }
    *fd_out = fd;
    return 0;
}

int gpurma_uid_join_root(const char *host, const char *port, const uint8_t *token, int rank,
                         int size, int64_t timeout_ms, uint64_t deadline, int *fd)
{
    uint8_t hello[UID_HELLO_BYTES];
    gpurma_uid_encode_hello(hello, token, rank, size);
    char why[256] = "not tried";
    long pause_ms = 10;
    int warned = 0;
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
                int rc = try_join(ai, hello, rank, deadline, fd, &warned, why, sizeof(why));
                if (rc != GPURMA_ERR_AGAIN) {
                    freeaddrinfo(list);
                    return rc;
                }
            }
            freeaddrinfo(list);
        }
        if (gpurma_sock_expired(deadline))
            return gpurma_set_error(GPURMA_ERR_TIMEOUT, "uid bootstrap: rank %d timed out after "
                                    "%lld ms connecting to rank 0 at %s port %s: %s", rank,
                                    (long long)timeout_ms, host, port, why);
        int left = gpurma_sock_ms_left(deadline);
        struct timespec pause = {0, (left >= 0 && left < pause_ms ? left : pause_ms) * 1000000L};
        nanosleep(&pause, NULL);
        pause_ms = pause_ms * 2 > 500 ? 500 : pause_ms * 2;
    }
}
