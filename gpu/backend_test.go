package gpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// openGPU opens device 0 for a test, or skips the test without a GPU; the
// test fails if Close reports an error at its end.
func openGPU(t testing.TB) *Backend {
	t.Helper()
	b := openUnclosed(t)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// openUnclosed is openGPU for tests that close the backend themselves
// (those that check what Close reports).
func openUnclosed(t testing.TB) *Backend {
	t.Helper()
	n, err := Available()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	if n == 0 {
		t.Skip("no GPU: the driver sees no device")
	}
	b, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newVec(t testing.TB, b *Backend, host []float64) backend.Vector {
	t.Helper()
	v, err := b.NewVector(len(host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Free)
	b.Upload(v, host)
	return v
}

func download(t testing.TB, b *Backend, v backend.Vector) []float64 {
	t.Helper()
	h := make([]float64, v.Len())
	if err := b.Download(h, v); err != nil {
		t.Fatal(err)
	}
	return h
}

// near reports whether got is within rel of want, relative to scale.
func near(got, want, scale, rel float64) bool {
	return math.Abs(got-want) <= rel*scale
}

// checkClose compares element-wise within rel times scale[i], the sum of
// the magnitudes of the terms that made want[i] (the size of rounding
// errors when terms cancel); a nil scale means |want[i]|.
func checkClose(t *testing.T, what string, got, want, scale []float64, rel float64) {
	t.Helper()
	for i := range want {
		s := math.Abs(want[i])
		if scale != nil {
			s = scale[i]
		}
		if !near(got[i], want[i], s+1e-300, rel) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestDevice(t *testing.T) {
	b := openGPU(t)
	t.Log(b.Device())
	if b.Name() != "cuda" || !strings.Contains(b.Device(), b.target.String()) {
		t.Errorf("Name %q Device %q", b.Name(), b.Device())
	}
}

// TestDamagedCache checks that Open recovers from a damaged cache file: it
// compiles the kernels afresh and replaces the file.
func TestDamagedCache(t *testing.T) {
	b := openGPU(t)
	nv, err := cuda.LoadNVRTC()
	if err != nil {
		t.Fatal(err)
	}
	tg, err := nv.TargetFor(b.cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	path := cuda.CachePath(cuda.CacheDir(), kernelSource(), tg, nv.Version())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	cuda.ForgetImages()
	b2, err := Open(0)
	if err != nil {
		t.Fatalf("Open with a damaged cache: %v", err)
	}
	if err := b2.Close(); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) == "damaged" {
		t.Errorf("cache file not replaced: %q, %v", data[:min(len(data), 16)], err)
	}
}

// testMatrices are the SpMV test cases: generated, and three files of
// /work/shared/matrices copied into testdata.
func testMatrices(t *testing.T) map[string]*csr.Matrix[float64] {
	rng := rand.New(rand.NewPCG(1, 2))
	ms := map[string]*csr.Matrix[float64]{
		"laplace7_12":    testmatrices.Stencil3D(12, 7),
		"laplace27_9":    testmatrices.Stencil3D(9, 27),
		"randomSPD_30":   testmatrices.RandomSPD(rng, 3000, 30),
		"block_700x300":  randomBlock(rng, 700, 300, 80),
		"block_5x0":      {Rows: 5, Cols: 0, RowPtr: make([]int32, 6)},
		"randomSPD_1row": testmatrices.RandomSPD(rng, 1, 3),
	}
	for _, f := range []string{"gr_30_30", "bcsstk02", "494_bus"} {
		m, err := testmatrices.ReadMTX(filepath.Join("testdata", f+".mtx"))
		if err != nil {
			t.Fatal(err)
		}
		ms[f] = m
	}
	for name, m := range ms {
		if err := m.Check(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return ms
}

// TestSpMV checks every kernel width in both precisions, with beta 0 (on a
// y poisoned with NaN: every entry must be written, none read) and beta 1,
// against csr.MulVec.
func TestSpMV(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for name, m := range testMatrices(t) {
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			ref := m
			if p == backend.Single {
				ref = csr.Convert[float64](csr.Convert[float32](m))
			}
			abs := &csr.Matrix[float64]{Rows: m.Rows, Cols: m.Cols, RowPtr: m.RowPtr, ColIdx: m.ColIdx,
				Val: make([]float64, m.NNZ())}
			for k, v := range ref.Val {
				abs.Val[k] = math.Abs(v)
			}
			a, err := b.NewMatrix(m, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			x := randomVec(rng, m.Cols)
			absX := make([]float64, len(x))
			for i, v := range x {
				absX[i] = math.Abs(v)
			}
			scale := make([]float64, m.Rows) // sum |a_ij x_j| + |y_i|: the size of rounding
			csr.MulVec(abs, absX, 0, scale)
			xv := newVec(t, b, x)
			for _, w := range spmvWidths {
				for _, beta := range []float64{0, 1} {
					y0 := randomVec(rng, m.Rows)
					if beta == 0 {
						for i := range y0 {
							y0[i] = math.NaN()
						}
					}
					yv := newVec(t, b, y0)
					b.spmv(yv, a, xv, beta, w)
					got := download(t, b, yv)
					want := append([]float64(nil), y0...)
					csr.MulVec(ref, x, beta, want)
					for i := range want {
						s := scale[i]
						if beta == 1 {
							s += math.Abs(y0[i])
						}
						if !near(got[i], want[i], s+1e-300, 1e-13) {
							t.Fatalf("%s %v W=%d beta=%g: y[%d] = %v, want %v", name, p, w, beta, i, got[i], want[i])
						}
					}
				}
			}
			// The public entry point with the width the rule picked.
			yv := newVec(t, b, make([]float64, m.Rows))
			backend.SpMV(b, yv, a, xv, 0)
			got := download(t, b, yv)
			want := make([]float64, m.Rows)
			csr.MulVec(ref, x, 0, want)
			for i := range want {
				if !near(got[i], want[i], scale[i]+1e-300, 1e-13) {
					t.Fatalf("%s %v SpMV (W=%d): y[%d] = %v, want %v", name, p, a.(*Matrix).Width(), i, got[i], want[i])
				}
			}
			if a.Rows() != m.Rows || a.Cols() != m.Cols || a.NNZ() != m.NNZ() || a.Precision() != p {
				t.Errorf("%s: matrix reports %dx%d, %d entries, %v", name, a.Rows(), a.Cols(), a.NNZ(), a.Precision())
			}
			a.Free()
		}
	}
}

// vectorSizes cover a single entry, less than a block, a grid of one entry
// per thread, and a grid-stride loop with the unrolled and remainder paths.
var vectorSizes = []int{1, 1000, 100003, 3_000_001}

func TestVectorOps(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range vectorSizes {
		xh, yh, zh := randomVec(rng, n), randomVec(rng, n), randomVec(rng, n)
		x, y, z := newVec(t, b, xh), newVec(t, b, yh), newVec(t, b, zh)

		b.Fill(z, 2.5)
		for i, v := range download(t, b, z) {
			if v != 2.5 {
				t.Fatalf("n=%d Fill: z[%d] = %v", n, i, v)
			}
		}
		b.Copy(z, x)
		checkClose(t, "Copy", download(t, b, z), xh, nil, 0)

		backend.Axpby(b, z, 0.75, y, -1.25) // z = 0.75 y - 1.25 x
		want, scale := make([]float64, n), make([]float64, n)
		for i := range want {
			want[i] = 0.75*yh[i] - 1.25*xh[i]
			scale[i] = math.Abs(0.75*yh[i]) + math.Abs(1.25*xh[i])
		}
		checkClose(t, "Axpby", download(t, b, z), want, scale, 1e-15)

		b.Fill(z, math.NaN())
		backend.Axpby(b, z, -3, x, 0) // z = -3 x: the NaN in z must not be read
		for i := range want {
			want[i] = -3 * xh[i]
		}
		checkClose(t, "Axpby b=0", download(t, b, z), want, nil, 0)

		backend.Mul(b, z, x, y)
		for i := range want {
			want[i] = xh[i] * yh[i]
		}
		checkClose(t, "Mul", download(t, b, z), want, nil, 0)
	}
}

func TestDot(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range append(vectorSizes, 0) {
		xh, yh := randomVec(rng, n), randomVec(rng, n)
		x, y := newVec(t, b, xh), newVec(t, b, yh)
		var want, scale float64
		for i := range xh {
			want += xh[i] * yh[i]
			scale += math.Abs(xh[i] * yh[i])
		}
		got := backend.Dot(b, x, y)
		if !near(got, want, scale, 1e-12) {
			t.Errorf("n=%d: Dot = %v, want %v", n, got, want)
		}
		if again := backend.Dot(b, x, y); again != got {
			t.Errorf("n=%d: Dot not deterministic: %v then %v", n, got, again)
		}
	}
}

// TestSpMVRowMap: a block with a row map adds its rows' products into the
// mapped rows of y and leaves every other row alone.
func TestSpMVRowMap(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(21, 22))
	m := testMatrices(t)["gr_30_30"]
	const n = 3 * 900 // y is longer than the block: rows map into a third of it
	rowMap := make([]int32, m.Rows)
	for k := range rowMap {
		rowMap[k] = int32(3*k + 1)
	}
	for _, w := range spmvWidths {
		a, err := b.NewMatrix(m, rowMap, backend.Double)
		if err != nil {
			t.Fatal(err)
		}
		x, y0 := randomVec(rng, m.Cols), randomVec(rng, n)
		yv := newVec(t, b, y0)
		b.spmv(yv, a, newVec(t, b, x), 1, w)
		ax := make([]float64, m.Rows)
		csr.MulVec(m, x, 0, ax)
		want := append([]float64(nil), y0...)
		for k, r := range rowMap {
			want[r] += ax[k]
		}
		got := download(t, b, yv)
		for i := range want {
			if !near(got[i], want[i], math.Abs(want[i])+1, 1e-13) {
				t.Fatalf("W=%d: y[%d] = %v, want %v", w, i, got[i], want[i])
			}
		}
		a.Free()
	}
}

// TestSpMVDot checks the product of SpMMDot of one column like TestSpMV,
// its sum against
// w'(A*x) on the host for every width, that the sum is deterministic and
// that TakeSum zeroes it, and that a product with a row map and beta 1
// adds its own rows' part (not y's old values) to the same sum.
func TestSpMVDot(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(19, 20))
	s, err := b.NewSum(1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	take := func() (float64, error) {
		out := make([]float64, 1)
		err := b.TakeSum(s, out)
		return out[0], err
	}
	for name, m := range testMatrices(t) {
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			ref := m
			if p == backend.Single {
				ref = csr.Convert[float64](csr.Convert[float32](m))
			}
			a, err := b.NewMatrix(m, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			x, w := randomVec(rng, m.Cols), randomVec(rng, m.Rows)
			ax := make([]float64, m.Rows)
			csr.MulVec(ref, x, 0, ax)
			var want, scale float64
			for i := range ax {
				want += w[i] * ax[i]
				scale += math.Abs(w[i] * ax[i])
			}
			xv, wv := newVec(t, b, x), newVec(t, b, w)
			for _, width := range spmvWidths {
				var first float64
				for round := range 2 {
					y0 := randomVec(rng, m.Rows)
					yv := newVec(t, b, y0)
					b.spmvDot(yv, a, xv, 1, wv, s, width)
					got, err := take()
					if err != nil {
						t.Fatal(err)
					}
					if !near(got, want, scale, 1e-12) {
						t.Fatalf("%s %v W=%d: sum %v, want %v", name, p, width, got, want)
					}
					if round == 0 {
						first = got
					} else if math.Float64bits(got) != math.Float64bits(first) {
						t.Fatalf("%s %v W=%d: sum %v then %v: not deterministic", name, p, width, first, got)
					}
					y := download(t, b, yv)
					for i := range y {
						if !near(y[i], y0[i]+ax[i], math.Abs(y0[i])+math.Abs(ax[i])+1e-300, 1e-12) {
							t.Fatalf("%s %v W=%d: y[%d] = %v, want %v", name, p, width, i, y[i], y0[i]+ax[i])
						}
					}
				}
			}
			a.Free()
		}
	}

	// A diagonal block, then a block whose rows map into every third row.
	m, off := testmatrices.RandomSPD(rng, 3000, 7), randomBlock(rng, 1000, 500, 9)
	rowMap := make([]int32, off.Rows)
	for k := range rowMap {
		rowMap[k] = int32(3*k + 2)
	}
	x, h, w := randomVec(rng, m.Cols), randomVec(rng, off.Cols), randomVec(rng, m.Rows)
	ax, oh := make([]float64, m.Rows), make([]float64, off.Rows)
	csr.MulVec(m, x, 0, ax)
	csr.MulVec(off, h, 0, oh)
	var want, scale float64
	for i := range ax {
		want += w[i] * ax[i]
		scale += math.Abs(w[i] * ax[i])
	}
	for k, r := range rowMap {
		want += w[r] * oh[k]
		scale += math.Abs(w[r] * oh[k])
	}
	a, err := b.NewMatrix(m, nil, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	ao, err := b.NewMatrix(off, rowMap, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	yv, wv := newVec(t, b, make([]float64, m.Rows)), newVec(t, b, w)
	b.SpMMDot(yv, a, newVec(t, b, x), 1, 0, wv, s)
	b.SpMMDot(yv, ao, newVec(t, b, h), 1, 1, wv, s)
	got, err := take()
	if err != nil {
		t.Fatal(err)
	}
	if !near(got, want, scale, 1e-12) {
		t.Fatalf("diagonal and mapped blocks: sum %v, want %v", got, want)
	}
	if again, err := take(); again != 0 || err != nil {
		t.Fatalf("TakeSum after TakeSum: %v, %v", again, err)
	}
	a.Free()
	ao.Free()
}

func TestGather(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(11, 12))
	src := randomVec(rng, 5000)
	idx := make([]int32, 3001)
	want := make([]float64, len(idx))
	for k := range idx {
		idx[k] = int32(rng.IntN(len(src)))
		want[k] = src[idx[k]]
	}
	ix, err := b.NewIndex(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Free()
	if ix.Len() != len(idx) {
		t.Errorf("Index.Len = %d", ix.Len())
	}
	dst := newVec(t, b, make([]float64, len(idx)))
	b.Gather(dst, newVec(t, b, src), ix)
	checkClose(t, "Gather", download(t, b, dst), want, nil, 0)
}

// TestViews uploads and downloads through views (Slice), also of views, and
// checks that the rest of the vector is untouched (zero from NewVector).
func TestViews(t *testing.T) {
	b := openGPU(t)
	v, err := b.NewVector(100)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Free()
	part := []float64{1, 2, 3, 4, 5, 6, 7}
	b.Upload(v.Slice(13, 7), part)
	inner := v.Slice(10, 20).Slice(5, 3) // entries 15..17
	b.Fill(inner, -1)
	all := download(t, b, v)
	for i, got := range all {
		want := 0.0
		switch {
		case i >= 15 && i < 18:
			want = -1
		case i >= 13 && i < 20:
			want = part[i-13]
		}
		if got != want {
			t.Fatalf("v[%d] = %v, want %v", i, got, want)
		}
	}
	back := make([]float64, 3)
	if err := b.Download(back, inner); err != nil || back[0] != -1 || back[2] != -1 {
		t.Errorf("Download of a view: %v, %v", back, err)
	}
	if inner.Len() != 3 {
		t.Errorf("view length %d", inner.Len())
	}
	inner.Free() // a view: must leave v alone
	if got := download(t, b, v.Slice(13, 1)); got[0] != 1 {
		t.Errorf("after freeing a view: %v", got)
	}
}

func TestPin(t *testing.T) {
	b := openGPU(t)
	host := make([]float64, 1<<16)
	for i := range host {
		host[i] = float64(i)
	}
	unpin, err := b.Pin(host)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Pin(host[100:200]); err == nil {
		t.Error("pinning a page twice succeeded")
	} else if e := (*Error)(nil); !errors.As(err, &e) || e.Name != "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED" {
		t.Errorf("pinning twice: %v", err)
	}
	v := newVec(t, b, host[:1000])
	backend.Axpby(b, v, 2, v, 0)
	if err := b.Download(host[5000:6000], v); err != nil {
		t.Fatal(err)
	}
	if host[5000] != 0 || host[5999] != 2*999 {
		t.Errorf("pinned download: %v %v", host[5000], host[5999])
	}
	unpin()
	unpin() // a second call does nothing
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}

func TestOutOfMemory(t *testing.T) {
	b := openGPU(t)
	_, err := b.NewVector(1 << 42) // 32 TiB
	var e *Error
	if !errors.As(err, &e) || e.Name != "CUDA_ERROR_OUT_OF_MEMORY" || !strings.Contains(err.Error(), "free ") {
		t.Fatalf("NewVector(2^42): %v", err)
	}
	t.Log(err)
	if b.Err() != nil {
		t.Errorf("a failed allocation left the backend failed: %v", b.Err())
	}
}

// TestErrorsStick checks that a bad call is recorded, returned by Sync, and
// turns later reductions into NaN; and that Close reports it.
func TestErrorsStick(t *testing.T) {
	b := openUnclosed(t)
	x, _ := b.NewVector(10)
	y, _ := b.NewVector(11)
	backend.Axpby(b, y, 1, x, 1)
	if err := b.Sync(); err == nil || !strings.Contains(err.Error(), "Axpby") {
		t.Errorf("Sync after a length mismatch: %v", err)
	}
	if d := backend.Dot(b, x, x); !math.IsNaN(d) {
		t.Errorf("Dot after an error = %v, want NaN", d)
	}
	x.Free()
	y.Free()
	if err := b.Close(); err == nil {
		t.Error("Close did not report the error")
	}
	if err := b.Err(); err == nil {
		t.Error("a closed backend reports no error")
	}
}

func TestTime(t *testing.T) {
	b := openGPU(t)
	v := newVec(t, b, make([]float64, 1<<24))
	d, err := b.Time(func() { b.Fill(v, 1) })
	if err != nil || d <= 0 {
		t.Errorf("Time = %v, %v", d, err)
	}
}

// TestAnyGoroutine uses one backend from goroutines on fresh OS threads (a
// goroutine that exits locked takes its thread with it), which have no CUDA
// context current until the backend makes its own so.
func TestAnyGoroutine(t *testing.T) {
	b := openGPU(t)
	v := newVec(t, b, make([]float64, 1000))
	for i := 1; i <= 8; i++ {
		done := make(chan float64)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			b.Fill(v, float64(i))
			done <- backend.Dot(b, v, v)
		}()
		if got, want := <-done, 1000*float64(i*i); got != want {
			t.Fatalf("goroutine %d: Dot = %v, want %v (%v)", i, got, want, b.Err())
		}
	}
}

// TestSpare: memory retired stays allocated as spare until a set-up asks
// for the free memory, or an allocation finds the device full; with
// KeepSpare(false) it is freed at once; a spare pointer that fails to free
// shows as the backend's error.
func TestSpare(t *testing.T) {
	b := openUnclosed(t)
	free := func() int64 { // without releasing the spare, as freeMemory does
		f, _, err := b.drv.MemGetInfo()
		if err != nil {
			t.Fatal(err)
		}
		return int64(f)
	}
	allocs := func(n, size int) []uintptr {
		var ptrs []uintptr
		for range n {
			p, err := b.alloc(size, "test")
			if err != nil {
				t.Fatal(err)
			}
			ptrs = append(ptrs, p)
		}
		return ptrs
	}
	const size, slack = 1 << 30, 64 << 20
	free0 := free()
	b.retire(allocs(2, size/2))
	if f := free(); f > free0-size+slack {
		t.Errorf("free memory %d with 1 GiB spare, %d before", f, free0)
	}
	if f, err := b.freeMemory(); err != nil || int64(f) < free0-slack {
		t.Errorf("freeMemory %d (%v) after the spare is released, %d before", f, err, free0)
	}

	// the device full: the spare goes, and the allocation succeeds
	most := int(free0 - 2*size)
	b.retire(allocs(1, most))
	p := allocs(1, 4*size)
	if len(b.spare) != 0 {
		t.Errorf("%d spare allocations left after an allocation beyond the free memory", len(b.spare))
	}
	b.retire(p)

	b.KeepSpare(false)
	if len(b.spare) != 0 || free() < free0-slack {
		t.Errorf("KeepSpare(false) left %d spare allocations, free memory %d of %d", len(b.spare), free(), free0)
	}
	b.retire(allocs(1, size))
	if f := free(); len(b.spare) != 0 || f < free0-slack {
		t.Errorf("retired without keeping: %d spare allocations, free memory %d of %d", len(b.spare), f, free0)
	}

	b.KeepSpare(true)
	b.retire([]uintptr{1}) // not an allocation
	if _, err := b.freeMemory(); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(); err == nil || !strings.Contains(err.Error(), "cuMemFree") {
		t.Errorf("a spare that is no allocation: error %v", err)
	}
	b.Close() // it reports the error again
}
