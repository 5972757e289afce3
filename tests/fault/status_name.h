/*
 * status_name.h - the enum name of a gpurma status, for the fault tests:
 * their scripts look for "GPURMA_ERR_PEER_FAILED" and the like in the output.
 */
#ifndef GPURMA_TESTS_STATUS_NAME_H
#define GPURMA_TESTS_STATUS_NAME_H

#include <gpurma.h>

static inline const char *status_name(gpurma_status_t s)
{
    switch (s) {
    case GPURMA_SUCCESS:             return "GPURMA_SUCCESS";
    case GPURMA_ERR_INVALID_ARG:     return "GPURMA_ERR_INVALID_ARG";
    case GPURMA_ERR_OUT_OF_BOUNDS:   return "GPURMA_ERR_OUT_OF_BOUNDS";
    case GPURMA_ERR_NO_MEMORY:       return "GPURMA_ERR_NO_MEMORY";
    case GPURMA_ERR_UNSUPPORTED:     return "GPURMA_ERR_UNSUPPORTED";
    case GPURMA_ERR_TIMEOUT:         return "GPURMA_ERR_TIMEOUT";
    case GPURMA_ERR_PEER_FAILED:     return "GPURMA_ERR_PEER_FAILED";
    case GPURMA_ERR_BOOTSTRAP:       return "GPURMA_ERR_BOOTSTRAP";
    case GPURMA_ERR_TRANSPORT:       return "GPURMA_ERR_TRANSPORT";
    case GPURMA_ERR_GPU:             return "GPURMA_ERR_GPU";
    case GPURMA_ERR_NOT_INITIALIZED: return "GPURMA_ERR_NOT_INITIALIZED";
    case GPURMA_ERR_AGAIN:           return "GPURMA_ERR_AGAIN";
    case GPURMA_ERR_INTERNAL:        return "GPURMA_ERR_INTERNAL";
    case GPURMA_ERR_FREED:           return "GPURMA_ERR_FREED";
    case GPURMA_ERR_MISALIGNED:      return "GPURMA_ERR_MISALIGNED";
    }
    return "unknown status";
}

#endif
