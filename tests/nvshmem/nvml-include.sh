#!/bin/sh
# nvml-include.sh DIR - prints a folder holding an nvml.h for building
# NVSHMEM's perftests: the toolkit's or the system's when there is one,
# otherwise DIR, where it writes a header with NVML's types only. The
# perftests' helpers name NVML's types and call NVML (through dlopen) only
# for --mmap buffers, which no run of ours asks for, so the types suffice;
# API version 11 makes them declare the fabric types themselves.
# Used by build-perftests.sh and tests/gpu/nvshmem-side-by-side.sh.
dir=${1:?usage: nvml-include.sh DIR}
for d in /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include /usr/include \
    $(find /opt /usr/local -maxdepth 8 -name nvml.h -path '*include*' -exec dirname {} \; \
        2>/dev/null | grep -v hwloc | head -3); do
    if [ -f "$d/nvml.h" ]; then
        echo "$d"
        exit 0
    fi
done
mkdir -p "$dir" || exit 1
cat >"$dir/nvml.h" <<'NVML'
/* Written by tests/nvshmem/nvml-include.sh: NVML's types, no functions. */
#pragma once
#define NVML_API_VERSION 11
#define NVML_SUCCESS 0
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlGpuP2PCapsIndex_enum;
typedef int nvmlGpuP2PStatus_t;
NVML
echo "$dir"
