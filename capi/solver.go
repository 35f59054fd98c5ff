package main

// #include <stdint.h>
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/solver"
)

// slice views n C values at p as a Go slice, which must not outlive the
// call; a nil p is an error unless n is 0.
func slice[T, C any](p *C, n int, what string) ([]T, error) {
	switch {
	case n < 0:
		return nil, fmt.Errorf("fsai: %s: negative length %d", what, n)
	case n == 0:
		return nil, nil
	case p == nil:
		return nil, fmt.Errorf("fsai: %s is NULL", what)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(p)), n), nil
}

// fsai_matrix_create builds a distributed n x n matrix from this rank's
// nlocal rows, first to first+nlocal-1, in CSR: row i has the columns
// cols[row_ptr[i]-base .. row_ptr[i+1]-base-1] and values vals likewise.
// Indices count from base (0 in C, 1 in Fortran): first, row_ptr and cols.
// Both triangles are stored; columns within a row may come in any order.
// The ranks' rows follow each other in rank order. The arrays are copied,
// after csrArrays checked them. Collective.
//
//export fsai_matrix_create
func fsai_matrix_create(n, first, nlocal C.int64_t, rowPtr, cols *C.int64_t, vals *C.double, base C.int, out *C.int64_t) C.int {
	return call(func() error {
		c, err := world()
		if err != nil {
			return err
		}
		rp, cs, vs, err := csrArrays(int64(n), int64(first), int64(nlocal), rowPtr, cols, vals, int64(base))
		if err == nil && out == nil {
			err = errors.New("fsai: matrix_create: the output handle is NULL")
		}
		if err := c.Agree(err); err != nil {
			return err
		}
		A, err := solver.NewMatrix(c, int64(n), int64(first)-int64(base), rp, cs, vs)
		if err != nil {
			return err
		}
		*out = store(A)
		return nil
	})
}

// csrArrays checks and copies the caller's CSR arrays, counting indices
// from 0. It reads row_ptr's nlocal+1 entries only after checking that
// nlocal rows fit the matrix and this node's memory, and reads cols and vals
// only as far as row_ptr, checked first, says they reach: row_ptr[0] is the
// base, row_ptr does not decrease, no row has more than n entries and the
// arrays fit this node's memory. Messages count rows and columns from the
// base, as the caller does.
func csrArrays(n, first, nlocal int64, rowPtr, cols *C.int64_t, vals *C.double, base int64) (rp, cs []int64, vs []float64, err error) {
	mem := memoryBytes()
	switch {
	case base != 0 && base != 1:
		return nil, nil, nil, fmt.Errorf("fsai: matrix_create: index base %d is not 0 or 1", base)
	case n < 1:
		return nil, nil, nil, fmt.Errorf("fsai: matrix_create: matrix dimension %d", n)
	case nlocal < 1:
		return nil, nil, nil, fmt.Errorf("fsai: matrix_create: %d local rows: every rank needs at least one", nlocal)
	case nlocal > n || uint64(nlocal) > mem/8:
		return nil, nil, nil, fmt.Errorf("fsai: matrix_create: %d local rows, more than the matrix's %d or this node's memory holds", nlocal, n)
	}
	crp, err := slice[int64](rowPtr, int(nlocal+1), "row_ptr")
	if err != nil {
		return nil, nil, nil, err
	}
	if crp[0] != base {
		return nil, nil, nil, fmt.Errorf("fsai: matrix_create: row_ptr[0] = %d, want the index base %d", crp[0], base)
	}
	for i := range nlocal {
		if l := crp[i+1] - crp[i]; l < 0 || l > n {
			return nil, nil, nil, fmt.Errorf("fsai: matrix_create: row %d: row_ptr[%d] = %d and row_ptr[%d] = %d: a row holds 0 to %d entries",
				first+i, i, crp[i], i+1, crp[i+1], n)
		}
	}
	nnz := crp[nlocal] - base
	if uint64(nnz) > mem/16 {
		return nil, nil, nil, fmt.Errorf("fsai: matrix_create: row_ptr[%d] = %d: %d entries of 16 bytes are more than this node's memory of %d bytes",
			nlocal, crp[nlocal], nnz, mem)
	}
	ccs, err := slice[int64](cols, int(nnz), "cols")
	if err == nil {
		vs, err = slice[float64](vals, int(nnz), "vals")
	}
	if err != nil {
		return nil, nil, nil, err
	}
	rp = make([]int64, len(crp))
	for i, p := range crp {
		rp[i] = p - base
	}
	cs = make([]int64, len(ccs))
	for i := range nlocal {
		for k := rp[i]; k < rp[i+1]; k++ {
			c := ccs[k]
			if c < base || c-base >= n {
				return nil, nil, nil, fmt.Errorf("fsai: matrix_create: row %d: column %d is not within [%d,%d]", first+i, c, base, n-1+base)
			}
			cs[k] = c - base
		}
	}
	return rp, cs, vs, nil
}

