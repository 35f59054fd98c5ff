package gpu

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
)

// The adaptive FSAI set-up on the GPU (paper 001 sections 2-3), in single
// precision: Backend implements afsai.Device.
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
// runFSAI, which uploads A and runs the batches, is shared with the set-up on
// given patterns (fixed.go), which grows its rows in one step.

// AdaptiveSetup computes afsai.Adaptive(a, rows, p) on the GPU: the rows of
// the adaptive FSAI factor G of a for the requested local rows, in the same
// layout, with the same Stats, and the device seconds of each stage, for
// any Params (Scaled and Stall included). Input that Adaptive refuses is
// refused alike; rows too long for the gradient's shared-memory table,
// Params fields that the kernels do not implement, and a row's state larger
// than half the free device memory give an error wrapping
// afsai.ErrDeviceUnsupported.
func (b *Backend) AdaptiveSetup(a *csr.Matrix[float32], rows []int, p afsai.Params) (*csr.Matrix[float32], afsai.Stats, afsai.KernelTimes, error) {
	return b.adaptiveSetup(a, rows, p, 0)
}

// adaptiveSetup is AdaptiveSetup with at most maxBatch rows per batch (0: as
// many as memory allows), so that tests can run several batches.
func (b *Backend) adaptiveSetup(a *csr.Matrix[float32], rows []int, p afsai.Params, maxBatch int) (*csr.Matrix[float32], afsai.Stats, afsai.KernelTimes, error) {
	diag, err := afsai.CheckAdaptive(a, rows, p)
	if err != nil {
		return nil, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	pl, err := planFSAI(longestRow(a), p)
	if err != nil {
		return nil, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	s := fsaiSetup{eps: p.Eps, stall: p.Stall}
	if p.Scaled {
		s.scaled = 1
	}
	return b.runFSAI(a, diag, rows, fsaiJob{name: "adaptive FSAI", pl: pl, setup: s,
		outLen: len(rows) * (pl.mmax + 1), maxBatch: maxBatch, grow: (*fsaiBatch).adaptiveSteps})
}

// longestRow returns the most entries of a row of a.
func longestRow(a *csr.Matrix[float32]) int {
	n := 0
	for i := range a.Rows {
		n = max(n, int(a.RowPtr[i+1]-a.RowPtr[i]))
	}
	return n
}

// fsaiJob is a set-up that runFSAI runs: its plan, the scalars of the
// kernels' parameters that it sets (runFSAI fills in the rest), and grow,
// which builds the patterns and factors of a batch's rows after fsai_init.
type fsaiJob struct {
	name     string // for errors: "adaptive FSAI"
	pl       fsaiPlan
	setup    fsaiSetup
	outLen   int // at least the entries of G
	maxBatch int // the most rows per batch; 0: as many as memory allows
	grow     func(f *fsaiBatch, first, nb int) error
}

// runFSAI computes the rows of G for rows of a, whose diagonal is diag, as
// job says: it uploads A, then computes the rows in batches as large as half
// the free device memory allows (and job.maxBatch), and returns G, its
// statistics and the device time of each stage.
func (b *Backend) runFSAI(a *csr.Matrix[float32], diag []float32, rows []int, job fsaiJob) (*csr.Matrix[float32], afsai.Stats, afsai.KernelTimes, error) {
	var st afsai.Stats
	var kt afsai.KernelTimes
	pl := job.pl
	g := &csr.Matrix[float32]{Rows: len(rows), Cols: a.Cols, RowPtr: make([]int32, len(rows)+1)}
	if len(rows) == 0 {
		return g, st, kt, nil
	}

	defer b.enter()()
	if b.err != nil {
		return nil, st, kt, b.err
	}
	fn, err := b.fsaiKernels()
	if err != nil {
		return nil, st, kt, err
	}
	free, err := b.freeMemory()
	if err != nil {
		return nil, st, kt, err
	}
	nb := min(len(rows), int(free/2/uint64(pl.rowBytes())))
	if job.maxBatch > 0 {
		nb = min(nb, job.maxBatch)
	}
	if nb < 1 {
		return nil, st, kt, fmt.Errorf("gpu: %s: %d bytes per row, %s: %w", job.name, pl.rowBytes(), b.drv.memInfo(),
			afsai.ErrDeviceUnsupported)
	}

	bufs := &fsaiBuffers{b: b}
	defer bufs.free()
	tm := &stageTimer{b: b}
	defer tm.free()
	tm.start()
	s := job.setup
	s.mmax, s.s, s.tol = int64(pl.mmax), int64(pl.s), 64*math.Ldexp(1, -24)
	s.rowptr = bufs.alloc(4*len(a.RowPtr), "A row pointers")
	s.col = bufs.alloc(4*a.NNZ(), "A columns")
	s.val = bufs.alloc(4*a.NNZ(), "A values")
	s.diag = bufs.alloc(4*a.Rows, "A diagonal")
	bufs.allocBatch(&s, pl, nb)
	outCol := bufs.alloc(4*nb*(pl.mmax+1), "G columns")
	outVal := bufs.alloc(4*nb*(pl.mmax+1), "G values")
	outPtr := bufs.alloc(4*(nb+1), "G row pointers")
	if bufs.err != nil {
		return nil, st, kt, bufs.err
	}
	b.upload(s.rowptr, unsafe.Pointer(&a.RowPtr[0]), 4*len(a.RowPtr))
	if a.NNZ() > 0 {
		b.upload(s.col, unsafe.Pointer(&a.ColIdx[0]), 4*a.NNZ())
		b.upload(s.val, unsafe.Pointer(&a.Val[0]), 4*a.NNZ())
	}
	b.upload(s.diag, unsafe.Pointer(&diag[0]), 4*a.Rows)
	tm.mark(&kt.Upload)

	out := b.newHostOutput(job.outLen)
	defer out.release()
	g.ColIdx, g.Val = out.cols[:0], out.vals[:0]
	l := newFSAILauncher(b, s)
	defer l.close()
	batch := &fsaiBatch{b: b, fn: fn, l: l, tm: tm, job: &job, kt: &kt, out: out,
		rows32: make([]int32, nb), lens: make([]int32, nb), states: make([]int32, nb), ptr: make([]int32, nb+1),
		outCol: outCol, outVal: outVal, outPtr: outPtr}
	for lo := 0; lo < len(rows); lo += nb {
		hi := min(lo+nb, len(rows))
		if err := batch.run(rows[lo:hi], g, lo, &st); err != nil {
			return nil, st, kt, err
		}
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(diag)
	if 2*len(g.ColIdx) < cap(g.ColIdx) { // rows stopped early: keep only what G holds
		out.release()
		g.ColIdx, g.Val = slices.Clone(g.ColIdx), slices.Clone(g.Val)
	}
	return g, st, kt, b.err
}

// fsaiBroken is FSAI_BROKEN of kernels/fsai.cuh: the row state of a
// Cholesky breakdown.
const fsaiBroken = 2

// fsaiBatch runs the set-up on one batch of rows at a time, reusing the
// device state and host scratch of the largest batch.
type fsaiBatch struct {
	b                      *Backend
	fn                     *fsaiKernels
	l                      *fsaiLauncher
	tm                     *stageTimer
	job                    *fsaiJob
	kt                     *afsai.KernelTimes
	out                    *hostOutput
	rows32, lens, states   []int32
	ptr                    []int32 // the batch's row pointers into its output
	outCol, outVal, outPtr uintptr
}

// run computes the rows of G for rows, which are rows first.. of g, and
// appends them to g, whose arrays have the capacity of the longest rows; st
// collects the statistics.
func (f *fsaiBatch) run(rows []int, g *csr.Matrix[float32], first int, st *afsai.Stats) error {
	b, fn, l, tm, kt := f.b, f.fn, f.l, f.tm, f.kt
	nb := len(rows)
	s := &l.params.setup
	s.nb = int64(nb)
	tm.start()
	for k, r := range rows {
		f.rows32[k] = int32(r)
	}
	b.upload(s.rows, unsafe.Pointer(&f.rows32[0]), 4*nb)
	tm.mark(&kt.Upload)
	l.rows(&fn.init, nb)
	if err := f.job.grow(f, first, nb); err != nil {
		return err
	}
	l.rows(&fn.solve, nb, 1)
	tm.mark(&kt.Solve)

	// Row lengths and breakdowns give the statistics and the row pointers.
	b.download(unsafe.Pointer(&f.lens[0]), s.len, 4*nb)
	b.download(unsafe.Pointer(&f.states[0]), s.state, 4*nb)
	if b.syncLocked() != nil {
		return b.err
	}
	tm.mark(&kt.Download)
	base := int64(g.RowPtr[first])
	for k, m := range f.lens[:nb] {
		f.ptr[k+1] = f.ptr[k] + m + 1
		st.MaxPattern = max(st.MaxPattern, int(m))
		if f.states[k] == fsaiBroken {
			st.FallbackRows++
		}
	}
	nnz := int(f.ptr[nb])
	st.NNZ += int64(nnz)
	if base+int64(nnz) > math.MaxInt32 {
		return fmt.Errorf("gpu: %s: G has more than %d entries, more than a CSR block's int32 row pointers hold",
			f.job.name, math.MaxInt32)
	}
	for k := range nb {
		g.RowPtr[first+k+1] = int32(base) + f.ptr[k+1]
	}

	b.upload(f.outPtr, unsafe.Pointer(&f.ptr[0]), 4*(nb+1))
	l.rows(&fn.assemble, nb, uint64(f.outPtr), uint64(f.outCol), uint64(f.outVal))
	tm.mark(&kt.Assemble)
	g.ColIdx = g.ColIdx[:int(base)+nnz]
	g.Val = g.Val[:int(base)+nnz]
	f.out.wait()
	b.download(unsafe.Pointer(&g.ColIdx[base]), f.outCol, 4*nnz)
	b.download(unsafe.Pointer(&g.Val[base]), f.outVal, 4*nnz)
	if b.syncLocked() != nil {
		return b.err
	}
	tm.mark(&kt.Download)
	return tm.collect()
}

// adaptiveSteps is the grow of the adaptive set-up: the pattern-growing
// steps of the nb rows of the batch, until no row is active.
func (f *fsaiBatch) adaptiveSteps(_, nb int) error {
	b, fn, l, tm, kt := f.b, f.fn, f.l, f.tm, f.kt
	s := &l.params.setup
	for step := 0; step < f.job.pl.steps; step++ {
		if step > 0 {
			l.rows(&fn.solve, nb, 0)
			tm.mark(&kt.Solve)
		}
		warps, bits := f.job.pl.warps[step], f.job.pl.bits[step]
		l.launch(&fn.kapgrad, ceilDiv(nb, warps), 32*warps, warps*slotBytes<<bits, uint64(bits))
		tm.mark(&kt.Gradient)
		width := (step + 1) * f.job.pl.s
		l.launch(&fn.sysgather, b.elementBlocks(f.job.pl.s*width*nb), blockSize, 0, uint64(width))
		tm.mark(&kt.Gather)
		if b.err == nil {
			b.fail(b.drv.check(b.drv.call(b.drv.memsetD32Async, s.activeCount, 0, 1, b.stream), "cuMemsetD32Async"))
		}
		l.rows(&fn.border, nb)
		b.download(b.host, s.activeCount, 4)
		if b.syncLocked() != nil {
			return b.err
		}
		tm.mark(&kt.Cholesky)
		if *(*int32)(b.host) == 0 {
			break
		}
	}
	return b.err
}
