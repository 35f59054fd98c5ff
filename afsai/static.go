package afsai

import (
	"fmt"
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
)

// StaticParams controls the static FSAI of paper 000, Algorithm 3.1.
type StaticParams struct {
	// Tau sparsifies A before the pattern is built: off-diagonal entries
	// with |a_ij| <= Tau sqrt(a_ii a_jj) are dropped (eq. 3.8).
	Tau float64
	// K is the power: the pattern of G is Low(B_K), B_1 = Low(A~),
	// B_{p+1} = Low(B_p A~) (eq. 3.9).
	K int
	// Delta post-filters G: off-diagonal entries with |g_ij| < Delta ||g_i||_2
	// are dropped and the row rescaled (eqs. 3.11-3.13); 0 keeps all.
	Delta float64
}

func (p StaticParams) check() error {
	if p.K < 1 {
		return fmt.Errorf("afsai: static K %d: need K >= 1", p.K)
	}
	if !(p.Tau >= 0) || math.IsInf(p.Tau, 0) || !(p.Delta >= 0) || math.IsInf(p.Delta, 0) {
		return fmt.Errorf("afsai: static Tau %g, Delta %g: need finite values >= 0", p.Tau, p.Delta)
	}
	return nil
}

// CheckStatic validates the arguments of Static as Static does and returns
// A's diagonal: for Device implementations, so that they accept and
// refuse the same input.
func CheckStatic[T csr.Real](a *csr.Matrix[T], rows []int, p StaticParams) ([]T, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return checkInput(a, rows)
}

// Static computes the rows of the static FSAI factor G of A (paper 000,
// Algorithm 3.1) for the requested local rows; A, rows and the result are
// as in Adaptive.
//
// The pattern of row i is row i of Low(B_K): the columns j <= i reachable
// from i in at most K steps through the graph of A~ restricted to the
// vertices <= i, which is what the symbolic products compute. G is the exact
// FSAI on that pattern (Algorithm 3.1 lines 7-12, in the unit-diagonal
// form of Adaptive). Post-filtering then splits the scaled row as
// g_i = z_i + eps_i, eps_i holding the off-diagonal entries below
// Delta ||g_i||_2, and keeps z_i / sqrt(1 + eps_i' A eps_i) (eq. 3.13): since
// (A g_i)_j = 0 on the pattern off the diagonal, eps_i' A g_i = 0 and
// z_i' A z_i = 1 + eps_i' A eps_i, so the rescaled row again gives a unit
// diagonal of G A G'. The row is not recomputed on the filtered pattern, as
// the paper does not.
func Static[T csr.Real](a *csr.Matrix[T], rows []int, p StaticParams) (*csr.Matrix[T], Stats, error) {
	diag, err := CheckStatic(a, rows, p)
	if err != nil {
		return nil, Stats{}, err
	}
	return computeRows(rows, a.Cols, nil, func() rowFunc[T] {
		w := &staticWorker[T]{f: newFactor(a, diag), mark: make([]bool, a.Cols), eps: make([]T, a.Cols)}
		return func(k int, out *rowOut[T]) { w.row(rows[k], p, out) }
	})
}

// staticWorker is one goroutine's scratch for Static.
type staticWorker[T csr.Real] struct {
	f        *factor[T]
	mark     []bool  // columns in the pattern being built
	pattern  []int32 // row i of Low(B_K), sorted
	frontier []int32 // columns added by the last symbolic step
	next     []int32
	eps      []T // eps_i scattered by column (zero elsewhere)
	epsCols  []int32
}

// row computes the static FSAI row i and adds it to out.
func (w *staticWorker[T]) row(i int, p StaticParams, out *rowOut[T]) {
	w.buildPattern(i, p)
	w.f.reset(i)
	w.f.addAll(w.pattern, out)
	cols, vals := w.f.row()
	if p.Delta > 0 {
		cols, vals = w.filter(cols, vals, p.Delta, out)
	}
	out.add(cols, vals)
}

// buildPattern sets w.pattern to row i of Low(B_K) by K breadth-first
// steps from i in the graph of A~, restricted to columns <= i.
func (w *staticWorker[T]) buildPattern(i int, p StaticParams) {
	a, diag := w.f.a, w.f.diag
	w.pattern = append(w.pattern[:0], int32(i))
	w.frontier = append(w.frontier[:0], int32(i))
	w.mark[i] = true
	for step := 0; step < p.K && len(w.frontier) > 0; step++ {
		w.next = w.next[:0]
		for _, r := range w.frontier {
			cols, vals := a.Row(int(r))
			for k, c := range cols {
				if int(c) > i {
					break
				}
				if w.mark[c] {
					continue
				}
				if math.Abs(float64(vals[k])) <= p.Tau*math.Sqrt(float64(diag[r])*float64(diag[c])) {
					continue
				}
				w.mark[c] = true
				w.pattern = append(w.pattern, c)
				w.next = append(w.next, c)
			}
		}
		w.frontier, w.next = w.next, w.frontier
	}
	for _, c := range w.pattern {
		w.mark[c] = false
	}
	slices.Sort(w.pattern)
}

// filter drops the off-diagonal entries of the scaled row (cols, vals) below
// delta times its 2-norm and rescales the rest by 1/sqrt(1 + eps'A eps)
// (eq. 3.13). It filters in place and returns the shortened row.
func (w *staticWorker[T]) filter(cols []int32, vals []T, delta float64, out *rowOut[T]) ([]int32, []T) {
	var norm float64
	for _, v := range vals {
		norm += float64(v) * float64(v)
	}
	thr := delta * math.Sqrt(norm)
	n := 0
	w.epsCols = w.epsCols[:0]
	for k, c := range cols {
		if int(c) != w.f.i && math.Abs(float64(vals[k])) < thr {
			w.eps[c] = vals[k]
			w.epsCols = append(w.epsCols, c)
			continue
		}
		cols[n], vals[n] = c, vals[k]
		n++
	}
	if len(w.epsCols) == 0 {
		return cols, vals
	}
	// eps' A eps over the gathered A[E,E], by rows of A.
	var q float64
	for _, e := range w.epsCols {
		rc, rv := w.f.a.Row(int(e))
		var s float64
		for k, c := range rc {
			s += float64(rv[k]) * float64(w.eps[c])
		}
		q += float64(w.eps[e]) * s
	}
	for _, e := range w.epsCols {
		w.eps[e] = 0
	}
	scale := 1 / math.Sqrt(1+q)
	for k := range n {
		vals[k] = T(float64(vals[k]) * scale)
	}
	out.stats.Dropped += int64(len(w.epsCols))
	return cols[:n], vals[:n]
}