// memoryBytes is this node's memory, which bounds the arrays a caller can
// hold; 1<<62 where the system does not tell.
func memoryBytes() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil || si.Totalram == 0 {
		return 1 << 62
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// fsai_matrix_free releases a matrix handle. Solvers made from it stay
// usable. Not collective.
//
//export fsai_matrix_free
func fsai_matrix_free(m C.int64_t) C.int { return freeHandle[*solver.Matrix](m, "matrix") }

// fsai_matrix_set_geometry places matrix m's rows in space for the coarse
// space (solver.Matrix.SetGeometry): coords holds x, y and z of the node of
// each of this rank's rows (3*nlocal values), blockSize the unknowns per
// node, numbered node by node: 3 for displacements (rigid-body modes) or 1
// for a scalar field (the constant). The coordinates are copied; they take
// effect at the next set-up of a solver of m. Collective.
//
//export fsai_matrix_set_geometry
func fsai_matrix_set_geometry(m C.int64_t, coords *C.double, blockSize C.int) C.int {
	return call(func() error {
		c, err := world()
		if err != nil {
			return err
		}
		A, err := lookup[*solver.Matrix](m, "matrix")
		var xyz []float64
		if err == nil {
			xyz, err = slice[float64](coords, 3*A.LocalRows(), "coords")
		}
		if err := c.Agree(err); err != nil {
			return err
		}
		return A.SetGeometry(xyz, int(blockSize))
	})
}

// freeHandle drops handle h, which must be a live handle of a T (what
// names its kind in the error).
func freeHandle[T any](h C.int64_t, what string) C.int {
	return call(func() error {
		if _, err := lookup[T](h, what); err != nil {
			return err
		}
		delete(state.handles, int64(h))
		return nil
	})
}

// fsai_solver_create sets up a solver for matrix m: preconditioner prec
// (one of solver.Precs: "afsai", "fsai", "jacobi", "none", "spai"; NULL:
// afsai; spai only with bicgstab or gmres),
// optionally preceded by the Krylov method and a colon ("gmres:jacobi";
// one of solver.Methods: "cg", the default, "bicgstab", "gmres" with
// restart 30), tolerance tol on
// ||b - A x||/||b|| (0: 1e-8), iteration limit maxit (0: 10000), backend
// ("auto", "cpu", "cuda"; NULL: auto). Collective. A matrix the set-up
// refuses is bad input (FSAI_ERR_INPUT where found, FSAI_ERR_PEER
// elsewhere), a device failure FSAI_ERR_FAILURE.
//
//export fsai_solver_create
func fsai_solver_create(m C.int64_t, prec *C.char, tol C.double, maxit C.int, backend *C.char, out *C.int64_t) C.int {
	return call(func() error {
		c, err := world()
		if err != nil {
			return err
		}
		A, err := lookup[*solver.Matrix](m, "matrix")
		if err == nil && out == nil {
			err = errors.New("fsai: solver_create: the output handle is NULL")
		}
		if err := c.Agree(err); err != nil {
			return err
		}
		opt := solver.Options{Tol: float64(tol), MaxIt: int(maxit)}
		if prec != nil {
			opt.Method, opt.Prec = methodPrec(C.GoString(prec))
		}
		if backend != nil {
			opt.Backend = C.GoString(backend)
		}
		return newSolver(A, opt, out)
	})
}

// newSolver sets up a solver for A with opt and stores its handle in out.
// A device failure is FSAI_ERR_FAILURE; bad options or a matrix that is
// not SPD are bad input.
func newSolver(A *solver.Matrix, opt solver.Options, out *C.int64_t) error {
	s, err := solver.New(A, nil, opt)
	if solver.IsDeviceError(err) {
		return failure(err)
	}
	if err != nil {
		return err
	}
	*out = store(s)
	return nil
}

// methodPrec splits fsai_solver_create's "method:prec" into its two
// names; a name without a colon is the preconditioner alone (method cg).
func methodPrec(s string) (method, prec string) {
	if m, p, ok := strings.Cut(s, ":"); ok {
		return m, p
	}
	return "", s
}

// solverFor returns the solver of handle s after checking, with every rank,
// that each has one.
func solverFor(s C.int64_t) (*solver.Solver, error) {
	c, err := world()
	if err != nil {
		return nil, err
	}
	sv, err := lookup[*solver.Solver](s, "solver")
	return sv, c.Agree(err)
}

// fsai_solve solves A x = b for this rank's rows of b and x: x holds the
// initial guess on entry and the solution on return. iterations and relres
// (the true relative residual), when not NULL, receive how the solve
// ended. It returns FSAI_NOT_CONVERGED, with the reason in
// fsai_last_error, when the solve stopped before the tolerance.
// Collective.
//
//export fsai_solve
func fsai_solve(s C.int64_t, b *C.double, x *C.double, iterations *C.int, relres *C.double) C.int {
	return call(func() error {
		sv, err := solverFor(s)
		if err != nil {
			return err
		}
		n := sv.Matrix().LocalRows()
		bs, err := slice[float64](b, n, "b")
		var xs []float64
		if err == nil {
			xs, err = slice[float64](x, n, "x")
		}
		if err := sv.Matrix().Comm().Agree(err); err != nil {
			return err
		}
		res, err := sv.Solve(bs, xs)
		if err != nil {
			return solveError(err)
		}
		state.results[int64(s)] = []solver.Result{res}
		if iterations != nil {
			*iterations = C.int(res.Iterations)
		}
		if relres != nil {
			*relres = C.double(res.RelRes)
		}
		if !res.Converged {
			return notConverged("", res)
		}
		return nil
	})
}

// fsai_solve_many solves A X = B for k right-hand sides at once, which
// costs much less than k calls of fsai_solve: b and x hold this rank's rows
// of each right-hand side in turn (b[c*nlocal + i], a Fortran b(nlocal, k)).
// iterations and relres, when not NULL, receive k values, one per column.
// It returns FSAI_NOT_CONVERGED, with the first failing column's reason in
// fsai_last_error, when a column stopped before the tolerance. Collective.
//
//export fsai_solve_many
func fsai_solve_many(s C.int64_t, k C.int, b *C.double, x *C.double, iterations *C.int, relres *C.double) C.int {
	return call(func() error {
		sv, err := solverFor(s)
		if err != nil {
			return err
		}
		n := sv.Matrix().LocalRows() * max(int(k), 0)
		if k < 1 {
			err = fmt.Errorf("fsai: solve many: %d right-hand sides; need at least 1", k)
		}
		var bs, xs []float64
		if err == nil {
			bs, err = slice[float64](b, n, "b")
		}
		if err == nil {
			xs, err = slice[float64](x, n, "x")
		}
		if err := sv.Matrix().Comm().Agree(err); err != nil {
			return err
		}
		res, err := sv.SolveMany(bs, xs, int(k))
		if err != nil {
			return solveError(err)
		}
		state.results[int64(s)] = res
		var its []C.int
		var rel []C.double
		if iterations != nil {
			its = unsafe.Slice(iterations, len(res))
		}
		if relres != nil {
			rel = unsafe.Slice(relres, len(res))
		}
		var failed error
		for c, r := range res {
			if its != nil {
				its[c] = C.int(r.Iterations)
			}
			if rel != nil {
				rel[c] = C.double(r.RelRes)
			}
			if !r.Converged && failed == nil {
				failed = notConverged(fmt.Sprintf("column %d ", c+1), r)
			}
		}
		return failed
	})
}

// notConverged is the FSAI_NOT_CONVERGED error of a solve (of a column,
// when what names it) that stopped before the tolerance.
func notConverged(what string, r solver.Result) error {
	return codedError{codeNotConverged, fmt.Errorf("fsai: %snot converged: %s after %d iterations (relres %.3g) %s",
		what, r.Reason, r.Iterations, r.RelRes, r.Detail)}
}

// values views this rank's nnz new values of s's matrix.
func values(sv *solver.Solver, vals *C.double) ([]float64, error) {
	vs, err := slice[float64](vals, sv.Matrix().LocalNNZ(), "vals")
	return vs, sv.Matrix().Comm().Agree(err)
}

// fsai_set_values gives the matrix of solver s new values on its pattern
// (this rank's entries in the order given to fsai_matrix_create) and keeps
// the preconditioner. Collective.
//
//export fsai_set_values
func fsai_set_values(s C.int64_t, vals *C.double) C.int {
	return withValues(s, vals, (*solver.Solver).SetValues)
}

// fsai_update_values is fsai_set_values followed by the recomputation of
// the preconditioner's values on its pattern. Collective; on bad input
// nothing changes (solver.Solver.UpdateValues).
//
//export fsai_update_values
func fsai_update_values(s C.int64_t, vals *C.double) C.int {
	return withValues(s, vals, (*solver.Solver).UpdateValues)
}

// fsai_rebuild sets the preconditioner up anew, pattern included, on the
// current values. Collective.
//
//export fsai_rebuild
func fsai_rebuild(s C.int64_t) C.int {
	return call(func() error {
		sv, err := solverFor(s)
		if err != nil {
			return err
		}
		return sv.Rebuild()
	})
}

// fsai_solver_free releases a solver and its device memory. Not
// collective.
//
//export fsai_solver_free
func fsai_solver_free(s C.int64_t) C.int {
	return call(func() error {
		sv, err := lookup[*solver.Solver](s, "solver")
		if err != nil {
			return err
		}
		delete(state.handles, int64(s))
		delete(state.results, int64(s))
		if err := sv.Free(); err != nil {
			return failure(err)
		}
		return nil
	})
}

// withValues hands solver s's new values (this rank's entries, in the order
// given to fsai_matrix_create) to update.
func withValues(s C.int64_t, vals *C.double, update func(*solver.Solver, []float64) error) C.int {
	return call(func() error {
		sv, err := solverFor(s)
		if err != nil {
			return err
		}
		vs, err := values(sv, vals)
		if err != nil {
			return err
		}
		return update(sv, vs)
	})
}
