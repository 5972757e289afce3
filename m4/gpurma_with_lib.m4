# gpurma_with_lib.m4 - --with-PKG=guess|yes|DIR|no for an ordinary C library.
#
# The four answers mean:
#   guess (default)  use it when it is found (pkg-config, then the compiler's
#                    default search paths), go on without it otherwise
#   yes              as guess, but stop configure when it is not found
#   DIR              look only under DIR (DIR/include, DIR/lib64 or DIR/lib)
#                    and stop configure when it is not there
#   no               do not use it

# _GPURMA_TRY_LIB(CPPFLAGS, LDFLAGS, LIBS, HEADER, FUNCTION)
# ----------------------------------------------------------
# Sets gpurma_try_ok to yes when a program that includes HEADER and takes the
# address of FUNCTION compiles and links with the given flags. Uses no cache
# variable on purpose: the same header is probed with several flag sets.
AC_DEFUN([_GPURMA_TRY_LIB], [
  gpurma_save_CPPFLAGS=$CPPFLAGS
  gpurma_save_LDFLAGS=$LDFLAGS
  gpurma_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $1"
  LDFLAGS="$LDFLAGS $2"
  LIBS="$3 $LIBS"
  AC_LINK_IFELSE(
    [AC_LANG_PROGRAM([[#include <$4>]],
      [[void (*volatile fp)(void) = (void (*)(void))$5; return fp == 0;]])],
    [gpurma_try_ok=yes], [gpurma_try_ok=no])
  CPPFLAGS=$gpurma_save_CPPFLAGS
  LDFLAGS=$gpurma_save_LDFLAGS
  LIBS=$gpurma_save_LIBS
])

# GPURMA_WITH_LIB(NAME, DESCRIPTION, PKG-CONFIG-MODULE, HEADER, FUNCTION, LIBS,
#                 HELP)
# -----------------------------------------------------------------------------
# Adds --with-NAME (HELP says what it is for). Sets have_NAME=yes|no and substitutes NAME_CPPFLAGS,
# NAME_LDFLAGS (-L and run-path options) and NAME_LIBS (-l options), NAME in
# upper case. Defining HAVE_NAME and the conditional is left to the caller.
AC_DEFUN([GPURMA_WITH_LIB], [
m4_pushdef([GPURMA_UP], m4_toupper([$1]))dnl
AC_REQUIRE([GPURMA_PROG_PKG_CONFIG])dnl
AC_ARG_WITH([$1],
  [AS_HELP_STRING([--with-$1@<:@=guess|yes|DIR|no@:>@],
                  [$7 (default: guess)])],
  [], [with_$1=guess])
have_$1=no
GPURMA_UP[]_CPPFLAGS=
GPURMA_UP[]_LDFLAGS=
GPURMA_UP[]_LIBS=
AS_CASE([$with_$1],
  [no], [],
  [guess|yes], [
    AC_MSG_CHECKING([for $2 with pkg-config module $3])
    AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists $3], [
      gpurma_cppflags=`$PKG_CONFIG --cflags $3`
      gpurma_ldflags=`$PKG_CONFIG --libs-only-L --libs-only-other $3`
      gpurma_libs=`$PKG_CONFIG --libs-only-l $3`
      _GPURMA_TRY_LIB([$gpurma_cppflags], [$gpurma_ldflags], [$gpurma_libs], [$4], [$5])
      AC_MSG_RESULT([$gpurma_try_ok])
      AS_IF([test $gpurma_try_ok = yes], [
        have_$1=yes
        GPURMA_UP[]_CPPFLAGS=$gpurma_cppflags
        GPURMA_UP[]_LDFLAGS=$gpurma_ldflags
        GPURMA_UP[]_LIBS=$gpurma_libs])
    ], [AC_MSG_RESULT([no])])
    AS_IF([test $have_$1 = no], [
      AC_MSG_CHECKING([for $2 in the default paths])
      _GPURMA_TRY_LIB([], [], [$6], [$4], [$5])
      AC_MSG_RESULT([$gpurma_try_ok])
      AS_IF([test $gpurma_try_ok = yes], [
        have_$1=yes
        GPURMA_UP[]_LIBS="$6"])
    ])
  ], [
    AS_IF([test ! -d "$with_$1"],
      [AC_MSG_ERROR([--with-$1=$with_$1: no such directory])])
    for gpurma_libdir in "$with_$1/lib64" "$with_$1/lib"; do
      test -d "$gpurma_libdir" || continue
      AC_MSG_CHECKING([for $2 in $with_$1 (libraries in $gpurma_libdir)])
      gpurma_cppflags="-I$with_$1/include"
      gpurma_ldflags="-L$gpurma_libdir -Wl,-rpath,$gpurma_libdir"
      _GPURMA_TRY_LIB([$gpurma_cppflags], [$gpurma_ldflags], [$6], [$4], [$5])
      AC_MSG_RESULT([$gpurma_try_ok])
      AS_IF([test $gpurma_try_ok = yes], [
        have_$1=yes
        GPURMA_UP[]_CPPFLAGS=$gpurma_cppflags
        GPURMA_UP[]_LDFLAGS=$gpurma_ldflags
        GPURMA_UP[]_LIBS="$6"
        break])
    done
  ])
AS_IF([test $have_$1 = no && test "x$with_$1" != xguess && test "x$with_$1" != xno],
  [AC_MSG_ERROR([--with-$1=$with_$1 was given but $2 was not found (see config.log)])])
AC_SUBST(GPURMA_UP[]_CPPFLAGS)
AC_SUBST(GPURMA_UP[]_LDFLAGS)
AC_SUBST(GPURMA_UP[]_LIBS)
m4_popdef([GPURMA_UP])dnl
])

# GPURMA_PROG_PKG_CONFIG
# ----------------------
# pkg-config is optional: without it the default paths are still probed. The
# macro is ours so that autogen.sh does not need pkg.m4.
AC_DEFUN([GPURMA_PROG_PKG_CONFIG], [
  AC_ARG_VAR([PKG_CONFIG], [path to the pkg-config utility])
  AC_PATH_TOOL([PKG_CONFIG], [pkg-config])
])
