package backendtest

import (
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
)

// srKernels are single-reduction CG's fused steps a backend may offer
// beside the interface (pcg.SingleFused); the suite checks them where a
// backend has them.
type srKernels interface {
	UpdateSRCols(x, r, p, s, u, w, d backend.Vector, a, b []float64, sum backend.Sum)
	DotsSRCols(r, u backend.Vector, k int, sum backend.Sum)
}

// singleFused returns the backend's single-reduction steps, or skips the
// test.
func (s *suite) singleFused() srKernels {
	f, ok := s.b.(srKernels)
	if !ok {
		s.t.Skip("the backend has no single-reduction CG steps")
	}
	return f
}

// newSum returns n sums at zero, freed at the subtest's end.
func (s *suite) newSum(n int) backend.Sum {
	s.t.Helper()
	sum, err := s.b.NewSum(n)
	if err != nil {
		s.t.Fatalf("NewSum(%d): %v", n, err)
	}
	s.t.Cleanup(sum.Free)
	return sum
}

// testUpdateSRCols: p[:,c] = u[:,c] + b[c]*p[:,c] and s[:,c] = w[:,c] +
// b[c]*s[:,c] (p and s hold NaN where b[c] == 0: not read), x[:,c] +=
// a[c]*p[:,c], r[:,c] -= a[c]*s[:,c]; with a diagonal d, u = d .* r and
// the sums k+c and 2k+c gather r'u and r'r, the first k sums left at zero;
// without d, u and the sums are untouched.
func (s *suite) testUpdateSRCols() {
	f := s.singleFused()
	for _, sh := range shapes {
		for _, diagonal := range []bool{true, false} {
			n, k := sh.rows, sh.k
			a, b := s.scalars(k, false), s.scalars(k, true)
			xs, rs, ps, ss, us, ws, ds := s.random(n*k), s.random(n*k), s.random(n*k), s.random(n*k), s.random(n*k), s.random(n*k), s.random(n)
			for i := range ps {
				if b[i%k] == 0 {
					ps[i], ss[i] = math.NaN(), math.NaN()
				}
			}
			for i := range ds {
				ds[i] = math.Abs(ds[i])
			}
			x, r, p, sv, u, w := s.vector(xs), s.vector(rs), s.vector(ps), s.vector(ss), s.vector(us), s.vector(ws)
			var d backend.Vector
			if diagonal {
				d = s.vector(ds)
			}
			sum := s.newSum(3 * k)
			f.UpdateSRCols(x, r, p, sv, u, w, d, a, b, sum)
			sums := s.takeSum(sum, 3*k)

			want := newSRWant(n, k)
			for i := range xs {
				c := i % k
				pv, pScale := axpby(1, us[i], b[c], ps[i])
				sv, sScale := axpby(1, ws[i], b[c], ss[i])
				want.p[i], want.scaleP[i] = pv, pScale
				want.s[i], want.scaleS[i] = sv, sScale
				// x and r take p and s as computed: their rounding counts
				want.x[i], want.scaleX[i] = axpby(a[c], pv, 1, xs[i])
				want.scaleX[i] += math.Abs(a[c]) * pScale
				want.r[i], want.scaleR[i] = axpby(-a[c], sv, 1, rs[i])
				want.scaleR[i] += math.Abs(a[c]) * sScale
				want.u[i] = us[i]
				if diagonal {
					want.add(i, k, ds[i/k])
				}
			}
			what := name("%dx%d, diagonal %v", n, k, diagonal)
			s.near(what+": p", s.host(p), want.p, want.scaleP, 3)
			s.near(what+": s", s.host(sv), want.s, want.scaleS, 3)
			s.near(what+": x", s.host(x), want.x, want.scaleX, 6)
			s.near(what+": r", s.host(r), want.r, want.scaleR, 6)
			s.near(what+": u", s.host(u), want.u, want.scaleU, 8)
			s.exact(what+": the product's sums", sums[:k], make([]float64, k))
			s.near(what+": r'u and r'r", sums[k:], want.sums, want.scaleSums, n+8)
		}
	}
}

// srWant are the expected results of UpdateSRCols, with the scales of
// near.
type srWant struct {
	x, r, p, s, u, sums                               []float64
	scaleX, scaleR, scaleP, scaleS, scaleU, scaleSums []float64
}

func newSRWant(n, k int) *srWant {
	v := func(m int) []float64 { return make([]float64, m) }
	return &srWant{x: v(n * k), r: v(n * k), p: v(n * k), s: v(n * k), u: v(n * k), sums: v(2 * k),
		scaleX: v(n * k), scaleR: v(n * k), scaleP: v(n * k), scaleS: v(n * k), scaleU: v(n * k), scaleSums: v(2 * k)}
}

// add sets entry i's u = d*r and adds its r'u and r'r to the sums, with r
// as expected: its rounding error (scaleR) carries into each.
func (w *srWant) add(i, k int, d float64) {
	c, r, e := i%k, w.r[i], w.scaleR[i]
	w.u[i], w.scaleU[i] = d*r, d*(math.Abs(r)+e)
	w.sums[c] += d * r * r
	w.scaleSums[c] += d * (r*r + 2*math.Abs(r)*e)
	w.sums[k+c] += r * r
	w.scaleSums[k+c] += r*r + 2*math.Abs(r)*e
}

// testDotsSRCols: sums k+c and 2k+c gather r'u and r'r, the first k left
// at zero; a second call adds the same bits again.
func (s *suite) testDotsSRCols() {
	f := s.singleFused()
	for _, sh := range shapes {
		n, k := sh.rows, sh.k
		rs, us := s.random(n*k), s.random(n*k)
		r, u := s.vector(rs), s.vector(us)
		sum := s.newSum(3 * k)
		f.DotsSRCols(r, u, k, sum)
		first := s.takeSum(sum, 3*k)
		want, scale := make([]float64, 2*k), make([]float64, 2*k)
		for i := range rs {
			c := i % k
			want[c] += rs[i] * us[i]
			scale[c] += math.Abs(rs[i] * us[i])
			want[k+c] += rs[i] * rs[i]
			scale[k+c] += rs[i] * rs[i]
		}
		what := name("%dx%d", n, k)
		s.exact(what+": the product's sums", first[:k], make([]float64, k))
		s.near(what+": r'u and r'r", first[k:], want, scale, n+2)
		for range 2 {
			f.DotsSRCols(r, u, k, sum)
		}
		twice := slices.Clone(first)
		for c := range twice {
			twice[c] *= 2
		}
		s.exact(what+": two calls' sums", s.takeSum(sum, 3*k), twice)
	}
}
