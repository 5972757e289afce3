#!/bin/bash
# peer-death.sh - a rank of a running job dies (SIGKILL, raised by itself or
# sent from outside with kill -9); every survivor must get
# GPURMA_ERR_PEER_FAILED from wait_until or barrier, naming the dead rank,
# within a bounded time, and must not hang in the barrier, win_free and
# finalize that follow (program: peer_death.c).
#
# (a) ranks started by hand with the uid bootstrap (RANK, WORLD_SIZE,
#     MASTER_ADDR, MASTER_PORT, GPURMA_UID_TOKEN): every exit code is checked;
#     Also across simulated nodes (GPURMA_NODE_ID per rank: every peer is
#     reached over UCX, no process check applies), where the death must be
#     noticed within DETECT_BOUND_MS and the teardown must not wait for the
#     dead (TEARDOWN_BOUND_MS); a stream of puts completed only by flush and
#     quiet; and a death inside win_allocate, after which no shared-memory
#     segment of the job may remain in /dev/shm;
# (b) ranks started by the launcher (mpirun, PMIx bootstrap). Open MPI's
#     mpirun kills the whole job when a rank dies; with --enable-recovery
#     (Open MPI 4.1) it lets the survivors finish, and each survivor also
#     writes its exit code to a file, since mpirun then exits 0 regardless.
#     Without that option the survivors' PEER_FAILED lines are still required.
#
# Exit: 0 pass, 1 fail, 99 when the test program cannot be built.
set -u
FL_NAME=peer-death
. "$(dirname "$0")/fault-lib.sh"
fl_init

PROG=$(fl_program tests/fault/peer_death) || exit 99
N=4
# Long next to the death detection (a few tens of ms): a survivor that only
# gets a timeout fails the test, and the bound below is kept.
export GPURMA_TIMEOUT_MS=15000
SCENARIO_LIMIT_MS=20000 # launch to the last exit, each scenario
DETECT_LIMIT_MS=10000   # kill -9 to the last survivor's exit

# Bounds of the scenarios that measure: the death is noticed (UCX endpoint,
# process check, bootstrap connection) in tens of ms on a quiet machine;
# these leave room for a loaded 2-core CI runner.
DETECT_BOUND_MS=2000
TEARDOWN_BOUND_MS=3000
BOUNDS=(PD_DETECT_MAX_MS=$DETECT_BOUND_MS PD_TEARDOWN_MAX_MS=$TEARDOWN_BOUND_MS)

names_rank() { fl_names_dead_rank "$@"; }

# no_segments_left NAME FILES...: none of the pids the ranks printed owns a
# segment in /dev/shm any more.
no_segments_left() {
    local pid left=
    for pid in $(sed -n 's/^peer_death: rank [0-9]*: pid \([0-9]*\)$/\1/p' "$@"); do
        left="$left$(ls /dev/shm 2>/dev/null | grep "^gpurma-$pid-")"
    done
    [ -z "$left" ] || { echo "left in /dev/shm: $left"; return 1; }
}

# detect_times FILES...: the survivors' "detected after N ms", as a list
detect_times() {
    sed -n 's/^peer_death: rank [0-9]*: detected after \([0-9]*\) ms$/\1/p' "$@" | tr '\n' ' '
}

# ------------------------------------------------------- (a) uid, by hand

# uid_launch NAME [VAR=VALUE...]: starts N ranks, output in $FL_WORK/NAME.R
uid_launch() {
    local name=$1 r
    shift
    local port token
    port=$(fl_free_port)
    token=$(fl_token)
    for ((r = 0; r < N; r++)); do
        env RANK=$r WORLD_SIZE=$N MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
            GPURMA_UID_TOKEN="$token" ${UID_NODES:+GPURMA_NODE_ID=node$r} "$@" \
            timeout -k 5 40 "$PROG" >"$FL_WORK/$name.$r" 2>&1 &
        FL_PIDS[r]=$!
    done
}

uid_wait() { # fills CODES[r]
    local r
    for ((r = 0; r < N; r++)); do
        wait "${FL_PIDS[r]}" 2>/dev/null
        CODES[r]=$?
        FL_PIDS[r]=
    done
}

uid_control() {
    local t0 r ok=1
    t0=$(fl_now_ms)
    uid_launch control PD_MODE=none PD_ROUNDS=30
    uid_wait
    local elapsed=$(($(fl_now_ms) - t0))
    for ((r = 0; r < N; r++)); do
        [ "${CODES[r]}" = 0 ] && grep -q "rank $r: clean run of 30 rounds PASS" \
            "$FL_WORK/control.$r" || ok=0
    done
    grep -q "bootstrap uid" "$FL_WORK/control.0" || ok=0
    [ $ok = 1 ] && fl_ok "uid: control run without a death: all $N ranks pass ($elapsed ms)" ||
        { fl_fail "uid: control run"; fl_show "$FL_WORK"/control.*; }
}

