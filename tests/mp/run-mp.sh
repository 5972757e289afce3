#!/bin/sh
# run-mp.sh PROGRAM [ARGS...] - runs a multi-process test under $LAUNCHER at
# several rank counts; the Automake LOG_COMPILER of the *.mp tests.
#
# Environment:
#   LAUNCHER           command given "-n N PROGRAM" (default: mpirun
#                      --allow-run-as-root --oversubscribe); set but empty:
#                      no launcher, the test is skipped (exit 77)
#   GPURMA_TEST_RANKS  rank counts to use instead of the program's own list
#   GPURMA_TEST_QUICK  when set (make check MP_QUICK=1, as the sanitizer half
#                      of .ci/suite.sh runs): the program's own list without
#                      its largest count, the most oversubscribed run, there
#                      for ordering bugs, which a full run covers; a list
#                      given in GPURMA_TEST_RANKS is used as it is
#   GPURMA_MP_RUN_TIMEOUT  seconds allowed per run (default 120)
#   GPURMA_TEST_NODES  when set to K, rank r runs with GPURMA_NODE_ID=node<r%K>:
#                      ranks on this host act as K nodes (port engine, UCX)
#   GPURMA_TIMEOUT_MS  the library's wait bound, exported (default 30000):
#                      short enough that a lost signal fails well before the
#                      run timeout, with the library's message naming it
#
# Exit status: 0 when every run passed, 77 when no launcher is available or
# every run skipped, 1 otherwise.

prog=$1
if test -z "$prog"; then
    echo "usage: $0 PROGRAM [ARGS...]" >&2
    exit 2
fi
shift
case $prog in
    */*) ;;
    *) prog=./$prog ;;
esac

if test "${LAUNCHER+set}" = set && test -z "$LAUNCHER"; then
    echo "SKIP: LAUNCHER is empty (configure found no mpirun)"
    exit 77
fi
LAUNCHER=${LAUNCHER-mpirun --allow-run-as-root --oversubscribe}
launcher_cmd=${LAUNCHER%% *}
if ! command -v "$launcher_cmd" >/dev/null 2>&1; then
    echo "SKIP: launcher '$launcher_cmd' not found"
    exit 77
fi

# The stress tests (many rounds, or several threads per rank) skip the
# single-rank and odd counts; the cheap ones also run alone, with an odd
# count, and every test runs with more ranks than the 2 cores of CI, where
# ordering bugs show up most.
name=$(basename "$prog")
name=${name%.mp}
case $name in
    test_signal_order | test_ll_packets | test_device_api) ranks="2 4 8" ;;
    test_coll_threads) ranks="2 3 8" ;; # each run waits out one timeout
    test_coll_mismatch) ranks="3 8" ;; # each case waits out one timeout
    test_coll_reg_race) ranks="2 3 8" ;;
    test_coll_v_agree | test_coll_algo_mismatch | test_coll_step_mismatch) ranks="2 3 5" ;; # each case waits out one timeout
    test_coll_slot_mismatch) ranks="2 3 5" ;;
    test_coll_abandoned) ranks="2 3" ;; # each case waits out one timeout
    *) ranks="1 2 3 4 8" ;;
esac
if test -n "$GPURMA_TEST_RANKS"; then
    ranks=$GPURMA_TEST_RANKS
elif test -n "$GPURMA_TEST_QUICK"; then
    # the lists above ascend: the last count is the largest
    for n in $ranks; do
        largest=$n
    done
    quick=
    for n in $ranks; do
        test "$n" = "$largest" || quick="$quick $n"
    done
    ranks=${quick:-$ranks}
fi

GPURMA_TIMEOUT_MS=${GPURMA_TIMEOUT_MS:-30000}
export GPURMA_TIMEOUT_MS
run_timeout=${GPURMA_MP_RUN_TIMEOUT:-120}
if command -v timeout >/dev/null 2>&1; then
    bound="timeout -k 10 $run_timeout"
else
    bound=
fi

# Milliseconds since the epoch (GNU date), or seconds * 1000 elsewhere.
now_ms() {
    ns=$(date +%s%N 2>/dev/null)
    case $ns in
        '' | *[!0-9]*) echo $(($(date +%s) * 1000)) ;;
        *) echo $((ns / 1000000)) ;;
    esac
}

# Separate "nodes" on one host: the launcher starts a shell that picks the
# node from the rank it was given, then becomes the test.
node_split=
if test -n "$GPURMA_TEST_NODES"; then
    export GPURMA_TEST_NODES
    node_split='sh -c'
    split_script='r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}; GPURMA_NODE_ID=node$((r % GPURMA_TEST_NODES)) exec "$0" "$@"'
fi

status=0
passed=0
skipped=0
for n in $ranks; do
    echo "== $name: $LAUNCHER -n $n $prog $*"
    start=$(now_ms)
    # shellcheck disable=SC2086 # LAUNCHER and bound are word lists
    if test -n "$node_split"; then
        $bound $LAUNCHER -x GPURMA_TEST_NODES -n "$n" $node_split "$split_script" "$prog" "$@"
    else
        $bound $LAUNCHER -n "$n" "$prog" "$@"
    fi
    rc=$?
    ms=$(($(now_ms) - start))
    elapsed=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
    case $rc in
        0) passed=$((passed + 1)); echo "== $name: $n ranks passed (${elapsed}s)" ;;
        77) skipped=$((skipped + 1)); echo "== $name: $n ranks skipped" ;;
        124 | 137) status=1; echo "== $name: $n ranks TIMED OUT after ${run_timeout}s" ;;
        *) status=1; echo "== $name: $n ranks FAILED (exit $rc)" ;;
    esac
done

if test $status -ne 0; then
    exit 1
fi
if test $passed -eq 0 && test $skipped -gt 0; then
    exit 77
fi
exit 0
