#!/bin/bash
# srun-pmix.sh - a gpurma job launched by "srun --mpi=pmix" on a private,
# one-node Slurm cluster that this script starts and stops.
#
# Everything lives in a temporary folder: a munge key and a munged on its
# own socket, a slurm.conf (CPUs=8 over however many cores there are, thanks
# to SlurmdParameters=config_overrides and OverSubscribe=FORCE; no cgroups:
# proctrack/linuxproc, task/none), state, spool, logs and pid files; the
# ports are free ones picked at start. Nothing of a system Slurm or munge is
# used or touched. The daemons are stopped by the PIDs in their pid files.
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

# munged refuses folders others can write to or cannot traverse: the
# work folder is made 0755 and its munge part belongs to the munge user.
W=$FL_WORK
chmod 755 "$W"
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/tmp"
MUNGE_USER=munge
id "$MUNGE_USER" >/dev/null 2>&1 || MUNGE_USER=root

stop_daemons() {
    local f pid
    for f in "$W/slurmd.pid" "$W/slurmctld.pid" "$W/munge/munged.pid"; do
        pid=$(cat "$f" 2>/dev/null) || continue
        [ -n "$pid" ] || continue
        kill "$pid" 2>/dev/null
    done
    # Give them a moment to go, then insist (still by pid only).
    for f in "$W/slurmd.pid" "$W/slurmctld.pid" "$W/munge/munged.pid"; do
        pid=$(cat "$f" 2>/dev/null) || continue
        [ -n "$pid" ] || continue
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -9 "$pid" 2>/dev/null
    done
}
FL_EXTRA_CLEANUP=stop_daemons

show_logs() {
    fl_show "$W/slurmctld.log" "$W/slurmd.log" "$W/munge/munged.log" 2>/dev/null | tail -60
}

die() {
    echo "FAIL: $*"
    show_logs
    exit 1
}

# ------------------------------------------------------------- munge

mungekey --create --keyfile="$W/munge/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null
chown -R "$MUNGE_USER:" "$W/munge"
chmod 711 "$W/munge" # the socket must be reachable by every user
chmod 400 "$W/munge/munge.key"
MUNGE_SOCKET=$W/munge/munge.socket
munge_cmd=(munged --socket="$MUNGE_SOCKET" --key-file="$W/munge/munge.key"
    --pid-file="$W/munge/munged.pid" --log-file="$W/munge/munged.log"
    --seed-file="$W/munge/munged.seed")
if [ "$MUNGE_USER" = root ]; then
    "${munge_cmd[@]}" --force || die "munged did not start"
else
    runuser -u "$MUNGE_USER" -- "${munge_cmd[@]}" || die "munged did not start"
fi
fl_wait_file "$W/munge/munged.pid" 10 || die "munged wrote no pid file"

# ------------------------------------------------------------- slurm

HOST=$(hostname -s)
CTLD_PORT=$(fl_free_port)
SLURMD_PORT=$(fl_free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(fl_free_port); done
export SLURM_CONF=$W/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=gpurmatest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$W/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=gpurma Nodes=$HOST Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
EOF

slurmctld -f "$SLURM_CONF" -c || die "slurmctld did not start"
fl_wait_file "$W/slurmctld.pid" 15 || die "slurmctld wrote no pid file"
slurmd -f "$SLURM_CONF" || die "slurmd did not start"
fl_wait_file "$W/slurmd.pid" 15 || die "slurmd wrote no pid file"

state=
for ((i = 0; i < 120; i++)); do
    state=$(timeout 5 sinfo -h -n "$HOST" -o %t 2>/dev/null | head -1)
    [ "$state" = idle ] && break
    sleep 0.25
done
[ "$state" = idle ] || die "the node is '$state', not idle, after 30 s"
echo "ok: private Slurm up (node $HOST idle, ports $CTLD_PORT/$SLURMD_PORT)"

# ------------------------------------------------------------- the job

srun --mpi=list 2>&1 | grep -q pmix || die "srun has no pmix plugin (slurm-wlm-basic-plugins)"
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