# uid_self NAME VICTIM PHASE [VAR=VALUE...]: the victim raises SIGKILL itself
# (UID_NODES=1: each rank on a node of its own)
uid_self() {
    local name=$1 victim=$2 phase=$3 t0 r ok=1 why=
    shift 3
    t0=$(fl_now_ms)
    uid_launch "$name" PD_MODE=self PD_VICTIM="$victim" PD_PHASE="$phase" PD_ROUNDS=25 \
        PD_DEATH_FILE="$FL_WORK/$name.death" "$@"
    uid_wait
    local elapsed=$(($(fl_now_ms) - t0))
    [ "${CODES[victim]}" = 137 ] || { ok=0; why="$why victim exit ${CODES[victim]} (want 137);"; }
    for ((r = 0; r < N; r++)); do
        [ "$r" = "$victim" ] && continue
        [ "${CODES[r]}" = 3 ] || { ok=0; why="$why rank $r exit ${CODES[r]} (want 3);"; }
        names_rank "$FL_WORK/$name.$r" "$victim" ||
            { ok=0; why="$why rank $r did not report PEER_FAILED naming rank $victim;"; }
    done
    [ "$elapsed" -lt $SCENARIO_LIMIT_MS ] || { ok=0; why="$why took $elapsed ms;"; }
    [ "$phase" = alloc ] && ! no_segments_left "$FL_WORK/$name".[0-9] &&
        { ok=0; why="$why shared-memory segments outlived the job;"; }
    [ $ok = 1 ] && fl_ok "uid${UID_NODES:+ (a node per rank)}: rank $victim raised SIGKILL" \
        "($phase); $((N - 1)) survivors got PEER_FAILED naming it, exit 3 ($elapsed ms in" \
        "all; told after: $(detect_times "$FL_WORK/$name".[0-9])ms)" ||
        { fl_fail "uid: $name:$why"; fl_show "$FL_WORK/$name".*; }
}

# uid_external NAME VICTIM: kill -9 from here while the ring runs
uid_external() {
    local name=$1 victim=$2 t0 r ok=1 why=
    local pidfile=$FL_WORK/$name.pid
    t0=$(fl_now_ms)
    uid_launch "$name" PD_MODE=external PD_VICTIM="$victim" PD_ROUNDS=10 PD_PIDFILE="$pidfile"
    if ! fl_wait_file "$pidfile" 15; then
        fl_fail "uid: $name: the victim never wrote its pid"
        fl_show "$FL_WORK/$name".*
        return
    fi
    sleep 0.$((2 + RANDOM % 6)) # somewhere in the middle of later rounds
    local tk
    tk=$(fl_now_ms)
    kill -9 "$(cat "$pidfile")"
    uid_wait
    local detect=$(($(fl_now_ms) - tk)) elapsed=$(($(fl_now_ms) - t0))
    [ "${CODES[victim]}" = 137 ] || { ok=0; why="$why victim exit ${CODES[victim]} (want 137);"; }
    for ((r = 0; r < N; r++)); do
        [ "$r" = "$victim" ] && continue
        [ "${CODES[r]}" = 3 ] || { ok=0; why="$why rank $r exit ${CODES[r]} (want 3);"; }
        names_rank "$FL_WORK/$name.$r" "$victim" ||
            { ok=0; why="$why rank $r did not report PEER_FAILED naming rank $victim;"; }
    done
    [ "$detect" -lt $DETECT_LIMIT_MS ] || { ok=0; why="$why survivors took $detect ms;"; }
    [ "$elapsed" -lt $SCENARIO_LIMIT_MS ] || { ok=0; why="$why took $elapsed ms;"; }
    [ $ok = 1 ] && fl_ok "uid: kill -9 of rank $victim from outside; survivors reported it" \
        "and exited 3 within $detect ms" ||
        { fl_fail "uid: $name:$why"; fl_show "$FL_WORK/$name".*; }
}

# ------------------------------------------------------- (b) the launcher

# mp_run NAME RESULTDIR [VAR=VALUE...]: runs the launcher in the background
mp_run() {
    local name=$1 res=$2
    shift 2
    mkdir -p "$res"
    # shellcheck disable=SC2086
    if [ -n "${MP_NODES:-}" ]; then # each rank a node of its own
        env PD_RESULT_DIR="$res" "$@" timeout -k 5 40 $MP_LAUNCH -n $N $MP_EXTRA sh -c \
            'GPURMA_NODE_ID=node${OMPI_COMM_WORLD_RANK:-$PMIX_RANK} exec "$0"' "$PROG" \
            >"$FL_WORK/$name.out" 2>&1 &
    else
        env PD_RESULT_DIR="$res" "$@" timeout -k 5 40 $MP_LAUNCH -n $N $MP_EXTRA "$PROG" \
            >"$FL_WORK/$name.out" 2>&1 &
    fi
    MP_PID=$!
    FL_PIDS+=("$MP_PID")
}

