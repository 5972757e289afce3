#!/bin/sh
# test_coll-death.sh - a rank dies (SIGKILL) between collectives: the other
# ranks must get GPURMA_ERR_PEER_FAILED naming a dead rank (it, or a survivor
# that noticed first and left), within seconds, from the collective they are
# in (tests/mp/test_coll.mp death). Three ranks started
# by hand with the uid bootstrap (a launcher would end the job itself), on
# one node and over two simulated nodes (UCX), each with the automatic
# algorithm and with ring forced.
build=${top_builddir:-.}
prog=$build/tests/mp/test_coll.mp
test -x "$prog" || { echo "SKIP: $prog not built"; exit 77; }
status=0
port=$((20000 + $$ % 20000))
run() {
    label=$1
    shift
    port=$((port + 1))
    pids=
    for r in 0 1 2; do
        node=
        case $label in *nodes*) node=GPURMA_NODE_ID=node$((r % 2)) ;; esac
        env "$@" $node RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            GPURMA_BOOTSTRAP=uid GPURMA_UID_TOKEN="coll-death-$$-$port" \
            timeout -k 5 60 "$prog" death >"$build/tests/mp/coll-death-$label.$r.log" 2>&1 &
        pids="$pids $!"
    done
    r=0
    for p in $pids; do
        wait $p
        rc=$?
        want=0
        test $r = 2 && want=137 # the victim, killed by its own SIGKILL
        if test $rc != $want; then
            echo "FAIL: $label: rank $r exited $rc (expected $want)"
            tail -3 "$build/tests/mp/coll-death-$label.$r.log"
            status=1
        fi
        r=$((r + 1))
    done
    test $status = 0 && echo "ok: $label: $(grep -h PEER_FAILED "$build/tests/mp/coll-death-$label.0.log")"
}
run node
run node-ring GPURMA_COLL_ALGO=ring
if test "${HAVE_UCX:-yes}" != no; then
    # rank r on node r % 2: the victim (rank 2) shares node 0 with rank 0
    # and reaches rank 1 over UCX
    run nodes
    run nodes-ring GPURMA_COLL_ALGO=ring
fi
exit $status
