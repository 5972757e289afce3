#!/bin/bash
# bootstrap-uid.sh - tests the uid (TCP rendezvous) bootstrap with no launcher:
# ranks are started by hand with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, the
# way torchrun does. Checks a clean run, node detection, rejection of stray
# connections, fast failure when a rank is killed (between or inside
# collectives, rank 0 included), abort, timeouts and a wrong token.
#
# Usage: bootstrap-uid.sh [path/to/bootstrap-selftest]
# (or BOOTSTRAP_SELFTEST=...). Without one, uses
# $top_builddir/tests/unit/bootstrap_selftest, else builds it from the source.
# Exit: 0 pass, 1 fail, 77 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpurma-uid.XXXXXX")
PIDS=()
cleanup() {
    # Each entry is a subshell whose child is `timeout`, which passes TERM on.
    for p in "${PIDS[@]}"; do pkill -TERM -P "$p" 2>/dev/null; done
    [ -s "$work/marker" ] && kill -9 "$(cat "$work/marker")" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

SELFTEST=${1:-${BOOTSTRAP_SELFTEST:-}}
# Under `make check`, the one the build made.
if [ -z "$SELFTEST" ] && [ -x "${top_builddir:-}/tests/unit/bootstrap_selftest" ]; then
    SELFTEST=$top_builddir/tests/unit/bootstrap_selftest
fi
if [ -z "$SELFTEST" ]; then
    CC=${CC:-cc}
    command -v "$CC" >/dev/null || { echo "SKIP: no C compiler and no selftest binary"; exit 77; }
    SELFTEST=$work/bootstrap-selftest
    # Every bootstrap source but the MPI plugin (a library of its own) and
    # pmix.c (this build has no PMIx: pmix_none.c stands in).
    sources=()
    for f in "$top"/bootstrap/*.c; do
        case ${f##*/} in mpi_plugin.c | pmix.c) ;; *) sources+=("$f") ;; esac
    done
    "$CC" -std=gnu11 -O2 -g -I"$top/include" -I"$top/src/common" -I"$top/bootstrap" \
        "${sources[@]}" "$top"/src/common/{config,log,error}.c \
        "$top/tests/unit/bootstrap-selftest.c" -o "$SELFTEST" -lpthread -ldl ||
        { echo "FAIL: cannot build the selftest"; exit 1; }
fi

# Launched by hand: nothing from an outer launcher may steer the selection.
unset PMIX_RANK PMIX_NAMESPACE GPURMA_BOOTSTRAP GPURMA_NODE_ID GPURMA_UID_ADDR
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE LOCAL_RANK TORCHELASTIC_RUN_ID
export GPURMA_TIMEOUT_MS=60000 # long, so that fast failures are not timeouts
TOKEN=selftest-$$-$RANDOM$RANDOM
N=4
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    else
        echo $((20000 + RANDOM % 20000))
    fi
}

# launch_rank NAME RANK SIZE [VAR=VALUE...]: output in $work/NAME.RANK
launch_rank() {
    local name=$1 r=$2 n=$3
    shift 3
    # In a quiet subshell, so bash's "Killed" notices for the ranks this
    # test kills on purpose stay out of the report.
    (
        env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR=127.0.0.1 MASTER_PORT="$PORT" \
            GPURMA_UID_TOKEN="$TOKEN" GPURMA_SELFTEST_MARKER="$work/marker" "$@" \
            timeout 60 "$SELFTEST" >"$work/$name.$r" 2>&1
        exit $?
    ) 2>/dev/null &
    PIDS[r]=$!
}

# wait_ranks NAME FIRST LAST: fills CODES[r] with exit codes
wait_ranks() {
    local r
    for ((r = $2; r <= $3; r++)); do
        wait "${PIDS[r]}"
        CODES[r]=$?
    done
}

show() { for f in "$work/$1".*; do sed "s|^|    $(basename "$f"): |" "$f"; done; }

wait_for_file() { # FILE SECONDS
    local i
    for ((i = 0; i < $2 * 10; i++)); do [ -s "$1" ] && return 0; sleep 0.1; done
    return 1
}

# ------------------------------------------------------------------- tests

