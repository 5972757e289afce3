#!/bin/bash
# gpurma-bench-compare - gpurma against MPI-3 RMA and UCX on this node.
#
# Runs, in one invocation and on the same two cores:
#   gpurma-bench      (mpirun -np 2)  put_signal ping-pong, put bandwidth,
#                                     fetch_add rate, and the memcpy peak
#   mpi_rma_bench     (mpirun -np 2)  the same patterns through MPI-3 RMA
#   ucx_perftest      (server + client on localhost, shared-memory transports)
#                                     ucp_put_lat, ucp_put_bw, ucp_fadd
# then prints one table per pattern and checks two targets:
#   bw       put bandwidth at 1 MiB >= 0.9 x single-thread memcpy of the same
#            size, measured by gpurma-bench in the same run
#   latency  8-byte ping-pong one-way latency <= MPI-3 RMA's data + flag
#            ping-pong with flushes
# With --port-ucx the two ranks act as two nodes (GPURMA_NODE_ID), so gpurma
# goes through the port engine over UCX, both it and ucx_perftest use
# UCX_TLS=tcp (default), and the targets are those of the port engine:
#   bw       put bandwidth at 1 MiB and at 8, 16, 32 and 64 KiB >= 0.9 x
#            ucx_perftest's ucp_put_bw
#   latency  8-byte ping-pong <= 1.2 x ucx_perftest's ucp_put_lat
#   atomic   fetch_add rate >= 0.9 x ucx_perftest's ucp_fadd
# The three programs alternate for --rounds rounds and every number shown is
# the median over the rounds, so that one noisy moment on a shared machine
# does not decide a comparison.
#
# Exit: 0 when everything ran (whatever the targets say; with --strict, 1 when
# a target is missed), 2 on a usage error, 3 when gpurma-bench cannot run.
set -u

usage() {
    cat <<'EOF'
Usage: gpurma-bench-compare [options]
Compares gpurma's host backend with MPI-3 RMA (mpi_rma_bench) and
ucx_perftest between two processes of this node, and checks the targets
(put bandwidth at 1 MiB >= 0.9 x memcpy; 8 B ping-pong latency <= MPI-3 RMA).

  --quick          fewer sizes and iterations (well under a minute)
  --min SIZE       smallest message (default 8)
  --max SIZE       largest message (default 4m; --quick: 1m)
  --rounds N       rounds of all three programs, medians shown (default 3;
                   --quick: 1)
  --no-mpi         skip mpi_rma_bench
  --no-ucx         skip ucx_perftest
  --port-ucx       the ranks as two nodes: gpurma's port engine over UCX
                   against ucx_perftest, both over UCX_TLS (default tcp);
                   targets: bw (1 MiB; 8-64 KiB) and fetch_add >= 0.9 x,
                   8 B latency <= 1.2 x ucx_perftest
  --strict         exit 1 when a target is missed
  --keep DIR       keep every raw output in DIR
  -h, --help       this text

Binaries are looked for in this order: $GPURMA_BENCH / $MPI_RMA_BENCH /
$UCX_PERFTEST, the build tree this script belongs to, the directory of this
script, then PATH. mpi_rma_bench is compiled with mpicc from its source when
only the source is found. Environment: MPIRUN (default mpirun), MPIRUN_ARGS
(extra launcher options, e.g. "--mca osc sm"), UCX_TLS for ucx_perftest
(default posix,sysv,cma,self).
EOF
}

QUICK=0 MIN=8 MAX= ROUNDS= USE_MPI=1 USE_UCX=1 STRICT=0 KEEP= PORT_UCX=0
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --quick) QUICK=1 ;;
    --min) MIN=${2:?--min needs a size}; shift ;;
    --max) MAX=${2:?--max needs a size}; shift ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    --no-mpi) USE_MPI=0 ;;
    --no-ucx) USE_UCX=0 ;;
    --port-ucx) PORT_UCX=1 USE_MPI=0 ;;
    --strict) STRICT=1 ;;
    --keep) KEEP=${2:?--keep needs a directory}; shift ;;
    *) echo "gpurma-bench-compare: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

