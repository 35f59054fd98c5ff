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
// consecutive columns of one box, so a row of A Z adds up whole boxes: a
// handful per row.
func (s *space) timesA(A *dsmat.Matrix) rows {
	type box struct {
		box int32
		sum [6]float64
	}
	return build(A.LocalRows(), 2*s.modes, func() rowFunc {
		var boxes []box
		last := 0 // the box the previous entry added to
		add := func(z zRows, j int, a float64) {
			b := z.box[j]
			if last >= len(boxes) || boxes[last].box != b {
				last = slices.IndexFunc(boxes, func(x box) bool { return x.box == b })
				if last < 0 {
					last = len(boxes)
					boxes = append(boxes, box{box: b})
				}
			}
			sum, v := &boxes[last].sum, &z.val[j]
			for t := range sum {
				sum[t] += a * v[t]
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
			slices.SortFunc(boxes, func(a, b box) int { return int(a.box - b.box) })
			for _, b := range boxes {
				for t := s.first[b.box]; t < s.first[b.box+1]; t++ {
					col, val = append(col, int32(t)), append(val, b.sum[t-s.first[b.box]])
				}
			}
			return col, val
		}
	})
}

// coarseMatrix sums E = Z' A Z over the ranks, the same on every rank, and
// returns it (row-major) with the coarse unknowns near the rank: the
// columns of its rows of A Z, which hold those of its rows of Z.
// Collective.
func (s *space) coarseMatrix(c *comm.Comm, az rows) (near []int32, e []float64, err error) {
	k := s.size
	parts := make([][]float64, parallel.Chunks(len(s.own.box)))
	parallel.For(len(s.own.box), func(p, lo, hi int) {
		e := make([]float64, k*k)
		for i := lo; i < hi; i++ {
			first, zv := s.row(s.own, i)
			ac, av := az.row(i)
			for t, z := range zv {
				row := e[(int(first)+t)*k:]
				for u, b := range ac {
					row[b] += z * av[u]
				}
			}
		}
		parts[p] = e
	})
	e = parts[0]
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
	used := make([]bool, k)
	for _, c := range az.col {
		used[c] = true
	}
	for c, u := range used {
		if u {
			near = append(near, int32(c))
		}
	}
	return near, e, nil
}

// inverse returns the rows near of E^-1, row-major, for E (row-major, k x
// k) symmetrized.
func inverse(e []float64, k int, near []int32) ([]float64, error) {
	sym := mat.NewSymDense(k, nil)
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			sym.SetSym(i, j, (e[i*k+j]+e[j*k+i])/2)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, fmt.Errorf("twolevel: the coarse matrix Z'AZ (%d unknowns) is not positive definite: the matrix is not SPD", k)
	}
	var full mat.SymDense
	if err := ch.InverseTo(&full); err != nil {
		return nil, fmt.Errorf("twolevel: invert the coarse matrix: %w", err)
	}
	inv := make([]float64, len(near)*k)
	for r, g := range near {
		for j := 0; j < k; j++ {
			inv[r*k+j] = full.At(int(g), j)
		}
	}
	return inv, nil
}

// block returns the rows of z as a CSR block of cols columns, a coarse
// unknown numbered at[unknown].
func (s *space) block(z zRows, at []int32, cols int) *csr.Matrix[float64] {
	m := &csr.Matrix[float64]{Rows: len(z.box), Cols: cols, RowPtr: make([]int32, len(z.box)+1)}
	parallel.Scan(m.RowPtr, func(i int) int32 { return int32(s.first[z.box[i]+1] - s.first[z.box[i]]) })
	m.ColIdx, m.Val = make([]int32, m.RowPtr[m.Rows]), make([]float64, m.RowPtr[m.Rows])
	parallel.For(m.Rows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			first, v := s.row(z, i)
			for t, x := range v {
				e := int(m.RowPtr[i]) + t
				m.ColIdx[e], m.Val[e] = at[int(first)+t], x
			}
		}
	})
	return m
}

// upload puts Z, -A Z and their transposes on the backend, with the coarse
// unknowns near the rank numbered compactly. It renumbers az's columns and
// negates its values in place.
func (b *Preconditioner) upload(az rows, near []int32) error {
	s := b.space
	at := make([]int32, s.size) // compact number of each coarse unknown near the rank
	for i, g := range near {
		at[g] = int32(i)
	}
	parallel.For(len(az.col), func(_, lo, hi int) {
		for e := lo; e < hi; e++ {
			az.col[e], az.val[e] = at[az.col[e]], -az.val[e]
		}
	})
	z := s.block(s.own, at, len(near))
	negAZ := &csr.Matrix[float64]{Rows: len(az.ptr) - 1, Cols: len(near), RowPtr: az.ptr, ColIdx: az.col, Val: az.val}
	var err error
	if b.z, err = b.be.NewMatrix(z, nil, backend.Double); err == nil {
		b.negAZ, err = b.be.NewMatrix(negAZ, nil, backend.Double)
	}
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

// uploadInverse puts the rows of E^-1 near the rank on the backend, a dense
// block of len(near) x size.
func (b *Preconditioner) uploadInverse(near []int32, inv []float64) error {
	k := b.space.size
	dense := &csr.Matrix[float64]{Rows: len(near), Cols: k, RowPtr: make([]int32, len(near)+1),
		ColIdx: make([]int32, len(inv)), Val: inv}
	for r := range near {
		dense.RowPtr[r+1] = int32((r + 1) * k)
		for j := 0; j < k; j++ {
			dense.ColIdx[r*k+j] = int32(j)
		}
	}
	var err error
	if b.einv, err = b.be.NewMatrix(dense, nil, backend.Double); err != nil {
		return fmt.Errorf("twolevel: upload the coarse inverse: %w", err)
	}
	return nil
}
