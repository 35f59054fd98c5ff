package afsai

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// hostDevice is a Device that computes on the CPU, and declines the static
// set-up and StartRows: the CPU
// backend with the set-up of this package behind the Device methods, and
// the host copies of the blocks it made, for ReadMatrix. It runs New's and
// the Updater's path for a set-up that keeps G on the device without a GPU.
type hostDevice struct {
	*cpu.Backend
	// made holds the blocks' values as the device set them (AdaptiveFactor,
	// a plan's Store); the host path's uploads (Refresh) are not tracked,
	// as the Updater reads blocks back only to overwrite their values.
	made map[backend.Matrix]*csr.Matrix[float64]
	// noPlace makes its plans refuse to place their rows, as a device
	// without room for the maps does.
	noPlace bool
	// scratches counts the factors' Scratch made, released those called
	scratches, released int
}

func (d *hostDevice) StaticFactor(Split, StaticParams) (DeviceFactor, Stats, KernelTimes, error) {
	return DeviceFactor{}, Stats{}, KernelTimes{}, fmt.Errorf("host device: no static set-up: %w", ErrDeviceUnsupported)
}

func (d *hostDevice) StartRows(Split, []int32, int, Params) (RowsRun, []int32, Stats, KernelTimes, error) {
	return nil, nil, Stats{}, KernelTimes{}, fmt.Errorf("host device: no early rows: %w", ErrDeviceUnsupported)
}

// scratch is a factor's Scratch, counted.
func (d *hostDevice) scratch() func() {
	d.scratches++
	return func() { d.released++ }
}

func (d *hostDevice) AdaptiveSetup(a *csr.Matrix[float32], rows []int, p Params) (*csr.Matrix[float32], Stats, KernelTimes, error) {
	g, st, err := Adaptive(a, rows, p)
	return g, st, KernelTimes{}, err
}

func (d *hostDevice) AdaptiveFactor(s Split, p Params) (DeviceFactor, Stats, KernelTimes, error) {
	a, own := s.Join(), s.Own
	g, st, err := Adaptive(a, allRows(a.Rows)[own:], p)
	if err != nil {
		return DeviceFactor{}, st, KernelTimes{}, err
	}
	left, diag := splitRows(g, own)
	f := DeviceFactor{Left: left, Scratch: d.scratch()}
	if f.Diag, err = d.store(diag, nil); err == nil {
		if f.DiagT, err = d.store(csr.Transpose(diag), nil); err != nil {
			f.Diag.Free()
		}
	}
	return f, st, KernelTimes{}, err
}

// rowsHostDevice is hostDevice with StartRows: New then sets up early,
// during the collection (early.go). Its run is the CPU reference of the
// GPU's: the started rows from the system StartRows is given, the rest
// from Finish's, joined.
type rowsHostDevice struct{ *hostDevice }

// hostRun is rowsHostDevice's RowsRun.
type hostRun struct {
	d    rowsHostDevice
	p    Params
	rows []int32
	g    *csr.Matrix[float32] // the started rows (in StartRows' local numbering)
	own  int                  // StartRows' a.Own
}

func (d rowsHostDevice) StartRows(a Split, seeds []int32, hops int, p Params) (RowsRun, []int32, Stats, KernelTimes, error) {
	if err := CheckStart(a, seeds, hops); err != nil {
		return nil, nil, Stats{}, KernelTimes{}, err
	}
	rows, near := InteriorRows(a.Diag, seeds, hops)
	g, st, err := d.rowsOf(a, rows, p)
	if err != nil {
		return nil, nil, st, KernelTimes{}, err
	}
	return &hostRun{d: d, p: p, rows: rows, g: g, own: a.Own}, near, st, KernelTimes{}, nil
}

// rowsOf computes the own rows rows of a on the CPU.
func (d rowsHostDevice) rowsOf(a Split, rows []int32, p Params) (*csr.Matrix[float32], Stats, error) {
	if err := CheckRows(a, rows); err != nil {
		return nil, Stats{}, err
	}
	local := make([]int, len(rows))
	for k, r := range rows {
		local[k] = a.Own + int(r)
	}
	return Adaptive(a.Join(), local, p)
}

