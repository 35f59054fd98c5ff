package afsai

import (
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
)

// factor computes one row of the exact FSAI on a pattern that grows one
// column at a time, which both set-ups need: the adaptive one grows the
// pattern by steps, the static one adds its precomputed pattern.
//
// For row i with pattern P (columns < i, kept in insertion order) it holds
// the Cholesky factor L of the dense A[P,P] and y = L^-1 A[P,i]. Then the
// unscaled FSAI row g~ = (g, 1) solves A[P,P] g = -A[P,i], so g = -L'^-1 y,
// and psi = a_ii + g'A[P,i] = a_ii - y'y. Appending a column borders L with
// one row, so a pattern of m columns costs O(m^3/3) in all, however many
// steps built it, and psi drops by the square of each new entry of y.
type factor[T csr.Real] struct {
	a    *csr.Matrix[T]
	diag []T
	tol  float64 // relative breakdown threshold for pivots and psi

	i         int     // the row being computed
	psi0, psi T       // a_ii and the current psi
	pat       []int32 // pattern columns in insertion order
	pos       []int32 // pos[c]: index of column c in pat, -1 when absent (len a.Rows)
	l         []T     // L packed by rows: row r starts at r(r+1)/2
	y         []T     // L^-1 A[pat,i]
	g         []T     // solution of A[pat,pat] g = -A[pat,i], after solve
	col       []T     // scratch for the new row of L

	perm []int32 // scratch for row: pattern indices sorted by column
	outC []int32 // scratch for row: the scaled row of G
	outV []T
}

// newFactor allocates a worker's scratch for matrix a with diagonal diag.
func newFactor[T csr.Real](a *csr.Matrix[T], diag []T) *factor[T] {
	f := &factor[T]{a: a, diag: diag, pos: make([]int32, a.Rows)}
	for c := range f.pos {
		f.pos[c] = -1
	}
	// A pivot that rounding alone could produce is no pivot: accept d only
	// when d > 64 u a_jj, u the unit roundoff of T (about 4e-6 in float32,
	// 7e-15 in float64); likewise psi against 64 u a_ii.
	f.tol = 64 * unitRoundoff[T]()
	return f
}

// reset starts row i with an empty pattern: g~ = e_i, psi = a_ii.
func (f *factor[T]) reset(i int) {
	for _, c := range f.pat {
		f.pos[c] = -1
	}
	f.i = i
	f.psi0, f.psi = f.diag[i], f.diag[i]
	f.pat, f.l, f.y, f.g = f.pat[:0], f.l[:0], f.y[:0], f.g[:0]
}

// add appends column j < i to the pattern. It reports false, leaving the
// state as it was, when the new pivot of L or the new psi is not safely
// positive: A[P,P] (or the bordered system with row i) is numerically not
// positive definite in precision T.
func (f *factor[T]) add(j int32) bool {
	m := len(f.pat)
	col := slices.Grow(f.col[:0], m)[:m]
	clear(col)
	var aji T
	cols, vals := f.a.Row(int(j))
	for k, c := range cols {
		if p := f.pos[c]; p >= 0 {
			col[p] = vals[k]
		} else if int(c) == f.i {
			aji = vals[k]
		}
	}
	// Forward substitution L col = A[P,j], then the pivot and y's new entry.
	d := f.diag[j]
	t := aji
	for r := 0; r < m; r++ {
		lr := f.l[r*(r+1)/2:]
		s := col[r]
		for q := 0; q < r; q++ {
			s -= lr[q] * col[q]
		}
		s /= lr[r]
		col[r] = s
		d -= s * s
		t -= s * f.y[r]
	}
	f.col = col
	if !(float64(d) > f.tol*float64(f.diag[j])) {
		return false
	}
	ljj := T(math.Sqrt(float64(d)))
	yj := t / ljj
	psi := f.psi - yj*yj
	if !(float64(psi) > f.tol*float64(f.psi0)) {
		return false
	}
	f.l = append(append(f.l, col...), ljj)
	f.y = append(f.y, yj)
	f.pos[j] = int32(m)
	f.pat = append(f.pat, j)
	f.psi = psi
	return true
}

// solve computes g = -L'^-1 y, the off-diagonal part of the unscaled row.
func (f *factor[T]) solve() {
	m := len(f.pat)
	f.g = slices.Grow(f.g[:0], m)[:m]
	for r := range m {
		f.g[r] = -f.y[r]
	}
	for r := m - 1; r >= 0; r-- {
		lr := f.l[r*(r+1)/2:]
		f.g[r] /= lr[r]
		gr := f.g[r]
		for q := 0; q < r; q++ {
			f.g[q] -= lr[q] * gr
		}
	}
}

// row returns the scaled row of G, (g, 1)/sqrt(psi), with columns sorted;
// solve must have been called. The slices are scratch, valid until the next
// call.
func (f *factor[T]) row() ([]int32, []T) {
	m := len(f.pat)
	f.perm = f.perm[:0]
	for k := range m {
		f.perm = append(f.perm, int32(k))
	}
	slices.SortFunc(f.perm, func(p, q int32) int { return int(f.pat[p]) - int(f.pat[q]) })
	s := 1 / math.Sqrt(float64(f.psi))
	f.outC, f.outV = f.outC[:0], f.outV[:0]
	for _, k := range f.perm {
		f.outC = append(f.outC, f.pat[k])
		f.outV = append(f.outV, T(float64(f.g[k])*s))
	}
	f.outC = append(f.outC, int32(f.i))
	f.outV = append(f.outV, T(s))
	return f.outC, f.outV
}

// unitRoundoff returns the unit roundoff of T: 2^-24 for single precision,
// 2^-53 for double.
func unitRoundoff[T csr.Real]() float64 {
	if T(1+math.Ldexp(1, -30)) == 1 {
		return math.Ldexp(1, -24)
	}
	return math.Ldexp(1, -53)
}
