/*
 * uid_owner.c - which user owns a TCP socket of this host (uid_owner.h).
 *
 * Linux lists every TCP socket of the network namespace, with the user that
 * made it, in /proc/net/tcp and /proc/net/tcp6; a connection accepted by a
 * listener is listed as the listener's user's. SO_PEERCRED would say it
 * directly, but only of unix sockets, and the rendezvous is TCP because
 * ranks on other hosts use it too.
 *
 * The files are read only when the other end is on this host: reading one
 * costs milliseconds where thousands of sockets are open, and rank 0 of a
 * job of a thousand ranks on other hosts would otherwise read it once per
 * rank. Where the owner cannot be told (another OS, another network
 * namespace, no /proc), the callers refuse nothing: this check keeps out
 * the other users of a shared host; the token and a private network are
 * what keep out everyone else.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "uid_owner.h"

#define TCP_STATE_LISTEN 0x0A /* the "st" column of /proc/net/tcp */

/* /proc/net/tcp's text for an address and port: each 32-bit word of the
 * address as the kernel holds it, in hex, then the port. */
static void proc_net_addr(const struct sockaddr_storage *sa, char *out, size_t len)
{
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        uint32_t w;
        memcpy(&w, &in->sin_addr, 4);
        snprintf(out, len, "%08X:%04X", w, ntohs(in->sin_port));
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        uint32_t w[4];
        memcpy(w, &in6->sin6_addr, 16);
        snprintf(out, len, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3],
                 ntohs(in6->sin6_port));
    }
}

/* An IPv4 address seen through an IPv6 socket (::ffff:a.b.c.d) as plain
 * IPv4. */
static void unmap_v4(struct sockaddr_storage *sa)
{
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    if (sa->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
        return;
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = in6->sin6_port};
    memcpy(&in.sin_addr, &in6->sin6_addr.s6_addr[12], 4);
    memset(sa, 0, sizeof(*sa));
    memcpy(sa, &in, sizeof(in));
}

/* The reverse, for the sockets /proc/net/tcp6 lists with mapped addresses. */
static void map_v4(struct sockaddr_storage *sa)
{
    if (sa->ss_family != AF_INET)
        return;
    struct sockaddr_in in;
    memcpy(&in, sa, sizeof(in));
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = in.sin_port};
    in6.sin6_addr.s6_addr[10] = in6.sin6_addr.s6_addr[11] = 0xff;
    memcpy(&in6.sin6_addr.s6_addr[12], &in.sin_addr, 4);
    memset(sa, 0, sizeof(*sa));
    memcpy(sa, &in6, sizeof(in6));
}

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr *b)
{
    if (a->ss_family != b->sa_family)
        return 0;
    if (a->ss_family == AF_INET)
        return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
    return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                   &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

/* Whether an (unmapped) address is this host's: loopback, or an address of
 * one of its interfaces. Unsure (getifaddrs failed) counts as yes: the
 * price is a read of /proc, never a wrong answer. */
static int on_this_host(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET &&
        (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127)
        return 1;
    if (sa->ss_family == AF_INET6 &&
        IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr))
        return 1;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs))
        return 1;
    int found = 0;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next)
        found = i->ifa_addr && same_addr(sa, i->ifa_addr);
    freeifaddrs(ifs);
    return found;
}

/* One socket line of /proc/net/tcp or tcp6. */
typedef struct {
    char          local[64], remote[64];
    unsigned      state;
    unsigned long uid;
} tcp_line_t;

typedef int (*line_match_t)(const tcp_line_t *line, const void *arg);

/* The owner of the first socket of the file that match accepts: 1 and
 * *uid; 0 when none matches, -1 when the table cannot be read. */
static int find_owner(const char *path, line_match_t match, const void *arg, unsigned long *uid)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char text[512];
    tcp_line_t line;
    int found = 0;
    while (!found && fgets(text, sizeof(text), f))
        /* sl local remote st tx:rx tr:when retrnsmt uid ... (the heading fails the %x) */
        if (sscanf(text, " %*s %63s %63s %x %*s %*s %*s %lu", line.local, line.remote,
                   &line.state, &line.uid) == 4 &&
            match(&line, arg)) {
            *uid = line.uid;
            found = 1;
        }
    fclose(f);
    return found;
}

typedef struct {
    char local[64], remote[64];
} tuple_text_t;

static int is_connection(const tcp_line_t *line, const void *arg)
{
    const tuple_text_t *want = arg;
    return !strcmp(line->local, want->local) && !strcmp(line->remote, want->remote);
}

int gpurma_sock_local_peer_uid(int fd, unsigned long *uid)
{
    struct sockaddr_storage peer, me;
    socklen_t plen = sizeof(peer), mlen = sizeof(me);
    if (getpeername(fd, (struct sockaddr *)&peer, &plen) ||
        getsockname(fd, (struct sockaddr *)&me, &mlen))
        return -1; /* reset or closed already: nobody to vouch for */
    if (peer.ss_family != AF_INET && peer.ss_family != AF_INET6)
        return 0;
    unmap_v4(&peer);
    unmap_v4(&me);
    if (!on_this_host(&peer))
        return 0;
    /* The other end's socket is the line whose local end is the peer and
     * whose remote end is this socket. An IPv4 connection is listed as
     * IPv4 by an IPv4 socket and as mapped IPv6 by an IPv6 one. */
    tuple_text_t want;
    proc_net_addr(&peer, want.local, sizeof(want.local));
    proc_net_addr(&me, want.remote, sizeof(want.remote));
    int found = find_owner(peer.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6",
                           is_connection, &want, uid);
    if (found <= 0 && peer.ss_family == AF_INET) {
        map_v4(&peer);
        map_v4(&me);
        proc_net_addr(&peer, want.local, sizeof(want.local));
        proc_net_addr(&me, want.remote, sizeof(want.remote));
        int mapped = find_owner("/proc/net/tcp6", is_connection, &want, uid);
        found = mapped > 0 ? 1 : found < 0 ? mapped : 0; /* -1: neither readable */
    }
    /* no table readable: the OS does not say (as in some containers) */
    return found > 0 ? 1 : found < 0 ? 0 : -1;
}

static int is_listener_on(const tcp_line_t *line, const void *arg)
{
    const char *port_hex = arg; /* ":XXXX" */
    size_t n = strlen(line->local), k = strlen(port_hex);
    return line->state == TCP_STATE_LISTEN && n > k && !strcmp(line->local + n - k, port_hex);
}

int gpurma_sock_port_listener_uid(const char *port, unsigned long *uid)
{
    char *end;
    long p = strtol(port, &end, 10);
    if (*end || p < 1 || p > 65535)
        return 0;
    char port_hex[8];
    snprintf(port_hex, sizeof(port_hex), ":%04lX", (unsigned long)p);
    return find_owner("/proc/net/tcp", is_listener_on, port_hex, uid) > 0 ||
           find_owner("/proc/net/tcp6", is_listener_on, port_hex, uid) > 0;
}
