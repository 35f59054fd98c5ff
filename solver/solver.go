package solver

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/spai"
	"github.com/fsai-dist/fsai-dist/twolevel"
)

// Solver solves A x = b by a Krylov method (Options.Method) with a
// preconditioner (Options.Prec) for a Matrix A, keeping everything it set up
// (the matrix and the preconditioner on the backend, the halo plans, the
// device vectors) from one solve to the next.
//
// Calls on one Solver must be serialized. One that starts while another
// runs (from another goroutine) is refused with ErrBusy before it
// communicates, so the refusal itself never waits on other ranks; but the
// call that runs is collective, and whether two calls overlap may differ
// from rank to rank, so under MPI a program that meets ErrBusy has a bug and
// should abort.
type Solver struct {
	busy atomic.Bool // a call is running (enter, leave)
	parts
}

// parts are what New sets up and Free releases; m is nil after Free.
type parts struct {
	m     *Matrix
	opt   Options
	be    backend.Backend
	ownBE bool // New opened be and Free closes it
	op    *dsmat.Operator
	prec  krylov.Preconditioner
	b, x  *ddmat.Dense
	ws    Method // the method's vectors, kept across solves
	// updater keeps what UpdateValues reuses for an FSAI preconditioner;
	// made by the first UpdateValues, dropped by Rebuild.
	updater *afsai.Updater
	many    *block // SolveMany's vectors for its last number of columns
}

// Result reports how a solve ended (package krylov's type, which every
// Krylov method returns; pcg.Result names the same type).
type Result = krylov.Result

// ErrBusy is the error of a call on a Solver that another call, from
// another goroutine, is running on.
var ErrBusy = errors.New("the solver is in use by another call: calls on one solver must be serialized")

// ErrFreed is the error of a call on a Solver after its Free, or on one
// that New did not make.
var ErrFreed = errors.New("the solver was freed, or not made by New")

// enter starts the call named what on s, before it communicates: it fails
// with ErrBusy while another call runs, and with ErrFreed after Free. A call
// that entered leaves when it returns.
func (s *Solver) enter(what string) error {
	if s == nil {
		return fmt.Errorf("solver: %s: %w", what, ErrFreed)
	}
	if !s.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("solver: %s: %w", what, ErrBusy)
	}
	if s.m == nil {
		s.leave()
		return fmt.Errorf("solver: %s: %w", what, ErrFreed)
	}
	return nil
}

// leave ends the call that entered.
func (s *Solver) leave() { s.busy.Store(false) }

// block holds the device blocks and workspace of SolveMany for k columns,
// and the host block in the backend's row-major layout.
type block struct {
	k     int
	b, x  *ddmat.Dense
	ws    Method
	host  []float64 // pinned: k columns move at the bus's speed
	unpin func()
}

func (bl *block) free() {
	if bl.unpin != nil {
		bl.unpin()
	}
	if bl.ws != nil {
		bl.ws.Free()
	}
	for _, v := range []*ddmat.Dense{bl.b, bl.x} {
		if v != nil {
			v.Free()
		}
	}
}

