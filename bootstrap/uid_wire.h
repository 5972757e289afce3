/*
 * uid_wire.h - the uid bootstrap's wire format: the hello a rank sends when
 * it connects, rank 0's reply, the frames of later traffic, and the token.
 * Every integer travels big-endian.
 *
 *   hello (48 bytes)  magic, version, token[32], rank, size
 *   reply (12 bytes)  magic, version, verdict (UID_HELLO_*)
 *   frame (24 bytes)  type, rank, code, magic, len (64 bits); len payload bytes follow
 */
#ifndef GPURMA_UID_WIRE_H
#define GPURMA_UID_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define UID_MAGIC       0x47524d55u /* "GRMU" */
#define UID_VERSION     1u
#define UID_TOKEN_BYTES 32
#define UID_HELLO_BYTES (4 + 4 + UID_TOKEN_BYTES + 4 + 4)
#define UID_REPLY_BYTES 12
#define UID_FRAME_BYTES 24
#define UID_TEXT_MAX    256 /* longest FAIL/ABORT explanation */
#define UID_CONTROL_MS  1000 /* bound on reading or writing one reply or control frame */

enum { UID_FRAME_DATA = 1, UID_FRAME_FAIL = 2, UID_FRAME_ABORT = 3, UID_FRAME_BYE = 4 };
enum {
    UID_HELLO_OK = 0, UID_HELLO_BAD_TOKEN, UID_HELLO_BAD_SIZE, UID_HELLO_BAD_RANK,
    UID_HELLO_DUP_RANK, UID_HELLO_OTHER_USER
};

typedef struct {
    uint32_t type;
    int32_t  rank; /* FAIL/ABORT: the rank the frame is about */
    int32_t  code; /* FAIL: gpurma status; ABORT: the abort code */
    uint64_t len;  /* payload bytes */
} gpurma_uid_frame_t;

typedef struct {
    uint8_t  token[UID_TOKEN_BYTES];
    uint32_t rank, size;
} gpurma_uid_hello_t;

void gpurma_uid_encode_frame(uint8_t p[UID_FRAME_BYTES], uint32_t type, int rank, int code,
                             uint64_t len);
/* 1 when p is a frame of this protocol (magic, known type, sane length). */
int gpurma_uid_decode_frame(const uint8_t p[UID_FRAME_BYTES], gpurma_uid_frame_t *f);

void gpurma_uid_encode_hello(uint8_t p[UID_HELLO_BYTES], const uint8_t *token, int rank,
                             int size);
/* Whether the first got bytes of a connection can begin a hello of this
 * protocol and version: a foreign client is told apart by its first bytes. */
int gpurma_uid_hello_prefix_ok(const uint8_t *p, size_t got);
/* Of a whole hello whose prefix is ok. */
void gpurma_uid_decode_hello(const uint8_t p[UID_HELLO_BYTES], gpurma_uid_hello_t *h);

void gpurma_uid_encode_reply(uint8_t p[UID_REPLY_BYTES], uint32_t verdict);
/* 1 and *verdict when p is a reply of this protocol and version. */
int gpurma_uid_decode_reply(const uint8_t p[UID_REPLY_BYTES], uint32_t *verdict);
const char *gpurma_uid_verdict_text(uint32_t verdict);
/* 1 when the address text names this host's loopback (every rank of the
 * job is then on one host). */
int gpurma_uid_addr_is_loopback(const char *addr);

/* The job's token: from secret (GPURMA_UID_TOKEN) when set, otherwise from
 * the launch environment (addr, port, size, the launchers' job and run ids
 * such as TORCHELASTIC_RUN_ID and SLURM_JOB_ID, and the user when addr is
 * loopback). A filter against strays, not cryptography: it travels in
 * clear text and the derived one is guessable. */
void gpurma_uid_job_token(const char *secret, const char *addr, const char *port, int size,
                          uint8_t token[UID_TOKEN_BYTES]);
/* Compares in constant time. */
int gpurma_uid_tokens_equal(const uint8_t *a, const uint8_t *b);

#endif
