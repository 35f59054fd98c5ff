package cudafsai

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// fixedPatterns are the patterns the plans are tested on, for the rows of a
// (all rows): G's from the CPU's adaptive set-up with DefaultParams (what
// an Updater passes: ascending, diagonal last), the lower triangles of A
// and of A^2 (static FSAI's), and the latter shuffled with the diagonal
// among them (columns are factored in the order given, which changes the
// rounding and where a breakdown strikes).
func fixedPatterns(t *testing.T, a *csr.Matrix[float32], rows []int) map[string][][]int32 {
	t.Helper()
	g, _, err := afsai.Adaptive(a, rows, afsai.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	adaptive := make([][]int32, len(rows))
	for k := range rows {
		cols, _ := g.Row(k)
		adaptive[k] = slices.Clone(cols)
	}
	lowerA, lowerA2 := make([][]int32, len(rows)), make([][]int32, len(rows))
	seen := make([]bool, a.Cols)
	rng := rand.New(rand.NewPCG(7, 3))
	shuffled := make([][]int32, len(rows))
	for k, i := range rows {
		cols, _ := a.Row(i)
		for _, c := range cols {
			if int(c) <= i {
				lowerA[k] = append(lowerA[k], c)
			}
			rc, _ := a.Row(int(c))
			for _, j := range rc {
				if int(j) <= i && !seen[j] {
					seen[j] = true
					lowerA2[k] = append(lowerA2[k], j)
				}
			}
		}
		for _, j := range lowerA2[k] {
			seen[j] = false
		}
		slices.Sort(lowerA2[k])
		shuffled[k] = slices.Clone(lowerA2[k])
		rng.Shuffle(len(shuffled[k]), func(p, q int) { shuffled[k][p], shuffled[k][q] = shuffled[k][q], shuffled[k][p] })
	}
	return map[string][][]int32{"adaptive": adaptive, "lowerA": lowerA, "lowerA2": lowerA2, "shuffledA2": shuffled}
}

// rescaled returns D a D, D = diag(d(i)): symmetric positive definite when
// a is and d > 0, with a's pattern.
func rescaled(a *csr.Matrix[float64], d func(int) float64) *csr.Matrix[float64] {
	out := *a
	out.Val = make([]float64, len(a.Val))
	for i := range a.Rows {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			out.Val[k] = d(i) * a.Val[k] * d(int(a.ColIdx[k]))
		}
	}
	return &out
}

// checkFixed compares G and its Stats from the GPU with afsai.FixedPattern
// on the same float32 matrix a32 (a in float64), rows and patterns, which
// must give the same G bit for bit and the same Stats, and checks that
// diag(G A G') = I. It returns the number of fallback rows.
func checkFixed(t *testing.T, g *csr.Matrix[float32], st afsai.Stats, a *csr.Matrix[float64], a32 *csr.Matrix[float32],
	rows []int, patterns [][]int32) int {
	t.Helper()
	want, wst, err := afsai.FixedPattern(a32, rows, patterns)
	if err != nil {
		t.Fatal(err)
	}
	checkLowerRows(t, g, rows)
	r := compareFactors(g, want)
	t.Logf("%d rows: %d identical patterns, %d bit-identical rows, max rel. diff %.2g; "+
		"nnz %d, largest pattern %d, fallback %d/%d",
		len(rows), r.samePattern, r.sameBits, r.maxRel, st.NNZ, st.MaxPattern, st.FallbackRows, wst.FallbackRows)
	if r.sameBits != len(rows) {
		k := r.firstDiff
		gc, gv := g.Row(k)
		wc, wv := want.Row(k)
		t.Errorf("%d of %d rows differ from the CPU's; first, row %d (local %d):\n"+
			"GPU columns %v values %v\nCPU columns %v values %v",
			len(rows)-r.sameBits, len(rows), k, rows[k], gc, gv, wc, wv)
	}
	if st != wst {
		t.Errorf("stats %+v, CPU %+v", st, wst)
	}
	if st.NNZ != int64(g.NNZ()) {
		t.Errorf("Stats.NNZ %d, G holds %d", st.NNZ, g.NNZ())
	}
	for k, q := range csr.QuadDiag(a, g) {
		if math.Abs(q-1) > 1e-3 {
			t.Errorf("row %d: (G A G')_ii = %.6g, want 1", rows[k], q)
			break
		}
	}
	return st.FallbackRows
}

