package backendtest

import (
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// matrixCase is a random rows x cols CSR block with up to perRow entries a
// row (every fifth row empty). With yRows > 0 it has a row map: its rows
// are rows of a y of yRows rows, picked at random in increasing order.
type matrixCase struct{ rows, cols, perRow, yRows int }

var matrixCases = []matrixCase{
	{0, 0, 0, 0}, {0, 5, 3, 0}, {1, 1, 1, 0}, {7, 7, 4, 0}, {7, 11, 4, 0}, {11, 7, 4, 0},
	{100, 100, 6, 0}, {100, 300, 60, 0}, {bigRows, bigRows, 7, 0}, {7, 9, 4, 20}, {100, 50, 6, 300},
}

// precisions are the storages of a matrix's values.
var precisions = []backend.Precision{backend.Double, backend.Single}

// hostMatrix is the reference of a backend matrix: its pattern, its values
// rounded to its precision, and its row map.
type hostMatrix struct {
	c      matrixCase
	p      backend.Precision
	rowPtr []int32
	col    []int32
	val    []float64
	rowMap []int32
	maxLen int // the most entries of a row
}

// yLen is the number of rows of the products' y.
func (h *hostMatrix) yLen() int {
	if h.rowMap != nil {
		return h.c.yRows
	}
	return h.c.rows
}

// setValues rounds vals to the matrix's precision and keeps them.
func (h *hostMatrix) setValues(vals []float64) {
	h.val = slices.Clone(vals)
	if h.p == backend.Single {
		for k, v := range h.val {
			h.val[k] = float64(float32(v))
		}
	}
}

// matrix makes a random matrix of case c on the backend in precision p,
// freed at the subtest's end, and its reference. The CSR block given to
// NewMatrix is not used afterwards: a backend may keep it.
func (s *suite) matrix(c matrixCase, p backend.Precision) (backend.Matrix, *hostMatrix) {
	s.t.Helper()
	var es []csr.Entry[float64]
	for i := 0; i < c.rows && c.cols > 0; i++ {
		for n := s.rng.IntN(c.perRow + 1); n > 0 && i%5 != 3; n-- {
			es = append(es, csr.Entry[float64]{Row: int32(i), Col: int32(s.rng.IntN(c.cols)), Val: s.rng.NormFloat64()})
		}
	}
	a := csr.FromEntries(c.rows, c.cols, es)
	h := &hostMatrix{c: c, p: p, rowPtr: slices.Clone(a.RowPtr), col: slices.Clone(a.ColIdx)}
	h.setValues(a.Val)
	for i := 0; i < c.rows; i++ {
		h.maxLen = max(h.maxLen, int(a.RowPtr[i+1]-a.RowPtr[i]))
	}
	if c.yRows > 0 {
		h.rowMap = make([]int32, c.rows)
		for k, i := range s.rng.Perm(c.yRows)[:c.rows] {
			h.rowMap[k] = int32(i)
		}
		slices.Sort(h.rowMap)
	}
	m, err := s.b.NewMatrix(a, slices.Clone(h.rowMap), p)
	if err != nil {
		s.t.Fatalf("NewMatrix(%+v, %v): %v", c, p, err)
	}
	s.t.Cleanup(m.Free)
	return m, h
}

// out returns the row of y that row i of the matrix computes.
func (h *hostMatrix) out(i int) int {
	if h.rowMap != nil {
		return int(h.rowMap[i])
	}
	return i
}

// product returns Y = A*X + beta*Y for blocks of k columns, not reading Y
// where beta is 0, the magnitude of each entry's terms (0 for the rows the
// matrix does not compute, which must keep their bits), and A*X's own
// entries and magnitudes.
func (h *hostMatrix) product(x, y []float64, k int, beta float64) (want, scale, ax, axScale []float64) {
	want, scale = slices.Clone(y), make([]float64, len(y))
	ax, axScale = make([]float64, len(y)), make([]float64, len(y))
	for i := 0; i < h.c.rows; i++ {
		o := h.out(i)
		for c := 0; c < k; c++ {
			var sum, mag float64
			for e := h.rowPtr[i]; e < h.rowPtr[i+1]; e++ {
				t := h.val[e] * x[int(h.col[e])*k+c]
				sum += t
				mag += math.Abs(t)
			}
			at := o*k + c
			ax[at], axScale[at] = sum, mag
			want[at], scale[at] = sum, mag
			if beta != 0 {
				want[at] += beta * y[at]
				scale[at] += math.Abs(beta * y[at])
			}
		}
	}
	return want, scale, ax, axScale
}

// initialY returns a y of yLen*k entries for a product with beta: NaN in the
// rows the matrix computes when beta is 0 (they must not be read), random
// elsewhere.
func (s *suite) initialY(h *hostMatrix, k int, beta float64) []float64 {
	y := s.random(h.yLen() * k)
	if beta == 0 {
		for i := 0; i < h.c.rows; i++ {
			copy(y[h.out(i)*k:h.out(i)*k+k], nans(k))
		}
	}
	return y
}

// widths returns the block widths to check with matrix case c.
func widths(c matrixCase) []int {
	if c.rows > 100 {
		return []int{1, 3}
	}
	return []int{1, 2, 5, 67}
}

// testNewMatrix: a matrix reports its shape, entries and precision; a row
// map of the wrong length is refused.
func (s *suite) testNewMatrix() {
	for _, c := range matrixCases {
		for _, p := range precisions {
			m, h := s.matrix(c, p)
			if m.Rows() != c.rows || m.Cols() != c.cols || m.NNZ() != len(h.val) || m.Precision() != p {
				s.t.Errorf("%+v %v: Rows %d, Cols %d, NNZ %d, Precision %v; want %d, %d, %d, %v",
					c, p, m.Rows(), m.Cols(), m.NNZ(), m.Precision(), c.rows, c.cols, len(h.val), p)
			}
		}
	}
	a := csr.FromEntries(3, 3, []csr.Entry[float64]{{Row: 0, Col: 0, Val: 1}})
	if m, err := s.b.NewMatrix(a, []int32{0, 1}, backend.Double); err == nil {
		m.Free()
		s.t.Error("NewMatrix accepted a row map of 2 entries for 3 rows")
	}
}

// testSpMV: backend.SpMV (SpMM of one column): y = A*x + beta*y for beta 0
// (y not read) and 1, only on the mapped rows of a matrix with a row map.
func (s *suite) testSpMV() {
	for _, c := range matrixCases {
		for _, p := range precisions {
			m, h := s.matrix(c, p)
			for _, beta := range []float64{0, 1} {
				xs, ys := s.random(c.cols), s.initialY(h, 1, beta)
				x, y := s.vector(xs), s.vector(ys)
				backend.SpMV(s.b, y, m, x, beta)
				want, scale, _, _ := h.product(xs, ys, 1, beta)
				s.near(name("%+v %v beta %g", c, p, beta), s.host(y), want, scale, h.maxLen+1)
			}
		}
	}
}

// testSpMM: Y = A*X + beta*Y for blocks of k columns, beta 0 (Y not read)
// and 1, only on the mapped rows of a matrix with a row map.
func (s *suite) testSpMM() {
	for _, c := range matrixCases {
		for _, p := range precisions {
			m, h := s.matrix(c, p)
			for _, k := range widths(c) {
				for _, beta := range []float64{0, 1} {
					xs, ys := s.random(c.cols*k), s.initialY(h, k, beta)
					x, y := s.vector(xs), s.vector(ys)
					s.b.SpMM(y, m, x, k, beta)
					want, scale, _, _ := h.product(xs, ys, k, beta)
					s.near(name("%+v %v k=%d beta %g", c, p, k, beta), s.host(y), want, scale, h.maxLen+1)
				}
			}
		}
	}
}

// spmv returns SpMM(y, m, x, 1, beta) for a y holding ys.
func (s *suite) spmv(m backend.Matrix, x backend.Vector, ys []float64, beta float64) []float64 {
	y := s.vector(ys)
	s.b.SpMM(y, m, x, 1, beta)
	return s.host(y)
}

// testSpMMDot: y as SpMM, and the sums gather w[:,c]'(A*X)[:,c] over the
// computed rows (not beta*y); TakeSum sets them back to zero, two products
// add up (the same products give the same bits, so twice the one total
// exactly), and with k = 1 y holds SpMM's bits.
func (s *suite) testSpMMDot() {
	for _, c := range matrixCases {
		for _, p := range precisions {
			m, h := s.matrix(c, p)
			for _, k := range widths(c) {
				sum, err := s.b.NewSum(k)
				if err != nil {
					s.t.Fatalf("NewSum(%d): %v", k, err)
				}
				s.t.Cleanup(sum.Free)
				for _, beta := range []float64{0, 1} {
					what := name("%+v %v k=%d beta %g", c, p, k, beta)
					xs, ys, ws := s.random(c.cols*k), s.initialY(h, k, beta), s.random(h.yLen()*k)
					x, y, w := s.vector(xs), s.vector(ys), s.vector(ws)
					s.b.SpMMDot(y, m, x, k, beta, w, sum)
					first := s.takeSum(sum, k)
					got := s.host(y)
					want, scale, ax, axScale := h.product(xs, ys, k, beta)
					s.near(what+": y", got, want, scale, h.maxLen+1)
					if k == 1 {
						s.exact(what+": y against SpMM", got, s.spmv(m, x, ys, beta))
					}
					dots, dotScale := make([]float64, k), make([]float64, k)
					for i := 0; i < c.rows; i++ {
						for col := 0; col < k; col++ {
							at := h.out(i)*k + col
							dots[col] += ws[at] * ax[at]
							dotScale[col] += math.Abs(ws[at]) * axScale[at]
						}
					}
					s.near(what+": sums", first, dots, dotScale, c.rows+h.maxLen)
					s.exact(what+": sums after TakeSum", s.takeSum(sum, k), make([]float64, k))

					for range 2 {
						s.b.Upload(y, ys)
						s.b.SpMMDot(y, m, x, k, beta, w, sum)
					}
					twice := slices.Clone(first)
					for col := range twice {
						twice[col] *= 2
					}
					s.exact(what+": two products' sums", s.takeSum(sum, k), twice)
				}
			}
		}
	}
}

// testSums: NewSum's sums start at zero.
func (s *suite) testSums() {
	for _, n := range []int{1, 3, 67} {
		sum, err := s.b.NewSum(n)
		if err != nil {
			s.t.Fatalf("NewSum(%d): %v", n, err)
		}
		s.t.Cleanup(sum.Free)
		s.exact(name("NewSum(%d)", n), s.takeSum(sum, n), make([]float64, n))
	}
}

// takeSum returns TakeSum's n sums.
func (s *suite) takeSum(sum backend.Sum, n int) []float64 {
	s.t.Helper()
	out := make([]float64, n)
	if err := s.b.TakeSum(sum, out); err != nil {
		s.t.Fatalf("TakeSum: %v", err)
	}
	return out
}

// testSetValues: new values, rounded to the matrix's precision, replace
// the old on the same pattern; a wrong number of values is refused.
func (s *suite) testSetValues() {
	for _, c := range matrixCases {
		for _, p := range precisions {
			m, h := s.matrix(c, p)
			vals := s.random(len(h.val))
			if err := s.b.SetValues(m, vals); err != nil {
				s.t.Fatalf("%+v %v: SetValues: %v", c, p, err)
			}
			h.setValues(vals)
			xs, ys := s.random(c.cols), s.initialY(h, 1, 0)
			x, y := s.vector(xs), s.vector(ys)
			backend.SpMV(s.b, y, m, x, 0)
			want, scale, _, _ := h.product(xs, ys, 1, 0)
			s.near(name("%+v %v", c, p), s.host(y), want, scale, h.maxLen+1)
			if err := s.b.SetValues(m, append(vals, 1)); err == nil {
				s.t.Errorf("%+v %v: SetValues accepted %d values for %d entries", c, p, len(vals)+1, len(vals))
			}
		}
	}
}

// product is a call of SpMM or SpMMDot.
type product func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum)

