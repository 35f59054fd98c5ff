package cudafsai

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// TestArena: allocations are carved 256-byte aligned, one after the other,
// and one past the end fails, as every one after it, with 0.
func TestArena(t *testing.T) {
	a := arena{base: 1 << 20, size: 1000}
	for k, want := range []uintptr{1 << 20, 1<<20 + 256, 1<<20 + 512} {
		if p := a.alloc(10, "test"); p != want {
			t.Fatalf("allocation %d at %#x, want %#x", k, p, want)
		}
	}
	if a.used != 522 {
		t.Errorf("used %d bytes, want 522", a.used)
	}
	if p := a.alloc(500, "test"); p != 0 || a.err == nil {
		t.Fatalf("allocation past the end: %#x, error %v", p, a.err)
	}
	if p := a.alloc(1, "test"); p != 0 {
		t.Errorf("allocation after a failure: %#x", p)
	}
}

// TestPlanFSAI checks the sizing of the gradient's hash table: above the
// columns a step can reach, and refused, as unsupported, beyond shared
// memory, whose largest table of 2^12 slots takes rows of up to 4095 /
// ((Steps-1) StepSize + 1) entries.
func TestPlanFSAI(t *testing.T) {
	maxSlots := 1 << (bits.Len(uint(sharedLimit/slotBytes)) - 1)
	for _, p := range []afsai.Params{afsai.DefaultParams(), {Steps: 10, StepSize: 2, Eps: 1e-3}, {Steps: 6, StepSize: 3}} {
		pl, err := planFSAI(7, p)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if len(pl.bits) != p.Steps || pl.mmax != p.Steps*p.StepSize {
			t.Fatalf("%+v: plan %+v: want %d steps and patterns of up to %d", p, pl, p.Steps, p.Steps*p.StepSize)
		}
		for st, b := range pl.bits {
			reach := (p.StepSize*st + 1) * 7
			if 1<<b <= reach || (b > 5 && 1<<(b-1) > reach) {
				t.Errorf("%+v step %d: table of %d slots for %d columns", p, st, 1<<b, reach)
			}
			if rows, lanes := pl.rows[st], pl.lanes[st]; rows*slotBytes<<b > sharedLimit || rows < 1 ||
				rows*lanes%32 != 0 || rows*lanes > maxThreads || lanes&(lanes-1) != 0 || lanes > 32 {
				t.Errorf("%+v step %d: %d rows of %d lanes and %d slots: past shared memory or the block, or not whole warps",
					p, st, rows, lanes, 1<<b)
			}
		}
		longest := (maxSlots - 1) / ((p.Steps-1)*p.StepSize + 1)
		if _, err := planFSAI(longest, p); err != nil {
			t.Errorf("%+v: rows of %d entries: %v", p, longest, err)
		}
		if _, err := planFSAI(longest+1, p); !errors.Is(err, afsai.ErrDeviceUnsupported) {
			t.Errorf("%+v: rows of %d entries: err %v, want ErrDeviceUnsupported", p, longest+1, err)
		}
	}
}

// fsaiCase is a test matrix: A in float64 (for diag(G A G')) and the
// float32 A that both set-ups factor.
type fsaiCase struct {
	name string
	a    *csr.Matrix[float64]
	a32  *csr.Matrix[float32]
}

func fsaiCases(t *testing.T) []fsaiCase {
	t.Helper()
	mats := []struct {
		name string
		a    *csr.Matrix[float64]
	}{
		{"laplace7-12", testmatrices.Stencil3D(12, 7)},
		{"laplace27-8", testmatrices.Stencil3D(8, 27)},
		{"diffusion-14", diffusion(t, 14)},
		{"diffusion-40", diffusion(t, 40)},                      // G over 1 MiB: page-locked download
		{"elasticity-4", generated(t, "elasticity:4:1e3:0.45")}, // rows of 81 entries, three unknowns a node
		{"random-2000", testmatrices.RandomSPD(rand.New(rand.NewPCG(5, 1)), 2000, 4)},
		{"breakdown", breakdownMatrix()},
	}
	for _, name := range []string{"gr_30_30", "bcsstk02", "494_bus"} {
		a, err := testmatrices.ReadMTX(filepath.Join("..", "..", "gpu", "testdata", name+".mtx")) // the backend tests' copies
		if err != nil {
			t.Fatal(err)
		}
		mats = append(mats, struct {
			name string
			a    *csr.Matrix[float64]
		}{name, a})
	}
	var cases []fsaiCase
	for _, m := range mats {
		cases = append(cases, fsaiCase{m.name, m.a, csr.Convert[float32](m.a)})
	}
	return cases
}

