#!/bin/bash
# uid-bootstrap.sh - the uid (TCP rendezvous) bootstrap without any launcher,
# ranks started by hand as torchrun would (RANK, WORLD_SIZE, MASTER_ADDR,
# MASTER_PORT, GPURMA_UID_TOKEN), running a real put/get/signal exchange
# (program: uid_ring.c):
#   - 1, 2 and 4 ranks complete the exchange;
#   - stray connections to MASTER_PORT during startup (a hello with a wrong
#     token, a non-gpurma client) are rejected and the job still completes;
#   - a job missing a rank (WORLD_SIZE=3, two started) and one missing rank 0
#     fail with GPURMA_ERR_TIMEOUT or GPURMA_ERR_BOOTSTRAP within the
#     configured timeout instead of hanging.
#
# Exit: 0 pass, 1 fail, 99 when the test program cannot be built.
set -u
FL_NAME=uid-bootstrap
. "$(dirname "$0")/uid-lib.sh"

# What a good job may need on a loaded 2-core machine; short waits below.
export GPURMA_TIMEOUT_MS=30000

test_ring() { # N
    local n=$1 r ok=1 t0
    uid_new_job
    t0=$(fl_now_ms)
    for ((r = 0; r < n; r++)); do uid_launch "ring$n" "$r" "$n"; done
    uid_wait_ranks 0 $((n - 1))
    local elapsed=$(($(fl_now_ms) - t0))
    for ((r = 0; r < n; r++)); do
        [ "${CODES[r]}" = 0 ] &&
            grep -q "uid_ring: rank $r of $n: bootstrap uid: PASS" "$FL_WORK/ring$n.$r" || ok=0
    done
    [ $ok = 1 ] && fl_ok "$n rank(s): put/get/signal exchange over the uid bootstrap ($elapsed ms)" ||
        { fl_fail "$n rank(s): exchange"; fl_show "$FL_WORK/ring$n".*; }
}

# stray_hello: connects to MASTER_PORT (retrying until rank 0 listens) and
# says hello with the right magic and version but a wrong token, claiming
# rank 1 of 4; prints rank 0's 12-byte reply in hex.
stray_hello() {
    timeout 20 bash -c '
        for ((i = 0; i < 300; i++)); do
            exec 3<>/dev/tcp/127.0.0.1/'"$PORT"' && break
            sleep 0.05
        done 2>/dev/null
        [ $i -lt 300 ] || exit 1
        printf "GRMU\x00\x00\x00\x01%s\x00\x00\x00\x01\x00\x00\x00\x04" \
            "not-the-token-not-the-token-0123" >&3
        od -An -tx1 -N12 <&3 | tr -d " \n"'
}

test_strays() {
    local n=4 r ok=1 why=
    uid_new_job
    uid_launch stray 0 $n
    local reply
    reply=$(stray_hello)
    # A client of another protocol, and one that says nothing and leaves.
    timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; printf 'GET / HTTP/1.0\r\n\r\n%060d' 0 >&3;
        sleep 0.3" 2>/dev/null
    timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null
    for ((r = 1; r < n; r++)); do uid_launch stray "$r" $n; done
    uid_wait_ranks 0 $((n - 1))
    for ((r = 0; r < n; r++)); do
        [ "${CODES[r]}" = 0 ] && grep -q "rank $r of $n: bootstrap uid: PASS" "$FL_WORK/stray.$r" ||
            { ok=0; why="$why rank $r exit ${CODES[r]};"; }
    done
    # "GRMU", protocol 1, verdict 1: wrong token
    [ "$reply" = 47524d550000000100000001 ] || { ok=0; why="$why reply to the stray '$reply';"; }
    grep -Eq "rejected connection from 127.0.0.1.*(wrong token|token mismatch)" "$FL_WORK/stray.0" ||
        { ok=0; why="$why rank 0 did not log the wrong token;"; }
    grep -Eq "rejected connection from 127.0.0.1.*(not a gpurma|protocol)" "$FL_WORK/stray.0" ||
        { ok=0; why="$why rank 0 did not log the foreign client;"; }
    [ $ok = 1 ] && fl_ok "stray connections with a wrong token and a foreign protocol rejected;" \
        "the job of $n ranks completed" ||
        { fl_fail "strays:$why"; fl_show "$FL_WORK"/stray.*; }
}

# check_init_failure FILE RANK: the rank failed init with TIMEOUT or BOOTSTRAP
init_failed_cleanly() {
    grep -Eq "uid_ring: rank $2: init -> GPURMA_ERR_(TIMEOUT|BOOTSTRAP): " "$1"
}

test_missing_rank() {
    local ok=1 why= t0 timeout_ms=2000 r
    uid_new_job
    t0=$(fl_now_ms)
    # WORLD_SIZE=3, rank 2 never comes. Rank 1 starts later, so rank 0
    # gives up first, while rank 1 still waits in its first exchange: rank
    # 1 must then learn that rank 0 timed out, not take it for dead.
    uid_launch missing 0 3 GPURMA_TIMEOUT_MS=$timeout_ms
    sleep 0.5
    uid_launch missing 1 3 GPURMA_TIMEOUT_MS=$timeout_ms
    uid_wait_ranks 0 1
    local elapsed=$(($(fl_now_ms) - t0))
    for r in 0 1; do
        [ "${CODES[r]}" = 2 ] || { ok=0; why="$why rank $r exit ${CODES[r]} (want 2);"; }
        init_failed_cleanly "$FL_WORK/missing.$r" $r ||
            { ok=0; why="$why rank $r did not fail with TIMEOUT or BOOTSTRAP;"; }
    done
    grep -q "rank 2" "$FL_WORK/missing.0" || { ok=0; why="$why rank 0 did not name rank 2;"; }
    # within the timeout plus scheduling slack, but not before it
    [ "$elapsed" -ge $((timeout_ms - 100)) ] && [ "$elapsed" -lt $((timeout_ms + 6000)) ] ||
        { ok=0; why="$why ended after $elapsed ms (timeout $timeout_ms ms);"; }
    [ $ok = 1 ] && fl_ok "WORLD_SIZE=3 with 2 ranks started: both failed init cleanly after" \
        "$elapsed ms (GPURMA_TIMEOUT_MS=$timeout_ms)" ||
        { fl_fail "missing rank:$why"; fl_show "$FL_WORK"/missing.*; }
}

test_missing_root() {
    local ok=1 why= t0 timeout_ms=1500
    uid_new_job
    t0=$(fl_now_ms)
    uid_launch noroot 1 2 GPURMA_TIMEOUT_MS=$timeout_ms
    uid_wait_ranks 1 1
    local elapsed=$(($(fl_now_ms) - t0))
    [ "${CODES[1]}" = 2 ] || { ok=0; why="$why exit ${CODES[1]} (want 2);"; }
    init_failed_cleanly "$FL_WORK/noroot.1" 1 ||
        { ok=0; why="$why did not fail with TIMEOUT or BOOTSTRAP;"; }
    [ "$elapsed" -ge $((timeout_ms - 100)) ] && [ "$elapsed" -lt $((timeout_ms + 6000)) ] ||
        { ok=0; why="$why ended after $elapsed ms (timeout $timeout_ms ms);"; }
    [ $ok = 1 ] && fl_ok "rank 1 without a rank 0 failed init cleanly after $elapsed ms" ||
        { fl_fail "missing root:$why"; fl_show "$FL_WORK"/noroot.*; }
}

test_ring 1
test_ring 2
test_ring 4
test_strays
test_missing_rank
test_missing_root

fl_finish
