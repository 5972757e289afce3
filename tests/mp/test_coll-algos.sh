#!/bin/sh
# test_coll-algos.sh - tests/mp/test_coll.mp again with every algorithm
# forced (GPURMA_COLL_ALGO), at 3 and 4 ranks; the copy-engine variant (ce:
# allgather, alltoall(v), broadcast through the port engine, memcpy on the
# host backend) and ll16 at 1 to 8 ranks; then ring, twoshot, ce and ll16
# (which runs oneshot there) with the ranks
# split over two "nodes" (port engine, UCX), when UCX is built; and
# test_coll_mismatch.mp and test_coll_threads.mp with ce.
# The automatic choice runs in test_coll.mp itself (make check), and over
# two nodes in engines-nodes.sh and engines-nodes-2.sh.
here=$(cd "$(dirname "$0")" && pwd)
build=${top_builddir:-.}
prog=$build/tests/mp/test_coll.mp
status=0
run() {
    label=$1
    shift
    log=$build/tests/mp/coll-algos-$label.log
    env "$@" "$here/run-mp.sh" "$prog" >"$log" 2>&1
    rc=$?
    case $rc in
        0) echo "ok: $label" ;;
        77) echo "skip: $label" ;;
        *) echo "FAIL: $label, see $log"; tail -5 "$log"; status=1 ;;
    esac
}
for algo in oneshot_ll oneshot twoshot ring; do
    run "$algo" GPURMA_COLL_ALGO=$algo GPURMA_TEST_RANKS="3 4"
done
run ce GPURMA_COLL_ALGO=ce GPURMA_TEST_RANKS="1 2 3 5 8"
run ll16 GPURMA_COLL_ALGO=ll16 GPURMA_TEST_RANKS="1 2 3 5 8"
# ce has no scratch window and its own signals: ranks that pass different
# counts, and two threads on one team, must fail there too
prog=$build/tests/mp/test_coll_mismatch.mp
run mismatch-ce GPURMA_COLL_ALGO=ce GPURMA_TEST_RANKS="3 8"
prog=$build/tests/mp/test_coll_threads.mp
run threads-ce GPURMA_COLL_ALGO=ce GPURMA_TEST_RANKS="3"
prog=$build/tests/mp/test_coll.mp
if test "${HAVE_UCX:-yes}" != no; then
    for algo in ring twoshot ce ll16; do
        run "$algo-nodes" GPURMA_COLL_ALGO=$algo GPURMA_TEST_NODES=2 GPURMA_TEST_RANKS="3"
    done
fi
exit $status
