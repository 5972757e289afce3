#!/bin/sh
# nvshmem-side-by-side.sh - gpurma against NVSHMEM, same patterns, same
# sizes and CTA counts, one call, one table. On a machine with 2 GPUs and
# NVSHMEM installed (a pip wheel's nvidia/nvshmem folder):
#
#   1. NVSHMEM's own perftests (shmem_put_bw by CTA count, shmem_p_latency,
#      shmem_put_signal_ping_pong_latency, shmem_atomic_latency -a
#      fetch_add, barrier_latency), built with nvcc -rdc from the sources
#      that tests/gpu/prepare-nvshmem-src.sh unpacked into .nvshmem-src/
#      (skipped, with the reason, when those are missing);
#   2. tests/bench/nvshmem_api_perf.cu built against NVSHMEM (-rdc);
#   3. gpurma-perftest (tools/gpurma_perftest.cu, gpurma's device API);
#   4. nvshmem_api_perf.cu built against gpurma's NVSHMEM layer (no -rdc; the
#      Makefile's tests/bench/nvshmem_api_perf), when the tree has that layer.
#
# All run as 2 ranks under mpirun, each launch under a timeout, with NVLink
# multicast off (NVSHMEM_DISABLE_NVLS=1, NCCL_NVLS_ENABLE=0). The table:
# pattern, size, CTAs, NVSHMEM (its perftest; else the NVSHMEM-API program
# built against NVSHMEM), gpurma, ratio gpurma/NVSHMEM (latency: lower is
# better; bandwidth: higher is better), then the NVSHMEM-API program against
# NVSHMEM and against gpurma's layer, and their ratio.
#
#   tests/gpu/nvshmem-side-by-side.sh [--quick] [--build DIR] [--logs DIR]
#
# --build: a configured CUDA build of this tree (default build-gpu/, made
# here if absent); --logs: where logs go (default gpu-logs-nvshmem/); with
# $OUT set (the device tool), logs come back as $OUT/nvshmem-logs.tar.gz and
# the table as $OUT/nvshmem-table.txt. NVSHMEM is looked for in
# $NVSHMEM_HOME, then /opt/torch/.venv/lib/python3.12/site-packages/nvidia/
# nvshmem, then other nvidia/nvshmem folders of Python environments under
# /opt and /usr. Exit status: 0 when everything that ran passed, 77 when
# there are not 2 GPUs or no NVSHMEM (gpurma-perftest still runs its
# --shared-gpu correctness pass on one GPU), 1 on a failure.
#
# The device tool must carry .nvshmem-src (ignored; list it in
# .git/info/exclude) beside .gpu-carry for step 1.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
quick=no build=$top/build-gpu logs=$top/gpu-logs-nvshmem
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=yes ;;
    --build) build=$2; shift ;;
    --logs) logs=$2; shift ;;
    -h | --help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "nvshmem-side-by-side.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
rm -rf "$logs"
mkdir -p "$logs"
bundle() {
    if [ -n "${OUT:-}" ] && [ -d "$OUT" ] && [ "$(cd "$logs/.." && pwd)" != "$(cd "$OUT" && pwd)" ]; then
        tar -czf "$OUT/nvshmem-logs.tar.gz" -C "$(dirname "$logs")" "$(basename "$logs")" 2>/dev/null
        cp "$logs/table.txt" "$OUT/nvshmem-table.txt" 2>/dev/null
    fi
}
trap bundle EXIT
note() { echo "== $*" | tee -a "$logs/summary.log"; }

# Never NVLink multicast; NVSHMEM stays on this node (no remote transport).
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 GPURMA_DISABLE_SWITCH=1
export NVSHMEM_REMOTE_TRANSPORT=none
# Two 1 GiB buffers of the bandwidth pattern and the perftests' own.
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-4G}
export NVSHMEM_MACHINE_READABLE_OUTPUT=1

# ------------------------------------------------------------ sizes
ctas="4 132"
bwmin=1024 bwmax=$((1 << 30)) bwn=200 bww=20
pmax=65536 psmax=$((1 << 20)) latn=500 latw=50 tpb=512
if [ $quick = yes ]; then
    bwmax=$((64 << 20)) bwn=20 bww=2 latn=100 latw=10
