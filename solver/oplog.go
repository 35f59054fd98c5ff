package solver

import (
	"errors"
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
	// pending are the spans a Clock backend has marked and not yet
	// turned into Seconds.
	pending []span
}

// span is one operation's start and end in a Clock backend's queue.
type span struct{ from, to backend.Mark }

// maxPending is how many spans an OpStats holds before settling the older
// half: reading a span waits for its end, long past by then.
const maxPending = 256

// OpLog accounts for this rank's solve time by operation (Options.Log):
// the products with A (SpMV, halo exchange included), the preconditioner's
// applications (Prec) and the whole solves (Solve); the rest of Solve is
// the method's vector updates and reductions. On a backend.Clock (a GPU)
// each timed operation is bracketed by marks in the device's queue, read
// at the end of the solve, so the log adds no wait to the iteration; on
// other backends each timed operation ends with backend.Sync. A diagonal preconditioner (jacobi) that the method fuses
// into its vector updates is not applied on its own: its time is in the
// rest, and Prec stays zero.
type OpLog struct {
	SpMV, Prec, Solve OpStats
}

// OpLog is the log of the solver's operations (Options.Log), nil when
// its options set none.
func (s *Solver) OpLog() *OpLog { return s.opt.Log }

// timed runs f and adds its time, one count and bytes to st: on a
// backend.Clock as a span of marks that settle reads later, elsewhere as
// the host's time until be has finished.
func timed(be backend.Backend, st *OpStats, bytes int64, f func() error) error {
	st.Count++
	st.Bytes += bytes
	if c, ok := be.(backend.Clock); ok {
		from, err := c.Mark()
		if err != nil {
			return err
		}
		err = f()
		to, merr := c.Mark()
		if merr != nil {
			return errors.Join(err, merr)
		}
		st.pending = append(st.pending, span{from, to})
		if err == nil && len(st.pending) >= maxPending {
			err = st.settle(c, maxPending/2)
		}
		return err
	}
	start := time.Now()
	err := f()
	if err == nil {
		err = be.Sync()
	}
	st.Seconds += time.Since(start).Seconds()
	return err
}

// settle adds the device time of the oldest n pending spans to Seconds.
func (st *OpStats) settle(c backend.Clock, n int) error {
	var errs []error
	for _, sp := range st.pending[:n] {
		s, err := c.Seconds(sp.from, sp.to)
		st.Seconds += s
		errs = append(errs, err)
	}
	st.pending = append(st.pending[:0], st.pending[n:]...)
	return errors.Join(errs...)
}

// settle reads every pending span of l on be, when be is a Clock.
func (l *OpLog) settle(be backend.Backend) error {
	c, ok := be.(backend.Clock)
	if !ok {
		return nil
	}
	var errs []error
	for _, st := range []*OpStats{&l.SpMV, &l.Prec, &l.Solve} {
		errs = append(errs, st.settle(c, len(st.pending)))
	}
	return errors.Join(errs...)
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

// ApplyDotsTo is the product of single-reduction CG (pcg.SumOperator),
// timed as ApplyDots.
func (t timedOperator) ApplyDotsTo(y, x backend.Vector, k int, s backend.Sum) error {
	return timed(t.be, t.st, t.op.ProductBytes(k), func() error { return t.op.ApplyDotsTo(y, x, k, s) })
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

// timedDiagonal is timedPrec for a diagonal preconditioner: a method that
// fuses the scaling into its vector updates (PCG, BiCGSTAB) takes Scaling
// and never calls Apply, so its time stays in the updates'; one that calls
// Apply (GMRES) has it timed as the preconditioner's.
type timedDiagonal struct {
	timedPrec
	diag krylov.Diagonal
}

func (t timedDiagonal) Scaling() backend.Vector { return t.diag.Scaling() }

// operator is the operator the method's work spaces multiply with: the
// bound matrix, timed when Options.Log is set.
func (s *Solver) operator() krylov.Operator {
	if s.opt.Log == nil {
		return s.op
	}
	return timedOperator{op: s.op, be: s.be, st: &s.opt.Log.SpMV}
}

// solveBlock runs one solve of the method's work space ws with the
// preconditioner, timed (the preconditioner's applications too; a method
// that fuses a diagonal one applies it inside its vector updates) when
// Options.Log is set.
func (s *Solver) solveBlock(ws Method, b, x *ddmat.Dense) ([]krylov.Result, error) {
	log := s.opt.Log
	if log == nil {
		return ws.SolveBlock(s.prec, b, x, s.opt.krylov())
	}
	tp := timedPrec{Preconditioner: s.prec, be: s.be, st: &log.Prec}
	var M krylov.Preconditioner = tp
	if d, diagonal := s.prec.(krylov.Diagonal); diagonal {
		M = timedDiagonal{timedPrec: tp, diag: d}
	}
	var res []krylov.Result
	err := timed(s.be, &log.Solve, 0, func() error {
		var err error
		res, err = ws.SolveBlock(M, b, x, s.opt.krylov())
		return err
	})
	return res, errors.Join(err, log.settle(s.be))
}
