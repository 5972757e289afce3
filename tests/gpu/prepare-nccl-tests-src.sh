#!/bin/sh
# prepare-nccl-tests-src.sh - unpacks NVIDIA's nccl-tests from a git mirror
# into .nccl-tests-src/ of this tree, for tests/gpu/nccl-shim.sh to build on
# the GPU machine against the nccl.h installed there. Their code is only
# built from this archive, never copied into the project.
#
#   tests/gpu/prepare-nccl-tests-src.sh MIRROR_GIT_DIR [REF]
#
# MIRROR_GIT_DIR: a bare repository (e.g. what the search tool's fetch gives:
# /work/.mirror/NVIDIA+nccl-tests/repo). REF: a tag or commit (default HEAD).
# .nccl-tests-src is ignored (.gitignore): name it in the device tool's
# carry list (with .gpu-carry) for the call that runs nccl-shim.sh.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    sed -n '2,13p' "$0" >&2
    exit 2
fi
mirror=$1
ref=${2:-HEAD}
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=$top/.nccl-tests-src
commit=$(git --git-dir="$mirror" rev-parse --verify "$ref^{commit}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$mirror" archive --format=tar "$commit" | tar -x -C "$tmp"
test -f "$tmp/src/all_reduce.cu" || {
    echo "prepare-nccl-tests-src.sh: $ref has no src/all_reduce.cu" >&2
    exit 1
}
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
chmod 755 "$dest"
echo "$ref $commit" >"$dest/SOURCE"
echo "nccl-tests sources of $ref ($commit) in $dest ($(du -sh "$dest" | cut -f1))"