func (r *hostRun) Finish(s Split, rest, marked []int32) (DeviceFactor, Stats, KernelTimes, bool, error) {
	_, started := splitRows(r.g, r.own)
	isMarked := func(c int32) bool {
		_, in := slices.BinarySearch(marked, c)
		return in
	}
	for k, row := range r.rows {
		cols, _ := started.Row(k)
		if isMarked(row) || slices.ContainsFunc(cols, isMarked) {
			df, st, kt, err := r.d.AdaptiveFactor(s, r.p)
			return df, st, kt, true, err
		}
	}
	g, st, err := r.d.rowsOf(s, rest, r.p)
	if err != nil {
		return DeviceFactor{}, st, KernelTimes{}, false, err
	}
	left, later := splitRows(g, s.Own)
	n := s.Diag.Rows
	all := &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	parts := []struct {
		rows  []int32
		block *csr.Matrix[float64]
	}{{r.rows, started}, {rest, later}}
	for _, part := range parts {
		for k, row := range part.rows {
			all.RowPtr[row+1] = part.block.RowPtr[k+1] - part.block.RowPtr[k]
		}
	}
	for i := range n {
		all.RowPtr[i+1] += all.RowPtr[i]
	}
	all.ColIdx, all.Val = make([]int32, all.RowPtr[n]), make([]float64, all.RowPtr[n])
	for _, part := range parts {
		for k, row := range part.rows {
			cols, vals := part.block.Row(k)
			copy(all.ColIdx[all.RowPtr[row]:], cols)
			copy(all.Val[all.RowPtr[row]:], vals)
		}
	}
	f := DeviceFactor{Left: left, LeftRows: rest, Scratch: r.d.scratch()} // the rows rest only, as the GPU's
	if f.Diag, err = r.d.store(all, nil); err == nil {
		if f.DiagT, err = r.d.store(csr.Transpose(all), nil); err != nil {
			f.Diag.Free()
		}
	}
	return f, st, KernelTimes{}, false, err
}

func (r *hostRun) Free() {}

// store puts a on the backend in float32, with its row map, and records
// its host copy.
func (d *hostDevice) store(a *csr.Matrix[float64], rowMap []int32) (backend.Matrix, error) {
	m, err := d.NewMatrix(a, rowMap, backend.Single)
	if err == nil {
		d.made[m] = a
	}
	return m, err
}

func (d *hostDevice) ReadMatrix(m backend.Matrix) (*csr.Matrix[float64], []int32, error) {
	a := *d.made[m]
	a.RowPtr, a.ColIdx, a.Val = slices.Clone(a.RowPtr), slices.Clone(a.ColIdx), slices.Clone(a.Val)
	return &a, nil, nil
}

func (d *hostDevice) PrepareFixed(a *csr.Matrix[float32], rows []int, patterns [][]int32) (FixedPlan, error) {
	if _, err := CheckFixed(a, rows, patterns); err != nil {
		return nil, err
	}
	return &hostPlan{d: d, a: a, rows: rows, patterns: patterns}, nil
}

// hostPlan is hostDevice's FixedPlan: FixedPattern on the CPU, its rows
// laid out on their patterns by onPattern and stored into the blocks by
// SetValues.
type hostPlan struct {
	d        *hostDevice
	a        *csr.Matrix[float32]
	rows     []int
	patterns [][]int32
	maps     [][]int32
	pick     []int32
	placed   []float64 // the rows of the last ComputeOnDevice, on their patterns
}

func (p *hostPlan) Compute(vals []float32) (*csr.Matrix[float32], Stats, error) {
	a := *p.a
	a.Val = vals
	return FixedPattern(&a, p.rows, p.patterns)
}

func (p *hostPlan) Free() {}

