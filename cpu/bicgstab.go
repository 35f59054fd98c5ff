package cpu

import "github.com/fsai-dist/fsai-dist/backend"

// BiCGSTAB's fused updates (bicgstab.Fused): one pass each over their
// vectors, split over the goroutines; sums in range order, like Dot.

// BiCGSTABDirection sets p = r + beta*(p - omega*v), or p = r where beta
// is 0 (p and v not read), and ph = d .* p where d is not nil.
func (b *Backend) BiCGSTABDirection(p, r, v backend.Vector, beta, omega float64, d, ph backend.Vector) {
	pv, rv, vv := p.(Vector), r.(Vector), v.(Vector)
	var dv, hv Vector
	if d != nil {
		dv, hv = d.(Vector), ph.(Vector)
	}
	b.parallel(len(pv), func(_, lo, hi int) {
		p := pv[lo:hi]
		r := rv[lo:hi][:len(p)]
		var v, d, h []float64
		if beta != 0 {
			v = vv[lo:hi][:len(p)]
		}
		if dv != nil {
			d, h = dv[lo:hi][:len(p)], hv[lo:hi][:len(p)]
		}
		switch {
		case beta == 0 && d == nil:
			copy(p, r)
		case beta == 0:
			for i, y := range r {
				p[i], h[i] = y, d[i]*y
			}
		case d == nil:
			for i, x := range p {
				p[i] = r[i] + beta*(x-omega*v[i])
			}
		default:
			for i, x := range p {
				y := r[i] + beta*(x-omega*v[i])
				p[i], h[i] = y, d[i]*y
			}
		}
	})
}

// BiCGSTABHalf sets s = r - alpha*v, and sh = d .* s where d is not nil,
// and returns s's.
func (b *Backend) BiCGSTABHalf(s, r, v backend.Vector, alpha float64, d, sh backend.Vector) float64 {
	sv, rv, vv := s.(Vector), r.(Vector), v.(Vector)
	var dv, hv Vector
	if d != nil {
		dv, hv = d.(Vector), sh.(Vector)
	}
	return b.sum(len(sv), func(lo, hi int) float64 {
		s := sv[lo:hi]
		r, v := rv[lo:hi][:len(s)], vv[lo:hi][:len(s)]
		var ss float64
		if dv == nil {
			for i := range s {
				x := r[i] - alpha*v[i]
				s[i] = x
				ss += x * x
			}
			return ss
		}
		d, h := dv[lo:hi][:len(s)], hv[lo:hi][:len(s)]
		for i := range s {
			x := r[i] - alpha*v[i]
			s[i], h[i] = x, d[i]*x
			ss += x * x
		}
		return ss
	})
}

// BiCGSTABStep sets x += alpha*ph + omega*sh and r = s - omega*t, and
// returns r'r and r'rhat of the new r.
func (b *Backend) BiCGSTABStep(x, ph, sh backend.Vector, alpha, omega float64, r, s, t, rhat backend.Vector) (rr, rrhat float64) {
	xv, pv, hv := x.(Vector), ph.(Vector), sh.(Vector)
	rv, sv, tv, qv := r.(Vector), s.(Vector), t.(Vector), rhat.(Vector)
	sums := make([]float64, 2)
	b.sumRows(len(xv), sums, func(lo, hi int, out []float64) {
		x := xv[lo:hi]
		p, h := pv[lo:hi][:len(x)], hv[lo:hi][:len(x)]
		r := rv[lo:hi][:len(x)]
		s, t, q := sv[lo:hi][:len(x)], tv[lo:hi][:len(x)], qv[lo:hi][:len(x)]
		var sr, sq float64
		for i := range x {
			x[i] += alpha*p[i] + omega*h[i]
			y := s[i] - omega*t[i]
			r[i] = y
			sr += y * y
			sq += y * q[i]
		}
		out[0], out[1] = sr, sq
	})
	return sums[0], sums[1]
}
