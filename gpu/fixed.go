package gpu

import (
	"slices"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
)

// FSAI rows on given patterns on the GPU, in single precision: Backend
// implements afsai.FixedDevice, which the values-only update of a
// preconditioner (afsai.Updater) uses.
//
// It is the adaptive set-up of fsai.go with the whole pattern known up
// front: after fsai_init the patterns are uploaded as the candidates of one
// step of StepSize = the longest pattern, and one fsai_sysgather and one
// fsai_border add all their columns, in the order given, as afsai's factor
// adds them; the final fsai_solve and fsai_assemble follow. The kernels
// repeat the CPU's float32 operations in its order, so G is the one that
// afsai.FixedPattern computes from the same float32 A, bit for bit,
// breakdowns included.

// FixedSetup computes afsai.FixedPattern(a, rows, patterns) on the GPU: the
// same rows in the same layout with the same Stats. Input that FixedPattern
// refuses is refused alike; patterns so long that a row's state (its dense
// system and factor) takes more than half the free device memory give an
// error wrapping afsai.ErrDeviceUnsupported.
func (b *Backend) FixedSetup(a *csr.Matrix[float32], rows []int, patterns [][]int32) (*csr.Matrix[float32], afsai.Stats, error) {
	g, st, _, err := b.fixedSetup(a, rows, patterns, 0)
	return g, st, err
}

// fixedSetup is FixedSetup with at most maxBatch rows per batch (0: as many
// as memory allows), which also returns the device seconds of each stage.
func (b *Backend) fixedSetup(a *csr.Matrix[float32], rows []int, patterns [][]int32, maxBatch int) (*csr.Matrix[float32], afsai.Stats, afsai.KernelTimes, error) {
	diag, err := afsai.CheckFixed(a, rows, patterns)
	if err != nil {
		return nil, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	// The patterns' lengths without the diagonal, which fsai_assemble adds.
	mmax, outLen := 0, len(rows)
	for k, p := range patterns {
		m := len(p)
		if slices.Contains(p, int32(rows[k])) {
			m--
		}
		mmax = max(mmax, m)
		outLen += m
	}
	fx := &fixedGrow{rows: rows, patterns: patterns}
	return b.runFSAI(a, diag, rows, fsaiJob{name: "fixed-pattern FSAI", pl: fsaiPlan{steps: 1, s: mmax, mmax: mmax},
		outLen: outLen, maxBatch: maxBatch, grow: fx.grow})
}

// fixedGrow adds the given patterns to the rows of a batch.
type fixedGrow struct {
	rows     []int
	patterns [][]int32
	pat      []int32 // host scratch: a batch's patterns, laid out as FsaiSetup.pat
	ncand    []int32 // and their lengths
}

// grow uploads the off-diagonal columns of the patterns of the batch rows
// first.. as the candidates of a step, in the order given, and queues the
// gather of their systems and the bordered Cholesky that adds them all.
func (x *fixedGrow) grow(f *fsaiBatch, first, nb int) error {
	b, fn, l, tm, kt := f.b, f.fn, f.l, f.tm, f.kt
	m := f.job.pl.mmax
	if m == 0 { // diagonal patterns: fsai_init has set psi = a_ii
		return b.err
	}
	// Entries beyond a row's pattern are not read: they need no clearing.
	x.pat = slices.Grow(x.pat[:0], m*nb)[:m*nb]
	x.ncand = slices.Grow(x.ncand[:0], nb)[:nb]
	for k := range nb {
		i, t := x.rows[first+k], 0
		for _, c := range x.patterns[first+k] {
			if int(c) != i {
				x.pat[t*nb+k] = c
				t++
			}
		}
		x.ncand[k] = int32(t)
	}
	s := &l.params.setup
	b.upload(s.pat, unsafe.Pointer(&x.pat[0]), 4*m*nb)
	b.upload(s.ncand, unsafe.Pointer(&x.ncand[0]), 4*nb)
	tm.mark(&kt.Upload)
	l.launch(&fn.sysgather, b.elementBlocks(m*m*nb), blockSize, 0, uint64(m))
	tm.mark(&kt.Gather)
	l.rows(&fn.border, nb)
	tm.mark(&kt.Cholesky)
	return b.err
}