to_bytes() { # 8, 64k, 1m -> bytes
    local v=${1%[bB]}
    case $v in
    *[kK]) echo $((${v%?} << 10)) ;;
    *[mM]) echo $((${v%?} << 20)) ;;
    *[!0-9]* | '') return 1 ;;
    *) echo "$v" ;;
    esac
}
if [ $QUICK = 1 ]; then
    : "${MAX:=1m}" "${ROUNDS:=1}"
    BENCH_OPTS="--iters 200 --warmup 50 --batches 5"
    UCX_ITERS=2000
else
    : "${MAX:=4m}" "${ROUNDS:=3}"
    BENCH_OPTS="--iters 1000 --warmup 100 --batches 9"
    UCX_ITERS=10000
fi
MIN_B=$(to_bytes "$MIN") && MAX_B=$(to_bytes "$MAX") && [ "$MIN_B" -gt 0 ] &&
    [ "$MIN_B" -le "$MAX_B" ] || { echo "gpurma-bench-compare: bad --min/--max" >&2; exit 2; }
case $ROUNDS in '' | *[!0-9]* | 0) echo "gpurma-bench-compare: bad --rounds" >&2; exit 2 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/gpurma-compare.XXXXXX") || exit 3
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
    if [ -n "$KEEP" ]; then
        mkdir -p "$KEEP" && cp -r "$work"/. "$KEEP"/ && echo "raw outputs kept in $KEEP" >&2
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note() { echo "gpurma-bench-compare: $*" >&2; }

# ------------------------------------------------------------------ binaries

here=$(cd "$(dirname "$0")" && pwd)
# In a build tree this script is tests/bench/; the top of the tree is two up.
top=$(cd "$here/../.." 2>/dev/null && pwd)