# mp_check NAME RESULTDIR VICTIM T0 [KILLTIME]
mp_check() {
    local name=$1 res=$2 victim=$3 t0=$4 tk=${5:-} r ok=1 why=
    wait "$MP_PID"
    local rc=$? now
    now=$(fl_now_ms)
    local elapsed=$((now - t0))
    grep -q "bootstrap pmix" "$FL_WORK/$name.out" ||
        { ok=0; why="$why rank 0 did not use the pmix bootstrap;"; }
    for ((r = 0; r < N; r++)); do
        [ "$r" = "$victim" ] && continue
        grep "peer_death: rank $r: SURVIVOR" "$FL_WORK/$name.out" >"$FL_WORK/$name.line.$r"
        names_rank "$FL_WORK/$name.line.$r" "$victim" ||
            { ok=0; why="$why rank $r did not report PEER_FAILED naming rank $victim;"; }
        if [ -n "$MP_EXTRA" ]; then
            # The survivors were left alive: each must have finished with 3.
            [ "$(cat "$res/rank.$r" 2>/dev/null)" = 3 ] ||
                { ok=0; why="$why rank $r exit '$(cat "$res/rank.$r" 2>/dev/null)' (want 3);"; }
        fi
    done
    [ -e "$res/rank.$victim" ] && { ok=0; why="$why the victim finished normally;"; }
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && [ "$elapsed" -ge 39000 ] &&
        { ok=0; why="$why the launcher hung until timeout;"; }
    [ "$elapsed" -lt $SCENARIO_LIMIT_MS ] || { ok=0; why="$why took $elapsed ms;"; }
    if [ -n "$tk" ] && [ $((now - tk)) -ge $DETECT_LIMIT_MS ]; then
        ok=0; why="$why $((now - tk)) ms from kill to the end;"
    fi
    [ $ok = 1 ] && fl_ok "launcher: $name: survivors reported rank $victim failed (launcher exit" \
        "$rc, $elapsed ms; told after: $(detect_times "$FL_WORK/$name.out")ms)" || { fl_fail "launcher: $name (exit $rc):$why"; fl_show "$FL_WORK/$name.out"; }
}

# mp_self NAME VICTIM [VAR=VALUE...] (MP_NODES=1: each rank a node of its own)
mp_self() {
    local name=$1 victim=$2 t0
    shift 2
    t0=$(fl_now_ms)
    mp_run "$name" "$FL_WORK/res-$name" PD_MODE=self PD_VICTIM="$victim" PD_ROUNDS=25 \
        PD_DEATH_FILE="$FL_WORK/$name.death" "$@"
    mp_check "$name" "$FL_WORK/res-$name" "$victim" "$t0"
}

mp_external() {
    local victim=$1 t0 tk
    local pidfile=$FL_WORK/mp.pid
    t0=$(fl_now_ms)
    mp_run mp-kill "$FL_WORK/res-kill" PD_MODE=external PD_VICTIM="$victim" PD_ROUNDS=10 \
        PD_PIDFILE="$pidfile"
    if ! fl_wait_file "$pidfile" 20; then
        fl_fail "launcher: the victim never wrote its pid"
        wait "$MP_PID"
        fl_show "$FL_WORK/mp-kill.out"
        return
    fi
    sleep 0.$((2 + RANDOM % 6))
    tk=$(fl_now_ms)
    kill -9 "$(cat "$pidfile")"
    mp_check mp-kill "$FL_WORK/res-kill" "$victim" "$t0" "$tk"
}

# --------------------------------------------------------------- main

uid_control
uid_self self-wait 2 wait
uid_self self-barrier-root 0 barrier
uid_self self-stream 2 stream "${BOUNDS[@]}"
uid_self self-alloc 1 alloc PD_TEARDOWN_MAX_MS=$TEARDOWN_BOUND_MS
UID_NODES=1 uid_self nodes-wait 2 wait "${BOUNDS[@]}"
UID_NODES=1 uid_self nodes-barrier 1 barrier "${BOUNDS[@]}"
uid_external kill-member 1
uid_external kill-root 0

MP_LAUNCH=$(fl_launcher)
if [ -z "$MP_LAUNCH" ]; then
    echo "note: no launcher (mpirun) found: launcher scenarios skipped"
elif [ "${HAVE_PMIX:-yes}" = no ]; then
    echo "note: built without PMIx: launcher scenarios skipped"
else
    MP_EXTRA=
    # Open MPI: keep the survivors alive after a rank dies, when it can.
    # shellcheck disable=SC2086
    # (PD_NO_RECOVERY=1 tries the launcher's default behaviour instead.)
    if [ -z "${PD_NO_RECOVERY:-}" ] && $MP_LAUNCH --version 2>&1 | grep -Eq 'Open MPI|OpenRTE' &&
        timeout 30 $MP_LAUNCH -n 1 --enable-recovery true >/dev/null 2>&1; then
        MP_EXTRA=--enable-recovery
    fi
    echo "note: launcher: $MP_LAUNCH ${MP_EXTRA:-(survivors may be killed by it)}"
    mp_self mp-self 3
    # No bootstrap channel under mpirun: the process check (one node) and
    # UCX endpoints (a node per rank) must tell the survivors.
    mp_self mp-stream 2 PD_PHASE=stream "${BOUNDS[@]}"
    MP_NODES=1 mp_self mp-nodes-wait 2 "${BOUNDS[@]}"
    MP_NODES=1 mp_self mp-nodes-barrier 1 PD_PHASE=barrier "${BOUNDS[@]}"
    mp_external 1
fi

fl_finish
