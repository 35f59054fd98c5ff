package cudaspai

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/spai"
)

// diagonalOf returns the own rows' entries in own columns, numbered from
// 0: A's diagonal block, as a rank holds it.
func diagonalOf(l *spai.Local) *csr.Matrix[float64] {
	own, n := l.Own(), l.Count()
	d := &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, 1, n+1)}
	for i := range n {
		for e := own.RowPtr[i]; e < own.RowPtr[i+1]; e++ {
			if c := own.Col[e] - l.First; c >= 0 && c < int64(n) {
				d.ColIdx, d.Val = append(d.ColIdx, int32(c)), append(d.Val, own.Val[e])
			}
		}
		d.RowPtr = append(d.RowPtr, int32(len(d.ColIdx)))
	}
	return d
}

// joinStripes calls f with the local system of each stripe of a as one
// to four ranks (a stripe of rows and the rest collected) and, on more
// than one, with nothing collected, its diagonal block set, named.
func joinStripes(t *testing.T, a *dsmat.Rows, f func(name string, l *spai.Local)) {
	n := a.Count()
	for ranks := 1; ranks <= 4; ranks++ {
		for r := range ranks {
			l := stripeLocal(t, a, r*n/ranks, (r+1)*n/ranks)
			l.Diag = diagonalOf(l)
			f(fmt.Sprintf("rank %d of %d", r, ranks), l)
			if ranks == 1 {
				continue
			}
			alone, err := spai.NewLocal(l.Own())
			if err != nil {
				t.Fatal(err)
			}
			alone.Diag = l.Diag
			f(fmt.Sprintf("rank %d of %d, nothing collected", r, ranks), alone)
		}
	}
}

// hostArrays returns the arrays upload puts on the device for s, a system
// the host translates: row pointers, compact columns and values.
func hostArrays(s *system) ([]int64, []int32, []float64) {
	col := make([]int32, s.entries())
	s.fillCols(col, 0)
	var val []float64
	for _, part := range s.valueParts() {
		val = append(val, part...)
	}
	return s.rowPtr, col, val
}

// joinOnHost returns what spai_join writes for the system s from its
// border b and the diagonal block d, as kernels/spai_join.cu specifies it,
// row after row: each collected row whole; each own row's border entries
// below colBelow, its row of d at colBelow on, then its other border
// entries.
func joinOnHost(s *system, b *border, d *csr.Matrix[float64]) ([]int64, []int32, []float64) {
	l, n := s.l, s.l.Count()
	ptr, col, val := []int64{0}, []int32{}, []float64{}
	held := func(k int) {
		for e := l.HeldPtr[k]; e < l.HeldPtr[k+1]; e++ {
			col, val = append(col, b.heldCols[e]), append(val, l.HeldVal[e])
		}
	}
	edge := 0 // the next own row with border entries
	for r := range s.rows() {
		switch {
		case r < s.below:
			held(r)
		case r >= s.below+n:
			held(r - n)
		default:
			i := r - s.below
			var e, end int64
			if edge < len(b.rows) && int(b.rows[edge]) == i {
				e, end = b.ptr[edge], b.ptr[edge+1]
				edge++
			}
			for ; e < end && b.cols[e] < int32(s.colBelow); e++ {
				col, val = append(col, b.cols[e]), append(val, b.vals[e])
			}
			for q := d.RowPtr[i]; q < d.RowPtr[i+1]; q++ {
				col, val = append(col, int32(s.colBelow)+d.ColIdx[q]), append(val, d.Val[q])
			}
			for ; e < end; e++ {
				col, val = append(col, b.cols[e]), append(val, b.vals[e])
			}
		}
		ptr = append(ptr, int64(len(col)))
	}
	return ptr, col, val
}

