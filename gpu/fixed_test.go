package gpu

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
)

// Backend must satisfy the interface that afsai.Updater looks for.
var _ afsai.FixedDevice = (*Backend)(nil)

// fixedPatterns are the patterns FixedSetup is tested on, for the rows of a
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

// TestFixedSetupMatchesCPU compares the GPU set-up on fixed patterns with
// afsai.FixedPattern on the same float32 matrix, rows and patterns, which
// must give the same G bit for bit and the same Stats: all rows in one
// batch, and the last rows (the rank's own rows in the distributed case) in
// batches of 97 rows. The float32 breakdown of the matrix "breakdown" must
// be found, as on the CPU.
func TestFixedSetupMatchesCPU(t *testing.T) {
	b := openGPU(t)
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		fallbacks := 0
		for pname, patterns := range fixedPatterns(t, c.a32, all) {
			for _, sub := range []struct {
				name  string
				lo    int
				batch int
			}{{"all", 0, 0}, {"last", n / 3, 97}} {
				rows, pats := all[sub.lo:], patterns[sub.lo:]
				t.Run(fmt.Sprintf("%s/%s/%s", c.name, pname, sub.name), func(t *testing.T) {
					g, st, kt, err := b.fixedSetup(c.a32, rows, pats, sub.batch)
					if err != nil {
						t.Fatal(err)
					}
					want, wst, err := afsai.FixedPattern(c.a32, rows, pats)
					if err != nil {
						t.Fatal(err)
					}
					fallbacks += st.FallbackRows
					checkLowerRows(t, g, rows)
					r := compareFactors(g, want)
					t.Logf("%d rows: %d identical patterns, %d bit-identical rows, max rel. diff %.2g; "+
						"nnz %d, largest pattern %d, fallback %d/%d; device %.3f ms",
						len(rows), r.samePattern, r.sameBits, r.maxRel, st.NNZ, st.MaxPattern,
						st.FallbackRows, wst.FallbackRows, kt.Total()*1e3)
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
					for k, q := range quadForm(c.a, g, rows) {
						if math.Abs(q-1) > 1e-3 {
							t.Errorf("row %d: (G A G')_ii = %.6g, want 1", rows[k], q)
							break
						}
					}
				})
			}
		}
		if c.name == "breakdown" && fallbacks == 0 {
			t.Errorf("%s: no fallback row on any pattern", c.name)
		}
	}
}

// TestFixedSetupErrors: input that afsai.FixedPattern refuses is refused,
// and the backend stays usable; rows with the diagonal alone give the
// Jacobi scaling.
func TestFixedSetupErrors(t *testing.T) {
	b := openGPU(t)
	a := csr.Convert[float32](stencil3D(3, 7))
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
		if _, _, err := b.FixedSetup(a, bad.rows, bad.patterns); err == nil {
			t.Errorf("%s accepted", bad.what)
		}
	}
	g, _, err := b.FixedSetup(a, nil, nil)
	if err != nil || g.Rows != 0 || len(g.RowPtr) != 1 {
		t.Errorf("no rows: %v, %+v", err, g)
	}
	g, st, err := b.FixedSetup(a, []int{26, 5}, [][]int32{{26}, nil})
	if err != nil {
		t.Fatalf("after refusals: %v", err)
	}
	want := []float32{float32(1 / math.Sqrt(6)), float32(1 / math.Sqrt(6))}
	if !slices.Equal(g.ColIdx, []int32{26, 5}) || !slices.Equal(g.Val, want) || st.MaxPattern != 0 || st.NNZ != 2 {
		t.Errorf("diagonal patterns: columns %v values %v stats %+v, want columns [26 5] values %v", g.ColIdx, g.Val, st, want)
	}
}

// BenchmarkFixedSetup times the GPU set-up on fixed patterns against
// afsai.FixedPattern on all cores, on the patterns of the adaptive G with
// DefaultParams (an Updater's work), on the diffusion problem of -fsai.n^3
// rows in float32, and reports the device time of each stage.
func BenchmarkFixedSetup(bm *testing.B) {
	be := openGPU(bm)
	a := csr.Convert[float32](diffusion(bm, *fsaiN))
	rows := make([]int, a.Rows)
	for i := range rows {
		rows[i] = i
	}
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
	if _, _, err := be.FixedSetup(a, rows, patterns); err != nil { // warm-up
		bm.Fatal(err)
	}
	var g *csr.Matrix[float32]
	var kt afsai.KernelTimes
	bm.ResetTimer()
	t0 = time.Now()
	for range bm.N {
		if g, _, kt, err = be.fixedSetup(a, rows, patterns, 0); err != nil {
			bm.Fatal(err)
		}
	}
	gpu := time.Since(t0).Seconds() / float64(bm.N)
	bm.StopTimer()
	r := compareFactors(g, want)
	bm.ReportMetric(cpu, "cpu-s")
	bm.ReportMetric(gpu, "gpu-s")
	bm.ReportMetric(cpu/gpu, "speedup")
	bm.ReportMetric(float64(r.sameBits)/float64(len(rows)), "same-bits")
	for _, s := range []struct {
		name string
		v    float64
	}{{"upload", kt.Upload}, {"gather", kt.Gather}, {"cholesky", kt.Cholesky},
		{"solve", kt.Solve}, {"assemble", kt.Assemble}, {"download", kt.Download}} {
		bm.ReportMetric(s.v*1e3, s.name+"-ms")
	}
	bm.Logf("%d rows, nnz(G) %d: CPU %.3f s (%d cores), GPU %.4f s (device stages %.4f s), %.1fx; "+
		"%d bit-identical rows, max rel. diff %.2g",
		a.Rows, g.NNZ(), cpu, runtime.GOMAXPROCS(0), gpu, kt.Total(), cpu/gpu, r.sameBits, r.maxRel)
}
