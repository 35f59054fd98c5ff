package gpu

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// Benchmarks report device bandwidth in GB/s (bytes that must move, each
// array read or written once, over the device time measured with events)
// and, beside SpMV and the vector ops, the share of the device-to-device
// copy bandwidth measured in the same run. Run on the GPU machine with e.g.
//
//	./gpu.test -test.run '^$' -test.bench . -test.benchtime 50x

var benchN = flag.Int("gpu.n", 256, "grid points per side of the 7-point Laplacian of BenchmarkBandwidth")

// copyGBs is the copy bandwidth of the current run, 0 before it is measured.
var copyGBs float64

// measure runs op b.N times (after one warm-up) and reports and returns the
// bandwidth for bytes moved per op.
func measure(b *testing.B, be *Backend, bytes int, op func()) float64 {
	op()
	if err := be.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	d, err := be.Time(func() {
		for i := 0; i < b.N; i++ {
			op()
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	gbs := float64(bytes) * float64(b.N) / d.Seconds() / 1e9
	b.ReportMetric(gbs, "GB/s")
	b.ReportMetric(d.Seconds()*1e6/float64(b.N), "dev-us/op")
	if copyGBs > 0 {
		b.ReportMetric(gbs/copyGBs, "of-copy")
	}
	return gbs
}

// spmvBytes is the least traffic of y = A*x: the matrix once, x and y once.
func spmvBytes(m *csr.Matrix[float64], p backend.Precision) int {
	val := 8
	if p == backend.Single {
		val = 4
	}
	return m.NNZ()*(4+val) + 4*(m.Rows+1) + 8*(m.Cols+m.Rows)
}

func benchVec(b *testing.B, be *Backend, n int) backend.Vector {
	v, err := be.NewVector(n)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(v.Free)
	be.Fill(v, 1.0/3)
	return v
}

// BenchmarkBandwidth measures the copy, SpMV of every width and precision,
// and the vector operations of PCG on the n^3 7-point Laplacian.
func BenchmarkBandwidth(b *testing.B) {
	be := openGPU(b)
	m := testmatrices.Stencil3D(*benchN, 7)
	n := m.Rows
	b.Logf("%s; 7-point Laplacian %d^3: %d rows, %d nonzeros", be.Device(), *benchN, n, m.NNZ())
	x, y, z, w, v := benchVec(b, be, n), benchVec(b, be, n), benchVec(b, be, n), benchVec(b, be, n), benchVec(b, be, n)
	sums := make([]float64, 2)

	copyGBs = 0
	b.Run("copy", func(b *testing.B) {
		copyGBs = 0 // the last (longest) run sets it
		copyGBs = measure(b, be, 16*n, func() { be.Copy(y, x) })
	})
	for _, p := range []backend.Precision{backend.Double, backend.Single} {
		a, err := be.NewMatrix(m, nil, p)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%v: rule picks W=%d", p, a.(*Matrix).Width())
		for _, wd := range spmvWidths {
			b.Run(fmt.Sprintf("spmv/%v/w%d", p, wd), func(b *testing.B) {
				measure(b, be, spmvBytes(m, p), func() { be.spmv(y, a, x, 0, wd) })
			})
		}
		a.Free()
	}
	b.Run("axpby", func(b *testing.B) { measure(b, be, 24*n, func() { backend.Axpby(be, y, 0.5, x, 0.5) }) })
	b.Run("mul", func(b *testing.B) { measure(b, be, 24*n, func() { backend.Mul(be, z, x, y) }) })
	b.Run("dot", func(b *testing.B) { measure(b, be, 16*n, func() { backend.Dot(be, x, y) }) })
	// r, q and d read, r written
	b.Run("updaterz", func(b *testing.B) {
		measure(b, be, 32*n, func() { be.UpdateRZCols(y, []float64{1e-9}, z, w, sums[:1], sums[1:]) })
	})
	// x, p, d and r read, x and p written
	b.Run("updatexp", func(b *testing.B) {
		measure(b, be, 48*n, func() { be.UpdateXPCols(x, []float64{1e-9}, v, w, y, []float64{0.5}) })
	})
	// the product of spmv plus its dot product with w; w is x here, so the
	// bytes that must move are spmv's
	a, err := be.NewMatrix(m, nil, backend.Double)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Free()
	s, err := be.NewSum(1)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Free()
	b.Run("spmvdot", func(b *testing.B) {
		measure(b, be, spmvBytes(m, backend.Double), func() { be.SpMMDot(y, a, x, 1, 0, x, s) })
	})
}

// bandMatrix returns a rows x rows matrix whose row i holds k entries (k
// drawn from [1, 2*mean-1] per row when irregular, else mean), one in each
// of k consecutive windows of 8 columns around the diagonal: the locality of
// a banded finite-element matrix with about mean entries per row.
func bandMatrix(rng *rand.Rand, rows, mean int, irregular bool) *csr.Matrix[float64] {
	m := &csr.Matrix[float64]{Rows: rows, Cols: rows, RowPtr: make([]int32, 1, rows+1),
		ColIdx: make([]int32, 0, rows*mean), Val: make([]float64, 0, rows*mean)}
	const window = 8
	for i := 0; i < rows; i++ {
		k := mean
		if irregular {
			k = 1 + rng.IntN(2*mean-1)
		}
		base := i - k/2*window
		for j := 0; j < k; j++ {
			c := base + j*window + rng.IntN(window)
			if c >= 0 && c < rows {
				m.ColIdx = append(m.ColIdx, int32(c))
				m.Val = append(m.Val, rng.Float64())
			}
		}
		m.RowPtr = append(m.RowPtr, int32(len(m.ColIdx)))
	}
	return m
}

// BenchmarkSpMVWidth measures SpMV of every width on matrices of about 10^8
// nonzeros with various mean row lengths: the data behind spmvWidth's rule.
func BenchmarkSpMVWidth(b *testing.B) {
	be := openGPU(b)
	const nnz = 100_000_000
	rng := rand.New(rand.NewPCG(1, 1))
	cases := []struct {
		name string
		make func() *csr.Matrix[float64]
	}{
		{"laplace27_154", func() *csr.Matrix[float64] { return testmatrices.Stencil3D(154, 27) }},
		{"band4", func() *csr.Matrix[float64] { return bandMatrix(rng, nnz/4, 4, false) }},
		{"band12", func() *csr.Matrix[float64] { return bandMatrix(rng, nnz/12, 12, false) }},
		{"irregular16", func() *csr.Matrix[float64] { return bandMatrix(rng, nnz/16, 16, true) }},
		{"band24", func() *csr.Matrix[float64] { return bandMatrix(rng, nnz/24, 24, false) }},
		{"band48", func() *csr.Matrix[float64] { return bandMatrix(rng, nnz/48, 48, false) }},
		{"band96", func() *csr.Matrix[float64] { return bandMatrix(rng, nnz/96, 96, false) }},
		{"band192", func() *csr.Matrix[float64] { return bandMatrix(rng, nnz/192, 192, false) }},
	}
	for _, c := range cases {
		m := c.make()
		x, y := benchVec(b, be, m.Cols), benchVec(b, be, m.Rows)
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			a, err := be.NewMatrix(m, nil, p)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: %d rows, %.1f nonzeros per row; %v: rule picks W=%d",
				c.name, m.Rows, float64(m.NNZ())/float64(m.Rows), p, a.(*Matrix).Width())
			for _, wd := range spmvWidths {
				b.Run(fmt.Sprintf("%s/%v/w%d", c.name, p, wd), func(b *testing.B) {
					measure(b, be, spmvBytes(m, p), func() { be.spmv(y, a, x, 0, wd) })
				})
			}
			a.Free()
		}
	}
}

var fsaiN = flag.Int("fsai.n", 100, "grid points per side of the diffusion problem of BenchmarkFactorWidth")

// BenchmarkFactorWidth measures the products PCG makes with aFSAI's factors,
// G and G' of the diffusion problem of -fsai.n^3 rows (built by
// afsai.Adaptive with DefaultParams, whose rows the GPU set-up computes bit
// for bit), at every SpMV width and, for 8 columns, at
// every width the SpMM's groups are sized from and both columns per lane:
// rows of irregular length, unlike the matrices behind spmvWidth's rule.
func BenchmarkFactorWidth(b *testing.B) {
	be := openGPU(b)
	a, err := testmatrices.Diffusion(*fsaiN)
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]int, a.Rows)
	for i := range rows {
		rows[i] = i
	}
	g32, _, err := afsai.Adaptive(csr.Convert[float32](a), rows, afsai.DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	g := csr.Convert[float64](g32)
	const k = 8
	for _, f := range []struct {
		name string
		m    *csr.Matrix[float64]
	}{{"G", g}, {"Gt", csr.Transpose(g)}} {
		x, y := benchVec(b, be, f.m.Cols*k), benchVec(b, be, f.m.Rows*k)
		x1, y1 := x.Slice(0, f.m.Cols), y.Slice(0, f.m.Rows)
		for _, p := range []backend.Precision{backend.Single, backend.Double} {
			dev, err := be.NewMatrix(f.m, nil, p)
			if err != nil {
				b.Fatal(err)
			}
			m := dev.(*Matrix)
			b.Logf("%s: %d rows, %.2f entries per row; %v: rule picks W=%d", f.name, f.m.Rows,
				float64(f.m.NNZ())/float64(f.m.Rows), p, m.Width())
			for _, wd := range spmvWidths[:4] {
				b.Run(fmt.Sprintf("%s/%v/spmv/w%d", f.name, p, wd), func(b *testing.B) {
					measure(b, be, spmvBytes(f.m, p), func() { be.spmv(y1, m, x1, 0, wd) })
				})
				sized := *m // the same device arrays, SpMM groups sized from width wd
				sized.width = wd
				for _, c := range spmmPerLane {
					b.Run(fmt.Sprintf("%s/%v/spmm%d/w%d/c=%d", f.name, p, k, wd, c), func(b *testing.B) {
						measure(b, be, spmvBytes(f.m, p)+8*(k-1)*(f.m.Cols+f.m.Rows),
							func() { be.spmm(y, &sized, x, k, 0, nil, nil, c) })
					})
				}
			}
			m.Free()
		}
	}
}

