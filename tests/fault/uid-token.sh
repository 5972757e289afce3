#!/bin/bash
# uid-token.sh - the uid bootstrap keeps jobs apart without GPURMA_UID_TOKEN
# where it can, and says when it cannot.
#
#   two jobs    two jobs on one port, same MASTER_ADDR/PORT/WORLD_SIZE, no
#               token, different SLURM_JOB_ID (then TORCHELASTIC_RUN_ID):
#               job B's rank 1 connects first and must be refused (token
#               mismatch), then job A's rank 1 joins and job A passes (it
#               used to form a world of A's rank 0 and B's rank 1)
#   other user  a rank started as user nobody, with the right token, sees
#               that rank 0 is root's and sends it nothing; a hostile
#               process of nobody that replays a real rank's hello is
#               refused by rank 0, which then admits the real rank, also
#               when it resets the connection right after its hello (skipped
#               where runuser is missing, we are not root, or nobody cannot
#               run the programs)
#   warning     a job on two (simulated) hosts without a token: rank 0 warns
#               once; with a token: no warning
#
# Exit: 0 pass, 1 fail, 99 when uid_ring or uid_squat cannot be built.
set -u
FL_NAME=uid-token
. "$(dirname "$0")/uid-lib.sh"

# start NAME INDEX RANK SIZE [VAR=VALUE...]: a rank in the background
# (any user prefix goes in START_AS), pid in FL_PIDS[INDEX]
START_AS=()
start() {
    local name=$1 i=$2 r=$3 n=$4
    shift 4
    "${START_AS[@]}" env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR=127.0.0.1 MASTER_PORT="$PORT" \
        GPURMA_UID_TOKEN="$TOKEN" "$@" timeout -k 5 40 "$UID_PROG" >"$FL_WORK/$name" 2>&1 &
    FL_PIDS[i]=$!
}
finish() { # finish INDEX: exit code in RC
    wait "${FL_PIDS[$1]}" 2>/dev/null
    RC=$?
    FL_PIDS[$1]=
}

# ---- two jobs on one port, no token, told apart by Slurm's job id or by
# torchrun's run id
for var in SLURM_JOB_ID TORCHELASTIC_RUN_ID; do
    uid_new_job
    TOKEN=
    start a0 0 0 2 $var=1001 GPURMA_TIMEOUT_MS=15000
    sleep 0.5
    start b1 1 1 2 $var=2002 GPURMA_TIMEOUT_MS=3000
    finish 1
    b_rc=$RC
    start a1 2 1 2 $var=1001 GPURMA_TIMEOUT_MS=15000
    finish 0
    a0_rc=$RC
    finish 2
    a1_rc=$RC
    if [ "$b_rc" -ne 0 ] && grep -q 'token mismatch' "$FL_WORK/b1" && [ "$a0_rc" = 0 ] &&
        [ "$a1_rc" = 0 ]; then
        fl_ok "two jobs on one port ($var): job B's rank refused (token mismatch), job A passed"
    else
        fl_fail "two jobs on one port ($var): B rank 1 exit $b_rc, A exit $a0_rc/$a1_rc"
        fl_show "$FL_WORK/a0" "$FL_WORK/b1" "$FL_WORK/a1"
    fi
done

