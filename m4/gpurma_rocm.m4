# gpurma_rocm.m4 - --with-rocm=guess|yes|DIR|no.
#
# ROCm support needs hipcc (for .hip sources) and libamdhip64 with its
# headers. Sets have_rocm=yes|no and substitutes HIPCC, HIPCCFLAGS, ROCM_HOME,
# ROCM_CPPFLAGS, ROCM_LDFLAGS and ROCM_LIBS. Defining HAVE_ROCM is left to
# configure.ac (CUDA and ROCm exclude each other).

# _GPURMA_ROCM_TRY(DIR)
AC_DEFUN([_GPURMA_ROCM_TRY], [
  gpurma_rocm_dir=$1
  gpurma_hipcc=${HIPCC:-$gpurma_rocm_dir/bin/hipcc}
  AC_MSG_CHECKING([for ROCm in $gpurma_rocm_dir])
  gpurma_rocm_libdir=
  for gpurma_d in "$gpurma_rocm_dir/lib" "$gpurma_rocm_dir/lib64"; do
    AS_IF([test -f "$gpurma_d/libamdhip64.so"], [gpurma_rocm_libdir=$gpurma_d; break])
  done
  AS_IF([test ! -x "$gpurma_hipcc"], [AC_MSG_RESULT([no ($gpurma_hipcc not found)])],
        [test -z "$gpurma_rocm_libdir"], [AC_MSG_RESULT([no (no libamdhip64.so)])],
    [AC_MSG_RESULT([yes])
     AC_MSG_CHECKING([whether a C program links with libamdhip64])
     # The HIP runtime headers need the platform chosen when not using hipcc.
     _GPURMA_TRY_LIB([-D__HIP_PLATFORM_AMD__ -I$gpurma_rocm_dir/include],
                     [-L$gpurma_rocm_libdir -Wl,-rpath,$gpurma_rocm_libdir],
                     [-lamdhip64], [hip/hip_runtime_api.h], [hipGetDeviceCount])
     AC_MSG_RESULT([$gpurma_try_ok])
     AS_IF([test $gpurma_try_ok = yes], [
       have_rocm=yes
       HIPCC=$gpurma_hipcc
       ROCM_HOME=$gpurma_rocm_dir
       ROCM_CPPFLAGS="-D__HIP_PLATFORM_AMD__ -I$gpurma_rocm_dir/include"
       ROCM_LDFLAGS="-L$gpurma_rocm_libdir -Wl,-rpath,$gpurma_rocm_libdir"
       ROCM_LIBS=-lamdhip64])])
])

AC_DEFUN([GPURMA_CHECK_ROCM], [
AC_ARG_WITH([rocm],
  [AS_HELP_STRING([--with-rocm@<:@=guess|yes|DIR|no@:>@],
                  [ROCm: hipcc and the HIP runtime (default: guess)])],
  [], [with_rocm=guess])
AC_ARG_VAR([HIPCC], [HIP compiler (default: DIR/bin/hipcc of the ROCm found)])
AC_ARG_VAR([HIPCCFLAGS], [extra flags for HIPCC, e.g. --offload-arch=gfx90a (default: -O2)])

gpurma_env_rocm_dirs="$ROCM_PATH $ROCM_HOME"
have_rocm=no
ROCM_HOME=
ROCM_CPPFLAGS=
ROCM_LDFLAGS=
ROCM_LIBS=
AS_CASE([$with_rocm],
  [no], [],
  [guess|yes], [
    for gpurma_dir in $gpurma_env_rocm_dirs /opt/rocm; do
      _GPURMA_ROCM_TRY([$gpurma_dir])
      test $have_rocm = yes && break
    done
  ], [
    _GPURMA_ROCM_TRY([$with_rocm])
  ])
AS_IF([test $have_rocm = no && test "x$with_rocm" != xguess && test "x$with_rocm" != xno],
  [AC_MSG_ERROR([--with-rocm=$with_rocm was given but no usable ROCm was found (see config.log)])])
AS_IF([test $have_rocm = yes], [: ${HIPCCFLAGS="-O2"}])
AC_SUBST([ROCM_HOME])
AC_SUBST([ROCM_CPPFLAGS])
AC_SUBST([ROCM_LDFLAGS])
AC_SUBST([ROCM_LIBS])
])
