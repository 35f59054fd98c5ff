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
// from the neighbours, G's patterns in the local numbering, where each
// value of the diagonal blocks of G and G' comes from among the stripe's
// entries (G' is a fixed permutation of them), and the plan that moves the
// stripe's few entries in other ranks' columns on to those ranks' G' (both
// plans are found by running the set-up's own gather and transpose on entry
// numbers instead of values). Every Update then moves values only: it
// gathers the local system's values, computes the exact FSAI rows on G's
// patterns with FixedPattern, puts them into the blocks of G and G', which
// keep their memory and halo plans, and sends the entries in other ranks'
// columns to them.
//
// Where the set-up ran on the device and left the diagonal blocks there
// (Device.AdaptiveFactor), the rows are computed on the device too, by a
// plan that it prepares once and keeps until Free (Device.PrepareFixed), and stay
// there when the plan can place them (FixedPlan.Place): only A's values go to
// the device and only the entries in other ranks' columns come back. A rank
// whose device cannot place them takes them to the host and uploads both
// blocks; the ranks decide this each on its own.
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
	ls       *localSystem     // its values are rewritten by every Update
	own      []int            // ls's own rows (ownRows)
	gather   *dsmat.ValuePlan // A's block values (flat) to ls.A.Val
	flat     []float64        // A's block values: Diag, then Off in order
	patterns [][]int32        // G's rows in the local system's numbering
	gPtr     []int64          // where each row of G's stripe starts among its entries
	gVal     []float64        // the values of G's stripe, row by row
	gtVal    []float64        // the same of G''s stripe
	// diagFrom holds, for each value of G's and of G''s diagonal block,
	// the entry of gVal it is.
	diagFrom         [2][]int32
	left             []int32           // the entries of gVal in other ranks' columns
	leftT            *dsmat.ValuePlan  // their values on to the entries of gtVal in other ranks' columns
	gtLeft           []float64         // those entries' values
	gtLeftAt         []int32           // and their places in gtVal
	gSlots, gtSlots  *dsmat.ValueSlots // gVal and gtVal into the off-diagonal blocks
	onDevice         bool              // the set-up left the diagonal blocks on the device only
	a32              *csr.Matrix[float32]
	plan             FixedPlan // the device's, for ls.A's pattern and G's patterns
	placing          FixedPlan // plan, when it places the rows in the device blocks
	picked           []float32 // the rows' entries in other ranks' columns, from the device
	noDevice, noPlan bool      // the device refused the plan, or to place its rows

	Times UpdateTimes // of the last Update
}

// NewUpdater prepares updates of p, which New computed for A with cfg. A
// keeps its pattern and partition; Update reads its current values. Free
// releases what the Updater holds on the device.
func NewUpdater(p *Preconditioner, A *dsmat.Matrix, cfg Config) *Updater {
	return &Updater{p: p, A: A, cfg: cfg}
}

// Update recomputes G and G' from A's current values. Collective. Where A's
// diagonal needs the scaled set-up (newScaled), or the preconditioner was
// set up scaled, it sets the preconditioner up afresh: the scaling changes with the values, which the
// plans of an update do not follow.
func (u *Updater) Update() error {
	c := u.A.Comm
	s, err := diagonalScaling(u.A)
	if err != nil {
		return err
	}
	if s != nil || u.p.scale != nil {
		return u.rebuild()
	}
	if u.ls == nil {
		if err := u.prepare(); err != nil {
			return err
		}
	}
	t := time.Now()
	u.flat = flatten(u.A, u.flat)
	err = u.gather.Move(u.ls.A.Val, u.flat)
	u.Times.GatherS = time.Since(t).Seconds()
	placed := false
	if err == nil {
		t = time.Now()
		var st Stats
		placed, st, err = u.computeRows()
		err = u.ls.named(err)
		u.Times.ComputeS = time.Since(t).Seconds()
		u.Times.OnDevice, u.Times.FallbackRows = placed, st.FallbackRows
	}
	t = time.Now()
	if err == nil {
		err = u.setDiagonals(placed)
	}
	if err := c.Agree(err); err != nil {
		return err
	}
	u.gSlots.SetOffDiagonal(u.gVal)
	err = u.leftT.Move(u.gtLeft, u.gVal)
	if err == nil {
		for j, k := range u.gtLeftAt {
			u.gtVal[k] = u.gtLeft[j]
		}
		u.gtSlots.SetOffDiagonal(u.gtVal)
	}
	u.Times.TransposeS = time.Since(t).Seconds()
	t = time.Now()
	for _, op := range []*dsmat.Operator{u.p.G, u.p.Gt} {
		if err == nil && placed {
			err = op.RefreshOffDiagonal()
		} else if err == nil {
			err = op.Refresh()
		}
	}
	err = c.Agree(err)
	u.Times.UploadS = time.Since(t).Seconds()
	return err
}

