package spai

import (
	"fmt"
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Rows computes the rank's rows of M on the host, on all cores: for every
// own row i, min ||A(J,I)' m - e_i(I)||_2 on its pattern J (package doc).
// The rows do not depend on the core count. A row of M that cannot be
// fitted is an error naming it: when no row of its pattern has an entry in
// column i (a zero diagonal whose row's pattern, at this tau and k, misses
// every row with an entry in column i), or when its block is rank
// deficient (A is singular).
func Rows(l *Local, p Params) (*dsmat.Rows, Stats, error) {
	if err := p.Check(); err != nil {
		return nil, Stats{}, err
	}
	own := l.Own()
	n := own.Count()
	chunks := parallel.Chunks(n)
	type part struct {
		lens []int64
		cols []int64
		vals []float64
		st   Stats
		err  error
	}
	parts := make([]part, chunks)
	parallel.For(n, func(ch, lo, hi int) {
		w := &worker{l: l, p: p, seen: map[int64]bool{}}
		out := &parts[ch]
		for i := lo; i < hi; i++ {
			g := own.First + int64(i)
			if err := w.row(g); err != nil {
				out.err = err
				return
			}
			out.lens = append(out.lens, int64(len(w.J)))
			out.cols = append(out.cols, w.J...)
			out.vals = append(out.vals, w.b[:len(w.J)]...)
			out.st = out.st.Max(Stats{MaxBlockRows: len(w.I), MaxBlockCols: len(w.J)})
		}
	})
	m := &dsmat.Rows{N: own.N, First: own.First, RowPtr: make([]int64, 1, n+1)}
	var st Stats
	for _, pt := range parts {
		if pt.err != nil {
			return nil, Stats{}, pt.err
		}
		for _, ln := range pt.lens {
			m.RowPtr = append(m.RowPtr, m.RowPtr[len(m.RowPtr)-1]+ln)
		}
		m.Col = append(m.Col, pt.cols...)
		m.Val = append(m.Val, pt.vals...)
		st = st.Max(pt.st)
	}
	return m, st, nil
}

// worker is one goroutine's scratch for Rows.
type worker struct {
	l              *Local
	p              Params
	seen           map[int64]bool
	J, I           []int64 // the row's pattern and the block's rows
	frontier, next []int64
	c              []float64 // the block A(J,I)', column-major
	b              []float64 // e_i(I), then the row's values in b[:len(J)]
	rdiag, norms   []float64
}

// row computes row g of M into w.J (its columns) and w.b[:len(w.J)].
func (w *worker) row(g int64) error {
	if err := w.pattern(g); err != nil {
		return err
	}
	if err := w.block(g); err != nil {
		return err
	}
	if !w.solve(len(w.I), len(w.J)) {
		return RankDeficient(g, len(w.I), len(w.J))
	}
	return nil
}

// RankDeficient is the error of global row g of M, whose m x n block is
// rank deficient.
func RankDeficient(g int64, m, n int) error {
	return fmt.Errorf("spai: row %d of M: its least-squares block (%d x %d) is rank deficient: A is singular", g+1, m, n)
}

// NoDiagonal is the error of global row g of M, none of whose n pattern
// rows has an entry in column g: e_g(I) is then zero.
func NoDiagonal(g int64, n int) error {
	return fmt.Errorf("spai: row %d of M: no row of its pattern (%d rows) has an entry in column %d "+
		"(a zero diagonal entry: raise tau or k)", g+1, n, g+1)
}

// pattern sets w.J to row g of the pattern of A~^K, sorted: the columns
// reachable from g in at most K steps of the graph of A~.
func (w *worker) pattern(g int64) error {
	if w.p.K == 1 { // row g's kept columns and g: no search
		cols, vals, max, ok := w.l.Row(g)
		if !ok {
			return notCollected(g, g)
		}
		w.J = append(w.J[:0], g)
		for k, c := range cols {
			if c != g && kept(g, c, vals[k], max, w.p.Tau) {
				w.J = append(w.J, c)
			}
		}
		slices.Sort(w.J)
		return nil
	}
	clear(w.seen)
	w.seen[g] = true
	w.J = append(w.J[:0], g)
	w.frontier = append(w.frontier[:0], g)
	for range w.p.K {
		w.next = w.next[:0]
		for _, r := range w.frontier {
			cols, vals, max, ok := w.l.Row(r)
			if !ok {
				return notCollected(g, r)
			}
			for k, c := range cols {
				if w.seen[c] || !kept(r, c, vals[k], max, w.p.Tau) {
					continue
				}
				w.seen[c] = true
				w.J = append(w.J, c)
				w.next = append(w.next, c)
			}
		}
		w.frontier, w.next = w.next, w.frontier
	}
	slices.Sort(w.J)
	return nil
}

// block sets w.I to the columns of the rows J of A, sorted, w.c to the
// block A(J,I)' (|I| x |J|, column-major: column q is row J[q] of A) and
// w.b to e_g(I).
func (w *worker) block(g int64) error {
	w.I = w.I[:0]
	for _, j := range w.J {
		cols, _, _, ok := w.l.Row(j)
		if !ok {
			return notCollected(g, j)
		}
		w.I = append(w.I, cols...)
	}
	slices.Sort(w.I)
	w.I = slices.Compact(w.I)
	m, n := len(w.I), len(w.J)
	w.c = resize(w.c, m*n)
	for q, j := range w.J {
		cols, vals, _, _ := w.l.Row(j)
		col := w.c[q*m : (q+1)*m]
		at := 0
		for k, c := range cols { // both ascending: one merge
			for w.I[at] != c {
				at++
			}
			col[at] = vals[k]
		}
	}
	w.b = resize(w.b, max(m, n))
	pos, found := slices.BinarySearch(w.I, g)
	if !found {
		return NoDiagonal(g, n)
	}
	w.b[pos] = 1
	return nil
}

// solve solves min ||C x - b||_2 for the m x n block C in w.c (column-major)
// and b in w.b by Householder QR, leaving x in w.b[:n]; false when C's
// columns are dependent: a column whose part orthogonal to the columns
// before it is below roundoff of its own length, or n > m.
func (w *worker) solve(m, n int) bool {
	if n > m {
		return false
	}
	a, b := w.c, w.b
	w.norms, w.rdiag = resize(w.norms, n), resize(w.rdiag, n)
	for k := range n {
		w.norms[k] = norm(a[k*m : (k+1)*m])
	}
	for k := range n {
		v := a[k*m+k : (k+1)*m] // x = C(k:m, k), made v in place
		s := norm(v)
		if !(s > 0x1p-52*w.norms[k]) {
			return false
		}
		alpha := -math.Copysign(s, v[0])
		// H = I - v v' / (s (s + |x_0|)), v = x - alpha e_1
		h := s * (s + math.Abs(v[0]))
		v[0] -= alpha
		for j := k + 1; j < n; j++ {
			reflect(a[j*m+k:(j+1)*m], v, h)
		}
		reflect(b[k:m], v, h)
		w.rdiag[k] = alpha
	}
	for k := n - 1; k >= 0; k-- {
		s := b[k]
		for j := k + 1; j < n; j++ {
			s -= a[j*m+k] * b[j]
		}
		b[k] = s / w.rdiag[k]
	}
	return true
}

// reflect applies y -= v (v'y) / h.
func reflect(y, v []float64, h float64) {
	var d float64
	for i, vi := range v {
		d += vi * y[i]
	}
	d /= h
	for i, vi := range v {
		y[i] -= d * vi
	}
}

// norm is the 2-norm of x: the plain sum of squares where it can neither
// overflow nor lose digits to underflow (the QR's inner loop), else scaled
// by the largest magnitude.
func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	if s > 0x1p-900 && s < 0x1p900 {
		return math.Sqrt(s)
	}
	var big float64
	for _, v := range x {
		big = math.Max(big, math.Abs(v))
	}
	if big == 0 || math.IsInf(big, 0) {
		return big
	}
	s = 0
	for _, v := range x {
		s += (v / big) * (v / big)
	}
	return big * math.Sqrt(s)
}

// resize returns s with n zeros, reusing its memory.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}
