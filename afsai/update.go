package afsai

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Updater recomputes a Preconditioner for new values of A on the patterns
// New chose, for a matrix whose values change while its pattern stays
// (Newton steps, time steps). The first Update finds what does not change:
// the structure of the local system and the plan that gathers its values
// from the neighbours, G's patterns in the local numbering, the stripes of
// G and G' and the plan that moves values from G to G' (both plans are
// found by running the set-up's own gather and transpose on entry numbers
// instead of values). Every Update then moves values only: it gathers the
// local system's values, computes the exact FSAI rows on G's patterns with
// FixedPattern (on the backend when it is a FixedDevice and the set-up is in
// single precision, as New computes on a Device: with a plan that the
// device prepares once and keeps until Free), moves them to G' and copies
// both into the device blocks, which keep their memory and halo plans.
//
// What it saves over New is the pattern search (the Kaporin gradients of
// the adaptive set-up, the symbolic powers of the static one), the assembly
// of the local system and of the distributed matrices of G and G', and
// their allocation. A row whose dense factorization breaks down (possible
// in single precision) keeps zeros beyond the columns that factored. For
// static FSAI the rows are the exact FSAI on the post-filtered pattern
// rather than the rescaled filtered rows. The preconditioner's Info still
// describes its set-up.
type Updater struct {
	p   *Preconditioner
	A   *dsmat.Matrix
	cfg Config

	// found by the first Update
	ls        *localSystem      // its values are rewritten by every Update
	gather    *dsmat.ValuePlan  // A's block values (flat) to ls.A.Val
	flat      []float64         // A's block values: Diag, then Off in order
	patterns  [][]int32         // G's rows in the local system's numbering
	g, gt     *dsmat.Rows       // the stripes of G and G'
	transpose *dsmat.ValuePlan  // g.Val to gt.Val
	gSlots    *dsmat.ValueSlots // g.Val into G's blocks
	gtSlots   *dsmat.ValueSlots // gt.Val into G''s blocks

	// for a single-precision set-up, found by the Update that first needs them
	a32      *csr.Matrix[float32] // ls.A in single precision, its values rewritten by every Update
	plan     FixedPlan            // the backend's, for ls.A's pattern and G's patterns
	noDevice bool                 // the backend refused the plan: the rows are computed on the CPU

	Times UpdateTimes // of the last Update
}

// NewUpdater prepares updates of p, which New computed for A with cfg. A
// keeps its pattern and partition; Update reads its current values. Free
// releases what the Updater holds on the device.
func NewUpdater(p *Preconditioner, A *dsmat.Matrix, cfg Config) *Updater {
	return &Updater{p: p, A: A, cfg: cfg}
}

// Update recomputes G and G' from A's current values. Collective.
func (u *Updater) Update() error {
	c := u.A.Comm
	if u.ls == nil {
		if err := u.prepare(); err != nil {
			return err
		}
	}
	t := time.Now()
	u.flat = flatten(u.A, u.flat[:0])
	err := u.gather.Move(u.ls.A.Val, u.flat)
	u.Times.GatherS = time.Since(t).Seconds()
	if err == nil {
		t = time.Now()
		err = u.fixedRows()
		u.Times.ComputeS = time.Since(t).Seconds()
	}
	t = time.Now()
	if err == nil {
		u.gSlots.Set(u.g.Val)
	}
	if err := c.Agree(err); err != nil {
		return err
	}
	err = u.transpose.Move(u.gt.Val, u.g.Val)
	if err == nil {
		u.gtSlots.Set(u.gt.Val)
	}
	u.Times.TransposeS = time.Since(t).Seconds()
	t = time.Now()
	if err == nil {
		err = u.p.G.Refresh()
	}
	if err == nil {
		err = u.p.Gt.Refresh()
	}
	err = c.Agree(err)
	u.Times.UploadS = time.Since(t).Seconds()
	return err
}

// UpdateTimes are this rank's seconds in the stages of the last Update.
type UpdateTimes struct {
	GatherS    float64 // A's values into the local system, from the neighbours
	ComputeS   float64 // the FSAI rows on G's patterns (CPU or device), into G's stripe
	TransposeS float64 // G's values into its blocks, and on to G''s
	UploadS    float64 // both into their blocks on the backend
}

