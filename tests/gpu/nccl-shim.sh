#!/bin/bash
# nccl-shim.sh - libgpurma_nccl under unchanged NCCL programs, on one GPU
# shared by several ranks under CUDA MPS (/work/shared/notes/one-gpu-mps.md),
# or beside NVIDIA's NCCL where there are two GPUs or more:
#
#   1. nccl-tests (from .nccl-tests-src, tests/gpu/prepare-nccl-tests-src.sh),
#      built with MPI against the system nccl.h and run through our
#      libnccl.so.2 (LD_PRELOAD + LD_LIBRARY_PATH) at 2 and 4 ranks: every
#      binary, in and out of place (each run checks both), -G 0 and -G 5,
#      -R 0/1/2 (pairs 0:0 0:2 5:1 5:2), every type (FP8 too) and every
#      operator of the reductions (PreMulSum included); a run passes when it exits 0 and
#      reports 0 wrong values. With 2+ GPUs also -g 2 (two ranks of one
#      process in one group), the fallback NCCL loaded beside the shim, and
#      the same binaries on NVIDIA's NCCL;
#   2. PyTorch (torchrun, 2 processes, LD_PRELOAD; torch finds NCCL by
#      RPATH): tests/gpu/nccl_torch.py ops (all_reduce,
#      all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single,
#      send/recv, new_group, a graph-captured all_reduce), and a killed rank
#      that torch's watchdog must report;
#   3. the benchmark: the shim's per-call cost (tests/nccl/shim_overhead,
#      target <= 0.3 us) and nccl-tests' all_reduce through the shim beside
#      gpurma-coll-bench (one GPU) or beside NVIDIA's NCCL (two GPUs), in
#      the same run, as a table.
#
#   tests/gpu/nccl-shim.sh --build BUILD_DIR --logs LOG_DIR [--quick]
#       [--python PY] [--only nccl-tests|bench|torch] [--np "2 4"]
#       [--budget SECONDS] [--jobs N]
#
# The whole script stays within --budget seconds (default 330, building
# nccl-tests included): runs that would start too late are reported as
# SKIP(time), and each run's limit is cut to what is left. nccl-tests runs
# go --jobs at a time (default 3: with 6, the MPS server refused new
# clients part way on 2026-11-26; runs of 4 ranks or more on one GPU go
# alone; several jobs share the GPU under MPS as
# their ranks do), beside the torch runs; the benchmark runs alone, last.
# Types and operators run at the smallest rank count. --quick: -G/-R pairs
# 0:0 and 5:2 only.
#
# Prints one "test NAME PASS|FAIL(..)|SKIP(..) [detail]" line per check
# (run-device.sh adds them to its table), then the benchmark table. Full
# logs under LOG_DIR. Exit status 1 when a check failed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build= logs= quick=no only=all nps="2 4" budget=330 jobs=3
python=/opt/torch/.venv/bin/python
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift ;;
    --logs) logs=$2; shift ;;
    --quick) quick=yes ;;
    --python) python=$2; shift ;;
    --only) only=$2; shift ;;
    --np) nps=$2; shift ;;
    --budget) budget=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h | --help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "nccl-shim.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$build" ] && [ -n "$logs" ] || { sed -n '2,38p' "$0" >&2; exit 2; }
build=$(cd "$build" && pwd)
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
rm -rf "$logs/verdicts"
mkdir "$logs/verdicts"
t0=$SECONDS
want() { [ "$only" = all ] || [ "$only" = "$1" ]; }
# Seconds left of the budget, and a run's limit cut to them (0: too late).
left() { echo $((budget - (SECONDS - t0))); }
cut_limit() {
    l=$(($(left) - 5))
    if [ "$l" -lt 15 ]; then echo 0; elif [ "$1" -lt "$l" ]; then echo "$1"; else echo "$l"; fi
}
seq_no=0
# record NAME RC [detail]: a verdict file, printed in order at the end.
record() {
    case $2 in
    0) v=PASS ;;
    77) v=SKIP ;;
    time) v="SKIP(time)" ;;
    124 | 137) v="FAIL(timeout)" ;;
    *) v="FAIL(rc=$2)" ;;
    esac
    echo "test $1 $v${3:+ $3}" >"$logs/verdicts/$1"
}
order() { seq_no=$((seq_no + 1)); printf '%04d' $seq_no >"$logs/verdicts/.order.$1"; }

