/*
 * gpurma_bench_gpu.h - the GPU benchmarks of gpurma-bench (CUDA builds).
 */
#ifndef GPURMA_BENCH_GPU_H
#define GPURMA_BENCH_GPU_H

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the GPU benchmarks between ranks 0 and 1 (two ranks, one GPU each)
 * and prints their tables on rank 0. Initializes and finalizes gpurma
 * itself, so call it instead of gpurma_init, before any CUDA call (it sets
 * CUDA_MODULE_LOADING=EAGER first). argv[0] is a program name; options:
 *   [--max] SIZE   largest bandwidth size (k, m, g suffixes; default 1g)
 *   --quick        fewer repetitions
 * Returns 0, 77 when it cannot run here (no GPU, not 2 ranks), 2 on a usage
 * error, 1 on a failure. */
int gpurma_bench_gpu_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
