#!/bin/sh
# halo-compare.sh [BX BY ITERS BATCHES] - the halo exchange of
# tests/bench/halo_compare.c at 4 and 8 ranks, with Open MPI's one-sided
# component sm and then rdma: each line compares gpurma's strided puts with
# MPI-3 RMA (MPI_Type_vector columns, fence and PSCW) measured in the same
# job, batches alternating. Ratios are MPI time / gpurma time (>= 1: gpurma
# at least as fast). Prints a table last.
top_builddir=${top_builddir:-.}
prog=$top_builddir/tests/bench/halo_compare
test -x "$prog" || { echo "build tests/bench/halo_compare first (needs MPI)"; exit 77; }
MPIRUN=${MPIRUN:-mpirun --oversubscribe}
test "$(id -u)" = 0 && MPIRUN="$MPIRUN --allow-run-as-root"
args=${*:-128 128 200 7}
out=$(mktemp)
for np in 4 8; do
    for osc in sm rdma; do
        OMPI_MCA_osc=$osc timeout -k 5 300 $MPIRUN -x OMPI_MCA_osc -np $np "$prog" $args 2>&1 |
            grep '^halo ' | tee -a "$out"
    done
done
echo
echo "| ranks | osc | gpurma (us) | MPI fence (us) | ratio | MPI PSCW (us) | ratio |"
echo "|---|---|---|---|---|---|---|"
sed -n 's/^halo .*, \([0-9]*\) ranks ([0-9x]*), osc \([a-z]*\), .*gpurma \([0-9.]*\) us | MPI fence \([0-9.]*\) us (\([0-9.x]*\)) | MPI PSCW \([0-9.]*\) us (\([0-9.x]*\)).*/| \1 | \2 | \3 | \4 | \5 | \6 | \7 |/p' "$out"
rm -f "$out"
