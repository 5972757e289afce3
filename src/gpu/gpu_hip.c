/*
 * gpu_hip.c - the GPU shim over the HIP runtime (configure --with-rocm and
 * no CUDA): gpu_cuda.c's code, its runtime names mapped onto HIP's by
 * gpu_runtime.h. Kernels: gpu_kernels_hip.hip.
 *
 * Compiled and never run here: no AMD GPU has run it.
 */
#define GPURMA_GPU_HIP 1
#include "gpu_cuda.c"
