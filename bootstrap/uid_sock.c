/*
 * uid_sock.c - TCP socket I/O bounded by deadlines, for the uid bootstrap.
 * Every wait is a poll() against the caller's deadline; sockets are
 * nonblocking, so no call can block past it.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gpurma_internal.h"
#include "uid_owner.h"
#include "uid_sock.h"

/* ------------------------------------------------------------ deadlines */

uint64_t gpurma_sock_deadline_after(int64_t ms)
{
    return ms > 0 ? gpurma_now_ns() + (uint64_t)ms * 1000000ull : 0;
}

uint64_t gpurma_sock_earlier(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

int gpurma_sock_ms_left(uint64_t deadline)
{
    if (!deadline)
        return -1;
    uint64_t now = gpurma_now_ns();
    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

int gpurma_sock_expired(uint64_t deadline) { return deadline && gpurma_now_ns() >= deadline; }

/* ------------------------------------------------------------------ I/O */

int gpurma_sock_wait(int fd, short events, uint64_t deadline, short *got)
{
    for (;;) {
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, gpurma_sock_ms_left(deadline));
        if (n > 0) {
            if (got)
                *got = p.revents;
            return 0;
        }
        if (n == 0 || gpurma_sock_expired(deadline))
            return GPURMA_ERR_TIMEOUT;
        if (errno != EINTR)
            return GPURMA_ERR_TRANSPORT;
    }
}

int gpurma_sock_peer_gone(int err)
{
    return err == ECONNRESET || err == EPIPE || err == ENOTCONN || err == ETIMEDOUT ||
           err == EHOSTUNREACH;
}

int gpurma_sock_recv(int fd, void *buf, size_t len, uint64_t deadline)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n, len -= (size_t)n;
        } else if (n == 0) {
            return GPURMA_ERR_PEER_FAILED;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int rc = gpurma_sock_wait(fd, POLLIN, deadline, NULL);
            if (rc)
                return rc;
        } else if (errno != EINTR) {
            return gpurma_sock_peer_gone(errno) ? GPURMA_ERR_PEER_FAILED : GPURMA_ERR_TRANSPORT;
        }
    }
    return 0;
}

int gpurma_sock_send(int fd, const void *buf, size_t len, uint64_t deadline, int stop_on_input,
                     size_t *sent)
{
    const uint8_t *p = buf;
    int rc = 0;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            p += n, len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            short got = 0;
            rc = gpurma_sock_wait(fd, POLLOUT | (stop_on_input ? POLLIN : 0), deadline, &got);
            if (!rc && stop_on_input && (got & POLLIN))
                rc = GPURMA_ERR_AGAIN;
            if (!rc)
                continue;
        } else {
            rc = n < 0 && gpurma_sock_peer_gone(errno) ? GPURMA_ERR_PEER_FAILED
                                                       : GPURMA_ERR_TRANSPORT;
        }
        break;
    }
    if (sent)
        *sent = (size_t)(p - (const uint8_t *)buf);
    return rc;
}

void gpurma_sock_drain(int fd)
{
    char sink[4096];
    while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
    }
}

void gpurma_sock_abort(int fd)
{
    struct linger now = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
    close(fd);
}

/* --------------------------------------------------------- connections */

void gpurma_sock_configure(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

void gpurma_sock_describe_peer(int fd, char *out, size_t len)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
    if (getpeername(fd, (struct sockaddr *)&sa, &salen) == 0)
        getnameinfo((struct sockaddr *)&sa, salen, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out, len, "%s port %s", host, port);
}

int gpurma_sock_listen(const char *host, const char *port, int backlog, uint64_t deadline,
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
        /* The port may still belong to a job that is ending. Whose it is
         * tells an earlier job of this user from another user's process,
         * which this job's other ranks refuse to greet (uid_rendezvous.c). */
        char holder[160] = "";
        unsigned long owner;
        if (err == EADDRINUSE && gpurma_sock_port_listener_uid(port, &owner))
            snprintf(holder, sizeof(holder), " (a process of %s user %lu listens on it%s)",
                     owner == (unsigned long)geteuid() ? "this" : "another", owner,
                     owner == (unsigned long)geteuid()
                         ? ": another job? each needs its own MASTER_PORT or GPURMA_UID_TOKEN"
                         : "");
        if (err != EADDRINUSE || gpurma_sock_expired(deadline))
            return gpurma_set_error(err == EADDRINUSE ? GPURMA_ERR_TIMEOUT : GPURMA_ERR_BOOTSTRAP,
                                    "uid bootstrap: rank 0 cannot listen on %s port %s: %s%s",
                                    host ? host : "*", port, strerror(err), holder);
        if (!warned++)
            GPURMA_WARN(GPURMA_SUB_BOOT, "uid bootstrap: %s port %s is in use%s; retrying",
                        host ? host : "*", port, holder);
        struct timespec pause = {0, 100 * 1000000L};
        nanosleep(&pause, NULL);
    }
}

int gpurma_sock_connect(const struct addrinfo *ai, uint64_t deadline, int *out, char *why,
                        size_t why_len)
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
            if (gpurma_sock_wait(fd, POLLOUT, deadline, NULL) != 0) {
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
    *out = fd;
    return 0;
}
