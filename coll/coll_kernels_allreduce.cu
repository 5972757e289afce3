/*
 * coll_kernels_allreduce.cu - the generic kernel of allreduce on a stream
 * (coll_kernels.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

GPURMA_COLL_KERNEL_FILE(allreduce, GPURMA_COLL_ALLREDUCE)
