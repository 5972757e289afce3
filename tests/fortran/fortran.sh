#!/bin/sh
# fortran.sh - tests/fortran/test_fortran (every binding of the gpurma module
# beyond the Jacobi example's) under the launcher at 1-4 and 8 ranks. Skips
# (77) when the build has no Fortran compiler or is sanitized.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
prog=$top_builddir/tests/fortran/test_fortran
test -x "$prog" || { echo "SKIP: no Fortran module in this build"; exit 77; }
GPURMA_TEST_RANKS=${GPURMA_TEST_RANKS:-"1 2 3 4 8"}
export GPURMA_TEST_RANKS
exec sh "$top_srcdir/tests/mp/run-mp.sh" "$prog"
