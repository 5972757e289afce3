/*
 * uid_id.c - unique ids: a 128-byte value naming one uid rendezvous (rank
 * 0's address and port, and a random token), made by one process and handed
 * to the others by any means (a store, MPI_Bcast, a file). Init from an id
 * needs no launch environment, so one process can take part in several jobs
 * (an NCCL-style library makes one per communicator).
 *
 *   magic "GRID" | version (4) | token (32) | port, text (8) | address, text (80)
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap.h"
#include "gpurma_internal.h"
#include "uid_wire.h"

#define ID_MAGIC     "GRID"
#define ID_VERSION   1u
#define ID_TOKEN_AT  8
#define ID_PORT_AT   (ID_TOKEN_AT + UID_TOKEN_BYTES)
#define ID_PORT_LEN  8
#define ID_ADDR_AT   (ID_PORT_AT + ID_PORT_LEN)
#define ID_ADDR_LEN  (GPURMA_UNIQUE_ID_BYTES - ID_ADDR_AT)

_Static_assert(ID_ADDR_LEN == 80, "unique id layout");
_Static_assert(sizeof(gpurma_unique_id_t) == GPURMA_UNIQUE_ID_BYTES, "unique id size");

/* A port the kernel says is free on addr. It is released again for rank 0
 * to bind at init; another process taking it in between makes that init
 * fail with a message, never join a wrong job (the token differs). */
static int free_port(const char *addr)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(addr, "0", &hints, &res) || !res)
        return -1;
    int port = -1, fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (fd >= 0 && !bind(fd, res->ai_addr, res->ai_addrlen) &&
        !getsockname(fd, (struct sockaddr *)&ss, &len))
        port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return port;
}

/* Rank 0 listens on GPURMA_UID_ADDR when set, else MASTER_ADDR,
 * else this host's name: the id must be made on the host of rank 0. */
GPURMA_API gpurma_status_t gpurma_get_unique_id(gpurma_unique_id_t *id)
{
    if (!id)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "get_unique_id: id is NULL");
    char host[ID_ADDR_LEN] = "";
    const char *addr = gpurma_config()->uid_iface;
    if (!addr || !addr[0] || !strcmp(addr, "*"))
        addr = getenv("MASTER_ADDR");
    if (!addr || !addr[0]) {
        if (gethostname(host, sizeof host - 1))
            return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "get_unique_id: gethostname failed");
        addr = host;
    }
    if (strlen(addr) >= ID_ADDR_LEN)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "get_unique_id: address '%s' is longer than %d characters", addr,
                                ID_ADDR_LEN - 1);
    int port = free_port(addr);
    if (port <= 0)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP,
                                "get_unique_id: no free TCP port on '%s' (set MASTER_ADDR or "
                                "GPURMA_UID_ADDR to an address of this host)", addr);
    uint8_t token[UID_TOKEN_BYTES];
    if (getrandom(token, sizeof token, 0) != (ssize_t)sizeof token)
        return gpurma_set_error(GPURMA_ERR_BOOTSTRAP, "get_unique_id: getrandom failed");
    memset(id, 0, sizeof *id);
    uint32_t version = htonl(ID_VERSION);
    memcpy(id->internal, ID_MAGIC, 4);
    memcpy(id->internal + 4, &version, 4);
    memcpy(id->internal + ID_TOKEN_AT, token, sizeof token);
    snprintf(id->internal + ID_PORT_AT, ID_PORT_LEN, "%d", port);
    memcpy(id->internal + ID_ADDR_AT, addr, strlen(addr));
    return GPURMA_SUCCESS;
}

int gpurma_uid_decode_id(const void *id, size_t len, int rank, int size,
                         gpurma_uid_explicit_t *out)
{
    const char *p = id;
    uint32_t version;
    if (!p || len != GPURMA_UNIQUE_ID_BYTES || memcmp(p, ID_MAGIC, 4))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "init: the unique id was not made by gpurma_get_unique_id");
    memcpy(&version, p + 4, 4);
    if (ntohl(version) != ID_VERSION)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "init: unique id of version %u, this library reads %u",
                                ntohl(version), ID_VERSION);
    if (size < 1 || rank < 0 || rank >= size)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG,
                                "init: rank %d of %d ranks is not valid with a unique id", rank,
                                size);
    if (!memchr(p + ID_PORT_AT, '\0', ID_PORT_LEN) || !memchr(p + ID_ADDR_AT, '\0', ID_ADDR_LEN))
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "init: the unique id is corrupt");
    memset(out, 0, sizeof *out);
    memcpy(out->addr, p + ID_ADDR_AT, strlen(p + ID_ADDR_AT) + 1);
    memcpy(out->port, p + ID_PORT_AT, strlen(p + ID_PORT_AT) + 1);
    char *end;
    long port = strtol(out->port, &end, 10);
    if (!out->addr[0] || *end || port < 1 || port > 65535)
        return gpurma_set_error(GPURMA_ERR_INVALID_ARG, "init: the unique id is corrupt");
    memcpy(out->token, p + ID_TOKEN_AT, UID_TOKEN_BYTES);
    out->rank = rank;
    out->size = size;
    return 0;
}