find_prog() { # env-value name candidates...
    local forced=$1 name=$2 c
    shift 2
    if [ -n "$forced" ]; then
        [ -x "$forced" ] && { echo "$forced"; return 0; }
        note "$forced (from the environment) is not executable"
        return 1
    fi
    for c in "$@"; do
        [ -f "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
    command -v "$name" 2>/dev/null
}

GPURMA_BENCH=$(find_prog "${GPURMA_BENCH:-}" gpurma-bench "$top/gpurma-bench" "$here/gpurma-bench") ||
    { note "gpurma-bench not found: build it (make) or put it in PATH"; exit 3; }

MPIRUN=${MPIRUN:-mpirun}
command -v "${MPIRUN%% *}" >/dev/null || { note "$MPIRUN not found (set MPIRUN)"; exit 3; }
# One core per rank where there are two; with one core, binding would fail.
if [ "$(nproc)" -ge 2 ]; then
    LAUNCH_OPTS="-np 2 --bind-to core"
else
    LAUNCH_OPTS="-np 2 --bind-to none --oversubscribe"
fi
[ "$(id -u)" = 0 ] && LAUNCH_OPTS="$LAUNCH_OPTS --allow-run-as-root"
LAUNCH_OPTS="$LAUNCH_OPTS ${MPIRUN_ARGS:-}"
launch() { timeout -k 10 "$1" $MPIRUN $LAUNCH_OPTS "${@:2}"; }

MPI_BENCH=
if [ $USE_MPI = 1 ]; then
    MPI_BENCH=$(find_prog "${MPI_RMA_BENCH:-}" mpi_rma_bench \
        "$top/tests/bench/mpi_rma_bench" "$here/mpi_rma_bench" \
        "@GPURMA_PKGLIBEXECDIR@/mpi_rma_bench")
    if [ -z "$MPI_BENCH" ] && [ -f "$here/mpi_rma_bench.c" ] && command -v mpicc >/dev/null; then
        note "compiling mpi_rma_bench with mpicc"
        mpicc -std=gnu11 -O2 "$here/mpi_rma_bench.c" -o "$work/mpi_rma_bench" &&
            MPI_BENCH=$work/mpi_rma_bench
    fi
    [ -n "$MPI_BENCH" ] || { note "mpi_rma_bench not found: MPI-3 RMA columns left empty"; USE_MPI=0; }
fi

UCX_BIN=
if [ $USE_UCX = 1 ]; then
    UCX_BIN=$(find_prog "${UCX_PERFTEST:-}" ucx_perftest) ||
        { note "ucx_perftest not found: UCX columns left empty"; USE_UCX=0; }
fi
if [ $PORT_UCX = 1 ]; then
    export UCX_TLS=${UCX_TLS:-tcp}
    LAUNCH_OPTS="$LAUNCH_OPTS -x UCX_TLS"
    # Each rank its own node: other nodes are always reached through the
    # port engine over UCX.
    AS_NODES=(sh -c 'GPURMA_NODE_ID=node${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}} exec "$0" "$@"')
else
    export UCX_TLS=${UCX_TLS:-posix,sysv,cma,self}
    AS_NODES=()
fi

# ------------------------------------------------------------ machine state

# Steal and busy time during the run say how much to trust the numbers on a
# shared virtual machine.
cpu_sample() { awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6, $9; exit}' /proc/stat 2>/dev/null; }
CPU0=$(cpu_sample)
LOAD0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
T0=$(date +%s)

# ------------------------------------------------------------------ runs

SIZES=()
s=$MIN_B
while [ "$s" -le "$MAX_B" ]; do SIZES+=("$s"); s=$((s * 2)); done

# One ucx_perftest test: a server in the background, the client retrying
# until the server listens. Leaves the client's last CSV line in UCX_LINE
# (not printed: a command substitution would hide SERVER_PID from cleanup).
ucx_run() { # test size iters
    local port=$((20000 + RANDOM % 20000)) try out=
    local cores_s= cores_c=
    [ "$(nproc)" -ge 2 ] && cores_s="-c 0" cores_c="-c 1"
    timeout -k 5 60 "$UCX_BIN" -p $port $cores_s >>"$work/ucx-server.log" 2>&1 &
    SERVER_PID=$!
    for try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        sleep 0.1
        out=$(timeout -k 5 60 "$UCX_BIN" 127.0.0.1 -p $port $cores_c -t "$1" -s "$2" -n "$3" \
            -w $(($3 / 10 + 1)) -v 2>>"$work/ucx-client.log") && break
        out=
        kill -0 $SERVER_PID 2>/dev/null || break
    done
    kill $SERVER_PID 2>/dev/null
    wait $SERVER_PID 2>/dev/null
    SERVER_PID=
    UCX_LINE=$(echo "$out" | tr -d ' ' | grep -E '^[0-9]+,' | tail -1)
}

ucx_iters() { # size -> iterations: like the benchmarks, fewer for large sizes
    local n=$((33554432 / $1))
    [ $n -gt $UCX_ITERS ] && n=$UCX_ITERS
    # Emulated RMA over TCP needs a longer run before its rate settles.
    local floor=20
    [ $PORT_UCX = 1 ] && floor=200
    [ $n -lt $floor ] && n=$floor
    echo $n
}

ucx_sweep() { # output file
    local s n out=$1
    : >"$out"
    for s in "${SIZES[@]}"; do
        n=$(ucx_iters "$s")
        # -v columns: iterations,50%_lat(us),avg_lat,overall_lat,avg_bw(MB/s),overall_bw,avg_mr,overall_mr
        ucx_run ucp_put_lat "$s" "$n"
        [ -n "$UCX_LINE" ] && echo "latency,$s,$(echo "$UCX_LINE" | cut -d, -f2)" >>"$out"
        ucx_run ucp_put_bw "$s" "$n"
        # UCX's MB is 2^20 bytes; the tables use GB = 1e9 bytes.
        [ -n "$UCX_LINE" ] &&
            echo "bw,$s,$(echo "$UCX_LINE" | awk -F, '{printf "%.6g", $6 * 1048576 / 1e9}')" >>"$out"
    done
    ucx_run ucp_fadd 8 $((UCX_ITERS * 10))
    [ -n "$UCX_LINE" ] &&
        echo "atomic,8,$(echo "$UCX_LINE" | awk -F, '{printf "%.6g", $8 / 1e6}')" >>"$out"
}

# The three programs alternate, round after round, and every cell of the
# tables is the median over the rounds: load from other work on a shared
# machine then hits all of them alike instead of deciding a comparison.
for r in $(seq "$ROUNDS"); do
    note "round $r of $ROUNDS: gpurma-bench (${#SIZES[@]} sizes, $MIN_B B .. $MAX_B B)"
    if ! launch 300 "${AS_NODES[@]}" "$GPURMA_BENCH" --csv --min "$MIN_B" --max "$MAX_B" $BENCH_OPTS \
        >"$work/gpurma.$r.csv" 2>>"$work/gpurma.err"; then
        note "gpurma-bench failed:"; cat "$work/gpurma.err" >&2; exit 3
    fi
    if [ $USE_MPI = 1 ]; then
        note "round $r of $ROUNDS: mpi_rma_bench"
        launch 300 "$MPI_BENCH" --csv --min "$MIN_B" --max "$MAX_B" $BENCH_OPTS \
            >"$work/mpi.$r.csv" 2>>"$work/mpi.err" ||
            { note "mpi_rma_bench failed (MPI columns left empty):"; cat "$work/mpi.err" >&2
              USE_MPI=0; }
    fi
    if [ $USE_UCX = 1 ]; then
        note "round $r of $ROUNDS: ucx_perftest (UCX_TLS=$UCX_TLS)"
        ucx_sweep "$work/ucx.$r.csv"
        [ -s "$work/ucx.$r.csv" ] || { note "ucx_perftest produced nothing (see --keep logs)"; USE_UCX=0; }
    fi
done

CPU1=$(cpu_sample)
ELAPSED=$(($(date +%s) - T0))

# ------------------------------------------------------------------ report

# Per (test, size), the median over the rounds of each numeric column.
# gpurma: test,size,gpurma,peer,ratio,unit -> test,size,gpurma,peer,ratio
# mpi:    test,size,value,unit             -> test,size,value
# ucx:    test,size,value                  -> test,size,value
merge_rounds() { # prefix ncolumns
    cat "$work/$1".*.csv 2>/dev/null | awk -F, -v nc="$2" '
    function med(list,    n, v, i, j, t) {
        n = split(list, v, " ")
        for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    $1 ~ /^(latency|bw|atomic)$/ {
        k = $1 "," $2
        if (!(k in seen)) { seen[k] = 1; order[++n] = k }
        for (c = 3; c < 3 + nc; c++) col[k, c] = col[k, c] " " $c
    }
    END { for (i = 1; i <= n; i++) { k = order[i]; line = k
              for (c = 3; c < 3 + nc; c++) line = line "," med(col[k, c])
              print line } }'
}
merge_rounds gpurma 3 >"$work/gpurma.csv"
merge_rounds mpi 1 >"$work/mpi.csv"
merge_rounds ucx 1 >"$work/ucx.csv"

report() {
    awk -F, '
    FILENAME ~ /gpurma.csv$/ { key = $1 SUBSEP $2; g[key] = $3; peer[key] = $4
                               sizes[$1] = sizes[$1] " " $2; next }
    FILENAME ~ /mpi.csv$/    { m[$1 SUBSEP $2] = $3; next }
    FILENAME ~ /ucx.csv$/    { u[$1 SUBSEP $2] = $3; next }
    function cell(v) { return v == "" ? sprintf("%12s", "-") : sprintf("%12.3f", v) }
    function ratio(a, b) { return (a == "" || b == "" || b == 0) ? sprintf("%9s", "-") : sprintf("%9.2f", a / b) }
    function table(t, title, unit, extra,    n, list, i, k, s) {
        if (!(t in sizes)) return
        printf "\n== %s (%s)\n", title, unit
        printf "%10s %12s %12s %9s %12s %9s%s\n", "size(B)", "gpurma", "MPI-3 RMA", "g/MPI",
               "ucx_perftest", "g/ucx", extra != "" ? sprintf(" %12s", extra) : ""
        n = split(sizes[t], list, " ")
        for (i = 1; i <= n; i++) {
            s = list[i]; k = t SUBSEP s
            printf "%10d %s %s %s %s %s%s\n", s, cell(g[k]), cell(m[k]), ratio(g[k], m[k]),
                   cell(u[k]), ratio(g[k], u[k]), extra != "" ? " " cell(peer[k]) : ""
        }
    }
    END {
        table("latency", "put+signal ping-pong, one-way latency; lower is better", "us", "")
        table("bw", "put bandwidth, 64 puts + flush; higher is better", "GB/s", "memcpy")
        table("atomic", "fetch_add rate, one at a time; higher is better", "Mop/s", "local")
    }' "$work/gpurma.csv" "$work/mpi.csv" "$work/ucx.csv" 2>/dev/null
}

touch "$work/mpi.csv" "$work/ucx.csv"
echo "# gpurma-bench-compare: 2 processes on $(nproc) cores, $(uname -n), ${ELAPSED}s"
echo "# gpurma-bench: $GPURMA_BENCH"
[ $USE_MPI = 1 ] && echo "# MPI-3 RMA:    $MPI_BENCH ($(grep -m1 '^# mpi_rma_bench' "$work/mpi.1.csv" | sed 's/^# mpi_rma_bench: //'))"
[ $USE_UCX = 1 ] && echo "# ucx_perftest: $UCX_BIN, UCX_TLS=$UCX_TLS (latency: 50th percentile; fadd: overall rate)"
if [ -n "$CPU0" ] && [ -n "$CPU1" ]; then
    echo "$CPU0 $CPU1" | awk '{busy = $4 - $1; idle = $5 - $2; steal = $6 - $3; tot = busy + idle + steal
        noisy = (steal > 0.05 * tot) ? " (numbers are noisy)" : ""
        if (tot > 0) printf("# cpu during the run: %.0f%% busy, %.0f%% stolen by the hypervisor%s\n",
            100 * busy / tot, 100 * steal / tot, noisy) }'
fi
[ -n "$LOAD0" ] && awk -v l="$LOAD0" -v n="$(nproc)" 'BEGIN {
    printf "# load average before the run: %s%s\n", l,
        (l > n) ? " (other work shares these cores: expect noise)" : "" }'