// TestJoinedSystem: a system left to the device's join (newSystem joined)
// has the host-translated system's size, foreign columns and pattern
// bound, and its border joined with the diagonal block as spai_join
// specifies gives the host-translated arrays bit for bit, on the stripes
// of one to four ranks, with and without collected rows.
func TestJoinedSystem(t *testing.T) {
	for _, spec := range []string{"convdiff:6:100", "convdiff:5:0"} {
		joinStripes(t, generated(t, spec), func(name string, l *spai.Local) {
			want, err := newSystem(l, false)
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSystem(l, true)
			if err != nil {
				t.Fatal(err)
			}
			if s.rowPtr != nil || s.entries() != want.entries() || s.bytes() != want.bytes() ||
				s.patternBound() != want.patternBound() || !slices.Equal(s.foreign, want.foreign) ||
				s.below != want.below || s.colBelow != want.colBelow {
				t.Fatalf("%s, %s: the joined system's sizes differ from the host's", spec, name)
			}
			ptr, col, val := joinOnHost(s, s.border(), l.Diag)
			wptr, wcol, wval := hostArrays(want)
			if !slices.Equal(ptr, wptr) || !slices.Equal(col, wcol) || !bitsEqual(val, wval) {
				t.Errorf("%s, %s: the border joined with the diagonal block is not the host's system", spec, name)
			}
		})
	}
}

// rounded returns a with its values rounded to float32: a matrix whose
// diagonal block float32 holds exactly.
func rounded(a *dsmat.Rows) *dsmat.Rows {
	r := *a
	r.Val = make([]float64, len(a.Val))
	for k, v := range a.Val {
		r.Val[k] = float64(float32(v))
	}
	return &r
}

// deviceArrays returns the local system's arrays on d, downloaded: joined
// from l.Bound with joined, uploaded whole from the host otherwise.
func deviceArrays(d *Device, l *spai.Local, joined bool) ([]int64, []int32, []float64, error) {
	defer d.Enter()()
	ks, err := d.Lookup(&spaiKernelSet)
	if err != nil {
		return nil, nil, nil, err
	}
	diag := d.boundDiagonal(l)
	if joined != (diag != nil) {
		return nil, nil, nil, fmt.Errorf("the bound block is readable: %t", diag != nil)
	}
	s, err := newSystem(l, joined)
	if err != nil {
		return nil, nil, nil, err
	}
	var a sysArrays
	defer a.free(d)
	var st spai.Stages
	if joined {
		err = a.join(d, ks, s, diag, newClock(), &st)
	} else {
		err = a.upload(d, s)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	ptr, col, val := make([]int64, s.rows()+1), make([]int32, s.entries()), make([]float64, s.entries())
	gpu.DownloadSlice(d.Raw, ptr, a.rowPtr)
	gpu.DownloadSlice(d.Raw, col, a.col)
	gpu.DownloadSlice(d.Raw, val, a.val)
	return ptr, col, val, d.SyncStream()
}

// TestJoinGPU: the local system spai_join makes on the device from the
// bound diagonal block (in float64, and in float32 for a matrix whose
// values float32 holds) and the border is the one the host translates and
// uploads, array for array, bit for bit, on the stripes of one to four
// ranks, with and without collected rows.
func TestJoinGPU(t *testing.T) {
	d := openGPU(t)
	for _, spec := range []string{"convdiff:10:100", "convdiff:8:0"} {
		a := generated(t, spec)
		for _, c := range []struct {
			a    *dsmat.Rows
			prec backend.Precision
		}{{a, backend.Double}, {rounded(a), backend.Single}} {
			joinStripes(t, c.a, func(name string, l *spai.Local) {
				name = fmt.Sprintf("%s, %s, block in %s", spec, name, c.prec)
				block, err := d.Backend().NewMatrix(l.Diag, nil, c.prec)
				if err != nil {
					t.Fatal(err)
				}
				defer block.Free()
				wptr, wcol, wval, err := deviceArrays(d, l, false)
				if err != nil {
					t.Fatalf("%s: uploaded: %v", name, err)
				}
				l.Bound = block
				ptr, col, val, err := deviceArrays(d, l, true)
				if err != nil {
					t.Fatalf("%s: joined: %v", name, err)
				}
				if !slices.Equal(ptr, wptr) || !slices.Equal(col, wcol) || !bitsEqual(val, wval) {
					t.Errorf("%s: the joined system differs from the uploaded one", name)
				}
			})
		}
	}
}
