#!/bin/bash
# readme-recipe.sh - what the README tells a new user, done as written:
#   1. the minimal program (taken from README.md itself) built with
#      `cc app.c $(pkg-config --cflags --libs gpurma)` against an installed
#      gpurma runs without LD_LIBRARY_PATH (the rpath of gpurma.pc);
#   2. the installed gpurma-bench-compare finds mpi_rma_bench;
#   3. examples/slurm/one-node-slurm.sh start, `srun --mpi=pmix -n 4 ./app`,
#      stop: the ring's four messages arrive.
# Install into a temporary DESTDIR; pkg-config is pointed at it by
# redefining prefix. Exit 77 without pkg-config, or (step 3 only) without
# Slurm, munge or root.
set -u
FL_NAME=readme-recipe
. "$(dirname "$0")/../fault/fault-lib.sh"
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config not installed"; exit 77; }
[ "${HAVE_PMIX:-yes}" = no ] && { echo "SKIP: gpurma was built without PMIx"; exit 77; }
fl_init
W=$FL_WORK
chmod 755 "$W"
build=${top_builddir:-$FL_TOP}

make -C "$build" install DESTDIR="$W/root" >"$W/install.log" 2>&1 ||
    { fl_show "$W/install.log" | tail -30; fl_fail "make install DESTDIR"; fl_finish; }
pc=$(find "$W/root" -name gpurma.pc | head -n 1)
[ -n "$pc" ] || { fl_fail "no gpurma.pc installed"; fl_finish; }
prefix=$(sed -n 's/^prefix=//p' "$pc")
export PKG_CONFIG_PATH=$(dirname "$pc")
PC="pkg-config --define-variable=prefix=$W/root$prefix"

# 1. The README's minimal program, exactly as printed there.
awk '/^## Minimal program/ {on = 1} on && /^```c$/ {grab = 1; next}
     grab && /^```$/ {exit} grab {print}' "$FL_TOP/README.md" >"$W/app.c"
grep -q gpurma_put_signal "$W/app.c" || { fl_fail "no minimal program found in README.md"; fl_finish; }
# A sanitized libgpurma needs its runtime linked first (the user would too).
san=
for s in ${GPURMA_SANITIZERS:-}; do san="$san -fsanitize=$s"; done
if cc "$W/app.c" $san $($PC --cflags --libs gpurma) -o "$W/app" >"$W/cc.log" 2>&1; then
    out=$(cd "$W" && env -u LD_LIBRARY_PATH timeout 60 ./app 2>&1)
    if echo "$out" | grep -q '0 got "hello from 0"'; then
        fl_ok "cc app.c \$(pkg-config --cflags --libs gpurma) runs without LD_LIBRARY_PATH"
    else
        fl_fail "the README program did not run: $out"
    fi
else
    fl_fail "cc app.c \$(pkg-config ...): $(cat "$W/cc.log")"
fi

# 1b. The Fortran module, installed: examples/jacobi.f90 built with
#     gpurma-fortran.pc (as docs/mpi-rma.md says) checks itself on one rank.
if command -v gfortran >/dev/null && [ -f "$(dirname "$pc")/gpurma-fortran.pc" ] &&
    [ -z "${GPURMA_SANITIZERS:-}" ]; then
    if gfortran "$FL_TOP/examples/jacobi.f90" $($PC --cflags --libs gpurma-fortran) \
        -o "$W/jacobi_f" >"$W/fc.log" 2>&1; then
        out=$(cd "$W" && env -u LD_LIBRARY_PATH timeout 60 ./jacobi_f 33 21 15 --check 2>&1)
        if echo "$out" | grep -q "matches the serial run"; then
            fl_ok "gfortran jacobi.f90 \$(pkg-config --cflags --libs gpurma-fortran) runs"
        else
            fl_fail "installed Fortran module: jacobi_f: $out"
        fi
    else
        fl_fail "gfortran with gpurma-fortran.pc: $(cat "$W/fc.log")"
    fi
fi

# 2. The installed comparison script finds the installed MPI baseline.
if [ "${HAVE_MPI_PLUGIN:-yes}" = yes ]; then
    bin=$(find "$W/root" -name gpurma-bench-compare -type f | head -n 1)
    mrb=$(find "$W/root" -name mpi_rma_bench -type f | head -n 1)
    if [ -n "$mrb" ] && grep -q "$(dirname "${mrb#$W/root}")/mpi_rma_bench" "$bin"; then
        fl_ok "mpi_rma_bench installed where gpurma-bench-compare looks (${mrb#$W/root})"
    else
        fl_fail "mpi_rma_bench not installed where gpurma-bench-compare looks ('${mrb#$W/root}')"
    fi
fi

# 3. The one-node Slurm recipe.
for tool in slurmctld slurmd srun munged mungekey; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
        { echo "SKIP (step 3): $tool not installed"; fl_finish; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP (step 3): a private Slurm needs root"; fl_finish; }
recipe=$FL_TOP/examples/slurm/one-node-slurm.sh
stop_slurm() { "$recipe" stop "$W/slurm" >/dev/null 2>&1; }
FL_EXTRA_CLEANUP=stop_slurm
if ! conf=$("$recipe" start "$W/slurm" 2>"$W/start.log"); then
    fl_fail "one-node-slurm.sh start: $(tail -20 "$W/start.log")"
    fl_finish
fi
eval "$conf"
t0=$(fl_now_ms)
(cd "$W" && timeout -k 10 120 srun --mpi=pmix -n 4 --time=2 ./app) >"$W/srun.out" 2>&1
rc=$?
n=$(grep -c 'got "hello from' "$W/srun.out")
if [ $rc = 0 ] && [ "$n" = 4 ]; then
    fl_ok "srun --mpi=pmix -n 4 ./app on the one-node recipe: 4 messages ($(($(fl_now_ms) - t0)) ms)"
else
    fl_fail "srun --mpi=pmix -n 4 ./app: exit $rc, $n of 4 messages"
    fl_show "$W/srun.out"
fi
fl_finish
