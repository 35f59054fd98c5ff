package cudaspai

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/gpu/gputest"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
	"github.com/fsai-dist/fsai-dist/spai"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// devicePatternOf returns the patterns at k = 1 that the device makes for
// l (offsets and global columns), or the error it gives.
func devicePatternOf(d *Device, l *spai.Local, tau float64) ([]int64, []int64, error) {
	defer d.Enter()()
	ks, err := d.Lookup(&spaiKernelSet)
	if err != nil {
		return nil, nil, err
	}
	s, err := newSystem(l, false)
	if err != nil {
		return nil, nil, err
	}
	r := &resident{l: l, s: s, ks: ks}
	defer r.free(d)
	if err := r.sys.upload(d, s); err != nil {
		return nil, nil, err
	}
	if err := r.devicePattern(d, tau); err != nil {
		return nil, nil, err
	}
	pat := make([]int32, r.ptr[len(r.ptr)-1])
	gpu.DownloadSlice(d.Raw, pat, r.pat)
	if err := d.SyncStream(); err != nil {
		return nil, nil, err
	}
	return r.ptr, s.globalRows(pat), nil
}

// TestPatternGPU: the patterns at k = 1 made on the device are
// spai.Pattern's, entry for entry, at tau 0, 0.5, 0.9 and 1, on convdiff
// problems and shared matrices (where testmatrices finds them), as one
// rank and as each of three; where the rows a pattern reaches were not
// collected, the device gives spai.Pattern's error.
func TestPatternGPU(t *testing.T) {
	d := openGPU(t)
	eachStripe(t, func(name string, l *spai.Local, ranks int) {
		for _, tau := range []float64{0, 0.5, 0.9, 1} {
			wantPtr, wantCol, err := spai.Pattern(l, spai.Params{Tau: tau, K: 1})
			if err != nil {
				t.Fatal(err)
			}
			ptr, col, err := devicePatternOf(d, l, tau)
			if err != nil {
				t.Fatalf("%s, tau %g: %v", name, tau, err)
			}
			if !slices.Equal(ptr, wantPtr) || !slices.Equal(col, wantCol) {
				t.Errorf("%s, tau %g: the device's pattern differs from spai.Pattern's", name, tau)
			}
		}
		if ranks == 1 {
			return
		}
		alone, err := spai.NewLocal(l.Own()) // nothing collected
		if err != nil {
			t.Fatal(err)
		}
		_, _, want := spai.Pattern(alone, spai.Params{Tau: 1, K: 1})
		if _, _, err := devicePatternOf(d, alone, 1); err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%s, nothing collected: %v on the GPU, %v on the host", name, err, want)
		}
	})
}

// eachStripe calls f with the local system of each stripe of each test
// case (testCases), as one rank and as each of three (a stripe of rows and
// the rest collected), named.
func eachStripe(t *testing.T, f func(name string, l *spai.Local, ranks int)) {
	for _, m := range testCases(t) {
		for _, ranks := range []int{1, 3} {
			for r := range ranks {
				n := m.a.Count()
				f(fmt.Sprintf("%s, rank %d of %d", m.name, r, ranks), stripeLocal(t, m.a, r*n/ranks, (r+1)*n/ranks), ranks)
			}
		}
	}
}

// testCase is a whole matrix the GPU tests compute M of.
type testCase struct {
	name string
	a    *dsmat.Rows
}

// testCases are convdiff problems and, where testmatrices finds them,
// shared SPD and nonsymmetric matrices.
func testCases(t *testing.T) []testCase {
	var ms []testCase
	for _, spec := range []string{"convdiff:10:100", "convdiff:12:1000", "convdiff:8:0"} {
		ms = append(ms, testCase{spec, generated(t, spec)})
	}
	if dir := testmatrices.Dir(); dir == "" {
		t.Log(testmatrices.Missing + ": the generated problems alone")
	} else {
		for _, name := range []string{"nos4", "494_bus", "nonsym/cdde1", "nonsym/sherman5", "nonsym/orsirr_1", "nonsym/watt_2"} {
			ms = append(ms, testCase{name, sharedMatrix(t, dir, name)})
		}
	}
	return ms
}

// TestSplitRowsGPU: SplitRows leaves on the device the diagonal block of
// the host's rows (spai.Rows), bit for bit, and returns their other
// entries, in the rows that hold some, at k 1 and 2, as one rank and as
// each of three.
func TestSplitRowsGPU(t *testing.T) {
	d := openGPU(t)
	eachStripe(t, func(name string, l *spai.Local, _ int) {
		for _, p := range []spai.Params{spai.DefaultParams(), {Tau: 1, K: 2}} {
			want, _, err := spai.Rows(l, p)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := d.SplitRows(l, p)
			if err != nil {
				t.Fatalf("%s, tau %g k %d: %v", name, p.Tau, p.K, err)
			}
			if e := splitDiff(d, got, want); e != "" {
				t.Errorf("%s, tau %g k %d: %s", name, p.Tau, p.K, e)
			}
			got.Diag.Free()
		}
	})
}

