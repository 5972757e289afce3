#!/bin/sh
# nccl-shim.sh - libgpurma_nccl under unchanged NCCL programs, on one GPU
# shared by several ranks under MPS (see /work/shared/notes/one-gpu-mps.md),
# or beside NVIDIA's NCCL where there are two GPUs:
#
#   1. nccl-tests (from .nccl-tests-src, tests/gpu/prepare-nccl-tests-src.sh),
#      built with MPI against the system nccl.h and run through our
#      libnccl.so.2 (LD_PRELOAD + LD_LIBRARY_PATH) with 2 and 4 ranks: every
#      binary, in and out of place (each run checks both), -G 0 and -G 5,
#      -R 0/1/2; a run passes when it exits 0 and reports 0 wrong values;
#   2. the shim's per-call cost (tests/nccl/shim_overhead) and all_reduce
#      through the shim beside gpurma-coll-bench (and, with 2 GPUs, beside
#      NVIDIA's NCCL in the same run);
#   3. PyTorch (torchrun, 2 processes, LD_PRELOAD): tests/gpu/nccl_torch.py
#      ops, and a killed rank that torch's watchdog must report.
#
#   tests/gpu/nccl-shim.sh --build BUILD_DIR --logs LOG_DIR [--quick]
#                          [--python PY] [--only nccl-tests|bench|torch] [--np "2 4"]
#
# --quick: nccl-tests with (-G 0 -R 0) and (-G 5 -R 2) only, every type and
# operator at 2 ranks only (about 60 runs, a few minutes); without it every
# -G x -R pair (about 200 runs: split them with --np 2 and --np 4 so that
# each call stays within 10 minutes).
#
# Prints one "test NAME PASS|FAIL|SKIP" line per check (run-device.sh adds
# them to its table). Exit status 1 when one failed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build= logs= quick=no only=all nps="2 4"
python=/opt/torch/.venv/bin/python
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift ;;
    --logs) logs=$2; shift ;;
    --quick) quick=yes ;;
    --python) python=$2; shift ;;
    --only) only=$2; shift ;;
    --np) nps=$2; shift ;;
    -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "nccl-shim.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$build" ] && [ -n "$logs" ] || { sed -n '2,28p' "$0" >&2; exit 2; }
mkdir -p "$logs"
shim=$build/compat/nccl/.libs/libnccl.so.2
libpath=$build/compat/nccl/.libs:$build/.libs
status=0
verdict() { # NAME RC [detail]
    case $2 in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$2)"; status=1 ;; esac
    echo "test $1 $v${3:+ $3}"
}
(cd "$build" && make -j16 libgpurma_nccl.la compat/nccl/libnccl.la tests/nccl/shim_overhead \
    gpurma-coll-bench) >"$logs/build-shim.log" 2>&1
