#!/bin/sh
# run-device.sh - everything GPU in one call, on a machine with GPUs:
# configure (CUDA, no UCX), build with make -j (GPURMA_MAKE_JOBS jobs,
# default one per core), run every GPU test and the GPU benchmark, keep
# full logs under $OUT (default ./gpu-logs), and print a short table last.
# Exit status: 0 when every test passed or skipped, 1 otherwise.
#
#   tests/gpu/run-device.sh [--quick] [--bench] [--nvshmem] [--focus] [--coll] [--nccl]
#                           [--collbench] [--scale] [--port] [--part 1|2]
#
# --quick: fewer rounds and sizes; --bench: build, then the benchmark only;
# --focus: the fewest builds and runs that check the newest GPU code (the
# RMA and signal tests, collectives, a rank's death, the same under MPS,
# the NVSHMEM layer), for a short lease;
# --coll: build, then only the collective stress (below);
# --nccl: after the build, only the NCCL layer (tests/gpu/nccl-shim.sh:
# nccl-tests, PyTorch and the benchmark through libgpurma_nccl, within
# about 6 minutes; carry .nccl-tests-src too; the full mode runs it too,
# after the other tests);
# --collbench: after the build, only the collectives against their floors
# and NVSHMEM (carry .nvshmem-src too): gpurma-coll-bench --gpu --graph on
# (every collective, 1 KiB .. 64 MiB, with the LL-exchange and SM-copy
# floors of the same run) at 2 ranks on GPU 0 under MPS, then
# tests/gpu/coll-vs-nvshmem.sh under the same daemon, then with 2+ GPUs one
# rank per GPU beside NCCL; the target lines and the NVSHMEM table last.
# About 6 minutes on 1x H100 (build 2-3, coll-bench 1, NVSHMEM side 2-3);
# the limits (240 s a coll-bench run, 90 s an NVSHMEM program) bound a hang.
# --scale: after the build, only tests/gpu/scale.sh (2+ GPUs, issues 21 and
# 22: MPS across the GPUs, every collective beside NCCL at 2 ranks and one
# per GPU, nccl-tests on NCCL; SCALE_ARGS passes its options, e.g.
# "--part bench"; carry .nccl-tests-src too).
# --port: after the build, only the port engine's GPU tests (the part 2
# rows *_port and port_subarray) and the benchmark (its host put+flush
# rows compare the port engine with cudaMemcpyPeerAsync), for a change to
# the port engine on a short lease (about 6 minutes on 2x H200).
# --part 1: the full mode's first half (every GPU program, one GPU per rank,
# shared, under MPS, and the benchmark); --part 2: its second half (the port
# and switch engines, the host suite through the port engine, mpirun, the
# NVSHMEM layer, the NCCL layer). On H100s the full mode no longer fits one
# 10-minute call; two calls on one warm machine reuse the build.
# RUN_DEVICE_NCCL=0 leaves the NCCL layer (nccl-shim.sh) out of the full
# mode, so that it fits one 10-minute call; --nccl runs it alone.
#
# The collective stress runs test_gpu_coll under mpirun at 2, 3, 4 and 8
# ranks with every algorithm forced, once under CUDA MPS (the ranks' kernels
# run at the same time, as on separate GPUs: the mode that decides) and once
# time-sliced. MPS is a user-space daemon started here with its pipe and log
# directories under /tmp and always told to quit at the end.
#
# Two ranks are started with the uid bootstrap (RANK, WORLD_SIZE,
# MASTER_ADDR, MASTER_PORT), so no launcher is needed; one test also runs
# under mpirun when it is there. The tests run once with one GPU per rank
# and once with both ranks sharing GPU 0. A tree without ./configure (the
# machine may lack libtool) gets the generated files from .gpu-carry/,
# which tests/gpu/prepare-carry.sh fills on a machine that has autotools.
# GPURMA_CONFIGURE_ARGS adds configure options (--with-cuda-arch=90: one
# architecture, about half the compile time).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# Logs go to gpu-logs/; with $OUT set (the device tool), they also come
# back as one archive plus the table, since only a few files may return.
out=$top/gpu-logs
rm -rf "$out"
mkdir -p "$out"
bundle() {
    if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
        tar -czf "$OUT/gpu-logs.tar.gz" -C "$top" gpu-logs 2>/dev/null
        cp "$out/table.txt" "$OUT/" 2>/dev/null
    fi
}
# CUDA MPS, for the runs that need the ranks' kernels to run concurrently.
mps_on=no
mps_start() {
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpurma-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpurma-mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d >>"$out/mps.log" 2>&1; then
        mps_on=yes
        note "CUDA MPS started"
    else
        note "CUDA MPS could not start (see mps.log)"
    fi
}
mps_stop() {
    if [ $mps_on = yes ]; then
        echo quit | nvidia-cuda-mps-control >>"$out/mps.log" 2>&1
        mps_on=no
        sleep 1
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
trap 'mps_stop; bundle' EXIT
quick=no tests=yes nvshmem=no focus=no collonly=no nccl=no collbench=no scale=no part=all
portonly=no
want_part=
for a in "$@"; do
    if [ -n "$want_part" ]; then
        case $a in 1 | 2) part=$a ;; *) echo "run-device.sh: --part takes 1 or 2" >&2; exit 2 ;; esac
        want_part=
        continue
    fi
    case $a in
    --part) want_part=yes ;;
    --quick) quick=yes ;;
    --bench) tests=no ;;
    --focus) focus=yes ;;
    --nvshmem) nvshmem=yes ;; # after the build, only tests/gpu/nvshmem-side-by-side.sh
    --coll) collonly=yes ;;
    --nccl) nccl=yes ;; # after the build, only tests/gpu/nccl-shim.sh
    --collbench) collbench=yes ;;
    --port) portonly=yes ;;
    --scale) scale=yes ;;
    -h | --help) sed -n '2,56p' "$0"; exit 0 ;;
    *) echo "run-device.sh: unknown option $a (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$want_part" ] && { echo "run-device.sh: --part takes 1 or 2" >&2; exit 2; }
