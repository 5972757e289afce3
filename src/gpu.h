/*
 * gpu.h - the GPU runtime as the core sees it. Builds without CUDA or ROCm,
 * and machines without a driver, see zero GPUs and run the host backend.
 */
#ifndef GPURMA_GPU_H
#define GPURMA_GPU_H

/* Number of GPUs this process can use; 0 when none or no driver. */
int gpurma_gpu_count(void);

#endif
