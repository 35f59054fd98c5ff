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
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestUpdate: after new values of A (D A D, still SPD, same pattern),
// Update leaves G's pattern and gives the exact FSAI rows of the new matrix
// on it, as a serial FixedPattern on the whole matrix computes them; and the
// device copies of G and G' (single precision, so copies of their own) apply
// the new values. Twice, since the second Update reuses the first one's
// plans.
func TestUpdate(t *testing.T) {
	for _, np := range []int{1, 2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				for j, static := range []bool{false, true} {
					cfg := DefaultConfig()
					cfg.Static, cfg.Setup, cfg.Apply = static, backend.Double, backend.Single
					be := cpu.New(1)
					p, err := New(dc.A, be, cfg)
					if err != nil {
						t.Fatal(err)
					}
					u := NewUpdater(p, dc.A, cfg)
					before := p.G.Matrix().Rows()
					for round := range 2 { // the first Update finds the plans, the second reuses them
						shift := float64(2*j + round) // new values in every case and round
						full := scaled(dc.full, func(i int64) float64 { return 1.5 + 0.4*math.Sin(float64(i)+shift) })
						lo, hi := dc.A.Part.Range(c.Rank())
						if err := dc.A.SetValues(cut(full, lo, hi)); err != nil {
							t.Fatal(err)
						}
						if err := u.Update(); err != nil {
							t.Fatal(err)
						}
						after := p.G.Matrix().Rows()
						if !slices.Equal(before.RowPtr, after.RowPtr) || !slices.Equal(before.Col, after.Col) {
							t.Fatalf("%s static=%v: Update changed G's pattern", dc.name, static)
						}
						want := serialFixed(t, full, after)
						for k, v := range after.Val {
							if math.Abs(v-want[k]) > 1e-10*math.Max(1, math.Abs(want[k])) {
								t.Fatalf("%s static=%v round %d: G entry %d = %.15g, serial FixedPattern %.15g", dc.name, static, round, k, v, want[k])
							}
							if v == before.Val[k] && v != 0 {
								t.Fatalf("%s static=%v round %d: G entry %d kept its value %g", dc.name, static, round, k, v)
							}
						}
						checkDeviceG(t, c, be, p, after)
						before = after
					}
					p.Free()
				}
			}
		})
	}
}

// scaled returns D A D for a whole matrix A held as one stripe, D =
// diag(d(i)): symmetric positive definite when A is and d > 0.
func scaled(full *dsmat.Rows, d func(int64) float64) *dsmat.Rows {
	out := *full
	out.Val = make([]float64, len(full.Val))
	for i := 0; i < full.Count(); i++ {
		for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
			out.Val[k] = d(int64(i)) * full.Val[k] * d(full.Col[k])
		}
	}
	return &out
}

// cut returns rows [lo,hi) of a whole matrix held as one stripe.
func cut(full *dsmat.Rows, lo, hi int64) *dsmat.Rows {
	a, b := full.RowPtr[lo], full.RowPtr[hi]
	r := &dsmat.Rows{N: full.N, First: lo, Col: full.Col[a:b], Val: full.Val[a:b]}
	for _, p := range full.RowPtr[lo : hi+1] {
		r.RowPtr = append(r.RowPtr, p-a)
	}
	return r
}

// serialFixed computes the FSAI rows of G's stripe g on g's pattern from
// the whole matrix full, serially, and returns their values in g's order.
func serialFixed(t *testing.T, full, g *dsmat.Rows) []float64 {
	t.Helper()
	a := &csr.Matrix[float64]{Rows: int(full.N), Cols: int(full.N), RowPtr: make([]int32, len(full.RowPtr)),
		ColIdx: make([]int32, len(full.Col)), Val: full.Val}
	for i, p := range full.RowPtr {
		a.RowPtr[i] = int32(p)
	}
	for k, c := range full.Col {
		a.ColIdx[k] = int32(c)
	}
	rows := make([]int, g.Count())
	patterns := make([][]int32, g.Count())
	for i := range rows {
		rows[i] = int(g.First) + i
		for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
			patterns[i] = append(patterns[i], int32(g.Col[k]))
		}
	}
	ref, _, err := FixedPattern(a, rows, patterns)
	if err != nil {
		t.Fatal(err)
	}
	return ref.Val
}

// checkDeviceG compares the bound G's product with the product of its host
// stripe g, and checks that G' is its adjoint.
func checkDeviceG(t *testing.T, c *comm.Comm, be *cpu.Backend, p *Preconditioner, g *dsmat.Rows) {
	t.Helper()
	n := g.Count()
	x, _ := ddmat.NewVector(c, be, n)
	y, _ := ddmat.NewVector(c, be, n)
	gx, _ := ddmat.NewVector(c, be, n)
	gty, _ := ddmat.NewVector(c, be, n)
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		gi := float64(g.First + int64(i))
		xs[i], ys[i] = math.Sin(gi), math.Cos(3*gi)
	}
	x.Set(xs)
	y.Set(ys)
	if err := p.G.Apply(gx.V, x.V); err != nil {
		t.Fatal(err)
	}
	if err := p.Gt.Apply(gty.V, y.V); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, n)
	gx.Get(got)
	for i := range got {
		var want, scale float64
		for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
			want += g.Val[k] * math.Sin(float64(g.Col[k]))
			scale += math.Abs(g.Val[k])
		}
		if math.Abs(got[i]-want) > 1e-6*scale {
			t.Fatalf("row %d: (G x) = %.10g on the device, %.10g from the host values", g.First+int64(i), got[i], want)
		}
	}
	a, _ := ddmat.Dot(y, gx)
	b, _ := ddmat.Dot(gty, x)
	if math.Abs(a-b) > 1e-10*math.Max(1, math.Abs(a)) {
		t.Fatalf("y'(Gx) = %.15g but (G'y)'x = %.15g", a, b)
	}
}
