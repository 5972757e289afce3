/*
 * uid_squat.c - a process that takes a uid bootstrap job's port before its
 * rank 0 does, and plays rank 0: what another user of a shared host can do
 * to a job whose MASTER_ADDR/MASTER_PORT it knows. Used by uid-squatter.sh,
 * run as another user than the job's.
 *
 *   uid_squat HOST PORT SECONDS [FILE]
 *   uid_squat --replay HOST PORT FILE
 *   uid_squat --replay-reset HOST PORT FILE
 *
 * Listens on HOST:PORT for SECONDS. Every connection's bytes are counted;
 * one that sends a whole hello of the uid protocol (48 bytes starting with
 * its magic) is answered "admitted" and kept open, as a rank 0 would, so
 * a rank that takes the squatter for its rank 0 hands it the job's token
 * and then waits for it; the first such hello is written to FILE. Prints
 * "uid_squat: listening" once it listens, and at the end
 *   uid_squat: C connection(s), B byte(s) received, H hello(s) answered
 * With --replay it is the other side: it sends FILE's hello (- reads
 * standard input, which a process of another user can be handed) to the
 * rank 0 at HOST:PORT, as whoever saw one can (the token travels in clear
 * text), and prints "uid_squat: verdict V" (0 admitted; UID_HELLO_* in
 * bootstrap/uid_wire.h), or "uid_squat: no verdict". --replay-reset sends
 * the hello and resets the connection at once, before rank 0 can look at
 * who sent it, and prints "uid_squat: sent and reset".
 * Exit: 0, 1 when it cannot listen or connect, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define HELLO_BYTES 48
#define MAX_CONNS   64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int listen_on(const char *host, const char *port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE}, *ai = NULL;
    if (getaddrinfo(host, port, &hints, &ai) || !ai)
        return -1;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    return fd;
}

/* Sends a recorded hello to a rank 0 and prints its verdict. */
static int replay(const char *host, const char *port, const char *file, int reset)
{
    unsigned char hello[HELLO_BYTES], reply[12];
    FILE *f = strcmp(file, "-") ? fopen(file, "rb") : stdin;
    size_t n = f ? fread(hello, 1, sizeof(hello), f) : 0;
    if (f && f != stdin)
        fclose(f);
    if (n != sizeof(hello)) {
        fprintf(stderr, "uid_squat: %s holds no hello\n", file);
        return 2;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int fd = -1;
    if (!getaddrinfo(host, port, &hints, &ai) && ai) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
            close(fd);
            fd = -1;
        }
        freeaddrinfo(ai);
    }
    if (fd < 0) {
        perror("uid_squat: connect");
        return 1;
    }
    if (reset) {
        struct linger now = {1, 0};
        int sent = send(fd, hello, sizeof(hello), MSG_NOSIGNAL) == (ssize_t)sizeof(hello);
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
        close(fd);
        printf(sent ? "uid_squat: sent and reset\n" : "uid_squat: no hello sent\n");
        return 0;
    }
    struct timeval tv = {5, 0}; /* a rank 0 answers at once */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    size_t got = 0;
    int sent = send(fd, hello, sizeof(hello), MSG_NOSIGNAL) == (ssize_t)sizeof(hello);
    for (ssize_t r = 1; sent && got < sizeof(reply) && r > 0;)
        if ((r = recv(fd, reply + got, sizeof(reply) - got, 0)) > 0)
            got += (size_t)r;
    close(fd);
    if (got == sizeof(reply))
        printf("uid_squat: verdict %u\n", (unsigned)reply[8] << 24 | (unsigned)reply[9] << 16 |
                                                (unsigned)reply[10] << 8 | reply[11]);
    else
        printf("uid_squat: no verdict\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && (!strcmp(argv[1], "--replay") || !strcmp(argv[1], "--replay-reset")))
        return replay(argv[2], argv[3], argv[4], !strcmp(argv[1], "--replay-reset"));
    if ((argc != 4 && argc != 5) || atof(argv[3]) <= 0) {
        fprintf(stderr, "usage: uid_squat HOST PORT SECONDS [FILE]\n"
                        "       uid_squat --replay HOST PORT FILE\n"
                        "       uid_squat --replay-reset HOST PORT FILE\n");
        return 2;
    }
    const char *record = argc == 5 ? argv[4] : NULL;
    int lfd = listen_on(argv[1], argv[2]);
    if (lfd < 0) {
        perror("uid_squat: listen");
        return 1;
    }
    printf("uid_squat: listening\n");
    fflush(stdout);
    struct pollfd pfd[MAX_CONNS + 1];
    size_t got[MAX_CONNS + 1];
    unsigned char hello[MAX_CONNS + 1][HELLO_BYTES];
    int n = 1, conns = 0, answered = 0;
    size_t bytes = 0;
    pfd[0] = (struct pollfd){lfd, POLLIN, 0};
    double end = now_s() + atof(argv[3]);
    for (double left; (left = end - now_s()) > 0;) {
        if (poll(pfd, (nfds_t)n, (int)(left * 1000) + 1) <= 0)
            continue;
        for (int i = 1; i < n; i++) {
            if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            unsigned char buf[4096];
            ssize_t r = recv(pfd[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (r <= 0) { /* gone: its slot is reused */
                close(pfd[i].fd);
                pfd[i] = pfd[n - 1];
                got[i] = got[n - 1];
                memcpy(hello[i], hello[n - 1], HELLO_BYTES);
                n--, i--;
                continue;
            }
            bytes += (size_t)r;
            for (ssize_t k = 0; k < r && got[i] < HELLO_BYTES; k++)
                hello[i][got[i]++] = buf[k];
            if (got[i] == HELLO_BYTES && !memcmp(hello[i], "GRMU", 4)) {
                /* magic, protocol 1, verdict 0: admitted */
                static const unsigned char ok[12] = {'G', 'R', 'M', 'U', 0, 0, 0, 1, 0, 0, 0, 0};
                if (send(pfd[i].fd, ok, sizeof(ok), MSG_NOSIGNAL) == (ssize_t)sizeof(ok))
                    answered++;
                FILE *f = record ? fopen(record, "wbx") : NULL; /* the first one only */
                if (f) {
                    fwrite(hello[i], 1, HELLO_BYTES, f);
                    fclose(f);
                }
                got[i]++; /* answered once */
            }
        }
        if ((pfd[0].revents & POLLIN) && n <= MAX_CONNS) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0) {
                conns++;
                got[n] = 0;
                pfd[n++] = (struct pollfd){fd, POLLIN, 0};
            }
        }
    }
    printf("uid_squat: %d connection(s), %zu byte(s) received, %d hello(s) answered\n", conns,
           bytes, answered);
    return 0;
}
