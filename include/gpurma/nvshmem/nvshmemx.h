/*
 * nvshmemx.h - NVSHMEM's extensions (nvshmemx_*). nvshmem.h already
 * declares them all, as NVSHMEM's headers do for each other; this header
 * exists so that programs that include it build unchanged.
 */
#ifndef GPURMA_NVSHMEM_NVSHMEMX_H
#define GPURMA_NVSHMEM_NVSHMEMX_H

#include "nvshmem.h"

#endif
