#!/bin/sh
# nvshmem-perftests.sh - every program of NVSHMEM's perftest/ tree, built
# twice: against NVSHMEM (nvcc -rdc, libnvshmem) and against gpurma's NVSHMEM
# layer (plain nvcc, no -rdc: tests/nvshmem/build-perftests.sh); each pair
# run with the same arguments under mpirun, and one table of every figure
# both print ("&&&& PERF" lines), with the ratio gpurma / NVSHMEM.
#
#   tests/gpu/nvshmem-perftests.sh [--pes N] [--shared-gpu] [--mps] [--full | --args ARGS]
#                                  [--nvshmem-only] [--timeout S] [--build DIR] [--logs DIR]
#                                  [--only NAME...]
#
# --pes: PEs per run (default 2); --shared-gpu: every PE on GPU 0
# (CUDA_VISIBLE_DEVICES=0); --mps: --shared-gpu under an MPS control
# daemon this script starts (pipe and log folders under the logs) and
# stops, so the PEs' kernels run at once, with
# NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 (NVSHMEM refuses
# several PEs per GPU under MPS without it); with CUDA_MPS_PIPE_DIRECTORY
# already set the caller runs the daemon: it is used and left running;
# --full: the perftests' own size ranges and iteration counts (default:
# -n 20 -w 5 and sizes up to 1 MiB; a 10-minute device call holds about
# half the tree, so split it with --only); --args: these perftest arguments
# instead (e.g. "-n 50 -w 5 -b 256 -e 64M --cudagraph"); --nvshmem-only:
# NVSHMEM's builds and runs only, not gpurma's layer (needs --only; for
# tests/gpu/coll-vs-nvshmem.sh); --timeout: seconds per run (default 180);
# --only: program names (last option);
# --build: a configured CUDA build of this tree (default build-gpu/,
# configured here if absent); --logs: default gpu-logs-perftests/. With
# $OUT set, the logs come back as $OUT/perftests-logs.tar.gz and the table
# as $OUT/perftests-table.txt. Needs .nvshmem-src (tests/gpu/prepare-nvshmem-src.sh,
# carried beside .gpu-carry). Without NVSHMEM only the gpurma column runs.
# Rows of every run go to LOGS/rows.txt ("SIDE NAME/JOB VALUE UNIT", JOB
# as NVSHMEM's machine-readable output names it). Exit: 0 when every
# gpurma build ran and passed (--nvshmem-only: every NVSHMEM run), 1
# otherwise, 77 without a GPU or the sources.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pes=2 shared=no mps=no only= build=$top/build-gpu logs=$top/gpu-logs-perftests full=no
args_given='' nvonly=no limit=180
while [ $# -gt 0 ]; do
    case $1 in
    --pes) pes=$2; shift ;;
    --shared-gpu) shared=yes ;;
    --mps) shared=yes mps=yes ;;
    --full) full=yes ;;
    --args) args_given=$2; shift ;;
    --nvshmem-only) nvonly=yes ;;
    --timeout) limit=$2; shift ;;
    --build) build=$2; shift ;;
    --logs) logs=$2; shift ;;
    --only) shift; only="$*"; break ;;
    -h | --help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "nvshmem-perftests.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
if [ $nvonly = yes ] && [ -z "$only" ]; then
    echo "nvshmem-perftests.sh: --nvshmem-only needs --only NAME..." >&2
    exit 2
fi
rm -rf "$logs"
mkdir -p "$logs"
bundle() {
    if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
        tar -czf "$OUT/perftests-logs.tar.gz" -C "$(dirname "$logs")" "$(basename "$logs")" 2>/dev/null
        cp "$logs/table.txt" "$OUT/perftests-table.txt" 2>/dev/null
    fi
}
own_mps=no
finish() {
    [ $own_mps = yes ] && echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
    bundle
}
trap finish EXIT
note() { echo "== $*" | tee -a "$logs/summary.log"; }
src=$top/.nvshmem-src/perftest
[ -f "$src/common/utils.cu" ] || { note "no .nvshmem-src: run tests/gpu/prepare-nvshmem-src.sh and carry it"; exit 77; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 1 ] || { note "no GPU"; exit 77; }
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
arch=sm_${cap:-90}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 GPURMA_DISABLE_SWITCH=1 NVSHMEM_REMOTE_TRANSPORT=none
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-2G} NVSHMEM_MACHINE_READABLE_OUTPUT=1
export NVSHMEMTEST_USE_MPI_LAUNCHER=1
[ $shared = yes ] && export CUDA_VISIBLE_DEVICES=0
if [ $mps = yes ]; then
    export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
    if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]; then
        note "MPS: the caller's daemon ($CUDA_MPS_PIPE_DIRECTORY)"
    else
        export CUDA_MPS_PIPE_DIRECTORY=$logs/mps-pipe CUDA_MPS_LOG_DIRECTORY=$logs/mps-log
        mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
        nvidia-cuda-mps-control -d || { note "could not start MPS"; exit 1; }
        own_mps=yes
    fi
