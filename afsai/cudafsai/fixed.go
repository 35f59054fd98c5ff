package cudafsai

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// FSAI rows on given patterns on the GPU, in single precision: Device
// implements afsai.Device.PrepareFixed, which the values-only update of a
// preconditioner (afsai.Updater) uses.
//
// It is the adaptive set-up of fsai.go with the whole pattern known up
// front: after fsai_init the patterns are the candidates of one step of
// StepSize = the longest pattern, and one fsai_sysgather and one
// fsai_border add all their columns, in the order given, as afsai's factor
// adds them; the final fsai_solve and fsai_assemble follow. The kernels
// repeat the CPU's float32 operations in its order, so G is the one that
// afsai.FixedPattern computes from the same float32 A, bit for bit,
// breakdowns included.
//
// A plan is prepared once for A's pattern, the rows and their patterns: it
// keeps on the device A's row pointers and columns, the rows, the patterns
// of all rows (laid out batch by batch as the kernels read them), the batch
// state and G's output arrays, and on the host page-locked memory for A's
// values and for G. A Compute then uploads A's values and diagonal, runs
// the kernels and downloads G.

// fixedPlan is a prepared afsai.FixedPattern computation on the GPU.
type fixedPlan struct {
	run     *fsaiRun // nil when there are no rows
	grow    fixedGrow
	nnz     int     // A's entries
	diagPos []int32 // the position of each row's diagonal among A's values
	in      *hostWords
	val     []float32 // A's values, page-locked
	diag    []float32 // and its diagonal (without rows: the check's scratch)
	empty   *csr.Matrix[float32]
	place   *placement // where ComputeOnDevice's rows go (fixed_place.go)
	freed   bool
}

// PrepareFixed prepares the computation of afsai.FixedPattern(a', rows,
// patterns) on the GPU for matrices a' with a's pattern. Input that
// FixedPattern refuses is refused alike; patterns so long that a row's state
// (its dense system and factor) takes more than half the free device memory
// give an error wrapping afsai.ErrDeviceUnsupported. Rows that need several
// batches are supported: the plan keeps the patterns of all of them.
func (b *Device) PrepareFixed(a *csr.Matrix[float32], rows []int, patterns [][]int32) (afsai.FixedPlan, error) {
	p, err := b.prepareFixed(a, rows, patterns, 0)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// prepareFixed is PrepareFixed with at most maxBatch rows per batch (0: as
// many as memory allows).
func (b *Device) prepareFixed(a *csr.Matrix[float32], rows []int, patterns [][]int32, maxBatch int) (*fixedPlan, error) {
	if _, err := afsai.CheckFixed(a, rows, patterns); err != nil {
		return nil, err
	}
	p := &fixedPlan{nnz: a.NNZ(), diagPos: diagonalPositions(a)}
	if len(rows) == 0 { // no device work, but A's diagonal is checked
		p.empty = &csr.Matrix[float32]{Cols: a.Cols, RowPtr: make([]int32, 1)}
		p.diag = make([]float32, a.Rows)
		return p, nil
	}
	// The patterns' lengths without the diagonal, which fsai_assemble adds.
	mmax, outLen := 0, len(rows)
	for k, pat := range patterns {
		m := len(pat)
		if slices.Contains(pat, int32(rows[k])) {
			m--
		}
		mmax = max(mmax, m)
		outLen += m
	}
	r, err := b.newFSAIRun(fsaiMatrix{whole: a}, int32s(rows), fsaiJob{name: "fixed-pattern FSAI", pl: fsaiPlan{steps: 1, s: mmax, mmax: mmax},
		outLen: outLen, maxBatch: maxBatch, patBytes: 4 * (mmax + 1) * len(rows), grow: p.grow.grow})
	if err != nil {
		return nil, err
	}
	p.run = r
	if err := p.grow.upload(r, rows, patterns); err != nil {
		p.Free()
		return nil, err
	}
	p.in = b.newHostWords(a.NNZ() + a.Rows)
	p.val, p.diag = p.in.float32s(a.NNZ()), p.in.float32s(a.Rows)
	return p, nil
}

// diagonalPositions returns the position of each row's diagonal entry among
// a's values; afsai.CheckFixed has found them all.
func diagonalPositions(a *csr.Matrix[float32]) []int32 {
	pos := make([]int32, a.Rows)
	parallel.For(a.Rows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			cols, _ := a.Row(i)
			k, _ := slices.BinarySearch(cols, int32(i))
			pos[i] = a.RowPtr[i] + int32(k)
		}
	})
	return pos
}

// Compute computes afsai.FixedPattern for the plan's matrix with values
// vals. G's arrays are the plan's page-locked memory, overwritten by the
// next Compute.
func (p *fixedPlan) Compute(vals []float32) (*csr.Matrix[float32], afsai.Stats, error) {
	g, st, _, err := p.compute(vals)
	return g, st, err
}

