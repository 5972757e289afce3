/*
 * coll_kernels_reduce_scatter.cu - the generic kernel of reduce-scatter on a stream
 * (coll_kernels.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

GPURMA_COLL_KERNEL_FILE(reduce_scatter, GPURMA_COLL_REDUCE_SCATTER)
