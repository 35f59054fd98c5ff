package cudafsai

import (
	"fmt"
	"github.com/fsai-dist/fsai-dist/gpu"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// A plan's rows left on the device (afsai.FixedPlan.Place). An update of a
// preconditioner whose set-up kept G's diagonal block and its transpose on
// the device needs its new rows there, in those blocks: ComputeOnDevice
// lays the rows out on their whole patterns in one device array
// (fsai_assemble_padded: zeros where a breakdown left columns out, so that
// the layout never changes), and Store moves them into the blocks by index
// maps found once by the Updater (the transpose is a fixed permutation of
// G's entries) and brings only the entries in other ranks' columns to the
// host. Before, an update of poisson7:100 on one H200 moved G to the host,
// transposed it there and uploaded both: 0.018 of its 0.046 s.

// placement is where a plan's rows go: Place's maps on the device.
type placement struct {
	bufs   fsaiBuffers
	rows   placedRows
	maps   []uintptr // per block: the entry of rows.out of each of its values
	lens   []int     // the maps' lengths
	pick   uintptr   // the entries of rows.out that come to the host
	picked uintptr   // and their values
	npick  int
	ready  bool // ComputeOnDevice has filled rows.out
}

// placedRows are a plan's rows on the device, laid out on their whole
// patterns: what fsai_assemble_padded writes.
type placedRows struct {
	out    uintptr // the values, all rows
	rowPtr uintptr // where each row starts in out
	lens   uintptr // each row's pattern length, the diagonal not counted
}

// Place prepares ComputeOnDevice and Store: value e of the kth block given
// to Store will be entry maps[k][e] of the rows laid out on their whole
// patterns (afsai.FixedPlan.Place), and the entries pick come to the host. A
// later Place replaces it.
func (p *fixedPlan) Place(maps [][]int32, pick []int32) error {
	if p.freed {
		return fmt.Errorf("gpu: fixed-pattern FSAI: Place after Free")
	}
	n := 0
	if p.run != nil {
		n = p.run.job.outLen
	}
	for k, m := range maps {
		if i := outOfRange(m, n); i >= 0 {
			return fmt.Errorf("gpu: fixed-pattern FSAI: place: index %d of block %d's map is %d, the rows have %d entries", i, k, m[i], n)
		}
	}
	if i := outOfRange(pick, n); i >= 0 {
		return fmt.Errorf("gpu: fixed-pattern FSAI: place: picked entry %d is %d, the rows have %d entries", i, pick[i], n)
	}
	p.unplace()
	if p.run == nil { // no rows: the maps are empty
		p.place = &placement{}
		return nil
	}
	b := p.run.b
	defer b.Enter()()
	pl := &placement{bufs: fsaiBuffers{b: b}, npick: len(pick)}
	pl.rows.out = pl.bufs.alloc(4*n, "the rows' values")
	pl.rows.rowPtr = pl.bufs.alloc(4*len(p.grow.rowPtr), "the rows' offsets")
	pl.rows.lens = p.grow.ncand
	for _, m := range maps {
		pl.maps = append(pl.maps, pl.bufs.alloc(4*len(m), "a block's map"))
		pl.lens = append(pl.lens, len(m))
	}
	pl.pick = pl.bufs.alloc(4*len(pick), "the picked entries")
	pl.picked = pl.bufs.alloc(4*len(pick), "the picked values")
	if err := pl.bufs.err; err != nil {
		pl.bufs.free()
		if e, ok := err.(*gpu.Error); ok && e.Code == cuda.OutOfMemory {
			err = fmt.Errorf("%w: %w", err, afsai.ErrDeviceUnsupported)
		}
		return fmt.Errorf("gpu: fixed-pattern FSAI: place: %w", err)
	}
	gpu.UploadSlice(b.Raw, pl.rows.rowPtr, p.grow.rowPtr)
	for k, m := range maps {
		gpu.UploadSlice(b.Raw, pl.maps[k], m)
	}
	gpu.UploadSlice(b.Raw, pl.pick, pick)
	if err := b.SyncStream(); err != nil {
		pl.bufs.free()
		return err
	}
	p.place = pl
	return nil
}

// outOfRange returns the position of the first index of m outside [0, n),
// or -1.
func outOfRange(m []int32, n int) int {
	first := make([]int, parallel.Chunks(len(m)))
	parallel.For(len(m), func(c, lo, hi int) {
		first[c] = -1
		for k := lo; k < hi; k++ {
			if m[k] < 0 || int(m[k]) >= n {
				first[c] = k
				return
			}
		}
	})
	for _, k := range first {
		if k >= 0 {
			return k
		}
	}
	return -1
}

// unplace frees the placement's device memory.
func (p *fixedPlan) unplace() {
	if p.place != nil {
		p.place.bufs.free()
		p.place = nil
	}
}

// ComputeOnDevice computes the rows as Compute does and leaves them on the
// device, laid out on their whole patterns, for Store.
func (p *fixedPlan) ComputeOnDevice(vals []float32) (afsai.Stats, error) {
	pl := p.place
	if pl == nil {
		return afsai.Stats{}, fmt.Errorf("gpu: fixed-pattern FSAI: ComputeOnDevice before Place")
	}
	pl.ready = false
	if p.run != nil {
		p.run.placed = &pl.rows
		defer func() { p.run.placed = nil }()
	}
	_, st, _, err := p.compute(vals)
	pl.ready = err == nil
	return st, err
}

// placeRows lays the nb rows of the batch from row first on out on their
// whole patterns, where they stay.
func (r *fsaiRun) placeRows(first, nb int) error {
	pr := r.placed
	r.l.launchAssemblePadded(r.l.perRow(nb), pr.lens+uintptr(4*first), pr.rowPtr+uintptr(4*first), pr.out)
	r.tm.mark(&r.kt.Assemble)
	return r.tm.collect()
}

// Store writes the rows of the last ComputeOnDevice into blocks, float32
// matrices of this backend with the lengths of Place's maps, and the picked
// entries into picked.
func (p *fixedPlan) Store(blocks []backend.Matrix, picked []float32) error {
	pl := p.place
	switch {
	case pl == nil || !pl.ready:
		return fmt.Errorf("gpu: fixed-pattern FSAI: Store without rows (ComputeOnDevice failed or did not run)")
	case len(blocks) != len(pl.maps) || len(picked) != pl.npick:
		return fmt.Errorf("gpu: fixed-pattern FSAI: Store into %d blocks and %d values, placed for %d and %d",
			len(blocks), len(picked), len(pl.maps), pl.npick)
	}
	if p.run == nil {
		return nil
	}
	b := p.run.b
	defer b.Enter()()
	dst := make([]*gpu.Matrix, len(blocks))
	for k, a := range blocks {
		m, ok := a.(*gpu.Matrix)
		if !ok || m == nil || !b.Of(m) || m.Precision() != backend.Single || m.NNZ() != pl.lens[k] {
			return fmt.Errorf("gpu: fixed-pattern FSAI: Store: block %d (%T) is not a float32 matrix of this backend with %d entries",
				k, a, pl.lens[k])
		}
		dst[k] = m
	}
	for k, m := range dst {
		b.GatherF32(m.NNZ(), pl.maps[k], pl.rows.out, m.Arrays().Val)
	}
	b.GatherF32(pl.npick, pl.pick, pl.rows.out, pl.picked)
	if pl.npick > 0 {
		gpu.DownloadSlice(b.Raw, picked, pl.picked)
	}
	return b.SyncStream()
}
