package twolevel

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"gonum.org/v1/gonum/mat"
)

// dependent is the smallest eigenvalue of a box's Gram matrix, relative to
// its largest, whose mode the box keeps: below it a mode is (numerically)
// a combination of the others, as the rotations of a box with one node.
const dependent = 1e-10

// space is the coarse space: the rows of Z at the rank's rows and at its
// halo, in the global numbering of the coarse unknowns.
type space struct {
	boxes   int
	size    int // coarse unknowns over all boxes
	dropped int
	modes   int // raw modes per box: 6 or 1
	lo, ext [3]float64
	// basis[box] turns a row's raw modes into its values on the box's
	// kept, orthonormal columns, first[box] onward: entry m*t + j is raw
	// mode j's weight in column t.
	basis [][]float64
	first []int
	bs    int

	own  zRows   // Z at the local rows
	halo []zRows // Z at each off-diagonal block's columns
}

// zRows are rows of Z. Row i holds the columns of its box box[i], the
// box's first onward, as many as the box keeps, with the values val[i].
type zRows struct {
	box []int32
	val [][6]float64
}

// row returns the first column of row i of z and its values.
func (s *space) row(z zRows, i int) (first int32, val []float64) {
	b := z.box[i]
	return int32(s.first[b]), z.val[i][:s.first[b+1]-s.first[b]]
}

// rows are rows of a sparse block over the coarse unknowns.
type rows struct {
	ptr []int32
	col []int32
	val []float64
}

func (r *rows) row(i int) ([]int32, []float64) {
	return r.col[r.ptr[i]:r.ptr[i+1]], r.val[r.ptr[i]:r.ptr[i+1]]
}

// rowFunc appends the entries of row i to col and val.
type rowFunc func(i int, col []int32, val []float64) ([]int32, []float64)

// build returns count rows whose entries a rowFunc appends, computed in
// chunks on all cores and joined in row order: newRow makes each chunk's
// rowFunc, with its own scratch. perRow is the entries a row is expected to
// have, room for which each chunk makes at once.
func build(count, perRow int, newRow func() rowFunc) rows {
	type part struct {
		first int // the chunk's first row
		lens  []int32
		col   []int32
		val   []float64
	}
	parts := make([]part, parallel.Chunks(count))
	parallel.For(count, func(c, lo, hi int) {
		row, p := newRow(), part{first: lo, lens: make([]int32, hi-lo), col: make([]int32, 0, (hi-lo)*perRow), val: make([]float64, 0, (hi-lo)*perRow)}
		for i := lo; i < hi; i++ {
			n := len(p.col)
			p.col, p.val = row(i, p.col, p.val)
			p.lens[i-lo] = int32(len(p.col) - n)
		}
		parts[c] = p
	})
	at := make([]int32, len(parts)+1) // each chunk's first entry
	for c, p := range parts {
		at[c+1] = at[c] + int32(len(p.col))
	}
	out := rows{ptr: make([]int32, count+1), col: make([]int32, at[len(parts)]), val: make([]float64, at[len(parts)])}
	parallel.For(len(parts), func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			p, e := parts[c], at[c]
			copy(out.col[e:], p.col)
			copy(out.val[e:], p.val)
			for i, l := range p.lens {
				e += l
				out.ptr[p.first+i+1] = e
			}
		}
	})
	return out
}

// newSpace lays a grid of boxes^3 boxes over the bounding box of every
// rank's coordinates and builds Z's rows. Collective.
func newSpace(A *dsmat.Matrix, g Geometry, boxes int) (*space, error) {
	s := &space{boxes: boxes, bs: g.BlockSize, modes: 1}
	if g.BlockSize == 3 {
		s.modes = 6
	}
	if err := s.bound(A.Comm, g.Coords); err != nil {
		return nil, err
	}
	first := A.First()
	if err := s.orthonormalize(A.Comm, first, g.Coords); err != nil {
		return nil, err
	}
	s.own = s.zRows(func(i int) int64 { return first + int64(i) }, g.Coords, A.LocalRows())
	halo := make([][]float64, len(A.Off)) // the halo's coordinates, three a column
	for k, b := range A.Off {
		halo[k] = make([]float64, 3*len(b.Cols))
	}
	for d := 0; d < 3; d++ {
		axis := make([]float64, A.LocalRows())
		for i := range axis {
			axis[i] = g.Coords[3*i+d]
		}
		h, err := A.HaloValues(axis)
		if err != nil {
			return nil, err
		}
		for k, v := range h {
			for j, x := range v {
				halo[k][3*j+d] = x
			}
		}
	}
	s.halo = make([]zRows, len(A.Off))
	for k, b := range A.Off {
		s.halo[k] = s.zRows(func(j int) int64 { return b.Cols[j] }, halo[k], len(b.Cols))
	}
	return s, nil
}

