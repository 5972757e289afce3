# gpurma_cuda.m4 - --with-cuda=guess|yes|DIR|no and --with-cuda-arch=LIST.
#
# CUDA support needs nvcc (for .cu sources) and the runtime library cudart
# with its headers. The driver library libcuda is deliberately never linked:
# the core reaches it with dlopen, so a CUDA-enabled libgpurma still loads on
# machines that have the toolkit but no driver (CI).
#
# Sets have_cuda=yes|no and substitutes NVCC, NVCCFLAGS, CUDA_HOME,
# CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS, CUDA_ARCH_LIST, NVCC_GENCODE and
# NVCC_THREADS.
# Defining HAVE_CUDA is left to configure.ac (CUDA and ROCm exclude each other).

# _GPURMA_CUDA_TRY(DIR)
# ---------------------
# Sets have_cuda=yes and the CUDA_* variables when DIR holds a usable toolkit.
AC_DEFUN([_GPURMA_CUDA_TRY], [
  gpurma_cuda_dir=$1
  gpurma_nvcc=${NVCC:-$gpurma_cuda_dir/bin/nvcc}
  AC_MSG_CHECKING([for a CUDA toolkit in $gpurma_cuda_dir])
  gpurma_cuda_libdir=
  # lib64 is the classic layout; targets/<arch>/lib the one packages use.
  for gpurma_d in "$gpurma_cuda_dir/lib64" "$gpurma_cuda_dir"/targets/*/lib \
                  "$gpurma_cuda_dir/lib"; do
    AS_IF([test -f "$gpurma_d/libcudart.so"], [gpurma_cuda_libdir=$gpurma_d; break])
  done
  AS_IF([test ! -x "$gpurma_nvcc"], [AC_MSG_RESULT([no ($gpurma_nvcc not found)])],
        [test ! -f "$gpurma_cuda_dir/include/cuda_runtime_api.h"],
          [AC_MSG_RESULT([no (no cuda_runtime_api.h)])],
        [test -z "$gpurma_cuda_libdir"], [AC_MSG_RESULT([no (no libcudart.so)])],
    [AC_MSG_RESULT([yes])
     AC_MSG_CHECKING([whether a C program links with cudart alone (no libcuda)])
     _GPURMA_TRY_LIB([-I$gpurma_cuda_dir/include],
                     [-L$gpurma_cuda_libdir -Wl,-rpath,$gpurma_cuda_libdir],
                     [-lcudart], [cuda_runtime_api.h], [cudaRuntimeGetVersion])
     AC_MSG_RESULT([$gpurma_try_ok])
     AS_IF([test $gpurma_try_ok = yes], [
       have_cuda=yes
       NVCC=$gpurma_nvcc
       CUDA_HOME=$gpurma_cuda_dir
       CUDA_CPPFLAGS="-I$gpurma_cuda_dir/include"
       CUDA_LDFLAGS="-L$gpurma_cuda_libdir -Wl,-rpath,$gpurma_cuda_libdir"
       CUDA_LIBS=-lcudart])])
])

AC_DEFUN([GPURMA_CHECK_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=guess|yes|DIR|no@:>@],
                  [CUDA toolkit: nvcc and cudart (default: guess)])],
  [], [with_cuda=guess])
AC_ARG_WITH([cuda-arch],
  [AS_HELP_STRING([--with-cuda-arch=LIST],
                  [compute capabilities to build device code for, e.g. "80 90"
                   or "sm_80,sm_90a"; PTX for the last one is embedded too
                   (default: "80 90")])],
  [], [with_cuda_arch="80 90"])
AC_ARG_VAR([NVCC], [CUDA compiler (default: DIR/bin/nvcc of the toolkit found)])
AC_ARG_VAR([NVCCFLAGS], [extra flags for NVCC (default: -O2 -lineinfo)])

gpurma_env_cuda_dirs="$CUDA_HOME $CUDA_PATH"
have_cuda=no
CUDA_HOME=
CUDA_CPPFLAGS=
CUDA_LDFLAGS=
CUDA_LIBS=
CUDA_ARCH_LIST=
NVCC_GENCODE=
AS_CASE([$with_cuda],
  [no], [],
  [guess|yes], [
    # Candidate toolkits, most specific first: the NVCC the user named,
    # CUDA_HOME and CUDA_PATH from the environment, nvcc on PATH, then the
    # default location.
    gpurma_candidates=
    AS_IF([test -n "$NVCC"], [gpurma_candidates=`AS_DIRNAME(["$NVCC"])`
                             gpurma_candidates=`AS_DIRNAME(["$gpurma_candidates"])`])
    gpurma_candidates="$gpurma_candidates $gpurma_env_cuda_dirs"
    AC_PATH_PROG([gpurma_path_nvcc], [nvcc])
    AS_IF([test -n "$gpurma_path_nvcc"], [
      gpurma_d=`AS_DIRNAME(["$gpurma_path_nvcc"])`
      gpurma_candidates="$gpurma_candidates `AS_DIRNAME(["$gpurma_d"])`"])
    gpurma_candidates="$gpurma_candidates /usr/local/cuda"
    for gpurma_dir in $gpurma_candidates; do
      _GPURMA_CUDA_TRY([$gpurma_dir])
      test $have_cuda = yes && break
    done
  ], [
    _GPURMA_CUDA_TRY([$with_cuda])
  ])
AS_IF([test $have_cuda = no && test "x$with_cuda" != xguess && test "x$with_cuda" != xno],
  [AC_MSG_ERROR([--with-cuda=$with_cuda: no usable CUDA toolkit found (see config.log)])])

AS_IF([test $have_cuda = yes], [
  # Accept "80 90", "80,90", "sm_80;sm_90a", "compute_90".
  for gpurma_arch in `echo "$with_cuda_arch" | sed 's/[[,;]]/ /g'`; do
    gpurma_arch=`echo "$gpurma_arch" | sed 's/^sm_//; s/^compute_//'`
    AS_CASE([$gpurma_arch],
      [[[1-9]][[0-9]]|[[1-9]][[0-9]][[a-z]]|[[1-9]][[0-9]][[0-9]]|[[1-9]][[0-9]][[0-9]][[a-z]]], [],
      [AC_MSG_ERROR([--with-cuda-arch: "$gpurma_arch" is not a compute capability like 80 or 90a])])
    CUDA_ARCH_LIST="$CUDA_ARCH_LIST $gpurma_arch"
    NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$gpurma_arch,code=sm_$gpurma_arch"
    gpurma_last_arch=$gpurma_arch
  done
  AS_IF([test -z "$CUDA_ARCH_LIST"], [AC_MSG_ERROR([--with-cuda-arch is empty])])
  CUDA_ARCH_LIST=`echo $CUDA_ARCH_LIST`
  # PTX of the newest architecture lets future GPUs JIT the kernels.
  gpurma_ptx=compute_$gpurma_last_arch
  NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=$gpurma_ptx,code=$gpurma_ptx"
  : ${NVCCFLAGS="-O2 -lineinfo"}

  # The same options the .cu.lo rule uses, so an unsupported architecture or
  # an unsupported host compiler is reported here rather than at make time.
  AC_MSG_CHECKING([whether $NVCC builds device code for $CUDA_ARCH_LIST])
  cat > conftest.cu <<_GPURMA_EOF
__global__ void gpurma_conftest_kernel(int *p) { *p = 1; }
extern "C" void gpurma_conftest_launch(int *p) { gpurma_conftest_kernel<<<1, 1>>>(p); }
_GPURMA_EOF
  gpurma_nvcc_cmd="$NVCC $NVCC_GENCODE $NVCCFLAGS -Xcompiler=-fPIC -c conftest.cu"
  gpurma_nvcc_cmd="$gpurma_nvcc_cmd -o conftest.$OBJEXT"
  _AS_ECHO_LOG([$gpurma_nvcc_cmd])
  AS_IF([eval "$gpurma_nvcc_cmd" >&AS_MESSAGE_LOG_FD 2>&1],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$NVCC cannot build for "$with_cuda_arch" (see config.log); see --with-cuda-arch])])
  # nvcc compiles a file's targets (each architecture, the PTX) one after
  # the other unless it may use threads; coll/coll_kernels.cu takes minutes
  # per target, which alone held up a parallel make for most of its time.
  NVCC_THREADS=
  AC_MSG_CHECKING([whether $NVCC compiles the targets of a file in parallel])
  _AS_ECHO_LOG([$gpurma_nvcc_cmd --threads 0])
  AS_IF([eval "$gpurma_nvcc_cmd --threads 0" >&AS_MESSAGE_LOG_FD 2>&1],
    [NVCC_THREADS="--threads 0"; AC_MSG_RESULT([yes (--threads 0)])],
    [AC_MSG_RESULT([no])])
  rm -f conftest.cu conftest.$OBJEXT
])
AC_SUBST([CUDA_HOME])
AC_SUBST([CUDA_CPPFLAGS])
AC_SUBST([CUDA_LDFLAGS])
AC_SUBST([CUDA_LIBS])
AC_SUBST([CUDA_ARCH_LIST])
AC_SUBST([NVCC_GENCODE])
AC_SUBST([NVCC_THREADS])
])
