/*
 * uid_wire.c - encoding and decoding of the uid bootstrap's hello, reply and
 * frames, and the job token (layout in uid_wire.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uid_wire.h"

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---------------------------------------------------------------- frames */

void gpurma_uid_encode_frame(uint8_t p[UID_FRAME_BYTES], uint32_t type, int rank, int code,
                             uint64_t len)
{
    put32(p, type);
    put32(p + 4, (uint32_t)rank);
    put32(p + 8, (uint32_t)code);
    put32(p + 12, UID_MAGIC); /* catches a stream that fell out of step */
    put32(p + 16, (uint32_t)(len >> 32));
    put32(p + 20, (uint32_t)len);
}

int gpurma_uid_decode_frame(const uint8_t p[UID_FRAME_BYTES], gpurma_uid_frame_t *f)
{
    f->type = get32(p);
    f->rank = (int32_t)get32(p + 4);
    f->code = (int32_t)get32(p + 8);
    f->len  = (uint64_t)get32(p + 16) << 32 | get32(p + 20);
    return get32(p + 12) == UID_MAGIC && f->type >= UID_FRAME_DATA && f->type <= UID_FRAME_BYE &&
           (f->type == UID_FRAME_DATA || f->len <= UID_TEXT_MAX);
}

/* ----------------------------------------------------------- hello, reply */

/* Magic and version: how every hello and reply begins. */
static void put_preamble(uint8_t p[8])
{
    put32(p, UID_MAGIC);
    put32(p + 4, UID_VERSION);
}

void gpurma_uid_encode_hello(uint8_t p[UID_HELLO_BYTES], const uint8_t *token, int rank, int size)
{
    put_preamble(p);
    memcpy(p + 8, token, UID_TOKEN_BYTES);
    put32(p + 8 + UID_TOKEN_BYTES, (uint32_t)rank);
    put32(p + 12 + UID_TOKEN_BYTES, (uint32_t)size);
}

int gpurma_uid_hello_prefix_ok(const uint8_t *p, size_t got)
{
    uint8_t want[8];
    put_preamble(want);
    return memcmp(p, want, got < sizeof(want) ? got : sizeof(want)) == 0;
}

void gpurma_uid_decode_hello(const uint8_t p[UID_HELLO_BYTES], gpurma_uid_hello_t *h)
{
    memcpy(h->token, p + 8, UID_TOKEN_BYTES);
    h->rank = get32(p + 8 + UID_TOKEN_BYTES);
    h->size = get32(p + 12 + UID_TOKEN_BYTES);
}

void gpurma_uid_encode_reply(uint8_t p[UID_REPLY_BYTES], uint32_t verdict)
{
    put_preamble(p);
    put32(p + 8, verdict);
}

int gpurma_uid_decode_reply(const uint8_t p[UID_REPLY_BYTES], uint32_t *verdict)
{
    if (!gpurma_uid_hello_prefix_ok(p, 8))
        return 0;
    *verdict = get32(p + 8);
    return 1;
}

const char *gpurma_uid_verdict_text(uint32_t verdict)
{
    switch (verdict) {
    case UID_HELLO_BAD_TOKEN:
        return "token mismatch (GPURMA_UID_TOKEN, or where it is unset MASTER_ADDR, "
               "MASTER_PORT, WORLD_SIZE, the user, or a job id (TORCHELASTIC_RUN_ID, "
               "SLURM_JOB_ID, ...) differ from rank 0's)";
    case UID_HELLO_BAD_SIZE: return "WORLD_SIZE differs from rank 0's";
    case UID_HELLO_BAD_RANK: return "rank out of range";
    case UID_HELLO_DUP_RANK: return "another process already connected with this rank";
    case UID_HELLO_OTHER_USER:
        return "the connection comes from a process of another user on rank 0's host";
    }
    return "unknown reason";
}

/* ----------------------------------------------------------------- token */

/* splitmix64's finalizer: spreads every input bit over the output. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Four differently seeded FNV-1a passes, each mixed: a well-spread 32-byte
 * filter value, not a cryptographic digest. */
static void token_from_text(const char *text, uint8_t token[UID_TOKEN_BYTES])
{
    size_t n = strlen(text);
    for (int word = 0; word < UID_TOKEN_BYTES / 8; word++) {
        uint64_t h = 0xcbf29ce484222325ull ^ mix64((uint64_t)word + 1);
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
        h = mix64(h ^ n);
        put32(token + 8 * word, (uint32_t)(h >> 32));
        put32(token + 8 * word + 4, (uint32_t)h);
    }
}

int gpurma_uid_addr_is_loopback(const char *addr)
{
    return addr && (!strncmp(addr, "127.", 4) || !strcmp(addr, "localhost") ||
                    !strcmp(addr, "::1") || !strcmp(addr, "[::1]") ||
                    !strncmp(addr, "::ffff:127.", 11));
}

void gpurma_uid_job_token(const char *secret, const char *addr, const char *port, int size,
                          uint8_t token[UID_TOKEN_BYTES])
{
    if (secret && secret[0]) {
        token_from_text(secret, token);
        return;
    }
    /* Whatever every rank of one job shares and another job started on the
     * same address and port most likely does not: the launchers' job and
     * run ids, and on a single host the user (ids of one user may differ
     * between hosts, so only where the address is loopback). */
    static const char *const job_vars[] = {
        "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
        "GROUP_WORLD_SIZE", "ROLE_NAME", "SLURM_JOB_ID", "SLURM_STEP_ID", "PBS_JOBID",
        "LSB_JOBID", "FLUX_JOB_ID", "JOB_ID"};
    char text[2048];
    int at = snprintf(text, sizeof(text), "gpurma-uid|%s|%s|%d", addr, port, size);
    for (size_t i = 0; i < sizeof(job_vars) / sizeof(job_vars[0]); i++) {
        const char *v = getenv(job_vars[i]);
        if (v && at >= 0 && (size_t)at < sizeof(text))
            at += snprintf(text + at, sizeof(text) - (size_t)at, "|%s=%s", job_vars[i], v);
    }
    if (gpurma_uid_addr_is_loopback(addr) && at >= 0 && (size_t)at < sizeof(text))
        snprintf(text + at, sizeof(text) - (size_t)at, "|uid=%lu", (unsigned long)getuid());
    token_from_text(text, token);
}

int gpurma_uid_tokens_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0; /* no early exit: timing says nothing about the prefix */
    for (int i = 0; i < UID_TOKEN_BYTES; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}
