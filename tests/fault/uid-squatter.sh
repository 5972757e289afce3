#!/bin/bash
# uid-squatter.sh - another user's process takes a uid bootstrap job's port
# before the job's rank 0 does and plays rank 0 (uid_squat, run as user
# nobody); the job runs as root on the same host, with GPURMA_UID_TOKEN set.
#
#   squatted  while the squatter holds the port: rank 1 connects to it but
#             sends it nothing (no hello, so no token) and fails naming the
#             listener's user; rank 0 cannot listen and names the holder's
#             user too (rank 1 used to hand the squatter its hello and be
#             "admitted" by it)
#   freed     the squatter leaves after 2 s: the job, still retrying, passes
#
# Skipped (77) unless run as root with runuser, and user nobody can run the
# programs (the other-user case of uid-token.sh has the same needs).
# Exit: 0 pass, 1 fail, 77 skipped, 99 when a program cannot be built.
set -u
FL_NAME=uid-squatter
. "$(dirname "$0")/uid-lib.sh"
SQUAT=$(fl_program tests/fault/uid_squat) || exit 99

libdir=$(fl_libdir)
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1 ||
    ! runuser -u nobody -- test -x "$SQUAT" 2>/dev/null ||
    ! runuser -u nobody -- test -x "$UID_PROG" 2>/dev/null ||
    { [ -n "$libdir" ] && ! runuser -u nobody -- test -r "$libdir/libgpurma.so" 2>/dev/null; }; then
    echo "SKIP: not root, no runuser, or user nobody cannot run the programs"
    exit 77
fi
NOBODY=$(id -u nobody)

# squat SECONDS: the squatter on a fresh port of a fresh job, as nobody;
# returns once it listens (pid in FL_PIDS[9], output in $FL_WORK/squat)
squat() {
    uid_new_job
    # the last squatter's "listening" must not pass for this one's (the
    # redirection below truncates the file only once the child runs)
    rm -f "$FL_WORK/squat"
    runuser -u nobody -- timeout -k 5 30 "$SQUAT" 127.0.0.1 "$PORT" "$1" >"$FL_WORK/squat" 2>&1 &
    FL_PIDS[9]=$!
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q 'listening' "$FL_WORK/squat" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# ---- squatted: the squatter outlives the job's timeout
if ! squat 8; then
    fl_fail "squatted: uid_squat did not listen"
    fl_show "$FL_WORK/squat"
else
    uid_launch sq 1 2 GPURMA_TIMEOUT_MS=3000
    sleep 0.5 # rank 1 meets the squatter first
    uid_launch sq 0 2 GPURMA_TIMEOUT_MS=3000
    uid_wait_ranks 0 1
    wait "${FL_PIDS[9]}" 2>/dev/null
    FL_PIDS[9]=
    seen=$(sed -n 's/^uid_squat: \([0-9]*\) connection(s), \([0-9]*\) byte(s).*/\1 \2/p' "$FL_WORK/squat")
    conns=${seen% *} bytes=${seen#* }
    if [ "${CODES[1]}" -ne 0 ] && grep -q "belongs to user $NOBODY, not to this rank's user 0" "$FL_WORK/sq.1" &&
        [ "${conns:-0}" -ge 1 ] && [ "$bytes" = 0 ] &&
        [ "${CODES[0]}" -ne 0 ] && grep -q "another user $NOBODY listens on it" "$FL_WORK/sq.0"; then
        fl_ok "squatted: rank 1 connected $conns time(s) and sent the squatter 0 bytes; both ranks name user $NOBODY"
    else
        fl_fail "squatted: rank 0 exit ${CODES[0]}, rank 1 exit ${CODES[1]}, squatter saw ${conns:-?} connection(s) and ${bytes:-?} byte(s)"
        fl_show "$FL_WORK/squat" "$FL_WORK/sq.0" "$FL_WORK/sq.1"
    fi
fi

# ---- freed: the squatter leaves after 2 s, and the job gets its port
if ! squat 2; then
    fl_fail "freed: uid_squat did not listen"
    fl_show "$FL_WORK/squat"
else
    uid_launch fr 1 2 GPURMA_TIMEOUT_MS=20000
    uid_launch fr 0 2 GPURMA_TIMEOUT_MS=20000
    uid_wait_ranks 0 1
    wait "${FL_PIDS[9]}" 2>/dev/null
    FL_PIDS[9]=
    if [ "${CODES[0]}" = 0 ] && [ "${CODES[1]}" = 0 ] && grep -q PASS "$FL_WORK/fr.1" &&
        grep -q ' 0 byte(s)' "$FL_WORK/squat"; then
        fl_ok "freed: the job passed once the squatter left ($(grep -c 'belongs to user' "$FL_WORK/fr.1") warning(s) on rank 1)"
    else
        fl_fail "freed: rank 0 exit ${CODES[0]}, rank 1 exit ${CODES[1]}"
        fl_show "$FL_WORK/squat" "$FL_WORK/fr.0" "$FL_WORK/fr.1"
    fi
fi
fl_finish
