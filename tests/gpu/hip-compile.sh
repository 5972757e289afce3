#!/bin/sh
# hip-compile.sh - portability check: the public device header compiles
# with hipcc for AMD targets. Every function of gpurma_device.h is
# instantiated in a kernel (tests/gpu/hip_compile_check.hip) and compiled,
# not run, so no AMD GPU is needed. The library's HIP runtime (the shim
# src/gpu/gpu_hip.c and its kernels src/gpu/gpu_kernels_hip.hip) is compiled
# too.
#
# Environment: HIPCC (default: hipcc on PATH), HIP_CHECK_ARCHS (default
# "gfx90a gfx908"). Exit status: 0 pass, 1 fail, 77 when hipcc (Debian
# package hipcc) or the device libraries for the targets are missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${top_srcdir:-$here/../..}
hipcc=${HIPCC:-hipcc}
if ! command -v "$hipcc" >/dev/null 2>&1; then
    echo "SKIP: $hipcc not found (Debian: apt-get install hipcc)"
    exit 77
fi
archs=${HIP_CHECK_ARCHS:-gfx90a gfx908}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpurma-hip.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
compiled=0
for arch in $archs; do
    log=$work/$arch.log
    "$hipcc" --offload-arch="$arch" -std=c++17 -O2 -Wall -Wextra -I"$src/include" \
        -c "$src/tests/gpu/hip_compile_check.hip" -o "$work/$arch.o" >"$log" 2>&1
    rc=$?
    if grep -q 'cannot find ROCm device library' "$log"; then
        echo "SKIP $arch: this hipcc has no device library for it"
        continue
    fi
    # Warnings from the library's own headers count as failures; those of
    # the HIP headers are the toolchain's business.
    if [ $rc -ne 0 ] || grep -E 'gpurma[^ ]*\.(h|hip):[0-9]+:[0-9]+: warning' "$log" >/dev/null; then
        echo "FAIL $arch: hipcc --offload-arch=$arch"
        grep -v '^Traceback\|rocm_agent_enumerator\|^  ' "$log" | head -40
        status=1
    else
        echo "PASS $arch: every device function compiles"
        compiled=$((compiled + 1))
    fi
    # The library's HIP runtime (configure --with-rocm): the shim's kernels
    # and the shim itself, compiled as a ROCm build compiles them.
    inc="-I$src/include -I$src/src/common -I$src/src/gpu -I$src/src/core"
    # shellcheck disable=SC2086
    if ! "$hipcc" --offload-arch="$arch" -std=c++17 -O2 -Wall -Wextra $inc \
        -c "$src/src/gpu/gpu_kernels_hip.hip" -o "$work/kernels-$arch.o" >"$log" 2>&1 ||
        grep -E 'gpu[^ ]*\.(h|cu|hip):[0-9]+:[0-9]+: warning' "$log" >/dev/null; then
        echo "FAIL $arch: hipcc src/gpu/gpu_kernels_hip.hip"
        grep -v '^Traceback\|rocm_agent_enumerator\|^  ' "$log" | head -40
        status=1
    else
        echo "PASS $arch: the shim's kernels compile for HIP"
    fi
done
cc=${CC:-cc}
hip_root=$(hipconfig --path 2>/dev/null || echo /opt/rocm)
if [ $compiled -gt 0 ] && command -v "$cc" >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    if "$cc" -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"$hip_root/include" $inc \
        "$src/src/gpu/gpu_hip.c" >"$work/shim.log" 2>&1; then
        echo "PASS: src/gpu/gpu_hip.c (the GPU shim over HIP) compiles"
    else
        echo "FAIL: src/gpu/gpu_hip.c"
        head -40 "$work/shim.log"
        status=1
    fi
fi
if [ $status -eq 0 ] && [ $compiled -eq 0 ]; then
    exit 77
fi
exit $status
