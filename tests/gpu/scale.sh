#!/bin/bash
# scale.sh - the runs of issues 21 and 22 on a machine of several GPUs, one
# rank per GPU unless said otherwise, everything in one call:
#
#   mps         test_gpu_coll --quick 100 under CUDA MPS across the GPUs
#               (ranks of one GPU run their kernels at the same time, as on
#               separate GPUs), auto and ll16 at 2 ranks per GPU, auto at 4
#   bench       gpurma-coll-bench --gpu --graph both --coll all (alltoallv
#               with a mixture of experts' skewed counts against NCCL's
#               grouped send/recv), 1 KiB .. --max, beside NCCL on plain and
#               symmetric buffers in the same run, at every rank count
#   nccl-tests  NVIDIA's nccl-tests on NVIDIA's NCCL (-G 20, -R 0 and -R 2;
#               all_reduce, all_gather, reduce_scatter, alltoall), so that
#               the bench's NCCL figures are checked against NCCL's own tool
#
#   tests/gpu/scale.sh --build BUILD_DIR --logs LOG_DIR [--part LIST]
#       [--np "2 4"] [--max SIZE] [--iters N]
#
# --part: mps,bench,nccl-tests or all (default all). --np: rank counts of
# the bench and nccl-tests (default 2 and the number of GPUs; counts above
# it are skipped). Every run has its own limit (a hang costs minutes, not
# the call). NCCL_NVLS_ENABLE=0 and NCCL_GRAPH_MIXING_SUPPORT=0 throughout.
# Prints "test NAME PASS|FAIL|SKIP" lines (run-device.sh adds them to its
# table), then the comparison: for each rank count, collective and graph
# mode, gpurma's time, NCCL's better mode and nccl-tests' at a few sizes,
# and the issues' target lines (MET or MISSED). Exit 1 when a run failed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build= logs= parts=all nps= max=1G iters=20
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift ;;
    --logs) logs=$2; shift ;;
    --part) parts=$2; shift ;;
    --np) nps=$2; shift ;;
    --max) max=$2; shift ;;
    --iters) iters=$2; shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$build" ] && [ -n "$logs" ] || { sed -n '2,26p' "$0" >&2; exit 2; }
build=$(cd "$build" && pwd)
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
want() { [ "$parts" = all ] || case ",$parts," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -ge 2 ] || { echo "test scale SKIP(needs 2 GPUs or more; $ngpu here)"; exit 0; }
[ -n "$nps" ] || { nps=2; [ "$ngpu" -gt 2 ] && nps="2 $ngpu"; }
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 NCCL_GRAPH_MIXING_SUPPORT=0
mpi="mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE \
-x NVSHMEM_DISABLE_NVLS -x NCCL_GRAPH_MIXING_SUPPORT"
results=$logs/results.txt
: >"$results"
verdict() { # NAME RC
    case $2 in 0) v=PASS ;; 77) v=SKIP ;; 124 | 137) v="FAIL(timeout)" ;; *) v="FAIL(rc=$2)" ;; esac
    echo "test $1 $v" | tee -a "$results"
}
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "# scale.sh: $ngpu x $gpus, rank counts $nps, parts $parts, $(date -u +%FT%TZ)"