// New sets up a solver for m on be, or on the backend opt.Backend names
// when be is nil: it copies m to the backend and computes the
// preconditioner (Bind, then SetUp). Zero fields of opt take their
// defaults. Collective over m's communicator. On an error (bad options, a
// matrix the preconditioner's set-up rejects, a device failure) it releases
// what it made and returns no solver.
func New(m *Matrix, be backend.Backend, opt Options) (*Solver, error) {
	s, err := Bind(m, be, opt.withDefaults())
	if err != nil {
		return nil, err
	}
	if s.prec, err = s.newPrec(); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// Bind is the first half of New, for callers that time the stages or
// fill the solver's vectors (Vectors) before the preconditioner is set up,
// as the command line does: it opens the backend when be is nil, copies m
// to it and allocates the method's vectors for one right-hand side. opt is
// taken as given (start from DefaultOptions): a zero MaxIt allows no
// iteration. SetUp completes the solver. Collective; on an error it
// releases what it made.
func Bind(m *Matrix, be backend.Backend, opt Options) (*Solver, error) {
	if !m.valid() {
		return nil, errors.New("solver: new: the matrix is nil, or not made by NewMatrix")
	}
	c := m.Comm()
	opt, err := opt.check()
	if err := c.Agree(err); err != nil {
		return nil, err
	}
	s := &Solver{parts: parts{m: m, opt: opt, be: be}}
	if be == nil {
		s.be, _, err = OpenBackend(c, opt.BackendOptions())
		if err != nil {
			err = fmt.Errorf("solver: open backend: %w", err)
		}
		s.ownBE = err == nil
	}
	if err == nil {
		s.op, err = s.bind()
	}
	n := m.LocalRows()
	if err == nil {
		s.b, err = ddmat.NewVector(c, s.be, n)
	}
	if err == nil {
		s.x, err = ddmat.NewVector(c, s.be, n)
	}
	if err == nil {
		s.ws, err = methods[opt.Method].new(s.operator(), s.b, opt)
	}
	if err := c.Agree(err); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// bind copies the matrix to the backend, in float32 where its values are
// float32 numbers unless Options.Wide.
func (s *Solver) bind() (*dsmat.Operator, error) {
	if s.opt.Wide {
		return s.m.a.BindWide(s.be)
	}
	return s.m.a.Bind(s.be, backend.Double)
}

// SetUp sets up the preconditioner of a solver that Bind made. Collective.
func (s *Solver) SetUp() error {
	if err := s.enter("set up"); err != nil {
		return err
	}
	defer s.leave()
	var err error
	if s.prec != nil {
		err = errors.New("solver: set up: the preconditioner is set up (Rebuild sets it up anew)")
	}
	if err := s.m.Comm().Agree(err); err != nil {
		return err
	}
	s.prec, err = s.newPrec()
	return err
}

// ready refuses a solve before SetUp.
func (s *Solver) ready(what string) error {
	if s.prec == nil {
		return fmt.Errorf("solver: %s: no preconditioner: Bind needs SetUp", what)
	}
	return nil
}

// Solve solves A x = b for this rank's rows of b and x (LocalRows entries
// each): x holds the initial guess on entry (zeros, or the previous step's
// solution) and the iterate on return. A solve that does not converge is
// not an error: Result says how it ended. Vectors of the wrong length are
// an error on every rank, and ErrBusy and ErrFreed come before any
// communication. A b or x holding NaN or Inf is refused with an error that
// wraps ErrInput (comm.ErrPeer on the other ranks), and the ranks stay in
// step. Any other error means the machinery failed (MPI, device), after
// which the ranks may be out of step and the program should abort.
// Collective.
func (s *Solver) Solve(b, x []float64) (Result, error) {
	if err := s.enter("solve"); err != nil {
		return Result{}, err
	}
	defer s.leave()
	n := s.m.LocalRows()
	var err error
	if len(b) != n || len(x) != n {
		err = fmt.Errorf("solver: solve: b has %d entries and x %d, this rank has %d rows", len(b), len(x), n)
	}
	if err == nil {
		err = s.ready("solve")
	}
	if err := s.m.Comm().Agree(err); err != nil {
		return Result{}, err
	}
	if err := s.checkFinite(b, x, 1); err != nil {
		return Result{}, err
	}
	s.be.Upload(s.b.V, b)
	s.be.Upload(s.x.V, x)
	res, err := s.solveBlock(s.ws, s.b, s.x)
	if err == nil {
		err = s.x.Get(x)
	}
	if err != nil {
		return Result{}, fmt.Errorf("solver: solve: %w", err)
	}
	return res[0], nil
}

// SolveMany solves A X = B for k right-hand sides at once: one product
// with A (and with G and G') and one Allreduce per iteration serve all of
// them, so k systems cost much less than k solves. b and x hold this rank's
// rows of each column in turn (column c is b[c*n:(c+1)*n], n = LocalRows(),
// as a Fortran array b(n, k)); x holds the initial guesses and receives the
// iterates. Every column stops on its own; the Results say how each ended.
// Collective.
func (s *Solver) SolveMany(b, x []float64, k int) ([]Result, error) {
	if err := s.enter("solve many"); err != nil {
		return nil, err
	}
	defer s.leave()
	n := s.m.LocalRows()
	var err error
	if k < 1 || len(b) != n*k || len(x) != n*k {
		err = fmt.Errorf("solver: solve many: b has %d entries and x %d for %d right-hand sides of %d rows on this rank", len(b), len(x), k, n)
	}
	if err == nil && k > 1 && !MethodSolvesBlocks(s.opt.Method) {
		err = fmt.Errorf("solver: solve many: %w: %d right-hand sides, but %s solves one at a time", ErrInput, k, s.opt.Method)
	}
	if err == nil {
		err = s.ready("solve many")
	}
	if err := s.m.Comm().Agree(err); err != nil {
		return nil, err
	}
	if err := s.checkFinite(b, x, k); err != nil {
		return nil, err
	}
	bl, err := s.block(k)
	if err == nil {
		err = bl.hostBlock(s.be)
	}
	if err := s.m.Comm().Agree(err); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		cols []float64
		d    *ddmat.Dense
	}{{b, bl.b}, {x, bl.x}} {
		interleave(bl.host, v.cols, k)
		if err := v.d.Set(bl.host); err != nil {
			return nil, fmt.Errorf("solver: solve many: %w", err)
		}
	}
	res, err := s.solveBlock(bl.ws, bl.b, bl.x)
	if err == nil {
		err = bl.x.Get(bl.host)
	}
	if err != nil {
		return res, fmt.Errorf("solver: solve many: %w", err)
	}
	deinterleave(x, bl.host, k)
	return res, nil
}

// block returns SolveMany's vectors for k columns, replacing those of
// another k. Their host block comes with their first SolveMany (hostBlock).
func (s *Solver) block(k int) (*block, error) {
	if s.many != nil && s.many.k == k {
		return s.many, nil
	}
	if s.many != nil {
		s.many.free()
		s.many = nil
	}
	c, n := s.m.Comm(), s.m.LocalRows()
	bl := &block{k: k}
	var err error
	bl.b, err = ddmat.New(c, s.be, n, k)
	if err == nil {
		bl.x, err = ddmat.New(c, s.be, n, k)
	}
	if err == nil {
		bl.ws, err = methods[s.opt.Method].new(s.operator(), bl.b, s.opt)
	}
	if err != nil {
		bl.free()
		return nil, fmt.Errorf("solver: solve many: %w", err)
	}
	s.many = bl
	return bl, nil
}

// hostBlock allocates and pins the block's host copy, once.
func (bl *block) hostBlock(be backend.Backend) error {
	if bl.host != nil {
		return nil
	}
	host := make([]float64, bl.b.Rows*bl.k)
	unpin, err := be.Pin(host)
	if err != nil {
		return fmt.Errorf("solver: solve many: %w", err)
	}
	bl.host, bl.unpin = host, unpin
	return nil
}

// interleave turns k columns stored one after the other into the row-major
// block of the backend. Rows are written in order, over all cores: the
// column-by-column loop wrote each cache line k times.
func interleave(rowMajor, cols []float64, k int) {
	n := len(cols) / k
	parallel.For(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			for c := range k {
				rowMajor[i*k+c] = cols[c*n+i]
			}
		}
	})
}

