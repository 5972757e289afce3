#!/bin/bash
# .ci/suite.sh - the whole gpurma test suite, as CI runs it (.ci/run calls
# this): meant for root on a fresh Debian 12 clone, and safe to run again.
#
#   1. installs the packages of the README's install command that are
#      missing (when apt-get is there and we are root);
#   2. plain build in the source tree, as the README does it:
#      ./autogen.sh && ./configure && make, then make check (unit,
#      multi-process, fault and Slurm tests: the Automake TESTS list);
#      its GPU code for sm_90 only (CI has no GPU: the README's build makes
#      sm_80 and sm_90, and step 3 compiles compute_80 PTX), and the suite
#      through the other engines at 2 ranks (step 3 runs it at 4);
#   3. AddressSanitizer + UndefinedBehaviorSanitizer build, out of tree
#      (VPATH) in .ci/work/san-build, from a clean copy of the sources in
#      .ci/work/san-src (a tree configured in place cannot host a VPATH
#      build), then make check there with leak checking on. Its GPU code
#      is compiled to PTX for one architecture only (CI has no GPU,
#      nothing runs it, and step 2 compiled sm_90 machine code), and
#      its multi-process tests skip their most oversubscribed rank count
#      (make check MP_QUICK=1: every test still runs, at its other counts),
#      and the suite through the switch engine (its calls are the mem
#      engine's code) skips;
#   4. counts the results of both runs from Automake's .trs files.
#
# The last line printed is exactly "N passed, N failed" (skips are counted
# on the line before). A build step that fails counts as one failure.
# Exit: 0 when nothing failed, 1 otherwise.
#
# Knobs (environment): JOBS (make -j, default nproc), GPURMA_CI_TEST_TIMEOUT
# (seconds per test, default 150), GPURMA_CI_FAIL_LINES (lines of each
# failed test's log printed, default 40), GPURMA_CI_SKIP_SAN=1 (plain build only),
# GPURMA_CI_SKIP_PLAIN=1 (sanitizer build only), GPURMA_CI_NO_INSTALL=1
# (never call apt-get).
set -u

CI_DIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$CI_DIR/.." && pwd)
WORK=$CI_DIR/work
LOGS=$WORK/logs
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
TEST_TIMEOUT=${GPURMA_CI_TEST_TIMEOUT:-150}
# A hard bound on each "make check", so that CI always gets its last line.
CHECK_LIMIT=${GPURMA_CI_CHECK_LIMIT:-1500}

