/*
 * coll_kernels_broadcast.cu - the generic kernel of broadcast on a stream
 * (coll_kernels.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "coll_kernels.h"

GPURMA_COLL_KERNEL_FILE(broadcast, GPURMA_COLL_BROADCAST)