fi
note "$ngpu GPU(s), $arch, $pes PEs$([ $shared = yes ] && echo ', all on GPU 0')"

# ------------------------------------------------------------ gpurma
mkdir -p "$logs/gpurma"
: >"$logs/gpurma/built.txt"
if [ $nvonly = yes ]; then
    # The programs by name, from the sources, as build-perftests.sh finds them.
    for n in $only; do
        p=$(cd "$src" && find device host -name "$n.cu" -o -name "$n.cpp" | sort | head -1)
        if [ -n "$p" ]; then echo "$p built"; else note "no program $n in .nvshmem-src" >&2; fi
    done >"$logs/gpurma/status.txt"
    sh "$top/tests/nvshmem/nvml-include.sh" "$logs/gpurma/nvml-types" >/dev/null || exit 1
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"
else
. "$top/tests/gpu/gpu-configure.sh"
gpu_configure || exit 1
(cd "$build" && make -j16 libgpurma.la libgpurma_nvshmem.la libgpurma_bootstrap_mpi.la) >"$logs/build-gpurma.log" 2>&1 ||
    { note "gpurma build failed (build-gpurma.log)"; exit 1; }
export LD_LIBRARY_PATH="$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# shellcheck disable=SC2086
GPURMA_PERFTEST_ARCH=$arch "$top/tests/nvshmem/build-perftests.sh" --build "$build" \
    --out "$logs/gpurma" --jobs 16 ${only:+--only $only} >"$logs/build-perftests-gpurma.log" 2>&1
sed -n '1,200p' "$logs/gpurma/report.txt" 2>/dev/null | tee -a "$logs/summary.log"
fi

# ------------------------------------------------------------ NVSHMEM
nvhome=
for d in "${NVSHMEM_HOME:-}" /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem \
    $(find /opt /usr -maxdepth 7 -type d -path '*nvidia/nvshmem' 2>/dev/null); do
    if [ -n "$d" ] && [ -d "$d" ] && find "$d" -name nvshmem.h -print -quit 2>/dev/null | grep -q .; then
        nvhome=$d; break
    fi
done
first() { find "$1" -name "$2" 2>/dev/null | awk '{print length($0), $0}' | sort -n | head -1 | cut -d' ' -f2-; }
nvbin=$logs/nvshmem/bin
mkdir -p "$nvbin" "$logs/nvshmem/logs"
have_nv=no
if [ -n "$nvhome" ]; then
    nvinc=$(dirname "$(first "$nvhome" nvshmem.h)")
    nvhost=$(first "$nvhome" 'libnvshmem_host.so*')
    nvdev=$(first "$nvhome" libnvshmem_device.a)
    mpiplug=$(first "$nvhome" 'nvshmem_bootstrap_mpi.so*')
    nvlib=$(dirname "${nvhost:-$nvhome/lib/x}")
    [ -n "$nvhost" ] && [ -n "$nvdev" ] && [ -n "$mpiplug" ] && have_nv=yes
fi
nvml_inc=$logs/gpurma/nvml-types
[ -f /usr/local/cuda/include/nvml.h ] && nvml_inc=/usr/local/cuda/include
if [ $have_nv = yes ]; then
    if [ -e "$nvlib/libnvshmem_host.so" ]; then nvlink="-L$nvlib -lnvshmem_host"; else nvlink="-Xlinker $nvhost"; fi
    mpi_flags="-DNVSHMEMTEST_MPI_SUPPORT $(mpicc --showme:compile 2>/dev/null)"
    mpi_libs=$(mpicc --showme:link 2>/dev/null | sed 's/-Wl,/-Xlinker /g; s/-pthread//g')
    nvflags="-std=c++17 -O2 -rdc=true -arch=$arch -I$nvinc -I$src/common -I$nvml_inc $mpi_flags"
    nvlibs="$nvlink $nvdev -L/usr/local/cuda/lib64/stubs -lcuda -ldl -Xlinker -rpath=$nvlib $mpi_libs"
    # shellcheck disable=SC2086
    if $nvcc $nvflags -c -o "$nvbin/utils.o" "$src/common/utils.cu" >"$logs/nvshmem/logs/utils.log" 2>&1; then
        for n_p in $(cut -d' ' -f1 "$logs/gpurma/status.txt" 2>/dev/null); do
            n=$(basename "$n_p"); n=${n%.*}
            # shellcheck disable=SC2086
            ( $nvcc $nvflags -I"$src/$(dirname "$n_p")" -x cu -c -o "$nvbin/$n.o" "$src/$n_p" &&
              $nvcc $nvflags -o "$nvbin/$n" "$nvbin/$n.o" "$nvbin/utils.o" $nvlibs ) \
                >"$logs/nvshmem/logs/$n.log" 2>&1 &
            [ "$(jobs -p | wc -l)" -ge 16 ] && wait
        done
        wait
    else
        note "NVSHMEM's perftest helpers did not build against NVSHMEM (nvshmem/logs/utils.log)"
        have_nv=no
    fi
    export NVSHMEM_BOOTSTRAP=MPI NVSHMEM_BOOTSTRAP_MPI_PLUGIN=$mpiplug
    export LD_LIBRARY_PATH="$nvlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
    note "NVSHMEM not found: gpurma column only"
