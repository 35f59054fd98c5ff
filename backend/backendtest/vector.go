package backendtest

import (
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
)

// testDescribe: Name and Device say something.
func (s *suite) testDescribe() {
	if s.b.Name() == "" || s.b.Device() == "" {
		s.t.Errorf("Name %q, Device %q: both should describe the backend", s.b.Name(), s.b.Device())
	}
}

// testTransfers: Download returns what Upload copied, bit for bit, NaN and
// signed zero included; a later Upload replaces it.
func (s *suite) testTransfers() {
	for _, n := range lengths {
		want := s.random(n)
		if n > 2 {
			want[0], want[1] = math.NaN(), math.Copysign(0, -1)
		}
		v := s.vector(want)
		s.exact(name("n=%d", n), s.host(v), want)
		again := s.random(n)
		s.b.Upload(v, again)
		s.exact(name("n=%d, second upload", n), s.host(v), again)
	}
}

// testPin: pinned host memory uploads and downloads like any other, and
// unpin may be called; an empty slice pins too. One buffer is pinned and
// cut in two, as a GPU, which pins whole pages, needs.
func (s *suite) testPin() {
	for _, n := range lengths {
		buf := append(s.random(n), make([]float64, n)...)
		unpin, err := s.b.Pin(buf)
		if err != nil {
			s.t.Fatalf("Pin(%d): %v", 2*n, err)
		}
		src, dst := buf[:n], buf[n:]
		v := s.vector(make([]float64, n))
		s.b.Upload(v, src)
		if err := s.b.Download(dst, v); err != nil {
			s.t.Fatalf("Download: %v", err)
		}
		unpin()
		s.exact(name("n=%d", n), dst, src)
	}
}

// testSlice: a view shares its parent's memory: uploads, kernels and
// downloads through it touch exactly its entries, and a view of a view
// adds the offsets.
func (s *suite) testSlice() {
	const n = 100
	for _, c := range []struct{ off, len int }{{0, 0}, {0, n}, {0, 1}, {n - 1, 1}, {n, 0}, {3, 41}, {57, 43}} {
		parent := s.random(n)
		p := s.vector(parent)
		v := p.Slice(c.off, c.len)
		if v.Len() != c.len {
			s.t.Errorf("Slice(%d, %d).Len() = %d", c.off, c.len, v.Len())
		}
		s.exact(name("Slice(%d, %d): download", c.off, c.len), s.host(v), parent[c.off:c.off+c.len])

		vals := s.random(c.len)
		s.b.Upload(v, vals)
		copy(parent[c.off:], vals)
		s.exact(name("Slice(%d, %d): upload", c.off, c.len), s.host(p), parent)

		s.b.Fill(v, 0.5)
		for i := c.off; i < c.off+c.len; i++ {
			parent[i] = 0.5
		}
		s.exact(name("Slice(%d, %d): Fill", c.off, c.len), s.host(p), parent)

		// a view of a view: entries [off+1, off+1+len-2) of the parent
		if c.len >= 2 {
			w := v.Slice(1, c.len-2)
			backend.Mul(s.b, w, w, w)
			for i := c.off + 1; i < c.off+c.len-1; i++ {
				parent[i] *= parent[i]
			}
			s.exact(name("Slice(%d, %d).Slice(1, %d): Mul", c.off, c.len, c.len-2), s.host(p), parent)
		}
	}
}

// testFill: every entry takes the value's bits.
func (s *suite) testFill() {
	for _, n := range lengths {
		for _, v := range []float64{0, -1.25, math.Pi} {
			x := s.vector(s.random(n))
			s.b.Fill(x, v)
			want := make([]float64, n)
			for i := range want {
				want[i] = v
			}
			s.exact(name("n=%d, Fill(%g)", n, v), s.host(x), want)
		}
	}
}

// testCopy: dst takes src's bits; src is unchanged.
func (s *suite) testCopy() {
	for _, n := range lengths {
		src := s.random(n)
		x, y := s.vector(src), s.vector(s.random(n))
		s.b.Copy(y, x)
		s.exact(name("n=%d: dst", n), s.host(y), src)
		s.exact(name("n=%d: src", n), s.host(x), src)
	}
}

// testAxpby: backend.Axpby (AxpbyCols of one column) on vectors of every
// length: y = a*x + b*y; with b == 0 the old y (NaN here) is not read.
func (s *suite) testAxpby() {
	for _, n := range lengths {
		for _, c := range []struct{ a, b float64 }{{1.5, -0.75}, {-2, 1}, {0.3, 0}, {0, 2}} {
			xs, ys := s.random(n), s.random(n)
			if c.b == 0 {
				ys = nans(n)
			}
			x, y := s.vector(xs), s.vector(ys)
			backend.Axpby(s.b, y, c.a, x, c.b)
			want, scale := make([]float64, n), make([]float64, n)
			for i := range want {
				want[i], scale[i] = axpby(c.a, xs[i], c.b, ys[i])
			}
			s.near(name("n=%d, a=%g, b=%g", n, c.a, c.b), s.host(y), want, scale, 2)
		}
	}
}

