package cudafsai

import (
	"fmt"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/afsai"
)

// Static FSAI on the GPU (paper 000, Algorithm 3.1 and section 4), in
// single precision: Device implements afsai.Device.StaticFactor. It is the
// adaptive set-up's run (fsai.go) with the patterns found on the device
// and added in one step, as on given patterns (fixed.go):
//
//	fsai_static_pattern    row i of Low(A~^K), sorted, a warp per row (fsai_pattern.cu)
//	fsai_sysgather_sorted  A[P,P] and A[P,i]: each row of A beside the sorted pattern
//	fsai_border            Cholesky of A[P,P], adding P's columns ascending
//	fsai_solve             g
//	fsai_static_filter     post-filter and rescaling (fsai_filter.cu)
//
// then fsai_assemble into G's diagonal block, kept on the device, and its
// transpose, as AdaptiveFactor leaves them. The batch state is sized by
// the longest pattern, which a first search over all rows finds before
// the batches are allocated. The kernels repeat afsai.Static's float32
// operations and its double sums in its order, so G is the CPU's, bit for
// bit.

// staticPatternCaps are fsai_pattern_cap of kernels/fsai_pattern.cu for 8
// and 32 lanes per row: a pattern that the search of so many lanes finds
// holds fewer columns (off the diagonal) than this; staticPatternCap is
// the larger.
var staticPatternCaps = [2]int{64, 256}

const staticPatternCap = 256

// StaticFactor computes the static FSAI rows of the local system a's rows
// a.Own and after, as afsai.Static computes them for the joined system,
// and leaves G's diagonal block and its transpose on the device in float32
// (afsai.Device.StaticFactor). Input that Static refuses is refused alike; a row
// whose pattern holds staticPatternCap columns or more, or whose state
// takes more than half the free device memory, gives an error wrapping
// afsai.ErrDeviceUnsupported.
func (b *Device) StaticFactor(a afsai.Split, p afsai.StaticParams) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
	return b.staticFactor(a, p, fsaiJob{})
}

// staticFactor is StaticFactor with the batches that test sets (its
// maxBatch).
func (b *Device) staticFactor(a afsai.Split, p afsai.StaticParams, test fsaiJob) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
	if err := afsai.CheckStaticSplit(a, p); err != nil {
		return afsai.DeviceFactor{}, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	if n, _ := a.Size(); n == a.Own { // no device work: the parts are checked here
		if _, err := afsai.CheckStatic(a.Join(), nil, p); err != nil {
			return afsai.DeviceFactor{}, afsai.Stats{}, afsai.KernelTimes{}, err
		}
	}
	x := &staticGrow{p: p}
	defer x.free(b)
	if err := x.alloc(b); err != nil {
		return afsai.DeviceFactor{}, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	res, err := b.runFSAI(fsaiMatrix{split: &a}, nil, nil, fsaiJob{name: "static FSAI", keep: true, own: a.Own,
		maxBatch: test.maxBatch, hold: true, plan: x.plan, grow: x.grow})
	if err == nil {
		err = x.addStats(b, &res.st)
	}
	if err != nil && res.run != nil {
		res.kept.free()
		res.run.free()
	}
	return b.transposeKept(res, err)
}

// staticGrow finds the static patterns of a run's rows and grows the rows
// of a batch on them.
type staticGrow struct {
	p afsai.StaticParams
	// on the device: the longest pattern of all rows (plan), and the
	// post-filter's longest pattern before filtering and the entries it
	// dropped (int64), over all batches
	stats uintptr
	// groups is the pattern search's lanes per row, as an index of
	// staticPatternCaps: 8 lanes (0) unless a row's pattern needs more
	// room (1, 32 lanes)
	groups int
}

// The words at staticGrow.stats.
const (
	statLongest       = 0
	statFilterLongest = 1
	statDropped       = 2 // and 3
	statWords         = 4
)

func (x *staticGrow) alloc(b *Device) error {
	defer b.Enter()()
	var err error
	if x.stats, err = b.Alloc(4*statWords, "static FSAI statistics"); err != nil {
		return err
	}
	b.Memset32(x.stats, 0, statWords)
	return b.Err()
}

func (x *staticGrow) free(b *Device) {
	if x.stats != 0 {
		b.Free(x.stats, "static FSAI statistics")
	}
}

// plan finds the longest pattern of the run's rows (s holds A; the rows
// are in r.rowsDev) and sizes the run by it: one step that adds all of a
// row's pattern. It searches with 8 lanes per row, and again with 32 when
// a pattern does not fit 8 lanes' list.
func (x *staticGrow) plan(r *fsaiRun, s fsaiSetup) error {
	b := r.b
	s.rows, s.nb = r.rowsDev, int64(r.rows)
	l := newFSAILauncher(b, r.fn, s)
	defer l.close()
	m := 0
	for x.groups = range staticPatternCaps {
		r.tm.start()
		b.Memset32(x.stats+4*statLongest, 0, 1)
		x.search(r, l, r.rows, x.stats+4*statLongest)
		r.tm.mark(&r.kt.Pattern)
		if err := r.tm.collect(); err != nil {
			return err
		}
		b.Download(b.Host(), x.stats+4*statLongest, 4)
		if b.SyncStream() != nil {
			return b.Err()
		}
		if m = int(*(*int32)(b.Host())); m < staticPatternCaps[x.groups] {
			break
		}
	}
	if m >= staticPatternCap {
		return fmt.Errorf("gpu: static FSAI with K %d, tau %g: a row's pattern holds %d columns or more, the most the device's search holds is %d: %w",
			x.p.K, x.p.Tau, m, staticPatternCap-1, afsai.ErrDeviceUnsupported)
	}
	r.job.pl = fsaiPlan{steps: 1, s: m, mmax: m, filter: x.p.Delta > 0}
	return nil
}

// grow writes the patterns of the batch's nb rows, adds them, solves for g
// and, with Delta, post-filters the rows.
func (x *staticGrow) grow(r *fsaiRun, _, nb int) error {
	l, tm, kt := r.l, &r.tm, &r.kt
	x.search(r, l, nb, 0)
	tm.mark(&kt.Pattern)
	if err := r.addPatterns(nb, true); err != nil {
		return err
	}
	if r.job.pl.filter {
		l.launchStaticFilter(l.perRow(nb), x.p.Delta, x.stats+4*statFilterLongest, x.stats+4*statDropped)
		tm.mark(&kt.Filter)
	}
	return r.b.Err()
}

// search launches the pattern search of the n rows of l's setup with
// x.groups' lanes per row: writing their patterns, or, with longest not
// 0, finding the longest into it.
func (x *staticGrow) search(r *fsaiRun, l *fsaiLauncher, n int, longest uintptr) {
	lanes := 8 << (2 * x.groups)
	l.launchStaticPattern(l.perRow(lanes*n), x.groups, x.p.Tau, int32(x.p.K), longest)
}

// addStats adds the post-filter's statistics to st: the pattern lengths
// that fsai_kept_counts saw are those after filtering.
func (x *staticGrow) addStats(b *Device, st *afsai.Stats) error {
	if !(x.p.Delta > 0) {
		return nil
	}
	defer b.Enter()()
	words := unsafe.Slice((*int32)(b.Host()), statWords)
	b.Download(b.Host(), x.stats, 4*statWords)
	if b.SyncStream() != nil {
		return b.Err()
	}
	st.MaxPattern = max(st.MaxPattern, int(words[statFilterLongest]))
	st.Dropped = *(*int64)(unsafe.Pointer(&words[statDropped]))
	return nil
}
