/*
 * uid_owner.h - which user owns a TCP socket of this host: the other end of
 * a connection, or the listener on a port. The uid bootstrap asks so that
 * no process of another user joins a job (rank 0) or is handed the job's
 * token by a rank that takes it for rank 0 (the other ranks).
 */
#ifndef GPURMA_UID_OWNER_H
#define GPURMA_UID_OWNER_H

/* The user owning the other end of the connected TCP socket fd, when that
 * end is on this host (a loopback address or one of this host's): 1 and
 * *uid; 0 when the other end is elsewhere, or the OS's tables cannot be
 * read; -1 when the connection is gone (reset, closed) or the tables,
 * readable, list no such connection: nobody vouches for that end. */
int gpurma_sock_local_peer_uid(int fd, unsigned long *uid);

/* The user owning a socket that listens on TCP port (decimal text) on any
 * address of this host: 1 and *uid, else 0 (none, or it cannot be told). */
int gpurma_sock_port_listener_uid(const char *port, unsigned long *uid);

#endif