// rebuild replaces the preconditioner by one set up afresh on A's current
// values; its time counts as ComputeS. Collective.
func (u *Updater) rebuild() error {
	t := time.Now()
	fresh, err := New(u.A, u.p.G.Backend(), u.cfg)
	if err != nil {
		return err
	}
	old := *u.p
	*u.p = *fresh
	old.Free()
	u.Free()
	*u = Updater{p: u.p, A: u.A, cfg: u.cfg, Times: UpdateTimes{ComputeS: time.Since(t).Seconds()}}
	return nil
}

// UpdateTimes describe this rank's last Update: the seconds of its stages,
// and where its rows went.
type UpdateTimes struct {
	GatherS    float64 // A's values into the local system, from the neighbours
	ComputeS   float64 // the FSAI rows on G's patterns (CPU or device)
	TransposeS float64 // G's values into its blocks and G''s (on the device: the ones in other ranks' columns)
	UploadS    float64 // the blocks' values that the host set, to the backend
	// OnDevice: the rows stayed on the device (FixedPlan.Place); else they
	// went through the host.
	OnDevice bool
	// FallbackRows counts the rows whose factorization broke down (Stats).
	FallbackRows int
}

// prepare finds the structures and plans that every Update reuses.
// Collective.
func (u *Updater) prepare() error {
	c := u.A.Comm
	onDevice := u.p.G.Matrix().Diag == nil
	if err := c.Agree(u.p.hostDiagonals(u.cfg.Device)); err != nil {
		return err
	}
	n := valueCount(u.A)
	first, err := dsmat.FirstEntry(c, n)
	if err != nil {
		return err
	}
	ls, err := gatherLocal(numbered(u.A, first), u.cfg.power(), u.p.Info.Reach, backend.Double, true) // entry numbers: exact in float64
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
	var gSlots, gtSlots *dsmat.ValueSlots
	gSlots, err = u.p.G.Matrix().NewValueSlots(g)
	if err == nil {
		gtSlots, err = u.p.Gt.Matrix().NewValueSlots(gt)
	}
	var diagT []int32
	if err == nil {
		diagT, err = localEntries(gt.Val, gtSlots.DiagonalSlots(), first, len(g.Val))
	}
	lo, hi := u.A.Part.Range(c.Rank())
	left := outside(g.Col, lo, hi)
	gtLeftAt := outside(gt.Col, lo, hi)
	want := make([]int64, len(gtLeftAt))
	for j, k := range gtLeftAt {
		want[j] = int64(gt.Val[k])
	}
	if err := c.Agree(err); err != nil {
		return err
	}
	leftT, err := dsmat.NewValuePlan(c, len(g.Val), want)
	if err := c.Agree(err); err != nil {
		return err
	}
	u.ls, u.own, u.gather, u.patterns = ls, ls.ownRows(), gather, patterns
	u.gPtr, u.gVal, u.gtVal = g.RowPtr, g.Val, gt.Val // the columns are not needed again
	u.diagFrom = [2][]int32{gSlots.DiagonalSlots(), diagT}
	u.left, u.leftT, u.gtLeft, u.gtLeftAt = left, leftT, make([]float64, len(want)), gtLeftAt
	u.gSlots, u.gtSlots, u.onDevice = gSlots, gtSlots, onDevice
	return nil
}

// localEntries returns, for each slot, the entry of this rank's stripe
// that the value at slot numbers: values hold global entry numbers, those
// of this rank's n entries from first on.
func localEntries(values []float64, slots []int32, first int64, n int) ([]int32, error) {
	out := make([]int32, len(slots))
	for e, k := range slots {
		i := int64(values[k]) - first
		if i < 0 || i >= int64(n) {
			return nil, fmt.Errorf("afsai: update: G''s diagonal block has entry %d of another rank's G", i+first)
		}
		out[e] = int32(i)
	}
	return out, nil
}

// outside returns the positions of the columns outside [lo, hi): other
// ranks' columns.
func outside(cols []int64, lo, hi int64) []int32 {
	var at []int32
	for k, c := range cols {
		if c < lo || c >= hi {
			at = append(at, int32(k))
		}
	}
	return at
}

// flatten returns the values of A's blocks, the diagonal block and then
// the off-diagonal blocks in order, in dst's memory when it is large
// enough; it copies on all cores.
func flatten(A *dsmat.Matrix, dst []float64) []float64 {
	n := valueCount(A)
	dst = slices.Grow(dst[:0], n)[:n]
	at := 0
	for _, p := range blockValues(A) {
		parallel.Copy(dst[at:at+len(p)], p)
		at += len(p)
	}
	return dst
}

// blockValues lists the values of A's blocks in flatten's order.
func blockValues(A *dsmat.Matrix) [][]float64 {
	parts := [][]float64{A.Diag.Val}
	for _, b := range A.Off {
		parts = append(parts, b.A.Val)
	}
	return parts
}