test_clean_run() {
    PORT=$(free_port)
    local r ok=1
    for ((r = 0; r < N; r++)); do launch_rank clean "$r" "$N" GPURMA_SELFTEST_EXPECT_NODES=1; done
    wait_ranks clean 0 $((N - 1))
    for ((r = 0; r < N; r++)); do
        [ "${CODES[r]}" = 0 ] && grep -q "rank $r: PASS" "$work/clean.$r" &&
            grep -q "bootstrap uid, node 0 of 1, local rank $r of $N" "$work/clean.$r" || ok=0
    done
    [ $ok = 1 ] && echo "ok: clean run of $N ranks" || { fail "clean run"; show clean; }
}

test_node_ids() {
    PORT=$(free_port)
    local r ok=1
    for ((r = 0; r < N; r++)); do
        launch_rank nodes "$r" "$N" GPURMA_NODE_ID=host$((r / 2)) GPURMA_SELFTEST_EXPECT_NODES=2
    done
    wait_ranks nodes 0 $((N - 1))
    for ((r = 0; r < N; r++)); do
        [ "${CODES[r]}" = 0 ] &&
            grep -q "node $((r / 2)) of 2, local rank $((r % 2)) of 2" "$work/nodes.$r" || ok=0
    done
    [ $ok = 1 ] && echo "ok: GPURMA_NODE_ID splits ranks into 2 nodes" ||
        { fail "node ids"; show nodes; }
}

# Sends a hello with the right magic and a wrong token; prints rank 0's reply.
stray_hello() {
    timeout 10 bash -c '
        exec 3<>/dev/tcp/127.0.0.1/'"$PORT"' || exit 1
        printf "GRMU\x00\x00\x00\x01xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\x00\x00\x00\x01\x00\x00\x00\x04" >&3
        od -An -tx1 -N12 <&3 | tr -d " \n"' 2>/dev/null
}

test_stray_connections() {
    PORT=$(free_port)
    local r ok=1
    launch_rank stray 0 "$N" GPURMA_LOG_LEVEL=debug
    local i
    for ((i = 0; i < 200; i++)); do
        grep -qs "listening" "$work/stray.0" && break
        sleep 0.1
    done
    if ! grep -qs "listening" "$work/stray.0"; then
        fail "rank 0 never listened"; show stray; return
    fi
    # A silent connection held open must not block the real ranks, nor
    # must a garbage one.
    timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; sleep 3" 2>/dev/null &
    local silent=$!
    timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; printf 'GET / HTTP/1.0\r\n\r\n%030d' 0 >&3; sleep 1" \
        2>/dev/null
    local reply
    reply=$(stray_hello)
    for ((r = 1; r < N; r++)); do launch_rank stray "$r" "$N"; done
    wait_ranks stray 0 $((N - 1))
    wait "$silent" 2>/dev/null
    for ((r = 0; r < N; r++)); do
        [ "${CODES[r]}" = 0 ] && grep -q "rank $r: PASS" "$work/stray.$r" || ok=0
    done
    # magic, version 1, verdict 1 = wrong token
    [ "$reply" = 47524d550000000100000001 ] || ok=0
    grep -q "rejected connection from 127.0.0.1.*token mismatch" "$work/stray.0" || ok=0
    grep -q "rejected connection from 127.0.0.1.*not a gpurma" "$work/stray.0" || ok=0
    [ $ok = 1 ] && echo "ok: stray connections rejected (reply $reply), job completed" ||
        { fail "stray connections (reply '$reply')"; show stray; }
}

