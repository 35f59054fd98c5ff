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
	if k == 1 {
		v.update1(a[0], beta[0], lo, hi, dots)
		return
	}
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

// update1 is update for one column, its slices cut to the range so that
// the loop runs without bounds checks.
func (v srVectors) update1(ac, bc float64, lo, hi int, dots []float64) {
	x := v.x[lo:hi]
	r, p, s, u, w := v.r[lo:hi][:len(x)], v.p[lo:hi][:len(x)], v.s[lo:hi][:len(x)], v.u[lo:hi][:len(x)], v.w[lo:hi][:len(x)]
	var d []float64
	if v.d != nil {
		d = v.d[lo:hi][:len(x)]
	}
	var ru, rr float64
	for i := range x {
		p0, s0 := u[i], w[i]
		if bc != 0 {
			p0 += bc * p[i]
			s0 += bc * s[i]
		}
		p[i], s[i] = p0, s0
		x[i] += ac * p0
		r0 := r[i] - ac*s0
		r[i] = r0
		if d != nil {
			u0 := d[i] * r0
			u[i] = u0
			ru += r0 * u0
			rr += r0 * r0
		}
	}
	if d != nil {
		dots[0], dots[1] = dots[0]+ru, dots[1]+rr
	}
}
