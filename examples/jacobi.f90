! jacobi.f90 - the Fortran twin of examples/jacobi.c (docs/mpi-rma.md): a
! 2-D Jacobi solver whose halos go straight into the neighbours' ghost cells
! with gpurma_put_subarray_signal (double-buffered blocks in one window),
! gpurma_wait_until_all for the four sides and gpurma_allreduce for the
! residual. Same decomposition and layout as the C version (x fastest).
!
!   mpirun -np 4 examples/jacobi_f [NX NY ITERS] [--check]
!
! --check: rank 0 gets every block and compares it bit for bit with a
! serial run of the same sweeps (exit status 1 when they differ).
program jacobi_f
  use, intrinsic :: iso_c_binding
  use gpurma
  implicit none
  integer, parameter :: LEFT = 0, RIGHT = 1, DOWN = 2, UP = 3
  integer :: nx = 256, ny = 256, iters = 200, npos = 0, i, k, d, x, y, c, r
  logical :: check = .false.
  character(len=32) :: arg
  type(c_ptr) :: ctx, world, win, basep
  integer :: me, n, px, py, cx, cy, bx, by, x0, y0, w, h, nsig, bad
  integer :: nb(0:3), nbw(0:3), nbh(0:3)
  integer(c_int32_t), target :: sigs(4)
  real(c_double), pointer :: u(:, :, :)
  real(c_double), target :: local, residual
  real(c_double), allocatable, target :: blk(:, :), ref(:, :)
  type(gpurma_subarray) :: s
  integer(c_size_t) :: dst, src, next_copy
  real(c_double) :: v

  do i = 1, command_argument_count()
    call get_command_argument(i, arg)
    if (arg == "--check") then
      check = .true.
    else
      npos = npos + 1
      select case (npos)
      case (1); read (arg, *) nx
      case (2); read (arg, *) ny
      case default; read (arg, *) iters
      end select
    end if
  end do

  call ok(gpurma_init_f(ctx), "init")
  me = gpurma_rank(ctx)
  n = gpurma_size(ctx)
  world = gpurma_team_world(ctx)
  px = 1
  do d = 1, n
    if (d * d > n) exit
    if (mod(n, d) == 0) px = d
  end do
  py = n / px
  cx = mod(me, px)
  cy = me / px
  bx = cells(nx, px, cx); by = cells(ny, py, cy)
  x0 = start(nx, px, cx); y0 = start(ny, py, cy)
  w = bx + 2; h = by + 2

  call ok(gpurma_win_allocate(world, int(2 * w * h * 8, c_size_t), c_null_ptr, basep, win), &
          "win_allocate")
  call c_f_pointer(basep, u, [w, h, 2])
  nb = -1
  if (cx > 0) nb(LEFT) = me - 1
  if (cx < px - 1) nb(RIGHT) = me + 1
  if (cy > 0) nb(DOWN) = me - px
  if (cy < py - 1) nb(UP) = me + px
  do d = 0, 3
    if (d <= RIGHT) then
      nbw(d) = w; nbh(d) = h
      if (nb(d) >= 0) nbw(d) = cells(nx, px, cx + merge(-1, 1, d == LEFT)) + 2
    else
      nbw(d) = w; nbh(d) = h
      if (nb(d) >= 0) nbh(d) = cells(ny, py, cy + merge(-1, 1, d == DOWN)) + 2
    end if
  end do
  do c = 1, 2
    do y = 1, h
      do x = 1, w
        u(x, y, c) = boundary(x0 + x - 1, y0 + y - 1)
      end do
    end do
  end do
  nsig = 0
  do d = 0, 3
    if (nb(d) >= 0) then
      nsig = nsig + 1
      sigs(nsig) = d
    end if
  end do
  call ok(gpurma_barrier(world), "barrier")

  residual = 0
  do k = 0, iters - 1
    local = 0
    ! Read copy mod(k,2)+1, write copy mod(k+1,2)+1.
    associate (a => u(:, :, mod(k, 2) + 1), b => u(:, :, mod(k + 1, 2) + 1))
      do y = 2, by + 1
        do x = 2, bx + 1
          v = 0.25d0 * (a(x - 1, y) + a(x + 1, y) + a(x, y - 1) + a(x, y + 1))
          local = local + (v - a(x, y)) * (v - a(x, y))
          b(x, y) = v
        end do
      end do
    end associate
    next_copy = int(mod(k + 1, 2), c_size_t)
    do d = 0, 3
      if (nb(d) < 0) cycle
      s%elem_bytes = 8
      s%count = [1_c_size_t, 1_c_size_t, 1_c_size_t]
      s%dst_pitch = 0
      s%src_pitch = 0
      if (d <= RIGHT) then ! a column: by rows of one element
        s%count(2) = int(by, c_size_t)
        s%src_pitch(1) = int(w * 8, c_size_t)
        s%dst_pitch(1) = int(nbw(d) * 8, c_size_t)
        src = int(w + merge(1, bx, d == LEFT), c_size_t)
        dst = int(nbw(d) + merge(nbw(d) - 1, 0, d == LEFT), c_size_t)
      else ! a row
        s%count(1) = int(bx, c_size_t)
        src = int(merge(1, by, d == DOWN) * w + 1, c_size_t)
        dst = int(merge((nbh(d) - 1) * nbw(d), 0, d == DOWN) + 1, c_size_t)
      end if
      ! src counts elements from the start of the block: as a 1-based index.
      call ok(gpurma_put_subarray_signal(win, nb(d), &
              (next_copy * int(nbw(d) * nbh(d), c_size_t) + dst) * 8_c_size_t, &
              c_loc(u(mod(int(src), w) + 1, int(src) / w + 1, mod(k + 1, 2) + 1)), s, &
              int(ieor(d, 1), c_int32_t), GPURMA_SIGNAL_SET, int(k + 1, c_int64_t)), &
              "put_subarray_signal")
    end do
    call ok(gpurma_wait_until_all(win, c_loc(sigs), int(nsig, c_size_t), c_null_ptr, &
            GPURMA_CMP_GE, int(k + 1, c_int64_t)), "wait_until_all")
    if (mod(k, 10) == 9 .or. k == iters - 1) then
      call ok(gpurma_allreduce(world, c_loc(local), c_loc(residual), 1_c_size_t, &
              GPURMA_FLOAT64, GPURMA_SUM, c_null_ptr), "allreduce")
      residual = sqrt(residual)
    end if
  end do
  call ok(gpurma_barrier(world), "barrier")

  bad = 0
  if (me == 0) write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,es13.6)') "jacobi_f: ", nx, " x ", ny, &
      " grid, ", iters, " iterations, ", px, " x ", py, " ranks, residual ", residual
  if (check .and. me == 0) then
    call serial(ref)
    do r = 0, n - 1
      block
        integer :: rcx, rcy, rbx, rby, rx0, ry0, rw, rh
        rcx = mod(r, px); rcy = r / px
        rbx = cells(nx, px, rcx); rby = cells(ny, py, rcy)
        rx0 = start(nx, px, rcx); ry0 = start(ny, py, rcy)
        rw = rbx + 2; rh = rby + 2
        allocate (blk(rw, rh))
        call ok(gpurma_get(win, r, c_loc(blk), int(mod(iters, 2) * rw * rh * 8, c_size_t), &
                int(rw * rh * 8, c_size_t)), "get")
        call ok(gpurma_flush_local(win, r), "flush_local")
        do y = 2, rby + 1
          do x = 2, rbx + 1
            if (transfer(blk(x, y), 0_c_int64_t) /= transfer(ref(rx0 + x, ry0 + y), 0_c_int64_t)) then
              if (bad == 0) write (*, *) "jacobi_f: differs at", rx0 + x - 1, ry0 + y - 1, &
                  blk(x, y), ref(rx0 + x, ry0 + y)
              bad = bad + 1
            end if
          end do
        end do
        deallocate (blk)
      end block
    end do
    if (bad == 0) then
      write (*, '(a)') "jacobi_f: matches the serial run bit for bit"
    else
      write (*, '(a)') "jacobi_f: DIFFERS from the serial run bit for bit"
    end if
  end if
  call ok(gpurma_barrier(world), "barrier")
  call ok(gpurma_win_free(win), "win_free")
  call ok(gpurma_finalize(ctx), "finalize")
  if (bad /= 0) stop 1

