#!/bin/sh
# prebuild-carry.sh [--arch LIST] [TARGET...] - builds gpurma for the device
# machine here, so that a device call spends its minutes running, not
# compiling (a fresh device machine took ~5 minutes to build the tree).
#
# Configures a scratch copy of the committed tree (git worktree under /tmp,
# the source tree stays as it is) with CUDA, without UCX and PMIx (the
# device image has no UCX headers; ranks start through the uid bootstrap:
# RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), for one architecture
# (default 90: H100 and H200), builds libgpurma and the targets (default:
# gpurma-coll-bench gpurma-bench tests/gpu/test_gpu_coll.mp), and leaves
# in .gpu-prebuilt/ (list it in .git/info/exclude; carry it):
#   lib/   libgpurma.so*       (run with LD_LIBRARY_PATH=$PWD/.gpu-prebuilt/lib)
#          gpurma-nccl/libnccl.so* (with the target compat/nccl/libnccl.la)
#   bin/   the programs, the real binaries (not libtool's wrappers)
#   COMMIT the commit they were built from
# Programs linked against NCCL here find the device's libnccl.so.2 at run
# time. The device runs Ubuntu 24.04 (a newer glibc than Debian 12's):
# binaries built here run there, not the other way round.
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
arch=90
case ${1:-} in
-h | --help) sed -n '2,18p' "$0"; exit 0 ;;
--arch) arch=$2; shift 2 ;;
esac
targets=${*:-gpurma-coll-bench gpurma-bench tests/gpu/test_gpu_coll.mp}
command -v nvcc >/dev/null 2>&1 || test -x /usr/local/cuda/bin/nvcc ||
    { echo "prebuild-carry.sh: no nvcc here" >&2; exit 1; }
commit=$(git -C "$top" rev-parse HEAD)
git -C "$top" diff --quiet HEAD ||
    echo "prebuild-carry.sh: uncommitted changes are not in the build (commit $commit)" >&2
work=$(mktemp -d /tmp/gpurma-prebuild.XXXXXX)
trap 'git -C "$top" worktree remove --force "$work/src" >/dev/null 2>&1; rm -rf "$work"' EXIT
git -C "$top" worktree add --detach "$work/src" "$commit" >/dev/null
cd "$work/src"
./autogen.sh >"$work/autogen.log" 2>&1 || { tail -20 "$work/autogen.log"; exit 1; }
./configure --with-cuda=/usr/local/cuda --with-ucx=no --with-pmix=no \
    --with-cuda-arch="$arch" >"$work/configure.log" 2>&1 ||
    { tail -20 "$work/configure.log"; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
echo "building libgpurma and $targets (sm_$arch, $jobs jobs)"
make -j"$jobs" libgpurma.la >"$work/make.log" 2>&1 && make -j"$jobs" $targets >>"$work/make.log" 2>&1 ||
    { tail -30 "$work/make.log"; exit 1; }
out=$top/.gpu-prebuilt
rm -rf "$out"
mkdir -p "$out/lib" "$out/bin"
cp -a .libs/libgpurma.so* "$out/lib/"
# The NCCL layer, when a target built it: as installed, lib/gpurma-nccl/libnccl.so.2.
if ls compat/nccl/.libs/libnccl.so* >/dev/null 2>&1; then
    mkdir -p "$out/lib/gpurma-nccl"
    cp -a compat/nccl/.libs/libnccl.so* "$out/lib/gpurma-nccl/"
fi
for t in $targets; do
    # libtool leaves the real program in .libs/ when it wrote a wrapper
    real=$(dirname "$t")/.libs/$(basename "$t")
    test -f "$real" || real=$t
    cp "$real" "$out/bin/$(basename "$t")"
done
echo "$commit" >"$out/COMMIT"
echo "prebuilt $commit in $out ($(du -sh "$out" | cut -f1)); carry .gpu-prebuilt"