fi
ctas_list=$(echo $ctas | tr ' ' ,)
# What gpurma-perftest and nvshmem_api_perf are given; the perftests get
# the same figures through their own flags below.
perf_args="--ctas $ctas_list --threads 1024 --min $bwmin --max $bwmax --iters $bwn --warmup $bww \
--p-max $pmax --p-threads $tpb --ps-max $psmax --block-threads $tpb --lat-iters $latn --lat-warmup $latw"

# ------------------------------------------------------------ machine
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
arch=sm_${cap:-90}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
note "GPUs: $ngpu ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)), arch $arch"
if ! command -v mpirun >/dev/null 2>&1; then
    note "no mpirun: every run here is launched by mpirun"
    exit 77
fi
mpirun --version 2>&1 | head -1 >>"$logs/summary.log"

# ------------------------------------------------------------ gpurma build
. "$top/tests/gpu/gpu-configure.sh"
gpu_configure || exit 1
(cd "$build" && make -j16 libgpurma.la gpurma-perftest) >"$logs/build-gpurma.log" 2>&1 ||
    { note "build of gpurma-perftest failed (build-gpurma.log)"; tail -20 "$logs/build-gpurma.log"; exit 1; }
gperf=$build/.libs/gpurma-perftest
test -x "$gperf" || gperf=$build/gpurma-perftest
export LD_LIBRARY_PATH="$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# run NAME LIMIT ENV... -- PROG ARGS...: two ranks under mpirun and a
# timeout; both ranks' output in NAME.log. Returns the launcher's status.
run() {
    name=$1 limit=$2
    shift 2
    envs=
    while [ "$1" != -- ]; do envs="$envs -x $1"; shift; done
    shift
    echo "+ mpirun -np 2$envs $*" >"$logs/$name.log"
    # shellcheck disable=SC2086
    timeout -k 15 "$limit" mpirun --allow-run-as-root --oversubscribe -np 2 \
        -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x GPURMA_DISABLE_SWITCH \
        -x NVSHMEM_REMOTE_TRANSPORT -x NVSHMEM_SYMMETRIC_SIZE -x NVSHMEM_MACHINE_READABLE_OUTPUT \
        $envs "$@" >>"$logs/$name.log" 2>&1
    rc=$?
    case $rc in 0) v=PASS ;; 77) v=SKIP ;; 124 | 137) v="FAIL(timeout ${limit}s)" ;; *) v="FAIL(rc=$rc)" ;; esac
    echo "run $name $v" >>"$logs/results.txt"
    note "$name: $v"
    return $rc
}
: >"$logs/results.txt"

if [ "${ngpu:-0}" -lt 2 ]; then
    note "fewer than 2 GPUs: no side-by-side; gpurma-perftest --shared-gpu for correctness"
    export CUDA_VISIBLE_DEVICES=0
    run gpurma_shared_gpu 300 CUDA_VISIBLE_DEVICES -- \
        "$gperf" --shared-gpu --quick --max 16m --ps-max 64k
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] && exit 77
    exit 1
fi

# ------------------------------------------------------------ NVSHMEM
nvhome=
for d in "${NVSHMEM_HOME:-}" /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem \
    $(find /opt /usr -maxdepth 7 -type d -path '*nvidia/nvshmem' 2>/dev/null); do
    if [ -n "$d" ] && [ -d "$d" ] && find "$d" -name nvshmem.h -print -quit 2>/dev/null | grep -q .; then
        nvhome=$d
        break
    fi
done
# The shortest path of a file named $2 under $1 (include/nvshmem.h before
# any deeper namesake).
first() { find "$1" -name "$2" 2>/dev/null | awk '{print length($0), $0}' | sort -n | head -1 | cut -d' ' -f2-; }
if [ -n "$nvhome" ]; then
    nvinc=$(dirname "$(first "$nvhome" nvshmem.h)")
    nvhost=$(first "$nvhome" 'libnvshmem_host.so*')
    nvdev=$(first "$nvhome" libnvshmem_device.a)
    mpiplug=$(first "$nvhome" 'nvshmem_bootstrap_mpi.so*')
    pmixplug=$(first "$nvhome" 'nvshmem_bootstrap_pmix.so*')
    nvlib=$(dirname "${nvhost:-$nvhome/lib/x}")