test -f "$shim" || { echo "test nccl_shim_build FAIL(no $shim)"; exit 1; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')

# ------------------------------------------------------------------ MPS
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
mps=no
if [ "$ngpu" -lt 2 ] && command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    # one left by a run that was killed would hold the pipe: end it first
    echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 && sleep 1
    nvidia-cuda-mps-control -d && mps=yes
fi
stop_mps() { [ $mps = yes ] && echo quit | nvidia-cuda-mps-control; mps=no; }
trap stop_mps EXIT
# With several GPUs each rank takes its own (nccl-tests picks GPU local
# rank + i, without wrapping): more ranks than GPUs run only on one GPU.
if [ "$ngpu" -ge 2 ]; then
    kept=
    for np in $nps; do
        if [ "$np" -le "$ngpu" ]; then kept="$kept $np"; else echo "# $np ranks skipped: $ngpu GPUs"; fi
    done
    nps=$kept
fi
echo "# $ngpu GPU(s), MPS: $mps, rank counts:$nps"
export NCCL_NVLS_ENABLE=0
mpi="mpirun --allow-run-as-root --oversubscribe --bind-to none -x CUDA_MPS_PIPE_DIRECTORY \
-x CUDA_MPS_LOG_DIRECTORY -x NCCL_NVLS_ENABLE -x GPURMA_TIMEOUT_MS=60000 -x GPURMA_UID_ADDR=127.0.0.1"
# Every rank on GPU 0 with one GPU (nccl-tests would pick local rank + i).
one_gpu_env=
[ "$ngpu" -lt 2 ] && one_gpu_env="-x NCCL_TESTS_DEVICE=0"
through_shim="-x LD_PRELOAD=$shim -x LD_LIBRARY_PATH=$libpath"

# ----------------------------------------------------------- nccl-tests
nt_src=$top/.nccl-tests-src
nt=$build/nccl-tests
if [ $only = all ] || [ $only = nccl-tests ] || [ $only = bench ]; then
    if [ ! -f "$nt_src/src/all_reduce.cu" ]; then
        echo "test nccl_tests_build SKIP(no .nccl-tests-src: tests/gpu/prepare-nccl-tests-src.sh)"
    else
        inc=$(mpicc --showme:incdirs 2>/dev/null | cut -d' ' -f1)
        (cd "$nt_src" && make -j16 MPI=1 MPI_HOME="${inc%/include}" BUILDDIR="$nt" \
            NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90") >"$logs/build-nccl-tests.log" 2>&1
        verdict nccl_tests_build $?
        for b in "$nt"/*_perf; do
            nm -D "$b" 2>/dev/null | awk '$1 == "U" && $2 ~ /^nccl/ {print $2}'
        done | sort -u >"$logs/nccl-tests-imports.txt"
        nm -D --defined-only "$shim" | awk '{print $3}' | sort -u >"$logs/shim-exports.txt"
        missing=$(comm -23 "$logs/nccl-tests-imports.txt" "$logs/shim-exports.txt" | tr '\n' ' ')
        test -z "$missing"
        verdict nccl_tests_imports $? "$(wc -l <"$logs/nccl-tests-imports.txt") nccl symbols${missing:+; missing: $missing}"
    fi
fi

# nt_run NAME NP BIN ARGS...: passes with exit 0 and 0 wrong values.
nt_run() {
    name=$1 np=$2 bin=$3
    shift 3
    log=$logs/$name.log
    timeout -k 10 300 $mpi $one_gpu_env $through_shim -np "$np" "$nt/$bin" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc = 0 ] && ! grep -q 'Out of bounds values : 0 OK' "$log"; then rc=99; fi
    if [ $rc = 0 ] && grep -q 'gpurma-nccl.*invalid\|NCCL failure\|Test NCCL failure' "$log"; then rc=98; fi
    verdict "$name" $rc "$(grep -m1 'Avg bus bandwidth' "$log" | sed 's/.*: *//;s/^/avg busbw /')"
}

if { [ $only = all ] || [ $only = nccl-tests ]; } && [ -x "$nt/all_reduce_perf" ]; then
    # The shim is what runs: it says so with GPURMA_NCCL_DEBUG.
    timeout -k 10 120 $mpi $one_gpu_env $through_shim -x GPURMA_NCCL_DEBUG=1 -np 2 \
        "$nt/all_reduce_perf" -b 8 -e 1K -g 1 >"$logs/nt_identity.log" 2>&1
    grep -q 'gpurma-nccl: rank 0 of 2: communicator on GPU' "$logs/nt_identity.log"
    verdict nt_through_shim $? "$(grep -m1 'communicator on' "$logs/nt_identity.log")"
    bins="all_reduce all_gather reduce_scatter broadcast reduce alltoall alltoallv gather scatter sendrecv hypercube"
    modes="0:0 0:1 0:2 5:0 5:1 5:2" typed_nps=$nps typed_colls="all_reduce reduce_scatter reduce"
    [ $quick = yes ] && modes="0:0 5:2" typed_nps=2 typed_colls=all_reduce
    for np in $nps; do
        for b in $bins; do
            for m in $modes; do
                G=${m%:*} R=${m#*:}
                nt_run "nt_${b}_np${np}_G${G}_R${R}" "$np" "${b}_perf" \
                    -b 8 -e 8M -f 8 -g 1 -c 1 -n 5 -w 2 -G $G -R $R
            done
        done
    done
    # every type and operator of the reductions (PreMulSum included)
    for np in $typed_nps; do
        case " $nps " in *" $np "*) ;; *) continue ;; esac
        for b in $typed_colls; do
            for d in int8 uint8 int32 uint32 int64 uint64 half float double bfloat16; do
                nt_run "nt_${b}_np${np}_${d}_allops" "$np" "${b}_perf" \
                    -b 8 -e 256K -f 32 -g 1 -c 1 -n 2 -w 1 -d $d -o all
            done
        done
    done
    if [ "$ngpu" -lt 2 ]; then
        # What the shim adds: NVIDIA's NCCL 2.28 refuses two ranks on one GPU.
        timeout -k 10 120 $mpi $one_gpu_env -np 2 "$nt/all_reduce_perf" -b 8 -e 1K -g 1 \
            >"$logs/nt_real_nccl_one_gpu.log" 2>&1
        echo "# NVIDIA NCCL, 2 ranks on one GPU (expected to refuse): rc $?," \
            "$(grep -m1 -o 'Duplicate GPU[^.]*' "$logs/nt_real_nccl_one_gpu.log")"
    fi
