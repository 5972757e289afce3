# uid-lib.sh - starting uid bootstrap jobs by hand, as torchrun would;
# sourced by the uid fault tests, never run. The sourcing script sets
# FL_NAME first; this brings in fault-lib.sh, calls fl_init and finds the
# program every rank runs, uid_ring (UID_PROG; exits 99 when it cannot be
# built).

. "$(dirname "${BASH_SOURCE[0]}")/fault-lib.sh"
fl_init
UID_PROG=$(fl_program tests/fault/uid_ring) || exit 99

# uid_new_job: a fresh MASTER_PORT and token.
uid_new_job() {
    PORT=$(fl_free_port)
    TOKEN=$(fl_token)
}

# uid_launch NAME RANK SIZE [VAR=VALUE...]: starts a rank of the current job
# in the background; output in $FL_WORK/NAME.RANK, pid in FL_PIDS[RANK].
uid_launch() {
    local name=$1 r=$2 n=$3
    shift 3
    env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR=127.0.0.1 MASTER_PORT="$PORT" \
        GPURMA_UID_TOKEN="$TOKEN" "$@" \
        timeout -k 5 60 "$UID_PROG" >"$FL_WORK/$name.$r" 2>&1 &
    FL_PIDS[r]=$!
}

# uid_wait_ranks FIRST LAST: waits for those ranks; fills CODES[r].
uid_wait_ranks() {
    local r
    for ((r = $1; r <= $2; r++)); do
        wait "${FL_PIDS[r]}" 2>/dev/null
        CODES[r]=$?
        FL_PIDS[r]=
    done
}