// axpby returns a*x + b*y, not reading y when b == 0, and the magnitude
// of its terms.
func axpby(a, x, b, y float64) (v, scale float64) {
	if b == 0 {
		return a * x, math.Abs(a * x)
	}
	return a*x + b*y, math.Abs(a*x) + math.Abs(b*y)
}

// testMul: backend.Mul (MulCols of one column) on vectors of every length:
// z = d .* r, one rounding each: exact; z may be r itself.
func (s *suite) testMul() {
	for _, n := range lengths {
		ds, rs := s.random(n), s.random(n)
		d, r, z := s.vector(ds), s.vector(rs), s.vector(s.random(n))
		backend.Mul(s.b, z, d, r)
		want := make([]float64, n)
		for i := range want {
			want[i] = ds[i] * rs[i]
		}
		s.exact(name("n=%d", n), s.host(z), want)
		backend.Mul(s.b, r, d, r)
		s.exact(name("n=%d, in place", n), s.host(r), want)
	}
}

// testDot: backend.Dot (DotCols of one column) on vectors of every length:
// x'y over the entries, in any order, the same bits every time (a run must
// repeat); x'x through the same vector.
func (s *suite) testDot() {
	for _, n := range lengths {
		xs, ys := s.random(n), s.random(n)
		x, y := s.vector(xs), s.vector(ys)
		want, scale := dot(xs, ys)
		got := []float64{backend.Dot(s.b, x, y)}
		s.near(name("n=%d", n), got, []float64{want}, []float64{scale}, n)
		s.exact(name("n=%d, again", n), []float64{backend.Dot(s.b, x, y)}, got)
		want, scale = dot(xs, xs)
		s.near(name("n=%d, x'x", n), []float64{backend.Dot(s.b, x, x)}, []float64{want}, []float64{scale}, n)
	}
}

// dot returns x'y and the sum of its terms' magnitudes.
func dot(x, y []float64) (v, scale float64) {
	for i := range x {
		v += x[i] * y[i]
		scale += math.Abs(x[i] * y[i])
	}
	return v, scale
}

// testGather: dst[k] = src[idx[k]] for indices in any order, repeated or
// not, over the whole of src or a view of it.
func (s *suite) testGather() {
	for _, n := range []int{1, 7, 100, bigRows} {
		for _, m := range []int{0, 1, 7, n} {
			idx := s.indices(m, n)
			src := s.random(n)
			x, dst := s.vector(src), s.vector(s.random(m))
			ix := s.index(idx)
			s.b.Gather(dst, x, ix)
			s.exact(name("%d of %d", m, n), s.host(dst), gather(src, idx))
		}
	}
}

// indices returns m indices into n entries: a permutation's first m when
// m <= n, with one repeated when m > 1.
func (s *suite) indices(m, n int) []int32 {
	idx := make([]int32, m)
	perm := s.rng.Perm(n)
	for k := range idx {
		idx[k] = int32(perm[k%n])
	}
	if m > 1 {
		idx[m-1] = idx[0]
	}
	return idx
}

// index returns a backend index holding idx, freed at the subtest's end.
func (s *suite) index(idx []int32) backend.Index {
	s.t.Helper()
	ix, err := s.b.NewIndex(idx)
	if err != nil {
		s.t.Fatalf("NewIndex(%d): %v", len(idx), err)
	}
	s.t.Cleanup(ix.Free)
	if ix.Len() != len(idx) {
		s.t.Errorf("NewIndex(%d).Len() = %d", len(idx), ix.Len())
	}
	return ix
}

func gather(src []float64, idx []int32) []float64 {
	out := make([]float64, len(idx))
	for k, i := range idx {
		out[k] = src[i]
	}
	return out
}

// testHalo: PackHalo lands src[idx] in pinned host memory after the work
// queued before it (here a kernel that doubles src), and UploadHalo's
// values reach the kernels queued after it. The vectors UploadHalo writes
// are made before PackHalo: its copy waits only for the work queued before
// that.
func (s *suite) testHalo() {
	for _, n := range []int{1, 7, 100, bigRows} {
		for _, m := range []int{0, 1, 7, n} {
			idx, src := s.indices(m, n), s.random(n)
			x, stage := s.vector(src), s.vector(make([]float64, m))
			halo, out := s.vector(make([]float64, m)), s.vector(make([]float64, m))
			ix := s.index(idx)
			host, land := make([]float64, m), s.random(m)
			unpin, err := s.b.Pin(host)
			if err != nil {
				s.t.Fatalf("Pin: %v", err)
			}
			backend.Axpby(s.b, x, 2, x, 0)
			wait := s.b.PackHalo(host, stage, x, ix)
			if err := wait(); err != nil {
				s.t.Fatalf("PackHalo's wait: %v", err)
			}
			doubled := slices.Clone(src)
			for i := range doubled {
				doubled[i] *= 2
			}
			s.exact(name("PackHalo %d of %d", m, n), slices.Clone(host), gather(doubled, idx))
			unpin()

			s.b.UploadHalo(halo, land)
			s.b.Copy(out, halo)
			s.exact(name("UploadHalo %d", m), s.host(out), land)
		}
	}
}
