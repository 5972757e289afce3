#!/bin/sh
# uid.sh - NVSHMEM programs under gpurma's uid bootstrap, no launcher:
# uid_init (nvshmemx_init_attr with a unique id) at 1, 2 and 4 processes,
# then the other NVSHMEM tests at 3 processes with a torchrun-style
# environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and nvshmem_init.
build=${top_builddir:-.}/tests/nvshmem
if ! test -x "$build/uid_init"; then
    echo "SKIP: $build/uid_init not built"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/nvshmem-uid.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
# A launcher's environment would make gpurma see a different job.
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMIX_RANK PMIX_NAMESPACE SLURM_PROCID \
    RANK WORLD_SIZE MASTER_PORT
MASTER_ADDR=127.0.0.1
GPURMA_TIMEOUT_MS=${GPURMA_TIMEOUT_MS:-30000}
export MASTER_ADDR GPURMA_TIMEOUT_MS
status=0

# run NAME N PROGRAM: starts N processes of PROGRAM and waits for all;
# NVT_RANK and RANK carry each one's rank.
run() {
    name=$1 n=$2 prog=$3
    pids=
    r=0
    while test $r -lt "$n"; do
        NVT_RANK=$r RANK=$r NVT_NRANKS=$n NVT_UID_FILE="$dir/uid" timeout -k 5 90 "$prog" \
            >"$dir/out.$r" 2>&1 &
        pids="$pids $!"
        r=$((r + 1))
    done
    fail=0
    for p in $pids; do
        wait "$p" || fail=1
    done
    if test $fail -ne 0; then
        echo "== uid: $name at $n processes FAILED"
        cat "$dir"/out.*
        status=1
    else
        grep PASS "$dir/out.0"
        echo "== uid: $name at $n processes passed"
    fi
    rm -f "$dir"/out.*
}

for n in 1 2 4; do
    rm -f "$dir/uid"
    run uid_init "$n" "$build/uid_init"
done
# A port per program, different for each run of this script (the root
# listens on it; a clash fails loudly, it does not hang).
port=$((20000 + $$ % 20000))
for t in ring_rma atomics signals teams; do
    port=$((port + 1))
    WORLD_SIZE=3 MASTER_PORT=$port
    export WORLD_SIZE MASTER_PORT
    run "$t" 3 "$build/$t.mp"
    unset WORLD_SIZE MASTER_PORT
done
exit $status
