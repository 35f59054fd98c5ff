package afsai

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/csr"
)

// TestFixedPatternExact compares FixedPattern with gonum's dense solves on
// the patterns of Low(A) and of the full lower triangle (then G is the
// inverse Cholesky factor: G A G' = I, Kaporin number 1).
func TestFixedPatternExact(t *testing.T) {
	for name, a := range testMatrices(t) {
		rows := allRows(a.Rows)
		g, stats, err := FixedPattern(a, rows, lowerPatterns(a))
		if err != nil {
			t.Fatal(err)
		}
		checkLower(t, g, rows)
		checkExact(t, a, g, rows, 1e-10)
		if stats.FallbackRows != 0 {
			t.Fatalf("%s: %d fallback rows", name, stats.FallbackRows)
		}
	}
	a := readMM(t, "LF10")
	full := make([][]int32, a.Rows)
	for i := range full {
		for j := i; j >= 0; j-- { // any order, the diagonal included
			full[i] = append(full[i], int32(j))
		}
	}
	g, _, err := FixedPattern(a, allRows(a.Rows), full)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, a, g, allRows(a.Rows), 1e-10)
	k, err := Kaporin(a, g)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(k-1) > 1e-10 {
		t.Fatalf("Kaporin number of the exact inverse factor: %.17g, want 1", k)
	}
}

// TestKaporinDiagonal checks the Kaporin number against a hand value:
// G = I, A = diag(1, 4) gives (5/2) / sqrt(4) = 1.25.
func TestKaporinDiagonal(t *testing.T) {
	a := csr.FromEntries(2, 2, []csr.Entry[float64]{{Row: 0, Col: 0, Val: 1}, {Row: 1, Col: 1, Val: 4}})
	g := csr.FromEntries(2, 2, []csr.Entry[float64]{{Row: 0, Col: 0, Val: 1}, {Row: 1, Col: 1, Val: 1}})
	k, err := Kaporin(a, g)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(k-1.25) > 1e-15 {
		t.Fatalf("Kaporin number %g, want 1.25", k)
	}
}

// TestStaticLowA checks that K = 1, Tau = 0, Delta = 0 is the exact FSAI on
// the pattern of Low(A).
func TestStaticLowA(t *testing.T) {
	for name, a := range testMatrices(t) {
		rows := allRows(a.Rows)
		g, stats, err := Static(a, rows, StaticParams{K: 1})
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := FixedPattern(a, rows, lowerPatterns(a))
		if err != nil {
			t.Fatal(err)
		}
		if !sameMatrix(g, want) || stats.Dropped != 0 {
			t.Fatalf("%s: static FSAI with K=1 differs from FSAI on Low(A)", name)
		}
		checkExact(t, a, g, rows, 1e-10)
	}
}

// TestStaticPattern checks the symbolic pattern against Low(Low(A~) A~)
// formed densely, for K = 2 and a Tau that drops entries.
func TestStaticPattern(t *testing.T) {
	for _, name := range []string{"bcsstk01", "nos4", "pyamg_airfoil"} {
		a := readMM(t, name)
		const tau = 0.1
		n := a.Rows
		keep := func(i, j int) bool {
			v := a.At(i, j)
			return i == j || (v != 0 && math.Abs(v) > tau*math.Sqrt(a.At(i, i)*a.At(j, j)))
		}
		g, _, err := Static(a, allRows(n), StaticParams{Tau: tau, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			var want []int32
			for j := 0; j <= i; j++ {
				for r := 0; r <= i; r++ { // B_1 = Low(A~): r <= i
					if keep(i, r) && keep(r, j) {
						want = append(want, int32(j))
						break
					}
				}
			}
			got, _ := g.Row(i)
			if len(got) != len(want) {
				t.Fatalf("%s row %d: pattern %v, want %v", name, i, got, want)
			}
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("%s row %d: pattern %v, want %v", name, i, got, want)
				}
			}
		}
	}
}

