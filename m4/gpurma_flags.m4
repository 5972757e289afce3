# gpurma_flags.m4 - compiler flag probes.

# GPURMA_APPEND_CFLAGS_IF_SUPPORTED(VARIABLE, FLAG...)
# ------------------------------------------------------
# Appends to the shell VARIABLE each FLAG the C compiler accepts. -Werror is
# added while probing so that a compiler which only warns about an unknown
# flag still counts as rejecting it.
AC_DEFUN([GPURMA_APPEND_CFLAGS_IF_SUPPORTED], [
  for gpurma_flag in $2; do
    AC_MSG_CHECKING([whether $CC accepts $gpurma_flag])
    gpurma_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $gpurma_flag"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AC_MSG_RESULT([yes]); $1="[$]$1 $gpurma_flag"],
      [AC_MSG_RESULT([no])])
    CFLAGS=$gpurma_save_CFLAGS
  done
])

# GPURMA_REQUIRE_LDFLAGS(DESCRIPTION, FLAGS)
# ------------------------------------------
# Appends FLAGS to CFLAGS and LDFLAGS, or stops configure when a program
# built with them does not link (sanitizer runtimes are packaged separately).
AC_DEFUN([GPURMA_REQUIRE_LDFLAGS], [
  AC_MSG_CHECKING([whether $CC can build with $2])
  gpurma_save_CFLAGS=$CFLAGS
  gpurma_save_LDFLAGS=$LDFLAGS
  CFLAGS="$CFLAGS $2"
  LDFLAGS="$LDFLAGS $2"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     CFLAGS=$gpurma_save_CFLAGS
     LDFLAGS=$gpurma_save_LDFLAGS
     AC_MSG_ERROR([$1 was requested but $CC cannot link with $2])])
])
