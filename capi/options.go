package main

// #include <stdint.h>
import "C"

import (
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/solver"
)

// reasons numbers the stop reasons of a solve for fsai_solver_reason;
// include/fsai.h (FSAI_REASON_*) and include/fsai.f90 repeat the numbers,
// which never change.
var reasons = map[krylov.Reason]C.int{
	krylov.Converged:     0,
	krylov.MaxIterations: 1,
	krylov.Breakdown:     2,
	krylov.NaN:           3,
	krylov.Stagnation:    4,
	krylov.Interrupted:   5,
	krylov.Diverged:      6,
}

// fsai_options_create makes an options handle holding the solver's default
// options (solver.DefaultOptions). Not collective.
//
//export fsai_options_create
func fsai_options_create(out *C.int64_t) C.int {
	return call(func() error {
		if _, err := world(); err != nil {
			return err
		}
		if out == nil {
			return errors.New("fsai: options_create: the output handle is NULL")
		}
		opt := solver.DefaultOptions()
		*out = store(&opt)
		return nil
	})
}

// fsai_options_set sets the option name of handle o to value, both
// NUL-terminated strings, as the command line's -name value would
// (solver.Options.Set: "afsai.steps", "20"). An unknown name or a bad
// value is FSAI_ERR_INPUT, with a message naming the option; o is then
// unchanged. Not collective.
//
//export fsai_options_set
func fsai_options_set(o C.int64_t, name, value *C.char) C.int {
	return call(func() error {
		opt, err := lookup[*solver.Options](o, "options")
		if err != nil {
			return err
		}
		if name == nil || value == nil {
			return errors.New("fsai: options_set: name or value is NULL")
		}
		if err := opt.Set(C.GoString(name), C.GoString(value)); err != nil {
			return fmt.Errorf("fsai: options_set: %w", err)
		}
		return nil
	})
}

// fsai_options_free releases an options handle; solvers made with it keep
// their options. Not collective.
//
//export fsai_options_free
func fsai_options_free(o C.int64_t) C.int { return freeHandle[*solver.Options](o, "options") }

// fsai_solver_create_opts sets up a solver for matrix m with the options
// of handle o, which must be alike on every rank (they are compared).
// Collective; errors as fsai_solver_create's.
//
//export fsai_solver_create_opts
func fsai_solver_create_opts(m, o C.int64_t, out *C.int64_t) C.int {
	return call(func() error {
		c, err := world()
		if err != nil {
			return err
		}
		A, err := lookup[*solver.Matrix](m, "matrix")
		var opt *solver.Options
		if err == nil {
			opt, err = lookup[*solver.Options](o, "options")
		}
		if err == nil && out == nil {
			err = errors.New("fsai: solver_create_opts: the output handle is NULL")
		}
		if err := c.Agree(err); err != nil {
			return err
		}
		if err := sameOnAllRanks(c, *opt); err != nil {
			return err
		}
		own := *opt
		if own.Log != nil { // each solver of the handle keeps its own log
			own.Log = &solver.OpLog{}
		}
		return newSolver(A, own, out)
	})
}

// opStats is the entry of l for operation op of fsai_solver_oplog:
// FSAI_OP_SPMV 0, FSAI_OP_PREC 1, FSAI_OP_SOLVE 2 (include/fsai.h and
// include/fsai.f90 repeat the numbers, which never change).
func opStats(l *solver.OpLog, op C.int) (*solver.OpStats, bool) {
	switch op {
	case 0:
		return &l.SpMV, true
	case 1:
		return &l.Prec, true
	case 2:
		return &l.Solve, true
	}
	return nil, false
}

// fsai_solver_oplog gives this rank's count, seconds and bytes of one kind
// of operation over the solver's solves so far (FSAI_OP_SPMV: products
// with A; FSAI_OP_PREC: preconditioner applications; FSAI_OP_SOLVE: whole
// solves, whose seconds less the other two are the vector updates and
// reductions), for a solver made by fsai_solver_create_opts with the
// option "log" true; FSAI_ERR_INPUT otherwise. Not collective.
//
//export fsai_solver_oplog
func fsai_solver_oplog(s C.int64_t, op C.int, count *C.int64_t, seconds, bytes *C.double) C.int {
	return call(func() error {
		sv, err := solverFor(s)
		if err != nil {
			return err
		}
		l := sv.OpLog()
		st, ok := (*solver.OpStats)(nil), false
		if l != nil {
			st, ok = opStats(l, op)
		}
		switch {
		case l == nil:
			return fmt.Errorf("fsai: solver_oplog: %w: the solver was made without the option log", solver.ErrInput)
		case !ok:
			return fmt.Errorf("fsai: solver_oplog: %w: operation %d is not FSAI_OP_SPMV, FSAI_OP_PREC or FSAI_OP_SOLVE", solver.ErrInput, op)
		case count == nil || seconds == nil || bytes == nil:
			return fmt.Errorf("fsai: solver_oplog: %w: an output pointer is NULL", solver.ErrInput)
		}
		*count, *seconds, *bytes = C.int64_t(st.Count), C.double(st.Seconds), C.double(st.Bytes)
		return nil
	})
}

// sameOnAllRanks refuses options that differ between the ranks, which
// would set up different preconditioners or run different methods.
func sameOnAllRanks(c *comm.Comm, opt solver.Options) error {
	h := fnv.New64a()
	for _, op := range solver.OptionTable() {
		fmt.Fprintf(h, "%s=%s\n", op.Name, op.Get(&opt))
	}
	sum := int64(h.Sum64() >> 1)
	lo, err := comm.AllreduceScalar(c, comm.Min, sum)
	if err != nil {
		return failure(err)
	}
	hi, err := comm.AllreduceScalar(c, comm.Max, sum)
	if err != nil {
		return failure(err)
	}
	if lo != hi {
		return errors.New("fsai: solver_create_opts: the options differ between the ranks")
	}
	return nil
}

// fsai_solver_reason gives in *reason the stop reason (FSAI_REASON_*) of
// column col (from 0) of the solver's last solve; before a first solve, or
// for a column it did not have, it returns FSAI_ERR_INPUT. Not collective.
//
//export fsai_solver_reason
func fsai_solver_reason(s C.int64_t, col C.int, reason *C.int) C.int {
	return call(func() error {
		if _, err := lookup[*solver.Solver](s, "solver"); err != nil {
			return err
		}
		res := state.results[int64(s)]
		switch {
		case reason == nil:
			return errors.New("fsai: solver_reason: reason is NULL")
		case col < 0 || int(col) >= len(res):
			return fmt.Errorf("fsai: solver_reason: the last solve has %d columns, not a column %d", len(res), col)
		}
		code, ok := reasons[res[col].Reason]
		if !ok {
			return failure(fmt.Errorf("fsai: solver_reason: reason %q has no code", res[col].Reason))
		}
		*reason = code
		return nil
	})
}
