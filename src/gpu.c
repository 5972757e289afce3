/*
 * gpu.c - GPU discovery. Without a GPU runtime in the build, none.
 */
#include "gpu.h"

int gpurma_gpu_count(void) { return 0; }