// deinterleave is the inverse of interleave.
func deinterleave(cols, rowMajor []float64, k int) {
	n := len(cols) / k
	parallel.For(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			for c := range k {
				cols[c*n+i] = rowMajor[i*k+c]
			}
		}
	})
}

// SetValues gives the matrix new values on its pattern: vals lists this
// rank's entries in the order given to NewMatrix. The copy on the backend
// is overwritten in place (a block stored in float32 because its values
// were float32 numbers moves to float64 if the new ones are not; see
// dsmat.Matrix.Bind); the preconditioner is kept as it was (a lagged
// preconditioner, still symmetric positive definite, which PCG may use as
// long as it helps). Other solvers of the same Matrix see the new values
// only after their own SetValues. Collective; on bad input nothing changes.
func (s *Solver) SetValues(vals []float64) error {
	if err := s.enter("set values"); err != nil {
		return err
	}
	defer s.leave()
	return s.setValues(vals, false)
}

// UpdateValues is SetValues followed by the preconditioner's recomputation
// for the new values on its existing pattern: the new diagonal for Jacobi;
// for the FSAI preconditioners, the exact FSAI rows on G's pattern
// (afsai.Preconditioner.Update), without the pattern search and with the
// same halo plans. Collective. The new values are checked before anything
// changes: on bad input (a wrong length, a non-finite value, or, for every
// preconditioner but none and spai, a diagonal entry that New would
// refuse: not positive where NeedsSPD, zero otherwise) every rank returns
// an error and the solver solves the old system exactly as before. SPAI is
// set up anew on the new values; where that fails (a singular A) the
// solver keeps the new values and the old M.
func (s *Solver) UpdateValues(vals []float64) error {
	if err := s.enter("update values"); err != nil {
		return err
	}
	defer s.leave()
	if err := s.setValues(vals, !precs[s.opt.Prec].anyDiagonal); err != nil {
		return err
	}
	return s.updatePrec()
}

