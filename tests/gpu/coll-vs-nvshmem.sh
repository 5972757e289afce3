#!/bin/sh
# coll-vs-nvshmem.sh - gpurma's collectives beside NVSHMEM's, in one call, on
# one GPU: NVSHMEM's perftest/host/coll/*_on_stream programs (built against
# the installed NVSHMEM by tests/gpu/nvshmem-perftests.sh --nvshmem-only) and
# gpurma-coll-bench --gpu, both as 2 processes on GPU 0 under one CUDA MPS
# daemon (NVSHMEM runs several PEs per GPU under MPS only with
# NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1), int32 sum, the same
# sizes, every op captured in one CUDA graph on both sides (--graph off: back
# to back on the stream for gpurma, NVSHMEM's per-op stream timing). One
# table per collective, printed last:
#
#   size | gpurma us | NVSHMEM us | ratio (gpurma / NVSHMEM: below 1, gpurma is faster)
#
#   tests/gpu/coll-vs-nvshmem.sh [--build DIR] [--logs DIR] [--min SIZE] [--max SIZE]
#                                [--iters N] [--graph on|off]
#
# Pairs: allreduce / reduction_on_stream (NVSHMEM's reduce is an allreduce),
# allgather / fcollect_on_stream, alltoall / alltoall_on_stream, broadcast /
# broadcast_on_stream (root 0), reduce_scatter / reducescatter_on_stream;
# sizes as both print them (nccl-tests' convention: a rank's larger buffer).
# Defaults: --min 256 --max 64M (k/M suffixes, powers of two), --iters 50
# (NVSHMEM: -n ITERS -w 5; gpurma-coll-bench: at most ITERS per size),
# --build build-gpu/ (configured here if absent), --logs gpu-logs-coll-nvshmem/.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1).
# A caller that already runs an MPS daemon exports CUDA_MPS_PIPE_DIRECTORY
# and CUDA_MPS_LOG_DIRECTORY: it is used and left running.
# Needs mpirun, .nvshmem-src (tests/gpu/prepare-nvshmem-src.sh; carry it
# with .gpu-carry) and NVSHMEM installed (NVSHMEM_HOME or the torch venv's
# nvidia-nvshmem wheel). Expected duration on 1x H100 with the defaults:
# about 5 minutes (build 2-3, NVSHMEM's five programs about 1, gpurma 1).
# With $OUT set the table comes back as $OUT/coll-vs-nvshmem.txt and the
# logs as $OUT/coll-vs-nvshmem-logs.tar.gz. Exit: 0 when both sides ran
# every collective, 1 otherwise, 77 without a GPU, mpirun or the sources.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build-gpu logs=$top/gpu-logs-coll-nvshmem min=256 max=64M iters=50 graph=on
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift ;;
    --logs) logs=$2; shift ;;
    --min) min=$2; shift ;;
    --max) max=$2; shift ;;
    --iters) iters=$2; shift ;;
    --graph) graph=$2; shift ;;
    -h | --help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "coll-vs-nvshmem.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case $graph in on | off) ;; *) echo "coll-vs-nvshmem.sh: --graph on or off" >&2; exit 2 ;; esac
rm -rf "$logs"
mkdir -p "$logs"
note() { echo "== $*" | tee -a "$logs/summary.log"; }
own_mps=no
finish() {
    [ $own_mps = yes ] && echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
    if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
        cp "$logs/table.txt" "$OUT/coll-vs-nvshmem.txt" 2>/dev/null
        tar -czf "$OUT/coll-vs-nvshmem-logs.tar.gz" -C "$(dirname "$logs")" \
            "$(basename "$logs")" 2>/dev/null
    fi
}
trap finish EXIT
[ -f "$top/.nvshmem-src/perftest/common/utils.cu" ] ||
    { note "no .nvshmem-src: run tests/gpu/prepare-nvshmem-src.sh and carry it"; exit 77; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 1 ] || { note "no GPU"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { note "no mpirun"; exit 77; }
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_VISIBLE_DEVICES=0
export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
status=0

# ------------------------------------------------------------ build
. "$top/tests/gpu/gpu-configure.sh"
gpu_configure || exit 1
(cd "$build" && make -j16 gpurma-coll-bench) >"$logs/build.log" 2>&1 ||
    { note "gpurma-coll-bench did not build (build.log)"; exit 1; }

# ------------------------------------------------------------ MPS
if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]; then
    note "MPS: the caller's daemon ($CUDA_MPS_PIPE_DIRECTORY)"
    export CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-$logs/mps-log}
else
    export CUDA_MPS_PIPE_DIRECTORY=$logs/mps-pipe CUDA_MPS_LOG_DIRECTORY=$logs/mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d || { note "could not start MPS"; exit 1; }
    own_mps=yes
