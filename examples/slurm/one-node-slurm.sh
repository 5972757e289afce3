#!/bin/bash
# one-node-slurm.sh start|stop DIR - a private one-node Slurm (slurmctld,
# slurmd and munged, as root) in DIR, so that `srun --mpi=pmix -n 4 ./app`
# works on a workstation or CI machine where Slurm is only installed
# (apt-get install slurmctld slurmd slurm-client munge), not configured.
#
#   eval "$(examples/slurm/one-node-slurm.sh start /tmp/slurm)"  # exports SLURM_CONF
#   srun --mpi=pmix -n 4 examples/put_demo
#   examples/slurm/one-node-slurm.sh stop /tmp/slurm
#
# Everything lives in DIR (config, munge key and socket, state, logs, pid
# files) on free ports picked at start: a system Slurm or munge, if any, is
# neither used nor touched. The node offers 8 CPUs over however many cores
# there are (SlurmdParameters=config_overrides, OverSubscribe=FORCE) so 8
# ranks fit on a 2-core machine; no cgroups (proctrack/linuxproc, task/none).
# `start` prints the one line to eval on stdout; progress goes to stderr.
# `stop` ends the daemons by the PIDs in their pid files, nothing else.
set -u
cmd=${1:-}
W=${2:-}
if [ -z "$cmd" ] || [ -z "$W" ]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi
export PATH=$PATH:/usr/sbin:/sbin

stop() {
    local f pid
    for f in "$W/slurmd.pid" "$W/slurmctld.pid" "$W/munge/munged.pid"; do
        pid=$(cat "$f" 2>/dev/null) || continue
        [ -n "$pid" ] && kill "$pid" 2>/dev/null
    done
    for f in "$W/slurmd.pid" "$W/slurmctld.pid" "$W/munge/munged.pid"; do
        pid=$(cat "$f" 2>/dev/null) || continue
        [ -n "$pid" ] || continue
        for _ in $(seq 1 25); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -9 "$pid" 2>/dev/null
        rm -f "$f"
    done
    return 0
}

if [ "$cmd" = stop ]; then
    stop
    exit 0
fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

die() {
    echo "one-node-slurm: $*" >&2
    for f in "$W/slurmctld.log" "$W/slurmd.log" "$W/munge/munged.log"; do
        [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
    done
    stop
    exit 1
}

for tool in slurmctld slurmd srun sinfo munged mungekey; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "$tool is not installed (apt-get install slurmctld slurmd slurm-client munge)"
done
[ "$(id -u)" = 0 ] || die "needs root: slurmd starts the tasks as their user"

free_port() {
    local port hex
    for _ in $(seq 1 200); do
        port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        printf -v hex ':%04X ' "$port"
        cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q "$hex" || break
    done
    echo "$port"
}
wait_file() {
    for _ in $(seq 1 $(($2 * 10))); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# munged refuses folders others can write to or cannot traverse.
mkdir -p "$W" || die "cannot create $W"
W=$(cd "$W" && pwd)
chmod 755 "$W"
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/tmp"
MUNGE_USER=munge
id "$MUNGE_USER" >/dev/null 2>&1 || MUNGE_USER=root
[ -s "$W/munge/munge.key" ] ||
    mungekey --create --keyfile="$W/munge/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null
chown -R "$MUNGE_USER:" "$W/munge"
chmod 711 "$W/munge"
chmod 400 "$W/munge/munge.key"
SOCKET=$W/munge/munge.socket
munge_cmd=(munged --socket="$SOCKET" --key-file="$W/munge/munge.key"
    --pid-file="$W/munge/munged.pid" --log-file="$W/munge/munged.log"
    --seed-file="$W/munge/munged.seed")
if [ "$MUNGE_USER" = root ]; then
    "${munge_cmd[@]}" --force || die "munged did not start"
else
    runuser -u "$MUNGE_USER" -- "${munge_cmd[@]}" || die "munged did not start"
fi
wait_file "$W/munge/munged.pid" 10 || die "munged wrote no pid file"

HOST=$(hostname -s)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(free_port); done
export SLURM_CONF=$W/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=gpurmalocal
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$SOCKET
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
TmpFS=$W/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=pmix
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=5
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=local Nodes=$HOST Default=YES MaxTime=60 State=UP OverSubscribe=FORCE
EOF

slurmctld -f "$SLURM_CONF" -c || die "slurmctld did not start"
wait_file "$W/slurmctld.pid" 15 || die "slurmctld wrote no pid file"
slurmd -f "$SLURM_CONF" || die "slurmd did not start"
wait_file "$W/slurmd.pid" 15 || die "slurmd wrote no pid file"
state=
for _ in $(seq 1 120); do
    state=$(timeout 5 sinfo -h -n "$HOST" -o %t 2>/dev/null | head -1)
    [ "$state" = idle ] && break
    sleep 0.25
done
[ "$state" = idle ] || die "the node is '$state', not idle, after 30 s"
srun --mpi=list 2>&1 | grep -q pmix ||
    die "srun has no pmix plugin (package slurm-wlm-basic-plugins)"
echo "one-node-slurm: up in $W (node $HOST, 8 CPUs, partition local)" >&2
echo "export SLURM_CONF=$SLURM_CONF"