echo "# ratios are gpurma / other"
report

# ------------------------------------------------------------------ targets

# The per-round values behind each target, then their medians (merged).
per_round() { # prefix test size column
    for f in "$work/$1".*.csv; do
        [ -f "$f" ] && awk -F, -v t="$2" -v s="$3" -v c="$4" '$1 == t && $2 == s {printf "%.3g ", $c}' "$f"
    done
}
pick() { awk -F, -v t="$2" -v s="$3" -v c="$4" '$1 == t && $2 == s {print $c}' "$work/$1.csv"; }
g_bw=$(pick gpurma bw 1048576 3)
g_peak=$(pick gpurma bw 1048576 4)
g_bw_ratio=$(pick gpurma bw 1048576 5)
g_lat=$(pick gpurma latency 8 3)
m_lat=$(pick mpi latency 8 3)
u_lat=$(pick ucx latency 8 3)
u_bw=$(pick ucx bw 1048576 3)

missed=0
echo
echo "== targets (median of $ROUNDS round(s))"
if [ $PORT_UCX = 1 ]; then
    # check NAME gpurma ucx op limit unit
    check() {
        if [ -z "$2" ] || [ -z "$3" ]; then
            echo "MISS  $1: not measured (gpurma '${2}', ucx_perftest '${3}')"; missed=1; return
        fi
        if awk -v g="$2" -v u="$3" -v l="$5" -v op="$4" \
            'BEGIN {r = g / u; exit !(op == "ge" ? r >= l : r <= l)}'; then verdict=PASS; else verdict=MISS; missed=1; fi
        printf "%s  %s: gpurma %.3f %s, ucx_perftest %.3f %s (%.2f x); target %s %.2f x\n" \
            $verdict "$1" "$2" "$6" "$3" "$6" "$(awk -v g="$2" -v u="$3" 'BEGIN {print g / u}')" \
            "$([ "$4" = ge ] && echo '>=' || echo '<=')" "$5"
    }
    if [ "$MIN_B" -le 1048576 ] && [ "$MAX_B" -ge 1048576 ]; then
        check "port put bandwidth at 1 MiB (UCX_TLS=$UCX_TLS)" "$g_bw" "$u_bw" ge 0.9 GB/s
    fi
    if [ "$MIN_B" -le 8 ]; then
        check "port ping-pong latency at 8 B (UCX_TLS=$UCX_TLS)" "$g_lat" "$u_lat" le 1.2 us
    fi
    # Mid sizes (issue 10): pipelined puts and fetch_add without extra round trips.
    for s in 8192 16384 32768 65536; do
        [ "$s" -ge "$MIN_B" ] && [ "$s" -le "$MAX_B" ] || continue
        check "port put bandwidth at $((s / 1024)) KiB (UCX_TLS=$UCX_TLS)" \
            "$(pick gpurma bw $s 3)" "$(pick ucx bw $s 3)" ge 0.9 GB/s
    done
    check "port fetch_add rate (UCX_TLS=$UCX_TLS)" "$(pick gpurma atomic 8 3)" \
        "$(pick ucx atomic 8 3)" ge 0.9 Mop/s
    [ $STRICT = 1 ] && [ $missed = 1 ] && exit 1
    exit 0
