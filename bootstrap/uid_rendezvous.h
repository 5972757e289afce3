/*
 * uid_rendezvous.h - how the uid bootstrap's ranks find each other: rank 0
 * listens on MASTER_ADDR:MASTER_PORT and admits the other ranks, each of
 * which connects and says hello (uid_wire.h).
 */
#ifndef GPURMA_UID_RENDEZVOUS_H
#define GPURMA_UID_RENDEZVOUS_H

#include <stdint.h>

/* Rank 0: listens on host (NULL: every address) and port until ranks 1 to
 * size-1 have each connected with a valid hello; fds[r] receives rank r's
 * socket (fds has size entries, all -1 on entry). Connections that are not
 * such a rank are dropped. On a timeout returns GPURMA_ERR_TIMEOUT with the
 * message set and fds[] holding the ranks that did connect. timeout_ms is
 * for messages; deadline bounds the wait. */
int gpurma_uid_admit_ranks(const char *host, const char *port, const uint8_t *token, int size,
                           int64_t timeout_ms, uint64_t deadline, int *fds);

/* Ranks 1 to size-1: connects to rank 0 at host:port and says hello,
 * retrying refusals (rank 0 may start later) until deadline; *fd receives
 * the admitted socket. */
int gpurma_uid_join_root(const char *host, const char *port, const uint8_t *token, int rank,
                         int size, int64_t timeout_ms, uint64_t deadline, int *fd);

#endif
