! solve.f90: fsai-dist from an MPI program in Fortran. Each rank builds its
! rows of the 1D Laplacian tridiag(-1, 2, -1) plus a shift, with 1-based
! indices, sets aFSAI's steps through an options handle, solves (checking
! the stop reason code), doubles the matrix on the same pattern, updates and
! solves again, then solves for two right-hand sides at once (b(:, 1) and
! b(:, 2) of one array); last it gives the rows' coordinates for the coarse
! space (x = i on a line: block size 1, the constant on each box), makes a
! solver with the option coarse "on" (a scalar field gets the coarse space
! only when asked) and solves 2A x = 2A 1 again, in at most two iterations
! since 1 is in the coarse space. It checks every solution.
! Rank 0 prints "ok" when all passed.
!
!     mpirun -np 2 ./solve_f
program solve_f
  use mpi
  use fsai
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_null_char
  implicit none
  integer(c_int64_t), parameter :: n = 4000
  integer :: ierr, rank, size
  integer(c_int64_t) :: first, last, nlocal, i, k, matrix, solver, options
  integer(c_int64_t), allocatable :: row_ptr(:), cols(:)
  real(c_double), allocatable :: vals(:), b(:), x(:), coords(:, :)
  integer(c_int) :: its
  logical :: good, coarse

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call check(fsai_init(MPI_COMM_WORLD), "fsai_init")

  first = n * rank / size + 1
  last = n * (rank + 1) / size
  nlocal = last - first + 1
  allocate(row_ptr(nlocal + 1), cols(3 * nlocal), vals(3 * nlocal), b(nlocal), x(nlocal))
  k = 0
  row_ptr(1) = 1
  do i = first, last
     if (i > 1) call put(i - 1, -1.0_c_double)
     call put(i, 2.01_c_double)
     if (i < n) call put(i + 1, -1.0_c_double)
     row_ptr(i - first + 2) = k + 1
  end do

  call check(fsai_matrix_create(n, first, nlocal, row_ptr, cols, vals, 1_c_int, matrix), "fsai_matrix_create")
  ! the solver's options by name and value, as on the command line
  call check(fsai_options_create(options), "fsai_options_create")
  call check(fsai_options_set(options, "maxit" // c_null_char, "1000" // c_null_char), "maxit")
  call check(fsai_options_set(options, "afsai.steps" // c_null_char, "8" // c_null_char), "afsai.steps")
  call check(fsai_solver_create_opts(matrix, options, solver), "fsai_solver_create_opts")
  call check(fsai_options_free(options), "fsai_options_free")
  good = solve("A x = A 1")
  vals = 2 * vals
  call check(fsai_update_values(solver, vals), "fsai_update_values")
  good = solve("2A x = 2A 1") .and. good
  good = solve_two() .and. good
  allocate(coords(3, nlocal))
  coords = 0
  coords(1, :) = [(real(i, c_double), i = first, last)]
  call check(fsai_matrix_set_geometry(matrix, coords, 1_c_int), "fsai_matrix_set_geometry")
  call check(fsai_solver_free(solver), "fsai_solver_free")
  call check(fsai_options_create(options), "fsai_options_create")
  call check(fsai_options_set(options, "coarse" // c_null_char, "on" // c_null_char), "coarse")
  call check(fsai_solver_create_opts(matrix, options, solver), "fsai_solver_create_opts")
  call check(fsai_options_free(options), "fsai_options_free")
  coarse = solve("coarse space")
  good = good .and. coarse .and. its <= 2

  call check(fsai_solver_free(solver), "fsai_solver_free")
  call check(fsai_matrix_free(matrix), "fsai_matrix_free")
  call check(fsai_finalize(), "fsai_finalize")
  call MPI_Allreduce(MPI_IN_PLACE, good, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     if (good) then
        print '(a)', "ok"
     else
        print '(a)', "FAILED"
     end if
  end if
  call MPI_Finalize(ierr)
  if (.not. good) stop 1

contains

  subroutine put(col, val)
    integer(c_int64_t), intent(in) :: col
    real(c_double), intent(in) :: val
    k = k + 1
    cols(k) = col
    vals(k) = val
  end subroutine put

  ! solve solves A x = A*1 from a zero guess, leaves the iterations in its
  ! and checks x = 1.
  logical function solve(name)
    character(*), intent(in) :: name
    integer(c_int) :: reason
    real(c_double) :: relres, err
    integer(c_int64_t) :: r
    do r = 1, nlocal
       b(r) = sum(vals(row_ptr(r):row_ptr(r + 1) - 1))
    end do
    x = 0
    call check(fsai_solve(solver, b, x, its, relres), name)
    call check(fsai_solver_reason(solver, 0_c_int, reason), "fsai_solver_reason")
    err = maxval(abs(x - 1))
    call MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(a, t14, a, i5, a, es9.2, a, es9.2)', name, " iterations", its, "  relres", relres, &
         "  max error", err
    solve = reason == FSAI_REASON_CONVERGED .and. relres <= 1.0e-8_c_double .and. err <= 1.0e-6_c_double
  end function solve

  ! solve_two solves 2A X = [2A*1, 2A*3] in one call and checks X = [1, 3].
  logical function solve_two()
    real(c_double) :: bb(nlocal, 2), xx(nlocal, 2), relres(2), err(2)
    integer(c_int) :: its(2)
    integer(c_int64_t) :: r
    do r = 1, nlocal
       bb(r, 1) = sum(vals(row_ptr(r):row_ptr(r + 1) - 1))
    end do
    bb(:, 2) = 3 * bb(:, 1)
    xx = 0
    call check(fsai_solve_many(solver, 2_c_int, bb, xx, its, relres), "fsai_solve_many")
    err = [maxval(abs(xx(:, 1) - 1)), maxval(abs(xx(:, 2) - 3))]
    call MPI_Allreduce(MPI_IN_PLACE, err, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(a, t14, a, 2i5, a, 2es9.2, a, 2es9.2)', "two at once", " iterations", its, "  relres", &
         relres, "  max error", err
    solve_two = all(relres <= 1.0e-8_c_double) .and. all(err <= 3.0e-6_c_double)
  end function solve_two

  subroutine check(code, what)
    integer(c_int), intent(in) :: code
    character(*), intent(in) :: what
    character(len=512) :: msg
    integer(c_int) :: length
    if (code == FSAI_OK) return
    length = fsai_last_error(msg, len(msg, kind=c_int))
    print '(a, i0, a, a, a, i0, a, a)', "rank ", rank, ": ", what, ": code ", code, ": ", msg(1:min(length, 511))
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine check
end program solve_f