// setValues is SetValues; with diagonal it also refuses values whose
// diagonal the preconditioner's set-up would refuse, before anything
// changes.
func (s *Solver) setValues(vals []float64, diagonal bool) error {
	c := s.m.Comm()
	err := s.m.checkValues(vals)
	if err == nil && diagonal {
		err = s.m.checkDiagonal(vals, NeedsSPD(s.opt.Method, s.opt.Prec))
	}
	if err := c.Agree(err); err != nil {
		return err
	}
	s.m.storeValues(vals)
	err = s.m.a.SetValues(s.m.rows)
	if err == nil {
		err = s.op.Refresh()
	}
	return c.Agree(err)
}

// Rebuild sets up the preconditioner anew on the current values, pattern
// included: for when the values have drifted so far that the pattern chosen
// for the first ones no longer serves. The old preconditioner is freed once
// the new one is built. Collective.
func (s *Solver) Rebuild() error {
	if err := s.enter("rebuild"); err != nil {
		return err
	}
	defer s.leave()
	return s.rebuild()
}

// rebuild is Rebuild.
func (s *Solver) rebuild() error {
	p, err := s.newPrec()
	if err != nil {
		return err
	}
	if s.prec != nil { // nil between Bind and SetUp
		s.prec.Free()
	}
	if s.updater != nil {
		s.updater.Free()
	}
	s.prec, s.updater = p, nil
	return nil
}

// UpdateTimes returns this rank's stage times of the last UpdateValues of
// an FSAI preconditioner, and false when there was none since the last
// set-up.
func (s *Solver) UpdateTimes() (afsai.UpdateTimes, bool) {
	if s.updater == nil {
		return afsai.UpdateTimes{}, false
	}
	return s.updater.Times, true
}

// Matrix returns the solver's matrix.
func (s *Solver) Matrix() *Matrix { return s.m }

// Backend returns the backend the solver computes on.
func (s *Solver) Backend() backend.Backend { return s.be }

