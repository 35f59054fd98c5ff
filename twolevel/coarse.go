package twolevel

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"gonum.org/v1/gonum/mat"
)

// timesA returns the rank's rows of A Z: row i sums a_ij times Z's row j
// over the row's entries, the halo's included. A row of Z holds the
// consecutive columns of one box (zRows), so a row of A Z adds up whole
// boxes: a handful per row, looked up by their first column.
func (s *space) timesA(A *dsmat.Matrix) rows {
	type box struct {
		first int32
		n     int
		sum   [6]float64
	}
	return build(A.LocalRows(), 2*s.modes, func() rowFunc {
		var boxes []box
		last := 0 // the box the previous entry added to
		add := func(zr rows, j int, a float64) {
			cols, vals := zr.row(j)
			if len(cols) == 0 {
				return
			}
			if last >= len(boxes) || boxes[last].first != cols[0] {
				last = slices.IndexFunc(boxes, func(b box) bool { return b.first == cols[0] })
				if last < 0 {
					last = len(boxes)
					boxes = append(boxes, box{first: cols[0], n: len(cols)})
				}
			}
			sum := &boxes[last].sum
			for t, v := range vals {
				sum[t] += a * v
			}
		}
		return func(i int, col []int32, val []float64) ([]int32, []float64) {
			boxes, last = boxes[:0], 0
			cols, vals := A.Diag.Row(i)
			for e, j := range cols {
				add(s.own, int(j), vals[e])
			}
			for k := range A.Off {
				cols, vals := A.Off[k].Row(i)
				for e, j := range cols {
					add(s.halo[k], int(j), vals[e])
				}
			}
			slices.SortFunc(boxes, func(a, b box) int { return int(a.first - b.first) })
			for _, b := range boxes {
				for t := 0; t < b.n; t++ {
					col, val = append(col, b.first+int32(t)), append(val, b.sum[t])
				}
			}
			return col, val
		}
	})
}

// coarseInverse sums E = Z' A Z over the ranks, inverts it and returns the
// coarse unknowns near the rank (the columns of its rows of A Z, which hold
// those of its rows of Z) with their rows of E^-1, row-major. Every rank
// inverts the same E. Collective.
func (s *space) coarseInverse(c *comm.Comm, az rows) (near []int32, inv []float64, err error) {
	k := s.size
	parts := make([][]float64, parallel.Chunks(len(s.own.ptr)-1))
	parallel.For(len(s.own.ptr)-1, func(p, lo, hi int) {
		e := make([]float64, k*k)
		for i := lo; i < hi; i++ {
			zc, zv := s.own.row(i)
			ac, av := az.row(i)
			for t, a := range zc {
				row := e[int(a)*k:]
				for u, b := range ac {
					row[b] += zv[t] * av[u]
				}
			}
		}
		parts[p] = e
	})
	e := parts[0]
	for _, q := range parts[1:] {
		for i, v := range q {
			e[i] += v
		}
	}
	if err := comm.Allreduce(c, comm.Sum, e); err != nil {
		return nil, nil, err
	}
	if err := comm.Bcast(c, e, 0); err != nil {
		return nil, nil, err
	}
	sym := mat.NewSymDense(k, nil)
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			sym.SetSym(i, j, (e[i*k+j]+e[j*k+i])/2)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, nil, fmt.Errorf("twolevel: the coarse matrix Z'AZ (%d unknowns) is not positive definite: the matrix is not SPD", k)
	}
	var full mat.SymDense
	if err := ch.InverseTo(&full); err != nil {
		return nil, nil, fmt.Errorf("twolevel: invert the coarse matrix: %w", err)
	}
	used := make([]bool, k)
	for _, c := range az.col {
		used[c] = true
	}
	for c, u := range used {
		if u {
			near = append(near, int32(c))
		}
	}
	inv = make([]float64, len(near)*k)
	for r, g := range near {
		for j := 0; j < k; j++ {
			inv[r*k+j] = full.At(int(g), j)
		}
	}
	return near, inv, nil
}

// upload puts Z, -A Z, their transposes and the rows of E^-1 on the
// backend, with the coarse unknowns near the rank numbered compactly.
func (b *Preconditioner) upload(s *space, az rows, near []int32, inv []float64) error {
	at := make([]int32, s.size) // compact number of each coarse unknown near the rank
	for i, g := range near {
		at[g] = int32(i)
	}
	block := func(r rows, sign float64) *csr.Matrix[float64] {
		m := &csr.Matrix[float64]{Rows: len(r.ptr) - 1, Cols: len(near), RowPtr: r.ptr,
			ColIdx: make([]int32, len(r.col)), Val: make([]float64, len(r.val))}
		parallel.For(len(r.col), func(_, lo, hi int) {
			for e := lo; e < hi; e++ {
				m.ColIdx[e], m.Val[e] = at[r.col[e]], sign*r.val[e]
			}
		})
		return m
	}
	z, negAZ := block(s.own, 1), block(az, -1)
	dense := &csr.Matrix[float64]{Rows: len(near), Cols: s.size, RowPtr: make([]int32, len(near)+1),
		ColIdx: make([]int32, len(inv)), Val: inv}
	for r := range near {
		dense.RowPtr[r+1] = int32((r + 1) * s.size)
		for j := 0; j < s.size; j++ {
			dense.ColIdx[r*s.size+j] = int32(j)
		}
	}
	var err error
	put := func(dst *backend.Matrix, m *csr.Matrix[float64], rowMap []int32) {
		if err == nil {
			*dst, err = b.be.NewMatrix(m, rowMap, backend.Double)
		}
	}
	put(&b.z, z, nil)
	put(&b.negAZ, negAZ, nil)
	put(&b.einv, dense, nil)
	if err == nil {
		b.zt, err = newTransposed(b.be, z, near)
	}
	if err == nil {
		b.negAZt, err = newTransposed(b.be, negAZ, near)
	}
	if err != nil {
		return fmt.Errorf("twolevel: upload the coarse blocks: %w", err)
	}
	return nil
}