// breakdownMatrix is SPD in float64, but in float32 its leading 2x2 block
// is singular, so the float32 Cholesky of row 2 breaks down (the matrix of
// afsai's TestBreakdownFallback).
func breakdownMatrix() *csr.Matrix[float64] {
	const d = 1 + 1e-9
	return csr.FromEntries(3, 3, []csr.Entry[float64]{
		{Row: 0, Col: 0, Val: d}, {Row: 0, Col: 1, Val: 1}, {Row: 0, Col: 2, Val: 0.5},
		{Row: 1, Col: 0, Val: 1}, {Row: 1, Col: 1, Val: d}, {Row: 1, Col: 2, Val: 0.5},
		{Row: 2, Col: 0, Val: 0.5}, {Row: 2, Col: 1, Val: 0.5}, {Row: 2, Col: 2, Val: d},
	})
}

// diffusion returns the n^3 diffusion problem (testmatrices.Diffusion).
func diffusion(t testing.TB, n int) *csr.Matrix[float64] {
	t.Helper()
	return generated(t, fmt.Sprintf("diffusion:%d", n))
}

// generated returns the whole matrix of a problem spec.
func generated(t testing.TB, spec string) *csr.Matrix[float64] {
	t.Helper()
	m, err := testmatrices.Problem(spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fsaiTestParams are the parameters the GPU set-up is compared with
// afsai.Adaptive under: the defaults (Scaled and Stall on), Scaled alone,
// Stall alone, the plain ranking without a stall test (the earlier
// defaults), wider steps without Eps, Jacobi (no step), and patterns longer
// than the kernels with a warp per row take.
func fsaiTestParams() []afsai.Params {
	return []afsai.Params{
		afsai.DefaultParams(),
		{Steps: 20, StepSize: 2, Eps: 1e-3, Scaled: true},
		{Steps: 20, StepSize: 2, Eps: 1e-3, Stall: 1e-2},
		{Steps: 10, StepSize: 2, Eps: 1e-3},
		{Steps: 6, StepSize: 3},
		{Steps: 0, StepSize: 1},
		// patterns up to 66 entries: the steps on lists of active rows
		// run a thread per row (warpRowPattern)
		{Steps: 33, StepSize: 2, Eps: 1e-5},
	}
}

// TestAdaptiveSetupMatchesCPU compares the GPU set-up with afsai.Adaptive on
// the same float32 matrix and rows, which must give the same G bit for bit
// and the same Stats: all rows in one batch, the last rows (the rank's own
// rows in the distributed case) in batches of 97 rows, and all rows with
// the active rows moved into levels of their own down to a single row,
// the levels in the batch's dead Cholesky factors where they fit and in an
// allocation of their own.
func TestAdaptiveSetupMatchesCPU(t *testing.T) {
	b := openGPU(t)
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		for _, p := range fsaiTestParams() {
			for _, sub := range []struct {
				name         string
				rows         []int
				batch, level int
				apart        bool
			}{{"all", all, 0, 0, false}, {"last", all[n/3:], 97, 0, false}, {"levels", all, 0, 1, false},
				{"levels-apart", all, 0, 1, true}} {
				name := fmt.Sprintf("%s/steps%d-s%d-eps%g-stall%g-scaled%t/%s",
					c.name, p.Steps, p.StepSize, p.Eps, p.Stall, p.Scaled, sub.name)
				t.Run(name, func(t *testing.T) {
					res, err := b.adaptiveWhole(c.a32, sub.rows, p, fsaiJob{maxBatch: sub.batch, levelRows: sub.level, levelsApart: sub.apart})
					if _, perr := planFSAI(longestRow(c.a32), p); perr != nil {
						// too wide for the gradient's table: refused, as the plan says
						if !errors.Is(err, afsai.ErrDeviceUnsupported) {
							t.Fatalf("got error %v, want the plan's: %v", err, perr)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					g, st, kt := res.g, res.st, res.kt
					want, wst, err := afsai.Adaptive(c.a32, sub.rows, p)
					if err != nil {
						t.Fatal(err)
					}
					checkLowerRows(t, g, sub.rows)
					r := compareFactors(g, want)
					t.Logf("%d rows: %d identical patterns, %d bit-identical rows, max rel. diff %.2g; "+
						"nnz %d/%d, fallback %d/%d; device %.3f ms",
						len(sub.rows), r.samePattern, r.sameBits, r.maxRel, st.NNZ, wst.NNZ,
						st.FallbackRows, wst.FallbackRows, kt.Total()*1e3)
					if r.sameBits != len(sub.rows) {
						k := r.firstDiff
						gc, gv := g.Row(k)
						wc, wv := want.Row(k)
						t.Errorf("%d of %d rows differ from the CPU's; first, row %d (local %d):\n"+
							"GPU columns %v values %v\nCPU columns %v values %v",
							len(sub.rows)-r.sameBits, len(sub.rows), k, sub.rows[k], gc, gv, wc, wv)
					}
					if st != wst {
						t.Errorf("stats %+v, CPU %+v", st, wst)
					}
					if st.NNZ != int64(g.NNZ()) {
						t.Errorf("Stats.NNZ %d, G holds %d", st.NNZ, g.NNZ())
					}
					for k, q := range csr.QuadDiag(c.a, g) {
						if math.Abs(q-1) > 1e-3 {
							t.Errorf("row %d: (G A G')_ii = %.6g, want 1", sub.rows[k], q)
							break
						}
					}
				})
			}
		}
	}
}

// TestAdaptiveSetupErrors: input that afsai.Adaptive refuses is refused,
// and the backend stays usable.
func TestAdaptiveSetupErrors(t *testing.T) {
	b := openGPU(t)
	a := csr.Convert[float32](testmatrices.Stencil3D(3, 7))
	if _, _, _, err := b.AdaptiveSetup(a, []int{0, 27}, afsai.DefaultParams()); err == nil {
		t.Error("row 27 of 27 accepted")
	}
	if _, _, _, err := b.AdaptiveSetup(a, []int{0}, afsai.Params{Steps: 2}); err == nil {
		t.Error("StepSize 0 accepted")
	}
	if _, _, _, err := b.AdaptiveSetup(a, []int{0}, afsai.Params{Steps: 2, StepSize: 1, Stall: 1}); err == nil {
		t.Error("Stall 1 accepted")
	}
	g, _, _, err := b.AdaptiveSetup(a, nil, afsai.DefaultParams())
	if err != nil || g.Rows != 0 || len(g.RowPtr) != 1 {
		t.Errorf("no rows: %v, %+v", err, g)
	}
	if _, _, _, err := b.AdaptiveSetup(a, []int{26}, afsai.DefaultParams()); err != nil {
		t.Errorf("after refusals: %v", err)
	}
}

// checkLowerRows checks the layout of G: row k has columns ascending, all
// below rows[k], and the diagonal last.
func checkLowerRows(t *testing.T, g *csr.Matrix[float32], rows []int) {
	t.Helper()
	if g.Rows != len(rows) || g.Check() != nil {
		t.Fatalf("G is %d rows for %d requested: %v", g.Rows, len(rows), g.Check())
	}
	for k, i := range rows {
		cols, _ := g.Row(k)
		if len(cols) == 0 || int(cols[len(cols)-1]) != i {
			t.Fatalf("row %d (local %d): columns %v do not end with the diagonal", k, i, cols)
		}
	}
}

// factorDiff summarizes how a GPU G compares with the CPU's.
type factorDiff struct {
	samePattern, sameBits int
	firstDiff             int     // the first row that is not bit-identical, -1 when none
	maxRel                float64 // over rows of the same pattern, relative to the row's largest value
}

func compareFactors(g, want *csr.Matrix[float32]) factorDiff {
	r := factorDiff{firstDiff: -1}
	for k := 0; k < want.Rows; k++ {
		gc, gv := g.Row(k)
		wc, wv := want.Row(k)
		same := slices.Equal(gc, wc) && slices.Equal(gv, wv)
		if same {
			r.sameBits++
		} else if r.firstDiff < 0 {
			r.firstDiff = k
		}
		if !slices.Equal(gc, wc) {
			continue
		}
		r.samePattern++
		var scale, diff float64
		for p := range wv {
			scale = max(scale, math.Abs(float64(wv[p])))
			diff = max(diff, math.Abs(float64(gv[p])-float64(wv[p])))
		}
		r.maxRel = max(r.maxRel, diff/scale)
	}
	return r
}

var fsaiN = flag.Int("fsai.n", 100, "grid points per side of the diffusion problem of BenchmarkAdaptiveSetup")

// benchDiffusion returns the set-up benchmarks' matrix, the diffusion
// problem of -fsai.n^3 rows in float32, and the list of all its rows.
func benchDiffusion(b *testing.B) (*csr.Matrix[float32], []int) {
	a := csr.Convert[float32](diffusion(b, *fsaiN))
	rows := make([]int, a.Rows)
	for i := range rows {
		rows[i] = i
	}
	return a, rows
}

// BenchmarkAdaptiveSetup times the GPU set-up against afsai.Adaptive on all
// cores, with DefaultParams, on the diffusion problem of -fsai.n^3 rows in
// float32, and reports the device time of each stage. Run with
// -test.benchtime 3x (the CPU set-up runs once per b.N round).
func BenchmarkAdaptiveSetup(bm *testing.B) {
	be := openGPU(bm)
	a, rows := benchDiffusion(bm)
	p := afsai.DefaultParams()
	t0 := time.Now()
	want, _, err := afsai.Adaptive(a, rows, p)
	if err != nil {
		bm.Fatal(err)
	}
	cpu := time.Since(t0).Seconds()
	if _, _, _, err := be.AdaptiveSetup(a, rows, p); err != nil { // warm-up
		bm.Fatal(err)
	}
	var g *csr.Matrix[float32]
	var kt afsai.KernelTimes
	bm.ResetTimer()
	t0 = time.Now()
	for range bm.N {
		if g, _, kt, err = be.AdaptiveSetup(a, rows, p); err != nil {
			bm.Fatal(err)
		}
	}
	gpu := time.Since(t0).Seconds() / float64(bm.N)
	bm.StopTimer()
	r := compareFactors(g, want)
	reportSetup(bm, cpu, gpu, kt)
	bm.ReportMetric(float64(r.samePattern)/float64(len(rows)), "same-pattern")
	bm.Logf("%d rows, nnz(G) %d: CPU %.3f s (%d cores), GPU %.4f s (device stages %.4f s), %.1fx; "+
		"%d identical patterns, %d bit-identical rows, max rel. diff %.2g",
		a.Rows, g.NNZ(), cpu, runtime.GOMAXPROCS(0), gpu, kt.Total(), cpu/gpu, r.samePattern, r.sameBits, r.maxRel)
}

// reportSetup reports the seconds of a set-up on the CPU and on the GPU,
// their ratio, and the GPU's stages in milliseconds.
func reportSetup(bm *testing.B, cpu, gpu float64, kt afsai.KernelTimes) {
	bm.ReportMetric(cpu, "cpu-s")
	bm.ReportMetric(gpu, "gpu-s")
	bm.ReportMetric(cpu/gpu, "speedup")
	for _, s := range []struct {
		name string
		v    float64
	}{{"upload", kt.Upload}, {"gradient", kt.Gradient}, {"gather", kt.Gather}, {"cholesky", kt.Cholesky},
		{"solve", kt.Solve}, {"assemble", kt.Assemble}, {"download", kt.Download}} {
		bm.ReportMetric(s.v*1e3, s.name+"-ms")
	}
}
