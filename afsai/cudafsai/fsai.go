package cudafsai

import (
	"fmt"
	"github.com/fsai-dist/fsai-dist/gpu"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// The adaptive FSAI set-up on the GPU (paper 001 sections 2-3), in single
// precision: Device implements afsai.Device.
//
// A is uploaded once. The requested rows are computed in batches as large as
// half the free device memory allows (usually all at once). Per step, a few
// kernels run over all rows of the batch; rows that stop leave the work
// (their threads return at once), and the steps end early when no row is
// left:
//
//	fsai_solve      g = -L'^-1 y (cholesky.cu)
//	fsai_kapgrad    Kaporin gradient, the StepSize best new columns (kapgrad.cu)
//	fsai_sysgather  the new rows of A[P,P] and A[P,i] (sysgather.cu)
//	fsai_border     bordered Cholesky, psi, breakdown and stopping tests (Eps, Stall) (cholesky.cu)
//
// then a final solve and fsai_assemble, which writes the rows of G scaled by
// 1/sqrt(psi) in CSR on the device. The kernels repeat the CPU's float32
// operations in the CPU's order (kernels/fsai.cuh), so G is the one that
// afsai.Adaptive computes from the same float32 A, bit for bit.
//
// fsaiRun, which holds A and the batch state on the device and runs the
// batches, is shared with the set-up on given patterns (fixed.go), which
// grows its rows in one step and keeps its fsaiRun from one Compute of a
// prepared plan to the next: only A's values change.

// AdaptiveSetup computes afsai.Adaptive(a, rows, p) on the GPU: the rows of
// the adaptive FSAI factor G of a for the requested local rows, in the same
// layout, with the same Stats, and the device seconds of each stage, for
// any Params (Scaled and Stall included). Input that Adaptive refuses is
// refused alike; rows too long for the gradient's shared-memory table,
// Params fields that the kernels do not implement, and a row's state larger
// than half the free device memory give an error wrapping
// afsai.ErrDeviceUnsupported.
func (b *Device) AdaptiveSetup(a *csr.Matrix[float32], rows []int, p afsai.Params) (*csr.Matrix[float32], afsai.Stats, afsai.KernelTimes, error) {
	res, err := b.adaptiveWhole(a, rows, p, fsaiJob{})
	return res.g, res.st, res.kt, err
}

// adaptiveWhole is AdaptiveSetup as job says (tests set its maxBatch).
func (b *Device) adaptiveWhole(a *csr.Matrix[float32], rows []int, p afsai.Params, job fsaiJob) (fsaiResult, error) {
	diag, err := afsai.CheckAdaptive(a, rows, p)
	if err != nil {
		return fsaiResult{}, err
	}
	return b.adaptiveSetup(fsaiMatrix{whole: a}, longestRow(a), diag, int32s(rows), p, job)
}

// int32s returns rows as int32s, the form the kernels read, converted on
// all cores.
func int32s(rows []int) []int32 {
	return parallel.Map(rows, func(r int) int32 { return int32(r) })
}

// fsaiMatrix is the matrix a set-up reads: whole on the host, or a rank's
// local system in the two parts of an afsai.Split, which newFSAIRun joins
// on the device (fsai_join.go). The set-up of a split matrix computes the
// rows it is given or, given none, its own rows, split.Own and after,
// which the join lists on the device.
type fsaiMatrix struct {
	whole *csr.Matrix[float32]
	split *afsai.Split
}

// size returns the matrix's rows and entries.
func (a fsaiMatrix) size() (rows, nnz int) {
	if a.split != nil {
		return a.split.Size()
	}
	return a.whole.Rows, a.whole.NNZ()
}

// count returns how many rows a set-up of a computes: rows, or, for nil
// rows, a split matrix's own rows.
func (a fsaiMatrix) count(rows []int32) int {
	if rows == nil && a.split != nil {
		return a.split.Diag.Rows
	}
	return len(rows)
}

// adaptiveSetup runs the adaptive set-up of p for the rows of a (nil for a
// split matrix: all its own rows), checked by the caller, whose longest row has longest entries and whose diagonal
// is diag (nil for a split matrix, whose join makes it), as job says: its
// keep, own and maxBatch (tests run several batches); the rest of the job
// is filled in here.
func (b *Device) adaptiveSetup(a fsaiMatrix, longest int, diag []float32, rows []int32, p afsai.Params, job fsaiJob) (fsaiResult, error) {
	pl, err := planFSAI(longest, p)
	if err != nil {
		return fsaiResult{}, err
	}
	s := fsaiSetup{eps: p.Eps, stall: p.Stall}
	if p.Scaled {
		s.scaled = 1
	}
	job.name, job.pl, job.setup, job.grow, job.longest = "adaptive FSAI", pl, s, (*fsaiRun).adaptiveSteps, longest
	return b.runFSAI(a, diag, rows, job)
}

// longestRow returns the most entries of a row of a.
func longestRow(a *csr.Matrix[float32]) int {
	n := 0
	for i := range a.Rows {
		n = max(n, int(a.RowPtr[i+1]-a.RowPtr[i]))
	}
	return n
}

// fsaiJob is a set-up that an fsaiRun runs: its plan, the scalars of the
// kernels' parameters that it sets (newFSAIRun fills in the rest), and grow,
// which builds the patterns, factors and g of a batch's rows after
// fsai_init.
type fsaiJob struct {
	name  string // for errors: "adaptive FSAI"
	pl    fsaiPlan
	setup fsaiSetup
	// outLen, when known, is the number of entries of G: G's host arrays
	// are then page-locked and reused by every compute. 0: unknown (the
	// adaptive set-up, whose rows stop early), G's arrays are allocated
	// batch by batch with the entries its rows hold.
	outLen   int
	maxBatch int // the most rows per batch; 0: as many as memory allows
	// levelRows is the fewest active rows that the adaptive steps move
	// into a level of their own; 0: minLevelRows per multiprocessor
	// (tests move a few rows)
	levelRows int
	// levelsApart puts the levels in an allocation of their own even
	// where the batch's dead Cholesky factors hold them (tests)
	levelsApart bool
	// patBytes is the device memory of the patterns of all rows, which a
	// set-up on given patterns keeps instead of a batch's (fixed.go); 0:
	// the batch holds its own.
	patBytes int
	// plan, when set, makes pl once A and the rows are on the device
	// (s: A there, rows in r.rowsDev), before the batches are sized: static
	// FSAI learns its longest pattern so
	plan func(r *fsaiRun, s fsaiSetup) error
	grow func(r *fsaiRun, first, nb int) error
	// keep leaves G's diagonal block on the device (AdaptiveFactor): the
	// rows are the local rows own and after, and the batches assemble them
	// into fsaiResult.kept instead of bringing G to the host.
	keep bool
	own  int
	// longest is the most entries of a row of the matrix (the plan's)
	longest int
	// hold keeps the run for a second part of the rows (rowsRun): the
	// batches leave their state allocated and runFSAI hands the run over
	// in fsaiResult.run instead of freeing it
	hold bool
	// interior computes only the interior rows of a split matrix: its own
	// rows farther than hops from every own row in seeds in the graph of
	// its diagonal block (fsai_interior.go); fsaiResult.near lists the
	// others
	interior bool
	seeds    []int32
	hops     int
}

// fsaiResult is what a set-up computed: G on the host, or, for a job that
// keeps it, its diagonal block on the device and its other entries on the
// host (kept); its statistics and the device seconds of its stages.
type fsaiResult struct {
	g    *csr.Matrix[float32]
	kept *keptRows
	st   afsai.Stats
	kt   afsai.KernelTimes
	run  *fsaiRun // the run of a job that holds it
	near []int32  // the own rows that a job of interior rows left out
}

// runFSAI computes the rows of G for rows of a (nil for a split matrix:
// all its own rows), whose diagonal is diag (nil for a split matrix, whose
// join makes it), as job says.
func (b *Device) runFSAI(a fsaiMatrix, diag []float32, rows []int32, job fsaiJob) (fsaiResult, error) {
	if a.count(rows) == 0 {
		return b.noRows(a, job)
	}
	r, err := b.newFSAIRun(a, rows, job)
	if err != nil {
		return fsaiResult{}, err
	}
	if r.rows == 0 { // no interior rows: newFSAIRun freed the run
		res, err := b.noRows(a, job)
		res.near = r.near
		return res, err
	}
	held := false
	defer func() {
		if !held {
			r.free()
		}
	}()
	var val []float32 // a split matrix's values are on the device
	if a.whole != nil {
		val = a.whole.Val
	}
	g, st, err := r.compute(val, diag)
	if err != nil {
		r.kept.free()
		return fsaiResult{st: st, kt: r.kt}, err
	}
	res := fsaiResult{st: st, kt: r.kt, kept: r.kept, near: r.near}
	if res.kept == nil {
		out := *g
		res.g = &out
	}
	if job.hold {
		res.run, held = r, true
	}
	return res, nil
}

// noRows is the result of a set-up of a for no rows.
func (b *Device) noRows(a fsaiMatrix, job fsaiJob) (fsaiResult, error) {
	n, _ := a.size()
	res := fsaiResult{g: &csr.Matrix[float32]{Cols: n, RowPtr: make([]int32, 1)}}
	if job.keep {
		d, err := b.Backend().NewMatrix(&csr.Matrix[float64]{RowPtr: make([]int32, 1)}, nil, backend.Single)
		if err != nil {
			return fsaiResult{}, err
		}
		res.kept = &keptRows{left: res.g, diag: d.(*gpu.Matrix)}
	}
	return res, nil
}

// fsaiRun is a set-up on the device for one matrix structure and one list
// of rows: A's row pointers and columns and the rows on the device, the
// state of a batch of rows, G's output arrays, and the host memory that G
// and a batch's row lengths come back to. compute computes G for values of
// A; the adaptive set-up computes once, a prepared plan on given patterns
// (fixed.go) once per Compute.
type fsaiRun struct {
	b    *Device
	fn   fsaiKernels
	job  fsaiJob
	rows int // the requested rows
	nb   int // rows per batch
	bufs fsaiBuffers
	tm   stageTimer
	l    *fsaiLauncher
	kt   afsai.KernelTimes // compute adds the device seconds of its stages

	rowsDev                uintptr    // the requested rows, int32
	near                   []int32    // the own rows that a job of interior rows leaves out
	lists                  [2]uintptr // the active rows of a step and of the next (adaptiveSteps allocates them)
	outCol, outVal, outPtr uintptr    // a batch's rows of G (not for a job that keeps G)
	// placed, when set, receives the rows on the device instead of the
	// host (the values-only update, fixed_place.go).
	placed *placedRows

	host              *hostWords
	cols              []int32   // G's columns (host)
	vals              []float32 // and values
	lens, states, ptr []int32   // a batch's pattern lengths, row states and row pointers into its rows of G
	g                 csr.Matrix[float32]
	// parts are the batches' rows of G, each of its exact size, joined
	// once all are known, when G's arrays are not page-locked (the
	// adaptive set-up, which learns G's size batch by batch): a batch's
	// rows then come back through the backend's staging buffer
	// (gpu.DownloadSlice).
	parts []gPart

	keptRun // for a job that keeps G on the device (fsai_keep.go)
	// lv holds the levels of a batch's adaptive steps (fsai_level.go):
	// nil before the first level, then tail, the batch's dead Cholesky
	// factors, or levels, an allocation made where the tail was too small
	// and kept for the batches after
	lv           *arena
	tail, levels arena
}

// gPart is a batch's rows of G: their columns and values.
type gPart struct {
	cols []int32
	vals []float32
}

// newFSAIRun puts the structure of a and the rows on the device (a split
// matrix whole, values and diagonal too; its own rows when rows is nil),
// and allocates the state of batches as large as half the free device
// memory then allows (less the job's patterns, and at most job.maxBatch
// rows): usually all rows at once. There must be rows; a job of interior
// rows that finds none returns a run of no rows that holds nothing.
func (b *Device) newFSAIRun(a fsaiMatrix, rows []int32, job fsaiJob) (*fsaiRun, error) {
	defer b.Enter()()
	if b.Err() != nil {
		return nil, b.Err()
	}
	fn, err := b.fsaiKernels()
	if err != nil {
		return nil, err
	}
	n, nnz := a.size()
	r := &fsaiRun{b: b, fn: fn, job: job, rows: a.count(rows), bufs: fsaiBuffers{b: b}, tm: stageTimer{b: b}}
	s := job.setup
	s.tol = 64 * math.Ldexp(1, -24)
	s.rowptr = r.bufs.alloc(4*(n+1), "A row pointers")
	s.col = r.bufs.alloc(4*nnz, "A columns")
	s.val = r.bufs.alloc(4*nnz, "A values")
	s.diag = r.bufs.alloc(4*n, "A diagonal")
	r.rowsDev = r.bufs.alloc(4*r.rows, "requested rows")
	if r.bufs.err != nil {
		r.bufs.free()
		return nil, r.bufs.err
	}
	r.tm.start()
	if a.split != nil {
		err = r.join(a.split, &s, rows == nil && !job.interior)
	} else {
		gpu.UploadSlice(b.Raw, s.rowptr, a.whole.RowPtr)
		gpu.UploadSlice(b.Raw, s.col, a.whole.ColIdx)
	}
	if rows != nil {
		gpu.UploadSlice(b.Raw, r.rowsDev, rows)
	}
	if err == nil && job.interior {
		r.near, err = r.interior(&s, a.split.Own, a.split.Diag.Rows)
	}
	r.tm.mark(&r.kt.Upload)
	if err == nil {
		err = r.tm.collect()
	}
	runtime.KeepAlive(rows)
	if err == nil && r.rows > 0 && job.plan != nil {
		err = job.plan(r, s)
	}
	if err == nil && r.rows > 0 {
		s.mmax, s.s = int64(r.job.pl.mmax), int64(r.job.pl.s)
		err = r.allocBatches(&s, n)
	}
	if err != nil || r.rows == 0 {
		r.tm.free()
		r.bufs.free()
		return r, err
	}
	r.l = newFSAILauncher(b, fn, s)

	nb := r.nb
	if job.keep { // a kept G's batches are sized on the device (assembleKept)
		nb = 0
	}
	r.host = b.newHostWords(2*job.outLen + 3*nb + 1)
	r.cols, r.vals = r.host.int32s(job.outLen), r.host.float32s(job.outLen)
	r.lens, r.states, r.ptr = r.host.int32s(nb), r.host.int32s(nb), r.host.int32s(nb+1)
	r.g = csr.Matrix[float32]{Rows: r.rows, Cols: n}
	if !job.keep { // a job that keeps G builds its block's row pointers (startKept)
		r.g.RowPtr = make([]int32, r.rows+1)
	}
	return r, nil
}

// allocBatches sizes the batches by the free device memory, once A is on
// the device, and allocates their state and G's arrays, for a matrix of n
// columns.
func (r *fsaiRun) allocBatches(s *fsaiSetup, n int) error {
	b, job, pl := r.b, r.job, r.job.pl
	free, err := b.FreeMemory()
	if err != nil {
		return err
	}
	nb := 0
	if avail := int64(free/2) - int64(job.patBytes); avail > 0 {
		nb = min(r.rows, int(avail/int64(pl.rowBytes())))
	}
	if job.maxBatch > 0 {
		nb = min(nb, job.maxBatch)
	}
	if nb < 1 {
		return fmt.Errorf("gpu: %s: %d bytes per row, %d for the patterns of all rows, %s: %w", job.name, pl.rowBytes(),
			job.patBytes, b.Driver().MemInfo(), afsai.ErrDeviceUnsupported)
	}
	r.nb = nb
	allocBatch(&r.bufs, s, pl, nb, job.patBytes == 0)
	if job.keep { // G's arrays are allocated at their size once it is known
		r.startKept(r.rows, n, nb)
	} else {
		r.outPtr = r.bufs.alloc(4*(nb+1), "G row pointers")
		r.outCol = r.bufs.alloc(4*nb*(pl.mmax+1), "G columns")
		r.outVal = r.bufs.alloc(4*nb*(pl.mmax+1), "G values")
	}
	return r.bufs.err
}

// scratch returns the afsai.DeviceFactor's Scratch of a held run:
// retire; nil for no run.
func (r *fsaiRun) scratch() func() {
	if r == nil {
		return nil
	}
	return r.retire
}

// retire is free with the batch state and the levels, most of the run's
// device memory, kept by the backend as spare (gpu.Raw.Retire).
func (r *fsaiRun) retire() {
	ptrs := r.bufs.ptrs
	r.bufs.ptrs = nil
	if r.levels.base != 0 {
		ptrs = append(ptrs, r.levels.base)
		r.levels = arena{}
	}
	r.free()
	defer r.b.Enter()()
	r.b.Retire(ptrs)
}

// free releases the device memory, the events and the host memory's
// registration; G's host arrays stay valid.
func (r *fsaiRun) free() {
	defer r.b.Enter()()
	r.l.close()
	r.tm.free()
	r.bufs.free()
	r.freeChunks()
	if r.levels.base != 0 {
		r.b.Free(r.levels.base, "levels of the adaptive steps")
	}
	if r.diagPtr != 0 { // a kept G's row pointers that no block took
		r.b.Free(r.diagPtr, "G row pointers")
	}
	r.host.release()
}

// compute uploads A's values val and diagonal diag, computes the rows of G
// batch by batch and returns G and its statistics, and adds the device time
// of each stage to r.kt. A job that keeps G leaves it in r.kept instead, and
// the G returned then holds only its row count. With job.outLen set, G's arrays are r's
// page-locked host memory, overwritten by the next compute; else they are
// allocated for G, batch by batch at the size of its rows, and joined at
// the end when there are several batches.
func (r *fsaiRun) compute(val, diag []float32) (*csr.Matrix[float32], afsai.Stats, error) {
	b := r.b
	var st afsai.Stats
	defer b.Enter()()
	if b.Err() != nil {
		return nil, st, b.Err()
	}
	s := &r.l.params.setup
	r.tm.start()
	gpu.UploadSlice(b.Raw, s.val, val)
	gpu.UploadSlice(b.Raw, s.diag, diag)
	r.tm.mark(&r.kt.Upload)
	g := &r.g
	g.ColIdx, g.Val = r.cols[:0], r.vals[:0]
	for lo := 0; lo < r.rows; lo += r.nb {
		if err := r.batch(lo, min(r.nb, r.rows-lo), &st); err != nil {
			return nil, st, err
		}
	}
	if r.parts != nil {
		g.ColIdx, g.Val = joinParts(r.parts, int(g.RowPtr[g.Rows]))
		r.parts = nil
	}
	if r.job.keep {
		if err := r.joinKept(); err != nil {
			return nil, st, err
		}
	}
	runtime.KeepAlive(val)
	runtime.KeepAlive(diag)
	return g, st, b.Err()
}

// joinParts returns the columns and values of parts, nnz in all, one after
// the other: those of the only part as they are, else copied on all cores
// into arrays allocated once.
func joinParts(parts []gPart, nnz int) ([]int32, []float32) {
	if len(parts) == 1 {
		return parts[0].cols, parts[0].vals
	}
	cols, vals := make([]int32, nnz), make([]float32, nnz)
	at := 0
	for _, p := range parts {
		parallel.For(len(p.cols), func(_, lo, hi int) {
			copy(cols[at+lo:at+hi], p.cols[lo:hi])
			copy(vals[at+lo:at+hi], p.vals[lo:hi])
		})
		at += len(p.cols)
	}
	return cols, vals
}

// fsaiBroken is FSAI_BROKEN of kernels/fsai.cuh: the row state of a
// Cholesky breakdown.
const fsaiBroken = 2

// batch computes the nb rows of G from row first on and appends them to
// r.g, or to r.parts when they come through the staging buffer; st
// collects the statistics.
func (r *fsaiRun) batch(first, nb int, st *afsai.Stats) error {
	b, l, tm, kt := r.b, r.l, &r.tm, &r.kt
	g := &r.g
	s := &l.params.setup
	s.nb = int64(nb)
	s.rows = r.rowsDev + uintptr(4*first)
	tm.start()
	l.launchInit(l.perRow(nb))
	if err := r.job.grow(r, first, nb); err != nil {
		return err
	}
	if r.job.keep { // sized and assembled on the device
		return r.assembleKept(first, nb, st)
	}

	// Row lengths and breakdowns give the statistics and the row pointers.
	r.host.wait()
	b.Download(unsafe.Pointer(&r.lens[0]), s.len, 4*nb)
	b.Download(unsafe.Pointer(&r.states[0]), s.state, 4*nb)
	if b.SyncStream() != nil {
		return b.Err()
	}
	tm.mark(&kt.Download)
	base := st.NNZ // G's entries before this batch
	nnz := int(r.batchStats(nb, st))
	if err := r.addEntries(st, int64(nnz)); err != nil {
		return err
	}
	if r.placed != nil {
		return r.placeRows(first, nb)
	}
	r.ptr[0] = 0
	parallel.Scan(r.ptr[:nb+1], func(k int) int32 { return r.lens[k] + 1 })
	parallel.For(nb, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			g.RowPtr[first+k+1] = int32(base) + r.ptr[k+1]
		}
	})

	b.Upload(r.outPtr, unsafe.Pointer(&r.ptr[0]), 4*(nb+1))
	l.launchAssemble(l.perRow(nb), 0, r.outPtr, 0, r.outCol, r.outVal, 0, 0, 0, 0)
	tm.mark(&kt.Assemble)
	if r.job.outLen > 0 { // into G's page-locked arrays, which hold all rows
		g.ColIdx = slices.Grow(g.ColIdx, nnz)[:int(base)+nnz]
		g.Val = slices.Grow(g.Val, nnz)[:int(base)+nnz]
		b.Download(unsafe.Pointer(&g.ColIdx[base]), r.outCol, 4*nnz)
		b.Download(unsafe.Pointer(&g.Val[base]), r.outVal, 4*nnz)
		b.SyncStream()
	} else { // through the staging buffer into arrays of the batch's size
		p := gPart{cols: make([]int32, nnz), vals: make([]float32, nnz)}
		gpu.DownloadSlice(b.Raw, p.cols, r.outCol)
		gpu.DownloadSlice(b.Raw, p.vals, r.outVal)
		r.parts = append(r.parts, p)
	}
	if b.Err() != nil {
		return b.Err()
	}
	tm.mark(&kt.Download)
	return tm.collect()
}

