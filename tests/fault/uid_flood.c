/*
 * uid_flood.c - keeps many unwanted TCP connections open to a uid bootstrap
 * root, the abuse a port scanner, a stuck client or a hostile neighbour
 * inflicts on MASTER_ADDR:MASTER_PORT. Used by uid-flood.sh.
 *
 *   uid_flood HOST PORT COUNT MODE SECONDS
 *
 * Keeps COUNT connections open for SECONDS, counted from the first connection
 * the root accepts (a root slow to start, e.g. under a sanitizer on a loaded
 * machine, gets its whole deadline): whenever the root closes one,
 * another takes its place at once, so the root is hammered for as long as
 * it listens. MODE says what each connection sends once connected:
 *   silent   nothing
 *   garbage  40 bytes that are not a gpurma hello (an HTTP request line)
 *   partial  the first 20 bytes of a well-formed hello, then nothing
 *   token    a whole hello with the right magic and a wrong token
 * Connections refused (nobody listening yet, or any more) are retried every
 * 50 ms. Prints "uid_flood: COUNT connections opened" once that many have
 * been (a script waits for it before starting the ranks), and
 * "uid_flood: MODE x COUNT: opened N, closed by the root M, refused R" at
 * the end (SECONDS passed, or SIGTERM). Exit: 0, or 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { SLOT_IDLE, SLOT_CONNECTING, SLOT_OPEN };

typedef struct {
    int fd;
    int state;
} slot_t;

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What a connection of MODE sends; its length in *len (0: nothing). */
static const char *payload(const char *mode, size_t *len)
{
    /* magic "GRMU", protocol 1, 32 bytes of token, rank 1, size 2 */
    static const char hello[48] = "GRMU\0\0\0\1wrong-token-wrong-token-wrong-to\0\0\0\1\0\0\0\2";
    static const char http[] = "GET / HTTP/1.1\r\nHost: example\r\n\r\n\0\0\0\0\0\0";
    if (!strcmp(mode, "garbage"))
        return *len = 40, http;
    if (!strcmp(mode, "partial"))
        return *len = 20, hello;
    if (!strcmp(mode, "token"))
        return *len = sizeof(hello), hello;
    *len = 0;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s HOST PORT COUNT silent|garbage|partial|token SECONDS\n",
                argv[0]);
        return 2;
    }
    int count = atoi(argv[3]);
    const char *mode = argv[4];
    double seconds = atof(argv[5]);
    size_t len;
    const char *data = payload(mode, &len);
    if (count < 1 || count > 4000 || seconds <= 0 ||
        (!data && strcmp(mode, "silent"))) {
        fprintf(stderr, "uid_flood: bad arguments\n");
        return 2;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    int gai = getaddrinfo(argv[1], argv[2], &hints, &ai);
    if (gai) {
        fprintf(stderr, "uid_flood: %s: %s\n", argv[1], gai_strerror(gai));
        return 2;
    }
    slot_t *slots = calloc((size_t)count, sizeof(*slots));
    struct pollfd *pfds = calloc((size_t)count, sizeof(*pfds));
    if (!slots || !pfds)
        return 2;
    for (int i = 0; i < count; i++)
        slots[i] = (slot_t){-1, SLOT_IDLE};

    /* Stopped early with SIGTERM, it still reports. */
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    long opened = 0, closed = 0, refused = 0;
    double end = 0; /* set at the first connection opened */
    while (!stop && (end == 0 || now_s() < end)) {
        int idle = 0;
        for (int i = 0; i < count; i++) {
            slot_t *s = &slots[i];
            if (s->state != SLOT_IDLE)
                continue;
            s->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (s->fd < 0) {
                idle++;
                continue;
            }
            if (connect(s->fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
                s->state = SLOT_CONNECTING;
            } else {
                close(s->fd);
                s->fd = -1;
                refused++;
                idle++;
            }
        }
        for (int i = 0; i < count; i++)
            pfds[i] = (struct pollfd){slots[i].fd,
                                      slots[i].state == SLOT_CONNECTING ? POLLOUT : POLLIN, 0};
        /* Slots left idle (refused) are retried after a pause. */
        int wait_ms = idle ? 50 : 100;
        if (poll(pfds, (nfds_t)count, wait_ms) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < count; i++) {
            slot_t *s = &slots[i];
            short ev = pfds[i].revents;
            if (s->fd < 0 || !ev)
                continue;
            if (s->state == SLOT_CONNECTING) {
                int err = 0;
                socklen_t el = sizeof(err);
                getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (err) {
                    close(s->fd);
                    *s = (slot_t){-1, SLOT_IDLE};
                    refused++;
                    continue;
                }
                s->state = SLOT_OPEN;
                if (end == 0)
                    end = now_s() + seconds;
                if (++opened == count) {
                    printf("uid_flood: %d connections opened\n", count);
                    fflush(stdout);
                }
                if (len && send(s->fd, data, len, MSG_NOSIGNAL) < 0) {
                    close(s->fd);
                    *s = (slot_t){-1, SLOT_IDLE};
                    closed++;
                }
                continue;
            }
            char sink[256];
            ssize_t n = recv(s->fd, sink, sizeof(sink), MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                /* A reset: the root's end leaves no TIME_WAIT, so thousands
                 * of flood connections do not use up the machine's ports
                 * (the job's ranks need some). */
                struct linger now = {.l_onoff = 1, .l_linger = 0};
                setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
                close(s->fd);
                *s = (slot_t){-1, SLOT_IDLE};
                closed++;
            }
        }
    }
    printf("uid_flood: %s x %d: opened %ld, closed by the root %ld, refused %ld\n", mode, count,
           opened, closed, refused);
    for (int i = 0; i < count; i++)
        if (slots[i].fd >= 0)
            close(slots[i].fd);
    freeaddrinfo(ai);
    free(slots);
    free(pfds);
    return 0;
}