// bound sets the grid's corner and extent from the coordinates of every
// rank. Collective.
func (s *space) bound(c *comm.Comm, coords []float64) error {
	type extent struct {
		lo, hi [3]float64
		bad    int // the first coordinate that is not a number, or -1
	}
	rows := len(coords) / 3
	parts := make([]extent, parallel.Chunks(rows))
	parallel.For(rows, func(k, lo, hi int) {
		e := extent{bad: -1}
		for d := 0; d < 3; d++ {
			e.lo[d], e.hi[d] = math.Inf(1), math.Inf(-1)
		}
		for i := 3 * lo; i < 3*hi; i++ {
			x := coords[i]
			if math.IsNaN(x) || math.IsInf(x, 0) {
				e.bad = i
				break
			}
			e.lo[i%3], e.hi[i%3] = min(e.lo[i%3], x), max(e.hi[i%3], x)
		}
		parts[k] = e
	})
	lo := []float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for _, e := range parts {
		if e.bad >= 0 {
			return c.Agree(fmt.Errorf("twolevel: coordinate %d of row %d is %g", e.bad%3, e.bad/3, coords[e.bad]))
		}
		for d := 0; d < 3; d++ {
			lo[d], hi[d] = min(lo[d], e.lo[d]), max(hi[d], e.hi[d])
		}
	}
	if err := c.Agree(nil); err != nil {
		return err
	}
	if err := comm.Allreduce(c, comm.Min, lo); err != nil {
		return err
	}
	if err := comm.Allreduce(c, comm.Max, hi); err != nil {
		return err
	}
	for d := range lo {
		s.lo[d], s.ext[d] = lo[d], hi[d]-lo[d]
	}
	return nil
}

// box returns the box of a point and the point relative to the box's
// centre.
func (s *space) box(p []float64) (int, [3]float64) {
	b, scale := 0, 1
	var rel [3]float64
	for d := 0; d < 3; d++ {
		k, h := 0, s.ext[d]/float64(s.boxes)
		if s.ext[d] > 0 {
			k = min(s.boxes-1, max(0, int(math.Floor((p[d]-s.lo[d])/h))))
		}
		rel[d] = p[d] - (s.lo[d] + (float64(k)+0.5)*h)
		b += k * scale
		scale *= s.boxes
	}
	return b, rel
}

// raw sets m to the raw modes of global row i at point p and returns its
// box: for displacements the translation along i's component and the
// rotations about the box's centre, for a scalar the constant.
func (s *space) raw(i int64, p []float64, m *[6]float64) int {
	b, x := s.box(p)
	if s.bs == 1 {
		m[0] = 1
		return b
	}
	*m = [6]float64{}
	switch i % 3 {
	case 0:
		m[0], m[4], m[5] = 1, x[2], -x[1]
	case 1:
		m[1], m[3], m[5] = 1, -x[2], x[0]
	default:
		m[2], m[3], m[4] = 1, x[1], -x[0]
	}
	return b
}

// orthonormalize sums each box's Gram matrix of raw modes over the ranks
// and keeps, per box, an orthonormal basis of their span: the eigenvectors
// of the Gram matrix above dependent, scaled. Every rank computes the same
// bases from rank 0's sums. Collective.
func (s *space) orthonormalize(c *comm.Comm, first int64, coords []float64) error {
	m, nb := s.modes, s.boxes*s.boxes*s.boxes
	parts := make([][]float64, parallel.Chunks(len(coords)/3))
	parallel.For(len(coords)/3, func(k, lo, hi int) {
		gram := make([]float64, nb*m*m)
		var v [6]float64
		for i := lo; i < hi; i++ {
			b := s.raw(first+int64(i), coords[3*i:3*i+3], &v)
			g := gram[b*m*m:]
			for a := 0; a < m; a++ {
				for e := 0; e < m; e++ {
					g[a*m+e] += v[a] * v[e]
				}
			}
		}
		parts[k] = gram
	})
	gram := parts[0]
	for _, p := range parts[1:] {
		for i, v := range p {
			gram[i] += v
		}
	}
	if err := comm.Allreduce(c, comm.Sum, gram); err != nil {
		return err
	}
	if err := comm.Bcast(c, gram, 0); err != nil {
		return err
	}
	s.basis, s.first = make([][]float64, nb), make([]int, nb+1)
	for b := 0; b < nb; b++ {
		var eig mat.EigenSym
		if !eig.Factorize(mat.NewSymDense(m, gram[b*m*m:(b+1)*m*m]), true) {
			return fmt.Errorf("twolevel: box %d: eigenvalues of its modes' Gram matrix did not converge", b)
		}
		vals := eig.Values(nil)
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		top := vals[len(vals)-1]
		for t, l := range vals {
			if !(l > dependent*top) {
				if top > 0 {
					s.dropped++
				}
				continue
			}
			for j := 0; j < m; j++ {
				s.basis[b] = append(s.basis[b], vecs.At(j, t)/math.Sqrt(l))
			}
		}
		s.first[b+1] = s.first[b] + len(s.basis[b])/m
	}
	s.size = s.first[nb]
	if s.size == 0 {
		return fmt.Errorf("twolevel: no coarse unknowns: the matrix has no rows")
	}
	return nil
}

// zRows returns Z's rows for count rows whose global indices global gives
// and whose points are coords (three values a row).
func (s *space) zRows(global func(int) int64, coords []float64, count int) zRows {
	z := zRows{box: make([]int32, count), val: make([][6]float64, count)}
	parallel.For(count, func(_, lo, hi int) {
		m := s.modes
		for i := lo; i < hi; i++ {
			var v [6]float64
			b := s.raw(global(i), coords[3*i:3*i+3], &v)
			basis := s.basis[b]
			for t := 0; t*m < len(basis); t++ {
				for j := 0; j < m; j++ {
					z.val[i][t] += v[j] * basis[t*m+j]
				}
			}
			z.box[i] = int32(b)
		}
	})
	return z
}