// TestFixedPlanMatchesCPU compares the GPU's prepared computation on fixed
// patterns with afsai.FixedPattern: twice on the same plan, for A and for D
// A D (new values on A's pattern), all rows in one batch, and the last rows
// (the rank's own rows in the distributed case) in batches of 97 rows. The
// float32 breakdown of the matrix "breakdown" must be found, as on the
// CPU.
func TestFixedPlanMatchesCPU(t *testing.T) {
	b := openGPU(t)
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		a2 := rescaled(c.a, func(i int) float64 { return 1.5 + 0.4*math.Sin(float64(i)) })
		a2_32 := csr.Convert[float32](a2)
		fallbacks := 0
		for pname, patterns := range fixedPatterns(t, c.a32, all) {
			for _, sub := range []struct {
				name  string
				lo    int
				batch int
			}{{"all", 0, 0}, {"last", n / 3, 97}} {
				rows, pats := all[sub.lo:], patterns[sub.lo:]
				t.Run(fmt.Sprintf("%s/%s/%s", c.name, pname, sub.name), func(t *testing.T) {
					p, err := b.prepareFixed(c.a32, rows, pats, sub.batch)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Free()
					nb := len(rows)
					if sub.batch > 0 {
						nb = min(nb, sub.batch)
					}
					if p.run.nb != nb {
						t.Errorf("%d rows per batch, want %d", p.run.nb, nb)
					}
					for _, v := range []struct {
						a   *csr.Matrix[float64]
						a32 *csr.Matrix[float32]
					}{{c.a, c.a32}, {a2, a2_32}} {
						g, st, kt, err := p.compute(v.a32.Val)
						if err != nil {
							t.Fatal(err)
						}
						t.Logf("device %.3f ms", kt.Total()*1e3)
						fallbacks += checkFixed(t, g, st, v.a, v.a32, rows, pats)
					}
				})
			}
		}
		if c.name == "breakdown" && fallbacks == 0 {
			t.Errorf("%s: no fallback row on any pattern", c.name)
		}
	}
}

