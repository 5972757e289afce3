/*
 * coll_kernels_allgather.cu - the generic kernel of allgather on a stream
 * (coll_kernels.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

GPURMA_COLL_KERNEL_FILE(allgather, GPURMA_COLL_ALLGATHER)
