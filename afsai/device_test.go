package afsai

import (
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

// hostDevice is a Device that computes on the CPU: the CPU backend with
// the set-up of this package behind the Device methods, and the host copies
// of the blocks it made, for ReadMatrix. It runs New's and the Updater's
// path for a set-up that keeps G on the device without a GPU.
type hostDevice struct {
	*cpu.Backend
	made map[backend.Matrix]*csr.Matrix[float64]
}

func (d *hostDevice) AdaptiveSetup(a *csr.Matrix[float32], rows []int, p Params) (*csr.Matrix[float32], Stats, KernelTimes, error) {
	g, st, err := Adaptive(a, rows, p)
	return g, st, KernelTimes{}, err
}

func (d *hostDevice) AdaptiveFactor(a *csr.Matrix[float32], own int, p Params) (DeviceFactor, Stats, KernelTimes, error) {
	g, st, err := Adaptive(a, allRows(a.Rows)[own:], p)
	if err != nil {
		return DeviceFactor{}, st, KernelTimes{}, err
	}
	left, diag := splitRows(g, own)
	f := DeviceFactor{Left: left}
	for _, b := range []struct {
		dst *backend.Matrix
		a   *csr.Matrix[float64]
	}{{&f.Diag, diag}, {&f.DiagT, csr.Transpose(diag)}} {
		m, err := d.NewMatrix(b.a, nil, backend.Single)
		if err != nil {
			if f.Diag != nil {
				f.Diag.Free()
			}
			return DeviceFactor{}, st, KernelTimes{}, err
		}
		*b.dst = m
		d.made[m] = b.a
	}
	return f, st, KernelTimes{}, nil
}

func (d *hostDevice) ReadMatrix(m backend.Matrix) (*csr.Matrix[float64], []int32, error) {
	a := *d.made[m]
	a.RowPtr, a.ColIdx, a.Val = slices.Clone(a.RowPtr), slices.Clone(a.ColIdx), slices.Clone(a.Val)
	return &a, nil, nil
}

// TestDeviceFactor: New with a Device that keeps G's diagonal block (and
// the transpose's) where it made them builds the preconditioner that the host path
// builds: the same G, applied bit for bit alike; and an Updater, which
// reads the blocks back first, updates both alike.
func TestDeviceFactor(t *testing.T) {
	for _, np := range []int{1, 2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				cfg := DefaultConfig()
				ref, err := New(dc.A, cpu.New(1), cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer ref.Free()
				dev := &hostDevice{Backend: cpu.New(1), made: map[backend.Matrix]*csr.Matrix[float64]{}}
				got, err := New(dc.A, dev, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Free()
				if got.G.Matrix().Diag != nil || got.Gt.Matrix().Diag != nil {
					t.Fatalf("%s: G's diagonal block was not left on the device", dc.name)
				}
				if got.Info.NNZ != ref.Info.NNZ || got.Info.ApplyStorage != ref.Info.ApplyStorage {
					t.Errorf("%s: nnz %d, storage %s; the host path's %d, %s", dc.name,
						got.Info.NNZ, got.Info.ApplyStorage, ref.Info.NNZ, ref.Info.ApplyStorage)
				}
				sameApply(t, c, dc.name+" after New", ref, got)

				lo, hi := dc.A.Part.Range(c.Rank())
				full := scaled(dc.full, func(i int64) float64 { return 1.5 + 0.4*math.Sin(float64(i)) })
				if err := dc.A.SetValues(cut(full, lo, hi)); err != nil {
					t.Fatal(err)
				}
				for _, p := range []*Preconditioner{ref, got} {
					if err := NewUpdater(p, dc.A, cfg).Update(); err != nil {
						t.Fatal(err)
					}
				}
				if got.G.Matrix().Diag == nil || got.Gt.Matrix().Diag == nil {
					t.Fatalf("%s: the Updater did not read G's diagonal blocks back", dc.name)
				}
				sameApply(t, c, dc.name+" after Update", ref, got)
			}
		})
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
