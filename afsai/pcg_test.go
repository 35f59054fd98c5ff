package afsai

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/csr"
)

// serialPCG solves A x = A*ones with the preconditioner G'G from x = 0 to a
// relative residual of 1e-8 (the papers' set-up) and returns the iteration
// count, or -1 past maxIt.
func serialPCG(a, g *csr.Matrix[float64], maxIt int) int {
	n := a.Rows
	gt := csr.Transpose(g)
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	b := make([]float64, n)
	csr.MulVec(a, ones, 0, b)
	x, r, z, p, q, tmp := make([]float64, n), append([]float64(nil), b...), make([]float64, n),
		make([]float64, n), make([]float64, n), make([]float64, n)
	dot := func(u, v []float64) float64 {
		var s float64
		for i := range u {
			s += u[i] * v[i]
		}
		return s
	}
	precond := func() {
		csr.MulVec(g, r, 0, tmp)
		csr.MulVec(gt, tmp, 0, z)
	}
	bnorm := math.Sqrt(dot(b, b))
	precond()
	copy(p, z)
	rz := dot(r, z)
	for it := 1; it <= maxIt; it++ {
		csr.MulVec(a, p, 0, q)
		alpha := rz / dot(p, q)
		for i := range x {
			x[i] += alpha * p[i]
			r[i] -= alpha * q[i]
		}
		if math.Sqrt(dot(r, r)) <= 1e-8*bnorm {
			return it
		}
		precond()
		rzNew := dot(r, z)
		for i := range p {
			p[i] = z[i] + rzNew/rz*p[i]
		}
		rz = rzNew
	}
	return -1
}

// lowerNNZ is nnz(Low(A)), the size G is compared with.
func lowerNNZ(a *csr.Matrix[float64]) int {
	return (a.NNZ() + a.Rows) / 2
}

// TestPCGIterations checks that PCG with the default aFSAI, in single and
// double precision set-up, converges in clearly fewer iterations than with
// Jacobi (G = D^-1/2).
func TestPCGIterations(t *testing.T) {
	for _, name := range []string{"gr_30_30", "nos6"} {
		a := readMM(t, name)
		rows := allRows(a.Rows)
		jac, _, err := Adaptive(a, rows, Params{})
		if err != nil {
			t.Fatal(err)
		}
		g, _, err := Adaptive(a, rows, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		g32, _, err := Adaptive(csr.Convert[float32](a), rows, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		itJ, itG, itG32 := serialPCG(a, jac, 5000), serialPCG(a, g, 5000), serialPCG(a, csr.Convert[float64](g32), 5000)
		t.Logf("%s: Jacobi %d, aFSAI %d (float32 set-up %d) iterations, nnz(G)/nnz(Low(A)) %.2f",
			name, itJ, itG, itG32, float64(g.NNZ())/float64(lowerNNZ(a)))
		if itJ < 0 || itG < 0 || itG32 < 0 || 3*itG > 2*itJ || 3*itG32 > 2*itJ {
			t.Errorf("%s: Jacobi %d, aFSAI %d, float32 aFSAI %d iterations: want at most 2/3 of Jacobi's",
				name, itJ, itG, itG32)
		}
	}
}
