/*
 * coll_kernels_alltoall.cu - the generic kernel of alltoall on a stream
 * (coll_kernels.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

GPURMA_COLL_KERNEL_FILE(alltoall, GPURMA_COLL_ALLTOALL)
