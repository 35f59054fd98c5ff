package backendtest

import (
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
)

// testDotCols: out[c] = x[:,c]'y[:,c], the same bits on a repeat.
func (s *suite) testDotCols() {
	for _, sh := range shapes {
		n, k := sh.rows, sh.k
		xs, ys := s.random(n*k), s.random(n*k)
		x, y := s.vector(xs), s.vector(ys)
		got := make([]float64, k)
		s.b.DotCols(x, y, got)
		want, scale := dotCols(xs, ys, k)
		what := name("%dx%d", n, k)
		s.near(what, got, want, scale, n)
		again := make([]float64, k)
		s.b.DotCols(x, y, again)
		s.exact(what+": repeated", again, got)
	}
}

// dotCols returns the dot products of the columns of two n x k blocks and
// the sums of their terms' magnitudes.
func dotCols(x, y []float64, k int) (dots, scale []float64) {
	dots, scale = make([]float64, k), make([]float64, k)
	for i := range x {
		dots[i%k] += x[i] * y[i]
		scale[i%k] += math.Abs(x[i] * y[i])
	}
	return dots, scale
}

// testDotMany: out[c] = v_c'w for the vectors v_c of w's length that
// follow one another in v, which may hold more (a basis not yet full); the
// same bits on a repeat.
func (s *suite) testDotMany() {
	for _, sh := range shapes {
		n, k := sh.rows, sh.k
		vs, ws := s.random(n*(k+1)), s.random(n)
		v, w := s.vector(vs), s.vector(ws)
		got, again := make([]float64, k), make([]float64, k)
		s.b.DotMany(v, w, got)
		s.b.DotMany(v, w, again)
		want, scale := make([]float64, k), make([]float64, k)
		for c := range k {
			for i, x := range ws {
				want[c] += vs[c*n+i] * x
				scale[c] += math.Abs(vs[c*n+i] * x)
			}
		}
		what := name("%d vectors of %d", k, n)
		s.near(what, got, want, scale, n)
		// repeated, the same bits; against DotCols only within the sums'
		// rounding (near, above): the contract fixes no order of summation
		s.exact(what+": repeated", again, got)
	}
}

// testAxpyMany: w += sum_c a[c]*v_c over the vectors v_c of w's length
// that follow one another in v, which may hold more (left out), within the
// sums' rounding, v unchanged; also several vectors over many rows, which
// a backend may split into tiles.
func (s *suite) testAxpyMany() {
	for _, sh := range append(shapes[:len(shapes):len(shapes)], struct{ rows, k int }{bigRows, 6}) {
		n, k := sh.rows, sh.k
		a, vs, ws := s.random(k), s.random(n*(k+1)), s.random(n)
		v, w := s.vector(vs), s.vector(ws)
		s.b.AxpyMany(w, v, a)
		want, scale := axpyMany(ws, vs, a)
		what := name("%d vectors of %d", k, n)
		s.near(what, s.host(w), want, scale, k+1)
		s.exact(what+": v", s.host(v), vs)
	}
}

// axpyMany returns w + sum_c a[c]*v_c for the vectors v_c of w's length
// in v, and the sums of its terms' magnitudes.
func axpyMany(w, v, a []float64) (want, scale []float64) {
	n := len(w)
	want, scale = make([]float64, n), make([]float64, n)
	for i, x := range w {
		want[i], scale[i] = x, math.Abs(x)
		for c, ac := range a {
			want[i] += ac * v[c*n+i]
			scale[i] += math.Abs(ac * v[c*n+i])
		}
	}
	return want, scale
}

