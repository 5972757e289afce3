#!/bin/bash
# uid-flood.sh - the uid bootstrap's rank 0 under a flood of unwanted
# connections to MASTER_PORT (helper: uid_flood.c keeps COUNT connections
# open and replaces each one rank 0 closes at once; job: uid_ring.c):
#   - 300 silent connections, 300 sending garbage, 300 sending the start of
#     a hello and stopping (slowloris), 300 hellos with a wrong token: a job
#     of 4 ranks started into the flood must start within START_BOUND_MS
#     (every rank's gpurma_init) and complete, and rank 0 must log a few
#     lines (rate-limited summaries), not one line per connection;
#   - a few silent connections on their own are dropped within the hello
#     deadline (2 s with the default timeout), with the summary line.
#
# Exit: 0 pass, 1 fail, 99 when a program cannot be built.
set -u
FL_NAME=uid-flood
. "$(dirname "$0")/uid-lib.sh"

FLOOD_PROG=$(fl_program tests/fault/uid_flood) || exit 99
export GPURMA_TIMEOUT_MS=30000
START_BOUND_MS=3000 # a rank's whole gpurma_init with the flood running
MAX_LOG_LINES=40    # rank 0's lines about unwanted connections, over the whole job
N=4
FLOOD=99 # the flood's slot in FL_PIDS (ranks use 0 to N-1)

# start_flood NAME COUNT MODE SECONDS: the flood's report in $FL_WORK/NAME.flood
start_flood() {
    timeout -k 5 60 "$FLOOD_PROG" 127.0.0.1 "$PORT" "$2" "$3" "$4" >"$FL_WORK/$1.flood" 2>&1 &
    FL_PIDS[FLOOD]=$!
}

# wait_flood NAME: until the flood has opened all its connections (10 s at most).
wait_flood() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q "connections opened" "$FL_WORK/$1.flood" && return 0
        sleep 0.1
    done
    return 1
}

stop_flood() {
    kill -TERM "${FL_PIDS[FLOOD]}" 2>/dev/null
    wait "${FL_PIDS[FLOOD]}" 2>/dev/null
    FL_PIDS[FLOOD]=
}

# Lines rank 0 wrote about connections it did not admit.
unwanted_lines() {
    grep -Ec "uid bootstrap: (rejected|dropped|refused)" "$1"
}

# flood_test MODE: a job of N ranks started into a flood of 300 connections.
flood_test() {
    local mode=$1 r ok=1 why= t0 worst=0 ms
    uid_new_job
    uid_launch "$mode" 0 $N
    start_flood "$mode" 300 "$mode" 40
    # The flood is in full swing before the ranks come.
    wait_flood "$mode" || { ok=0; why="$why the flood did not get its 300 connections in;"; }
    sleep 0.2
    t0=$(fl_now_ms)
    for ((r = 1; r < N; r++)); do uid_launch "$mode" "$r" $N; done
    uid_wait_ranks 0 $((N - 1))
    local elapsed=$(($(fl_now_ms) - t0))
    stop_flood
    for ((r = 0; r < N; r++)); do
        [ "${CODES[r]}" = 0 ] && grep -q "rank $r of $N: bootstrap uid: PASS" "$FL_WORK/$mode.$r" ||
            { ok=0; why="$why rank $r exit ${CODES[r]};"; }
        ms=$(sed -n "s/^uid_ring: rank $r: init took \([0-9]*\) ms$/\1/p" "$FL_WORK/$mode.$r")
        [ "$r" -gt 0 ] && [ -n "$ms" ] && [ "$ms" -gt "$worst" ] && worst=$ms
    done
    [ "$worst" -lt $START_BOUND_MS ] ||
        { ok=0; why="$why a rank's init took $worst ms (bound $START_BOUND_MS ms);"; }
    local lines
    lines=$(unwanted_lines "$FL_WORK/$mode.0")
    [ "$lines" -le $MAX_LOG_LINES ] ||
        { ok=0; why="$why rank 0 logged $lines lines about unwanted connections;"; }
    [ $ok = 1 ] && fl_ok "300 $mode connections: job of $N ranks started in $worst ms (slowest" \
        "init) and completed in $elapsed ms; rank 0 logged $lines lines;" \
        "$(sed -n 's/^uid_flood: \(.*opened [0-9]*,.*\)/\1/p' "$FL_WORK/$mode.flood")" ||
        { fl_fail "300 $mode connections:$why"; fl_show "$FL_WORK/$mode".[1-9] "$FL_WORK/$mode.flood";
          head -20 "$FL_WORK/$mode.0"; }
}

# A few silent connections, no ranks yet: rank 0 drops them once the hello
# deadline passes (the flood then opens new ones), and says so in one line.
test_silent_deadline() {
    local ok=1 why=
    uid_new_job
    local r
    uid_launch deadline 0 $N
    start_flood deadline 5 silent 3.5
    wait "${FL_PIDS[FLOOD]}" 2>/dev/null # runs its 3.5 s
    FL_PIDS[FLOOD]=
    for ((r = 1; r < N; r++)); do uid_launch deadline "$r" $N; done
    uid_wait_ranks 0 $((N - 1))
    for ((r = 0; r < N; r++)); do
        [ "${CODES[r]}" = 0 ] || { ok=0; why="$why rank $r exit ${CODES[r]};"; }
    done
    grep -q "closed by the root [1-9]" "$FL_WORK/deadline.flood" ||
        { ok=0; why="$why rank 0 closed none of the silent connections within 3.5 s;"; }
    grep -Eq "dropped [0-9]+ connections? that did not authenticate within 2000 ms" \
        "$FL_WORK/deadline.0" || { ok=0; why="$why no summary line from rank 0;"; }
    [ $ok = 1 ] && fl_ok "silent connections dropped after the 2000 ms hello deadline;" \
        "$(sed -n 's/^uid_flood: \(.*opened [0-9]*,.*\)/\1/p' "$FL_WORK/deadline.flood")" ||
        { fl_fail "silent deadline:$why"; fl_show "$FL_WORK"/deadline.*; }
}

test_silent_deadline
for mode in silent garbage partial token; do
    flood_test $mode
done

fl_finish