// prepare finds the structures and plans that every Update reuses.
// Collective.
func (u *Updater) prepare() error {
	c := u.A.Comm
	if err := c.Agree(u.p.hostDiagonals()); err != nil {
		return err
	}
	n := len(flatten(u.A, nil))
	first, err := dsmat.FirstEntry(c, n)
	if err != nil {
		return err
	}
	ls, err := gatherLocal(numbered(u.A, first), u.cfg.power(), u.cfg.reach(), backend.Double) // entry numbers: exact in float64
	if err := c.Agree(err); err != nil {
		return err
	}
	gather, err := dsmat.NewValuePlan(c, n, entryNumbers(ls.A.Val))
	if err := c.Agree(err); err != nil {
		return err
	}
	patterns, g, err := localPatterns(u.p.G.Matrix(), ls)
	if err := c.Agree(err); err != nil {
		return err
	}
	if first, err = dsmat.FirstEntry(c, len(g.Val)); err != nil {
		return err
	}
	for k := range g.Val {
		g.Val[k] = float64(first + int64(k))
	}
	gt, err := dsmat.Transpose(c, u.A.Part, g)
	if err != nil {
		return err
	}
	transpose, err := dsmat.NewValuePlan(c, len(g.Val), entryNumbers(gt.Val))
	var gSlots, gtSlots *dsmat.ValueSlots
	if err == nil {
		gSlots, err = u.p.G.Matrix().NewValueSlots(g)
	}
	if err == nil {
		gtSlots, err = u.p.Gt.Matrix().NewValueSlots(gt)
	}
	if err := c.Agree(err); err != nil {
		return err
	}
	u.ls, u.gather, u.patterns, u.g, u.gt, u.transpose = ls, gather, patterns, g, gt, transpose
	u.gSlots, u.gtSlots = gSlots, gtSlots
	return nil
}

// flatten appends the values of A's blocks to dst: the diagonal block, then
// the off-diagonal blocks in order.
func flatten(A *dsmat.Matrix, dst []float64) []float64 {
	dst = append(dst, A.Diag.Val...)
	for _, b := range A.Off {
		dst = append(dst, b.A.Val...)
	}
	return dst
}

// numbered returns a copy of A whose values are the global numbers of its
// entries in flatten's order, from first on.
func numbered(A *dsmat.Matrix, first int64) *dsmat.Matrix {
	next := first
	number := func(m *csr.Matrix[float64]) *csr.Matrix[float64] {
		out := *m
		out.Val = make([]float64, len(m.Val))
		for k := range out.Val {
			out.Val[k] = float64(next)
			next++
		}
		return &out
	}
	idA := *A
	idA.Diag = number(A.Diag)
	idA.Off = slices.Clone(A.Off)
	for k := range idA.Off {
		idA.Off[k].A = number(A.Off[k].A)
	}
	return &idA
}

// entryNumbers reads back the entry numbers that values carry.
func entryNumbers(vals []float64) []int64 {
	ids := make([]int64, len(vals))
	for k, v := range vals {
		ids[k] = int64(v)
	}
	return ids
}

// localPatterns returns, for each row of this rank's stripe of G, its
// columns (diagonal included, ascending) in the numbering of the local
// system ls, and the stripe of G in global numbering without values.
func localPatterns(G *dsmat.Matrix, ls *localSystem) ([][]int32, *dsmat.Rows, error) {
	first := G.First()
	local := func(gc int64) (int32, error) {
		c := ls.local(gc)
		if c < 0 {
			return 0, fmt.Errorf("afsai: update: G has column %d, which is not in the local system: is Config the set-up's?", gc)
		}
		return c, nil
	}
	type block struct {
		b    *dsmat.Block
		next int // the next of b.Rows
	}
	blocks := make([]block, len(G.Off))
	for k := range G.Off {
		blocks[k] = block{b: &G.Off[k]}
	}
	rows := &dsmat.Rows{N: G.N(), First: first, RowPtr: make([]int64, 1, G.LocalRows()+1)}
	patterns := make([][]int32, G.LocalRows())
	for i := range patterns {
		var p []int32
		for k := range blocks { // lower triangular: left blocks in rank order, then the diagonal block
			bl := &blocks[k]
			if bl.next == len(bl.b.Rows) || int(bl.b.Rows[bl.next]) != i {
				continue
			}
			cols, _ := bl.b.A.Row(bl.next)
			bl.next++
			for _, c := range cols {
				gc := bl.b.Cols[c]
				lc, err := local(gc)
				if err != nil {
					return nil, nil, err
				}
				rows.Col = append(rows.Col, gc)
				p = append(p, lc)
			}
		}
		cols, _ := G.Diag.Row(i)
		for _, c := range cols {
			lc, err := local(first + int64(c))
			if err != nil {
				return nil, nil, err
			}
			rows.Col = append(rows.Col, first+int64(c))
			p = append(p, lc)
		}
		if !slices.IsSorted(p) {
			return nil, nil, fmt.Errorf("afsai: update: row %d of G is not lower triangular", first+int64(i))
		}
		patterns[i] = p
		rows.RowPtr = append(rows.RowPtr, int64(len(rows.Col)))
	}
	rows.Val = make([]float64, len(rows.Col))
	return patterns, rows, nil
}