# ---- a process of another user on this host
libdir=$(fl_libdir)
SQUAT=$(fl_program tests/fault/uid_squat) || exit 99
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null 2>&1 &&
    runuser -u nobody -- test -x "$UID_PROG" 2>/dev/null &&
    runuser -u nobody -- test -x "$SQUAT" 2>/dev/null &&
    { [ -z "$libdir" ] || runuser -u nobody -- test -r "$libdir/libgpurma.so" 2>/dev/null; }; then
    # A rank of user nobody with the right token: it finds rank 0 is
    # root's and sends it nothing; rank 0 sees no rank 1 and times out.
    uid_new_job
    start u0 0 0 2 GPURMA_TIMEOUT_MS=4000
    sleep 0.3
    START_AS=(runuser -u nobody --)
    start u1 1 1 2 GPURMA_TIMEOUT_MS=4000
    START_AS=()
    finish 1
    u1_rc=$RC
    finish 0
    u0_rc=$RC
    if [ "$u1_rc" -ne 0 ] && grep -q 'belongs to user 0, not to this rank' "$FL_WORK/u1" &&
        [ "$u0_rc" -ne 0 ] && ! grep -q 'PASS' "$FL_WORK/u0"; then
        fl_ok "a rank of user nobody did not greet rank 0 of root; both failed"
    else
        fl_fail "another user: rank 1 (nobody) exit $u1_rc, rank 0 exit $u0_rc"
        fl_show "$FL_WORK/u0" "$FL_WORK/u1"
    fi

    # A hostile process of user nobody that replays a real rank 1's hello
    # (recorded by a listener of root's, as anyone who sees the traffic
    # could): rank 0 refuses it (verdict 5, another user), then admits the
    # real rank 1, and the job passes.
    uid_new_job
    "$SQUAT" 127.0.0.1 "$PORT" 3 "$FL_WORK/hello" >"$FL_WORK/rec" 2>&1 &
    FL_PIDS[3]=$!
    sleep 0.3
    start rec1 1 1 2 GPURMA_TIMEOUT_MS=1500
    finish 1
    wait "${FL_PIDS[3]}" 2>/dev/null
    FL_PIDS[3]=
    start r0 0 0 2 GPURMA_TIMEOUT_MS=15000
    verdict=
    for ((i = 0; i < 50; i++)); do
        verdict=$(runuser -u nobody -- "$SQUAT" --replay 127.0.0.1 "$PORT" - \
            <"$FL_WORK/hello" 2>/dev/null)
        case $verdict in *verdict*) break ;; esac
        sleep 0.1
    done
    start r1 1 1 2 GPURMA_TIMEOUT_MS=15000
    finish 0
    r0_rc=$RC
    finish 1
    r1_rc=$RC
    if [ "$verdict" = "uid_squat: verdict 5" ] && [ "$r0_rc" = 0 ] && [ "$r1_rc" = 0 ] &&
        grep -q 'another user on rank 0' "$FL_WORK/r0"; then
        fl_ok "a hello replayed by user nobody was refused by rank 0 ($verdict), then the job passed"
    else
        fl_fail "replayed hello: '$verdict' (want verdict 5), job exit $r0_rc/$r1_rc"
        fl_show "$FL_WORK/rec" "$FL_WORK/rec1" "$FL_WORK/r0" "$FL_WORK/r1"
    fi

    # The same hello from user nobody, reset at once (before rank 0 can ask
    # the OS who sent it): rank 0 must not admit a connection nobody vouches
    # for, which held rank 1 and locked the real one out.
    uid_new_job
    start x0 0 0 2 GPURMA_TIMEOUT_MS=15000
    sent=
    for ((i = 0; i < 50; i++)); do
        sent=$(runuser -u nobody -- "$SQUAT" --replay-reset 127.0.0.1 "$PORT" - \
            <"$FL_WORK/hello" 2>/dev/null)
        [ "$sent" = "uid_squat: sent and reset" ] && break
        sleep 0.1
    done
    sleep 0.3
    start x1 1 1 2 GPURMA_TIMEOUT_MS=15000
    finish 0
    x0_rc=$RC
    finish 1
    x1_rc=$RC
    if [ "$sent" = "uid_squat: sent and reset" ] && [ "$x0_rc" = 0 ] && [ "$x1_rc" = 0 ]; then
        fl_ok "a hello sent and reset by user nobody was not admitted; the real rank 1 joined"
    else
        fl_fail "hello sent and reset: '$sent', job exit $x0_rc/$x1_rc"
        fl_show "$FL_WORK/x0" "$FL_WORK/x1"
    fi
else
    echo "note: not root, no runuser, or user nobody cannot run the programs: other-user cases skipped"
fi

# ---- the warning on a multi-host job without a token, and none with one
for mode in none token; do
    uid_new_job
    [ $mode = none ] && TOKEN=
    start w0 0 0 2 GPURMA_NODE_ID=hostA GPURMA_TIMEOUT_MS=20000
    start w1 1 1 2 GPURMA_NODE_ID=hostB GPURMA_TIMEOUT_MS=20000
    finish 0
    w0_rc=$RC
    finish 1
    w1_rc=$RC
    n=$(grep -c 'GPURMA_UID_TOKEN is not set' "$FL_WORK/w0")
    want=1
    [ $mode = token ] && want=0
    if [ "$w0_rc" = 0 ] && [ "$w1_rc" = 0 ] && [ "$n" = "$want" ] &&
        ! grep -q 'GPURMA_UID_TOKEN is not set' "$FL_WORK/w1"; then
        fl_ok "two hosts, token $mode: $n warning(s) on rank 0"
    else
        fl_fail "two hosts, token $mode: exit $w0_rc/$w1_rc, $n warning(s) on rank 0 (want $want)"
        fl_show "$FL_WORK/w0" "$FL_WORK/w1"
    fi
done
fl_finish
