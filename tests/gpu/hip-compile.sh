#!/bin/sh
# hip-compile.sh - portability check: the public device header compiles
# with hipcc for AMD targets. Every function of gpurma_device.h is
# instantiated in a kernel (tests/gpu/hip_compile_check.hip) and compiled,
# not run, so no AMD GPU is needed.
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
done
if [ $status -eq 0 ] && [ $compiled -eq 0 ]; then
    exit 77
fi
exit $status
