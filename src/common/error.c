/*
 * error.c - status strings, the per-thread detailed message, clocks, backoff.
 */
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "gpurma_internal.h"

static __thread char last_error[512];
/* Nonzero inside a query (see gpurma_error_mute): failures are reported by
 * the returned value only, and the message of the last failed status call
 * stays readable. */
static __thread unsigned muted;

const char *gpurma_strerror(gpurma_status_t status)
{
    switch (status) {
    case GPURMA_SUCCESS:             return "success";
    case GPURMA_ERR_INVALID_ARG:     return "invalid argument";
    case GPURMA_ERR_OUT_OF_BOUNDS:   return "out of the target window's bounds";
    case GPURMA_ERR_NO_MEMORY:       return "out of memory";
    case GPURMA_ERR_UNSUPPORTED:     return "unsupported";
    case GPURMA_ERR_TIMEOUT:         return "timed out";
    case GPURMA_ERR_PEER_FAILED:     return "a peer process failed";
    case GPURMA_ERR_BOOTSTRAP:       return "bootstrap failure";
    case GPURMA_ERR_TRANSPORT:       return "transport failure";
    case GPURMA_ERR_GPU:             return "GPU runtime failure";
    case GPURMA_ERR_NOT_INITIALIZED: return "not initialized";
    case GPURMA_ERR_AGAIN:           return "resource busy, try again";
    case GPURMA_ERR_INTERNAL:        return "internal error";
    case GPURMA_ERR_FREED:           return "use of a freed handle";
    case GPURMA_ERR_MISALIGNED:      return "misaligned address";
    }
    return "unknown status";
}

int gpurma_set_error(int status, const char *fmt, ...)
{
    va_list ap;
    if (muted) {
        char quiet[256];
        va_start(ap, fmt);
        vsnprintf(quiet, sizeof(quiet), fmt, ap);
        va_end(ap);
        GPURMA_DEBUG(GPURMA_SUB_INIT, "%s (query, not recorded): %s", gpurma_strerror(status),
                     quiet);
        return status;
    }
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    GPURMA_DEBUG(GPURMA_SUB_INIT, "%s: %s", gpurma_strerror(status), last_error);
    return status;
}

const char *gpurma_error_text(void) { return last_error; }

void gpurma_error_mute(void) { muted++; }
void gpurma_error_unmute(void) { muted--; }

uint64_t gpurma_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gpurma_backoff(uint64_t iter)
{
    if (iter < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    } else if (iter < 4096) {
        sched_yield();
    } else {
        struct timespec ts = {0, iter < 16384 ? 10000 : 100000};
        nanosleep(&ts, NULL);
    }
}
