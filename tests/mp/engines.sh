#!/bin/sh
# engines.sh - the multi-process suite again, through the port engine: once
# with GPURMA_ENGINE=port (the proxy with its memcpy transport on one node),
# once with the ranks split over two "nodes" (the proxy with UCX). Ranks 2 and
# 4 only: each rank has a proxy thread, and CI has 2 cores.
here=$(cd "$(dirname "$0")" && pwd)
build=${top_builddir:-.}
if test "${HAVE_UCX:-yes}" = no; then
    ucx_modes=
else
    ucx_modes=nodes
fi
status=0
for mode in port $ucx_modes; do
    for prog in "$build"/tests/mp/test_*.mp; do
        test -x "$prog" || continue
        name=$(basename "$prog" .mp)
        if test $mode = port; then
            GPURMA_ENGINE=port GPURMA_TEST_RANKS="2 4" "$here/run-mp.sh" "$prog" >"$build/tests/mp/engines-$mode-$name.log" 2>&1
        else
            GPURMA_TEST_NODES=2 GPURMA_TEST_RANKS="2 4" "$here/run-mp.sh" "$prog" >"$build/tests/mp/engines-$mode-$name.log" 2>&1
        fi
        rc=$?
        case $rc in
            0) echo "ok: $name ($mode)" ;;
            77) echo "skip: $name ($mode)" ;;
            *) echo "FAIL: $name ($mode), see tests/mp/engines-$mode-$name.log"
               tail -5 "$build/tests/mp/engines-$mode-$name.log"
               status=1 ;;
        esac
    done
done
exit $status