// BenchmarkLaunch measures host costs: making the context current (enter),
// one kernel launch (Fill of one entry; host-us/launch is the time to queue
// them, ns/op includes running them), a reduction's round trip (Dot of
// 1000 entries: launch, wait, read the result), and the counter operations
// of peer halos, queued in batches of 1 and 4 (write-value/N: one batch of
// N writes; write+wait-value/N: a batch of N writes and one of N waits),
// and the stream orderings of EndPuts.
func BenchmarkLaunch(b *testing.B) {
	be := openGPU(b)
	one, small := benchVec(b, be, 1), benchVec(b, be, 1000)
	b.Run("enter", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			be.enter()()
		}
	})
	b.Run("fill1", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			be.Fill(one, 1)
		}
		b.ReportMetric(time.Since(start).Seconds()*1e6/float64(b.N), "host-us/launch")
		if err := be.Sync(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("dot1000", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			backend.Dot(be, small, small)
		}
	})
	// the stream operations of a halo exchange between peers, each timed
	// on the host as the driver queues it
	var c counter
	if _, err := be.newCounter(&c); err != nil {
		b.Fatal(err)
	}
	hostUs := func(b *testing.B, op func(i int)) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			op(i)
		}
		b.ReportMetric(time.Since(start).Seconds()*1e6/float64(b.N), "host-us/op")
		if err := be.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	// a batch of n writes, then n writes and n waits, of the one counter
	for _, n := range []int{1, 4} {
		ops := make([]cuda.MemOp, 2*n)
		b.Run(fmt.Sprintf("write-value/%d", n), func(b *testing.B) {
			hostUs(b, func(i int) {
				for k := range n {
					ops[k] = cuda.WriteOp(c.ptr, uint32(i+1))
				}
				be.queueOps(be.stream, ops[:n])
			})
		})
		b.Run(fmt.Sprintf("write+wait-value/%d", n), func(b *testing.B) {
			hostUs(b, func(i int) {
				for k := range n {
					ops[k], ops[n+k] = cuda.WriteOp(c.ptr, uint32(i+1)), cuda.WaitOp(c.ptr, uint32(i+1))
				}
				be.queueOps(be.stream, ops[:n])
				be.queueOps(be.stream, ops[n:])
			})
		})
	}
	b.Run("order-streams", func(b *testing.B) {
		hostUs(b, func(int) { be.order(be.stream, be.copyStream) })
	})
}