// TestFixedPlanErrors: input that afsai.FixedPattern refuses is refused by
// PrepareFixed or Compute, and the backend and the plan stay usable; rows
// with the diagonal alone give the Jacobi scaling; a freed plan refuses to
// compute.
func TestFixedPlanErrors(t *testing.T) {
	b := openGPU(t)
	a := csr.Convert[float32](testmatrices.Stencil3D(3, 7))
	for _, bad := range []struct {
		what     string
		rows     []int
		patterns [][]int32
	}{
		{"row 27 of 27", []int{0, 27}, [][]int32{{0}, {27}}},
		{"column above the row", []int{4}, [][]int32{{1, 5}}},
		{"repeated column", []int{4}, [][]int32{{1, 1, 4}}},
		{"negative column", []int{4}, [][]int32{{-1}}},
		{"one pattern for two rows", []int{3, 4}, [][]int32{{3}}},
	} {
		if _, err := b.PrepareFixed(a, bad.rows, bad.patterns); err == nil {
			t.Errorf("%s accepted", bad.what)
		}
	}
	p, err := b.PrepareFixed(a, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := p.Compute(a.Val)
	if err != nil || g.Rows != 0 || len(g.RowPtr) != 1 {
		t.Errorf("no rows: %v, %+v", err, g)
	}
	vals := slices.Clone(a.Val)
	cols, _ := a.Row(20)
	d, _ := slices.BinarySearch(cols, 20)
	vals[int(a.RowPtr[20])+d] = -1 // the diagonal of row 20
	if _, _, err := p.Compute(vals); err == nil {
		t.Error("no rows: diagonal entry -1 accepted")
	}
	p.Free()

	p, err = b.PrepareFixed(a, []int{26, 5, 13}, [][]int32{{26}, nil, {4, 10, 12, 13}})
	if err != nil {
		t.Fatalf("after refusals: %v", err)
	}
	defer p.Free()
	if _, _, err := p.Compute(a.Val[1:]); err == nil {
		t.Error("too few values accepted")
	}
	for _, bad := range []float32{0, -1, float32(math.Inf(1)), float32(math.NaN())} { // row 20: not a row of G, but of A
		vals[int(a.RowPtr[20])+d] = bad
		if _, _, err := p.Compute(vals); err == nil {
			t.Errorf("diagonal entry %g accepted", bad)
		}
	}
	g, st, err := p.Compute(a.Val)
	if err != nil {
		t.Fatalf("after refusals: %v", err)
	}
	checkFixed(t, g, st, testmatrices.Stencil3D(3, 7), a, []int{26, 5, 13}, [][]int32{{26}, nil, {4, 10, 12, 13}})
	want := float32(1 / math.Sqrt(6))
	if g.ColIdx[0] != 26 || g.Val[0] != want || g.ColIdx[1] != 5 || g.Val[1] != want {
		t.Errorf("diagonal patterns: columns %v values %v, want rows 26 and 5 of %g alone", g.ColIdx, g.Val, want)
	}
	p.Free()
	if _, _, err := p.Compute(a.Val); err == nil {
		t.Error("Compute after Free accepted")
	}
}

// BenchmarkFixedSetup times a steady Compute of the GPU's prepared plan on
// fixed patterns (after one warm-up) against afsai.FixedPattern on all
// cores, on the patterns of the adaptive G with DefaultParams (an
// Updater's work), on the diffusion problem of -fsai.n^3 rows in float32,
// and reports the preparation's seconds and the device time of each stage
// of a Compute.
func BenchmarkFixedSetup(bm *testing.B) {
	be := openGPU(bm)
	a, rows := benchDiffusion(bm)
	g0, _, _, err := be.AdaptiveSetup(a, rows, afsai.DefaultParams())
	if err != nil {
		bm.Fatal(err)
	}
	patterns := make([][]int32, len(rows))
	for k := range rows {
		cols, _ := g0.Row(k)
		patterns[k] = cols
	}
	t0 := time.Now()
	want, _, err := afsai.FixedPattern(a, rows, patterns)
	if err != nil {
		bm.Fatal(err)
	}
	cpu := time.Since(t0).Seconds()
	t0 = time.Now()
	p, err := be.prepareFixed(a, rows, patterns, 0)
	if err != nil {
		bm.Fatal(err)
	}
	defer p.Free()
	prepare := time.Since(t0).Seconds()
	if _, _, err := p.Compute(a.Val); err != nil { // warm-up
		bm.Fatal(err)
	}
	var g *csr.Matrix[float32]
	var kt afsai.KernelTimes
	bm.ResetTimer()
	t0 = time.Now()
	for range bm.N {
		if g, _, kt, err = p.compute(a.Val); err != nil {
			bm.Fatal(err)
		}
	}
	gpu := time.Since(t0).Seconds() / float64(bm.N)
	bm.StopTimer()
	r := compareFactors(g, want)
	reportSetup(bm, cpu, gpu, kt)
	bm.ReportMetric(prepare, "prepare-s")
	bm.ReportMetric(float64(r.sameBits)/float64(len(rows)), "same-bits")
	bm.Logf("%d rows, nnz(G) %d: CPU %.3f s (%d cores), GPU plan %.3f s, Compute %.4f s (device stages %.4f s), %.1fx; "+
		"%d bit-identical rows, max rel. diff %.2g",
		a.Rows, g.NNZ(), cpu, runtime.GOMAXPROCS(0), prepare, gpu, kt.Total(), cpu/gpu, r.sameBits, r.maxRel)
}