// Preconditioner returns the preconditioner; for afsai and fsai it is an
// *afsai.Preconditioner, whose Info describes it (FSAIInfo), for spai an
// *spai.Preconditioner (SPAIInfo); with a coarse space a
// *twolevel.Preconditioner around one of them (CoarseInfo).
func (s *Solver) Preconditioner() krylov.Preconditioner { return s.prec }

// FSAIInfo describes the set-up of an FSAI preconditioner, and is nil for
// the others.
func (s *Solver) FSAIInfo() *FSAIInfo {
	if p, ok := s.inner().(*afsai.Preconditioner); ok {
		return &p.Info
	}
	return nil
}

// SPAIInfo describes the set-up of a SPAI preconditioner, and is nil for
// the others.
func (s *Solver) SPAIInfo() *SPAIInfo {
	if p, ok := s.inner().(*spai.Preconditioner); ok {
		return &p.Info
	}
	return nil
}

// CoarseInfo describes the coarse space, and is nil without one.
func (s *Solver) CoarseInfo() *CoarseInfo {
	if p, ok := s.prec.(*twolevel.Preconditioner); ok {
		info := p.Info()
		return &info
	}
	return nil
}

// Operator returns the matrix as bound to the backend: its distributed
// product, halo links and storage.
func (s *Solver) Operator() *dsmat.Operator { return s.op }

// Vectors returns the solver's device blocks of k right-hand sides and
// initial guesses (row-major, n x k), for callers that fill them on the
// device and solve them with SolveVectors without copying through host
// slices. The blocks of k > 1 replace those of another k > 1. Collective.
func (s *Solver) Vectors(k int) (b, x *ddmat.Dense, err error) {
	if err := s.enter("vectors"); err != nil {
		return nil, nil, err
	}
	defer s.leave()
	if k == 1 {
		return s.b, s.x, nil
	}
	bl, err := s.block(k)
	if err := s.m.Comm().Agree(err); err != nil {
		return nil, nil, err
	}
	return bl.b, bl.x, nil
}

// SolveVectors solves A X = B on the blocks of k columns that Vectors
// returned, x holding the initial guesses and receiving the iterates; one
// Result per column. The vectors are not checked for NaN or Inf: a column
// that holds them stops with reason nan. Collective.
func (s *Solver) SolveVectors(k int) ([]Result, error) {
	if err := s.enter("solve vectors"); err != nil {
		return nil, err
	}
	defer s.leave()
	err := s.ready("solve vectors")
	if err == nil && k != 1 && (s.many == nil || s.many.k != k) {
		err = fmt.Errorf("solver: solve vectors: no blocks of %d columns (Vectors)", k)
	}
	if err := s.m.Comm().Agree(err); err != nil {
		return nil, err
	}
	ws, b, x := s.ws, s.b, s.x
	if k != 1 {
		ws, b, x = s.many.ws, s.many.b, s.many.x
	}
	res, err := s.solveBlock(ws, b, x)
	if err != nil {
		return nil, fmt.Errorf("solver: solve: %w", err)
	}
	return res, nil
}

// Free releases the solver's device memory, and its backend if New opened
// it. The matrix stays usable. Not collective. Every later call on the
// solver, Free included, returns ErrFreed; Free during another call returns
// ErrBusy and frees nothing.
func (s *Solver) Free() error {
	if err := s.enter("free"); err != nil {
		return err
	}
	defer s.leave()
	return s.release()
}

// release frees what New made, whichever parts it got to, and leaves the
// solver empty.
func (s *Solver) release() error {
	if s.updater != nil {
		s.updater.Free()
	}
	if s.prec != nil {
		s.prec.Free()
	}
	if s.ws != nil {
		s.ws.Free()
	}
	if s.many != nil {
		s.many.free()
	}
	for _, v := range []*ddmat.Dense{s.b, s.x} {
		if v != nil {
			v.Free()
		}
	}
	if s.op != nil {
		s.op.Free()
	}
	var err error
	if s.ownBE {
		err = s.be.Close()
	}
	s.parts = parts{}
	return err
}
