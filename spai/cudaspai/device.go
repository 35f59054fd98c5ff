// Package cudaspai computes the rows of the SPAI preconditioner (package
// spai) on a GPU: spai.DiagonalDevice on the CUDA backend of package gpu.
//
// The GPU holds, once per set-up, the rank's local system (its rows and
// the collected ones, in CSR with int32 columns in a compact numbering
// that keeps the global order: system). Where A's operator holds A's
// diagonal block on this GPU (spai.Local.Bound), the host uploads only the
// border, the collected rows and the own rows' entries in other ranks'
// columns, and kernels/spai_join.cu joins it with the block where it lies
// (join.go); otherwise the host uploads the whole system, its columns
// translated where the staging buffer takes them, with no host array of
// their own. At
// k = 1 the GPU makes the pattern of every own row of M from it
// (kernels/spai_pattern.cu: each row's kept columns and its diagonal,
// counted, summed, filled); at larger k the host computes the patterns
// (spai.Pattern) and uploads them. The GPU then builds every least-squares
// problem itself, one warp per row of M (kernels/spai_solve.cu): it counts
// the problem's block, |I| x |J| (spai_count), then forms I, the dense
// block A(J,I)' and e_i(I) in a workspace and solves it by Householder QR
// (kernels/spai_qr.cu), with the host's operations in the host's order and
// no fused multiply-add, so the rows are those spai.Rows computes.
//
// The rows stay on the GPU: SplitRows makes M's diagonal block there
// (the entries in own columns, which the backend binds as it is), and only
// the entries in other ranks' columns come back to the host; Rows copies
// all the rows back (tests).
//
// The workspaces lie in shared memory, one slot per warp, as many warps a
// block as the slot that nearly every problem of the batch fits allows;
// the problems that do not fit take a workspace in global memory, in
// batches sized to the free memory. The local system and two copies of
// M's rows must fit half the free memory; the rows are solved in batches
// whose sizes and statuses fit it too.
//
// Package spai never asks which backend it runs on: the composition root
// hands it New(be) as spai.Config.Device for a CUDA backend be.
package cudaspai

