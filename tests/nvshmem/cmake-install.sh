#!/bin/sh
# cmake-install.sh - installs gpurma into a temporary DESTDIR, then builds
# examples/nvshmem_cmake (a CMake project written for NVSHMEM) with
# find_package(NVSHMEM) and find_package(gpurma) and runs its programs;
# also builds the NVSHMEM example through pkg-config (gpurma-nvshmem.pc).
# Skips (77) without cmake.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
if ! command -v cmake >/dev/null 2>&1; then
    echo "SKIP: cmake not installed"
    exit 77
fi
LAUNCHER=${LAUNCHER-mpirun --allow-run-as-root --oversubscribe}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpurma-cmake.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL cmake-install: $*"
    exit 1
}

make -C "$top_builddir" install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "make install DESTDIR=$tmp/root"; }
cfg=$(find "$tmp/root" -path '*/cmake/nvshmem/NVSHMEMConfig.cmake' | head -n 1)
test -n "$cfg" || fail "no NVSHMEMConfig.cmake installed"
cmakedir=$(dirname "$(dirname "$cfg")")
libdir=$(dirname "$cmakedir")
test -f "$cmakedir/gpurma/gpurmaConfig.cmake" || fail "no gpurmaConfig.cmake installed"
for h in nvshmem.h nvshmemx.h detail/unit.h; do
    find "$tmp/root" -path "*/include/gpurma/nvshmem/$h" | grep -q . || fail "$h not installed"
done

# The layer's library exports NVSHMEM's names and its primitives only.
lib=$libdir/libgpurma_nvshmem.so
if command -v nm >/dev/null 2>&1; then
    leaked=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' |
        grep -v '^nvshmem_\|^nvshmemx_\|^gpurma_nvshmemi_' || :)
    test -z "$leaked" || fail "$lib exports other symbols: $leaked"
fi

cuda=OFF
if test "${HAVE_CUDA:-no}" = yes; then
    cuda=ON
fi
# A sanitized libgpurma needs programs linked with the same sanitizers (their
# runtime must load first); nvcc's links cannot be, so the CUDA program is
# left to the plain build then.
san=
for s in ${GPURMA_SANITIZERS:-}; do san="$san -fsanitize=$s"; done
test -n "$san" && cuda=OFF
cmake -S "$top_srcdir/examples/nvshmem_cmake" -B "$tmp/build" -DNVSHMEM_DIR="$cmakedir/nvshmem" \
    -Dgpurma_DIR="$cmakedir/gpurma" -DWITH_CUDA=$cuda -DCMAKE_C_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" >"$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log"; fail "cmake configure"; }
cmake --build "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "cmake build"; }
echo "cmake: configured and built (CUDA program: $cuda)"

LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
GPURMA_TIMEOUT_MS=${GPURMA_TIMEOUT_MS:-30000}
export GPURMA_TIMEOUT_MS NVSHMEM_SYMMETRIC_SIZE=16M
# shellcheck disable=SC2086 # LAUNCHER is a word list
run2() {
    timeout -k 5 60 $LAUNCHER -n 2 "$@" >"$tmp/run.log" 2>&1
    rc=$?
    cat "$tmp/run.log"
    return $rc
}
run2 "$tmp/build/nvshmem_ring" || fail "nvshmem_ring (CMake) at 2 PEs"
test "$(grep -c ': ok$' "$tmp/run.log")" -eq 2 || fail "nvshmem_ring: not every PE ok"
run2 "$tmp/build/gpurma_hello_ring" || fail "gpurma_hello_ring (CMake) at 2 ranks"
grep -q 'got "hello from rank' "$tmp/run.log" || fail "gpurma_hello_ring printed no greeting"
if test $cuda = ON; then
    run2 "$tmp/build/nvshmem_ring_cuda"
    rc=$?
    test $rc -eq 0 || test $rc -eq 77 || fail "nvshmem_ring_cuda exit $rc"
fi

if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --define-prefix --cflags --libs \
        gpurma-nvshmem) || fail "pkg-config gpurma-nvshmem"
    # shellcheck disable=SC2086 # flags is a word list
    ${CC:-cc} $san -o "$tmp/ring_pc" "$top_srcdir/examples/nvshmem_cmake/nvshmem_ring.c" $flags ||
        fail "building with pkg-config's flags: $flags"
    run2 "$tmp/ring_pc" || fail "nvshmem_ring (pkg-config) at 2 PEs"
    echo "pkg-config: $flags"
fi
echo "PASS cmake-install"
exit 0
