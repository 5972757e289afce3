/*
 * uid_sock.h - TCP socket I/O bounded by deadlines, for the uid bootstrap.
 *
 * A deadline is an absolute gpurma_now_ns() time; 0 means none. Functions
 * that move bytes return 0, GPURMA_ERR_PEER_FAILED (the other end closed or
 * reset), GPURMA_ERR_TIMEOUT (the deadline passed) or GPURMA_ERR_TRANSPORT
 * (any other socket error, errno kept), and set no error message: the
 * caller knows what it was doing and says so.
 */
#ifndef GPURMA_UID_SOCK_H
#define GPURMA_UID_SOCK_H

#include <netdb.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ deadlines */

uint64_t gpurma_sock_deadline_after(int64_t ms); /* ms <= 0: none */
uint64_t gpurma_sock_earlier(uint64_t a, uint64_t b);
int gpurma_sock_ms_left(uint64_t deadline);     /* poll() timeout: -1 none, 0 passed */
int gpurma_sock_expired(uint64_t deadline);

/* ------------------------------------------------------------------ I/O */

/* Waits for events on fd; their revents in *got (may be NULL). */
int gpurma_sock_wait(int fd, short events, uint64_t deadline, short *got);
/* Whether errno value err means the other end is gone. */
int gpurma_sock_peer_gone(int err);
/* Reads exactly len bytes. */
int gpurma_sock_recv(int fd, void *buf, size_t len, uint64_t deadline);
/* Writes exactly len bytes; *sent (may be NULL) says how many went out.
 * With stop_on_input, returns GPURMA_ERR_AGAIN as soon as the other end
 * has something to say. */
int gpurma_sock_send(int fd, const void *buf, size_t len, uint64_t deadline, int stop_on_input,
                     size_t *sent);
/* Discards what has arrived and not been read: closing a socket with unread
 * input makes TCP send a reset, which can destroy the last frame sent. */
void gpurma_sock_drain(int fd);
/* Closes with a reset: no TIME_WAIT state is left behind. For connections
 * not worth a goodbye (a flood of strangers would otherwise fill the
 * machine's port table with closed connections for a minute). */
void gpurma_sock_abort(int fd);

/* --------------------------------------------------------- connections */

/* Nonblocking, no Nagle delay. */
void gpurma_sock_configure(int fd);

/* "host port service" of the other end, for messages. */
#define GPURMA_SOCK_PEER_TEXT (NI_MAXHOST + NI_MAXSERV + 8)
void gpurma_sock_describe_peer(int fd, char *out, size_t len);

/* A nonblocking listening socket on host (NULL: every address) and port
 * with a queue of backlog connections, retried while the port is still
 * held by an ending job, until deadline. Sets the error message on failure. */
int gpurma_sock_listen(const char *host, const char *port, int backlog, uint64_t deadline,
                       int *out);

/* One nonblocking connection attempt to ai, waited for until deadline.
 * Returns 0 and *out, or GPURMA_ERR_AGAIN with the reason in why. */
int gpurma_sock_connect(const struct addrinfo *ai, uint64_t deadline, int *out, char *why,
                        size_t why_len);

#endif
