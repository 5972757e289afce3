#!/bin/bash
# srun-pmix.sh - a gpurma job launched by "srun --mpi=pmix" on a private,
# one-node Slurm cluster that this script starts and stops.
#
# The cluster comes from examples/slurm/one-node-slurm.sh, the recipe the
# README gives users (everything in a temporary folder, free ports, nothing
# of a system Slurm or munge used or touched).
#
# Needs root (slurmd launches the tasks) and the packages slurmctld, slurmd,
# slurm-client, munge and slurm-wlm-basic-plugins (mpi_pmix.so).
# Exit: 0 pass, 1 fail, 77 skip (Slurm or munge not installed, or not root),
# 99 when the test program cannot be built.
set -u
FL_NAME=srun-pmix
. "$(dirname "$0")/../fault/fault-lib.sh"

for tool in slurmctld slurmd srun sinfo munged mungekey; do
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
        echo "SKIP: $tool is not installed (apt-get install slurmctld slurmd slurm-client munge)"
        exit 77
    fi
done
export PATH=$PATH:/usr/sbin
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: a private Slurm needs root (slurmd starts the tasks as their user)"
    exit 77
fi
if [ "${HAVE_PMIX:-yes}" = no ]; then
    echo "SKIP: gpurma was built without PMIx"
    exit 77
fi

fl_init
NTASKS=${SRUN_PMIX_NTASKS:-4}
PROG=$(fl_program tests/slurm/srun_ring) || exit 99
PEER_DEATH=$(fl_program tests/fault/peer_death) || exit 99

# The cluster is the one the README gives users: examples/slurm/one-node-slurm.sh
# (munged on its own socket, slurmctld and slurmd on free ports, all in
# $W/slurm, stopped by the pids in their pid files).
W=$FL_WORK
chmod 755 "$W"
SLURM_SH=$FL_TOP/examples/slurm/one-node-slurm.sh
stop_daemons() { bash "$SLURM_SH" stop "$W/slurm" 2>/dev/null; }
FL_EXTRA_CLEANUP=stop_daemons
show_logs() {
    fl_show "$W/slurm/slurmctld.log" "$W/slurm/slurmd.log" "$W/slurm/munge/munged.log" \
        2>/dev/null | tail -60
}
die() {
    echo "FAIL: $*"
    show_logs
    exit 1
}
setup=$(bash "$SLURM_SH" start "$W/slurm" 2>"$W/slurm-start.log") ||
    { fl_show "$W/slurm-start.log"; die "one-node-slurm.sh start failed"; }
eval "$setup"
echo "ok: private Slurm up ($(tail -1 "$W/slurm-start.log"))"

# ------------------------------------------------------------- the job

t0=$(fl_now_ms)
timeout -k 10 120 srun --mpi=pmix -N 1 -n "$NTASKS" --time=2 --kill-on-bad-exit=1 \
    --chdir="$W" "$PROG" >"$W/job.out" 2>&1
rc=$?
elapsed=$(($(fl_now_ms) - t0))
ok=1
[ $rc = 0 ] || ok=0
for ((r = 0; r < NTASKS; r++)); do
    grep -q "srun_ring: rank $r of $NTASKS: bootstrap pmix: PASS" "$W/job.out" || ok=0
done
if [ $ok = 1 ]; then
    fl_ok "srun --mpi=pmix -n $NTASKS: bootstrap pmix, ranks match SLURM_PROCID/NTASKS," \
        "ring data verified ($elapsed ms)"
else
    fl_fail "srun --mpi=pmix -n $NTASKS (exit $rc, $elapsed ms)"
    fl_show "$W/job.out"
    show_logs
fi

# A task killed in the middle of the job: srun is told not to end the step,
# and every other task must report GPURMA_ERR_PEER_FAILED naming it (exit 3,
# written to a result file since srun reports only the worst exit code).
VICTIM=1
mkdir -p "$W/res"
t0=$(fl_now_ms)
PD_MODE=self PD_VICTIM=$VICTIM PD_ROUNDS=15 PD_RESULT_DIR=$W/res GPURMA_TIMEOUT_MS=15000 \
    timeout -k 10 120 srun --mpi=pmix -N 1 -n "$NTASKS" --time=2 --kill-on-bad-exit=0 \
    --chdir="$W" "$PEER_DEATH" >"$W/death.out" 2>&1
rc=$?
elapsed=$(($(fl_now_ms) - t0))
ok=1 why=
for ((r = 0; r < NTASKS; r++)); do
    [ $r = $VICTIM ] && continue
    [ "$(cat "$W/res/rank.$r" 2>/dev/null)" = 3 ] || { ok=0; why="$why rank $r did not exit 3;"; }
    grep "peer_death: rank $r: SURVIVOR" "$W/death.out" >"$W/death.$r"
    fl_names_dead_rank "$W/death.$r" $VICTIM ||
        { ok=0; why="$why rank $r did not report PEER_FAILED naming rank $VICTIM;"; }
done
[ "$elapsed" -lt 30000 ] || { ok=0; why="$why took $elapsed ms;"; }
if [ $ok = 1 ]; then
    fl_ok "srun: task $VICTIM killed itself; the $((NTASKS - 1)) others got PEER_FAILED naming it" \
        "($elapsed ms, srun exit $rc)"
else
    fl_fail "srun: peer death:$why (srun exit $rc)"
    fl_show "$W/death.out"
fi
fl_finish
