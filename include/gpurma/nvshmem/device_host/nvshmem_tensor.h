/*
 * device_host/nvshmem_tensor.h - NVSHMEM's tensors are the arguments of its
 * tile API (nvshmemx_tile_*), which gpurma's NVSHMEM layer does not
 * provide: a program that includes this fails here, saying so.
 */
#error "gpurma's NVSHMEM layer has no tile API (nvshmem_tensor, nvshmemx_tile_*); see the README's porting section"
