/*
 * coll_kernels_reduce.cu - the generic kernel of reduce on a stream
 * (coll_kernels.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

GPURMA_COLL_KERNEL_FILE(reduce, GPURMA_COLL_REDUCE)
