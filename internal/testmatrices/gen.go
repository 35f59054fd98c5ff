package testmatrices

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
)

// Stencil3D returns the n^3 finite-difference Laplacian with the 7-point
// (points 7) or 27-point (points 27) stencil, built row by row in CSR order
// (fast enough for the 16.8M rows of the benchmark).
func Stencil3D(n, points int) *csr.Matrix[float64] {
	rows := n * n * n
	per := points
	m := &csr.Matrix[float64]{Rows: rows, Cols: rows, RowPtr: make([]int32, 1, rows+1),
		ColIdx: make([]int32, 0, rows*per), Val: make([]float64, 0, rows*per)}
	for z := 0; z < n; z++ {
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				for dz := -1; dz <= 1; dz++ {
					for dy := -1; dy <= 1; dy++ {
						for dx := -1; dx <= 1; dx++ {
							k := abs(dx) + abs(dy) + abs(dz)
							if points == 7 && k > 1 {
								continue
							}
							i, j, l := x+dx, y+dy, z+dz
							if i < 0 || j < 0 || l < 0 || i >= n || j >= n || l >= n {
								continue
							}
							v := -1.0
							if k == 0 {
								v = float64(points - 1)
							}
							m.ColIdx = append(m.ColIdx, int32((l*n+j)*n+i))
							m.Val = append(m.Val, v)
						}
					}
				}
				m.RowPtr = append(m.RowPtr, int32(len(m.ColIdx)))
			}
		}
	}
	return m
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// RandomSPD returns a symmetric, strictly diagonally dominant (so SPD)
// n x n matrix whose rows hold about 2*mean random off-diagonal entries,
// with row lengths spread between 1 and about 4*mean.
func RandomSPD(rng *rand.Rand, n, mean int) *csr.Matrix[float64] {
	var e []csr.Entry[float64]
	for i := 0; i < n; i++ {
		for k := rng.IntN(2*mean + 1); k > 0; k-- {
			j := rng.IntN(n)
			if j == i {
				continue
			}
			v := rng.Float64() - 0.5
			e = append(e, csr.Entry[float64]{Row: int32(i), Col: int32(j), Val: v},
				csr.Entry[float64]{Row: int32(j), Col: int32(i), Val: v})
		}
	}
	m := csr.FromEntries(n, n, e)
	return withDominantDiagonal(m)
}

// withDominantDiagonal returns m with each diagonal entry set to one more
// than the sum of the magnitudes of its row's off-diagonal entries.
func withDominantDiagonal(m *csr.Matrix[float64]) *csr.Matrix[float64] {
	var e []csr.Entry[float64]
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		d := 1.0
		for k, c := range cols {
			if int(c) != i {
				d += max(vals[k], -vals[k])
				e = append(e, csr.Entry[float64]{Row: int32(i), Col: c, Val: vals[k]})
			}
		}
		e = append(e, csr.Entry[float64]{Row: int32(i), Col: int32(i), Val: d})
	}
	return csr.FromEntries(m.Rows, m.Cols, e)
}

// ReadMTX reads a Matrix Market "coordinate real" file into a full CSR
// matrix: a symmetric one (one triangle stored) with both triangles, a
// general one as stored.
func ReadMTX(path string) (*csr.Matrix[float64], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var rows, cols, nnz int
	var e []csr.Entry[float64]
	header, symmetric := false, false
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if line == 1 && strings.HasPrefix(t, "%%") {
			symmetric = strings.Contains(strings.ToLower(t), "symmetric")
		}
		if t == "" || t[0] == '%' {
			continue
		}
		if !header {
			if _, err := fmt.Sscan(t, &rows, &cols, &nnz); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, line, err)
			}
			header = true
			continue
		}
		var i, j int32
		var v float64
		if _, err := fmt.Sscan(t, &i, &j, &v); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		e = append(e, csr.Entry[float64]{Row: i - 1, Col: j - 1, Val: v})
		if symmetric && i != j {
			e = append(e, csr.Entry[float64]{Row: j - 1, Col: i - 1, Val: v})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	m := csr.FromEntries(rows, cols, e)
	return m, m.Check()
}

// Stripe holds a whole CSR matrix as one stripe of global rows.
func Stripe(a *csr.Matrix[float64]) *dsmat.Rows {
	r := &dsmat.Rows{N: int64(a.Rows), RowPtr: make([]int64, a.Rows+1), Col: make([]int64, a.NNZ()), Val: a.Val}
	for i, p := range a.RowPtr {
		r.RowPtr[i] = int64(p)
	}
	for k, c := range a.ColIdx {
		r.Col[k] = int64(c)
	}
	return r
}

// Diff describes where got and want differ, "" when they are the same
// matrix, bit for bit: the shape, the row pointers, the columns, the first
// value that differs.
func Diff(got, want *csr.Matrix[float64]) string {
	switch {
	case got.Rows != want.Rows || got.Cols != want.Cols:
		return fmt.Sprintf("%dx%d, want %dx%d", got.Rows, got.Cols, want.Rows, want.Cols)
	case !slices.Equal(got.RowPtr, want.RowPtr):
		return "row pointers differ"
	case !slices.Equal(got.ColIdx, want.ColIdx):
		return "column indices differ"
	}
	for k := range want.Val {
		if math.Float64bits(got.Val[k]) != math.Float64bits(want.Val[k]) {
			return fmt.Sprintf("value %d is %v, want %v", k, got.Val[k], want.Val[k])
		}
	}
	return ""
}
