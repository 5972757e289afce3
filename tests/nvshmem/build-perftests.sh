#!/bin/sh
# build-perftests.sh - builds every program of NVSHMEM's perftest/ tree
# (device and host, pt-to-pt, coll, init, tile) against gpurma's NVSHMEM
# layer with plain nvcc: no -rdc, no libnvshmem, nothing but the changed
# include path and link line a porting user makes. No GPU is needed to
# build. One line per program: "built" or "NOT BUILT" with the first
# compile error (the unsupported call it names).
#
#   tests/nvshmem/build-perftests.sh [--build DIR] [--out DIR] [--jobs N] [--only NAME...]
#
# --build: a configured CUDA build of this tree with libgpurma_nvshmem.la
# built (default: this tree, in-tree build); --out: where binaries and logs
# go (default .nvshmem-perftest/ of this tree); --jobs: parallel compiles
# (default 2). The sources come from tests/gpu/prepare-nvshmem-src.sh
# (.nvshmem-src/perftest, not tracked). Exit status: 0 when every program
# built, 1 otherwise, 77 when the sources or nvcc are missing. The list is
# written to OUT/built.txt (one "NAME PATH" per built program) and
# OUT/report.txt for tests/gpu/nvshmem-side-by-side.sh.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top out=$top/.nvshmem-perftest jobs=2 only=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$(cd "$2" && pwd); shift ;;
    --out) out=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --only) shift; only="$*"; break ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "build-perftests.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
src=$top/.nvshmem-src/perftest
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ ! -f "$src/common/utils.cu" ]; then
    echo "build-perftests.sh: no $src (run tests/gpu/prepare-nvshmem-src.sh MIRROR first)" >&2
    exit 77
fi
if [ ! -x "$nvcc" ]; then
    echo "build-perftests.sh: no nvcc at $nvcc" >&2
    exit 77
fi
libs=$build/.libs
if [ ! -f "$libs/libgpurma_nvshmem.so" ]; then
    echo "build-perftests.sh: no $libs/libgpurma_nvshmem.so (make libgpurma_nvshmem.la in $build)" >&2
    exit 1
fi
mkdir -p "$out/obj" "$out/bin" "$out/logs"
arch=${GPURMA_PERFTEST_ARCH:-sm_90}

# nvml.h: the helpers name NVML's types (the toolkit's header, or the types).
nvml_inc=$(sh "$top/tests/nvshmem/nvml-include.sh" "$out/nvml-types") || exit 1

# With MPI the helpers take NVSHMEMTEST_USE_MPI_LAUNCHER (MPI_Init, then
# nvshmemx_init_attr with NVSHMEMX_INIT_WITH_MPI_COMM), as NVSHMEM's CMake
# builds them by default.
mpi_flags= mpi_libs=
if command -v mpicc >/dev/null 2>&1; then
    mpi_flags="-DNVSHMEMTEST_MPI_SUPPORT $(mpicc --showme:compile 2>/dev/null)"
    mpi_libs=$(mpicc --showme:link 2>/dev/null | sed 's/-Wl,/-Xlinker /g; s/-pthread//g')
fi
inc="-I$top/include/gpurma/nvshmem -I$top/include -I$build/include -I$src/common -I$nvml_inc"
cflags="-std=c++17 -O2 -arch=$arch $mpi_flags"
link="-L$libs -lgpurma_nvshmem -lgpurma -Xlinker -rpath=$libs -L/usr/local/cuda/lib64/stubs -lcuda -ldl $mpi_libs"

# The helpers once.
if ! $nvcc $cflags $inc -c -o "$out/obj/utils.o" "$src/common/utils.cu" >"$out/logs/utils.log" 2>&1; then
    echo "build-perftests.sh: the perftests' common helpers (common/utils.cu) did not build:" >&2
    grep -m3 -E 'error' "$out/logs/utils.log" >&2
    exit 1
fi

# The programs NVSHMEM's own CMake builds (nvshmem_add_perftest in each
# folder's CMakeLists.txt); a source it leaves out (redmaxloc_latency.cu in
# 3.4.5 names MAX_ELEMS, defined nowhere) is listed as such.
progs=$(cd "$src" && for f in $(find device host -name CMakeLists.txt | sort); do
    sed -n 's/^ *nvshmem_add_perftest(\([^)]*\)).*/\1/p' "$f" | sed "s|^|$(dirname "$f")/|"
done | sort -u)
unlisted=$(cd "$src" && find device host -name '*.cu' -o -name '*.cpp' | sort | while read -r f; do
    echo "$progs" | grep -qx "$f" || echo "$f"
done)
if [ -n "$only" ]; then
    sel=
    for p in $progs; do
        n=$(basename "$p"); n=${n%.*}
        for o in $only; do [ "$o" = "$n" ] && sel="$sel $p"; done
    done
    progs=$sel
fi

build_one() {
    p=$1
    n=$(basename "$p"); n=${n%.*}
    d=$(dirname "$p")
    log=$out/logs/$n.log
    # .cpp programs are host code: nvcc compiles them as C++ (-x cu gives
    # them the CUDA runtime and the device pass, as NVSHMEM's CMake does by
    # treating them as CUDA sources).
    $nvcc $cflags $inc -I"$src/$d" -x cu -c -o "$out/obj/$n.o" "$src/$p" >"$log" 2>&1 &&
        $nvcc $cflags -o "$out/bin/$n" "$out/obj/$n.o" "$out/obj/utils.o" $link >>"$log" 2>&1
}
: >"$out/status.txt"
running=0
for p in $progs; do
    ( if build_one "$p"; then echo "$p built"; else echo "$p NOT-BUILT"; fi >>"$out/status.txt" ) &
    running=$((running + 1))
    if [ $running -ge "$jobs" ]; then wait; running=0; fi
done
wait

: >"$out/built.txt"
{
    echo "NVSHMEM perftests ($(cat "$top/.nvshmem-src/SOURCE" 2>/dev/null | cut -d' ' -f1)) against gpurma's layer, plain nvcc, no -rdc:"
    nb=0 nf=0
    for p in $progs; do
        n=$(basename "$p"); n=${n%.*}
        if grep -q "^$p built" "$out/status.txt"; then
            nb=$((nb + 1))
            printf '  %-52s built\n' "$p"
            echo "$n $out/bin/$n" >>"$out/built.txt"
        else
            nf=$((nf + 1))
            why=$(grep -m1 -E 'error|undefined reference' "$out/logs/$n.log" | sed "s|$src/||; s|$top/||")
            printf '  %-52s NOT BUILT: %s\n' "$p" "${why:-see logs/$n.log}"
        fi
    done
    for p in $unlisted; do
        printf '  %-52s not a program of NVSHMEM'"'"'s CMake (not built against NVSHMEM either)\n' "$p"
    done
    echo "  $nb built, $nf not built"
} | tee "$out/report.txt"
grep -q 'NOT BUILT' "$out/report.txt" && exit 1
exit 0
