#!/bin/sh
# jacobi.sh - the worked example of docs/mpi-rma.md, tested as a user runs
# it: examples/jacobi (C) and, when built, examples/jacobi_f (Fortran) with
# --check, which compares the gathered grid bit for bit with a serial run of
# the same sweeps, at 1, 2, 3, 4 and 6 ranks (1-D and 2-D process grids,
# odd block sizes), through the port engine, and across two simulated nodes.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
LAUNCHER=${LAUNCHER-mpirun --allow-run-as-root --oversubscribe}
if test -z "$LAUNCHER"; then
    echo "SKIP: no launcher"
    exit 77
fi
status=0
run() { # label env... -- prog args
    label=$1
    shift
    out=$(env "$@" 2>&1)
    rc=$?
    if test $rc = 0 && echo "$out" | grep -q "matches the serial run bit for bit"; then
        echo "ok: $label"
    else
        echo "FAIL: $label (exit $rc)"
        echo "$out" | tail -20
        status=1
    fi
}
progs="$top_builddir/examples/jacobi"
if test -x "$top_builddir/examples/jacobi_f"; then
    progs="$progs $top_builddir/examples/jacobi_f"
fi
for prog in $progs; do
    name=$(basename "$prog")
    for n in 1 2 3 4 6; do
        run "$name, $n ranks, 67 x 53" timeout -k 5 120 $LAUNCHER -n $n "$prog" 67 53 40 --check
    done
    run "$name, 4 ranks, port engine" GPURMA_ENGINE=port timeout -k 5 120 $LAUNCHER -n 4 \
        "$prog" 45 38 30 --check
    if test "${HAVE_UCX:-yes}" != no; then
        run "$name, 4 ranks as 2 nodes (UCX)" GPURMA_TEST_NODES=2 GPURMA_TEST_RANKS=4 \
            sh "$top_srcdir/tests/mp/run-mp.sh" "$prog" 45 38 20 --check
    fi
done
exit $status
