/*
 * gpu_kernels.h - launchers of the kernels in gpu_kernels.cu, a second
 * translation unit of gpu_ring (each unit holds its own copy of the
 * layer's state; both must be filled).
 */
#ifndef GPURMA_TESTS_NVSHMEM_GPU_KERNELS_H
#define GPURMA_TESTS_NVSHMEM_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

/* PE 0's data travels the ring: block puts, fence, signal_op (SET). */
void launch_ring_broadcast(char *data, size_t bytes, uint64_t *sig, cudaStream_t s);
/* Partial sums of n ints travel the ring; `blocks` blocks each carry a
 * chunk with put_signal_nbi (block form) and their own signal. */
void launch_ring_reduce(int *partial, int *acc, const int *mine, size_t n, uint64_t *sig,
                        int blocks, cudaStream_t s);
/* Every PE sends slot-sized chunks (tokens[pe] bytes) to every PE with
 * putmem_signal_nbi_block, then waits for all sources (wait_until_all). */
void launch_moe(char *recv, const char *send, size_t slot, const size_t *nbytes, uint64_t *sig,
                uint64_t round, cudaStream_t s);
/* dest = sum over the world of source (n ints), by one block of a kernel;
 * 0 (and nothing launched) where gpurma has no device collectives. */
int launch_reduce_block(int *dest, const int *source, size_t n, cudaStream_t s);
/* Typed atomics from one thread to every PE: see gpu_kernels.cu. */
void launch_atomics(int *i32, long long *i64, unsigned *u32, uint64_t *u64, cudaStream_t s);

#endif