// testAxpyDotMany: w += sum_c a[c]*v_c, then out[c] = v_c'w and out[k] =
// w'w with the updated w, for the vectors v_c of w's length that follow
// one another in v, which may hold more (left out), v unchanged; also more
// vectors than one GPU launch holds (40), over many rows.
func (s *suite) testAxpyDotMany() {
	for _, sh := range append(shapes[:len(shapes):len(shapes)], struct{ rows, k int }{bigRows, 6}, struct{ rows, k int }{1000, 40}) {
		n, k := sh.rows, sh.k
		a, vs, ws := s.random(k), s.random(n*(k+1)), s.random(n)
		v, w := s.vector(vs), s.vector(ws)
		out := make([]float64, k+1)
		s.b.AxpyDotMany(w, v, a, out)
		wantW, scaleW := axpyMany(ws, vs, a)
		// the dots take w as the backend updated it (within its
		// rounding, which each term carries as |v_c[i]| times that)
		want, scale := make([]float64, k+1), make([]float64, k+1)
		for i, x := range wantW {
			for c := range k {
				want[c] += vs[c*n+i] * x
				scale[c] += math.Abs(vs[c*n+i]) * (math.Abs(x) + float64(k+1)*scaleW[i])
			}
			want[k] += x * x
			scale[k] += math.Abs(x) * (math.Abs(x) + 2*float64(k+1)*scaleW[i])
		}
		what := name("%d vectors of %d", k, n)
		s.near(what+": w", s.host(w), wantW, scaleW, k+1)
		s.near(what+": dots", out, want, scale, n)
		s.exact(what+": v", s.host(v), vs)
	}
}

// testDotPairCols: xy[c] = x[:,c]'y[:,c] and xz[c] = x[:,c]'z[:,c].
func (s *suite) testDotPairCols() {
	for _, sh := range shapes {
		n, k := sh.rows, sh.k
		xs, ys, zs := s.random(n*k), s.random(n*k), s.random(n*k)
		x, y, z := s.vector(xs), s.vector(ys), s.vector(zs)
		xy, xz := make([]float64, k), make([]float64, k)
		s.b.DotPairCols(x, y, z, xy, xz)
		wantY, scaleY := dotCols(xs, ys, k)
		wantZ, scaleZ := dotCols(xs, zs, k)
		s.near(name("%dx%d: x'y", n, k), xy, wantY, scaleY, n)
		s.near(name("%dx%d: x'z", n, k), xz, wantZ, scaleZ, n)
	}
}

// scalars returns k random scalars, one per column, with b[c] = 0 in
// column 1 (where the old y, NaN then, must not be read) when zero is set.
func (s *suite) scalars(k int, zero bool) []float64 {
	v := s.random(k)
	if zero && k > 1 {
		v[1] = 0
	}
	return v
}

// testAxpbyCols: y[:,c] = a[c]*x[:,c] + b[c]*y[:,c], not reading y[:,c]
// where b[c] = 0.
func (s *suite) testAxpbyCols() {
	for _, sh := range shapes {
		n, k := sh.rows, sh.k
		a, b := s.scalars(k, false), s.scalars(k, true)
		xs, ys := s.random(n*k), s.random(n*k)
		for i := range ys {
			if b[i%k] == 0 {
				ys[i] = math.NaN()
			}
		}
		x, y := s.vector(xs), s.vector(ys)
		s.b.AxpbyCols(y, a, x, b)
		want, scale := make([]float64, n*k), make([]float64, n*k)
		for i := range want {
			want[i], scale[i] = axpby(a[i%k], xs[i], b[i%k], ys[i])
		}
		s.near(name("%dx%d", n, k), s.host(y), want, scale, 2)
	}
}

// testMulCols: z[i,c] = d[i]*r[i,c] exactly.
func (s *suite) testMulCols() {
	for _, sh := range shapes {
		n, k := sh.rows, sh.k
		ds, rs := s.random(n), s.random(n*k)
		d, r, z := s.vector(ds), s.vector(rs), s.vector(s.random(n*k))
		s.b.MulCols(z, d, r, k)
		want := make([]float64, n*k)
		for i := range want {
			want[i] = ds[i/k] * rs[i]
		}
		s.exact(name("%dx%d", n, k), s.host(z), want)
	}
}