shim=$build/compat/nccl/.libs/libnccl.so.2
libpath=$build/compat/nccl/.libs:$build/.libs
(cd "$build" && make -j16 libgpurma_nccl.la compat/nccl/libnccl.la tests/nccl/shim_overhead \
    gpurma-coll-bench) >"$logs/build-shim.log" 2>&1
test -f "$shim" || { echo "test nccl_shim_build FAIL(no $shim: build-shim.log)"; exit 1; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -ge 1 ] || { echo "test nccl_shim SKIP(no GPU)"; exit 0; }

# ------------------------------------------------------------------ MPS
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
mps=no
if [ "$ngpu" -lt 2 ] && command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    # one left by a run that was killed would hold the pipe: end it first
    echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 && sleep 1
    nvidia-cuda-mps-control -d && mps=yes
fi
bg_pids=
stop_all() {
    for p in $bg_pids; do kill "$p" 2>/dev/null; done
    [ $mps = yes ] && echo quit | nvidia-cuda-mps-control
    mps=no
    # the server's log names the clients that faulted
    cp -r "$CUDA_MPS_LOG_DIRECTORY" "$logs/mps-log" 2>/dev/null
}
trap stop_all EXIT
# With several GPUs each rank takes its own (nccl-tests picks GPU local
# rank + i, without wrapping): more ranks than GPUs run only on one GPU.
if [ "$ngpu" -ge 2 ]; then
    kept=
    for np in $nps; do
        if [ "$np" -le "$ngpu" ]; then kept="$kept $np"; else echo "# $np ranks skipped: $ngpu GPUs"; fi
    done
    nps=$kept
fi
echo "# $ngpu GPU(s), MPS: $mps, rank counts:$nps, budget ${budget}s, $jobs jobs at a time"
# NVLink multicast stays off whatever runs (NCCL, torch, gpurma).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mpi="mpirun --allow-run-as-root --oversubscribe --bind-to none -x CUDA_MPS_PIPE_DIRECTORY \
-x CUDA_MPS_LOG_DIRECTORY -x NCCL_NVLS_ENABLE -x GPURMA_TIMEOUT_MS=60000 -x GPURMA_UID_ADDR=127.0.0.1"
# Every rank on GPU 0 with one GPU (nccl-tests would pick local rank + i).
one_gpu_env=
[ "$ngpu" -lt 2 ] && one_gpu_env="-x NCCL_TESTS_DEVICE=0"
through_shim="-x LD_PRELOAD=$shim -x LD_LIBRARY_PATH=$libpath"

