# gpurma_mpi.m4 - --with-mpi=guess|yes|DIR|no and the test launcher.

# GPURMA_CHECK_MPI
# ----------------
# MPI is used only by the MPI bootstrap plugin and the MPI baseline
# benchmark, which are compiled with the flags of the MPI compiler wrapper
# (CC itself stays the plain compiler, so libgpurma never links MPI).
# Sets have_mpi=yes|no and substitutes MPICC, MPI_CFLAGS, MPI_LIBS.
AC_DEFUN([GPURMA_CHECK_MPI], [
AC_ARG_WITH([mpi],
  [AS_HELP_STRING([--with-mpi@<:@=guess|yes|DIR|no@:>@],
                  [MPI for the MPI bootstrap plugin: the flags of mpicc on
                   PATH, or of DIR/bin/mpicc (default: guess)])],
  [], [with_mpi=guess])
AC_ARG_VAR([MPICC], [MPI C compiler wrapper whose flags build the MPI plugin])

have_mpi=no
MPI_CFLAGS=
MPI_LIBS=
AS_CASE([$with_mpi],
  [no], [MPICC=],
  [guess|yes], [AC_PATH_PROGS([MPICC], [mpicc])],
  [AS_IF([test -z "$MPICC"], [MPICC=$with_mpi/bin/mpicc])
   AS_IF([test ! -x "$MPICC"], [AC_MSG_ERROR([--with-mpi=$with_mpi: $MPICC not found])])])

AS_IF([test -n "$MPICC"], [
  AC_MSG_CHECKING([for the compile and link flags of $MPICC])
  AS_IF([MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null` &&
         MPI_LIBS=`$MPICC --showme:link 2>/dev/null`],
    [AC_MSG_RESULT([Open MPI style (--showme)])],
    [gpurma_mpi_show=`$MPICC -show 2>/dev/null`], [
      # MPICH and derivatives: "-show" prints the whole command line; drop
      # the compiler, keep preprocessor options for compiling, the rest for
      # linking.
      AC_MSG_RESULT([MPICH style (-show)])
      MPI_CFLAGS=
      MPI_LIBS=
      set dummy $gpurma_mpi_show; shift; shift
      for gpurma_w; do
        AS_CASE([$gpurma_w],
          [-I*|-D*], [MPI_CFLAGS="$MPI_CFLAGS $gpurma_w"],
          [-pthread], [MPI_CFLAGS="$MPI_CFLAGS $gpurma_w"; MPI_LIBS="$MPI_LIBS $gpurma_w"],
          [-c], [],
          [MPI_LIBS="$MPI_LIBS $gpurma_w"])
      done],
    [AC_MSG_RESULT([unknown])
     MPI_CFLAGS=
     MPI_LIBS=])
  AC_MSG_CHECKING([whether MPI programs link with those flags])
  _GPURMA_TRY_LIB([$MPI_CFLAGS], [], [$MPI_LIBS], [mpi.h], [MPI_Init])
  AC_MSG_RESULT([$gpurma_try_ok])
  have_mpi=$gpurma_try_ok
])
AS_IF([test $have_mpi = no && test "x$with_mpi" != xguess && test "x$with_mpi" != xno],
  [AC_MSG_ERROR([--with-mpi=$with_mpi: MPI programs do not build (see config.log)])])
AS_IF([test $have_mpi = no], [MPI_CFLAGS= MPI_LIBS=])
AC_SUBST([MPI_CFLAGS])
AC_SUBST([MPI_LIBS])
])

# GPURMA_TEST_LAUNCHER
# --------------------
# LAUNCHER is the command prefix tests/mp/run-mp.sh puts before "-n N prog".
# Default: mpirun from the MPI found (or PATH), with the options Open MPI needs
# to run more ranks than cores and to run as root in containers. Empty when no
# launcher is found; the multi-process tests then skip.
AC_DEFUN([GPURMA_TEST_LAUNCHER], [
AC_REQUIRE([GPURMA_CHECK_MPI])
AC_ARG_VAR([LAUNCHER], [command that starts the multi-process tests, given
            "-n N program" (default: mpirun --oversubscribe --allow-run-as-root)])
AS_IF([test "${LAUNCHER+set}" != set], [
  gpurma_mpirun=
  AS_IF([test -n "$MPICC"], [
    gpurma_d=`AS_DIRNAME(["$MPICC"])`
    AS_IF([test -x "$gpurma_d/mpirun"], [gpurma_mpirun=$gpurma_d/mpirun])])
  AS_IF([test -z "$gpurma_mpirun"], [
    AC_PATH_PROGS([gpurma_path_mpirun], [mpirun mpiexec])
    gpurma_mpirun=$gpurma_path_mpirun])
  AC_MSG_CHECKING([for the test launcher])
  AS_IF([test -z "$gpurma_mpirun"], [LAUNCHER=],
        [$gpurma_mpirun --version 2>&1 | grep -E 'Open MPI|OpenRTE' >/dev/null],
          [LAUNCHER="$gpurma_mpirun --oversubscribe --allow-run-as-root"],
        [LAUNCHER=$gpurma_mpirun])
  AC_MSG_RESULT([${LAUNCHER:-none}])
])
])