fi

# ------------------------------------------------------------ NVSHMEM
pairs="allreduce:reduction_on_stream allgather:fcollect_on_stream alltoall:alltoall_on_stream
broadcast:broadcast_on_stream reduce_scatter:reducescatter_on_stream"
progs=$(for p in $pairs; do echo "${p#*:}"; done)
nvargs="-n $iters -w 5 -b $min -e $max -d int -o sum"
[ $graph = on ] && nvargs="$nvargs --cudagraph"
note "NVSHMEM: $(echo $progs), 2 PEs on GPU 0 under MPS, $nvargs"
# shellcheck disable=SC2086
sh "$top/tests/gpu/nvshmem-perftests.sh" --mps --nvshmem-only --logs "$logs/nvshmem" \
    --build "$build" --timeout 90 --args "$nvargs" --only $progs >"$logs/nvshmem.log" 2>&1
rc=$?
note "NVSHMEM perftests: rc $rc ($(grep -c PASS "$logs/nvshmem/results.txt" 2>/dev/null) of 5 ran)"
[ $rc = 0 ] || status=1

# ------------------------------------------------------------ gpurma
colls=$(for p in $pairs; do echo "${p%%:*}"; done | paste -sd, -)
note "gpurma-coll-bench --gpu: $colls, 2 ranks on GPU 0 under MPS, --graph $graph"
timeout -k 10 240 mpirun --allow-run-as-root --oversubscribe -np 2 \
    -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x CUDA_VISIBLE_DEVICES \
    -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY \
    "$build/gpurma-coll-bench" --gpu --no-nccl --graph $graph --coll "$colls" --dtype int32 \
    --op sum --min "$min" --max "$max" --iters "$iters" >"$logs/gpurma-coll-bench.log" 2>&1
rc=$?
note "gpurma-coll-bench: rc $rc"
[ $rc = 0 ] || status=1

# ------------------------------------------------------------ table
# gpurma rows: "KIND SIZE US FLOOR_US" (columns found by the header's names).
awk '/^# [a-z_]+, [0-9]+ ranks,/ { kind = $2; sub(/,$/, "", kind) }
     /^# +size / { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
     /^ +[0-9]/ && kind != "" { print kind, $1, $(col["time(us)"]), ("floor(us)" in col) ? $(col["floor(us)"]) : "-" }' \
    "$logs/gpurma-coll-bench.log" >"$logs/gpurma-rows.txt"
# NVSHMEM rows: "PROG SIZE US" from nvshmem-perftests.sh's rows.txt.
awk '$1 == "nvshmem" { split($2, a, "/"); if (match(a[2], /size__[0-9]+/))
       print a[1], substr(a[2], RSTART + 6, RLENGTH - 6), $3 }' \
    "$logs/nvshmem/rows.txt" >"$logs/nvshmem-rows.txt" 2>/dev/null
{
    echo "==================== gpurma vs NVSHMEM collectives ($(date -u +%Y-%m-%d), 2 processes on one $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) under MPS, int32 sum, CUDA graph $graph)"
    echo "  ratio = gpurma / NVSHMEM (below 1: gpurma is faster); floor = gpurma-coll-bench's floor of the same run"
    grep '^# floor' "$logs/gpurma-coll-bench.log" | sed 's/^/  /'
    for p in $pairs; do
        kind=${p%%:*} prog=${p#*:}
        echo "  $kind (gpurma) / $prog (NVSHMEM)"
        printf '    %12s %12s %12s %8s %10s\n' size "gpurma us" "NVSHMEM us" ratio "floor us"
        awk -v k="$kind" -v p="$prog" '
            FILENAME ~ /nvshmem-rows/ { if ($1 == p) nv[$2] = $3; next }
            $1 == k { n++; size[n] = $2; us[$2] = $3; fl[$2] = $4 }
            END { faster = 0; both = 0
                  for (i = 1; i <= n; i++) { s = size[i]; v = (s in nv) ? nv[s] : ""
                      r = (v != "" && v > 0) ? sprintf("%.3f", us[s] / v) : "-"
                      if (r != "-") { both++; if (us[s] < v) faster++ }
                      printf "    %12d %12.2f %12s %8s %10s\n", s, us[s], v == "" ? "-" : sprintf("%.2f", v), r, fl[s] }
                  printf "    gpurma faster at %d of %d sizes both measured\n", faster, both }' \
            "$logs/nvshmem-rows.txt" "$logs/gpurma-rows.txt"
    done
    echo "  runs: NVSHMEM $(tr '\n' ';' <"$logs/nvshmem/results.txt" 2>/dev/null)"
    echo "        gpurma-coll-bench rc $rc (log: gpurma-coll-bench.log)"
} | tee "$logs/table.txt"
exit $status