// BenchmarkMemory measures what device memory costs the host: cuMemAlloc
// and cuMemFree of 1, 8 and 32 GiB, untouched (the cost of freeing does not
// depend on what was written). The FSAI set-up's state is sized by the
// longest pattern for every row (tens of GB), so its layout avoids
// allocations it does not need (fsai_level.go).
func BenchmarkMemory(b *testing.B) {
	be := openGPU(b)
	for _, gib := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("%dGiB", gib), func(b *testing.B) {
			defer be.enter()()
			var alloc, free time.Duration
			for i := 0; i < b.N; i++ {
				t := time.Now()
				p, err := be.alloc(gib<<30, "benchmark")
				if e, ok := err.(*Error); ok && e.Code == cuda.OutOfMemory {
					b.Skip(err) // a smaller GPU
				} else if err != nil {
					b.Fatal(err)
				}
				alloc += time.Since(t)
				t = time.Now()
				be.free(p, "benchmark")
				free += time.Since(t)
			}
			b.ReportMetric(alloc.Seconds()*1e3/float64(b.N), "alloc-ms")
			b.ReportMetric(free.Seconds()*1e3/float64(b.N), "free-ms")
		})
	}
}

// BenchmarkGramSchmidt measures GMRES's passes over a Krylov basis of k
// vectors of 8,000,000 entries (convdiff:200's rows) for k = 4, 16 and 30:
// DotMany (the basis and w read), AxpyMany (the basis read, w read and
// written) and AxpyDotMany (the same bytes as AxpyMany, and the dots), beside
// the copy bandwidth of the same run.
func BenchmarkGramSchmidt(b *testing.B) {
	be := openGPU(b)
	const n, most = 8000000, 30
	basis, w := benchVec(b, be, (most+1)*n), benchVec(b, be, n)
	b.Run("copy", func(b *testing.B) {
		copyGBs = 0
		copyGBs = measure(b, be, 16*n, func() { be.Copy(w, basis.Slice(0, n)) })
	})
	out := make([]float64, most+1)
	for _, k := range []int{4, 16, most} {
		a := make([]float64, k) // zeros: w stays as it is
		b.Run(fmt.Sprintf("dotmany/%d", k), func(b *testing.B) {
			measure(b, be, 8*n*(k+1), func() { be.DotMany(basis, w, out[:k]) })
		})
		b.Run(fmt.Sprintf("axpymany/%d", k), func(b *testing.B) {
			measure(b, be, 8*n*(k+2), func() { be.AxpyMany(w, basis, a) })
		})
		b.Run(fmt.Sprintf("axpydotmany/%d", k), func(b *testing.B) {
			measure(b, be, 8*n*(k+2), func() { be.AxpyDotMany(w, basis, a, out[:k+1]) })
		})
	}
}