contains

  integer function cells(total, parts, idx)
    integer, intent(in) :: total, parts, idx
    cells = total / parts
    if (idx < mod(total, parts)) cells = cells + 1
  end function

  integer function start(total, parts, idx)
    integer, intent(in) :: total, parts, idx
    start = idx * (total / parts) + min(idx, mod(total, parts))
  end function

  ! Fixed boundary (global 0-based cell gx, gy): as the C version.
  real(c_double) function boundary(gx, gy)
    integer, intent(in) :: gx, gy
    boundary = 0
    if (gx == 0) then
      boundary = 1
    else if (gy == ny + 1) then
      boundary = real(gx, c_double) / (nx + 1)
    end if
  end function

  subroutine serial(res)
    real(c_double), allocatable, intent(out) :: res(:, :)
    real(c_double), allocatable :: a(:, :), b(:, :)
    integer :: it, gx, gy
    allocate (a(nx + 2, ny + 2), b(nx + 2, ny + 2))
    do gy = 1, ny + 2
      do gx = 1, nx + 2
        a(gx, gy) = boundary(gx - 1, gy - 1)
      end do
    end do
    b = a
    do it = 1, iters
      do gy = 2, ny + 1
        do gx = 2, nx + 1
          b(gx, gy) = 0.25d0 * (a(gx - 1, gy) + a(gx + 1, gy) + a(gx, gy - 1) + a(gx, gy + 1))
        end do
      end do
      call move_alloc(a, res)
      call move_alloc(b, a)
      call move_alloc(res, b)
    end do
    call move_alloc(a, res)
  end subroutine

  subroutine ok(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= GPURMA_SUCCESS) then
      write (0, '(a)') "jacobi_f: "//what//": "//gpurma_error_f(ctx)
      call gpurma_abort(ctx, 1, "jacobi_f failed")
    end if
  end subroutine
end program jacobi_f
