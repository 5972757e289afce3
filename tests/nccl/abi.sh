#!/bin/sh
# abi.sh - libgpurma_nccl against NCCL 2.28's ABI:
#  1. abi_dump built against include/gpurma/nccl/nccl.h and against NVIDIA's
#     nccl.h (where configure found one) prints identical facts (struct
#     sizes and offsets, initializers, every enum and macro value);
#  2. every function our header declares (ncclX and pncclX) is exported by
#     libgpurma_nccl.so.2, whose SONAME ends in .so.2, and nothing else is;
#  3. compat/nccl/libnccl.so.2 has SONAME libnccl.so.2.
build=${top_builddir:-.}
src=${top_srcdir:-.}
status=0
ours=$build/tests/nccl/abi_dump_ours
real=$build/tests/nccl/abi_dump_real
test -x "$ours" || { echo "SKIP: $ours not built"; exit 77; }
if test -x "$real"; then
    if "$real" >"$build/tests/nccl/abi.real.txt" && "$ours" >"$build/tests/nccl/abi.ours.txt" &&
        cmp -s "$build/tests/nccl/abi.real.txt" "$build/tests/nccl/abi.ours.txt"; then
        echo "ok: $(wc -l <"$build/tests/nccl/abi.ours.txt") ABI facts identical to NVIDIA's nccl.h"
    else
        echo "FAIL: ABI facts differ from NVIDIA's nccl.h:"
        diff "$build/tests/nccl/abi.real.txt" "$build/tests/nccl/abi.ours.txt" | head -20
        status=1
    fi
else
    echo "note: no NVIDIA nccl.h at configure time: only our header's facts are printed"
    "$ours" >/dev/null || status=1
fi
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit $status; }
lib=$build/.libs/libgpurma_nccl.so.2
test -f "$lib" || { echo "FAIL: $lib not built"; exit 1; }
declared=$(sed -n 's/^GPURMA_NCCL_DECLARE([^,]*, *\(nccl[A-Za-z]*\),.*/\1/p' \
    "$src/include/gpurma/nccl/nccl.h" | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
for f in $declared; do
    for name in $f p$f; do
        echo "$exported" | grep -qx "$name" || { echo "FAIL: $name is not exported"; status=1; }
    done
done
extra=$(echo "$exported" | grep -v '^p\{0,1\}nccl' | grep -v '^_' | grep -v '^$')
test -z "$extra" || { echo "FAIL: exported beyond NCCL's names: $extra"; status=1; }
n=$(echo "$declared" | wc -w)
test $status = 0 && echo "ok: $n functions (and their pncclX names) exported, nothing else"
for so in "$lib:libgpurma_nccl.so.2" "$build/compat/nccl/.libs/libnccl.so.2:libnccl.so.2"; do
    file=${so%%:*}
    want=${so##*:}
    got=$(readelf -d "$file" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    test "$got" = "$want" || { echo "FAIL: $file has SONAME '$got', expected $want"; status=1; }
done
exit $status
