! test_fortran.f90 - every binding of the gpurma module that the Jacobi
! example does not use, called from Fortran with real effects checked: a
! mistyped interface (value vs reference, wrong integer kind) shows up as a
! wrong value or a refused call. Under mpirun at several rank counts
! (tests/mp/jacobi.sh runs it).
program test_fortran
  use, intrinsic :: iso_c_binding
  use gpurma
  implicit none
  type(c_ptr) :: ctx, world, win, basep
  integer :: me, n, next, prev, i, failures = 0
  integer(c_int64_t), pointer :: words(:)
  integer(c_int64_t), target :: val, res, cmpv, desired, sigval
  real(c_double), target :: dsrc(8), dres(8)
  integer(c_int32_t), target :: sigs(2)
  integer(c_int), target :: status(2)
  integer(c_size_t), target :: idx(2)
  integer(c_size_t) :: hit, count
  integer(c_int) :: ok, rc
  integer(c_int64_t), target :: col(6), back(6)
  type(gpurma_subarray) :: s
  character(len=:), allocatable :: msg

  call check(gpurma_init_f(ctx), "init")
  me = gpurma_rank(ctx)
  n = gpurma_size(ctx)
  next = mod(me + 1, n)
  prev = mod(me - 1 + n, n)
  world = gpurma_team_world(ctx)
  if (gpurma_team_size(world) /= n .or. gpurma_team_rank(world) /= me) call fail("team rank/size")
  call check(gpurma_win_allocate(world, 64_c_size_t * 8, c_null_ptr, basep, win), "win_allocate")
  if (gpurma_win_size(win, next) /= 512) call fail("win_size")
  call c_f_pointer(basep, words, [64])
  words = 0
  call check(gpurma_barrier(world), "barrier")

  ! accumulate: every rank adds rank+1 to word 0 of rank 0 (int64 SUM).
  val = me + 1
  call check(gpurma_accumulate(win, 0, 0_c_size_t, c_loc(val), 1_c_size_t, GPURMA_INT64, &
                               GPURMA_ACC_SUM), "accumulate")
  ! fetch_and_op ticket on word 1 of rank 0.
  val = 1
  call check(gpurma_fetch_and_op(win, 0, 8_c_size_t, c_loc(val), c_loc(res), GPURMA_INT64, &
                                 GPURMA_ACC_SUM), "fetch_and_op")
  if (res < 0 .or. res >= n) call fail("fetch_and_op ticket")
  ! get_accumulate of doubles (MAX) on words 8..15 of rank 0.
  do i = 1, 8
    dsrc(i) = real(me * 10 + i, c_double)
  end do
  call check(gpurma_get_accumulate(win, 0, 64_c_size_t, c_loc(dsrc), c_loc(dres), 8_c_size_t, &
                                   GPURMA_FLOAT64, GPURMA_ACC_MAX), "get_accumulate")
  ! compare_and_swap: only one rank wins word 2 of rank 0 (0 -> rank+1).
  cmpv = 0
  desired = me + 1
  call check(gpurma_compare_and_swap(win, 0, 16_c_size_t, c_loc(cmpv), c_loc(desired), &
                                     c_loc(res), GPURMA_INT64), "compare_and_swap")
  ! Exclusive lock: increment word 3 of rank 0 by get + put.
  call check(gpurma_win_lock(win, GPURMA_LOCK_EXCLUSIVE, 0), "win_lock")
  call check(gpurma_get(win, 0, c_loc(val), 24_c_size_t, 8_c_size_t), "get")
  call check(gpurma_flush_local(win, 0), "flush_local")
  val = val + 1
  call check(gpurma_put(win, 0, 24_c_size_t, c_loc(val), 8_c_size_t), "put")
  call check(gpurma_win_unlock(win, 0), "win_unlock")
  call check(gpurma_win_lock_all(win), "win_lock_all")
  call check(gpurma_win_unlock_all(win), "win_unlock_all")
  call check(gpurma_win_sync(win), "win_sync")
  call check(gpurma_win_fence(win), "win_fence")
  if (me == 0) then
    if (words(1) /= int(n, c_int64_t) * (n + 1) / 2) call fail("accumulate total")
    if (words(2) /= n) call fail("fetch_and_op total")
    if (words(3) < 1 .or. words(3) > n) call fail("compare_and_swap winner")
    if (words(4) /= n) call fail("exclusive lock counter")
    do i = 1, 8
      if (transfer(words(8 + i), 1.0_c_double) /= real((n - 1) * 10 + i, c_double)) &
        call fail("get_accumulate MAX")
    end do
  end if
  call check(gpurma_win_fence(win), "win_fence")

  ! iput: a strided column of 6 int64 (stride 3) into next's words 20.., iget back.
  do i = 1, 6
    col(i) = int(me, c_int64_t) * 1000 + i
  end do
  call check(gpurma_iput(win, next, 20_c_size_t * 8, 3_c_size_t, c_loc(col), 1_c_size_t, &
                         8_c_size_t, 6_c_size_t), "iput")
  call check(gpurma_flush(win, next), "flush")
  call check(gpurma_order(win), "order")
  call check(gpurma_signal(win, next, 5_c_int32_t, GPURMA_SIGNAL_ADD, 1_c_int64_t), "signal")
  call check(gpurma_wait_until(win, 5_c_int32_t, GPURMA_CMP_GE, 1_c_int64_t), "wait_until")
  do i = 1, 6
    if (words(21 + (i - 1) * 3) /= int(prev, c_int64_t) * 1000 + i) call fail("iput column")
  end do
  back = -1
  call check(gpurma_iget(win, me, c_loc(back), 1_c_size_t, 20_c_size_t * 8, 3_c_size_t, &
                         8_c_size_t, 6_c_size_t), "iget")
  call check(gpurma_flush_local(win, me), "flush_local")
  do i = 1, 6
    if (back(i) /= int(prev, c_int64_t) * 1000 + i) call fail("iget column")
  end do
  ! put_subarray_signal + get_subarray: 2 rows of 2 int64 (pitch 4 words).
  s%elem_bytes = 8
  s%count = [2_c_size_t, 2_c_size_t, 1_c_size_t]
  s%dst_pitch = [32_c_size_t, 0_c_size_t]
  s%src_pitch = [16_c_size_t, 0_c_size_t]
  call check(gpurma_put_subarray_signal(win, next, 40_c_size_t * 8, c_loc(col), s, &
                                        6_c_int32_t, GPURMA_SIGNAL_SET, 7_c_int64_t), &
             "put_subarray_signal")
  sigs = [6_c_int32_t, 5_c_int32_t]
  call check(gpurma_wait_until_all(win, c_loc(sigs), 2_c_size_t, c_null_ptr, GPURMA_CMP_GE, &
                                   1_c_int64_t), "wait_until_all")
  if (words(41) /= prev * 1000 + 1 .or. words(42) /= prev * 1000 + 2 .or. &
      words(45) /= prev * 1000 + 3 .or. words(46) /= prev * 1000 + 4) &
    call fail("put_subarray_signal")
  back = -1
  s%dst_pitch = [16_c_size_t, 0_c_size_t]
  s%src_pitch = [32_c_size_t, 0_c_size_t]
  call check(gpurma_get_subarray(win, me, c_loc(back), 40_c_size_t * 8, s), "get_subarray")
  call check(gpurma_quiet(win), "quiet")
  do i = 1, 4
    if (back(i) /= int(prev, c_int64_t) * 1000 + i) call fail("get_subarray")
  end do
  ! any / some / test forms; slot 6 holds 7, slot 5 holds 1.
  status = [0, 0]
  call check(gpurma_wait_until_any(win, c_loc(sigs), 2_c_size_t, c_loc(status), GPURMA_CMP_EQ, &
                                   7_c_int64_t, hit), "wait_until_any")
  if (hit /= 0) call fail("wait_until_any index")
  call check(gpurma_wait_until_some(win, c_loc(sigs), 2_c_size_t, c_null_ptr, GPURMA_CMP_GE, &
                                    1_c_int64_t, c_loc(idx), count), "wait_until_some")
  if (count /= 2 .or. idx(1) /= 0 .or. idx(2) /= 1) call fail("wait_until_some")
  call check(gpurma_test(win, 6_c_int32_t, GPURMA_CMP_EQ, 7_c_int64_t, ok), "test")
  if (ok /= 1) call fail("test")
  call check(gpurma_test_all(win, c_loc(sigs), 2_c_size_t, c_null_ptr, GPURMA_CMP_EQ, &
                             7_c_int64_t, ok), "test_all")
  if (ok /= 0) call fail("test_all (slot 5 holds 1)")
  call check(gpurma_signal_read(win, 6_c_int32_t, sigval), "signal_read")
  if (sigval /= 7) call fail("signal_read")
  ! Collectives: allgather of ranks, broadcast and reduce of a double.
  block
    integer(c_int32_t), target :: mine, seen(n)
    real(c_double), target :: x, y
    mine = me
    call check(gpurma_allgather(world, c_loc(mine), c_loc(seen), 1_c_size_t, GPURMA_INT32, &
                                c_null_ptr), "allgather")
    do i = 1, n
      if (seen(i) /= i - 1) call fail("allgather")
    end do
    x = 42.5d0 + me
    call check(gpurma_broadcast(world, c_loc(x), c_loc(y), 1_c_size_t, GPURMA_FLOAT64, 0, &
                                c_null_ptr), "broadcast")
    if (y /= 42.5d0) call fail("broadcast")
    call check(gpurma_reduce(world, c_loc(x), c_loc(y), 1_c_size_t, GPURMA_FLOAT64, GPURMA_SUM, &
                             0, c_null_ptr), "reduce")
    if (me == 0 .and. y /= 42.5d0 * n + n * (n - 1) / 2) call fail("reduce")
  end block
  ! A refused call leaves a message Fortran can read.
  rc = gpurma_put(win, n + 3, 0_c_size_t, c_loc(val), 8_c_size_t)
  msg = gpurma_error_f(ctx)
  if (rc /= -1 .or. index(msg, "peer") == 0) call fail("refused put: "//msg)
  call check(gpurma_barrier(world), "barrier")
  call check(gpurma_win_free(win), "win_free")
  call check(gpurma_finalize(ctx), "finalize")
  if (failures /= 0) then
    write (*, '(a,i0,a,i0)') "FAIL test_fortran: rank ", me, ": ", failures
    stop 1
  end if
  if (me == 0) write (*, '(a,i0,a)') "PASS test_fortran: ", n, " ranks"

contains

  subroutine check(st, what)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: what
    if (st /= GPURMA_SUCCESS) then
      write (0, '(a)') "test_fortran: "//what//": "//gpurma_error_f(ctx)
      call gpurma_abort(ctx, 1, "test_fortran failed")
    end if
  end subroutine

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (0, '(a,i0,a)') "test_fortran: rank ", me, ": "//what
    failures = failures + 1
  end subroutine
end program test_fortran
