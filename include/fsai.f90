! fsai.f90: Fortran interfaces (iso_c_binding) to the C API of fsai-dist;
! fsai.h documents each function. Compile this module with the program and
! link with -lfsai. Pass the communicator's integer handle (comm, or
! comm%MPI_VAL with mpi_f08) to fsai_init, index base 1 to
! fsai_matrix_create, and strings with a trailing c_null_char.
module fsai
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_char
  implicit none

  integer(c_int), parameter :: FSAI_OK = 0, FSAI_NOT_CONVERGED = 1, FSAI_ERR_INPUT = -1, &
       FSAI_ERR_PEER = -2, FSAI_ERR_FAILURE = -3, FSAI_ERR_HANDLE = -4
  ! why a solve stopped (fsai_solver_reason); the values never change
  integer(c_int), parameter :: FSAI_REASON_CONVERGED = 0, FSAI_REASON_MAX_ITERATIONS = 1, &
       FSAI_REASON_BREAKDOWN = 2, FSAI_REASON_NAN = 3, FSAI_REASON_STAGNATION = 4, &
       FSAI_REASON_INTERRUPTED = 5, FSAI_REASON_DIVERGED = 6
  ! kinds of operation (fsai_solver_oplog); the values never change
  integer(c_int), parameter :: FSAI_OP_SPMV = 0, FSAI_OP_PREC = 1, FSAI_OP_SOLVE = 2

  interface
     integer(c_int) function fsai_init(comm) bind(C, name="fsai_init")
       import :: c_int
       integer(c_int), value :: comm
     end function fsai_init

     integer(c_int) function fsai_finalize() bind(C, name="fsai_finalize")
       import :: c_int
     end function fsai_finalize

     integer(c_int) function fsai_last_error(buf, len) bind(C, name="fsai_last_error")
       import :: c_int, c_char
       character(kind=c_char), dimension(*), intent(out) :: buf
       integer(c_int), value :: len
     end function fsai_last_error

     integer(c_int) function fsai_matrix_create(n, first, nlocal, row_ptr, cols, vals, base, matrix) &
          bind(C, name="fsai_matrix_create")
       import :: c_int, c_int64_t, c_double
       integer(c_int64_t), value :: n, first, nlocal
       integer(c_int64_t), dimension(*), intent(in) :: row_ptr, cols
       real(c_double), dimension(*), intent(in) :: vals
       integer(c_int), value :: base
       integer(c_int64_t), intent(out) :: matrix
     end function fsai_matrix_create

     integer(c_int) function fsai_matrix_set_geometry(matrix, coords, block_size) &
          bind(C, name="fsai_matrix_set_geometry")
       import :: c_int, c_int64_t, c_double
       integer(c_int64_t), value :: matrix
       real(c_double), dimension(*), intent(in) :: coords
       integer(c_int), value :: block_size
     end function fsai_matrix_set_geometry

     integer(c_int) function fsai_matrix_free(matrix) bind(C, name="fsai_matrix_free")
       import :: c_int, c_int64_t
       integer(c_int64_t), value :: matrix
     end function fsai_matrix_free

     integer(c_int) function fsai_solver_create(matrix, prec, tol, maxit, backend, solver) &
          bind(C, name="fsai_solver_create")
       import :: c_int, c_int64_t, c_double, c_char
       integer(c_int64_t), value :: matrix
       character(kind=c_char), dimension(*), intent(in) :: prec, backend
       real(c_double), value :: tol
       integer(c_int), value :: maxit
       integer(c_int64_t), intent(out) :: solver
     end function fsai_solver_create

     integer(c_int) function fsai_options_create(options) bind(C, name="fsai_options_create")
       import :: c_int, c_int64_t
       integer(c_int64_t), intent(out) :: options
     end function fsai_options_create

     integer(c_int) function fsai_options_set(options, name, value) bind(C, name="fsai_options_set")
       import :: c_int, c_int64_t, c_char
       integer(c_int64_t), value :: options
       character(kind=c_char), dimension(*), intent(in) :: name, value
     end function fsai_options_set

     integer(c_int) function fsai_options_free(options) bind(C, name="fsai_options_free")
       import :: c_int, c_int64_t
       integer(c_int64_t), value :: options
     end function fsai_options_free

     integer(c_int) function fsai_solver_create_opts(matrix, options, solver) &
          bind(C, name="fsai_solver_create_opts")
       import :: c_int, c_int64_t
       integer(c_int64_t), value :: matrix, options
       integer(c_int64_t), intent(out) :: solver
     end function fsai_solver_create_opts

     integer(c_int) function fsai_solver_reason(solver, col, reason) bind(C, name="fsai_solver_reason")
       import :: c_int, c_int64_t
       integer(c_int64_t), value :: solver
       integer(c_int), value :: col
       integer(c_int), intent(out) :: reason
     end function fsai_solver_reason

     integer(c_int) function fsai_solver_oplog(solver, op, count, seconds, bytes) bind(C, name="fsai_solver_oplog")
       import :: c_int, c_int64_t, c_double
       integer(c_int64_t), value :: solver
       integer(c_int), value :: op
       integer(c_int64_t), intent(out) :: count
       real(c_double), intent(out) :: seconds, bytes
     end function fsai_solver_oplog

     integer(c_int) function fsai_solve(solver, b, x, iterations, relres) bind(C, name="fsai_solve")
       import :: c_int, c_int64_t, c_double
       integer(c_int64_t), value :: solver
       real(c_double), dimension(*), intent(in) :: b
       real(c_double), dimension(*), intent(inout) :: x
       integer(c_int), intent(out) :: iterations
       real(c_double), intent(out) :: relres
     end function fsai_solve

     integer(c_int) function fsai_solve_many(solver, k, b, x, iterations, relres) &
          bind(C, name="fsai_solve_many")
       import :: c_int, c_int64_t, c_double
       integer(c_int64_t), value :: solver
       integer(c_int), value :: k
       real(c_double), dimension(*), intent(in) :: b
       real(c_double), dimension(*), intent(inout) :: x
       integer(c_int), dimension(*), intent(out) :: iterations
       real(c_double), dimension(*), intent(out) :: relres
     end function fsai_solve_many

     integer(c_int) function fsai_set_values(solver, vals) bind(C, name="fsai_set_values")
       import :: c_int, c_int64_t, c_double
       integer(c_int64_t), value :: solver
       real(c_double), dimension(*), intent(in) :: vals
     end function fsai_set_values

     integer(c_int) function fsai_update_values(solver, vals) bind(C, name="fsai_update_values")
       import :: c_int, c_int64_t, c_double
       integer(c_int64_t), value :: solver
       real(c_double), dimension(*), intent(in) :: vals
     end function fsai_update_values

     integer(c_int) function fsai_rebuild(solver) bind(C, name="fsai_rebuild")
       import :: c_int, c_int64_t
       integer(c_int64_t), value :: solver
     end function fsai_rebuild

     integer(c_int) function fsai_solver_free(solver) bind(C, name="fsai_solver_free")
       import :: c_int, c_int64_t
       integer(c_int64_t), value :: solver
     end function fsai_solver_free
  end interface
end module fsai
