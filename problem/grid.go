package problem

import (
	"math"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// grid is the N x N x N grid of unknowns in natural ordering
// idx = x + N*(y + N*z). Walking a row range cell by cell and visiting the
// neighbours in (dz, dy, dx) order yields ascending column indices, because
// idx is lexicographic in (z, y, x).
type grid struct{ n int64 }

// cell holds the coordinates x, y, z of a grid point.
type cell [3]int64

// at returns the coordinates of index i.
func (g grid) at(i int64) cell {
	return cell{i % g.n, i / g.n % g.n, i / (g.n * g.n)}
}

// next advances c to the following index without dividing.
func (g grid) next(c *cell) {
	for a := 0; a < 3; a++ {
		c[a]++
		if c[a] < g.n {
			return
		}
		c[a] = 0
	}
}

// strides are the index offsets of a unit step along x, y and z.
func (g grid) strides() [3]int64 { return [3]int64{1, g.n, g.n * g.n} }

// span is how many of c-1, c, c+1 lie inside [0, N).
func (g grid) span(c int64) int64 {
	s := int64(1)
	if c > 0 {
		s++
	}
	if c < g.n-1 {
		s++
	}
	return s
}

// count7 and count27 are the nonzeros of the row of a point for the 7- and
// 27-point stencils.
func (g grid) count7(c cell) int64  { return g.span(c[0]) + g.span(c[1]) + g.span(c[2]) - 2 }
func (g grid) count27(c cell) int64 { return g.span(c[0]) * g.span(c[1]) * g.span(c[2]) }

// newRows allocates the stripe [lo, hi) with exact row pointers from count,
// so that the values are written once into storage of the final size.
func (g grid) newRows(lo, hi int64, count func(cell) int64) *dsmat.Rows {
	ptr := make([]int64, hi-lo+1)
	parallel.For(int(hi-lo), func(_, first, end int) {
		c := g.at(lo + int64(first))
		for i := first; i < end; i++ {
			ptr[i+1] = count(c)
			g.next(&c)
		}
	})
	parallel.Accumulate(ptr)
	nnz := ptr[hi-lo]
	return &dsmat.Rows{N: g.n * g.n * g.n, First: lo, RowPtr: ptr, Col: make([]int64, nnz), Val: make([]float64, nnz)}
}

// fill writes the rows of r on all cores: row(i, c, k) writes row i, at
// grid point c, from position k of r.Col and r.Val.
func (g grid) fill(r *dsmat.Rows, row func(i int64, c cell, k int)) {
	parallel.For(len(r.RowPtr)-1, func(_, first, end int) {
		c := g.at(r.First + int64(first))
		for i := first; i < end; i++ {
			row(r.First+int64(i), c, int(r.RowPtr[i]))
			g.next(&c)
		}
	})
}

// faces gives the couplings of a 7-point finite-volume (or finite-difference)
// operator. Both are positive; the matrix holds -face off the diagonal and
// the sum of all six couplings of a point (boundary ones included) on it.
type faces interface {
	// face couples point i with its neighbour j along axis (0 x, 1 y, 2 z).
	// A symmetric operator's is symmetric in i and j bit for bit.
	face(i, j int64, axis int) float64
	// boundary couples point i with the zero Dirichlet value across the
	// boundary face normal to axis, below i (the face at coordinate -1) or
	// above it (at N).
	boundary(i int64, axis int, below bool) float64
}

// constFaces is a constant coefficient per axis; the eliminated Dirichlet
// neighbour keeps its coefficient on the diagonal (a boundary value at one
// grid step), so the diagonal is 2*(cx+cy+cz) everywhere.
type constFaces [3]float64

func (c constFaces) face(_, _ int64, axis int) float64          { return c[axis] }
func (c constFaces) boundary(_ int64, axis int, _ bool) float64 { return c[axis] }

// upwind is diffusion plus first-order upwind convection by a wind with
// the same positive component along every axis: c is that component times
// the grid step (the matrix scaled by h^2). The upwind neighbour of every
// point is the one below it, whose coupling 1 + c carries the convection;
// the one above couples by diffusion alone.
type upwind struct{ c float64 }

func (u upwind) face(i, j int64, _ int) float64 { return u.coupling(j < i) }
func (u upwind) boundary(_ int64, _ int, below bool) float64 {
	return u.coupling(below)
}

// coupling is 1 + c towards the upwind side (below) and 1 downwind.
func (u upwind) coupling(below bool) float64 {
	if below {
		return 1 + u.c
	}
	return 1
}

// convdiff builds the rows [lo, hi) of the convection-diffusion operator
// with Peclet number peclet (see the package documentation): the wind
// peclet*(1,1,1)/sqrt(3), the grid step h = 1/(N+1).
func (g grid) convdiff(lo, hi int64, peclet float64) *dsmat.Rows {
	h := 1 / float64(g.n+1)
	return g.assemble7(lo, hi, upwind{c: peclet / math.Sqrt(3) * h})
}

// assemble7 builds the rows [lo, hi) of the 7-point operator with couplings f.
func (g grid) assemble7(lo, hi int64, f faces) *dsmat.Rows {
	r := g.newRows(lo, hi, g.count7)
	st := g.strides()
	g.fill(r, func(i int64, c cell, k int) {
		diag := 0.0
		for a := 2; a >= 0; a-- { // z-1, y-1, x-1: ascending columns
			if c[a] == 0 {
				diag += f.boundary(i, a, true)
				continue
			}
			j := i - st[a]
			t := f.face(i, j, a)
			r.Col[k], r.Val[k] = j, -t
			diag += t
			k++
		}
		d := k
		r.Col[d] = i
		k++
		for a := 0; a < 3; a++ { // x+1, y+1, z+1
			if c[a] == g.n-1 {
				diag += f.boundary(i, a, false)
				continue
			}
			j := i + st[a]
			t := f.face(i, j, a)
			r.Col[k], r.Val[k] = j, -t
			diag += t
			k++
		}
		r.Val[d] = diag
	})
	return r
}

// assemble27 builds the rows [lo, hi) of the 27-point operator: 26 on the
// diagonal, -1 for each neighbour inside the grid.
func (g grid) assemble27(lo, hi int64) *dsmat.Rows {
	r := g.newRows(lo, hi, g.count27)
	st := g.strides()
	g.fill(r, func(i int64, c cell, k int) {
		for dz := int64(-1); dz <= 1; dz++ {
			for dy := int64(-1); dy <= 1; dy++ {
				for dx := int64(-1); dx <= 1; dx++ {
					if !g.inside(c[0]+dx) || !g.inside(c[1]+dy) || !g.inside(c[2]+dz) {
						continue
					}
					r.Col[k], r.Val[k] = i+dx*st[0]+dy*st[1]+dz*st[2], -1
					if dx == 0 && dy == 0 && dz == 0 {
						r.Val[k] = 26
					}
					k++
				}
			}
		}
	})
	return r
}

// inside reports whether coordinate c lies in [0, N).
func (g grid) inside(c int64) bool { return c >= 0 && c < g.n }