// fixedRows computes the FSAI rows of the rank's own rows on their
// patterns from the local system's values, in the set-up precision, and
// writes them into G's stripe: in single precision with the backend's plan
// when it is a FixedDevice (on the CPU for input the device does not
// support).
func (u *Updater) fixedRows() error {
	if u.cfg.Setup != backend.Single {
		g, _, err := FixedPattern(u.ls.A, u.ls.own, u.patterns)
		if err == nil {
			onPattern(g, u.patterns, u.g.RowPtr, u.g.Val)
		}
		return err
	}
	a := u.single()
	g, err := u.deviceRows(a)
	if errors.Is(err, ErrDeviceUnsupported) {
		g, _, err = FixedPattern(a, u.ls.own, u.patterns)
	}
	if err == nil {
		onPattern(g, u.patterns, u.g.RowPtr, u.g.Val)
	}
	return err
}

// single returns the local system in single precision: its values
// converted from the current ones on all cores, into memory kept from one
// Update to the next.
func (u *Updater) single() *csr.Matrix[float32] {
	src := u.ls.A
	if u.a32 == nil {
		u.a32 = &csr.Matrix[float32]{Rows: src.Rows, Cols: src.Cols, RowPtr: src.RowPtr, ColIdx: src.ColIdx,
			Val: make([]float32, len(src.Val))}
	}
	dst := u.a32.Val
	parallel.For(len(dst), func(_, lo, hi int) {
		for k, v := range src.Val[lo:hi] {
			dst[lo+k] = float32(v)
		}
	})
	return u.a32
}

// deviceRows computes the rows with the backend's plan, which the first
// call prepares. It returns an error wrapping ErrDeviceUnsupported when
// the backend is not a FixedDevice or refused the plan.
func (u *Updater) deviceRows(a *csr.Matrix[float32]) (*csr.Matrix[float32], error) {
	if u.plan == nil {
		dev, ok := u.p.G.Backend().(FixedDevice)
		if !ok || u.noDevice {
			return nil, ErrDeviceUnsupported
		}
		plan, err := dev.PrepareFixed(a, u.ls.own, u.patterns)
		if err != nil {
			u.noDevice = errors.Is(err, ErrDeviceUnsupported)
			return nil, err
		}
		u.plan = plan
	}
	g, _, err := u.plan.Compute(a.Val)
	return g, err
}

// Free releases the device's plan, if there is one. The Updater stays
// usable: the next Update prepares a plan again.
func (u *Updater) Free() {
	if u.plan != nil {
		u.plan.Free()
		u.plan = nil
	}
}

// onPattern writes the values of g's rows into vals, laid out on patterns
// (sorted columns) with row i from rowPtr[i]: a row that FixedPattern
// shortened after a breakdown gets zeros in the columns it lost.
func onPattern[T csr.Real](g *csr.Matrix[T], patterns [][]int32, rowPtr []int64, vals []float64) {
	parallel.For(len(patterns), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			cols, gv := g.Row(i)
			at, k := rowPtr[i], 0
			for _, c := range patterns[i] {
				vals[at] = 0
				if k < len(cols) && cols[k] == c {
					vals[at] = float64(gv[k])
					k++
				}
				at++
			}
		}
	})
}