// addEntries adds a batch's nnz entries of G to st, or refuses a G of more
// entries than int32 row pointers hold.
func (r *fsaiRun) addEntries(st *afsai.Stats, nnz int64) error {
	if st.NNZ+nnz > math.MaxInt32 {
		return fmt.Errorf("gpu: %s: G has more than %d entries, more than a CSR block's int32 row pointers hold",
			r.job.name, math.MaxInt32)
	}
	st.NNZ += nnz
	return nil
}

// batchStats adds the largest pattern and the breakdowns of the batch's nb
// rows (their lengths and states are on the host) to st, on all cores, and
// returns their entries of G.
func (r *fsaiRun) batchStats(nb int, st *afsai.Stats) int64 {
	type part struct {
		maxPattern, broken int
		nnz                int64
	}
	parts := make([]part, parallel.Chunks(nb))
	parallel.For(nb, func(c, lo, hi int) {
		var p part // a local: the chunks' parts share cache lines
		for k := lo; k < hi; k++ {
			p.maxPattern = max(p.maxPattern, int(r.lens[k]))
			p.nnz += int64(r.lens[k]) + 1
			if r.states[k] == fsaiBroken {
				p.broken++
			}
		}
		parts[c] = p
	})
	var nnz int64
	for _, p := range parts {
		st.MaxPattern = max(st.MaxPattern, p.maxPattern)
		st.FallbackRows += p.broken
		nnz += p.nnz
	}
	return nnz
}

