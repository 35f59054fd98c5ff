package spai

import (
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// splitting is a DiagonalDevice on a backend that computes the rows on the
// host (Rows) and splits them as a device does: the diagonal block made
// on the backend, the other entries in the held rows' numbering.
type splitting struct{ be backend.Backend }

func (s splitting) Name() string { return "split" }

func (s splitting) Rows(l *Local, p Params) (*dsmat.Rows, Stats, error) { return Rows(l, p) }

func (s splitting) SplitRows(l *Local, p Params) (*SplitRows, Stats, error) {
	m, st, err := Rows(l, p)
	if err != nil {
		return nil, st, err
	}
	n := m.Count()
	lo, hi := m.First, m.First+int64(n)
	diag := &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	out := &SplitRows{Off: &csr.Matrix[float64]{Cols: len(l.HeldRows), RowPtr: []int32{0}}, Rows: []int32{},
		Held: l.HeldRows}
	for i := range n {
		off := len(out.Off.ColIdx)
		for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
			if c := m.Col[e]; c >= lo && c < hi {
				diag.ColIdx, diag.Val = append(diag.ColIdx, int32(c-lo)), append(diag.Val, m.Val[e])
			} else {
				k, _ := slices.BinarySearch(l.HeldRows, c)
				out.Off.ColIdx, out.Off.Val = append(out.Off.ColIdx, int32(k)), append(out.Off.Val, m.Val[e])
			}
		}
		diag.RowPtr[i+1] = int32(len(diag.ColIdx))
		if len(out.Off.ColIdx) > off {
			out.Rows = append(out.Rows, int32(i))
			out.Off.RowPtr = append(out.Off.RowPtr, int32(len(out.Off.ColIdx)))
		}
	}
	out.Off.Rows = len(out.Rows)
	out.Diag, err = s.be.NewMatrix(diag, nil, backend.Double)
	return out, st, err
}

// TestSplitDevice: M from a DiagonalDevice, its diagonal block bound as
// the device made it and its other entries made into blocks on the host,
// multiplies as M computed and bound on the host, bit for bit, with the
// same nonzeros, on 1 and 3 ranks, at k 1 and 2.
func TestSplitDevice(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := cpu.New(1)
			defer be.Close()
			A := testmatrices.Generated(t, c, "convdiff:8:100")
			for _, p := range []Params{DefaultParams(), {Tau: 1, K: 2}} {
				var y [2][]float64
				var nnz [2]int64
				for k, dev := range []Device{splitting{be}, nil} {
					pre, err := New(A, be, Config{Params: p, Device: dev})
					if err != nil {
						t.Fatal(err)
					}
					if got, want := pre.Info.SetupDevice, map[bool]string{true: "split", false: "cpu"}[dev != nil]; got != want {
						t.Errorf("%d ranks: set up on %s, want %s", np, got, want)
					}
					if d := pre.M.Matrix().Diag != nil; d != (dev == nil) {
						t.Errorf("%d ranks: host diagonal block %t with device %v", np, d, dev)
					}
					y[k], nnz[k] = testmatrices.Product(t, pre.M), pre.Info.NNZ
					pre.Free()
				}
				if !slices.EqualFunc(y[0], y[1], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) ||
					nnz[0] != nnz[1] {
					t.Errorf("rank %d of %d, %+v: M split (%d nonzeros) multiplies differently from M (%d)", c.Rank(), np, p,
						nnz[0], nnz[1])
				}
			}
		})
	}
}
