// gpu_kernels_hip.hip - the shim's kernels for HIP, compiled by hipcc: the
// same source as the CUDA build (gpu_kernels.cu), its runtime names mapped
// by gpu_runtime.h.
#define GPURMA_GPU_HIP 1
#include "gpu_kernels.cu"
