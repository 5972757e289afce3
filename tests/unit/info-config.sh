#!/bin/bash
# info-config.sh - gpurma-info prints every variable with what it accepts,
# marks a value the library rejects, still prints everything, and exits 1.
#
# Usage: info-config.sh   (finds gpurma-info in $top_builddir, else next to
# the source tree). Exit: 0 pass, 1 fail.
set -u

here=$(cd "$(dirname "$0")" && pwd)
info=${top_builddir:-$here/../..}/gpurma-info
[ -x "$info" ] || { echo "FAIL: $info not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gpurma-info.XXXXXX")
trap 'rm -rf "$work"' EXIT

for v in $(compgen -e | grep '^GPURMA_'); do unset "$v"; done
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run NAME [VAR=value...] -- gpurma-info arguments; sets rc, output in $work/NAME
run() {
    local name=$1
    shift
    local env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    env "${env[@]}" "$info" "$@" >"$work/$name" 2>&1
    rc=$?
}
has() { grep -qF -- "$2" "$work/$1" || fail "$1: no line with '$2'"; }
variables() { grep -c '^  [ *!] GPURMA_' "$work/$1"; }

run clean -- -c
[ "$rc" = 0 ] || fail "clean: exit $rc, expected 0"
has clean "accepts an integer from 1 to 604800000 (milliseconds)"
has clean "accepts one of auto, mem, port, switch"
has clean "accepts one of error, warn, info, debug, trace"
has clean "accepts a comma-separated list of init, boot, win, rma, mem, port, all"
has clean "accepts auto, host or a GPU ordinal (0 or more)"
has clean "accepts one of 1, 0, yes, no, true, false, on, off"
grep -q '^  ! ' "$work/clean" && fail "clean: a variable is marked invalid"
all=$(variables clean)
[ "$all" -ge 10 ] || fail "clean: only $all variables printed"

run valid GPURMA_TIMEOUT_MS=0x10 GPURMA_ENGINE=PORT GPURMA_DISABLE_SWITCH=on -- -c
[ "$rc" = 0 ] || fail "valid: exit $rc, expected 0"
grep -q '^  \* GPURMA_ENGINE  *= PORT ' "$work/valid" || fail "valid: GPURMA_ENGINE not shown as set"

run invalid GPURMA_TIMEOUT_MS=12abc GPURMA_ENGINE=bogus GPURMA_SPIN_US=7 -- -c
[ "$rc" = 1 ] || fail "invalid: exit $rc, expected 1"
grep -q '^  ! GPURMA_TIMEOUT_MS  *= 12abc .*INVALID' "$work/invalid" ||
    fail "invalid: GPURMA_TIMEOUT_MS not marked"
grep -q '^  ! GPURMA_ENGINE  *= bogus .*INVALID' "$work/invalid" ||
    fail "invalid: GPURMA_ENGINE not marked"
grep -q '^  \* GPURMA_SPIN_US  *= 7 ' "$work/invalid" || fail "invalid: GPURMA_SPIN_US not shown as set"
has invalid "INVALID: expected an integer from 1 to 604800000 (milliseconds)"
has invalid "INVALID: expected one of auto, mem, port, switch"
has invalid "2 variable(s) marked ! hold a value gpurma does not accept"
[ "$(variables invalid)" = "$all" ] || fail "invalid: not every variable printed"

# "debug build" says what configure was given (--enable-debug), not that
# the logging macro exists (it does in every build).
config_h=${top_builddir:-$here/../..}/config.h
want_debug=no
grep -q '^#define GPURMA_ENABLE_DEBUG 1' "$config_h" 2>/dev/null && want_debug=yes
run build --
grep -Eq "^  debug build +$want_debug\$" "$work/build" ||
    fail "build: expected 'debug build $want_debug': $(grep 'debug build' "$work/build")"

# The full report too: everything printed, then the exit status.
run full GPURMA_LOG_LEVEL=loud -- --no-init
[ "$rc" = 1 ] || fail "full: exit $rc, expected 1"
has full "Build:"
has full "Engines:"
[ "$(variables full)" = "$all" ] || fail "full: not every variable printed"

if [ "$failures" -ne 0 ]; then
    for f in "$work"/*; do echo "--- ${f##*/}"; cat "$f"; done
    echo "info-config: $failures failure(s)"
    exit 1
fi
echo "info-config: PASS"