func (p *hostPlan) Place(maps [][]int32, pick []int32) error {
	if p.d.noPlace {
		return fmt.Errorf("no room for the maps: %w", ErrDeviceUnsupported)
	}
	p.maps, p.pick = maps, pick
	return nil
}

func (p *hostPlan) ComputeOnDevice(vals []float32) (Stats, error) {
	g, st, err := p.Compute(vals)
	if err != nil {
		return st, err
	}
	rowPtr := make([]int64, len(p.rows)+1)
	for k, pat := range p.patterns {
		rowPtr[k+1] = rowPtr[k] + int64(len(pat))
	}
	p.placed = make([]float64, rowPtr[len(p.rows)])
	onPattern(g, p.patterns, rowPtr, p.placed)
	return st, nil
}

func (p *hostPlan) Store(blocks []backend.Matrix, picked []float32) error {
	for k, m := range blocks {
		vals := make([]float64, len(p.maps[k]))
		for e, i := range p.maps[k] {
			vals[e] = p.placed[i]
		}
		if err := p.d.SetValues(m, vals); err != nil {
			return err
		}
		copy(p.d.made[m].Val, vals)
	}
	for j, i := range p.pick {
		picked[j] = float32(p.placed[i])
	}
	return nil
}

// TestDeviceFactor: New with a Device that keeps G's diagonal block (and
// the transpose's) where it made them builds the preconditioner that the
// host path builds: the same G, applied bit for bit alike; and its Updater,
// whose rows the device stores into those blocks, updates both alike, twice
// with new values. In the second run the last rank's device cannot place
// the rows: that rank takes them through the host (reading its blocks
// back) while the others keep theirs on the device.
func TestDeviceFactor(t *testing.T) {
	for _, np := range []int{1, 2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				for _, noPlace := range []bool{false, true} {
					for _, early := range []bool{false, true} {
						deviceFactorCase(t, c, dc, noPlace && c.Rank() == c.Size()-1, early)
					}
				}
			}
		})
	}
}

