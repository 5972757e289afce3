#!/bin/sh
# dev-chan.sh - the per-peer channel test (test_dev_chan.mp) on the mem
# engine, then through the port engine's proxy (two proxy contexts).
# GPURMA_TEST_RANKS overrides the rank counts of both runs.
here=$(cd "$(dirname "$0")" && pwd)
build=${top_builddir:-.}
prog=$build/tests/mp/test_dev_chan.mp
status=77
for engine in mem port; do
    if test $engine = mem; then
        GPURMA_TEST_RANKS=${GPURMA_TEST_RANKS:-"1 2 3 4"} "$here/run-mp.sh" "$prog"
    else
        GPURMA_ENGINE=port GPURMA_PORT_CONTEXTS=2 GPURMA_TEST_RANKS=${GPURMA_TEST_RANKS:-"2 3"} \
            "$here/run-mp.sh" "$prog"
    fi
    rc=$?
    case $rc in
        0) echo "ok: test_dev_chan ($engine)"; test $status = 77 && status=0 ;;
        77) echo "skip: test_dev_chan ($engine)" ;;
        *) echo "FAIL: test_dev_chan ($engine), exit $rc"; status=1 ;;
    esac
done
exit $status