# kill_test NAME MODE VICTIM: the victim stops after a few rounds; kill -9 it
# and expect every other rank to fail naming it within a few seconds.
kill_test() {
    local name=$1 mode=$2 victim=$3 r ok=1 expect_code=2
    [ "$mode" = watch ] && expect_code=3
    PORT=$(free_port)
    rm -f "$work/marker"
    for ((r = 0; r < N; r++)); do
        launch_rank "$name" "$r" "$N" GPURMA_SELFTEST_MODE="$mode" GPURMA_SELFTEST_VICTIM="$victim"
    done
    if ! wait_for_file "$work/marker" 30; then
        fail "$name: victim never got ready"; show "$name"; return
    fi
    sleep 0.5 # let the others enter the next collective (or the idle wait)
    local t0
    t0=$(now_ms)
    kill -9 "$(cat "$work/marker")"
    for ((r = 0; r < N; r++)); do
        [ "$r" = "$victim" ] && continue
        wait "${PIDS[r]}"
        CODES[r]=$?
    done
    local elapsed=$(($(now_ms) - t0))
    wait "${PIDS[victim]}" 2>/dev/null
    for ((r = 0; r < N; r++)); do
        [ "$r" = "$victim" ] && continue
        [ "${CODES[r]}" = $expect_code ] || ok=0
        if [ "$mode" = watch ]; then
            grep -q "watcher reported rank $victim failed" "$work/$name.$r" || ok=0
        else
            grep -q "a peer process failed (-6): .*rank $victim" "$work/$name.$r" || ok=0
        fi
    done
    [ "$elapsed" -lt 5000 ] || ok=0
    [ $ok = 1 ] && echo "ok: $name: others failed within $elapsed ms naming rank $victim" ||
        { fail "$name (elapsed $elapsed ms)"; show "$name"; }
}

test_abort() {
    PORT=$(free_port)
    local r ok=1 victim=1
    for ((r = 0; r < N; r++)); do
        launch_rank abort "$r" "$N" GPURMA_SELFTEST_MODE=abort GPURMA_SELFTEST_VICTIM=$victim
    done
    local t0
    t0=$(now_ms)
    wait_ranks abort 0 $((N - 1))
    local elapsed=$(($(now_ms) - t0))
    for ((r = 0; r < N; r++)); do
        [ "$r" = $victim ] && continue
        # the victim's text arrives with its escape sequence and line break
        # shown as '?' (a peer's text never writes control bytes to a log)
        [ "${CODES[r]}" = 2 ] &&
            grep -q "rank $victim aborted the job (code 7): selftest abort?\[2J?forged line" \
                "$work/abort.$r" && ! grep -q "$(printf '\033')" "$work/abort.$r" || ok=0
    done
    [ $ok = 1 ] && [ "$elapsed" -lt 10000 ] && echo "ok: abort of rank $victim reached everyone" ||
        { fail "abort"; show abort; }
}

test_timeout() {
    PORT=$(free_port)
    local t0 ok=1
    t0=$(now_ms)
    launch_rank timeout 0 2 GPURMA_TIMEOUT_MS=1500
    wait_ranks timeout 0 0
    local elapsed=$(($(now_ms) - t0))
    [ "${CODES[0]}" = 2 ] && grep -q "timed out after 1500 ms waiting for rank 1" \
        "$work/timeout.0" || ok=0
    [ "$elapsed" -ge 1400 ] && [ "$elapsed" -lt 5000 ] || ok=0
    [ $ok = 1 ] && echo "ok: missing rank reported as a timeout after $elapsed ms" ||
        { fail "timeout ($elapsed ms)"; show timeout; }
}

test_wrong_token() {
    PORT=$(free_port)
    local ok=1
    launch_rank token 0 2 GPURMA_TIMEOUT_MS=3000
    launch_rank token 1 2 GPURMA_UID_TOKEN=not-the-token GPURMA_TIMEOUT_MS=3000
    wait_ranks token 0 1
    [ "${CODES[1]}" = 2 ] && grep -q "rejected rank 1: token mismatch" "$work/token.1" || ok=0
    [ "${CODES[0]}" = 2 ] && grep -q "token mismatch" "$work/token.0" || ok=0
    [ $ok = 1 ] && echo "ok: rank with a wrong token is refused with a clear message" ||
        { fail "wrong token"; show token; }
}

test_clean_run
test_node_ids
test_stray_connections
kill_test kill-member sleep 2
kill_test kill-root sleep 0
kill_test idle-member watch 3
kill_test idle-root watch 0
test_abort
test_timeout
test_wrong_token

if [ $failures -ne 0 ]; then
    echo "$failures uid bootstrap test(s) failed"
    exit 1
fi
echo "all uid bootstrap tests passed"
exit 0
