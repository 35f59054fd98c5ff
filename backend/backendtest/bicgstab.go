package backendtest

import (
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
)

// bicgstabKernels are BiCGSTAB's fused updates a backend may offer beside
// the interface (bicgstab.Fused, which BiCGSTAB asks for); the suite checks
// them where a backend has them.
type bicgstabKernels interface {
	BiCGSTABDirection(p, r, v backend.Vector, beta, omega float64, d, ph backend.Vector)
	BiCGSTABHalf(s, r, v backend.Vector, alpha float64, d, sh backend.Vector) float64
	BiCGSTABStep(x, ph, sh backend.Vector, alpha, omega float64, r, s, t, rhat backend.Vector) (rr, rrhat float64)
}

// bicgstab returns the backend's fused BiCGSTAB updates, or skips the test.
func (s *suite) bicgstab() bicgstabKernels {
	f, ok := s.b.(bicgstabKernels)
	if !ok {
		s.t.Skip("the backend has no fused BiCGSTAB updates")
	}
	return f
}

// diagonalOut returns, where diagonal is set, a positive diagonal d of n
// entries and its output vector (NaN before the call), with d's host
// values; nils otherwise.
func (s *suite) diagonalOut(n int, diagonal bool) (d, out backend.Vector, ds []float64) {
	if !diagonal {
		return nil, nil, nil
	}
	ds = s.random(n)
	for i := range ds {
		ds[i] = math.Abs(ds[i])
	}
	return s.vector(ds), s.vector(nans(n)), ds
}

// checkScaled checks out = d .* y exactly, for the y the backend computed.
func (s *suite) checkScaled(what string, out backend.Vector, ds, y []float64) {
	s.t.Helper()
	want := make([]float64, len(y))
	for i := range want {
		want[i] = ds[i] * y[i]
	}
	s.exact(what, s.host(out), want)
}

// testBiCGSTABDirection: p = r + beta*(p - omega*v), or p = r with beta 0
// (p and v, NaN then, not read), and ph = d .* p with a diagonal.
func (s *suite) testBiCGSTABDirection() {
	f := s.bicgstab()
	for _, n := range lengths {
		for _, beta := range []float64{0, 0.75} {
			for _, diagonal := range []bool{false, true} {
				omega := -1.5
				ps, rs, vs := s.random(n), s.random(n), s.random(n)
				if beta == 0 {
					ps, vs = nans(n), nans(n)
				}
				p, r, v := s.vector(ps), s.vector(rs), s.vector(vs)
				d, ph, ds := s.diagonalOut(n, diagonal)
				f.BiCGSTABDirection(p, r, v, beta, omega, d, ph)
				want, scale := make([]float64, n), make([]float64, n)
				for i := range want {
					if beta == 0 {
						want[i], scale[i] = rs[i], math.Abs(rs[i])
						continue
					}
					want[i] = rs[i] + beta*(ps[i]-omega*vs[i])
					scale[i] = math.Abs(rs[i]) + math.Abs(beta)*(math.Abs(ps[i])+math.Abs(omega*vs[i]))
				}
				what := name("n %d, beta %g, diagonal %v", n, beta, diagonal)
				got := s.host(p)
				s.near(what+": p", got, want, scale, 4)
				if diagonal {
					s.checkScaled(what+": ph", ph, ds, got)
				}
			}
		}
	}
}

// testBiCGSTABHalf: s = r - alpha*v with s's, and sh = d .* s with a
// diagonal.
func (s *suite) testBiCGSTABHalf() {
	f := s.bicgstab()
	for _, n := range lengths {
		for _, diagonal := range []bool{false, true} {
			alpha := 0.625
			rs, vs := s.random(n), s.random(n)
			sv, r, v := s.vector(nans(n)), s.vector(rs), s.vector(vs)
			d, sh, ds := s.diagonalOut(n, diagonal)
			ss := f.BiCGSTABHalf(sv, r, v, alpha, d, sh)
			want, scale := make([]float64, n), make([]float64, n)
			var wantSS, scaleSS float64
			for i := range want {
				want[i], scale[i] = axpby(-alpha, vs[i], 1, rs[i])
				wantSS += want[i] * want[i]
				scaleSS += want[i]*want[i] + 2*math.Abs(want[i])*scale[i]
			}
			what := name("n %d, diagonal %v", n, diagonal)
			got := s.host(sv)
			s.near(what+": s", got, want, scale, 2)
			s.near(what+": s's", []float64{ss}, []float64{wantSS}, []float64{scaleSS}, n+2)
			if diagonal {
				s.checkScaled(what+": sh", sh, ds, got)
			}
		}
	}
}

// testBiCGSTABStep: x += alpha*ph + omega*sh, r = s - omega*t (r's old
// values, NaN, not read), with r'r and r'rhat of the new r.
func (s *suite) testBiCGSTABStep() {
	f := s.bicgstab()
	for _, n := range lengths {
		alpha, omega := -0.375, 1.25
		xs, ps, hs, ss, ts, qs := s.random(n), s.random(n), s.random(n), s.random(n), s.random(n), s.random(n)
		x, ph, sh, r := s.vector(xs), s.vector(ps), s.vector(hs), s.vector(nans(n))
		sv, t, rhat := s.vector(ss), s.vector(ts), s.vector(qs)
		rr, rq := f.BiCGSTABStep(x, ph, sh, alpha, omega, r, sv, t, rhat)
		wantX, scaleX := make([]float64, n), make([]float64, n)
		wantR, scaleR := make([]float64, n), make([]float64, n)
		var wantRR, wantRQ, scaleRR, scaleRQ float64
		for i := range wantX {
			wantX[i] = xs[i] + alpha*ps[i] + omega*hs[i]
			scaleX[i] = math.Abs(xs[i]) + math.Abs(alpha*ps[i]) + math.Abs(omega*hs[i])
			wantR[i], scaleR[i] = axpby(-omega, ts[i], 1, ss[i])
			wantRR += wantR[i] * wantR[i]
			scaleRR += wantR[i]*wantR[i] + 2*math.Abs(wantR[i])*scaleR[i]
			wantRQ += wantR[i] * qs[i]
			scaleRQ += math.Abs(qs[i]) * (math.Abs(wantR[i]) + scaleR[i])
		}
		what := name("n %d", n)
		s.near(what+": x", s.host(x), wantX, scaleX, 3)
		s.near(what+": r", s.host(r), wantR, scaleR, 2)
		s.near(what+": r'r", []float64{rr}, []float64{wantRR}, []float64{scaleRR}, n+2)
		s.near(what+": r'rhat", []float64{rq}, []float64{wantRQ}, []float64{scaleRQ}, n+2)
	}
}