// compute is Compute, which also returns the device seconds of each stage.
func (p *fixedPlan) compute(vals []float32) (*csr.Matrix[float32], afsai.Stats, afsai.KernelTimes, error) {
	switch {
	case p.freed:
		return nil, afsai.Stats{}, afsai.KernelTimes{}, fmt.Errorf("gpu: fixed-pattern FSAI: Compute after Free")
	case len(vals) != p.nnz:
		return nil, afsai.Stats{}, afsai.KernelTimes{}, fmt.Errorf("gpu: fixed-pattern FSAI: %d values for a matrix of %d entries", len(vals), p.nnz)
	}
	if err := p.stage(vals); err != nil {
		return nil, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	if p.run == nil {
		return p.empty, afsai.Stats{}, afsai.KernelTimes{}, nil
	}
	p.run.kt = afsai.KernelTimes{}
	g, st, err := p.run.compute(p.val, p.diag)
	return g, st, p.run.kt, err
}

// stage copies vals and the diagonal into the page-locked memory on all
// cores, checking the diagonal as afsai.FixedPattern does.
func (p *fixedPlan) stage(vals []float32) error {
	if p.in != nil {
		p.in.wait()
		parallel.Copy(p.val[:len(vals)], vals)
	}
	bad := make([]int, parallel.Chunks(len(p.diag))) // per chunk, its first row whose diagonal is not positive
	parallel.For(len(p.diag), func(c, lo, hi int) {
		bad[c] = -1
		for i := lo; i < hi; i++ {
			d := vals[p.diagPos[i]]
			p.diag[i] = d
			if !(d > 0) || math.IsInf(float64(d), 0) {
				if bad[c] < 0 {
					bad[c] = i
				}
			}
		}
	})
	for _, i := range bad {
		if i >= 0 {
			return afsai.DiagonalError(i, float64(p.diag[i]))
		}
	}
	return nil
}

// Free releases the plan's device memory and unlocks its host memory.
func (p *fixedPlan) Free() {
	p.unplace()
	if p.run != nil {
		p.run.free()
		p.run = nil
	}
	if p.in != nil {
		p.in.release()
		p.in = nil
	}
	p.freed = true
}

// fixedGrow keeps the given patterns on the device and adds them to the
// rows of a batch.
type fixedGrow struct {
	pat, ncand uintptr // on the device: the patterns of all rows and their lengths
	// rowPtr are the offsets of the rows laid out on their whole
	// patterns, the diagonal included (the layout of fixed_place.go).
	rowPtr []int32
}

// upload lays the off-diagonal columns of the patterns of rows out as the
// batches of r read them, each batch as FsaiSetup.pat of its rows, in the
// order given, with their counts, and copies them to the device.
func (x *fixedGrow) upload(r *fsaiRun, rows []int, patterns [][]int32) error {
	b, nb, n := r.b, r.nb, len(rows)
	m := r.job.pl.mmax
	defer b.Enter()()
	x.pat = r.bufs.alloc(4*m*n, "patterns")
	x.ncand = r.bufs.alloc(4*n, "pattern lengths")
	if r.bufs.err != nil {
		return r.bufs.err
	}
	// Entries beyond a row's pattern are not read: they need no clearing.
	pat, ncand := make([]int32, m*n), make([]int32, n)
	parallel.For(n, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			first := k / nb * nb
			stride := min(nb, n-first) // the rows of k's batch
			at, i, t := m*first+k-first, rows[k], 0
			for _, c := range patterns[k] {
				if int(c) != i {
					pat[at+t*stride] = c
					t++
				}
			}
			ncand[k] = int32(t)
		}
	})
	x.rowPtr = make([]int32, n+1)
	parallel.Scan(x.rowPtr, func(k int) int32 { return ncand[k] + 1 })
	if m > 0 {
		b.Upload(x.pat, unsafe.Pointer(&pat[0]), 4*m*n)
	}
	b.Upload(x.ncand, unsafe.Pointer(&ncand[0]), 4*n)
	err := b.SyncStream()
	runtime.KeepAlive(pat)
	runtime.KeepAlive(ncand)
	return err
}

// grow points the batch state at the patterns of the batch rows first..,
// which are the candidates of a step, restores their counts, which
// fsai_init has cleared, and queues the gather of their systems, the
// bordered Cholesky that adds them all and the solve for g.
func (x *fixedGrow) grow(r *fsaiRun, first, nb int) error {
	m := r.job.pl.mmax
	if m == 0 { // diagonal patterns: fsai_init has set psi = a_ii
		return r.b.Err()
	}
	s := &r.l.params.setup
	s.pat = x.pat + uintptr(4*m*first)
	r.b.CopyDevice(s.ncand, x.ncand+uintptr(4*first), 4*nb) // the pattern lengths
	return r.addPatterns(nb, false)
}

// addPatterns queues, for the nb rows of a batch whose whole patterns are
// the candidates of one step (fsaiSetup.pat and ncand, at most mmax
// columns; ascending when sorted), the gather of their systems, the
// bordered Cholesky that adds all their columns in order and the solve for
// g.
func (r *fsaiRun) addPatterns(nb int, sorted bool) error {
	b, l, tm, kt := r.b, r.l, &r.tm, &r.kt
	m := r.job.pl.mmax
	if m == 0 { // diagonal patterns: fsai_init has set psi = a_ii
		return b.Err()
	}
	if sorted {
		l.launchSysgatherSorted(l.perRow(m * nb))
	} else {
		l.launchSysgather(l.perRow(m*m*nb), int32(m))
	}
	tm.mark(&kt.Gather)
	l.launchBorder(l.perRow(nb))
	tm.mark(&kt.Cholesky)
	l.launchSolve(l.perRow(nb), 1)
	tm.mark(&kt.Solve)
	return b.Err()
}