// adaptiveSteps is the grow of the adaptive set-up: the pattern-growing
// steps of the nb rows of the batch, until no row is active, and g. The
// first step works on all rows. Once at most half of a level's rows are
// active, the next steps work on those only: moved into a level of their
// own (fsai_level.go) or, for few rows or short of memory, through the
// list of them that fsai_border writes (the level's lists, in turn).
func (r *fsaiRun) adaptiveSteps(_, nb int) error {
	b, l, tm, kt := r.b, r.l, &r.tm, &r.kt
	if r.lists[0] == 0 { // with the first batch: only this grow lists rows
		for k := range r.lists {
			r.lists[k] = r.bufs.alloc(4*r.nb, "active rows")
		}
		if r.bufs.err != nil {
			return r.bufs.err
		}
	}
	s := &l.params.setup // the level the kernels work on
	levels := []*fsaiLevel{{setup: *s, lists: r.lists}}
	defer func() {
		r.lv, r.levels.used, r.levels.err = nil, 0, nil
		*s = levels[0].setup // every kernel outside the steps sees the batch
	}()
	n := nb // rows in this step
	// warpRows says whether a kernel runs a warp per row: on at most perSM
	// rows per multiprocessor, whose patterns fit
	warpRows := func(perSM int) bool { return n <= perSM*b.SMs() && r.job.pl.mmax <= warpRowPattern }
	solve := func(all int32) {
		if warpRows(warpSolveRows) {
			l.launchSolveWarp(l.perWarp(n), all)
		} else {
			l.launchSolve(l.perRow(n), all)
		}
		tm.mark(&kt.Solve)
	}
	for step := 0; step < r.job.pl.steps; step++ {
		if step > 0 {
			solve(0)
		}
		pl := &r.job.pl
		rows, lanes, bits := pl.rows[step], pl.lanes[step], pl.bits[step]
		l.launchKapgrad(b.Grid(ceilDiv(n, rows), rows*lanes, rows*slotBytes<<bits),
			lanes/32, int32(bits)) // 8 or 32 lanes
		tm.mark(&kt.Gradient)
		width := (step + 1) * pl.s
		l.launchSysgather(l.perRow(pl.s*width*n), int32(width))
		tm.mark(&kt.Gather)
		if b.Err() == nil {
			b.Fail(b.Driver().MemsetD32Async(s.activeCount, 0, 1, b.Stream(), ""))
		}
		s.next = levels[len(levels)-1].lists[step%2]
		if warpRows(warpBorderRows) {
			l.launchBorderWarp(l.perWarp(n))
		} else {
			l.launchBorder(l.perRow(n))
		}
		b.Download(b.Host(), s.activeCount, 4)
		if b.SyncStream() != nil {
			return b.Err()
		}
		tm.mark(&kt.Cholesky)
		active := int(*(*int32)(b.Host()))
		if active == 0 {
			break
		}
		n, s.active, s.nact = int(s.nb), 0, 0
		if active > n/listBelow {
			continue
		}
		if v := r.newLevel(*s, s.next, active, step); v != nil {
			levels = append(levels, v)
			*s = v.setup
			tm.mark(&kt.Compact)
		} else {
			s.active, s.nact = s.next, int64(active)
		}
		n = active
	}
	// g on every level, then the results up, from the deepest level
	for k := len(levels) - 1; k >= 0; k-- {
		*s = levels[k].setup
		n = int(s.nb)
		solve(1)
	}
	for k := len(levels) - 1; k > 0; k-- {
		r.restore(levels[k-1], levels[k])
	}
	tm.mark(&kt.Compact)
	return b.Err()
}

// warpRowPattern is FSAI_WARP_MMAX of kernels/cholesky.cu: the longest
// pattern of the kernels with a warp per row.
const warpRowPattern = 64

// The last steps of the adaptive set-up work on few rows with long
// patterns, which a thread per row substitutes alone, one dependent load
// after the other: a few hundred rows took 1 ms a step. A warp per row cuts
// that chain from O(m^2) to O(m) but leaves most lanes idle on the short
// rows of the earlier steps. The bordered Cholesky and the solve run a warp
// per row on a list of at most this many active rows per multiprocessor:
// where the two took the same time on an H200, on diffusion:100 (1M rows).
const (
	warpBorderRows = 192
	warpSolveRows  = 512
)

// listBelow: the steps of the adaptive set-up work on the active rows
// only (moved into a level of their own, or through their list) once at
// most 1/listBelow of a level's rows are active. Measured on an H200: a
// list for every step made the gradient of poisson7:400, whose rows stop
// together, 4% slower, and that of diffusion:200, whose rows stop over
// many steps, 36% faster.
const listBelow = 2