fi
{
    echo "NVSHMEM home:        ${nvhome:-not found}"
    echo "  include:           ${nvinc:-}"
    echo "  host library:      ${nvhost:-not found}"
    echo "  device library:    ${nvdev:-not found}"
    echo "  MPI bootstrap:     ${mpiplug:-not found}"
    echo "  PMIx bootstrap:    ${pmixplug:-not found}"
    ls "$nvlib" 2>/dev/null | sed 's/^/  lib: /'
    [ -n "${mpiplug:-}" ] && ldd "$mpiplug" 2>&1 | grep -i mpi | sed 's/^/  plugin needs: /'
} | tee "$logs/nvshmem-install.txt"
have_nv=no
if [ -n "$nvhome" ] && [ -n "$nvhost" ] && [ -n "$nvdev" ] && { [ -n "$mpiplug" ] || [ -n "$pmixplug" ]; }; then
    have_nv=yes
    export LD_LIBRARY_PATH="$nvlib:$LD_LIBRARY_PATH"
else
    note "NVSHMEM not usable here (see nvshmem-install.txt): gpurma rows only"
fi
# How NVSHMEM programs find each other under mpirun: its MPI bootstrap
# plugin (which calls MPI_Init itself), else its PMIx one.
if [ -n "${mpiplug:-}" ]; then
    nv_env="NVSHMEM_BOOTSTRAP=MPI NVSHMEM_BOOTSTRAP_MPI_PLUGIN=$mpiplug"
else
    nv_env="NVSHMEM_BOOTSTRAP=PMI NVSHMEM_BOOTSTRAP_PMI=PMIX NVSHMEM_BOOTSTRAP_PMI_PLUGIN=${pmixplug:-}"
fi
# env VAR=VALUE pairs become exported variables and -x names for run().
nv_x=
# shellcheck disable=SC2163
for kv in $nv_env; do export "$kv"; nv_x="$nv_x ${kv%%=*}"; done

bin=$logs/bin
mkdir -p "$bin"
# The host library by path, to the linker, when the wheel has no
# unversioned .so link (nvcc takes no .so.N input).
nv_link() {
    if [ -e "$nvlib/libnvshmem_host.so" ]; then echo "-L$nvlib -lnvshmem_host"; else echo "-Xlinker $nvhost"; fi
}
NVCC_RDC="$nvcc -std=c++17 -O2 -rdc=true -arch=$arch"

# ------------------------------------------------------------ 1. NVSHMEM's perftests
src=$top/.nvshmem-src/perftest
perftests=
if [ $have_nv = no ]; then
    :
elif [ ! -f "$src/common/utils.cu" ]; then
    note "no .nvshmem-src (run tests/gpu/prepare-nvshmem-src.sh and carry it): NVSHMEM's perftests skipped"
else
    nvml_inc=$(sh "$top/tests/nvshmem/nvml-include.sh" "$bin/nvml-types") || exit 1
    [ "$nvml_inc" = "$bin/nvml-types" ] &&
        note "no nvml.h on this machine: NVSHMEM's perftests built with NVML's types only (--mmap not used)"
    note "NVSHMEM perftests from $(cat "$top/.nvshmem-src/SOURCE" 2>/dev/null)"
    # With mpi.h the helpers take NVSHMEMTEST_USE_MPI_LAUNCHER=1 (MPI_Init
    # by the test, then nvshmemx_init_attr on MPI_COMM_WORLD).
    mpi_flags=
    if command -v mpicc >/dev/null 2>&1 && [ -n "${mpiplug:-}" ]; then
        mpi_flags="-DNVSHMEMTEST_MPI_SUPPORT $(mpicc --showme:compile 2>/dev/null)"
    fi
    pt_flags="-I$nvinc -I$src/common -I$nvml_inc $mpi_flags"
    pt_libs="$(nv_link) $nvdev -L/usr/local/cuda/lib64/stubs -lcuda -ldl -Xlinker -rpath=$nvlib"
    # shellcheck disable=SC2086
    if $NVCC_RDC $pt_flags -c -o "$bin/utils.o" "$src/common/utils.cu" >"$logs/build-perftests.log" 2>&1; then
        # In parallel: -rdc compiles take a while, and the device call is bounded.
        tests="device/pt-to-pt/shmem_put_bw device/pt-to-pt/shmem_p_latency
            device/pt-to-pt/shmem_put_signal_ping_pong_latency
            device/pt-to-pt/shmem_atomic_latency device/coll/barrier_latency"
        for t in $tests; do
            n=$(basename "$t")
            [ -f "$src/$t.cu" ] || continue
            # shellcheck disable=SC2086
            $NVCC_RDC $pt_flags -I"$src/$(dirname "$t")" -o "$bin/$n" "$src/$t.cu" "$bin/utils.o" \
                $pt_libs >"$logs/build-perftest-$n.log" 2>&1 &
        done
        wait
        for t in $tests; do
            n=$(basename "$t")
            if [ -x "$bin/$n" ]; then
                perftests="$perftests $n"
            else
                note "perftest $n: not built (build-perftest-$n.log, or not in this NVSHMEM tree)"
                echo "run perftest_$n NOT-BUILT" >>"$logs/results.txt"
            fi
        done
    else
        note "NVSHMEM perftest helpers did not build (build-perftests.log)"
    fi
    [ -n "$mpi_flags" ] && export NVSHMEMTEST_USE_MPI_LAUNCHER=1 && nv_x="$nv_x NVSHMEMTEST_USE_MPI_LAUNCHER"