fi
if [ -n "$g_bw_ratio" ]; then
    if awk -v r="$g_bw_ratio" 'BEGIN {exit !(r >= 0.9)}'; then verdict=PASS; else verdict=MISS; missed=1; fi
    printf "%s  put bandwidth at 1 MiB: %.2f x single-thread memcpy of the same run; target >= 0.90 x\n" \
        $verdict "$g_bw_ratio"
    printf "      ratio in each round: %s(medians: gpurma %.2f GB/s, memcpy %.2f GB/s)\n" \
        "$(per_round gpurma bw 1048576 5)" "$g_bw" "$g_peak"
elif [ "$MIN_B" -gt 1048576 ] || [ "$MAX_B" -lt 1048576 ]; then
    echo "SKIP  put bandwidth at 1 MiB: outside --min..--max"
else
    echo "MISS  put bandwidth at 1 MiB: not measured"; missed=1
fi
if [ -n "$g_lat" ] && [ -n "$m_lat" ]; then
    if awk -v g="$g_lat" -v m="$m_lat" 'BEGIN {exit !(g <= m)}'; then verdict=PASS; else verdict=MISS; missed=1; fi
    printf "%s  ping-pong latency at 8 B: gpurma %.3f us, MPI-3 RMA %.3f us (%.2f x); target <= 1.00 x\n" \
        $verdict "$g_lat" "$m_lat" "$(awk -v g="$g_lat" -v m="$m_lat" 'BEGIN {print g / m}')"
    echo "      each round, gpurma: $(per_round gpurma latency 8 3)us; MPI-3 RMA: $(per_round mpi latency 8 3)us"
elif [ -n "$g_lat" ]; then
    printf "SKIP  ping-pong latency at 8 B: gpurma %.3f us, no MPI-3 RMA baseline\n" "$g_lat"
elif [ "$MIN_B" -gt 8 ]; then
    echo "SKIP  ping-pong latency at 8 B: outside --min..--max"
else
    echo "MISS  ping-pong latency at 8 B: not measured"; missed=1
fi
[ $STRICT = 1 ] && [ $missed = 1 ] && exit 1
exit 0
