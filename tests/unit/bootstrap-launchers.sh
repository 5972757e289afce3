#!/bin/bash
# bootstrap-launchers.sh - runs the bootstrap selftest under mpirun: the pmix
# bootstrap (auto-selected from the PMIx environment), node splitting with
# GPURMA_NODE_ID, a dead rank during a fence, and the MPI plugin
# (libgpurma_bootstrap_mpi.so, built here with mpicc).
#
# Usage: bootstrap-launchers.sh   (builds what it needs in a temporary folder)
# MPIRUN overrides the launcher command. Exit: 0 pass, 1 fail, 77 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpurma-launch.XXXXXX")
trap 'rm -rf "$work"' EXIT

MPIRUN=${MPIRUN:-mpirun --oversubscribe}
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
    { echo "SKIP: mpicc/mpirun not found"; exit 77; }
pkg-config --exists pmix || { echo "SKIP: PMIx development files not found"; exit 77; }

unset GPURMA_BOOTSTRAP GPURMA_NODE_ID RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
N=4
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Every bootstrap source but the MPI plugin (built as a library below) and
# pmix_none.c (what a build without PMIx takes instead of pmix.c).
sources=()
for f in "$top"/bootstrap/*.c; do
    case ${f##*/} in mpi_plugin.c | pmix_none.c) ;; *) sources+=("$f") ;; esac
done
sources+=("$top"/src/common/{config,log,error}.c "$top/tests/unit/bootstrap-selftest.c")
flags=(-std=gnu11 -O2 -g -Wall -Wextra -fvisibility=hidden -DHAVE_PMIX
       -I"$top/include" -I"$top/src/common" -I"$top/bootstrap")
# shellcheck disable=SC2046
mpicc "${flags[@]}" -DSELFTEST_WITH_MPI $(pkg-config --cflags pmix) "${sources[@]}" \
    -o "$work/bootstrap-selftest" $(pkg-config --libs pmix) -lpthread -ldl &&
    mpicc -std=gnu11 -O2 -g -Wall -Wextra -shared -fPIC -fvisibility=hidden \
        -I"$top/include" -I"$top/bootstrap" "$top/bootstrap/mpi_plugin.c" \
        -o "$work/libgpurma_bootstrap_mpi.so" ||
    { echo "FAIL: cannot build"; exit 1; }

# expect_pass NAME EXPECTED-BOOTSTRAP [mpirun arguments...]
expect_pass() {
    local name=$1 bs=$2
    shift 2
    # shellcheck disable=SC2086
    timeout 120 $MPIRUN -np $N "$@" >"$work/$name.out" 2>&1
    local rc=$? passes
    passes=$(grep -c ": PASS" "$work/$name.out")
    if [ $rc = 0 ] && [ "$passes" = $N ] && [ "$(grep -c "bootstrap $bs," "$work/$name.out")" = $N ]
    then
        echo "ok: $name"
    else
        fail "$name (rc $rc)"
        sed 's/^/    /' "$work/$name.out"
    fi
}

expect_pass pmix pmix "$work/bootstrap-selftest"
expect_pass pmix-nodes pmix -x GPURMA_SELFTEST_EXPECT_NODES=2 \
    sh -c 'GPURMA_NODE_ID=n$((OMPI_COMM_WORLD_RANK / 2)) exec "$0"' "$work/bootstrap-selftest"
expect_pass mpi-plugin mpi -x GPURMA_SELFTEST_MPI=1 "$work/bootstrap-selftest"

# A rank killed in the middle of the run: the others' fence must end with
# PEER_FAILED promptly (mpirun ends the job as well; what matters is that
# nobody sits out the 60 s timeout).
rm -f "$work/marker"
start=$(date +%s)
# shellcheck disable=SC2086
timeout 120 $MPIRUN -np $N -x GPURMA_SELFTEST_MODE=sleep -x GPURMA_SELFTEST_VICTIM=2 \
    -x GPURMA_SELFTEST_MARKER="$work/marker" -x GPURMA_TIMEOUT_MS=60000 \
    "$work/bootstrap-selftest" >"$work/kill.out" 2>&1 &
job=$!
for ((i = 0; i < 300; i++)); do [ -s "$work/marker" ] && break; sleep 0.1; done
sleep 0.5
[ -s "$work/marker" ] && kill -9 "$(cat "$work/marker")"
wait $job
elapsed=$(($(date +%s) - start))
# Whether the survivors print their PEER_FAILED before mpirun kills them is
# a race; that the job ends long before the timeout is not.
seen="mpirun ended the job"
grep -q "a peer process failed" "$work/kill.out" && seen="survivors reported PEER_FAILED"
if [ -s "$work/marker" ] && [ $elapsed -lt 30 ]; then
    echo "ok: pmix: killed rank ended the job in ${elapsed}s ($seen)"
else
    fail "pmix kill (${elapsed}s)"
    sed 's/^/    /' "$work/kill.out"
fi

if [ $failures -ne 0 ]; then
    echo "$failures launcher bootstrap test(s) failed"
    exit 1
fi
echo "all launcher bootstrap tests passed"
