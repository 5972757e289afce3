! gpurma.f90 - the gpurma Fortran module (Fortran 2008, iso_c_binding): the
! host API, the collectives and the MPI-3 style calls, bound straight to the
! C functions of libgpurma. Handles are type(c_ptr); sizes and offsets
! integer(c_size_t) (offsets in bytes); buffers are passed as c_loc(x);
! every function returns a status, 0 (GPURMA_SUCCESS) or a negative code.
! Two helpers are written in Fortran: gpurma_init_f (defaults) and
! gpurma_error_f (the last error message as a Fortran string).
! docs/mpi-rma.md has the mapping from MPI-3 RMA.
module gpurma
  use, intrinsic :: iso_c_binding
  implicit none

  integer(c_int), parameter :: GPURMA_SUCCESS = 0
  integer(c_int), parameter :: GPURMA_ALL_PEERS = -1
  integer(c_int), parameter :: GPURMA_API_VERSION = 1  ! (0 << 16) | 1, as gpurma.h

  ! gpurma_signal_op_t, gpurma_cmp_t
  integer(c_int), parameter :: GPURMA_SIGNAL_SET = 0, GPURMA_SIGNAL_ADD = 1
  integer(c_int), parameter :: GPURMA_CMP_EQ = 0, GPURMA_CMP_NE = 1, GPURMA_CMP_GT = 2, &
                               GPURMA_CMP_GE = 3, GPURMA_CMP_LT = 4, GPURMA_CMP_LE = 5
  ! gpurma_dtype_t
  integer(c_int), parameter :: GPURMA_INT8 = 0, GPURMA_UINT8 = 1, GPURMA_INT32 = 2, &
                               GPURMA_UINT32 = 3, GPURMA_INT64 = 4, GPURMA_UINT64 = 5, &
                               GPURMA_FLOAT16 = 6, GPURMA_BFLOAT16 = 7, GPURMA_FLOAT32 = 8, &
                               GPURMA_FLOAT64 = 9
  ! gpurma_redop_t (collectives)
  integer(c_int), parameter :: GPURMA_SUM = 0, GPURMA_PROD = 1, GPURMA_MIN = 2, &
                               GPURMA_MAX = 3, GPURMA_AVG = 4
  ! gpurma_acc_op_t (accumulate)
  integer(c_int), parameter :: GPURMA_ACC_SUM = 0, GPURMA_ACC_PROD = 1, GPURMA_ACC_MIN = 2, &
                               GPURMA_ACC_MAX = 3, GPURMA_ACC_REPLACE = 4, &
                               GPURMA_ACC_NO_OP = 5, GPURMA_ACC_BAND = 6, &
                               GPURMA_ACC_BOR = 7, GPURMA_ACC_BXOR = 8
  ! gpurma_lock_type_t
  integer(c_int), parameter :: GPURMA_LOCK_SHARED = 1, GPURMA_LOCK_EXCLUSIVE = 2

  ! gpurma_subarray_t: count(1) elements per row, count(2) rows, count(3)
  ! planes; pitches in bytes (between rows, between planes).
  type, bind(C) :: gpurma_subarray
    integer(c_size_t) :: elem_bytes
    integer(c_size_t) :: count(3)
    integer(c_size_t) :: dst_pitch(2)
    integer(c_size_t) :: src_pitch(2)
  end type gpurma_subarray

  interface
    ! ------------------------------------------------------------ setup
    function gpurma_init_version(api, params, ctx) bind(C, name="gpurma_init_version")
      import :: c_int, c_ptr
      integer(c_int), value :: api
      type(c_ptr), value :: params
      type(c_ptr) :: ctx
      integer(c_int) :: gpurma_init_version
    end function
    function gpurma_finalize(ctx) bind(C, name="gpurma_finalize")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: gpurma_finalize
    end function
    subroutine gpurma_abort_c(ctx, code, why) bind(C, name="gpurma_abort")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: ctx
      integer(c_int), value :: code
      character(kind=c_char), dimension(*) :: why
    end subroutine
    function gpurma_rank(ctx) bind(C, name="gpurma_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: gpurma_rank
    end function
    function gpurma_size(ctx) bind(C, name="gpurma_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: gpurma_size
    end function
    function gpurma_last_error_message(ctx) bind(C, name="gpurma_last_error_message")
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: gpurma_last_error_message
    end function
    ! ------------------------------------------------------------ teams
    function gpurma_team_world(ctx) bind(C, name="gpurma_team_world")
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: gpurma_team_world
    end function
    function gpurma_team_rank(team) bind(C, name="gpurma_team_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: team
      integer(c_int) :: gpurma_team_rank
    end function
    function gpurma_team_size(team) bind(C, name="gpurma_team_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: team
      integer(c_int) :: gpurma_team_size
    end function
    function gpurma_barrier(team) bind(C, name="gpurma_barrier")
      import :: c_int, c_ptr
      type(c_ptr), value :: team
      integer(c_int) :: gpurma_barrier
    end function
    ! ---------------------------------------------------------- windows
    function gpurma_win_allocate(team, size, params, base, win) &
        bind(C, name="gpurma_win_allocate")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: team, params
      integer(c_size_t), value :: size
      type(c_ptr) :: base, win
      integer(c_int) :: gpurma_win_allocate
    end function
    function gpurma_win_create(team, base, size, params, win) bind(C, name="gpurma_win_create")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: team, base, params
      integer(c_size_t), value :: size
      type(c_ptr) :: win
      integer(c_int) :: gpurma_win_create
    end function
    function gpurma_win_free(win) bind(C, name="gpurma_win_free")
      import :: c_int, c_ptr
      type(c_ptr) :: win
      integer(c_int) :: gpurma_win_free
    end function
    function gpurma_win_size(win, peer) bind(C, name="gpurma_win_size")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win
      integer(c_int), value :: peer
      integer(c_size_t) :: gpurma_win_size
    end function
    ! ---------------------------------------------------- one-sided data
    function gpurma_put(win, peer, dst_off, src, bytes) bind(C, name="gpurma_put")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, src
      integer(c_int), value :: peer
      integer(c_size_t), value :: dst_off, bytes
      integer(c_int) :: gpurma_put
    end function
    function gpurma_get(win, peer, dst, src_off, bytes) bind(C, name="gpurma_get")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, dst
      integer(c_int), value :: peer
      integer(c_size_t), value :: src_off, bytes
      integer(c_int) :: gpurma_get
    end function
    function gpurma_signal(win, peer, sig, op, value) bind(C, name="gpurma_signal")
      import :: c_int, c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: win
      integer(c_int), value :: peer, op
      integer(c_int32_t), value :: sig
      integer(c_int64_t), value :: value
      integer(c_int) :: gpurma_signal
    end function
    function gpurma_put_signal(win, peer, dst_off, src, bytes, sig, op, value) &
        bind(C, name="gpurma_put_signal")
      import :: c_int, c_ptr, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: win, src
      integer(c_int), value :: peer, op
      integer(c_size_t), value :: dst_off, bytes
      integer(c_int32_t), value :: sig
      integer(c_int64_t), value :: value
      integer(c_int) :: gpurma_put_signal
    end function
    function gpurma_iput(win, peer, dst_off, dst_stride, src, src_stride, elem_bytes, nelems) &
        bind(C, name="gpurma_iput")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, src
      integer(c_int), value :: peer
      integer(c_size_t), value :: dst_off, dst_stride, src_stride, elem_bytes, nelems
      integer(c_int) :: gpurma_iput
    end function
    function gpurma_iget(win, peer, dst, dst_stride, src_off, src_stride, elem_bytes, nelems) &
        bind(C, name="gpurma_iget")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, dst
      integer(c_int), value :: peer
      integer(c_size_t), value :: dst_stride, src_off, src_stride, elem_bytes, nelems
      integer(c_int) :: gpurma_iget
    end function
    function gpurma_put_subarray(win, peer, dst_off, src, shape) &
        bind(C, name="gpurma_put_subarray")
      import :: c_int, c_ptr, c_size_t, gpurma_subarray
      type(c_ptr), value :: win, src
      integer(c_int), value :: peer
      integer(c_size_t), value :: dst_off
      type(gpurma_subarray), intent(in) :: shape
      integer(c_int) :: gpurma_put_subarray
    end function
    function gpurma_get_subarray(win, peer, dst, src_off, shape) &
        bind(C, name="gpurma_get_subarray")
      import :: c_int, c_ptr, c_size_t, gpurma_subarray
      type(c_ptr), value :: win, dst
      integer(c_int), value :: peer
      integer(c_size_t), value :: src_off
      type(gpurma_subarray), intent(in) :: shape
      integer(c_int) :: gpurma_get_subarray
    end function
    function gpurma_put_subarray_signal(win, peer, dst_off, src, shape, sig, op, value) &
        bind(C, name="gpurma_put_subarray_signal")
      import :: c_int, c_ptr, c_size_t, c_int32_t, c_int64_t, gpurma_subarray
      type(c_ptr), value :: win, src
      integer(c_int), value :: peer, op
      integer(c_size_t), value :: dst_off
      type(gpurma_subarray), intent(in) :: shape
      integer(c_int32_t), value :: sig
      integer(c_int64_t), value :: value
      integer(c_int) :: gpurma_put_subarray_signal
    end function
    ! -------------------------------------------------------- signals
    function gpurma_wait_until(win, sig, cmp, value) bind(C, name="gpurma_wait_until")
      import :: c_int, c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: win
      integer(c_int32_t), value :: sig
      integer(c_int), value :: cmp
      integer(c_int64_t), value :: value
      integer(c_int) :: gpurma_wait_until
    end function
    ! sigs: c_loc of an integer(c_int32_t) array (or c_null_ptr: slots
    ! 0..n-1); status: c_loc of an integer(c_int) array, or c_null_ptr.
    function gpurma_wait_until_all(win, sigs, n, status, cmp, value) &
        bind(C, name="gpurma_wait_until_all")
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: win, sigs, status
      integer(c_size_t), value :: n
      integer(c_int), value :: cmp
      integer(c_int64_t), value :: value
      integer(c_int) :: gpurma_wait_until_all
    end function
    ! index: 0-based position in sigs (C's), huge when none was active.
    function gpurma_wait_until_any(win, sigs, n, status, cmp, value, index) &
        bind(C, name="gpurma_wait_until_any")
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: win, sigs, status
      integer(c_size_t), value :: n
      integer(c_int), value :: cmp
      integer(c_int64_t), value :: value
      integer(c_size_t) :: index
      integer(c_int) :: gpurma_wait_until_any
    end function
    function gpurma_wait_until_some(win, sigs, n, status, cmp, value, indices, count) &
        bind(C, name="gpurma_wait_until_some")
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: win, sigs, status, indices
      integer(c_size_t), value :: n
      integer(c_int), value :: cmp
      integer(c_int64_t), value :: value
      integer(c_size_t) :: count
      integer(c_int) :: gpurma_wait_until_some
    end function
    function gpurma_test(win, sig, cmp, value, satisfied) bind(C, name="gpurma_test")
      import :: c_int, c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: win
      integer(c_int32_t), value :: sig
      integer(c_int), value :: cmp
      integer(c_int64_t), value :: value
      integer(c_int) :: satisfied
      integer(c_int) :: gpurma_test
    end function
    function gpurma_test_all(win, sigs, n, status, cmp, value, satisfied) &
        bind(C, name="gpurma_test_all")
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: win, sigs, status
      integer(c_size_t), value :: n
      integer(c_int), value :: cmp
      integer(c_int64_t), value :: value
      integer(c_int) :: satisfied
      integer(c_int) :: gpurma_test_all
    end function
    function gpurma_signal_read(win, sig, value) bind(C, name="gpurma_signal_read")
      import :: c_int, c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: win
      integer(c_int32_t), value :: sig
      integer(c_int64_t) :: value
      integer(c_int) :: gpurma_signal_read
    end function
    ! ----------------------------------------------- completion, order
    function gpurma_flush(win, peer) bind(C, name="gpurma_flush")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int), value :: peer
      integer(c_int) :: gpurma_flush
    end function
    function gpurma_flush_local(win, peer) bind(C, name="gpurma_flush_local")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int), value :: peer
      integer(c_int) :: gpurma_flush_local
    end function
    function gpurma_quiet(win) bind(C, name="gpurma_quiet")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int) :: gpurma_quiet
    end function
    function gpurma_order(win) bind(C, name="gpurma_order")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int) :: gpurma_order
    end function
    function gpurma_win_fence(win) bind(C, name="gpurma_win_fence")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int) :: gpurma_win_fence
    end function
    ! ------------------------------------------------ passive target
    function gpurma_win_lock(win, type, peer) bind(C, name="gpurma_win_lock")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int), value :: type, peer
      integer(c_int) :: gpurma_win_lock
    end function
    function gpurma_win_unlock(win, peer) bind(C, name="gpurma_win_unlock")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int), value :: peer
      integer(c_int) :: gpurma_win_unlock
    end function
    function gpurma_win_lock_all(win) bind(C, name="gpurma_win_lock_all")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int) :: gpurma_win_lock_all
    end function
    function gpurma_win_unlock_all(win) bind(C, name="gpurma_win_unlock_all")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int) :: gpurma_win_unlock_all
    end function
    function gpurma_win_sync(win) bind(C, name="gpurma_win_sync")
      import :: c_int, c_ptr
      type(c_ptr), value :: win
      integer(c_int) :: gpurma_win_sync
    end function
    ! ---------------------------------------------------- accumulate
    function gpurma_accumulate(win, peer, dst_off, src, count, dtype, op) &
        bind(C, name="gpurma_accumulate")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, src
      integer(c_int), value :: peer, dtype, op
      integer(c_size_t), value :: dst_off, count
      integer(c_int) :: gpurma_accumulate
    end function
    function gpurma_get_accumulate(win, peer, dst_off, src, result, count, dtype, op) &
        bind(C, name="gpurma_get_accumulate")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, src, result
      integer(c_int), value :: peer, dtype, op
      integer(c_size_t), value :: dst_off, count
      integer(c_int) :: gpurma_get_accumulate
    end function
    function gpurma_fetch_and_op(win, peer, dst_off, value, result, dtype, op) &
        bind(C, name="gpurma_fetch_and_op")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, value, result
      integer(c_int), value :: peer, dtype, op
      integer(c_size_t), value :: dst_off
      integer(c_int) :: gpurma_fetch_and_op
    end function
    function gpurma_compare_and_swap(win, peer, dst_off, compare, desired, result, dtype) &
        bind(C, name="gpurma_compare_and_swap")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: win, compare, desired, result
      integer(c_int), value :: peer, dtype
      integer(c_size_t), value :: dst_off
      integer(c_int) :: gpurma_compare_and_swap
    end function
    ! ---------------------------------------------------- collectives
    ! stream: c_null_ptr for host buffers.
    function gpurma_allreduce(team, send, recv, count, dtype, op, stream) &
        bind(C, name="gpurma_allreduce")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: team, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, op
      integer(c_int) :: gpurma_allreduce
    end function
    function gpurma_allgather(team, send, recv, count, dtype, stream) &
        bind(C, name="gpurma_allgather")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: team, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int) :: gpurma_allgather
    end function
    function gpurma_broadcast(team, send, recv, count, dtype, root, stream) &
        bind(C, name="gpurma_broadcast")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: team, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, root
      integer(c_int) :: gpurma_broadcast
    end function
    function gpurma_reduce(team, send, recv, count, dtype, op, root, stream) &
        bind(C, name="gpurma_reduce")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: team, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, op, root
      integer(c_int) :: gpurma_reduce
    end function
    function gpurma_c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: gpurma_c_strlen
    end function
  end interface

contains

  ! gpurma_init with default parameters (gpurma_init is a C macro).
  function gpurma_init_f(ctx) result(status)
    type(c_ptr), intent(out) :: ctx
    integer(c_int) :: status
    ctx = c_null_ptr
    status = gpurma_init_version(GPURMA_API_VERSION, c_null_ptr, ctx)
  end function

  ! The calling thread's last error message.
  function gpurma_error_f(ctx) result(text)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable :: text
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    p = gpurma_last_error_message(ctx)
    if (.not. c_associated(p)) then
      text = ""
      return
    end if
    n = gpurma_c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: text)
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function

  ! Ends the job (every process), with a message.
  subroutine gpurma_abort(ctx, code, why)
    type(c_ptr), intent(in) :: ctx
    integer, intent(in) :: code
    character(len=*), intent(in) :: why
    call gpurma_abort_c(ctx, int(code, c_int), trim(why)//c_null_char)
  end subroutine
end module gpurma
