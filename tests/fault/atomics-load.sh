#!/bin/bash
# atomics-load.sh - fetch-add and compare-swap from 4 threads per rank on
# rank 0's window, three ranks on two simulated UCX nodes (UCX_TLS=tcp),
# with every core taken by spinning processes this script starts. Under
# that load the rank on the other node used to segfault in the UCX
# transport once its target had left (peer_gone, ep_failed): its table of
# atomics in flight overflowed when sends to a gone target failed at once.
#
#   early  x2: rank 0 leaves while the other node still issues atomics at
#              it; every rank must exit 0 and say "done" (errors allowed,
#              crashes and sanitizer reports not)
#   stalled x1: rank 0 is stopped (SIGSTOP) for 4 s while the other node
#              issues atomics at it: their readers time out, and the result
#              slots they leave must not hold up later atomics (each used
#              to cost a whole timeout a lap: the run never ended in time)
#   stalled-device x1: the same through the device API (plain C): the
#              kernels' FIFO path gives its result slots up the same way
#   exact  x1: everyone finishes; both words of rank 0 and every ticket are
#              exact (atomics_load.c checks)
#
# Bounded: burners stop by themselves after 100 s, each run after 45 s
# (about 35 s in all on 2 loaded cores).
# Exit: 0 pass, 1 fail, 77 without UCX or a launcher, 99 when the program
# cannot be built.
set -u
FL_NAME=atomics-load
. "$(dirname "$0")/fault-lib.sh"
fl_init

PROG=$(fl_program tests/fault/atomics_load) || exit 99
if [ "${HAVE_UCX:-yes}" = no ]; then
    echo "SKIP: built without UCX"
    exit 77
fi
LAUNCH=$(fl_launcher)
if [ -z "$LAUNCH" ]; then
    echo "SKIP: no launcher"
    exit 77
fi

# One spinning subshell per core (bounded in time), killed by pid at exit.
ncpu=$(nproc 2>/dev/null || echo 2)
for ((i = 0; i < ncpu; i++)); do
    (
        end=$((SECONDS + 100))
        while [ "$SECONDS" -lt "$end" ]; do :; done
    ) &
    FL_PIDS+=($!)
    disown $! # no "Killed" line when the cleanup ends it
done

# run NAME VAR=VALUE...: three ranks, rank r on node r % 2
run() {
    local name=$1
    shift
    # shellcheck disable=SC2086 # LAUNCH is a word list
    env UCX_TLS=tcp "$@" timeout -k 5 45 $LAUNCH -x UCX_TLS -x AL_EARLY -x AL_PAIRS \
        -x AL_STALL -x AL_DEVICE -x GPURMA_TIMEOUT_MS -n 3 sh -c \
        'r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}; GPURMA_NODE_ID=node$((r % 2)) exec "$0"' \
        "$PROG" >"$FL_WORK/$name.log" 2>&1
}

for k in 1 2; do
    t0=$(fl_now_ms)
    run early$k AL_EARLY=1 AL_PAIRS=2000 GPURMA_TIMEOUT_MS=2000
    rc=$?
    dt=$(($(fl_now_ms) - t0))
    # Not anchored: mpirun forwards each rank's stdout and stderr in
    # chunks, so a "done" line may follow part of a log line.
    ndone=$(grep -o 'atomics_load: rank [0-9]: done' "$FL_WORK/early$k.log" | wc -l)
    if [ $rc -eq 0 ] && [ "$ndone" = 3 ] &&
        ! grep -Eq 'runtime error|AddressSanitizer|Segmentation|signal 11' "$FL_WORK/early$k.log"; then
        fl_ok "early $k: rank 0 left, the other node's atomics failed cleanly (${dt} ms): $(
            sed -n 's/.*atomics_load: rank 1: done (\(.*\))$/\1/p' "$FL_WORK/early$k.log")"
    else
        fl_fail "early $k: exit $rc, $ndone of 3 ranks done"
        grep -v 'ERROR port' "$FL_WORK/early$k.log" | head -40 | sed 's/^/    /'
    fi
done

# Before the fix the rest of rank 1's calls took minutes (a timeout for each
# abandoned slot every lap of the FIFO): the run's 45 s bound ended it. The
# device API's path had the same fault until its readers gave slots up too.
for api in host device; do
    name=stalled
    test $api = device && name=stalled-device
    t0=$(fl_now_ms)
    run $name AL_EARLY=1 AL_PAIRS=6000 AL_STALL=4000 GPURMA_TIMEOUT_MS=1500 \
        AL_DEVICE=$(test $api = device && echo 1 || echo 0)
    rc=$?
    dt=$(($(fl_now_ms) - t0))
    ndone=$(grep -o 'atomics_load: rank [0-9]: done' "$FL_WORK/$name.log" | wc -l)
    if [ $rc -eq 0 ] && [ "$ndone" = 3 ] &&
        ! grep -Eq 'runtime error|AddressSanitizer|Segmentation|signal 11' "$FL_WORK/$name.log"; then
        fl_ok "$name: rank 0 stopped for 4 s, the other node's atomics ($api API) timed out and the run ended (${dt} ms): $(
            sed -n 's/.*atomics_load: rank 1: done (\(.*\))$/\1/p' "$FL_WORK/$name.log")"
    else
        fl_fail "$name: exit $rc, $ndone of 3 ranks done, ${dt} ms"
        grep -v 'ERROR port' "$FL_WORK/$name.log" | head -40 | sed 's/^/    /'
        grep -c 'one lap earlier was never read' "$FL_WORK/$name.log" | sed 's/^/    result slots never freed: /'
    fi
done

run exact AL_PAIRS=300 GPURMA_TIMEOUT_MS=30000
rc=$?
if [ $rc -eq 0 ] && grep -q 'exact$' "$FL_WORK/exact.log"; then
    fl_ok "$(grep 'exact$' "$FL_WORK/exact.log")"
else
    fl_fail "exact: exit $rc"
    head -40 "$FL_WORK/exact.log" | sed 's/^/    /'
fi
fl_finish
