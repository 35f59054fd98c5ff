package cudaspai

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu/gputest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
	"github.com/fsai-dist/fsai-dist/problem"
	"github.com/fsai-dist/fsai-dist/spai"
)

// openGPU opens device 0 for a test and returns the SPAI row computation
// on it, or skips the test without a GPU (gputest.Open).
func openGPU(t *testing.T) *Device { return New(gputest.Open(t)) }

// generated returns the whole matrix of a problem spec.
func generated(t *testing.T, spec string) *dsmat.Rows {
	t.Helper()
	s, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Generate(0, s.Rows())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sharedMatrix returns the whole shared matrix name of the folder dir
// (testmatrices.Dir; name relative to the SPD folder: "nos4",
// "nonsym/cdde1").
func sharedMatrix(t *testing.T, dir, name string) *dsmat.Rows {
	t.Helper()
	a, err := testmatrices.ReadMTX(filepath.Join(dir, name+".mtx"))
	if err != nil {
		t.Fatal(err)
	}
	return testmatrices.Stripe(a)
}

// setting is a bound on the device's memory use that forces a path.
type setting struct {
	name                                string
	batchBytes, slotBytes, scratchBytes int64
}

// settings are the paths every case takes: shared memory in one batch,
// many batches of rows, every block in global memory in several batches.
var settings = []setting{
	{name: "one batch"},
	{name: "batches of 1 kB", batchBytes: 1 << 10},
	{name: "global memory, workspaces in batches of 32 kB (or two of the largest)", slotBytes: 16, scratchBytes: 32 << 10},
}

// TestRowsGPU: the rows of M computed on the GPU are the host's
// (spai.Rows) bit for bit, with the host's largest block, on convdiff
// problems and shared SPD and nonsymmetric matrices (where testmatrices
// finds them), at k 1 and 2, as one rank and as each of three ranks (a
// stripe of rows and the rest collected), in shared memory and in global
// memory, in one batch and in many.
func TestRowsGPU(t *testing.T) {
	d := openGPU(t)
	eachStripe(t, func(name string, l *spai.Local, ranks int) {
		for _, p := range []spai.Params{spai.DefaultParams(), {Tau: 1, K: 2}} {
			compareDevice(t, d, fmt.Sprintf("%s, tau %g k %d", name, p.Tau, p.K), l, p)
		}
	})
}

// compareDevice compares the rows of l on d with the host's under every
// setting.
func compareDevice(t *testing.T, d *Device, name string, l *spai.Local, p spai.Params) {
	t.Helper()
	want, wst, err := spai.Rows(l, p)
	if err != nil {
		t.Fatal(err)
	}
	all := int64(rowBytes * want.Count()) // one batch's memory
	for _, s := range settings {
		d.batchBytes, d.slotBytes, d.scratchBytes = s.batchBytes, s.slotBytes, s.scratchBytes
		if s.scratchBytes > 0 { // room for two of the largest workspaces at least
			m, n := wst.MaxBlockRows, wst.MaxBlockCols
			d.scratchBytes = max(s.scratchBytes, 2*workspace(m, n, m*n))
		}
		got, gst, err := d.Rows(l, p)
		if err != nil {
			t.Fatalf("%s, %s: %v", name, s.name, err)
		}
		if gst.MaxBlockRows != wst.MaxBlockRows || gst.MaxBlockCols != wst.MaxBlockCols || gst.Batches != d.Batches {
			t.Errorf("%s, %s: largest block %+v on the GPU, %+v on the host", name, s.name, gst, wst)
		}
		if e := rowsDiff(got, want); e != "" {
			t.Errorf("%s, %s: %s", name, s.name, e)
		}
		t.Logf("%s, %s: %d batches, %d problems in global memory in %d batches", name, s.name, d.Batches, d.Scratch,
			d.ScratchBatches)
		if s.batchBytes > 0 && all > s.batchBytes && d.Batches < 2 {
			t.Errorf("%s, %s: %d batches of rows taking %d bytes", name, s.name, d.Batches, all)
		}
		if s.slotBytes > 0 && (d.Scratch != l.Count() || d.ScratchBatches < 2 && l.Count() > 64) {
			t.Errorf("%s, %s: %d of %d problems in global memory, %d batches", name, s.name, d.Scratch, l.Count(),
				d.ScratchBatches)
		}
	}
	d.batchBytes, d.slotBytes, d.scratchBytes = 0, 0, 0
}

// rowsDiff describes the first difference of got from want, bit for bit,
// or returns "".
func rowsDiff(got, want *dsmat.Rows) string {
	if got.First != want.First || !slices.Equal(got.RowPtr, want.RowPtr) || !slices.Equal(got.Col, want.Col) {
		return "the patterns differ"
	}
	for k, v := range want.Val {
		if math.Float64bits(got.Val[k]) != math.Float64bits(v) {
			i, _ := slices.BinarySearch(want.RowPtr, int64(k)+1)
			return fmt.Sprintf("row %d, column %d: %.17g on the GPU, %.17g on the host", want.First+int64(i), want.Col[k]+1,
				got.Val[k], v)
		}
	}
	return ""
}

// TestErrorsGPU: where the host refuses a row of M (a zero diagonal that
// the pattern misses, a rank deficient block), the GPU refuses the same
// row with the same message, in shared and in global memory.
func TestErrorsGPU(t *testing.T) {
	d := openGPU(t)
	for _, c := range []struct {
		name string
		a    *dsmat.Rows
		p    spai.Params
	}{
		{"zero diagonal", rowsOf(3, [][3]float64{{0, 0, 1}, {1, 0, 0.1}, {1, 2, 1}, {2, 2, 1}}),
			spai.Params{Tau: 0.5, K: 1}},
		{"singular", rowsOf(3, [][3]float64{{0, 0, 1}, {1, 1, 1}, {1, 2, 1}, {2, 1, 1}, {2, 2, 1}}),
			spai.Params{Tau: 1, K: 1}},
	} {
		l, err := spai.NewLocal(c.a)
		if err != nil {
			t.Fatal(err)
		}
		_, _, want := spai.Rows(l, c.p)
		if want == nil {
			t.Fatalf("%s: the host computes M", c.name)
		}
		for _, s := range settings {
			d.batchBytes, d.slotBytes, d.scratchBytes = s.batchBytes, s.slotBytes, s.scratchBytes
			if _, _, err := d.Rows(l, c.p); err == nil || err.Error() != want.Error() {
				t.Errorf("%s, %s: %v on the GPU, %v on the host", c.name, s.name, err, want)
			}
		}
		d.batchBytes, d.slotBytes, d.scratchBytes = 0, 0, 0
	}
}

// rowsOf returns the n x n matrix of the entries (row, column, value),
// given in row order with ascending columns.
func rowsOf(n int, entries [][3]float64) *dsmat.Rows {
	a := &dsmat.Rows{N: int64(n), RowPtr: make([]int64, n+1)}
	for _, e := range entries {
		a.RowPtr[int(e[0])+1]++
		a.Col = append(a.Col, int64(e[1]))
		a.Val = append(a.Val, e[2])
	}
	for i := range n {
		a.RowPtr[i+1] += a.RowPtr[i]
	}
	return a
}
