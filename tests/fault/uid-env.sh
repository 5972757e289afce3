#!/bin/bash
# uid-env.sh - what gpurma_init does with a torchrun-style environment that
# is incomplete or wrong (program: uid_ring.c, one process per case):
#   - any of RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_RANK,
#     LOCAL_WORLD_SIZE set without all of RANK, WORLD_SIZE and MASTER_ADDR:
#     init fails with GPURMA_ERR_INVALID_ARG naming the missing variables
#     (it used to run every process as a job of its own), also when
#     GPURMA_BOOTSTRAP=uid asks for the bootstrap;
#   - MASTER_PORT outside 1-65535 or not a number (70000 used to listen on
#     4464), RANK or WORLD_SIZE not a plain integer, WORLD_SIZE < 1,
#     RANK >= WORLD_SIZE: GPURMA_ERR_INVALID_ARG naming the variable and value;
#   - every failure comes at once (no connection is tried);
#   - none of those variables: the single bootstrap; GPURMA_BOOTSTRAP=single
#     overrides a stray LOCAL_RANK; a complete environment of one rank
#     (no MASTER_PORT) runs on the uid bootstrap.
#
# Exit: 0 pass, 1 fail, 99 when the program cannot be built.
set -u
FL_NAME=uid-env
. "$(dirname "$0")/uid-lib.sh"
unset LOCAL_RANK LOCAL_WORLD_SIZE
FAST_MS=5000 # a refusal is immediate; this leaves room for a loaded machine
case_no=0

# run_case VAR=VALUE...: runs uid_ring alone with exactly that launch
# environment; output in $FL_WORK/case.N, exit status in CODE, time in MS.
run_case() {
    case_no=$((case_no + 1))
    OUT=$FL_WORK/case.$case_no
    local t0
    t0=$(fl_now_ms)
    env "$@" GPURMA_TIMEOUT_MS=20000 timeout -k 5 30 "$UID_PROG" >"$OUT" 2>&1
    CODE=$?
    MS=$(($(fl_now_ms) - t0))
}

# expect_refusal "VAR=VALUE ..." TEXT...: init fails at once with
# GPURMA_ERR_INVALID_ARG and a message holding every TEXT.
expect_refusal() {
    local envs=$1 text ok=1 why=
    shift
    # shellcheck disable=SC2086 # envs is a list of assignments
    run_case $envs
    [ "$CODE" = 2 ] || { ok=0; why="$why exit $CODE (want 2);"; }
    grep -q "init -> GPURMA_ERR_INVALID_ARG: " "$OUT" || { ok=0; why="$why not INVALID_ARG;"; }
    for text in "$@"; do
        grep -F "init -> GPURMA_ERR_INVALID_ARG: " "$OUT" | grep -qF -- "$text" ||
            { ok=0; why="$why message lacks '$text';"; }
    done
    [ "$MS" -lt $FAST_MS ] || { ok=0; why="$why took $MS ms;"; }
    [ $ok = 1 ] && fl_ok "$envs: refused in $MS ms: $(sed -n 's/.*INVALID_ARG: //p' "$OUT")" ||
        { fl_fail "$envs:$why"; fl_show "$OUT"; }
}

# expect_run "VAR=VALUE ..." BOOTSTRAP: the job runs, on that bootstrap.
expect_run() {
    local envs=$1 bootstrap=$2
    # shellcheck disable=SC2086
    run_case $envs UID_RING_BOOTSTRAP="$bootstrap"
    [ "$CODE" = 0 ] && grep -q "bootstrap $bootstrap: PASS" "$OUT" &&
        fl_ok "${envs:-(nothing set)}: ran on the $bootstrap bootstrap" ||
        { fl_fail "${envs:-(nothing set)}: exit $CODE, want a pass on $bootstrap"; fl_show "$OUT"; }
}

PORT=$(fl_free_port)
ADDR=MASTER_ADDR=127.0.0.1

# Incomplete environments.
expect_refusal "RANK=0 WORLD_SIZE=2" "MASTER_ADDR is not set, but RANK and WORLD_SIZE are"
expect_refusal "RANK=1" "WORLD_SIZE and MASTER_ADDR are not set"
expect_refusal "WORLD_SIZE=2 $ADDR MASTER_PORT=$PORT" "RANK is not set"
expect_refusal "$ADDR MASTER_PORT=$PORT" "RANK and WORLD_SIZE are not set"
expect_refusal "MASTER_PORT=$PORT" "RANK, WORLD_SIZE and MASTER_ADDR are not set"
expect_refusal "LOCAL_RANK=1 LOCAL_WORLD_SIZE=2" "RANK, WORLD_SIZE and MASTER_ADDR are not set" \
    "unset LOCAL_RANK and LOCAL_WORLD_SIZE"
expect_refusal "GPURMA_BOOTSTRAP=uid RANK=0 WORLD_SIZE=2" "MASTER_ADDR is not set"
# Values that are not what they must be.
expect_refusal "RANK=0 WORLD_SIZE=2 $ADDR MASTER_PORT=70000" "MASTER_PORT='70000'" "1-65535"
expect_refusal "RANK=0 WORLD_SIZE=2 $ADDR MASTER_PORT=0" "MASTER_PORT='0'"
expect_refusal "RANK=0 WORLD_SIZE=2 $ADDR MASTER_PORT=-5" "MASTER_PORT='-5'"
expect_refusal "RANK=0 WORLD_SIZE=2 $ADDR MASTER_PORT=http" "MASTER_PORT='http'"
expect_refusal "RANK=0 WORLD_SIZE=2 $ADDR MASTER_PORT=29500x" "MASTER_PORT='29500x'"
expect_refusal "RANK=1x WORLD_SIZE=2 $ADDR MASTER_PORT=$PORT" "RANK='1x'"
expect_refusal "RANK=+1 WORLD_SIZE=2 $ADDR MASTER_PORT=$PORT" "RANK='+1'"
expect_refusal "RANK=-1 WORLD_SIZE=2 $ADDR MASTER_PORT=$PORT" "RANK='-1'"
expect_refusal "RANK=0 WORLD_SIZE=two $ADDR MASTER_PORT=$PORT" "WORLD_SIZE='two'"
expect_refusal "RANK=0 WORLD_SIZE=99999999999 $ADDR MASTER_PORT=$PORT" "WORLD_SIZE='99999999999'"
expect_refusal "RANK=0 WORLD_SIZE=0 $ADDR MASTER_PORT=$PORT" "WORLD_SIZE='0'"
expect_refusal "RANK=2 WORLD_SIZE=2 $ADDR MASTER_PORT=$PORT" "RANK=2" "WORLD_SIZE=2"
# What must keep working.
expect_run "" single
expect_run "GPURMA_BOOTSTRAP=single LOCAL_RANK=1" single
expect_run "RANK=0 WORLD_SIZE=1 $ADDR" uid

fl_finish
