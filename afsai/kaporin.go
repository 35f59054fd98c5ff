package afsai

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/fsai-dist/fsai-dist/csr"
)

// Kaporin returns the Kaporin number of M = G A G',
//
//	kappa = (tr(M)/n) / det(M)^(1/n),
//
// the ratio of the arithmetic to the geometric mean of M's eigenvalues
// (paper 001, eq. 2.10): 1 for a perfect preconditioner, larger otherwise.
// It forms M densely and takes log det(M) from its Cholesky factor, so it is
// meant for tests and reports on small matrices (O(n^3) time, O(n^2) memory).
// G and A must be square of the same order.
func Kaporin[T csr.Real](a, g *csr.Matrix[T]) (float64, error) {
	n := a.Rows
	if a.Cols != n || g.Rows != n || g.Cols != n {
		return 0, fmt.Errorf("afsai: Kaporin of %dx%d G and %dx%d A: need square matrices of one order",
			g.Rows, g.Cols, a.Rows, a.Cols)
	}
	if n == 0 {
		return 0, fmt.Errorf("afsai: Kaporin of an empty matrix")
	}
	// Column k of M is G (A g_k), g_k the k-th row of G.
	m := mat.NewSymDense(n, nil)
	x := make([]float64, n)
	u := make([]float64, n)
	for k := range n {
		cols, vals := g.Row(k)
		for p, c := range cols {
			x[c] = float64(vals[p])
		}
		csr.MulVec(a, x, 0, u)
		for _, c := range cols {
			x[c] = 0
		}
		for l := k; l < n; l++ {
			lc, lv := g.Row(l)
			var s float64
			for p, c := range lc {
				s += float64(lv[p]) * u[c]
			}
			m.SetSym(k, l, s)
		}
	}
	var trace float64
	for k := range n {
		trace += m.At(k, k)
	}
	var chol mat.Cholesky
	if !chol.Factorize(m) {
		return 0, fmt.Errorf("afsai: Kaporin: G A G' is not numerically positive definite")
	}
	return trace / float64(n) / math.Exp(chol.LogDet()/float64(n)), nil
}
