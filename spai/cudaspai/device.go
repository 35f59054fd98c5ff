// Package cudaspai computes the rows of the SPAI preconditioner (package
// spai) on a GPU: spai.Device on the CUDA backend of package gpu.
//
// The host computes the pattern of every own row of M (spai.Pattern) and
// uploads, once per set-up, the rank's local system (its rows and the
// collected ones, in CSR with int32 columns in a compact numbering that
// keeps the global order: system). The GPU then builds every least-squares
// problem itself, one warp per row of M (kernels/spai_solve.cu): it counts
// the problem's block, |I| x |J| (spai_count), then forms I, the dense
// block A(J,I)' and e_i(I) in a workspace and solves it by Householder QR
// (kernels/spai_qr.cu), with the host's operations in the host's order and
// no fused multiply-add, so the rows are those spai.Rows computes. Only
// the rows' values come back.
//
// The workspaces lie in shared memory, one slot per warp, as many warps a
// block as the slot that nearly every problem of the batch fits allows;
// the problems that do not fit take a workspace in global memory, in
// batches sized to the free memory. The rows are solved in batches whose
// patterns and values fit half the free memory.
//
// Package spai never asks which backend it runs on: the composition root
// hands it New(be) as spai.Config.Device for a CUDA backend be.
package cudaspai

import (
	"fmt"
	"runtime"
	"sort"
	"time"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/spai"
)

// Device computes the SPAI rows on the GPU of one CUDA backend; like the
// backend, it is used from one goroutine at a time.
type Device struct {
	gpu.Raw
	// Batches is how many batches of rows the last Rows took; Scratch is
	// how many of its problems were solved in global memory, in
	// ScratchBatches batches.
	Batches, Scratch, ScratchBatches int
	// batchBytes and scratchBytes, when positive, bound a batch's memory
	// and a batch of global-memory workspaces; slotBytes, when positive,
	// bounds a shared-memory slot (tests).
	batchBytes, scratchBytes, slotBytes int64
}

// New returns the SPAI row computation on the GPU of be.
func New(be *gpu.Backend) *Device { return &Device{Raw: be.Raw()} }

var _ spai.Device = (*Device)(nil)

// Name is the backend's name, "cuda".
func (d *Device) Name() string { return d.Backend().Name() }

// maxCols is the most columns (|J|) of a block the device takes.
const maxCols = 2048

// Rows computes the rank's rows of M (spai.Device). A pattern of more than
// maxCols columns, or a local system that does not fit half the device's
// free memory, declines the whole set-up (spai.ErrDeviceUnsupported), and
// the host computes it.
func (d *Device) Rows(l *spai.Local, p spai.Params) (*dsmat.Rows, spai.Stats, error) {
	defer d.Enter()()
	ks, err := d.Lookup(&spaiKernelSet)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	var st spai.Stats
	clk := newClock()
	ptr, cols, err := spai.Pattern(l, p)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	n := l.Own.Count()
	for i := range n {
		if ptr[i+1]-ptr[i] > maxCols {
			return nil, spai.Stats{}, spai.ErrDeviceUnsupported
		}
	}
	clk.add(&st.Stages.PatternS)
	s, err := newSystem(l)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	defer runtime.KeepAlive(s) // its arrays until the uploads from them are done
	pat := s.localRows(cols)
	clk.add(&st.Stages.SystemS)
	budget, err := d.budget(0)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	if s.bytes() > budget {
		return nil, spai.Stats{}, spai.ErrDeviceUnsupported
	}
	var sys sysArrays
	defer sys.free(d)
	if err := sys.upload(d, s); err != nil {
		return nil, spai.Stats{}, fmt.Errorf("spai: the local system on the GPU: %w", err)
	}
	if err := d.SyncStream(); err != nil {
		return nil, spai.Stats{}, fmt.Errorf("spai: the local system on the GPU: %w", err)
	}
	clk.add(&st.Stages.ToDeviceS)
	if budget, err = d.budget(d.batchBytes); err != nil {
		return nil, spai.Stats{}, err
	}
	b := &batch{d: d, ks: ks, sys: &sys, pat: pat, ptr: ptr, first: l.Own.First, diag0: int32(s.colBelow), clk: clk,
		st: &st.Stages}
	m := &dsmat.Rows{N: l.Own.N, First: l.Own.First, RowPtr: ptr, Col: cols, Val: make([]float64, len(cols))}
	d.Batches, d.Scratch, d.ScratchBatches = 0, 0, 0
	for lo := 0; lo < n; {
		hi := batchEnd(ptr, lo, budget)
		bst, err := b.solve(lo, hi, m.Val[ptr[lo]:ptr[hi]])
		if err != nil {
			return nil, spai.Stats{}, err
		}
		st = st.Max(bst)
		d.Batches++
		lo = hi
	}
	st.Batches = d.Batches
	return m, st, nil
}

// clock times the stages of Rows: each add charges the seconds since the
// last to a stage.
type clock struct{ last time.Time }

func newClock() *clock { return &clock{last: time.Now()} }

// add adds the seconds since the last add (or newClock) to *stage.
func (c *clock) add(stage *float64) {
	now := time.Now()
	*stage += now.Sub(c.last).Seconds()
	c.last = now
}

// budget is half the device's free memory, at most limit where that is
// positive.
func (d *Device) budget(limit int64) (int64, error) {
	free, err := d.FreeMemory()
	if err != nil {
		return 0, err
	}
	budget := int64(free / 2)
	if limit > 0 {
		budget = min(budget, limit)
	}
	return budget, nil
}

// batchBytes is the device memory the problems of own rows [lo, hi) take,
// whose patterns are ptr's: pattern offsets and rows, sizes, statuses and
// the rows of M.
func batchBytes(ptr []int64, lo, hi int) int64 {
	return 8*int64(hi-lo+1) + 12*int64(hi-lo) + 12*(ptr[hi]-ptr[lo])
}

// batchEnd returns the end of the batch of rows from lo: the most rows
// whose memory fits budget, at least one.
func batchEnd(ptr []int64, lo int, budget int64) int {
	n := len(ptr) - 1
	k := sort.Search(n-lo, func(k int) bool { return batchBytes(ptr, lo, lo+k+1) > budget })
	return lo + max(k, 1)
}

// sysArrays are the local system's device arrays.
type sysArrays struct {
	rowPtr, col, val uintptr
}

// upload allocates and fills the arrays of s.
func (a *sysArrays) upload(d *Device, s *system) error {
	var err error
	if a.rowPtr, err = d.Alloc(8*len(s.rowPtr), "SPAI system row pointers"); err != nil {
		return err
	}
	if a.col, err = d.Alloc(4*len(s.col), "SPAI system columns"); err != nil {
		return err
	}
	if a.val, err = d.Alloc(8*len(s.col), "SPAI system values"); err != nil {
		return err
	}
	gpu.UploadSlice(d.Raw, a.rowPtr, s.rowPtr)
	gpu.UploadSlice(d.Raw, a.col, s.col)
	at := a.val
	for _, part := range s.valueParts() {
		gpu.UploadSlice(d.Raw, at, part)
		at += uintptr(8 * len(part))
	}
	return d.Err()
}

// free releases the arrays upload made.
func (a *sysArrays) free(d *Device) { freeAll(d, "SPAI system", a.rowPtr, a.col, a.val) }

// freeAll releases the device arrays ptrs that are set.
func freeAll(d *Device, what string, ptrs ...uintptr) {
	for _, p := range ptrs {
		if p != 0 {
			d.Free(p, what)
		}
	}
}
