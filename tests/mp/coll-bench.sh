#!/bin/sh
# coll-bench.sh - gpurma-coll-bench as the GPU scripts read it
# (tests/gpu/run-device.sh --collbench, tests/gpu/coll-vs-nvshmem.sh): on the
# host backend at 2 and 3 ranks every collective runs (alltoallv with its
# skewed counts too), every row is right
# (#wrong 0 under the column of that name), each table has its header and
# one row per size, the run says it has no floors; --help names the floor
# columns; bad options are refused. Where a GPU answers, a 2-rank --gpu run
# must print both floors and the four floor columns on every row.
build=${top_builddir:-.}
prog=$build/gpurma-coll-bench
if test "${LAUNCHER+set}" = set && test -z "$LAUNCHER"; then
    echo "SKIP: no launcher"
    exit 77
fi
LAUNCHER=${LAUNCHER-mpirun --allow-run-as-root --oversubscribe}
command -v "${LAUNCHER%% *}" >/dev/null 2>&1 || { echo "SKIP: no ${LAUNCHER%% *}"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# check LOG KINDS ROWS FLOORS: every table of LOG has ROWS rows with #wrong
# 0; the kinds seen are KINDS (space-separated, in order); FLOORS yes: the
# four floor columns hold numbers (busbw/floor from 1 MiB, "-" below).
check() {
    awk -v want_kinds="$2" -v want_rows="$3" -v floors="$4" '
        function bad(m) { print "  " m; err = 1 }
        /^# [a-z_]+, [0-9]+ ranks,/ { if (kind != "" && rows != want_rows) bad(kind ": " rows " rows")
                                      kind = $2; sub(/,$/, "", kind); kinds = kinds (kinds == "" ? "" : " ") kind; rows = 0 }
        /^# +size / { split("", col); for (i = 2; i <= NF; i++) col[$i] = i - 1
                      if (!("#wrong" in col) || !("time(us)" in col)) bad(kind ": header " $0)
                      if (floors == "yes" && !("x_floor" in col && "floor(us)" in col && "busbw/floor" in col)) bad(kind ": no floor columns") }
        /^ +[0-9]/ { rows++
                     if ($(col["#wrong"]) != 0) bad(kind " " $1 ": #wrong " $(col["#wrong"]))
                     if (!($(col["time(us)"]) > 0)) bad(kind " " $1 ": time " $(col["time(us)"]))
                     if (floors == "yes") {
                         if (!($(col["floor(us)"]) > 0) || !($(col["x_floor"]) > 0)) bad(kind " " $1 ": floor " $(col["floor(us)"]) " x " $(col["x_floor"]))
                         b = $(col["busbw/floor"])
                         if ($1 >= 1048576 ? !(b > 0) : b != "-") bad(kind " " $1 ": busbw/floor " b)
                     } }
        END { if (kind != "" && rows != want_rows) bad(kind ": " rows " rows")
              if (kinds != want_kinds) bad("tables: " kinds)
              exit err }' "$1"
}

all="allreduce allgather reduce_scatter broadcast reduce alltoall alltoallv"
for np in 2 3; do
    # 64 B .. 8 KiB: 8 sizes; at 3 ranks 64 B still holds an int32 per rank and pair.
    $LAUNCHER -n $np "$prog" --host --coll all --dtype int32 --op sum --min 64 --max 8k \
        --iters 3 >"$tmp/host$np.out" 2>"$tmp/host$np.err"
    rc=$?
    if [ $rc != 0 ]; then
        fail "host run at $np ranks: exit $rc"; cat "$tmp/host$np.err"; continue
    fi
    check "$tmp/host$np.out" "$all" 8 no || fail "host run at $np ranks"
    grep -q '^# no floors: ' "$tmp/host$np.out" || fail "host run at $np ranks: no '# no floors' line"
done

"$prog" --help >"$tmp/help" 2>&1 || fail "--help: exit $?"
for c in 'floor(us)' x_floor floor_busbw busbw/floor --no-floors; do
    grep -qF -- "$c" "$tmp/help" || fail "--help does not describe $c"
done
for bad in "--graph sometimes" "--min 8k --max 1k" "--coll allsum" "--no-such-option"; do
    # shellcheck disable=SC2086
    "$prog" $bad >/dev/null 2>&1
    rc=$?
    [ $rc = 2 ] || fail "'$bad': exit $rc, not 2"
done

# A GPU, where there is one (77 from --gpu: none here).
if [ "${HAVE_CUDA:-no}" != yes ]; then
    echo "no CUDA build: the floors' run skipped"
    [ $status = 0 ] && echo "ok: gpurma-coll-bench"
    exit $status
fi
$LAUNCHER -n 2 "$prog" --gpu --no-nccl --graph on --coll allreduce,alltoall,alltoallv --min 256k --max 2m \
    --iters 10 >"$tmp/gpu.out" 2>"$tmp/gpu.err"
rc=$?
case $rc in
77) echo "no GPU: the floors' run skipped" ;;
0) check "$tmp/gpu.out" "allreduce alltoall alltoallv" 4 yes || fail "GPU run"
   grep -q '^# floor ll_exchange_us graph [0-9]' "$tmp/gpu.out" || fail "GPU run: no LL floor line"
   grep -q '^# floor sm_copy_GBps [0-9]' "$tmp/gpu.out" || fail "GPU run: no SM copy floor line" ;;
*) fail "GPU run: exit $rc"; cat "$tmp/gpu.err" ;;
esac
[ $status = 0 ] && echo "ok: gpurma-coll-bench"
exit $status