import (
	"fmt"
	"math"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
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

// Rows computes the rank's rows of M (spai.Device) and copies them to the
// host. A pattern of more than maxCols columns, or a local system and two
// copies of M's rows (as computed, then split) that do not fit half the
// device's free memory, decline the whole set-up
// (spai.ErrDeviceUnsupported), and the host computes it.
func (d *Device) Rows(l *spai.Local, p spai.Params) (*dsmat.Rows, spai.Stats, error) {
	defer d.Enter()()
	r, st, err := d.compute(l, p)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	defer r.free(d)
	clk := newClock()
	m, err := r.rows(d)
	clk.add(&st.Stages.FromDeviceS)
	return m, st, err
}

// SplitRows computes the rank's rows of M as Rows does and leaves their
// diagonal block on the device (spai.DiagonalDevice): only the entries in
// other ranks' columns come back.
func (d *Device) SplitRows(l *spai.Local, p spai.Params) (*spai.SplitRows, spai.Stats, error) {
	defer d.Enter()()
	r, st, err := d.compute(l, p)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	defer r.free(d)
	out, err := r.split(d, newClock(), &st.Stages)
	return out, st, err
}

var _ spai.DiagonalDevice = (*Device)(nil)

// resident are the rank's rows of M on the device, in pattern order, with
// the local system they were computed from.
type resident struct {
	l   *spai.Local
	s   *system
	ks  []gpu.Kernel
	sys sysArrays
	// own row i's pattern is entries ptr[i]:ptr[i+1] (a host copy of
	// patPtr); pat holds the patterns' local rows and out the values
	ptr              []int64
	patPtr, pat, out uintptr
}

// free releases r's device arrays.
func (r *resident) free(d *Device) {
	r.sys.free(d)
	freeAll(d, "SPAI rows", r.patPtr, r.pat, r.out)
	r.patPtr, r.pat, r.out = 0, 0, 0
}

// compute computes the rank's rows of M on the device: the local system
// uploaded, the patterns (on the device at k = 1, spai.Pattern's
// otherwise), then the least-squares problems in batches.
func (d *Device) compute(l *spai.Local, p spai.Params) (res *resident, st spai.Stats, err error) {
	if err := p.Check(); err != nil {
		return nil, st, err
	}
	ks, err := d.Lookup(&spaiKernelSet)
	if err != nil {
		return nil, st, err
	}
	clk := newClock()
	diag := d.boundDiagonal(l)
	s, err := newSystem(l, diag != nil)
	if err != nil {
		return nil, st, err
	}
	clk.add(&st.Stages.SystemS)
	r := &resident{l: l, s: s, ks: ks}
	defer func() {
		if err != nil {
			r.free(d)
		}
	}()
	n := l.Count()
	onDevice := p.K == 1 && s.patternBound() < math.MaxInt32
	var cols []int64
	entries := s.patternBound()
	if !onDevice {
		l.Own() // the host's patterns read the own rows: their copy counts in own_s
		clk.restart()
		if r.ptr, cols, err = spai.Pattern(l, p); err != nil {
			return nil, st, err
		}
		entries = int64(len(cols))
		clk.add(&st.Stages.PatternS)
	}
	budget, err := d.budget(0)
	if err != nil {
		return nil, st, err
	}
	// M's rows twice: computed, then split into its blocks
	if s.bytes()+2*(8*int64(n+1)+12*entries) > budget {
		return nil, st, spai.ErrDeviceUnsupported
	}
	if diag != nil {
		err = r.sys.join(d, ks, s, diag, clk, &st.Stages)
	} else {
		err = r.sys.upload(d, s)
	}
	if err != nil {
		return nil, st, fmt.Errorf("spai: the local system on the GPU: %w", err)
	}
	clk.add(&st.Stages.ToDeviceS)
	if onDevice {
		if err := r.devicePattern(d, p.Tau); err != nil {
			return nil, st, err
		}
		clk.add(&st.Stages.PatternS)
	} else if err := r.uploadPattern(d, cols, clk, &st.Stages); err != nil {
		return nil, st, err
	}
	for i := range n {
		if r.ptr[i+1]-r.ptr[i] > maxCols {
			return nil, st, spai.ErrDeviceUnsupported
		}
	}
	if r.out, err = d.Alloc(8*int(r.ptr[n]), "SPAI rows of M"); err != nil {
		return nil, st, err
	}
	if budget, err = d.budget(d.batchBytes); err != nil {
		return nil, st, err
	}
	b := &batch{d: d, r: r, first: l.First, diag0: int32(s.colBelow), clk: clk, st: &st.Stages}
	d.Batches, d.Scratch, d.ScratchBatches = 0, 0, 0
	for lo := 0; lo < n; {
		hi := batchEnd(n, lo, budget)
		bst, err := b.solve(lo, hi)
		if err != nil {
			return nil, st, err
		}
		st = st.Max(bst)
		d.Batches++
		lo = hi
	}
	st.Batches = d.Batches
	return r, st, nil
}

// uploadPattern uploads the patterns the host computed, cols in global
// indices in the rows r.ptr gives.
func (r *resident) uploadPattern(d *Device, cols []int64, clk *clock, st *spai.Stages) error {
	pat := r.s.localRows(cols)
	clk.add(&st.SystemS)
	var err error
	if r.patPtr, err = d.Alloc(8*len(r.ptr), "SPAI pattern offsets"); err != nil {
		return err
	}
	if r.pat, err = d.Alloc(4*len(pat), "SPAI patterns"); err != nil {
		return err
	}
	gpu.UploadSlice(d.Raw, r.patPtr, r.ptr)
	gpu.UploadSlice(d.Raw, r.pat, pat)
	err = d.SyncStream()
	clk.add(&st.ToDeviceS)
	return err
}

// devicePattern makes the patterns at k = 1 on the device from the local
// system there (kernels/spai_pattern.cu): each own row's length, their
// prefix sum, then the rows, and copies the offsets to r.ptr. Where a kept
// column's row was not collected, spai.Pattern names the error.
func (r *resident) devicePattern(d *Device, tau float64) error {
	s, n := r.s, r.l.Count()
	var lens, sums, frow, bad uintptr
	defer func() { freeAll(d, "SPAI pattern lengths", lens, sums, frow, bad) }()
	var err error
	if lens, err = d.Alloc(4*(n+1), "SPAI pattern lengths"); err != nil {
		return err
	}
	if sums, err = d.Alloc(4*((n+gpu.ScanTile)/gpu.ScanTile), "SPAI pattern sums"); err != nil {
		return err
	}
	if bad, err = d.Alloc(4, "SPAI pattern check"); err != nil {
		return err
	}
	if frow, err = d.Alloc(4*len(s.foreign), "SPAI foreign rows"); err != nil {
		return err
	}
	gpu.UploadSlice(d.Raw, frow, s.foreignRows())
	d.Memset32(lens, 0, 1)
	d.Memset32(bad, math.MaxInt32, 1)
	grid := d.Blocks(d.ElementBlocks(n))
	launchPatternCount(d.Raw, r.ks, grid, int32(n), r.sys.rowPtr, r.sys.col, r.sys.val, int32(s.below),
		int32(s.colBelow), tau, frow, lens, bad)
	first := make([]int32, 1)
	gpu.DownloadSlice(d.Raw, first, bad)
	if err := d.Err(); err != nil {
		return err
	}
	if first[0] != math.MaxInt32 { // a row not collected: the host's message
		if _, _, err := spai.Pattern(r.l, spai.Params{Tau: tau, K: 1}); err != nil {
			return err
		}
		return fmt.Errorf("spai: row %d of M: the GPU found a row of its pattern not collected", r.l.First+int64(first[0])+1)
	}
	d.Scan(lens, n+1, sums)
	if r.patPtr, err = d.Alloc(8*(n+1), "SPAI pattern offsets"); err != nil {
		return err
	}
	launchWiden(d.Raw, r.ks, d.Blocks(d.ElementBlocks(n+1)), int64(n+1), lens, r.patPtr)
	r.ptr = make([]int64, n+1)
	gpu.DownloadSlice(d.Raw, r.ptr, r.patPtr)
	if err := d.Err(); err != nil {
		return err
	}
	if r.pat, err = d.Alloc(4*int(r.ptr[n]), "SPAI patterns"); err != nil {
		return err
	}
	launchPatternFill(d.Raw, r.ks, grid, int32(n), r.sys.rowPtr, r.sys.col, r.sys.val, int32(s.below),
		int32(s.colBelow), tau, frow, lens, r.pat)
	return d.SyncStream() // before the lengths are freed
}

// rows copies the rows of M to the host, in global columns.
func (r *resident) rows(d *Device) (*dsmat.Rows, error) {
	nnz := r.ptr[len(r.ptr)-1]
	pat := make([]int32, nnz)
	m := &dsmat.Rows{N: r.l.N, First: r.l.First, RowPtr: r.ptr, Val: make([]float64, nnz)}
	gpu.DownloadSlice(d.Raw, pat, r.pat)
	gpu.DownloadSlice(d.Raw, m.Val, r.out)
	if err := d.Err(); err != nil {
		return nil, err
	}
	m.Col = r.s.globalRows(pat)
	return m, nil
}

// split makes M's diagonal block on the device from the rows
// (kernels/spai_pattern.cu: each row's entries in own columns and in
// others, their prefix sums, then the entries) and copies the other
// entries to the host; the local system is freed first.
func (r *resident) split(d *Device, clk *clock, st *spai.Stages) (out *spai.SplitRows, err error) {
	r.sys.free(d)
	n := r.l.Count()
	var dptr, dcol, dval, optr, ocol, oval, sums uintptr
	defer func() {
		freeAll(d, "SPAI off-diagonal entries", optr, ocol, oval, sums)
		if err != nil {
			freeAll(d, "SPAI diagonal block", dptr, dcol, dval)
		}
	}()
	for _, a := range []struct {
		p     *uintptr
		bytes int
	}{{&dptr, 4 * (n + 1)}, {&optr, 4 * (n + 1)}, {&sums, 4 * ((n + gpu.ScanTile) / gpu.ScanTile)}} {
		if *a.p, err = d.Alloc(a.bytes, "SPAI split row pointers"); err != nil {
			return nil, err
		}
	}
	d.Memset32(dptr, 0, 1)
	d.Memset32(optr, 0, 1)
	grid := d.Blocks(d.ElementBlocks(n))
	launchSplitCount(d.Raw, r.ks, grid, int32(n), r.patPtr, r.pat, int32(r.s.below), dptr, optr)
	d.Scan(dptr, n+1, sums)
	d.Scan(optr, n+1, sums)
	total := make([]int32, 2)
	gpu.DownloadSlice(d.Raw, total[:1], dptr+uintptr(4*n))
	gpu.DownloadSlice(d.Raw, total[1:], optr+uintptr(4*n))
	if err := d.Err(); err != nil {
		return nil, err
	}
	dnnz, onnz := int(total[0]), int(total[1])
	for _, a := range []struct {
		p     *uintptr
		bytes int
	}{{&dcol, 4 * dnnz}, {&dval, 8 * dnnz}, {&ocol, 4 * onnz}, {&oval, 8 * onnz}} {
		if *a.p, err = d.Alloc(a.bytes, "SPAI split entries"); err != nil {
			return nil, err
		}
	}
	launchSplitFill(d.Raw, r.ks, grid, int32(n), r.patPtr, r.pat, r.out, int32(r.s.below), dptr, dcol, dval, optr, ocol,
		oval)
	if err := d.SyncStream(); err != nil {
		return nil, err
	}
	clk.add(&st.AssembleS)
	out = &spai.SplitRows{Held: r.l.HeldRows, Rows: []int32{}}
	if out.Off, out.Rows, err = offEntries(d, n, onnz, optr, ocol, oval, len(r.l.HeldRows)); err != nil {
		return nil, err
	}
	clk.add(&st.FromDeviceS)
	out.Diag = d.AdoptMatrix(n, n, dnnz, backend.Double, gpu.MatrixArrays{RowPtr: dptr, Col: dcol, Val: dval})
	return out, nil
}

// offEntries copies the onnz entries of the n own rows in other ranks'
// columns (row pointers optr, columns ocol among the held rows of the
// system, values oval) to the host, as the rows that hold some: a block of
// those rows and their list.
func offEntries(d *Device, n, onnz int, optr, ocol, oval uintptr, held int) (*csr.Matrix[float64], []int32, error) {
	if onnz == 0 {
		return &csr.Matrix[float64]{Cols: held, RowPtr: []int32{0}}, []int32{}, nil
	}
	ptr := make([]int32, n+1)
	a := &csr.Matrix[float64]{Cols: held, ColIdx: make([]int32, onnz), Val: make([]float64, onnz)}
	gpu.DownloadSlice(d.Raw, ptr, optr)
	gpu.DownloadSlice(d.Raw, a.ColIdx, ocol)
	gpu.DownloadSlice(d.Raw, a.Val, oval)
	if err := d.Err(); err != nil {
		return nil, nil, err
	}
	rows, rowPtr := listRows(ptr)
	a.Rows, a.RowPtr = len(rows), rowPtr
	return a, rows, nil
}

// listRows returns the rows that hold entries under the row pointers ptr,
// and the row pointers of those rows alone.
func listRows(ptr []int32) (rows, rowPtr []int32) {
	rows, rowPtr = []int32{}, []int32{0}
	for i := range len(ptr) - 1 {
		if ptr[i+1] > ptr[i] {
			rows = append(rows, int32(i))
			rowPtr = append(rowPtr, ptr[i+1])
		}
	}
	return rows, rowPtr
}

// clock times the stages of Rows: each add charges the seconds since the
// last to a stage.
type clock struct{ last time.Time }

func newClock() *clock { return &clock{last: time.Now()} }

// restart leaves the seconds since the last add out of every stage.
func (c *clock) restart() { c.last = time.Now() }

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

// rowBytes is the device memory a batch takes per row: its block's sizes
// and its status.
const rowBytes = 12

// batchEnd returns the end of the batch of the n rows from lo: the most
// rows whose memory fits budget, at least one.
func batchEnd(n, lo int, budget int64) int {
	return lo + int(min(int64(n-lo), max(budget/rowBytes, 1)))
}

// sysArrays are the local system's device arrays.
type sysArrays struct {
	rowPtr, col, val uintptr
}

// alloc allocates the arrays of s.
func (a *sysArrays) alloc(d *Device, s *system) error {
	var err error
	if a.rowPtr, err = d.Alloc(8*(s.rows()+1), "SPAI system row pointers"); err != nil {
		return err
	}
	nnz := int(s.entries())
	if a.col, err = d.Alloc(4*nnz, "SPAI system columns"); err != nil {
		return err
	}
	a.val, err = d.Alloc(8*nnz, "SPAI system values")
	return err
}

// upload allocates and fills the arrays of s from the host.
func (a *sysArrays) upload(d *Device, s *system) error {
	if err := a.alloc(d, s); err != nil {
		return err
	}
	nnz := int(s.entries())
	gpu.UploadSlice(d.Raw, a.rowPtr, s.rowPtr)
	gpu.UploadFunc(d.Raw, a.col, nnz, s.fillCols)
	at := a.val
	for _, part := range s.valueParts() {
		gpu.UploadSlice(d.Raw, at, part)
		at += uintptr(8 * len(part))
	}
	return d.SyncStream() // s's arrays may go
}

// free releases the arrays upload made.
func (a *sysArrays) free(d *Device) {
	freeAll(d, "SPAI system", a.rowPtr, a.col, a.val)
	*a = sysArrays{}
}

// freeAll releases the device arrays ptrs that are set.
func freeAll(d *Device, what string, ptrs ...uintptr) {
	for _, p := range ptrs {
		if p != 0 {
			d.Free(p, what)
		}
	}
}
