# fault-lib.sh - helpers shared by the fault and Slurm test scripts; sourced,
# never run. The sourcing script sets FL_NAME (prefix of its messages) and
# calls fl_init first.
#
# Paths: the scripts run from "make check" (top_srcdir and top_builddir are
# exported there) or by hand from a source tree with a build in it (or in
# build/); set top_builddir to point elsewhere.

fl_init() {
    FL_TOP=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
    FL_WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpurma-$FL_NAME.XXXXXX")
    FL_PIDS=()
    FL_FAILURES=0
    trap fl_cleanup EXIT
    # Started by hand or by a launcher of ours: nothing from an outer
    # launcher (torchrun, mpirun, srun) may steer the bootstrap selection.
    unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT LOCAL_RANK LOCAL_WORLD_SIZE \
        TORCHELASTIC_RUN_ID GPURMA_BOOTSTRAP GPURMA_NODE_ID GPURMA_UID_ADDR \
        GPURMA_UID_TOKEN GPURMA_ENGINE PMIX_RANK PMIX_NAMESPACE \
        OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE
}

# Kills what this script started, by pid only.
fl_cleanup() {
    local p
    for p in "${FL_PIDS[@]}"; do
        [ -n "$p" ] && kill -9 "$p" 2>/dev/null
    done
    [ -n "${FL_EXTRA_CLEANUP:-}" ] && $FL_EXTRA_CLEANUP
    [ -n "${FL_KEEP_WORK:-}" ] || rm -rf "$FL_WORK"
}

fl_fail() {
    echo "FAIL: $*"
    FL_FAILURES=$((FL_FAILURES + 1))
}

fl_ok() { echo "ok: $*"; }

fl_now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A random TCP port that no socket of this machine uses now (read from
# /proc/net, so that nothing beyond bash and coreutils is needed).
fl_free_port() {
    local port hex i lo=32768 span
    # Below the kernel's ephemeral range: a client that hammers the port
    # before its server listens (uid-flood) can otherwise be given that very
    # port as its own and connect to itself (TCP self-connect), holding it.
    read -r lo _ 2>/dev/null </proc/sys/net/ipv4/ip_local_port_range || lo=32768
    span=$((lo - 10000))
    [ "$span" -ge 1000 ] || span=0
    for ((i = 0; i < 200; i++)); do
        if [ "$span" -gt 0 ]; then
            port=$((10000 + (RANDOM * 32768 + RANDOM) % span))
        else
            port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        fi
        printf -v hex ':%04X ' "$port"
        cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q "$hex" || break
    done
    echo "$port"
}

fl_token() { echo "gpurma-test-$$-$RANDOM$RANDOM$RANDOM"; }

# fl_show FILE...: prints files, indented, for a failure report.
fl_show() {
    local f
    for f in "$@"; do
        [ -f "$f" ] && sed "s|^|    $(basename "$f"): |" "$f"
    done
}

# fl_wait_file FILE SECONDS: until FILE is non-empty.
fl_wait_file() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# fl_names_dead_rank FILE VICTIM: the first SURVIVOR line of FILE (printed by
# peer_death.c) says GPURMA_ERR_PEER_FAILED and its message names the victim
# (ignoring the reporting rank's own "rank R:" prefix and "team rank N"
# mentions of the peer it happened to wait for).
fl_names_dead_rank() {
    local line
    line=$(grep -m1 'SURVIVOR' "$1") || return 1
    case $line in *"-> GPURMA_ERR_PEER_FAILED"*) ;; *) return 1 ;; esac
    line=${line#*GPURMA_ERR_PEER_FAILED}
    line=$(echo "$line" | sed -E 's/^ \(-6\): rank [0-9]+://; s/team rank [0-9]+//g')
    echo "$line" | grep -Eq "(^|[^a-z])rank $2([^0-9]|$)"
}

# The directory holding libgpurma.so of the build under test, or nothing.
fl_libdir() {
    local d
    for d in "${top_builddir:-}" "$FL_TOP" "$FL_TOP/build"; do
        [ -n "$d" ] && [ -f "$d/.libs/libgpurma.so" ] && { echo "$d/.libs"; return 0; }
    done
    return 1
}

# fl_program REL: path of the test program REL (e.g. tests/fault/peer_death).
# Uses the one make built (check_PROGRAMS) when there is one; otherwise
# compiles REL.c against the library of the build, with the sanitizers that
# library was built with (an ASan library needs an ASan program).
fl_program() {
    local rel=$1 d
    for d in "${top_builddir:-}" "$FL_TOP" "$FL_TOP/build"; do
        if [ -n "$d" ] && [ -x "$d/$rel" ] && [ ! "$d/$rel" -ot "$FL_TOP/$rel.c" ]; then
            echo "$d/$rel"
            return 0
        fi
    done
    local lib
    lib=$(fl_libdir) || {
        echo "$FL_NAME: no libgpurma.so found (build gpurma first, or set top_builddir)" >&2
        return 1
    }
    local out=$FL_WORK/$(basename "$rel") san=
    local needed
    needed=$(readelf -d "$lib/libgpurma.so" 2>/dev/null)
    case $needed in *libasan*) san="$san -fsanitize=address -fno-omit-frame-pointer" ;; esac
    case $needed in *libubsan*) san="$san -fsanitize=undefined" ;; esac
    # shellcheck disable=SC2086
    ${CC:-cc} -std=gnu11 -g -O1 -Wall -Wextra $san -I"$FL_TOP/include" "$FL_TOP/$rel.c" \
        -o "$out" -L"$lib" -lgpurma -Wl,-rpath,"$lib" >"$FL_WORK/cc.log" 2>&1 || {
        echo "$FL_NAME: cannot compile $rel.c:" >&2
        cat "$FL_WORK/cc.log" >&2
        return 1
    }
    echo "$out"
}

# fl_launcher: the mpirun-like command of the build ($LAUNCHER from make
# check), or mpirun from PATH with the options Open MPI needs as root.
fl_launcher() {
    if [ -n "${LAUNCHER:-}" ]; then
        echo "$LAUNCHER"
    elif command -v mpirun >/dev/null 2>&1; then
        if mpirun --version 2>&1 | grep -Eq 'Open MPI|OpenRTE'; then
            echo "mpirun --oversubscribe --allow-run-as-root"
        else
            echo mpirun
        fi
    fi
}

# fl_finish: the verdict line and exit code.
fl_finish() {
    if [ "$FL_FAILURES" -ne 0 ]; then
        echo "$FL_NAME: $FL_FAILURES check(s) failed"
        exit 1
    fi
    echo "$FL_NAME: all checks passed"
    exit 0
}