// valueCount is the number of values flatten returns.
func valueCount(A *dsmat.Matrix) int {
	n := 0
	for _, p := range blockValues(A) {
		n += len(p)
	}
	return n
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
			return nil, nil, fmt.Errorf("afsai: update: row %d of G is not lower triangular", first+int64(i)+1)
		}
		patterns[i] = p
		rows.RowPtr = append(rows.RowPtr, int64(len(rows.Col)))
	}
	rows.Val = make([]float64, len(rows.Col))
	return patterns, rows, nil
}

// computeRows computes the FSAI rows of the rank's own rows on their
// patterns from the local system's values, in the set-up precision: in
// single precision with the plan of the Config's Device, if any (on the
// CPU for input the device does not support). It reports whether the rows
// stay on the device for setDiagonals (FixedPlan.Place); else they are in
// gVal.
func (u *Updater) computeRows() (placed bool, st Stats, err error) {
	if u.cfg.Setup != backend.Single {
		g, st, err := FixedPattern(u.ls.A, u.own, u.patterns)
		if err == nil {
			onPattern(g, u.patterns, u.gPtr, u.gVal)
		}
		return false, st, err
	}
	a := u.single()
	pl, err := u.placingPlan(a)
	if err != nil {
		return false, st, err
	}
	if pl != nil {
		st, err = pl.ComputeOnDevice(a.Val)
		return err == nil, st, err
	}
	g, st, err := u.deviceRows(a)
	if errors.Is(err, ErrDeviceUnsupported) {
		g, st, err = FixedPattern(a, u.own, u.patterns)
	}
	if err == nil {
		onPattern(g, u.patterns, u.gPtr, u.gVal)
	}
	return false, st, err
}

// setDiagonals puts the rows that computeRows computed into the diagonal
// blocks of G and G', and the rows' entries in other ranks' columns into
// gVal: on the device when they are there (placed), which leaves the
// matrices without host copies of those blocks; else into the host copies,
// read back first where the set-up left the blocks on the device only.
func (u *Updater) setDiagonals(placed bool) error {
	G, Gt := u.p.G, u.p.Gt
	if !placed {
		if err := u.p.hostDiagonals(u.cfg.Device); err != nil {
			return err
		}
		for k, m := range []*dsmat.Matrix{G.Matrix(), Gt.Matrix()} {
			parallel.Gather(m.Diag.Val, u.gVal, u.diagFrom[k])
		}
		return nil
	}
	G.Matrix().DropDiagonal()
	Gt.Matrix().DropDiagonal()
	if err := u.placing.Store([]backend.Matrix{G.DiagonalBlock(), Gt.DiagonalBlock()}, u.picked); err != nil {
		return err
	}
	for j, k := range u.left {
		u.gVal[k] = float64(u.picked[j])
	}
	return nil
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

// devicePlan returns the device's plan for a's pattern and G's patterns,
// which the first call prepares. It returns an error wrapping
// ErrDeviceUnsupported when cfg supplies no Device or it refused
// the plan.
func (u *Updater) devicePlan(a *csr.Matrix[float32]) (FixedPlan, error) {
	if u.plan == nil {
		dev := u.cfg.Device
		if dev == nil || u.noDevice {
			return nil, ErrDeviceUnsupported
		}
		plan, err := dev.PrepareFixed(a, u.own, u.patterns)
		if err != nil {
			u.noDevice = errors.Is(err, ErrDeviceUnsupported)
			return nil, err
		}
		u.plan = plan
	}
	return u.plan, nil
}

// deviceRows computes the rows with the device's plan, on the host.
func (u *Updater) deviceRows(a *csr.Matrix[float32]) (*csr.Matrix[float32], Stats, error) {
	plan, err := u.devicePlan(a)
	if err != nil {
		return nil, Stats{}, err
	}
	return plan.Compute(a.Val)
}

// placingPlan returns the device's plan when it places the rows in the
// diagonal blocks of G and G' on the device, which the first call asks it to;
// nil when the set-up left no blocks there, or the device cannot.
func (u *Updater) placingPlan(a *csr.Matrix[float32]) (FixedPlan, error) {
	if u.placing != nil || !u.onDevice || u.noPlan {
		return u.placing, nil
	}
	u.noPlan = true // unless it works out
	plan, err := u.devicePlan(a)
	if errors.Is(err, ErrDeviceUnsupported) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if u.p.G.DiagonalBlock().Precision() != backend.Single || u.p.Gt.DiagonalBlock().Precision() != backend.Single {
		return nil, nil
	}
	if err := plan.Place(u.diagFrom[:], u.left); errors.Is(err, ErrDeviceUnsupported) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	u.placing, u.picked, u.noPlan = plan, make([]float32, len(u.left)), false
	return plan, nil
}

// Free releases the device's plan, if there is one. The Updater stays
// usable: the next Update prepares a plan again.
func (u *Updater) Free() {
	if u.plan != nil {
		u.plan.Free()
		u.plan, u.placing, u.noPlan = nil, nil, false
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