fi

# ------------------------------------------------------------ runs
args=
[ $full = no ] && args="-n 20 -w 5 -e 1048576"
[ -n "$args_given" ] && args=$args_given
run() { # run SIDE NAME PROG: PASS/FAIL into results, output into SIDE-NAME.log
    log=$logs/run-$1-$2.log
    # shellcheck disable=SC2086
    timeout -k 10 "$limit" mpirun --allow-run-as-root --oversubscribe -np "$pes" \
        -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x GPURMA_DISABLE_SWITCH \
        -x NVSHMEM_REMOTE_TRANSPORT -x NVSHMEM_SYMMETRIC_SIZE -x NVSHMEM_MACHINE_READABLE_OUTPUT \
        -x NVSHMEMTEST_USE_MPI_LAUNCHER -x NVSHMEM_BOOTSTRAP -x NVSHMEM_BOOTSTRAP_MPI_PLUGIN \
        ${CUDA_VISIBLE_DEVICES:+-x CUDA_VISIBLE_DEVICES} \
        ${NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:+-x NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE} \
        ${CUDA_MPS_PIPE_DIRECTORY:+-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY} "$3" $args >"$log" 2>&1
    rc=$?
    case $rc in 0) v=PASS ;; 124 | 137) v=TIMEOUT ;; *) v="FAIL(rc=$rc)" ;; esac
    echo "$1 $2 $v" >>"$logs/results.txt"
    awk -v s="$1" -v n="$2" '$1 == "&&&&" && $2 == "PERF" { u = $5; sub(/^[-+]/, "", u); print s, n "/" $3, $4, u }' \
        "$log" >>"$logs/rows.txt"
}
: >"$logs/results.txt"
: >"$logs/rows.txt"
if [ $nvonly = yes ]; then
    for n_p in $(cut -d' ' -f1 "$logs/gpurma/status.txt"); do
        n=$(basename "$n_p"); n=${n%.*}
        if [ $have_nv = yes ] && [ -x "$nvbin/$n" ]; then
            run nvshmem "$n" "$nvbin/$n"
        else
            echo "nvshmem $n NOT-BUILT" >>"$logs/results.txt"
        fi
    done
fi
while read -r n p; do
    [ $have_nv = yes ] && [ -x "$nvbin/$n" ] && run nvshmem "$n" "$nvbin/$n"
    run gpurma "$n" "$p"
done <"$logs/gpurma/built.txt"

# ------------------------------------------------------------ table
{
    echo "==================== NVSHMEM perftests: NVSHMEM vs gpurma's layer ($(date -u +%Y-%m-%d), $pes PEs, $ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)$([ $shared = yes ] && echo ', one GPU'))"
    echo "  ratio = gpurma / NVSHMEM (for latency units lower is better, for GB/s higher)"
    awk '{ k = $2; v[$1, k] = $3; u[k] = $4; if (!(k in seen)) { seen[k] = 1; o[++n] = k } }
    END { for (i = 1; i <= n; i++) { k = o[i]; a = v["nvshmem", k]; b = v["gpurma", k]
            printf "  %-90s %12s %12s %7s %s\n", k, a == "" ? "-" : a, b == "" ? "-" : b,
                   (a == "" || b == "" || a == 0) ? "-" : sprintf("%.3f", b / a), u[k] } }' "$logs/rows.txt"
    echo "  runs:"
    sed 's/^/    /' "$logs/results.txt"
    grep 'NOT BUILT' "$logs/gpurma/report.txt" 2>/dev/null | sed 's/^/  gpurma build: /'
} | tee "$logs/table.txt"
if [ $nvonly = yes ]; then
    grep -q '^nvshmem .* \(FAIL\|TIMEOUT\|NOT-BUILT\)' "$logs/results.txt" && exit 1
    exit 0
fi
grep -q '^gpurma .* \(FAIL\|TIMEOUT\)' "$logs/results.txt" && exit 1
grep -q 'NOT BUILT' "$logs/gpurma/report.txt" 2>/dev/null && exit 1
exit 0