fi
has() { echo " $perftests " | grep -q " $1 "; }
# shellcheck disable=SC2086
if has shmem_put_bw; then
    for c in $ctas; do
        run "nv_put_bw_c$c" 600 $nv_x -- "$bin/shmem_put_bw" -b $bwmin -e $bwmax -f 2 \
            -n $bwn -w $bww -c $c -t 1024
    done
fi
# shellcheck disable=SC2086
if has shmem_p_latency; then
    run nv_p_latency 300 $nv_x -- "$bin/shmem_p_latency" -b 8 -e $pmax -f 2 -n $latn -w $latw \
        -t $tpb
fi
# shellcheck disable=SC2086
if has shmem_put_signal_ping_pong_latency; then
    run nv_put_signal 300 $nv_x -- "$bin/shmem_put_signal_ping_pong_latency" -b 8 -e $psmax \
        -f 2 -n $latn -w $latw
fi
# Its fetch_add case sets its own rounds: 500 after 50, gpurma's defaults.
# shellcheck disable=SC2086
if has shmem_atomic_latency; then
    run nv_atomic 300 $nv_x -- "$bin/shmem_atomic_latency" -a fetch_add
fi
# shellcheck disable=SC2086
if has barrier_latency; then
    run nv_barrier 300 $nv_x -- "$bin/barrier_latency" -n $latn -w $latw -t $tpb
fi

# ------------------------------------------------------------ 2. NVSHMEM-API program on NVSHMEM
api=$top/tests/bench/nvshmem_api_perf.cu
if [ $have_nv = yes ]; then
    # shellcheck disable=SC2046,SC2086
    if $NVCC_RDC -I"$nvinc" -I"$top/tools" -o "$bin/api_nvshmem" "$api" $(nv_link) "$nvdev" \
        -L/usr/local/cuda/lib64/stubs -lcuda -Xlinker -rpath="$nvlib" >"$logs/build-api-nvshmem.log" 2>&1; then
        # shellcheck disable=SC2086
        run api_nvshmem 900 $nv_x -- "$bin/api_nvshmem" $perf_args
    else
        note "nvshmem_api_perf against NVSHMEM: build failed (build-api-nvshmem.log)"
        echo "run api_nvshmem FAIL(build)" >>"$logs/results.txt"
    fi
fi

# ------------------------------------------------------------ 3. gpurma-perftest
# shellcheck disable=SC2086
run gpurma 900 -- "$gperf" $perf_args

# ------------------------------------------------------------ 4. NVSHMEM-API program on gpurma's layer
if [ -f "$top/include/gpurma/nvshmem/nvshmem.h" ]; then
    # The Makefile's rule: plain nvcc, no -rdc, as gpurma's layer is used.
    if (cd "$build" && make -j16 tests/bench/nvshmem_api_perf) >"$logs/build-api-gpurma.log" 2>&1; then
        # shellcheck disable=SC2086
        run api_gpurma 900 -- "$build/tests/bench/nvshmem_api_perf" $perf_args
    else
        note "nvshmem_api_perf against gpurma's NVSHMEM layer: build failed (build-api-gpurma.log)"
        echo "run api_gpurma FAIL(build)" >>"$logs/results.txt"
    fi