// cgKernels are the fused CG steps a backend may offer beside the
// interface (pcg.Fused, which PCG asks for); the suite checks them where a
// backend has them, so that one suite serves every kernel a backend holds.
type cgKernels interface {
	UpdateRZCols(r backend.Vector, a []float64, q, d backend.Vector, rr, rz []float64)
	UpdateXPCols(x backend.Vector, a []float64, p, d, r backend.Vector, b []float64)
}

// fused returns the backend's fused CG steps, or skips the test.
func (s *suite) fused() cgKernels {
	f, ok := s.b.(cgKernels)
	if !ok {
		s.t.Skip("the backend has no fused CG steps")
	}
	return f
}

// testUpdateRZCols: r[:,c] -= a[c]*q[:,c], then rr[c] = r[:,c]'r[:,c] and
// rz[c] = r[:,c]'(d .* r[:,c]).
func (s *suite) testUpdateRZCols() {
	f := s.fused()
	for _, sh := range shapes {
		n, k := sh.rows, sh.k
		a := s.scalars(k, false)
		rs, qs, ds := s.random(n*k), s.random(n*k), s.random(n)
		for i := range ds {
			ds[i] = math.Abs(ds[i]) // a Jacobi preconditioner is positive
		}
		r, q, d := s.vector(rs), s.vector(qs), s.vector(ds)
		rr, rz := make([]float64, k), make([]float64, k)
		f.UpdateRZCols(r, a, q, d, rr, rz)
		wantR, scaleR := make([]float64, n*k), make([]float64, n*k)
		wantRR, wantRZ := make([]float64, k), make([]float64, k)
		// r's entries may be off by a rounding of their terms (a fused
		// update), which a square carries as 2|r| times that: the sums'
		// scale counts it beside their (positive) terms
		scaleRR, scaleRZ := make([]float64, k), make([]float64, k)
		for i := range wantR {
			c, d := i%k, ds[i/k]
			wantR[i], scaleR[i] = axpby(-a[c], qs[i], 1, rs[i])
			sq, sqScale := wantR[i]*wantR[i], wantR[i]*wantR[i]+2*math.Abs(wantR[i])*scaleR[i]
			wantRR[c] += sq
			wantRZ[c] += d * sq
			scaleRR[c] += sqScale
			scaleRZ[c] += d * sqScale
		}
		what := name("%dx%d", n, k)
		s.near(what+": r", s.host(r), wantR, scaleR, 2)
		s.near(what+": rr", rr, wantRR, scaleRR, n+2)
		s.near(what+": rz", rz, wantRZ, scaleRZ, n+2)
	}
}

// testUpdateXPCols: x[:,c] += a[c]*p[:,c], then p[:,c] = z[:,c] +
// b[c]*p[:,c] with z = d .* r, or z = r without d.
func (s *suite) testUpdateXPCols() {
	f := s.fused()
	for _, sh := range shapes {
		for _, diagonal := range []bool{true, false} {
			n, k := sh.rows, sh.k
			a, b := s.scalars(k, false), s.scalars(k, true)
			xs, ps, rs, ds := s.random(n*k), s.random(n*k), s.random(n*k), s.random(n)
			x, p, r := s.vector(xs), s.vector(ps), s.vector(rs)
			var d backend.Vector
			if diagonal {
				d = s.vector(ds)
			}
			f.UpdateXPCols(x, a, p, d, r, b)
			wantX, scaleX := make([]float64, n*k), make([]float64, n*k)
			wantP, scaleP := make([]float64, n*k), make([]float64, n*k)
			for i := range wantX {
				c, z := i%k, rs[i]
				if diagonal {
					z *= ds[i/k]
				}
				wantX[i], scaleX[i] = axpby(a[c], ps[i], 1, xs[i])
				wantP[i], scaleP[i] = axpby(1, z, b[c], ps[i])
			}
			what := name("%dx%d, diagonal %v", n, k, diagonal)
			s.near(what+": x", s.host(x), wantX, scaleX, 2)
			s.near(what+": p", s.host(p), wantP, scaleP, 3)
		}
	}
}
