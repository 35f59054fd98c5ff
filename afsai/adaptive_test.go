package afsai

import (
	"math"
	"runtime"
	"testing"

	"github.com/fsai-dist/fsai-dist/csr"
)

// testMatrices are small SPD matrices of different kinds: shared real ones
// and a 2D Laplacian.
func testMatrices(t *testing.T) map[string]*csr.Matrix[float64] {
	m := map[string]*csr.Matrix[float64]{"lap2d_12x10": laplacian(12, 10, 1)}
	for _, name := range []string{"LF10", "bcsstk01", "nos4", "494_bus", "pyamg_airfoil"} {
		m[name] = readMM(t, name)
	}
	return m
}

// TestAdaptiveIsExactFSAI checks that each row of the adaptive G is lower
// triangular, gives a unit diagonal of G A G', and is the exact FSAI of A on
// the pattern the adaptive search chose.
func TestAdaptiveIsExactFSAI(t *testing.T) {
	for name, a := range testMatrices(t) {
		rows := allRows(a.Rows)
		g, stats, err := Adaptive(a, rows, Params{Steps: 6, StepSize: 2, Eps: 1e-3})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkLower(t, g, rows)
		for i, d := range csr.QuadDiag(a, g) {
			if math.Abs(d-1) > 1e-10 {
				t.Fatalf("%s: diag(G A G')[%d] = %.17g", name, i, d)
			}
		}
		checkExact(t, a, g, rows, 1e-10)
		if stats.NNZ != int64(g.NNZ()) || stats.MaxPattern > 12 || stats.FallbackRows != 0 {
			t.Fatalf("%s: stats %+v for nnz %d", name, stats, g.NNZ())
		}
	}
}

// TestAdaptiveSingle checks the single-precision set-up: lower triangular,
// finite, diag(G A G') within 1e-4 of 1 against the double-precision A.
func TestAdaptiveSingle(t *testing.T) {
	for name, a := range testMatrices(t) {
		rows := allRows(a.Rows)
		g, stats, err := Adaptive(csr.Convert[float32](a), rows, DefaultParams())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkLower(t, g, rows)
		for i, d := range csr.QuadDiag(a, g) {
			if math.Abs(d-1) > 1e-4 {
				t.Fatalf("%s: diag(G A G')[%d] = %g (stats %+v)", name, i, d, stats)
			}
		}
	}
}