# ------------------------------------------------------------------ mps
if want mps; then
    (cd "$build" && make -j16 tests/gpu/test_gpu_coll.mp) >"$logs/build-mps.log" 2>&1
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/scale-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/scale-mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 && sleep 1 # one left by a killed run
    if nvidia-cuda-mps-control -d; then
        for run in "auto $((2 * ngpu))" "ll16 $((2 * ngpu))" "auto $((4 * ngpu))"; do
            algo=${run% *} np=${run#* }
            name=mps_np${np}_$algo
            GPURMA_COLL_ALGO=$algo timeout -k 10 200 $mpi -x CUDA_MPS_PIPE_DIRECTORY \
                -x CUDA_MPS_LOG_DIRECTORY -x GPURMA_COLL_ALGO -np "$np" \
                "$build/tests/gpu/test_gpu_coll.mp" --quick 100 >"$logs/$name.log" 2>&1
            verdict "$name" $?
        done
        echo quit | nvidia-cuda-mps-control
        sleep 1
    else
        verdict mps_start 1
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

# ---------------------------------------------------------------- bench
if want bench; then
    (cd "$build" && make -j16 gpurma-coll-bench) >"$logs/build-bench.log" 2>&1
    for np in $nps; do
        [ "$np" -le "$ngpu" ] || { echo "# bench at $np ranks skipped: $ngpu GPUs"; continue; }
        timeout -k 10 300 $mpi -np "$np" "$build/gpurma-coll-bench" --gpu --graph both \
            --coll all --min 1K --max "$max" --iters "$iters" >"$logs/collbench_np$np.log" 2>&1
        verdict "collbench_np$np" $?
    done
fi

# ----------------------------------------------------------- nccl-tests
nt=$build/nccl-tests
if want nccl-tests; then
    sh "$top/tests/gpu/build-nccl-tests.sh" "$top/.nccl-tests-src" "$nt" 200 \
        >"$logs/build-nccl-tests.log" 2>&1
    verdict nccl_tests_build $?
    if [ -x "$nt/all_reduce_perf" ]; then
        for np in $nps; do
            [ "$np" -le "$ngpu" ] || continue
            for b in all_reduce all_gather reduce_scatter alltoall; do
                for r in 0 2; do
                    name=nt_${b}_np${np}_R$r
                    timeout -k 5 90 $mpi -np "$np" "$nt/${b}_perf" -b 1K -e 256M -f 8 -g 1 \
                        -n 20 -w 5 -G 20 -R $r -c 1 >"$logs/$name.log" 2>&1
                    rc=$?
                    [ $rc = 0 ] && ! grep -q 'Out of bounds values : 0 OK' "$logs/$name.log" && rc=99
                    verdict "$name" $rc
                done
            done
        done
    fi
fi

# ---------------------------------------------------------------- table
# gpurma-coll-bench's rows: size count type redop root time algbw busbw
# #wrong nccl(us) nccl_sym ratio [floors]; nccl-tests': size count type
# redop root time algbw busbw #wrong (out of place) ...
summary() {
    np=$1 log=$logs/collbench_np$1.log
    [ -f "$log" ] || return
    echo
    echo "==== $np ranks, one per GPU ($ngpu x $gpus): time in us (busbw GB/s from 64 MiB)," \
        "ratio = gpurma / NCCL's better mode (below 1: gpurma is faster)"
    # nccl-tests' out-of-place time by collective, size and -R mode
    for f in "$logs"/nt_*_np"${np}"_R*.log; do
        [ -f "$f" ] || continue
        k=$(basename "$f" .log)
        k=${k#nt_}
        awk -v k="$k" '/^ +[0-9]+ +[0-9]+ +[a-z]/ { print k, $1, $6 }' "$f"
    done >"$logs/nt_times_np$np.txt"
    awk -v np="$np" -v ntfile="$logs/nt_times_np$np.txt" '
        FILENAME == ntfile { split($1, a, "_np"); nt[a[1] "_R" substr($1, length($1)), $2] = $3; next }
        /^# [a-z_]+, [0-9]+ ranks,/ { kind = $2; sub(/,$/, "", kind); graph = ($0 ~ /CUDA graph/) }
        /^ +[0-9]/ && NF >= 12 {
            size = $1; t = $6; bw = $8; wrong += $9
            best = ($10 > 0 && ($10 < $11 || $11 <= 0)) ? $10 : $11
            r = t / best
            if (size <= 1048576) { n[kind, graph]++; if (r <= (graph ? 0.85 : 1.0)) ok[kind, graph]++ }
            if (size >= 67108864) {
                nb[kind]++
                need = (kind == "alltoall" || kind == "alltoallv") ? 1.0 : 1.05
                if (graph && best / t >= need) okb[kind]++
                if (graph) nbg[kind]++
            }
            if (size == 1024 || size == 65536 || size == 1048576 || size == 67108864 ||
                size == 268435456 || size == 1073741824) {
                ntk = (kind == "allreduce" ? "all_reduce" : kind == "allgather" ? "all_gather" : kind)
                printf "  %-15s %-8s %11d %10.2f %10.2f %6.3f", kind, graph ? "graph" : "stream",
                       size, t, best, r
                if (size >= 67108864) printf "  busbw %7.1f / %7.1f", bw, bw * t / best
                if (graph && ((ntk "_R0", size) in nt))
                    printf "  nccl-tests R0 %.2f R2 %s", nt[ntk "_R0", size],
                           ((ntk "_R2", size) in nt) ? nt[ntk "_R2", size] : "-"
                printf "\n"
            }
        }
        END {
            printf "  #wrong over every row: %d\n", wrong
            split("allreduce allgather reduce_scatter broadcast reduce alltoall alltoallv", ks, " ")
            for (i = 1; i <= 7; i++) {
                k = ks[i]
                if (n[k, 1]) printf "  target %s (%d ranks) <= 0.85 x NCCL 1 KiB..1 MiB, graphs: %d of %d sizes %s\n",
                                    k, np, ok[k, 1], n[k, 1], ok[k, 1] == n[k, 1] ? "MET" : "MISSED"
                if (n[k, 0]) printf "  target %s (%d ranks) <= 1.0 x NCCL 1 KiB..1 MiB, no graph: %d of %d sizes %s\n",
                                    k, np, ok[k, 0], n[k, 0], ok[k, 0] == n[k, 0] ? "MET" : "MISSED"
                if (nbg[k] && k != "broadcast" && k != "reduce")
                    printf "  target %s (%d ranks) busbw >= %s x NCCL from 64 MiB: %d of %d sizes %s\n",
                           k, np, (k ~ /alltoall/) ? "1.0" : "1.05", okb[k], nbg[k],
                           okb[k] == nbg[k] ? "MET" : "MISSED"
            }
        }' "$logs/nt_times_np$np.txt" "$log"
}
{
    echo
    echo "==================== scale ($(date -u +%F), $ngpu x $gpus, NCCL $(awk '/define NCCL_(MAJOR|MINOR|PATCH)/ {printf "%s%s", sep, $3; sep="."}' /usr/include/nccl.h 2>/dev/null))"
    cat "$results"
    echo "  collective      mode            bytes     gpurma       NCCL  ratio"
    for np in $nps; do summary "$np"; done
} | tee "$logs/table.txt"
! grep -q FAIL "$results"