// splitDiff describes where the split rows s differ from the rows want,
// bit for bit, or returns "".
func splitDiff(d *Device, s *spai.SplitRows, want *dsmat.Rows) string {
	diag, _, err := d.Backend().ReadMatrix(s.Diag)
	if err != nil {
		return err.Error()
	}
	lo, hi := want.First, want.First+int64(want.Count())
	off := 0 // the next row of s.Off
	for i := range want.Count() {
		var dc, oc []int64
		var dv, ov []float64
		for e := want.RowPtr[i]; e < want.RowPtr[i+1]; e++ {
			if c := want.Col[e]; c >= lo && c < hi {
				dc, dv = append(dc, c-lo), append(dv, want.Val[e])
			} else {
				oc, ov = append(oc, c), append(ov, want.Val[e])
			}
		}
		a, b := diag.RowPtr[i], diag.RowPtr[i+1]
		gc := make([]int64, 0, b-a)
		for _, c := range diag.ColIdx[a:b] {
			gc = append(gc, int64(c))
		}
		if !slices.Equal(gc, dc) || !bitsEqual(diag.Val[a:b], dv) {
			return fmt.Sprintf("row %d: diagonal block %v %v, want %v %v", lo+int64(i)+1, gc, diag.Val[a:b], dc, dv)
		}
		if len(oc) == 0 {
			continue
		}
		if off >= len(s.Rows) || s.Rows[off] != int32(i) {
			return fmt.Sprintf("row %d: its other entries are not listed", lo+int64(i)+1)
		}
		a, b = s.Off.RowPtr[off], s.Off.RowPtr[off+1]
		var goc []int64
		for _, c := range s.Off.ColIdx[a:b] {
			goc = append(goc, s.Held[c])
		}
		if !slices.Equal(goc, oc) || !bitsEqual(s.Off.Val[a:b], ov) {
			return fmt.Sprintf("row %d: other entries %v %v, want %v %v", lo+int64(i)+1, goc, s.Off.Val[a:b], oc, ov)
		}
		off++
	}
	if off != len(s.Rows) || s.Off.Rows != len(s.Rows) {
		return fmt.Sprintf("%d rows listed, %d with other entries", len(s.Rows), off)
	}
	return ""
}

// bitsEqual reports whether a and b hold the same float64s, bit for bit.
func bitsEqual(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestNewOnDeviceGPU: spai.New with the device binds M's diagonal block
// from the device's memory; M then multiplies as the host's M bound to
// the GPU, bit for bit, with the same nonzeros, on 1 and 2 ranks.
func TestNewOnDeviceGPU(t *testing.T) {
	gputest.Need(t)
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := gputest.Open(t)
			A := testmatrices.Generated(t, c, "convdiff:12:100")
			var y [2][]float64
			var nnz [2]int64
			for k, dev := range []spai.Device{New(be), nil} {
				pre, err := spai.New(A, be, spai.Config{Params: spai.DefaultParams(), Device: dev})
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]string{true: "cuda", false: "cpu"}[dev != nil]; pre.Info.SetupDevice != want {
					t.Errorf("%d ranks: set up on %s, want %s", np, pre.Info.SetupDevice, want)
				}
				y[k], nnz[k] = testmatrices.Product(t, pre.M), pre.Info.NNZ
				pre.Free()
			}
			if !bitsEqual(y[0], y[1]) || nnz[0] != nnz[1] {
				t.Errorf("rank %d of %d: M from the device (%d nonzeros) multiplies differently from the host's (%d)",
					c.Rank(), np, nnz[0], nnz[1])
			}
		})
	}
}

// TestNewForGPU: spai.NewFor reads A's diagonal block where A's operator
// holds it (no copy of the own rows at k = 1: own_s is 0) and its M
// multiplies as spai.New's from the host's system does, bit for bit, with
// the same nonzeros, at k 1 and 2, on 1 to 3 ranks.
func TestNewForGPU(t *testing.T) {
	gputest.Need(t)
	for _, np := range []int{1, 2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := gputest.Open(t)
			A := testmatrices.Generated(t, c, "convdiff:12:100")
			op, err := A.Bind(be, backend.Double)
			if err != nil {
				t.Fatal(err)
			}
			defer op.Free()
			for _, p := range []spai.Params{spai.DefaultParams(), {Tau: 1, K: 2}} {
				cfg := spai.Config{Params: p, Device: New(be)}
				var y [2][]float64
				var nnz [2]int64
				for k, joined := range []bool{true, false} {
					newM := func() (*spai.Preconditioner, error) { return spai.New(A, be, cfg) }
					if joined {
						newM = func() (*spai.Preconditioner, error) { return spai.NewFor(op, cfg) }
					}
					pre, err := newM()
					if err != nil {
						t.Fatal(err)
					}
					if joined && p.K == 1 && pre.Info.OwnS != 0 {
						t.Errorf("%d ranks: own rows copied in %g s with the block bound", np, pre.Info.OwnS)
					}
					y[k], nnz[k] = testmatrices.Product(t, pre.M), pre.Info.NNZ
					pre.Free()
				}
				if !bitsEqual(y[0], y[1]) || nnz[0] != nnz[1] {
					t.Errorf("rank %d of %d, k %d: M from the bound block (%d nonzeros) multiplies differently from M from the host's system (%d)",
						c.Rank(), np, p.K, nnz[0], nnz[1])
				}
			}
		})
	}
}