mkdir -p "$LOGS"
rm -f "$LOGS"/*.log
SUITE_T0=$(date +%s)

STEP_FAILURES=0
STEP_SUMMARY=()

# step NAME COMMAND...: runs COMMAND with its output in $LOGS/NAME.log;
# on failure prints the log's tail and counts one failure.
step() {
    local name=$1 t0 rc
    shift
    t0=$(date +%s)
    echo "== $name: $*"
    "$@" >"$LOGS/$name.log" 2>&1
    rc=$?
    local dt=$(($(date +%s) - t0))
    if [ $rc -eq 0 ]; then
        echo "   done in ${dt}s"
        STEP_SUMMARY+=("ok     $name (${dt}s)")
    else
        echo "   FAILED (exit $rc) after ${dt}s; last lines of $LOGS/$name.log:"
        tail -40 "$LOGS/$name.log" | sed 's/^/   | /'
        STEP_SUMMARY+=("FAILED $name (exit $rc, ${dt}s)")
        STEP_FAILURES=$((STEP_FAILURES + 1))
    fi
    return $rc
}

# ------------------------------------------------------------ 1. packages

# The README's install command is the one list; this copy is the fallback
# for a tree without README.
FALLBACK_PACKAGES="build-essential autoconf automake libtool pkg-config libpmix-dev libucx-dev
ucx-utils openmpi-bin libopenmpi-dev slurmctld slurmd slurm-client munge hipcc cmake"

readme_packages() {
    [ -f "$TOP/README.md" ] || return 1
    local line
    line=$(grep -m1 -o 'apt-get install -y [^&]*' "$TOP/README.md") || return 1
    echo "${line#apt-get install -y }"
}

install_missing_packages() {
    local pkgs missing= p
    pkgs=$(readme_packages) || pkgs=$FALLBACK_PACKAGES
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "   not a Debian system: package check skipped"
        return 0
    fi
    for p in $pkgs; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing="$missing $p"
    done
    if [ -z "$missing" ]; then
        echo "   all installed:" $pkgs
        return 0
    fi
    echo "   missing:$missing"
    if [ -n "${GPURMA_CI_NO_INSTALL:-}" ] || [ "$(id -u)" != 0 ] ||
        ! command -v apt-get >/dev/null 2>&1; then
        echo "   not installing them (not root, no apt-get, or GPURMA_CI_NO_INSTALL)"
        return 0
    fi
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get update &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y $missing
}

echo "gpurma CI suite: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $JOBS jobs, source $TOP"
step packages install_missing_packages

# ------------------------------------------------------------ 2, 3. builds

# Removes the results of an earlier run, so that only this run is counted.
clear_results() {
    rm -f "$1/test-suite.log"
    [ -d "$1/tests" ] && find "$1/tests" -name '*.trs' -type f -delete
    return 0
}

# Arguments of every make of the half being built (the sanitizer half sets
# its own).
MAKE_ARGS=()

run_check() { # BUILD_DIR [MAKE ARGS...]: make check, bounded
    local dir=$1
    shift
    cd "$dir" &&
        timeout -k 30 "$CHECK_LIMIT" make check TEST_TIMEOUT="$TEST_TIMEOUT" "${MAKE_ARGS[@]}" "$@"
}

build_check_programs() { # BUILD_DIR: everything make check needs, in parallel
    # TESTS= builds check_PROGRAMS (and runs check-local) without running
    # tests; the tests themselves then run one at a time, as multi-process
    # tests on 2 cores should.
    cd "$1" && make -j"$JOBS" check TESTS= "${MAKE_ARGS[@]}"
}

# check_step NAME BUILD_DIR [MAKE ARGS...]: make check; its exit code is kept in
# CHECK_RC[NAME] rather than counted, because failed tests are counted from
# their .trs files (a failure with no failed test is counted at the end).
declare -A CHECK_RC
check_step() {
    local name=$1 dir=$2
    shift 2
    clear_results "$dir"
    echo "== $name: make check $* in $dir (each test at most ${TEST_TIMEOUT}s)"
    local t0
    t0=$(date +%s)
    run_check "$dir" "$@" >"$LOGS/$name.log" 2>&1
    CHECK_RC[$name]=$?
    local dt=$(($(date +%s) - t0))
    echo "   exit ${CHECK_RC[$name]} after ${dt}s"
    STEP_SUMMARY+=("check  $name (exit ${CHECK_RC[$name]}, ${dt}s)")
}

plain_build() {
    cd "$TOP" || return 1
    # One architecture's machine code: ptxas once per kernel, not twice.
    MAKE_ARGS=("NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90")
    step plain-autogen ./autogen.sh &&
        step plain-configure ./configure &&
        step plain-make make -j"$JOBS" "${MAKE_ARGS[@]}" &&
        step plain-check-programs build_check_programs "$TOP" || return 1
    # tests/mp/engines.sh at 2 ranks; the sanitizer half runs 4
    GPURMA_ENGINE_RANKS=2 check_step plain-check "$TOP"
}

# A copy of the sources without anything generated or built: the tracked
# and unignored files when this is a git checkout, else the distribution
# that the plain build can make.
snapshot_sources() {
    local dest=$1
    rm -rf "$dest"
    mkdir -p "$dest"
    if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        # tracked files deleted from the work tree are left out
        (cd "$TOP" && git ls-files -z -c -o --exclude-standard -- . ':!:.ci/work' |
            tar --null --no-recursion --ignore-failed-read -T - -cf - 2>/dev/null) |
            tar -xf - -C "$dest"
    else
        (cd "$TOP" && make distdir distdir="$dest.tmp") && rm -rf "$dest" &&
            mv "$dest.tmp" "$dest"
    fi
}

san_build() {
    local src=$WORK/san-src build=$WORK/san-build
    # fast_unwind_on_malloc=0: libpmix has no frame pointers, and only full
    # allocation stacks let lsan.supp name the PMIx_Init leaks precisely
    # (instead of hiding every leak that passes through libpmix).
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    export LSAN_OPTIONS=suppressions=$CI_DIR/lsan.supp:print_suppressions=0
    step san-sources snapshot_sources "$src" || return 1
    rm -rf "$build"
    mkdir -p "$build"
    cd "$src" && step san-autogen ./autogen.sh || return 1
    cd "$build" || return 1
    # Device code that nothing here runs: PTX of one architecture only,
    # without the machine code (ptxas) of each: coll/coll_kernels.cu takes
    # 80 s instead of 6 minutes. (nvcc -G or -Xcicc -O0 would make the PTX
    # faster but the device link of tests/nvshmem/gpu_ring_rdc.mp, which
    # compiles such PTX itself, minutes slower.) The C sources, all that
    # the tests run here, are compiled as in the plain half.
    MAKE_ARGS=("NVCC_GENCODE=-gencode=arch=compute_80,code=compute_80")
    # hipcc does not take the sanitizers: the plain half compiled the HIP
    # check for both its targets; one here. The switch engine's run of the
    # suite is the mem engine's code (tests/mp/engines.sh): plain half only.
    export HIP_CHECK_ARCHS=gfx90a GPURMA_ENGINES_NO_SWITCH=1
    step san-configure "$src/configure" --enable-asan --enable-ubsan &&
        step san-make make -j"$JOBS" "${MAKE_ARGS[@]}" &&
        step san-check-programs build_check_programs "$build" || return 1
    check_step san-check "$build" MP_QUICK=1
}

if [ -z "${GPURMA_CI_SKIP_PLAIN:-}" ]; then
    plain_build
fi
if [ -z "${GPURMA_CI_SKIP_SAN:-}" ]; then
    san_build
fi

# ------------------------------------------------------------ 4. results

PASSED=0 FAILED=0 SKIPPED=0
FAILED_TESTS=()

# count_results LABEL DIR CHECKNAME
count_results() {
    local label=$1 dir=$2 check=$3 trs result name failed_before=$FAILED
    [ -n "${CHECK_RC[$check]:-}" ] || return 0 # make check never ran
    [ -d "$dir/tests" ] || return 0
    while IFS= read -r trs; do
        name=${trs#"$dir"/}
        name=${name%.trs}
        while IFS= read -r result; do
            case $result in
            PASS | XFAIL) PASSED=$((PASSED + 1)) ;;
            SKIP) SKIPPED=$((SKIPPED + 1)) ;;
            *)
                FAILED=$((FAILED + 1))
                FAILED_TESTS+=("$label: $result $name (log: $dir/$name.log)")
                ;;
            esac
            printf '   %-6s %-5s %s\n' "$label" "$result" "$name"
        done < <(sed -n 's/^:test-result: *\([A-Z]*\).*/\1/p' "$trs")
    done < <(find "$dir/tests" -name '*.trs' -type f -print | sort)
    # make check failed but no test did: check-local, a build error of a
    # test program, or the time limit. That counts as one failure.
    if [ "${CHECK_RC[$check]}" != 0 ] && [ "$FAILED" = "$failed_before" ]; then
        FAILED=$((FAILED + 1))
        FAILED_TESTS+=("$label: make check exited ${CHECK_RC[$check]} with no failed test (see $LOGS/$check.log)")
    fi
}

echo
echo "== results"
count_results plain "$TOP" plain-check
count_results san "$WORK/san-build" san-check

echo
echo "== steps"
printf '   %s\n' "${STEP_SUMMARY[@]}"
if [ ${#FAILED_TESTS[@]} -gt 0 ]; then
    echo "== failed tests"
    printf '   %s\n' "${FAILED_TESTS[@]}"
    # Each failed test's last lines here, where whoever reads only CI's
    # output (not its work tree) sees why.
    for f in "${FAILED_TESTS[@]}"; do
        log=${f##*(log: }
        log=${log%)}
        [ -f "$log" ] || continue
        echo "== last lines of $log"
        tail -n "${GPURMA_CI_FAIL_LINES:-40}" "$log" | cut -c1-400 | sed 's/^/   | /'
    done
fi
FAILED=$((FAILED + STEP_FAILURES))
echo "suite took $(($(date +%s) - SUITE_T0))s; $SKIPPED skipped; $STEP_FAILURES build/check step(s) failed"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
