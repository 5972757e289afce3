/*
 * checked.h - size arithmetic that reports wrap-around instead of doing it.
 *
 * Every size, count and offset the library derives from user input goes
 * through these: a window of SIZE_MAX bytes must fail at creation, not
 * become a segment of a few KiB. Each returns nonzero when the true result
 * does not fit in a size_t (and leaves *out unspecified). Not installed.
 */
#ifndef GPURMA_CHECKED_H
#define GPURMA_CHECKED_H

#include <stddef.h>

static inline int gpurma_size_add(size_t a, size_t b, size_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

static inline int gpurma_size_mul(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* x rounded up to a multiple of align (a power of two). */
static inline int gpurma_size_round_up(size_t x, size_t align, size_t *out)
{
    if (gpurma_size_add(x, align - 1, out))
        return 1;
    *out &= ~(align - 1);
    return 0;
}

/* n elements of elem bytes, rounded up to align. */
static inline int gpurma_size_array(size_t n, size_t elem, size_t align, size_t *out)
{
    size_t raw;
    return gpurma_size_mul(n, elem, &raw) || gpurma_size_round_up(raw, align, out);
}

#endif