// deviceFactorCase runs TestDeviceFactor's checks on one case, with a
// device that sets up early (rowsHostDevice) or not.
func deviceFactorCase(t *testing.T, c *comm.Comm, dc distCase, noPlace, rows bool) {
	cfg := DefaultConfig()
	ref, err := New(dc.A, cpu.New(1), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Free()
	hd := &hostDevice{Backend: cpu.New(1), made: map[backend.Matrix]*csr.Matrix[float64]{}, noPlace: noPlace}
	onDev := cfg
	onDev.Device = hd
	if rows {
		onDev.Device = rowsHostDevice{hd}
	}
	got, err := New(dc.A, hd, onDev)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Free()
	if hd.scratches == 0 || hd.released != hd.scratches {
		t.Errorf("%s: %d of the device's %d scratches released", dc.name, hd.released, hd.scratches)
	}
	if got.G.Matrix().Diag != nil || got.Gt.Matrix().Diag != nil {
		t.Fatalf("%s: G's diagonal block was not left on the device", dc.name)
	}
	// A rank without left blocks sets up its rows from its diagonal block
	// alone (earlyFactor) on any device; the others early only where
	// StartRows does not decline.
	var alone int64
	if len(leftRows(dc.A)) == 0 {
		alone = int64(dc.A.LocalRows())
	}
	if alone, err = comm.AllreduceScalar(c, comm.Sum, alone); err != nil {
		t.Fatal(err)
	}
	if early := got.Info.EarlyRows; (rows && (early < alone || early == 0)) || (!rows && early != alone) {
		t.Errorf("%s: %d rows set up early on a device with StartRows %t, %d on ranks without left blocks",
			dc.name, early, rows, alone)
	}
	if got.Info.NNZ != ref.Info.NNZ || got.Info.ApplyStorage != ref.Info.ApplyStorage {
		t.Errorf("%s: nnz %d, storage %s; the host path's %d, %s", dc.name,
			got.Info.NNZ, got.Info.ApplyStorage, ref.Info.NNZ, ref.Info.ApplyStorage)
	}
	sameApply(t, c, dc.name+" after New", ref, got)

	updaters := []*Updater{NewUpdater(ref, dc.A, cfg), NewUpdater(got, dc.A, onDev)}
	lo, hi := dc.A.Part.Range(c.Rank())
	for step, f := range []func(int64) float64{
		func(i int64) float64 { return 1.5 + 0.4*math.Sin(float64(i)) },
		func(i int64) float64 { return 0.7 + 0.2*math.Cos(float64(3*i)) },
	} {
		if err := dc.A.SetValues(cut(scaled(dc.full, f), lo, hi)); err != nil {
			t.Fatal(err)
		}
		for _, u := range updaters {
			if err := u.Update(); err != nil {
				t.Fatal(err)
			}
		}
		name := fmt.Sprintf("%s, update %d, no placing on this rank %t", dc.name, step+1, noPlace)
		onHost := got.G.Matrix().Diag != nil || got.Gt.Matrix().Diag != nil
		if onHost != noPlace || updaters[1].Times.OnDevice == noPlace {
			t.Errorf("%s: host copies of the diagonal blocks %t, rows on the device %t", name, onHost, updaters[1].Times.OnDevice)
		}
		sameApply(t, c, name, ref, got)
	}
}

// sameApply checks that two preconditioners give the same z = G'G r, bit
// for bit.
func sameApply(t *testing.T, c *comm.Comm, name string, want, got *Preconditioner) {
	t.Helper()
	n := want.G.Matrix().LocalRows()
	first := want.G.Matrix().First()
	out := make([][]float64, 2)
	for k, p := range []*Preconditioner{want, got} {
		be := p.G.Backend()
		r, _ := ddmat.NewVector(c, be, n)
		z, _ := ddmat.NewVector(c, be, n)
		rs := make([]float64, n)
		for i := range rs {
			rs[i] = math.Sin(0.3 * float64(first+int64(i)))
		}
		r.Set(rs)
		if err := p.Apply(z, r); err != nil {
			t.Fatal(err)
		}
		out[k] = make([]float64, n)
		z.Get(out[k])
		r.Free()
		z.Free()
	}
	if !slices.Equal(out[0], out[1]) {
		t.Errorf("%s: rank %d: G'G r differs from the host path's", name, c.Rank())
	}
}

// splitRows splits rows of G, in a local system's numbering, at column
// own: into the entries before own (other ranks' columns), and the diagonal
// block, the entries from own on with own subtracted from their columns:
// what AdaptiveFactor returns.
func splitRows(g *csr.Matrix[float32], own int) (left *csr.Matrix[float32], diag *csr.Matrix[float64]) {
	n := g.Rows
	left = &csr.Matrix[float32]{Rows: n, Cols: g.Cols, RowPtr: make([]int32, n+1)}
	diag = &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	for i := range n {
		cols, _ := g.Row(i)
		k, _ := slices.BinarySearch(cols, int32(own))
		left.RowPtr[i+1] = left.RowPtr[i] + int32(k)
		diag.RowPtr[i+1] = diag.RowPtr[i] + int32(len(cols)-k)
	}
	nl, nd := left.RowPtr[n], diag.RowPtr[n]
	left.ColIdx, left.Val = make([]int32, nl), make([]float32, nl)
	diag.ColIdx, diag.Val = make([]int32, nd), make([]float64, nd)
	parallel.For(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			cols, vals := g.Row(i)
			k := int(left.RowPtr[i+1] - left.RowPtr[i])
			copy(left.ColIdx[left.RowPtr[i]:], cols[:k])
			copy(left.Val[left.RowPtr[i]:], vals[:k])
			at := diag.RowPtr[i]
			for j := k; j < len(cols); j++ {
				diag.ColIdx[at], diag.Val[at] = cols[j]-int32(own), float64(vals[j])
				at++
			}
		}
	})
	return left, diag
}
