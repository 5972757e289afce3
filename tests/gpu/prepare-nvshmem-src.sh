#!/bin/sh
# prepare-nvshmem-src.sh - unpacks what NVSHMEM's perftests need (perftest/
# and NVSHMEM's License.txt) from a git mirror of NVIDIA's nvshmem repository
# into .nvshmem-src/ of this tree, for tests/gpu/nvshmem-side-by-side.sh to
# build on the GPU machine against the NVSHMEM installed there. Their code is
# only built from this archive, never copied into the project.
#
#   tests/gpu/prepare-nvshmem-src.sh MIRROR_GIT_DIR [REF]
#
# MIRROR_GIT_DIR: a bare repository (e.g. what the search tool's fetch gives:
# /work/.mirror/NVIDIA+nvshmem/repo). REF: a tag or commit; by default the tag
# of the version installed on the GPU machine (nvidia-nvshmem-cu13 3.4.5:
# v3.4.5-0) when the mirror has it, else HEAD, since perftests of another
# version may call functions the installed headers lack.
#
# .nvshmem-src is not tracked: list it in .git/info/exclude and add it to the
# device tool's carry list (with .gpu-carry) for the call that runs
# tests/gpu/run-device.sh --nvshmem.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    sed -n '2,18p' "$0" >&2
    exit 2
fi
mirror=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=$top/.nvshmem-src
if [ $# -eq 2 ]; then
    ref=$2
elif git --git-dir="$mirror" rev-parse -q --verify 'refs/tags/v3.4.5-0^{commit}' >/dev/null; then
    ref=v3.4.5-0
else
    ref=HEAD
fi
commit=$(git --git-dir="$mirror" rev-parse --verify "$ref^{commit}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$mirror" archive --format=tar "$commit" perftest License.txt | tar -x -C "$tmp"
test -f "$tmp/perftest/common/utils.cu" || {
    echo "prepare-nvshmem-src.sh: $ref has no perftest/common/utils.cu" >&2
    exit 1
}
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
chmod 755 "$dest"
echo "$ref $commit" >"$dest/SOURCE"
echo "NVSHMEM perftest sources of $ref ($commit) in $dest ($(du -sh "$dest" | cut -f1))"