# in_part N: whether the full mode's half N runs in this call.
in_part() { [ $part = all ] || [ $part = "$1" ]; }
# NVLink multicast stays off, whatever else the machine runs.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
results=$out/results.txt
: >"$results"
start=$(date +%s)
cd "$top" || exit 1

note() { echo "== $*" | tee -a "$out/summary.log"; }

# ------------------------------------------------------------ machine
{
    date -u
    uname -a
    nvidia-smi -L 2>&1
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
    nvidia-smi topo -m 2>&1
    nvcc --version 2>&1 | tail -2
} >"$out/machine.log" 2>&1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
note "GPUs: $ngpu"

# ------------------------------------------------------------ build
if [ ! -x configure ] && [ -d .gpu-carry ]; then
    cp -a .gpu-carry/. .
fi
# Generated files must look newer than their sources, or make would try to
# run automake/autoconf again (and the copy does not keep times).
touch aclocal.m4 2>/dev/null
touch configure config.h.in Makefile.in build-aux/* 2>/dev/null
build=$top/build-gpu
mkdir -p "$build"
jobs=${GPURMA_MAKE_JOBS:-$(nproc 2>/dev/null || echo 16)}
note "configure + make -j$jobs (log: build.log)"
(
    cd "$build" &&
        "$top/configure" --with-cuda=/usr/local/cuda --with-ucx=no ${GPURMA_CONFIGURE_ARGS:-} &&
        make -j"$jobs" libgpurma.la
) >"$out/build.log" 2>&1
build_rc=$?
if [ $build_rc -ne 0 ]; then
    echo "test build FAIL" >>"$results"
    tail -40 "$out/build.log"
    note "build of libgpurma failed"
    exit 1
fi
# The rest of the tree (tools, examples) is not needed here; report only.
if [ $focus = yes ] || [ $collbench = yes ] || [ $nccl = yes ] || [ $scale = yes ] ||
    [ $portonly = yes ]; then
    : # only the programs below (nccl-shim.sh builds its own)
elif (cd "$build" && make -j"$jobs") >>"$out/build.log" 2>&1; then
    echo "test build_all PASS" >>"$results"
else
    echo "test build_all FAIL(other-targets)" >>"$results"
fi
# --nvshmem (carry .nvshmem-src too): gpurma against NVSHMEM's perftests, in one table.
[ $nvshmem = yes ] && { sh "$top/tests/gpu/nvshmem-side-by-side.sh" $(test $quick = yes && echo --quick) --build "$build" --logs "$out/nvshmem"; exit $?; }

# ---- several GPUs (--scale), issues 21 and 22: its own script, its table
if [ $scale = yes ]; then
    # shellcheck disable=SC2086
    bash "$top/tests/gpu/scale.sh" --build "$build" --logs "$out/scale" ${SCALE_ARGS:-} |
        tee "$out/scale.txt"
    grep '^test ' "$out/scale.txt" | awk '{print $1, $2, $3}' >>"$results"
    cp "$out/scale/table.txt" "$out/table.txt" 2>/dev/null
    grep -q 'FAIL' "$results" && exit 1
    exit 0
fi

# ---- the NCCL layer (--nccl), issue 20: its own script, its lines in the table
if [ $nccl = yes ]; then
    # NCCL_SHIM_ARGS: more options of nccl-shim.sh (--only, --np, --budget, --jobs)
    bash "$top/tests/gpu/nccl-shim.sh" --build "$build" --logs "$out/nccl" \
        $(test $quick = yes && echo --quick) ${NCCL_SHIM_ARGS:-} | tee "$out/nccl.txt"
    grep '^test ' "$out/nccl.txt" | awk '{print $1, $2, $3}' >>"$results"
    {
        awk '$1 == "test" {printf "  %-40s %s\n", $2, $3}' "$results"
        cat "$out/nccl/bench-table.txt" 2>/dev/null
        grep -h '^# nccl-shim.sh:' "$out/nccl.txt"
    } | tee "$out/table.txt"
    grep -q 'FAIL' "$results" && exit 1
    exit 0
fi
# ---- end of the NCCL layer's block

# ---- the collectives against their floors and NVSHMEM (--collbench), issue 15 item 4
if [ $collbench = yes ]; then
    (cd "$build" && make -j"$jobs" gpurma-coll-bench) >>"$out/build.log" 2>&1
    # cbrun NAME NP ENV... -- ARGS: gpurma-coll-bench under mpirun, a verdict row.
    cbrun() {
        name=$1 np=$2
        shift 2
        xs=
        while [ "$1" != -- ]; do xs="$xs -x $1"; shift; done
        shift
        # shellcheck disable=SC2086
        timeout -k 10 240 mpirun --allow-run-as-root --oversubscribe -np "$np" \
            -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS $xs "$build/gpurma-coll-bench" \
            --gpu --graph on --coll all --max 64M --iters 50 "$@" >"$out/$name.log" 2>&1
        rc=$?
        case $rc in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$rc)" ;; esac
        echo "test $name $v" >>"$results"
        note "$name: $v"
    }
    if command -v mpirun >/dev/null 2>&1; then
        mps_start
        if [ $mps_on = yes ]; then
            # NCCL refuses two ranks on one GPU: gpurma and its floors only.
            export CUDA_VISIBLE_DEVICES=0
            cbrun collbench_mps_np2 2 CUDA_VISIBLE_DEVICES CUDA_MPS_PIPE_DIRECTORY \
                CUDA_MPS_LOG_DIRECTORY -- --no-nccl
            sh "$top/tests/gpu/coll-vs-nvshmem.sh" --build "$build" --logs "$out/coll-vs-nvshmem" \
                --max 64M >"$out/coll-vs-nvshmem.out" 2>&1
            rc=$?
            case $rc in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$rc)" ;; esac
            echo "test coll_vs_nvshmem $v" >>"$results"
            note "coll_vs_nvshmem: $v"
            unset CUDA_VISIBLE_DEVICES
        fi
        mps_stop
        [ "$ngpu" -ge 2 ] && cbrun collbench_2gpu 2 --
    else
        note "--collbench: no mpirun"
    fi
    {
        echo
        echo "==================== collectives vs floors ($(date -u +%Y-%m-%d), $ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
        awk '$1 == "test" {printf "  %-28s %s\n", $2, $3}' "$results"
        for log in "$out/collbench_mps_np2.log" "$out/collbench_2gpu.log"; do
            [ -f "$log" ] || continue
            echo "  $(basename "$log" .log):"
            grep '^# floor' "$log" | sed 's/^/    /'
            # The issue-15 targets, read by the columns' names.
            awk '/^# [a-z_]+, [0-9]+ ranks,/ { kind = $2; sub(/,$/, "", kind) }
                 /^# +size / { delete col; for (i = 2; i <= NF; i++) col[$i] = i - 1 }
                 /^ +[0-9]/ && ("x_floor" in col) {
                     if (kind == "allreduce" && $1 == 1024)
                         printf "    target 1 KiB allreduce (graph) <= 1.5 x LL floor: %.3f %s\n",
                                $(col["x_floor"]), ($(col["x_floor"]) <= 1.5 ? "MET" : "MISSED")
                     if ($1 == 67108864)
                         printf "    target %s busbw @64MiB >= 0.7 x SM-copy floor: %s %s\n", kind,
                                $(col["busbw/floor"]), ($(col["busbw/floor"]) >= 0.7 ? "MET" : "MISSED")
                 }' "$log"
        done
        if [ -f "$out/coll-vs-nvshmem/table.txt" ]; then
            awk '/\(gpurma\) \// {k = $1} /gpurma faster at/ {
                     printf "  target faster than NVSHMEM at every size, %s: %s of %s %s\n", k, $4, $6,
                            ($4 == $6 && $6 > 0 ? "MET" : "MISSED") }' "$out/coll-vs-nvshmem/table.txt"
            echo
            cat "$out/coll-vs-nvshmem/table.txt"
        else
            echo "  no NVSHMEM table (coll-vs-nvshmem.out):"
            tail -5 "$out/coll-vs-nvshmem.out" 2>/dev/null | sed 's/^/    /'
        fi
    } | tee "$out/table.txt"
    grep -q 'FAIL' "$results" && exit 1
    exit 0
fi
# ---- end of the --collbench block

gpu_progs="compile_all test_gpu_rma test_gpu_signal_order test_gpu_ll_stress test_gpu_stream test_gpu_strided test_gpu_port_subarray test_gpu_switch test_gpu_coll test_gpu_barrier gpu_bench atomic_forms"
test $focus = yes && gpu_progs="compile_all test_gpu_rma test_gpu_signal_order test_gpu_coll test_gpu_barrier"
test $collonly = yes && gpu_progs="test_gpu_coll"
test $portonly = yes &&
    gpu_progs="test_gpu_signal_order test_gpu_rma test_gpu_ll_stress test_gpu_stream test_gpu_port_subarray gpu_bench"
# The Makefile builds them (multi-process tests are named *.mp there); if
# this tree's Makefile does not list one, nvcc builds it against the
# library just built.
targets=
for p in $gpu_progs; do
    case $p in test_*) targets="$targets tests/gpu/$p.mp" ;; *) targets="$targets tests/gpu/$p" ;; esac
done
nvshmem_gpu="tests/nvshmem/gpu_ring.mp tests/nvshmem/gpu_ring_rdc.mp tests/nvshmem/gpu_fast_paths.mp"
(cd "$build" && make -j"$jobs" -k $targets $nvshmem_gpu tests/nvshmem/libgpu_module.so) \
    >>"$out/build.log" 2>&1
mkdir -p "$build/tests/gpu-nvcc"
for p in $gpu_progs; do
    if test -x "$build/tests/gpu/$p.mp" || test -x "$build/tests/gpu/$p"; then continue; fi
    note "building $p with nvcc directly (no Makefile target)"
    extra=
    test $p = gpu_bench && extra=$top/tools/gpurma_bench_gpu.cu
    /usr/local/cuda/bin/nvcc -std=c++17 -O2 -lineinfo \
        -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 \
        -I"$top/include" -I"$top/src" -o "$build/tests/gpu-nvcc/$p" "$top/tests/gpu/$p.cu" $extra \
        -L"$build/.libs" -lgpurma -Xlinker -rpath="$build/.libs" -cudart shared \
        >"$out/build-$p.log" 2>&1 &
done
wait
prog() {
    for f in "$build/tests/gpu/$1.mp" "$build/tests/gpu/$1" "$build/tests/gpu-nvcc/$1"; do
        if test -x "$f"; then echo "$f"; return; fi
    done
    echo "/nonexistent/$1"
}

# ------------------------------------------------------------ runs
port=$((21000 + $$ % 20000))

# run2 NAME TIMEOUT PROG ARGS...: two ranks through the uid bootstrap.
# Extra environment for both ranks comes from $RUN_ENV.
run2() {
    name=$1 limit=$2
    shift 2
    port=$((port + 1))
    for r in 0 1; do
        (
            env $RUN_ENV RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                GPURMA_BOOTSTRAP=uid GPURMA_UID_TOKEN="gpu-$$-$port" \
                timeout -k 10 "$limit" "$@" >"$out/$name.rank$r.log" 2>&1
            echo $? >"$out/$name.rc$r"
        ) &
    done
    wait
    rc0=$(cat "$out/$name.rc0") rc1=$(cat "$out/$name.rc1")
    rm -f "$out/$name.rc0" "$out/$name.rc1"
    if [ "$rc0" = 0 ] && [ "$rc1" = "${RUN2_RC1:-0}" ]; then
        verdict=PASS
    elif [ "$rc0" = 77 ] && [ "$rc1" = 77 ]; then
        verdict=SKIP
    else
        verdict="FAIL(rc=$rc0/$rc1)"
    fi
    echo "test $name $verdict" >>"$results"
    note "$name: $verdict"
    tail -3 "$out/$name.rank0.log"
}

run1() {
    name=$1 limit=$2
    shift 2
    timeout -k 10 "$limit" "$@" >"$out/$name.log" 2>&1
    rc=$?
    case $rc in 0) verdict=PASS ;; 77) verdict=SKIP ;; *) verdict="FAIL(rc=$rc)" ;; esac
    echo "test $name $verdict" >>"$results"
    note "$name: $verdict"
    tail -3 "$out/$name.log"
}

# The NVSHMEM layer's GPU ring (two units; built without and with -rdc)
# and its load/store paths (gpu_fast_paths) under mpirun, two PEs.
run_nvshmem_gpu() {
    command -v mpirun >/dev/null 2>&1 || return 0
    for t in $nvshmem_gpu; do
        name=nvshmem_$(basename "$t" .mp)
        NVT_GPU_MODULE=$build/tests/nvshmem/libgpu_module.so \
            timeout -k 10 90 mpirun --allow-run-as-root --oversubscribe -np 2 \
            -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x NVT_GPU_MODULE "$build/$t" \
            >"$out/$name.log" 2>&1
        rc=$?
        case $rc in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$rc)" ;; esac
        echo "test $name $v" >>"$results"
        note "$name under mpirun: $v"
    done
}

# coll_stress MODE: test_gpu_coll under mpirun, every algorithm forced, at
# 2, 3, 4 and 8 ranks (several per GPU); MODE mps or sliced names the rows.
# Under MPS the full matrix with 10,000 graph replays at 2 ranks; the rest
# with the --quick matrix (int8, int32, float32, float64) to fit a lease.
coll_stress() {
    mode=$1
    command -v mpirun >/dev/null 2>&1 || { note "coll_stress: no mpirun"; return 0; }
    for np in 2 3 4 8; do
        for algo in auto ll16 oneshot_ll oneshot twoshot ring ce; do
            args="--quick 200" limit=150
            if [ $mode = mps ] && [ $np = 2 ] && [ $algo = auto ]; then args=10000 limit=400; fi
            if [ $mode = sliced ] && { [ $np -gt 4 ] || [ $algo != auto ]; }; then continue; fi
            test $quick = yes && args="--quick 100"
            name=coll_${mode}_np${np}_$algo
            mpsx=
            test $mode = mps && mpsx="-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY"
            GPURMA_COLL_ALGO=$algo timeout -k 10 $limit mpirun --allow-run-as-root --oversubscribe \
                -np $np -x GPURMA_COLL_ALGO -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS $mpsx \
                "$(prog test_gpu_coll)" $args >"$out/$name.log" 2>&1
            rc=$?
            case $rc in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$rc)" ;; esac
            echo "test $name $v" >>"$results"
            note "$name: $v ($(grep -c 'wrong\|differ' "$out/$name.log") lines on wrong data)"
        done
    done
}

if test $collonly = yes; then
    mps_start
    test $mps_on = yes && coll_stress mps
    mps_stop
    coll_stress sliced
    tests=no bench=no
fi

# port_tests: the port engine forced: kernels push descriptors into the
# pinned FIFO and the proxy moves the data with the copy engine (atomics,
# counters and LL packets with one-thread kernels on its stream).
port_tests() {
    RUN_ENV=GPURMA_ENGINE=port
    run2 signal_order_port 90 "$(prog test_gpu_signal_order)" 1000
    # The remote peer served by a second proxy context; the proxies log where
    # they pinned themselves.
    RUN_ENV="GPURMA_ENGINE=port GPURMA_PORT_CONTEXTS=2 GPURMA_LOG_LEVEL=info GPURMA_LOG_SUBSYS=port"
    run2 rma_port_2ctx 180 "$(prog test_gpu_rma)"
    note "$(grep -h -m1 'pinned' "$out"/rma_port_2ctx.rank*.log || echo 'no proxy pinning logged')"
    RUN_ENV=GPURMA_ENGINE=port
    run2 ll_stress_port 90 "$(prog test_gpu_ll_stress)" 500
    run2 stream_port 120 "$(prog test_gpu_stream)"
    # Host subarrays as one descriptor each: the copy engine's 2-D/3-D copies.
    run2 port_subarray 120 "$(prog test_gpu_port_subarray)"
    RUN_ENV=
}

if test $portonly = yes; then
    port_tests
    bench=yes part=1 # the benchmark below, nothing else
    tests=no
fi

rounds=3000
test $quick = yes && rounds=500
RUN_ENV=
if test $focus = yes; then
    run1 compile_all 30 "$(prog compile_all)"
    run2 rma 120 "$(prog test_gpu_rma)"
    run2 signal_order 60 "$(prog test_gpu_signal_order)" 300
    run2 barrier 60 "$(prog test_gpu_barrier)" 1000
    run2 coll 150 "$(prog test_gpu_coll)" 100
    RUN_ENV=GPURMA_COLL_ALGO=ce
    run2 coll_ce 150 "$(prog test_gpu_coll)" 20
    RUN_ENV=GPURMA_TIMEOUT_MS=60000 RUN2_RC1=137
    run2 peer_death 90 "$(prog test_gpu_coll)" peer-death
    RUN2_RC1=
    mps_start
    if [ $mps_on = yes ]; then
        RUN_ENV=CUDA_VISIBLE_DEVICES=0
        run2 coll_mps_shared_gpu 150 "$(prog test_gpu_coll)" 100
        # last under MPS: a trap here would end every client of the GPU
        RUN_ENV="CUDA_VISIBLE_DEVICES=0 GPURMA_TIMEOUT_MS=60000" RUN2_RC1=137
        run2 peer_death_mps 90 "$(prog test_gpu_coll)" peer-death
        RUN2_RC1=
    fi
    mps_stop
    RUN_ENV=
    run_nvshmem_gpu
    tests=no bench=no
fi
if test $tests = yes && in_part 1; then
run1 compile_all 30 "$(prog compile_all)"
# Which instruction a loop of dropped atomics becomes, and its cost (issue
# 17's fetch_add): its table is in atomic_forms.log.
run1 atomic_forms 60 "$(prog atomic_forms)"
run2 rma 120 "$(prog test_gpu_rma)"
run2 signal_order 60 "$(prog test_gpu_signal_order)" $rounds
run2 barrier 60 "$(prog test_gpu_barrier)" $rounds
run2 ll_stress 60 "$(prog test_gpu_ll_stress)" $rounds
run2 stream 120 "$(prog test_gpu_stream)"
run2 strided 120 "$(prog test_gpu_strided)"
run2 port_subarray_mem 120 "$(prog test_gpu_port_subarray)"
run2 switch 120 "$(prog test_gpu_switch)"
run2 coll 300 "$(prog test_gpu_coll)" 1000
# The copy-engine variant (no SMs for the data) where it applies.
RUN_ENV=GPURMA_COLL_ALGO=ce
run2 coll_ce 300 "$(prog test_gpu_coll)" 100
# Zero-copy for every call it can take, tails and small counts included
# (by default LL16 keeps calls up to 1 MiB moved, so at 2 ranks the
# registered and graph phases' int8 and 2-byte calls would not reach it).
RUN_ENV=GPURMA_COLL_DIRECT_MIN=0
run2 coll_direct0 300 "$(prog test_gpu_coll)" 100
RUN_ENV=
# A new team's first zero-copy call with the last rank slow (one block):
# no member may end it before the slow one is done with its recv.
run2 direct_first 120 "$(prog test_gpu_coll)" direct-first
# A rank dies (its peers' collectives end without a trap, well within
# the timeout, once their host knows; test_gpu_coll.cu says why).
RUN_ENV=GPURMA_TIMEOUT_MS=60000 RUN2_RC1=137 # rank 1 kills itself
run2 peer_death 90 "$(prog test_gpu_coll)" peer-death
RUN_ENV= RUN2_RC1=
# A stream wait nobody satisfies: a CUDA error on the stream after the
# timeout (here 1.5 s), not a hang, and a message that names the wait.
# With one GPU only one rank runs it: two processes trapping a kernel at
# once on one GPU left one of them in cudaStreamSynchronize (H100,
# 2026-11-23), a driver matter the one-GPU machine cannot settle.
if [ "$ngpu" -ge 2 ]; then
    RUN_ENV=GPURMA_TIMEOUT_MS=1500
    run2 stream_timeout 60 "$(prog test_gpu_stream)" timeout
    # A zero-copy call one rank does not agree to: refused by the
    # fingerprint (fast), or by the timeout when its buffers are not
    # registered; both ranks trap, so one GPU each (as above).
    run2 direct_absent 60 "$(prog test_gpu_coll)" direct-absent
    RUN_ENV=
    run2 direct_mismatch 60 "$(prog test_gpu_coll)" direct-mismatch
else
    run1 stream_timeout 60 env GPURMA_TIMEOUT_MS=1500 GPURMA_BOOTSTRAP=single \
        "$(prog test_gpu_stream)" timeout
fi
fi


# ------------------------------------------------------------ benchmark
maxbw=$((1 << 30))
benchopt=
test $quick = yes && maxbw=$((256 << 20)) && benchopt=--quick
if [ "${bench:-yes}" = no ] || ! in_part 1; then
    : >"$out/bench.txt"
elif [ "$ngpu" -ge 2 ]; then
    run2 gpu_bench 150 "$(prog gpu_bench)" --max $maxbw $benchopt
    grep -E '^(bw|lat|bwport) ' "$out/gpu_bench.rank0.log" >"$out/bench.txt"
else
    note "gpu_bench needs 2 GPUs: not run"
    : >"$out/bench.txt"
fi

if test $tests = yes && in_part 1; then
# Both ranks on one GPU (CUDA IPC within a device, time-sliced kernels).
RUN_ENV=CUDA_VISIBLE_DEVICES=0
run2 rma_shared_gpu 120 "$(prog test_gpu_rma)"
run2 signal_order_shared_gpu 60 "$(prog test_gpu_signal_order)" 300
run2 ll_stress_shared_gpu 60 "$(prog test_gpu_ll_stress)" 300
run2 stream_shared_gpu 120 "$(prog test_gpu_stream)"
run2 coll_shared_gpu 300 "$(prog test_gpu_coll)" 200
RUN_ENV=
# Collectives with 2 ranks on one GPU, then 4 and 8 ranks over the GPUs
# (several per GPU, mpirun), under CUDA MPS: the ranks' kernels run at the
# same time, as on separate GPUs (time-slicing hid wrong results until
# 2026-11-25). Without MPS the rows say so and run time-sliced.
mps_start
mpsx=
if [ $mps_on = yes ]; then
    mpsx="-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY"
    RUN_ENV=CUDA_VISIBLE_DEVICES=0
    run2 coll_mps_shared_gpu 300 "$(prog test_gpu_coll)" 200
    run2 direct_first_mps 120 "$(prog test_gpu_coll)" direct-first
    # issue 19's target: a strided column >= 0.9x a packed put on one GPU
    run2 strided_mps_shared_gpu 120 "$(prog test_gpu_strided)"
    note "$(grep -h -m1 'of packed' "$out"/strided_mps_shared_gpu.rank0.log)"
    RUN_ENV=
fi
# 4 and 8 ranks; with more than 4 GPUs also one rank per GPU and two
# (issue 22: 8 and 16 on 8 GPUs).
nps="4 8"
[ "$ngpu" -gt 4 ] && nps="4 $ngpu $((2 * ngpu))"
if command -v mpirun >/dev/null 2>&1; then
    for np in $nps; do
        name=coll_$(test $mps_on = yes && echo mps_)np$np
        # shellcheck disable=SC2086
        timeout -k 10 400 mpirun --allow-run-as-root --oversubscribe -np $np \
            -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS $mpsx \
            "$(prog test_gpu_coll)" 100 >"$out/$name.log" 2>&1
        rc=$?
        case $rc in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$rc)" ;; esac
        echo "test $name $v" >>"$results"
        note "coll with $np ranks under mpirun: $v"
    done
fi
# Last under MPS (a trap would end every client of the GPU): a rank dies,
# and the other's stream collectives must end without a trap once its
# host knows.
if [ $mps_on = yes ]; then
    RUN_ENV="CUDA_VISIBLE_DEVICES=0 GPURMA_TIMEOUT_MS=60000" RUN2_RC1=137
    run2 peer_death_mps 90 "$(prog test_gpu_coll)" peer-death
    RUN_ENV= RUN2_RC1=
fi
mps_stop
fi # part 1

if test $tests = yes && in_part 2; then
port_tests
# The switch engine forced: host calls through the mem engine's GPU entry,
# kernels by load/store (multicast stays refused: NCCL_NVLS_ENABLE=0 above).
RUN_ENV=GPURMA_ENGINE=switch
run2 rma_switch 180 "$(prog test_gpu_rma)"
run2 signal_order_switch 90 "$(prog test_gpu_signal_order)" 1000
RUN_ENV=
# The whole host-backend suite through the port engine, on this machine too.
(cd "$build" && for t in "$top"/tests/mp/test_*.c; do
    make -j"$jobs" "tests/mp/$(basename "$t" .c).mp"; done) >>"$out/build.log" 2>&1
# Four at a time (each at 2 and 4 ranks): 16 cores, and one after the other
# they took more than a call's 10 minutes.
host_port() {
    t=$(basename "$1" .mp)
    GPURMA_DEVICE=host GPURMA_ENGINE=port GPURMA_PORT_CONTEXTS=2 GPURMA_TEST_RANKS="2 4" \
        LAUNCHER="mpirun --allow-run-as-root --oversubscribe -x GPURMA_DEVICE -x GPURMA_ENGINE -x GPURMA_PORT_CONTEXTS" \
        timeout -k 10 120 sh "$top/tests/mp/run-mp.sh" "$1" >"$out/host_port_$t.log" 2>&1
    rc=$?
    case $rc in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$rc)" ;; esac
    echo "test host_port_$t $v" >>"$results"
}
if command -v mpirun >/dev/null 2>&1; then
    n=0
    for prog in "$build"/tests/mp/test_*.mp; do
        host_port "$prog" &
        n=$((n + 1))
        [ $((n % 4)) = 0 ] && wait
    done
    wait
    note "host suite through the port engine: $(grep -c 'host_port_.* PASS' "$results") passed"
fi

# The same test under mpirun (PMIx bootstrap), when there is one.
if command -v mpirun >/dev/null 2>&1; then
    timeout -k 10 60 mpirun --allow-run-as-root --oversubscribe -np 2 \
        -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS \
        "$(prog test_gpu_signal_order)" 1000 >"$out/signal_order_mpirun.log" 2>&1
    rc=$?
    case $rc in 0) v=PASS ;; 77) v=SKIP ;; *) v="FAIL(rc=$rc)" ;; esac
    echo "test signal_order_mpirun $v" >>"$results"
    note "signal_order under mpirun: $v"
fi
run_nvshmem_gpu
# The NCCL layer (issue 20): nccl-tests (when .nccl-tests-src was carried)
# and PyTorch through libgpurma_nccl, bounded by its own budget; its rows
# join the table with an nccl_ prefix where they lack one.
if [ $focus = no ] && [ "${RUN_DEVICE_NCCL:-1}" != 0 ]; then
    bash "$top/tests/gpu/nccl-shim.sh" --build "$build" --logs "$out/nccl" \
        $(test $quick = yes && echo --quick) ${NCCL_SHIM_ARGS:-} >"$out/nccl.txt" 2>&1
    grep '^test ' "$out/nccl.txt" | awk '{n = $2; if (n !~ /^n/) n = "nccl_" n; print $1, n, $3}' \
        >>"$results"
    note "$(grep -h '^# nccl-shim.sh:' "$out/nccl.txt")"
fi
fi # tests

# ------------------------------------------------------------ table
elapsed=$(($(date +%s) - start))
{
    echo
    echo "==================== GPU results ($(date -u +%Y-%m-%d), $ngpu GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), ${elapsed}s)"
    awk '$1 == "test" {printf "  %-28s %s\n", $2, $3}' "$results"
    if [ -s "$out/bench.txt" ]; then
        echo "  bandwidth GB/s      bytes      gpurma    sm_copy  ratio    ce_memcpy"
        awk '$1 == "bw" {printf "  %-14s %12d %10.1f %10.1f %6.3f %10.1f\n", $2, $3, $4, $5, $6, $8}' "$out/bench.txt"
        echo "  latency us (1-way)  bytes      gpurma      floor  ratio  floor kernel"
        awk '$1 == "lat" {printf "  %-18s %8d %10.3f %10.3f %6.3f  %s\n", $2, $3, $4, $5, $6, $7}' "$out/bench.txt"
        awk '$1 == "bw" && $3 == 268435456 {printf "  target put bw @256MiB >= 0.97 x sm_copy: %.3f %s\n", $6, ($6 >= 0.97 ? "MET" : "MISSED")}
             $1 == "lat" && $2 == "put_signal_thread" && $3 == 8 {printf "  target 8B put_signal 1-way <= 1.10 x data+release floor: %.3f %s\n", $6, ($6 <= 1.10 ? "MET" : "MISSED")}' "$out/bench.txt"
    fi
    if grep -q '^bwport' "$out/bench.txt" 2>/dev/null; then
        echo "  port engine, host put+flush  bytes   gpurma  memcpy_peer  ratio"
        awk '$1 == "bwport" {printf "  %-18s %12d %9.1f %10.1f %6.3f\n", $2, $3, $4, $5, $6}' "$out/bench.txt"
        awk '$1 == "bwport" && $3 == 268435456 {printf "  target port bw @256MiB >= 0.97 x cudaMemcpyPeer: %.3f %s\n", $6, ($6 >= 0.97 ? "MET" : "MISSED")}' "$out/bench.txt"
    fi
} | tee "$out/table.txt"
grep -q 'FAIL' "$results" && exit 1
exit 0