# --------------------------------------------------------------- torch
# Started first, in the background: it needs no nccl-tests and its imports
# take a while. Its verdicts are read after the nccl-tests runs.
torch_ops() {
    torchrun=$(dirname "$python")/torchrun
    port=$((29500 + $$ % 1000))
    t=$(cut_limit 150)
    [ "$t" = 0 ] && { record torch_ops time; return; }
    env LD_PRELOAD="$shim" LD_LIBRARY_PATH="$libpath" GPURMA_TIMEOUT_MS=60000 \
        GPURMA_UID_ADDR=127.0.0.1 GPURMA_NCCL_DEBUG=1 PYTHONUNBUFFERED=1 timeout -k 10 "$t" \
        "$torchrun" --nproc_per_node 2 --master_addr 127.0.0.1 --master_port $port \
        "$top/tests/gpu/nccl_torch.py" ops >"$logs/torch_ops.log" 2>&1
    rc=$?
    # the shim says so on each communicator: torch ran on it, not on NVIDIA's
    [ $rc = 0 ] && ! grep -q 'gpurma-nccl: rank 0 of 2: communicator on GPU' \
        "$logs/torch_ops.log" && rc=97
    record torch_ops $rc "$(grep -m1 '^PASS' "$logs/torch_ops.log" | cut -c1-120)"
}
# A killed rank: both launched by hand (torchrun would end rank 0 itself as
# soon as rank 1 died, before torch's watchdog could say anything). Run
# alone, after the nccl-tests runs: under MPS a survivor whose kernel traps
# ends every client of the GPU (2026-11-28: it took 20 runs down with it).
torch_kill() {
    port=$((29502 + $$ % 1000))
    t=$(cut_limit 120)
    [ "$t" = 0 ] && { record torch_killed_rank time; return; }
    for r in 0 1; do
        env LD_PRELOAD="$shim" LD_LIBRARY_PATH="$libpath" GPURMA_TIMEOUT_MS=60000 \
            GPURMA_UID_ADDR=127.0.0.1 PYTHONUNBUFFERED=1 \
            RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            timeout -k 10 "$t" "$python" "$top/tests/gpu/nccl_torch.py" kill \
            >"$logs/torch_kill.rank$r.log" 2>&1 &
    done
    wait
    grep -q -i 'WATCHDOG-REPORTED\|watchdog.*\(error\|timeout\|exception\|abort\)\|ncclRemoteError\|remote process exited' \
        "$logs/torch_kill.rank0.log"
    record torch_killed_rank $? "$(grep -m1 -i 'WATCHDOG-REPORTED\|watchdog' \
        "$logs/torch_kill.rank0.log" | cut -c1-140)"
}
torch_real_nccl() { # the same ops on NVIDIA's NCCL: one GPU per rank
    torchrun=$(dirname "$python")/torchrun
    t=$(cut_limit 120)
    [ "$t" = 0 ] && { record torch_ops_real_nccl time; return; }
    PYTHONUNBUFFERED=1 timeout -k 10 "$t" "$torchrun" --nproc_per_node 2 \
        --master_addr 127.0.0.1 --master_port $((28500 + $$ % 1000)) \
        "$top/tests/gpu/nccl_torch.py" ops >"$logs/torch_ops_real_nccl.log" 2>&1
    record torch_ops_real_nccl $? "$(grep -m1 '^PASS' "$logs/torch_ops_real_nccl.log" | cut -c1-120)"
}
torch_pid=
if want torch; then
    order torch_imports
    if ! "$python" -c 'import torch, torch.distributed' >/dev/null 2>&1; then
        record torch_imports 77 "(no torch at $python)"
    else
        order torch_ops; order torch_killed_rank
        [ "$ngpu" -ge 2 ] && order torch_ops_real_nccl
        # What torch imports from libnccl.so.2, against what the shim exports.
        tdir=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
        for f in "$tdir"/*.so*; do nm -D "$f" 2>/dev/null; done |
            awk '$1 == "U" && $2 ~ /^nccl/ {print $2}' | sort -u >"$logs/torch-imports.txt"
        nm -D --defined-only "$shim" | awk '{print $3}' | sort -u >"$logs/shim-exports.txt"
        missing=$(comm -23 "$logs/torch-imports.txt" "$logs/shim-exports.txt" | tr '\n' ' ')
        test -z "$missing"
        record torch_imports $? "$(wc -l <"$logs/torch-imports.txt") nccl symbols${missing:+; missing: $missing}"
        { torch_ops; [ "$ngpu" -ge 2 ] && torch_real_nccl; } &
        torch_pid=$!
        bg_pids="$bg_pids $torch_pid"
    fi
fi

# ----------------------------------------------------------- nccl-tests
nt_src=$top/.nccl-tests-src
nt=$build/nccl-tests
if want nccl-tests || want bench; then
    order nccl_tests_build; order nccl_tests_imports
    if [ ! -f "$nt_src/src/all_reduce.cu" ]; then
        record nccl_tests_build 77 "(no .nccl-tests-src: tests/gpu/prepare-nccl-tests-src.sh)"
    elif [ -x "$nt/all_reduce_perf" ] && [ "$nt/all_reduce_perf" -nt "$nt_src/src/common.cu" ]; then
        record nccl_tests_build 0 "(built before)"
    else
        t=$(cut_limit 200) began=$SECONDS
        [ "$t" = 0 ] && t=1 # out of time already: a build that fails at once
        sh "$top/tests/gpu/build-nccl-tests.sh" "$nt_src" "$nt" "$t" >"$logs/build-nccl-tests.log" 2>&1
        record nccl_tests_build $? "($((SECONDS - began)) s, against $(grep -l NCCL_MAJOR /usr/include/nccl.h /usr/local/cuda/include/nccl.h 2>/dev/null | head -1))"
    fi
    if [ -x "$nt/all_reduce_perf" ]; then
        # What nccl-tests imports, against what the shim exports. Weak
        # imports (the device API, only with -D) are listed apart.
        for b in "$nt"/*_perf; do
            nm -D "$b" 2>/dev/null | awk '$1 == "U" && $2 ~ /^nccl/ {print $2}'
        done | sort -u >"$logs/nccl-tests-imports.txt"
        for b in "$nt"/*_perf; do
            nm -D "$b" 2>/dev/null | awk '$1 == "w" && $2 ~ /^nccl/ {print $2}'
        done | sort -u >"$logs/nccl-tests-weak-imports.txt"
        nm -D --defined-only "$shim" | awk '{print $3}' | sort -u >"$logs/shim-exports.txt"
        missing=$(comm -23 "$logs/nccl-tests-imports.txt" "$logs/shim-exports.txt" | tr '\n' ' ')
        weak=$(comm -23 "$logs/nccl-tests-weak-imports.txt" "$logs/shim-exports.txt" | tr '\n' ' ')
        test -z "$missing"
        record nccl_tests_imports $? "$(wc -l <"$logs/nccl-tests-imports.txt") nccl symbols${missing:+; missing: $missing}${weak:+; weak, not exported: $weak}"
    else
        record nccl_tests_imports 77 "(no nccl-tests binaries)"
    fi
fi

# nt_run NAME NP BIN ARGS...: passes with exit 0, 0 wrong values, and the
# shim's communicators (not NVIDIA's) when LD_PRELOAD names it.
nt_run() {
    name=$1 np=$2 bin=$3
    shift 3
    t=$(cut_limit 90)
    [ "$t" = 0 ] && { record "$name" time; return; }
    log=$logs/$name.log
    timeout -k 5 "$t" $mpi $one_gpu_env $env_extra -np "$np" "$nt/$bin" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc = 0 ] && ! grep -q 'Out of bounds values : 0 OK' "$log"; then rc=99; fi
    if [ $rc = 0 ] && grep -q 'NCCL failure\|Test NCCL failure\|Test failure' "$log"; then rc=98; fi
    record "$name" $rc "$(grep -m1 'Avg bus bandwidth' "$log" | sed 's/.*: */avg busbw /')"
}
# launch NAME NP BIN ARGS...: nt_run in the background, --jobs at a time;
# on one GPU, runs of 4 ranks or more go alone (2026-11-27, one H100 under
# MPS: with 3 such runs at once beside torch every one of them failed, some
# with errors, the rest by timeout; one at a time, on an H200, all passed).
# (Until 2026-11-28 the torch runs' allowance undid "alone": runs of 4
# ranks went 3 at a time.)
launch() {
    order "$1"
    busy=$jobs
    [ "$ngpu" -lt 2 ] && [ "$2" -ge 4 ] && busy=1
    [ -n "$torch_pid" ] && busy=$((busy + 1)) # the torch runs, beside
    while [ "$(jobs -rp | wc -l)" -ge $busy ]; do wait -n; done
    if [ $busy -le 2 ] && [ "$ngpu" -lt 2 ] && [ "$2" -ge 4 ]; then
        nt_run "$@" # alone: nothing starts beside it either
    else
        nt_run "$@" &
    fi
}

