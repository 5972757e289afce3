/*
 * nvshmem.h - NVSHMEM 3.x programs built against gpurma.
 *
 * Compile with -I<prefix>/include/gpurma/nvshmem (before NVSHMEM's own
 * include path, if any) and link -lgpurma_nvshmem -lgpurma. No -rdc needed
 * (it works with and without): every device call is inlined here and
 * reaches the library's state through a per-unit copy (detail/unit.h).
 *
 * Host and device calls share their names as in NVSHMEM. In device code
 * they run gpurma's device API; in host code they call libgpurma_nvshmem;
 * compiled as plain C on the host backend they run the device API from the
 * calling thread. What this layer does not provide is left undeclared, so
 * a program that uses it fails to compile naming the call; see the
 * README's porting section.
 */
#ifndef GPURMA_NVSHMEM_NVSHMEM_H
#define GPURMA_NVSHMEM_NVSHMEM_H

#include "gpurma/nvshmem/detail/types.h"
#include "gpurma/nvshmem/detail/host_api.h"
#include "gpurma/nvshmem/detail/unit.h"
#include "gpurma/nvshmem/detail/prims.h"
#include "gpurma/nvshmem/detail/rma.h"
#include "gpurma/nvshmem/detail/amo.h"
#include "gpurma/nvshmem/detail/sync.h"
#include "gpurma/nvshmem/detail/stream.h"
#include "gpurma/nvshmem/detail/coll.h"
#include "gpurma/nvshmem/detail/coll_bitwise.h"
#include "gpurma/nvshmem/detail/compat.h"

#endif
