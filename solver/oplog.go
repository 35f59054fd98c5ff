package solver

import (
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/krylov"
)

// OpStats are how many operations of one kind this rank ran in a Solver's
// solves, their seconds, and the bytes they must move to and from memory:
// for a product with a CSR matrix, its values, column indices and row
// pointers once and each column of x read and y written once
// (dsmat.Operator.ProductBytes).
type OpStats struct {
	Count   int
	Seconds float64
	Bytes   int64
}

// OpLog accounts for this rank's solve time by operation (Options.Log):
// the products with A (SpMV, halo exchange included), the preconditioner's
// applications (Prec) and the whole solves (Solve); the rest of Solve is
// the method's vector updates and reductions. Each timed operation ends
// with a wait for the backend (backend.Sync), so that its time is the
// device's; this adds a host synchronization per operation, only while a
// log is set. A diagonal preconditioner (jacobi) that the method fuses
// into its vector updates is not applied on its own: its time is in the
// rest, and Prec stays zero.
type OpLog struct {
	SpMV, Prec, Solve OpStats
}

// OpLog is the log of the solver's operations (Options.Log), nil when
// its options set none.
func (s *Solver) OpLog() *OpLog { return s.opt.Log }

// timed runs f, waits for be, and adds the time, one count and bytes to
// st.
func timed(be backend.Backend, st *OpStats, bytes int64, f func() error) error {
	start := time.Now()
	err := f()
	if err == nil {
		err = be.Sync()
	}
	st.Count++
	st.Bytes += bytes
	st.Seconds += time.Since(start).Seconds()
	return err
}

// timedOperator is a krylov.Operator whose products are timed into st.
type timedOperator struct {
	op *dsmat.Operator
	be backend.Backend
	st *OpStats
}

func (t timedOperator) ApplyBlock(y, x backend.Vector, k int) error {
	return timed(t.be, t.st, t.op.ProductBytes(k), func() error { return t.op.ApplyBlock(y, x, k) })
}

func (t timedOperator) ApplyDots(y, x backend.Vector, dots []float64) error {
	return timed(t.be, t.st, t.op.ProductBytes(len(dots)), func() error { return t.op.ApplyDots(y, x, dots) })
}

// applyBytes is a preconditioner that knows the bytes one application to
// k columns must move (afsai.Preconditioner, spai.Preconditioner,
// precond.Jacobi): OpLog's Prec bytes, zero for the others.
type applyBytes interface {
	ApplyBytes(k int) int64
}

// timedPrec is a krylov.Preconditioner whose applications are timed into
// st.
type timedPrec struct {
	krylov.Preconditioner
	be backend.Backend
	st *OpStats
}

func (t timedPrec) Apply(z, r *ddmat.Dense) error {
	var bytes int64
	if m, ok := t.Preconditioner.(applyBytes); ok {
		bytes = m.ApplyBytes(r.Cols)
	}
	return timed(t.be, t.st, bytes, func() error { return t.Preconditioner.Apply(z, r) })
}

// operator is the operator the method's work spaces multiply with: the
// bound matrix, timed when Options.Log is set.
func (s *Solver) operator() krylov.Operator {
	if s.opt.Log == nil {
		return s.op
	}
	return timedOperator{op: s.op, be: s.be, st: &s.opt.Log.SpMV}
}

// solveBlock runs one solve of the method's work space ws with the
// preconditioner, timed (the preconditioner too, unless the method fuses
// a diagonal one) when Options.Log is set.
func (s *Solver) solveBlock(ws Method, b, x *ddmat.Dense) ([]krylov.Result, error) {
	log := s.opt.Log
	if log == nil {
		return ws.SolveBlock(s.prec, b, x, s.opt.krylov())
	}
	M := s.prec
	if _, diagonal := M.(krylov.Diagonal); !diagonal {
		M = timedPrec{Preconditioner: M, be: s.be, st: &log.Prec}
	}
	var res []krylov.Result
	err := timed(s.be, &log.Solve, 0, func() error {
		var err error
		res, err = ws.SolveBlock(M, b, x, s.opt.krylov())
		return err
	})
	return res, err
}