fi

# ------------------------------------------------------------ benchmark
if { [ $only = all ] || [ $only = bench ]; } && [ -x "$nt/all_reduce_perf" ]; then
    for np in $nps; do
        timeout -k 10 300 $mpi $one_gpu_env $through_shim -np $np "$nt/all_reduce_perf" \
            -b 8 -e 256M -f 4 -g 1 -n 20 -w 5 -G 0 >"$logs/bench_nt_shim_np$np.log" 2>&1
        verdict "bench_nt_shim_np$np" $?
        timeout -k 10 300 $mpi $one_gpu_env $through_shim -np $np "$nt/all_reduce_perf" \
            -b 8 -e 256M -f 4 -g 1 -n 20 -w 5 -G 10 >"$logs/bench_nt_shim_graph_np$np.log" 2>&1
        verdict "bench_nt_shim_graph_np$np" $?
        timeout -k 10 300 $mpi -np $np "$build/gpurma-coll-bench" --coll allreduce --min 8 \
            --max 256m --no-nccl >"$logs/bench_coll_np$np.log" 2>&1
        verdict "bench_coll_np$np" $?
        timeout -k 10 120 $mpi -x LD_LIBRARY_PATH=$libpath -np $np \
            "$build/tests/nccl/shim_overhead" >"$logs/bench_overhead_np$np.log" 2>&1
        verdict "bench_overhead_np$np" $? "$(grep -m1 '^overhead' "$logs/bench_overhead_np$np.log")"
        if [ "$ngpu" -ge 2 ] && [ $np = 2 ]; then # beside NVIDIA's NCCL, same machine, same run
            timeout -k 10 300 $mpi -np 2 "$nt/all_reduce_perf" -b 8 -e 256M -f 4 -g 1 -n 20 \
                -w 5 -G 0 >"$logs/bench_nt_nccl_np2.log" 2>&1
            verdict bench_nt_nccl_np2 $?
        fi
    done
fi

# --------------------------------------------------------------- torch
if [ $only = all ] || [ $only = torch ]; then
    if ! "$python" -c 'import torch, torch.distributed' >/dev/null 2>&1; then
        echo "test torch_ops SKIP(no torch at $python)"
    else
        # What torch imports from libnccl.so.2, against what the shim exports.
        tlib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))')
        nm -D "$tlib" 2>/dev/null | awk '$1 == "U" && $2 ~ /^nccl/ {print $2}' | sort -u \
            >"$logs/torch-imports.txt"
        nm -D --defined-only "$shim" | awk '{print $3}' | sort -u >"$logs/shim-exports.txt"
        missing=$(comm -23 "$logs/torch-imports.txt" "$logs/shim-exports.txt" | tr '\n' ' ')
        test -z "$missing"
        verdict torch_imports $? "$(wc -l <"$logs/torch-imports.txt") nccl symbols${missing:+; missing: $missing}"
        torchrun=$(dirname "$python")/torchrun
        port=$((29500 + $$ % 1000))
        env LD_PRELOAD="$shim" LD_LIBRARY_PATH="$libpath" GPURMA_TIMEOUT_MS=60000 \
            GPURMA_NCCL_DEBUG=1 timeout -k 10 300 "$torchrun" --nproc_per_node 2 \
            --master_port $port "$top/tests/gpu/nccl_torch.py" ops >"$logs/torch_ops.log" 2>&1
        rc=$?
        [ $rc = 0 ] && ! grep -q 'gpurma-nccl: rank 0 of 2: communicator on GPU' \
            "$logs/torch_ops.log" && rc=97 # torch did not run on the shim
        verdict torch_ops $rc "$(grep -m1 '^PASS' "$logs/torch_ops.log")"
        # A killed rank: launched by hand (torchrun would end rank 0 itself).
        port=$((port + 1))
        for r in 0 1; do
            env LD_PRELOAD="$shim" LD_LIBRARY_PATH="$libpath" GPURMA_TIMEOUT_MS=60000 \
                RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                timeout -k 10 150 "$python" "$top/tests/gpu/nccl_torch.py" kill \
                >"$logs/torch_kill.rank$r.log" 2>&1 &
        done
        wait
        grep -q -i 'WATCHDOG-REPORTED\|watchdog.*\(error\|timeout\|exception\)\|ncclRemoteError\|remote process exited' \
            "$logs/torch_kill.rank0.log"
        verdict torch_killed_rank $? "$(grep -m1 -i 'WATCHDOG-REPORTED\|watchdog' \
            "$logs/torch_kill.rank0.log" | cut -c1-160)"
    fi
fi
stop_mps
exit $status
