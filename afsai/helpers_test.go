package afsai

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// readMM reads a symmetric Matrix Market file (one triangle stored) from the
// shared matrices into a full CSR matrix; it skips the test when the
// matrices are not there.
func readMM(t testing.TB, name string) *csr.Matrix[float64] {
	t.Helper()
	dir := testmatrices.Dir()
	if dir == "" {
		t.Skip(testmatrices.Missing)
	}
	path := filepath.Join(dir, name+".mtx")
	a, err := parseMM(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func parseMM(path string) (*csr.Matrix[float64], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var n, nnz int
	var entries []csr.Entry[float64]
	header := true
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '%' {
			continue
		}
		fields := strings.Fields(s)
		if header {
			if len(fields) != 3 {
				return nil, fmt.Errorf("%s line %d: bad size line %q", path, line, s)
			}
			n, _ = strconv.Atoi(fields[0])
			nnz, _ = strconv.Atoi(fields[2])
			header = false
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s line %d: bad entry %q", path, line, s)
		}
		i, err1 := strconv.Atoi(fields[0])
		j, err2 := strconv.Atoi(fields[1])
		v, err3 := strconv.ParseFloat(fields[2], 64)
		if err1 != nil || err2 != nil || err3 != nil || i < 1 || j < 1 || i > n || j > n {
			return nil, fmt.Errorf("%s line %d: bad entry %q", path, line, s)
		}
		entries = append(entries, csr.Entry[float64]{Row: int32(i - 1), Col: int32(j - 1), Val: v})
		if i != j {
			entries = append(entries, csr.Entry[float64]{Row: int32(j - 1), Col: int32(i - 1), Val: v})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if header || len(entries) < nnz {
		return nil, fmt.Errorf("%s: truncated", path)
	}
	return csr.FromEntries(n, n, entries), nil
}

// laplacian builds the finite-difference Laplacian (2d+1 points) on an
// nx x ny x nz grid with Dirichlet boundaries; nz = 1 gives the 2D one.
func laplacian(nx, ny, nz int) *csr.Matrix[float64] {
	n := nx * ny * nz
	id := func(x, y, z int) int32 { return int32(x + nx*(y+ny*z)) }
	var e []csr.Entry[float64]
	for z := range nz {
		for y := range ny {
			for x := range nx {
				i := id(x, y, z)
				diag := 4.0
				if nz > 1 {
					diag = 6
				}
				e = append(e, csr.Entry[float64]{Row: i, Col: i, Val: diag})
				for _, d := range [][3]int{{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}} {
					xx, yy, zz := x+d[0], y+d[1], z+d[2]
					if xx < 0 || yy < 0 || zz < 0 || xx >= nx || yy >= ny || zz >= nz {
						continue
					}
					e = append(e, csr.Entry[float64]{Row: i, Col: id(xx, yy, zz), Val: -1})
				}
			}
		}
	}
	return csr.FromEntries(n, n, e)
}

func allRows(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// lowerPatterns returns the off-diagonal columns of every row of Low(A).
func lowerPatterns[T csr.Real](a *csr.Matrix[T]) [][]int32 {
	p := make([][]int32, a.Rows)
	for i := range p {
		cols, _ := a.Row(i)
		for _, c := range cols {
			if int(c) < i {
				p[i] = append(p[i], c)
			}
		}
	}
	return p
}

// checkLower fails unless row k of G has sorted columns <= rows[k] ending
// with a positive diagonal entry, and only finite values.
func checkLower[T csr.Real](t *testing.T, g *csr.Matrix[T], rows []int) {
	t.Helper()
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	for k, i := range rows {
		cols, vals := g.Row(k)
		if len(cols) == 0 || int(cols[len(cols)-1]) != i || !(vals[len(vals)-1] > 0) {
			t.Fatalf("row %d: columns %v: diagonal missing, not last or not positive", i, cols)
		}
		for _, v := range vals {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("row %d: non-finite value %g", i, v)
			}
		}
	}
}

// exactRow is the dense reference FSAI row of A on off-diagonal pattern p
// (sorted): gonum's Cholesky solve of A[P,P] g = -A[P,i], scaled by
// 1/sqrt(a_ii + g'A[P,i]). It returns the values in pattern order followed
// by the diagonal.
func exactRow(t *testing.T, a *csr.Matrix[float64], i int, p []int32) []float64 {
	t.Helper()
	m := len(p)
	out := make([]float64, m+1)
	psi := a.At(i, i)
	if m > 0 {
		app := mat.NewSymDense(m, nil)
		b := mat.NewVecDense(m, nil)
		for r, pr := range p {
			for c, pc := range p[r:] {
				app.SetSym(r, r+c, a.At(int(pr), int(pc)))
			}
			b.SetVec(r, -a.At(int(pr), i))
		}
		var chol mat.Cholesky
		if !chol.Factorize(app) {
			t.Fatalf("row %d: reference Cholesky failed", i)
		}
		var g mat.VecDense
		if err := chol.SolveVecTo(&g, b); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		psi -= mat.Dot(&g, b)
		for r := range m {
			out[r] = g.AtVec(r)
		}
	}
	out[m] = 1
	for r := range out {
		out[r] /= math.Sqrt(psi)
	}
	return out
}

// checkExact compares every row of G with the dense reference FSAI on G's
// own pattern, to accuracy tol relative to the row's largest entry.
func checkExact(t *testing.T, a *csr.Matrix[float64], g *csr.Matrix[float64], rows []int, tol float64) {
	t.Helper()
	for k, i := range rows {
		cols, vals := g.Row(k)
		want := exactRow(t, a, i, cols[:len(cols)-1])
		var scale float64
		for _, w := range want {
			scale = max(scale, math.Abs(w))
		}
		for p := range vals {
			if math.Abs(vals[p]-want[p]) > tol*scale {
				t.Fatalf("row %d column %d: got %.17g, want %.17g", i, cols[p], vals[p], want[p])
			}
		}
	}
}

// sameMatrix reports whether two CSR matrices are bit for bit identical.
func sameMatrix[T csr.Real](a, b *csr.Matrix[T]) bool {
	if a.Rows != b.Rows || a.Cols != b.Cols || len(a.ColIdx) != len(b.ColIdx) {
		return false
	}
	for k := range a.RowPtr {
		if a.RowPtr[k] != b.RowPtr[k] {
			return false
		}
	}
	for k := range a.ColIdx {
		if a.ColIdx[k] != b.ColIdx[k] || math.Float64bits(float64(a.Val[k])) != math.Float64bits(float64(b.Val[k])) {
			return false
		}
	}
	return true
}

// longestRow returns the most entries of a row of a.
func longestRow[T csr.Real](a *csr.Matrix[T]) int {
	n := 0
	for i := range a.Rows {
		n = max(n, int(a.RowPtr[i+1]-a.RowPtr[i]))
	}
	return n
}
