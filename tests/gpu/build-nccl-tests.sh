#!/bin/sh
# build-nccl-tests.sh SRC BUILDDIR LIMIT - NVIDIA's nccl-tests (carried as
# .nccl-tests-src, tests/gpu/prepare-nccl-tests-src.sh) built with MPI
# against the system nccl.h into BUILDDIR, for sm_90 only (H100, H200: a
# fraction of the default list's time), within LIMIT seconds. Exit 0 when
# BUILDDIR/all_reduce_perf is there afterwards (built now or before), 77
# without the sources; the build's output goes to stdout.
src=$1 dir=$2 limit=${3:-200}
case $src in -h | --help | "") sed -n '2,7p' "$0"; exit 0 ;; esac
[ -f "$src/src/all_reduce.cu" ] || { echo "no nccl-tests sources in $src"; exit 77; }
if [ -x "$dir/all_reduce_perf" ] && [ "$dir/all_reduce_perf" -nt "$src/src/common.cu" ]; then
    echo "nccl-tests built before in $dir"
    exit 0
fi
inc=$(mpicc --showme:incdirs 2>/dev/null | cut -d' ' -f1)
(cd "$src" && timeout -k 5 "$limit" make -j16 MPI=1 MPI_HOME="${inc%/include}" \
    BUILDDIR="$dir" NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90")
test -x "$dir/all_reduce_perf"
