/*
 * gpu_bench.cu - the GPU benchmark of gpurma-bench --gpu as a program of
 * its own (tools/gpurma_bench_gpu.cu has the code), for
 * tests/gpu/run-device.sh:  gpu_bench [--max SIZE] [--quick]
 */
#include "tools/gpurma_bench_gpu.h"

int main(int argc, char **argv) { return gpurma_bench_gpu_main(argc, argv); }
