#!/bin/sh
# death.sh - the last of three ranks dies (SIGKILL) after an allreduce on an
# NCCL communicator of libgpurma_nccl; the others must get ncclRemoteError
# from the next allreduce and from ncclCommGetAsyncError (what torch's
# watchdog polls), within the library's timeout. Ranks started by hand with
# the uid bootstrap: a launcher would end the job itself.
build=${top_builddir:-.}
prog=$build/tests/nccl/test_nccl.mp
test -x "$prog" || { echo "SKIP: $prog not built"; exit 77; }
port=$((21000 + $$ % 20000))
pids=
for r in 0 1 2; do
    env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port GPURMA_DEVICE=host \
        GPURMA_BOOTSTRAP=uid GPURMA_UID_TOKEN="nccl-death-$$" GPURMA_TIMEOUT_MS=10000 \
        timeout -k 5 90 "$prog" death >"$build/tests/nccl/death.$r.log" 2>&1 &
    pids="$pids $!"
done
status=0
r=0
for p in $pids; do
    wait $p
    rc=$?
    want=0
    test $r = 2 && want=137
    if test $rc != $want; then
        echo "FAIL: rank $r exited $rc (expected $want)"
        tail -5 "$build/tests/nccl/death.$r.log"
        status=1
    fi
    r=$((r + 1))
done
test $status = 0 && grep -h ncclRemoteError "$build/tests/nccl/death.0.log"
exit $status
