package cpu

import "github.com/fsai-dist/fsai-dist/backend"

// UpdateSRCols is single-reduction CG's vector update (pcg.SingleFused):
// p[:,c] = u[:,c] + b[c]*p[:,c], s[:,c] = w[:,c] + b[c]*s[:,c] (p and s
// not read where b[c] == 0), x[:,c] += a[c]*p[:,c], r[:,c] -= a[c]*s[:,c];
// with d not nil also u = d .* r, adding the r'u and r'r of column c to
// sums k+c and 2k+c of sum, summed in range order like DotPairCols.
func (b *Backend) UpdateSRCols(x, r, p, s, u, w, d backend.Vector, a, beta []float64, sum backend.Sum) {
	k := len(a)
	v := srVectors{x.(Vector), r.(Vector), p.(Vector), s.(Vector), u.(Vector), w.(Vector), nil}
	rows := len(v.x) / k
	if d == nil {
		b.parallel(rows, func(_, lo, hi int) { v.update(a, beta, lo, hi, nil) })
		return
	}
	v.d = d.(Vector)
	dots := make([]float64, 2*k) // r'u then r'r
	b.sumRows(rows, dots, func(lo, hi int, part []float64) { v.update(a, beta, lo, hi, part) })
	sv := sum.(*Sum).v
	for c, t := range dots {
		sv[k+c] += t
	}
}

// DotsSRCols adds the r'u and r'r of column c to sums k+c and 2k+c of sum
// (pcg.SingleFused), computed as DotPairCols computes them.
func (b *Backend) DotsSRCols(r, u backend.Vector, k int, sum backend.Sum) {
	dots := make([]float64, 2*k)
	b.DotPairCols(r, u, r, dots[:k], dots[k:])
	sv := sum.(*Sum).v
	for c, t := range dots {
		sv[k+c] += t
	}
}

// srVectors are UpdateSRCols's blocks; d is nil for no preconditioner.
type srVectors struct{ x, r, p, s, u, w, d Vector }

// update is UpdateSRCols on rows [lo, hi), adding r'u and r'r of column c
// to dots[c] and dots[k+c] when d is set.
func (v srVectors) update(a, beta []float64, lo, hi int, dots []float64) {
	k := len(a)
	for i := lo; i < hi; i++ {
		for c, ac := range a {
			e := i*k + c
			p0, s0 := v.u[e], v.w[e]
			if bc := beta[c]; bc != 0 {
				p0 += bc * v.p[e]
				s0 += bc * v.s[e]
			}
			v.p[e], v.s[e] = p0, s0
			v.x[e] += ac * p0
			r0 := v.r[e] - ac*s0
			v.r[e] = r0
			if v.d != nil {
				u0 := v.d[i] * r0
				v.u[e] = u0
				dots[c] += r0 * u0
				dots[k+c] += r0 * r0
			}
		}
	}
}
