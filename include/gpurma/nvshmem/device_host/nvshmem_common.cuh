/*
 * device_host/nvshmem_common.cuh - a path some NVSHMEM programs include
 * directly (NVSHMEM's perftests among them); everything it would give them
 * comes with nvshmem.h here.
 */
#ifndef GPURMA_NVSHMEM_DEVICE_HOST_COMMON_CUH
#define GPURMA_NVSHMEM_DEVICE_HOST_COMMON_CUH
#include "nvshmem.h"
#endif
