// Package solver is fsai-dist as a library for simulation codes: set up
// once, solve many times. Most codes call a linear solver from inside a
// time-stepping or Newton loop, where the matrix keeps its pattern while its
// values change, and each step brings new right-hand sides. The lifecycle is
//
//	A, err := solver.NewMatrix(c, n, first, rowPtr, cols, vals) // this rank's rows
//	s, err := solver.New(A, nil, solver.DefaultOptions())        // backend, preconditioner
//	defer s.Free()
//	for step := range steps {
//		res, err := s.Solve(b, x)       // as often as needed; x: initial guess in, solution out
//		err = s.UpdateValues(newVals)   // same pattern, new values
//	}
//	results, err := s.SolveMany(B, X, k) // k right-hand sides at once, column c at c*LocalRows()
//
// SolveMany solves several systems together: one pass over the matrix (and
// over the preconditioner's factors) per iteration serves all of them, and
// each column stops on its own.
//
// Set-up (New) copies the matrix to the backend (CPU or GPU), builds the halo
// plan of the distributed product and computes the preconditioner; every
// Solve reuses all of it and the device vectors, and moves only b and x.
// For new values on the same pattern there are three levels of work:
//
//   - SetValues: new values of A only; the preconditioner stays (lagged).
//   - UpdateValues: new values of A and of the preconditioner on its
//     existing pattern (Jacobi: the new diagonal; aFSAI and FSAI: the exact
//     FSAI rows on G's pattern, without the pattern search and with the
//     same halo plans).
//   - Rebuild: the preconditioner set up anew, pattern included.
//
// # MPI and threads
//
// Every rank of the matrix's communicator calls NewMatrix, New, Solve,
// SolveMany, SetValues, UpdateValues and Rebuild, in the same order: they are
// collective. Bad input (a wrong length, a non-finite value, rows that do
// not follow each other in rank order) is an error on every rank: the rank
// that found it gets the description and the others comm.ErrPeer, and
// nothing has changed. The set-up's messages name rows by their global
// index counting from 1, as Matrix Market does (A(I,I) is row I's diagonal
// entry); messages about the arrays given to NewMatrix use the caller's
// 0-based indices.
//
// Calls on one Solver must be serialized: a call made while another runs
// on the same Solver (from another goroutine) returns ErrBusy at once,
// before any communication, and changes nothing. The refusal never waits
// on other ranks, but the call that runs does: the ranks must make the
// same calls, and two overlapping calls may be refused on one rank and run
// one after the other on another, so a program that meets ErrBusy under
// MPI should abort. Solvers of one Matrix that run at once must not change
// its values (SetValues, UpdateValues), which they share. After Free every
// call returns ErrFreed.
//
// # Composition
//
// Package solver is where names meet packages: its registries map the
// names of Options.Method (Methods: cg for SPD matrices; bicgstab and
// gmres, right preconditioned, for nonsymmetric ones), Options.Prec (Precs) and
// Options.Backend (Backends) to the packages that implement them, and the
// command line and the C API take their names from there. NeedsSPD says,
// from the method's and the preconditioner's entries, whether a solve
// needs a symmetric positive definite matrix. Bind, Vectors,
// SetUp and SolveVectors are New and SolveMany in stages, on the device
// blocks, for callers that fill the right-hand sides on the device or
// time the stages (the command line).
//
// # Options by name
//
// OptionTable lists the solver's options, each with a name (the command
// line's flag without its dash: "tol", "afsai.steps"), a type, a default,
// a help line and a check. Options.Set sets one by name, SetFile reads an
// options file and SetEnv the FSAI_OPTIONS environment variable; the
// command line's flags and the C API's fsai_options_set come from the same
// table.
//
// The communicator is comm.World() after comm.Init in a Go program; a C or
// Fortran program passes its own through the C API (directory capi), whose
// functions are these.
package solver