// TestStaticFilter checks post-filtering against the unfiltered G: kept
// entries are those >= Delta ||g_i||, all scaled by one factor per row, and
// the rescaled rows still give a unit diagonal of G A G' (eq. 3.13).
func TestStaticFilter(t *testing.T) {
	for _, name := range []string{"gr_30_30", "nos6", "bcsstk01"} {
		a := readMM(t, name)
		rows := allRows(a.Rows)
		const delta = 0.05
		full, _, err := Static(a, rows, StaticParams{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		g, stats, err := Static(a, rows, StaticParams{K: 3, Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		checkLower(t, g, rows)
		if stats.Dropped == 0 || int64(full.NNZ())-stats.Dropped != int64(g.NNZ()) {
			t.Fatalf("%s: dropped %d of %d entries, %d left", name, stats.Dropped, full.NNZ(), g.NNZ())
		}
		for i := range rows {
			fc, fv := full.Row(i)
			var norm float64
			for _, v := range fv {
				norm += v * v
			}
			norm = math.Sqrt(norm)
			gc, gv := g.Row(i)
			scale := gv[len(gv)-1] / fv[len(fv)-1]
			if !(scale > 0 && scale <= 1) {
				t.Fatalf("%s row %d: rescaling factor %g not in (0,1]", name, i, scale)
			}
			k := 0
			for q, c := range fc {
				kept := k < len(gc) && gc[k] == c
				if kept != (int(c) == i || math.Abs(fv[q]) >= delta*norm) {
					t.Fatalf("%s row %d column %d: kept %v with |g| %g, threshold %g", name, i, c, kept, math.Abs(fv[q]), delta*norm)
				}
				if kept {
					if math.Abs(gv[k]-fv[q]*scale) > 1e-14*math.Abs(fv[q]) {
						t.Fatalf("%s row %d column %d: %g, want %g", name, i, c, gv[k], fv[q]*scale)
					}
					k++
				}
			}
		}
		for i, d := range csr.QuadDiag(a, g) {
			if math.Abs(d-1) > 1e-10 {
				t.Fatalf("%s: diag(G A G')[%d] = %.17g after filtering", name, i, d)
			}
		}
	}
}

// TestStaticSingle checks the single-precision static set-up for a unit
// diagonal of G A G' within 1e-4.
func TestStaticSingle(t *testing.T) {
	a := readMM(t, "nos6")
	rows := allRows(a.Rows)
	g, _, err := Static(csr.Convert[float32](a), rows, StaticParams{Tau: 0.01, K: 3, Delta: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	checkLower(t, g, rows)
	for i, d := range csr.QuadDiag(a, g) {
		if math.Abs(d-1) > 1e-4 {
			t.Fatalf("diag(G A G')[%d] = %g", i, d)
		}
	}
}

// TestCheckFixed: CheckFixed refuses a column out of range or repeated, in
// short patterns (compared pair by pair) and long ones (marked), and names
// the first bad row in row order whichever core checks it.
func TestCheckFixed(t *testing.T) {
	a := laplacian(40, 40, 40)
	n := a.Rows
	rows := allRows(n)
	good := func() [][]int32 {
		p := make([][]int32, n)
		for i := range p {
			lo := max(0, i-2*shortPattern)
			for c := lo; c <= i; c++ {
				p[i] = append(p[i], int32(c))
			}
		}
		return p
	}
	if _, err := CheckFixed(a, rows, good()); err != nil {
		t.Fatalf("valid patterns: %v", err)
	}
	for _, c := range []struct {
		name string
		bad  func(p [][]int32)
		want string
	}{
		{"short repeated", func(p [][]int32) { p[9] = []int32{3, 5, 3} }, "pattern of row 9: column 3 repeated"},
		{"long repeated", func(p [][]int32) { p[n-5][40] = p[n-5][2] }, fmt.Sprintf("pattern of row %d: column %d repeated", n-5, n-5-2*shortPattern+2)},
		{"above the diagonal", func(p [][]int32) { p[500][1] = 501 }, "pattern of row 500: column 501 not in [0,500]"},
		{"negative", func(p [][]int32) { p[7][0] = -1 }, "pattern of row 7: column -1 not in [0,7]"},
		{"first in row order", func(p [][]int32) {
			p[n-1] = []int32{1, 1}
			p[n/2] = []int32{2, 2}
			p[1000] = []int32{4, 4}
		}, "pattern of row 1000: column 4 repeated"},
	} {
		p := good()
		c.bad(p)
		_, err := CheckFixed(a, rows, p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