// TestAdaptiveFirstStep checks the gradient at the start: with g~ = e_i it
// is 2 A[i, :], so one step of size one picks the largest |a_ij|, j < i,
// the smaller j on ties.
func TestAdaptiveFirstStep(t *testing.T) {
	for name, a := range testMatrices(t) {
		g, _, err := Adaptive(a, allRows(a.Rows), Params{Steps: 1, StepSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Rows {
			want, best := -1, 0.0
			cols, vals := a.Row(i)
			for k, c := range cols {
				if int(c) < i && math.Abs(vals[k]) > best {
					want, best = int(c), math.Abs(vals[k])
				}
			}
			got, _ := g.Row(i)
			if (want < 0 && len(got) != 1) || (want >= 0 && (len(got) != 2 || int(got[0]) != want)) {
				t.Fatalf("%s row %d: pattern %v, want column %d", name, i, got, want)
			}
		}
	}
}

// TestAdaptiveKaporinDecreases checks that more steps never worsen the
// Kaporin number: the patterns grow by inclusion and FSAI minimizes it on
// its pattern.
func TestAdaptiveKaporinDecreases(t *testing.T) {
	for name, a := range testMatrices(t) {
		jac, _, err := Adaptive(a, allRows(a.Rows), Params{})
		if err != nil {
			t.Fatal(err)
		}
		prev, err := Kaporin(a, jac)
		if err != nil {
			t.Fatal(err)
		}
		first := prev
		for _, steps := range []int{1, 2, 4, 8} {
			g, _, err := Adaptive(a, allRows(a.Rows), Params{Steps: steps, StepSize: 2})
			if err != nil {
				t.Fatal(err)
			}
			k, err := Kaporin(a, g)
			if err != nil {
				t.Fatal(err)
			}
			if k > prev*(1+1e-12) {
				t.Errorf("%s: Kaporin number %g with %d steps, %g with fewer", name, k, steps, prev)
			}
			prev = k
		}
		if !(prev < first) {
			t.Errorf("%s: Kaporin number %g after 8 steps, %g for Jacobi", name, prev, first)
		}
	}
}

// TestAdaptiveJacobi checks that zero steps give G = D^-1/2.
func TestAdaptiveJacobi(t *testing.T) {
	a := readMM(t, "494_bus")
	g, stats, err := Adaptive(a, allRows(a.Rows), Params{Steps: 0, Eps: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if g.NNZ() != a.Rows || stats.MaxPattern != 0 {
		t.Fatalf("%d entries, max pattern %d: want a diagonal G", g.NNZ(), stats.MaxPattern)
	}
	for i := range a.Rows {
		if got, want := g.At(i, i), 1/math.Sqrt(a.At(i, i)); got != want {
			t.Fatalf("G[%d,%d] = %g, want %g", i, i, got, want)
		}
	}
}

// TestAdaptiveRowsSubset checks that rows computed alone equal the same rows
// computed with all others, in particular the last rows of the block that a
// rank owns.
func TestAdaptiveRowsSubset(t *testing.T) {
	a := readMM(t, "nos6")
	p := DefaultParams()
	all, _, err := Adaptive(a, allRows(a.Rows), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range [][]int{allRows(a.Rows)[500:], allRows(a.Rows)[100:140], {674, 3, 300, 3}, {}} {
		sub, _, err := Adaptive(a, rows, p)
		if err != nil {
			t.Fatal(err)
		}
		if sub.Rows != len(rows) || sub.Cols != a.Cols {
			t.Fatalf("result is %dx%d, want %dx%d", sub.Rows, sub.Cols, len(rows), a.Cols)
		}
		for k, i := range rows {
			gc, gv := sub.Row(k)
			wc, wv := all.Row(i)
			if len(gc) != len(wc) {
				t.Fatalf("row %d: %d entries alone, %d with all rows", i, len(gc), len(wc))
			}
			for q := range gc {
				if gc[q] != wc[q] || gv[q] != wv[q] {
					t.Fatalf("row %d differs at %d", i, q)
				}
			}
		}
	}
}

// TestDeterministic checks that the number of goroutines does not change
// the results, bit for bit.
func TestDeterministic(t *testing.T) {
	a := readMM(t, "gr_30_30")
	a32 := csr.Convert[float32](a)
	rows := allRows(a.Rows)
	run := func(procs int) (*csr.Matrix[float64], *csr.Matrix[float32], *csr.Matrix[float64]) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		g64, _, err := Adaptive(a, rows, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		g32, _, err := Adaptive(a32, rows, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		gs, _, err := Static(a, rows, StaticParams{Tau: 0.01, K: 2, Delta: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		return g64, g32, gs
	}
	a1, b1, c1 := run(1)
	a2, b2, c2 := run(5)
	a3, b3, c3 := run(5)
	if !sameMatrix(a1, a2) || !sameMatrix(a2, a3) || !sameMatrix(b1, b2) || !sameMatrix(b2, b3) ||
		!sameMatrix(c1, c2) || !sameMatrix(c2, c3) {
		t.Fatal("results depend on the number of goroutines or the run")
	}
}

// TestBreakdownFallback checks the single-precision fallback: A =
// [1 1 .5; 1 1 .5; .5 .5 1] + 1e-9 I is SPD, but in float32 its leading 2x2
// block is singular. Rows 1 and 2 must keep the part of their pattern that
// factored, with finite values and no error.
func TestBreakdownFallback(t *testing.T) {
	e := []csr.Entry[float64]{
		{Row: 0, Col: 0, Val: 1 + 1e-9}, {Row: 0, Col: 1, Val: 1}, {Row: 0, Col: 2, Val: 0.5},
		{Row: 1, Col: 0, Val: 1}, {Row: 1, Col: 1, Val: 1 + 1e-9}, {Row: 1, Col: 2, Val: 0.5},
		{Row: 2, Col: 0, Val: 0.5}, {Row: 2, Col: 1, Val: 0.5}, {Row: 2, Col: 2, Val: 1 + 1e-9},
	}
	a := csr.Convert[float32](csr.FromEntries(3, 3, e))
	rows := allRows(3)
	g, stats, err := Adaptive(a, rows, Params{Steps: 1, StepSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkLower(t, g, rows)
	if stats.FallbackRows != 2 {
		t.Fatalf("%d fallback rows, want 2", stats.FallbackRows)
	}
	// Row 1 falls back to e_1; row 2 keeps column 0: (-0.5, 0, 1)/sqrt(0.75).
	want := [][]float64{{1}, {1}, {-0.5 / math.Sqrt(0.75), 1 / math.Sqrt(0.75)}}
	for i, w := range want {
		_, vals := g.Row(i)
		if len(vals) != len(w) {
			t.Fatalf("row %d: %v, want %v", i, vals, w)
		}
		for k := range w {
			if math.Abs(float64(vals[k])-w[k]) > 1e-6 {
				t.Fatalf("row %d: %v, want %v", i, vals, w)
			}
		}
	}
}

// TestErrors checks that bad input is refused with an error.
func TestErrors(t *testing.T) {
	a := laplacian(3, 3, 1)
	notSPD := laplacian(3, 3, 1)
	notSPD.Val[0] = 0
	rect := &csr.Matrix[float64]{Rows: 2, Cols: 3, RowPtr: []int32{0, 0, 0}}
	for name, f := range map[string]func() error{
		"rectangular": func() error { _, _, err := Adaptive(rect, []int{0}, DefaultParams()); return err },
		"row range":   func() error { _, _, err := Adaptive(a, []int{9}, DefaultParams()); return err },
		"diagonal":    func() error { _, _, err := Adaptive(notSPD, []int{1}, DefaultParams()); return err },
		"steps":       func() error { _, _, err := Adaptive(a, []int{1}, Params{Steps: -1}); return err },
		"step size":   func() error { _, _, err := Adaptive(a, []int{1}, Params{Steps: 2}); return err },
		"eps":         func() error { _, _, err := Adaptive(a, []int{1}, Params{Eps: math.NaN()}); return err },
		"static K":    func() error { _, _, err := Static(a, []int{1}, StaticParams{}); return err },
		"static tau":  func() error { _, _, err := Static(a, []int{1}, StaticParams{K: 1, Tau: -1}); return err },
		"pattern len": func() error { _, _, err := FixedPattern(a, []int{1, 2}, [][]int32{{0}}); return err },
		"pattern col": func() error { _, _, err := FixedPattern(a, []int{1}, [][]int32{{2}}); return err },
		"pattern dup": func() error { _, _, err := FixedPattern(a, []int{2}, [][]int32{{0, 1, 0}}); return err },
		"kaporin":     func() error { _, err := Kaporin(a, rect); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