// badProductCase is a product that breaks the contract, on blocks of k
// columns whose y and x have yRows and xRows rows (7 fit the 7 x 7 matrix
// the check multiplies).
type badProductCase struct {
	name         string
	k            int
	yRows, xRows int
	call         product
}

// badProducts are products with a beta other than 0 or 1, or with blocks
// that do not fit the matrix, which the backend must refuse by recording an
// error.
var badProducts = []badProductCase{
	{"Beta/SpMM1", 1, 7, 7, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMM(y, a, x, k, 0.5)
	}},
	{"Beta/SpMM2", 2, 7, 7, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMM(y, a, x, k, 2)
	}},
	{"Beta/SpMMDot1", 1, 7, 7, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMMDot(y, a, x, k, -1, w, s)
	}},
	{"Beta/SpMMDot3", 3, 7, 7, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMMDot(y, a, x, k, 0.5, w, s)
	}},
	{"Shape/SpMMLongY", 1, 8, 7, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMM(y, a, x, k, 0)
	}},
	{"Shape/SpMMShortY", 3, 6, 7, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMM(y, a, x, k, 1)
	}},
	{"Shape/SpMMShortX", 2, 7, 6, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMM(y, a, x, k, 0)
	}},
	{"Shape/SpMMDotLongY", 1, 8, 7, func(b backend.Backend, y backend.Vector, a backend.Matrix, x backend.Vector, k int, w backend.Vector, s backend.Sum) {
		b.SpMMDot(y, a, x, k, 0, w, s)
	}},
}

// badProduct: after call, Err, Download and TakeSum return an error (and
// Sync and Close, which the subtest's end checks).
func (s *suite) badProduct(c badProductCase) {
	m, _ := s.matrix(matrixCase{7, 7, 4, 0}, backend.Double)
	x, y, w := s.vector(s.random(c.xRows*c.k)), s.vector(s.random(c.yRows*c.k)), s.vector(s.random(c.yRows*c.k))
	sum, err := s.b.NewSum(c.k)
	if err != nil {
		s.t.Fatalf("NewSum: %v", err)
	}
	s.t.Cleanup(sum.Free)
	if err := s.b.Err(); err != nil {
		s.t.Fatalf("Err before the product: %v", err)
	}
	c.call(s.b, y, m, x, c.k, w, sum)
	if s.b.Err() == nil {
		s.t.Errorf("%s: Err is nil after the product", c.name)
	}
	if err := s.b.Download(make([]float64, c.yRows*c.k), y); err == nil {
		s.t.Errorf("%s: Download returned no error after the product", c.name)
	}
	if err := s.b.TakeSum(sum, make([]float64, c.k)); err == nil {
		s.t.Errorf("%s: TakeSum returned no error after the product", c.name)
	}
}