else
    note "no include/gpurma/nvshmem/nvshmem.h in this tree: the compat build is the next step"
fi

# ------------------------------------------------------------ table
# Every source becomes lines "SOURCE PATTERN SIZE CTAS VALUE UNIT".
rows=$logs/rows.txt
: >"$rows"
for s in gpurma api_nvshmem api_gpurma; do
    [ -f "$logs/$s.log" ] && awk -v s=$s '$1 == "perf" {print s, $2, $3, $4, $5, $6}' "$logs/$s.log" >>"$rows"
done
# NVSHMEM's machine-readable lines: "&&&& PERF JOB___SUB___size__N___VAR VALUE UNIT".
for f in "$logs"/nv_*.log; do
    [ -f "$f" ] || continue
    c=$(basename "$f" .log | sed -n 's/^nv_put_bw_c//p')
    awk -v c="${c:-1}" '$1 == "&&&&" && $2 == "PERF" {
        n = split($3, p, "___"); job = p[1]; sub_ = p[2]; size = p[3]; sub(/^size__/, "", size)
        pat = ""
        if (job == "shmem_put_bw_uni") pat = "put_bw"
        else if (job == "shmem_p_latency") pat = "p_lat"
        else if (job == "shmem_put_ping_lat") pat = "put_signal_rtt_thread"
        else if (job == "shmem_at_uint64_t_fetch_add_ping_lat") { pat = "fetch_add_lat"; size = 8 }
        else if (job == "barrier_all_device") { pat = "barrier_" sub_; size = 0 }
        if (pat == "") next
        unit = $5; sub(/^[-+]/, "", unit); if (unit == "GB/sec") unit = "GB/s"
        print "nvshmem", pat, size, (pat == "put_bw" ? c : 1), $4, unit
    }' "$f" >>"$rows"
done
{
    echo
    echo "==================== gpurma vs NVSHMEM ($(date -u +%Y-%m-%d), $ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
    echo "  NVSHMEM: its perftests ($(cat "$top/.nvshmem-src/SOURCE" 2>/dev/null | cut -d' ' -f1)); where one is missing, nvshmem_api_perf built against NVSHMEM (marked *)"
    echo "  ratio = gpurma / NVSHMEM: bandwidth (GB/s) higher is better, latency (us) lower is better; put_signal_rtt is a round trip"
    echo "  target (issue 10): bandwidth >= NVSHMEM and latency <= NVSHMEM at every size and CTA count"
    awk '
    { key = $2 " " $3 " " $4; v[$1, key] = $5; u[key] = $6
      if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
    function f(x) { return x == "" ? "-" : sprintf("%.3f", x) }
    function r(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.3f", a / b) }
    # The target of issue 10: bandwidth >= NVSHMEM, latency <= NVSHMEM.
    function t(a, b, unit) {
        if (a == "" || b == "" || b == 0) return "-"
        return (unit == "GB/s" ? a >= b : a <= b) ? "met" : "MISSED"
    }
    END {
        printf "  %-22s %11s %5s %12s %12s %7s %6s | %12s %12s %7s %6s  %s\n", "pattern", "size",
               "ctas", "NVSHMEM", "gpurma", "ratio", "target", "api@NVSHMEM", "api@gpurma",
               "ratio", "target", "unit"
        for (i = 1; i <= n; i++) {
            k = order[i]; split(k, p, " ")
            ref = v["nvshmem", k]; mark = ""
            if (ref == "" && v["api_nvshmem", k] != "") { ref = v["api_nvshmem", k]; mark = "*" }
            g = v["gpurma", k]; an = v["api_nvshmem", k]; ag = v["api_gpurma", k]
            printf "  %-22s %11s %5s %11s%1s %12s %7s %6s | %12s %12s %7s %6s  %s\n", p[1], p[2],
                   p[3], f(ref), mark, f(g), r(g, ref), t(g, ref, u[k]), f(an), f(ag), r(ag, an),
                   t(ag, an, u[k]), u[k]
        }
    }' "$rows"
    echo "  runs:"
    sed 's/^run /    /' "$logs/results.txt"
} | tee "$logs/table.txt"
grep -q FAIL "$logs/results.txt" && exit 1
[ $have_nv = yes ] || exit 77
exit 0