if want nccl-tests && [ -x "$nt/all_reduce_perf" ]; then
    # The shim is what runs: it says so with GPURMA_NCCL_DEBUG.
    order nt_through_shim
    t=$(cut_limit 60) # never 0 here: timeout 0 would mean no limit
    if [ "$t" = 0 ]; then
        record nt_through_shim time
    else
        timeout -k 5 "$t" $mpi $one_gpu_env $through_shim -x GPURMA_NCCL_DEBUG=1 -np 2 \
            "$nt/all_reduce_perf" -b 8 -e 1K -g 1 >"$logs/nt_identity.log" 2>&1
        grep -q 'gpurma-nccl: rank 0 of 2: communicator on GPU' "$logs/nt_identity.log"
        record nt_through_shim $? "$(grep -m1 'communicator on' "$logs/nt_identity.log")"
    fi
    bins="all_reduce all_gather reduce_scatter broadcast reduce alltoall alltoallv gather scatter sendrecv hypercube"
    # types and operators at the smallest rank count (the collectives
    # themselves run at every count above)
    modes="0:0 0:2 5:1 5:2" typed_nps=${nps%% *}
    [ $quick = yes ] && modes="0:0 5:2"
    env_extra=$through_shim
    for np in $nps; do
        for b in $bins; do
            for m in $modes; do
                G=${m%:*} R=${m#*:}
                launch "nt_${b}_np${np}_G${G}_R${R}" "$np" "${b}_perf" \
                    -b 8 -e 8M -f 8 -g 1 -c 1 -n 5 -w 2 -G $G -R $R
            done
        done
    done
    # Every type and every operator, PreMulSum too (FP8: reduced as float
    # by the shim; a type per run, so that a failure names it).
    types="int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2"
    for np in $typed_nps; do
        for b in all_reduce reduce_scatter reduce; do
            for d in $types; do
                launch "nt_${b}_np${np}_${d}_allops" "$np" "${b}_perf" \
                    -b 8 -e 256K -f 32 -g 1 -c 1 -n 2 -w 1 -d $d -o all
            done
        done
    done
    wait_nt() { while [ "$(jobs -rp | grep -vc "^${torch_pid:-x}\$")" -gt 0 ]; do wait -n; done; }
    wait_nt
    if [ "$ngpu" -ge 2 ]; then
        # nccl-tests -g 2: two ranks of one process, one group, two
        # communicators (the shim runs each on its own thread).
        launch nt_all_reduce_g2 1 all_reduce_perf -b 8 -e 8M -f 8 -g 2 -c 1 -n 5 -w 2
        launch nt_sendrecv_g2 1 sendrecv_perf -b 8 -e 8M -f 8 -g 2 -c 1 -n 5 -w 2
        # The fallback NCCL (one GPU per rank): loaded in its own namespace,
        # its communicator made at init, beside the shim's.
        real_nccl=$(ldconfig -p | awk '/libnccl.so.2 / {print $NF; exit}')
        [ -n "$real_nccl" ] || real_nccl=$("$python" -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
        env_extra="$through_shim -x GPURMA_NCCL_DEBUG=1 -x GPURMA_NCCL_FALLBACK=$real_nccl"
        wait_nt
        order nt_all_reduce_np2_fallback
        order nt_fallback_loaded
        nt_run nt_all_reduce_np2_fallback 2 all_reduce_perf -b 8 -e 256K -f 32 -g 1 -c 1 -n 2 -w 1
        grep -q 'fallback NCCL loaded' "$logs/nt_all_reduce_np2_fallback.log" &&
            grep -q 'fallback NCCL communicator made' "$logs/nt_all_reduce_np2_fallback.log"
        record nt_fallback_loaded $? "($real_nccl)"
        # The same binaries on NVIDIA's NCCL, beside the shim's rows above.
        env_extra=
        for b in $bins; do
            launch "nt_${b}_np2_real_nccl" 2 "${b}_perf" -b 8 -e 8M -f 8 -g 1 -c 1 -n 5 -w 2
        done
        wait_nt
    else
        # What the shim adds: NVIDIA's NCCL 2.28 refuses two ranks on one GPU.
        t=$(cut_limit 60)
        if [ "$t" != 0 ]; then
            timeout -k 5 "$t" $mpi $one_gpu_env -np 2 "$nt/all_reduce_perf" -b 8 -e 1K -g 1 \
                >"$logs/nt_real_nccl_one_gpu.log" 2>&1
            echo "# NVIDIA NCCL, 2 ranks on one GPU (expected to refuse): rc $?," \
                "$(grep -m1 -o 'Duplicate GPU[^.]*' "$logs/nt_real_nccl_one_gpu.log")"
        fi
    fi
fi

# torch shares the GPU with the runs above, not with the benchmark
[ -n "$torch_pid" ] && wait "$torch_pid"
want torch && [ -n "$torch_pid" ] && torch_kill

# ------------------------------------------------------------ benchmark
# bench_table SHIM_LOG OTHER_LOG OTHER_NAME: all_reduce time per size,
# out of place, nccl-tests through the shim beside the other's rows.
bench_table() {
    awk -v other="$3" '
        FNR == 1 { file++ }
        file == 1 && /^ +[0-9]+ +[0-9]+ +float/ { shim[$1] = $6 }
        file == 2 && /^# +size/ { for (i = 2; i <= NF; i++) if ($i ~ /^time/) tcol = i - 1 }
        file == 2 && /^ +[0-9]+ +[0-9]+ +float/ && other == "nccl" { o[$1] = $6 }
        file == 2 && /^ +[0-9]+ +[0-9]+ +float/ && other != "nccl" && tcol { o[$1] = $tcol }
        END {
            printf "  %12s %12s %12s %10s\n", "bytes", "shim(us)", other "(us)", "shim-" other
            n = 0
            for (s in shim) if (s in o) sizes[++n] = s + 0
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (sizes[j] < sizes[i]) { x = sizes[i]; sizes[i] = sizes[j]; sizes[j] = x }
            for (i = 1; i <= n; i++)
                printf "  %12d %12.2f %12.2f %10.2f\n", sizes[i], shim[sizes[i]], o[sizes[i]],
                       shim[sizes[i]] - o[sizes[i]]
        }' "$1" "$2"
}
if want bench && [ -x "$nt/all_reduce_perf" ]; then
    np=2
    for g in 0 10; do
        order "bench_nt_shim_G$g"
        t=$(cut_limit 90)
        if [ "$t" = 0 ]; then record "bench_nt_shim_G$g" time; continue; fi
        timeout -k 5 "$t" $mpi $one_gpu_env $through_shim -np $np "$nt/all_reduce_perf" \
            -b 8 -e 64M -f 2 -g 1 -n 20 -w 5 -G $g >"$logs/bench_nt_shim_G$g.log" 2>&1
        record "bench_nt_shim_G$g" $?
        if [ "$ngpu" -ge 2 ]; then # NVIDIA's NCCL, same machine, same run
            order "bench_nt_nccl_G$g"
            t=$(cut_limit 90)
            if [ "$t" = 0 ]; then record "bench_nt_nccl_G$g" time; continue; fi
            timeout -k 5 "$t" $mpi -np $np "$nt/all_reduce_perf" -b 8 -e 64M -f 2 -g 1 -n 20 \
                -w 5 -G $g >"$logs/bench_nt_nccl_G$g.log" 2>&1
            record "bench_nt_nccl_G$g" $?
        else # gpurma-coll-bench, same machine, same run
            order "bench_coll_G$g"
            t=$(cut_limit 90)
            if [ "$t" = 0 ]; then record "bench_coll_G$g" time; continue; fi
            graph=off
            [ $g != 0 ] && graph=on
            timeout -k 5 "$t" $mpi $one_gpu_env -np $np "$build/gpurma-coll-bench" --gpu \
                --graph $graph --coll allreduce --min 8 --max 64m --no-nccl --no-floors \
                >"$logs/bench_coll_G$g.log" 2>&1
            record "bench_coll_G$g" $?
        fi
    done
    order bench_overhead
    t=$(cut_limit 60)
    if [ "$t" = 0 ]; then
        record bench_overhead time
    else
        timeout -k 5 "$t" $mpi $one_gpu_env -x LD_LIBRARY_PATH=$libpath -np $np \
            "$build/tests/nccl/shim_overhead" >"$logs/bench_overhead.log" 2>&1
        rc=$?
        ov=$(awk '/^overhead_us/ {print $2}' "$logs/bench_overhead.log")
        target=
        [ -n "$ov" ] && target=$(awk -v o="$ov" 'BEGIN { print (o <= 0.3 ? "MET" : "MISSED") }')
        record bench_overhead $rc "$(grep -m1 '^overhead' "$logs/bench_overhead.log")${target:+ (target <= 0.3 us: $target)}"
    fi
fi

# ---------------------------------------------------------------- table
wait
for f in "$logs"/verdicts/.order.*; do
    [ -f "$f" ] || continue
    echo "$(cat "$f") ${f##*/.order.}"
done | sort | while read -r _ name; do
    if [ -f "$logs/verdicts/$name" ]; then cat "$logs/verdicts/$name"; else echo "test $name FAIL(no verdict)"; fi
done >"$logs/results.txt"
cat "$logs/results.txt"
for g in 0 10; do
    want bench || break
    other=coll
    [ "$ngpu" -ge 2 ] && other=nccl
    s=$logs/bench_nt_shim_G$g.log o=$logs/bench_nt_${other}_G$g.log
    [ "$other" = coll ] && o=$logs/bench_coll_G$g.log
    [ -f "$s" ] && [ -f "$o" ] || continue
    echo "# all_reduce float sum, 2 ranks, nccl-tests -G $g through the shim beside" \
        "$([ $other = coll ] && echo "gpurma-coll-bench --graph $([ $g = 0 ] && echo off || echo on)" || echo "NVIDIA's NCCL") (same run, $ngpu GPU(s))"
    bench_table "$s" "$o" "$other"
done | tee "$logs/bench-table.txt"
pass=$(grep -c ' PASS' "$logs/results.txt") fail=$(grep -c ' FAIL' "$logs/results.txt")
skip=$(grep -c ' SKIP' "$logs/results.txt")
echo "# nccl-shim.sh: $pass passed, $fail failed, $skip skipped in $((SECONDS - t0)) s"
stop_all
trap - EXIT
[ "$fail" = 0 ]
