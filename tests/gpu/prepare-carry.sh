#!/bin/sh
# prepare-carry.sh - for GPU machines without libtool: generates the build
# system (autoreconf) in a scratch copy of its inputs and leaves configure,
# Makefile.in, aclocal.m4, config.h.in, build-aux/ and the m4 files in
# .gpu-carry/ (list it in .git/info/exclude and carry it along);
# tests/gpu/run-device.sh copies them into a tree that has no configure.
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a "$top/configure.ac" "$top/Makefile.am" "$top/m4" "$top/autogen.sh" "$top/gpurma.pc.in" "$tmp/"
mkdir -p "$tmp/include"
cp "$top/include/gpurma.h" "$tmp/include/"
(cd "$tmp" && autoreconf --force --install) >/dev/null
rm -rf "$top/.gpu-carry"
mkdir -p "$top/.gpu-carry/m4"
cp -a "$tmp/configure" "$tmp/Makefile.in" "$tmp/aclocal.m4" "$tmp/config.h.in" "$tmp/build-aux" \
    "$top/.gpu-carry/"
cp -a "$tmp"/m4/*.m4 "$top/.gpu-carry/m4/"
echo "generated build system in $top/.gpu-carry"
