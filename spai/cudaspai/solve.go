package cudaspai

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/spai"
)

// batch solves batches of own rows on the device, from the local system
// there and the patterns of all own rows, into the rows' values.
type batch struct {
	d     *Device
	r     *resident
	first int64 // the global row of own row 0
	diag0 int32 // the compact column of own row 0
	clk   *clock
	st    *spai.Stages // where clk charges the stages
}

// status of a problem, as spai_solve.cu writes it
const (
	solved     = 0
	dependent  = 1
	noDiagonal = 2
)

// solve computes the values of own rows [lo, hi) of M into the
// resident's values, and returns the rows' stats.
func (b *batch) solve(lo, hi int) (spai.Stats, error) {
	d, r := b.d, b.r
	np := hi - lo
	patPtr := r.ptr[lo : hi+1] // the batch's offsets, into the whole patterns
	devPtr := r.patPtr + uintptr(8*lo)
	var a batchArrays
	defer a.free(d)
	if err := a.alloc(d, np); err != nil {
		return spai.Stats{}, fmt.Errorf("spai: a batch of %d rows on the GPU: %w", np, err)
	}
	b.clk.add(&b.st.ToDeviceS)
	launchCount(d.Raw, r.ks, d.Blocks(d.ElementBlocks(32*np)), int32(np), r.sys.rowPtr, r.sys.col, devPtr, r.pat,
		a.counts)
	counts := make([]int32, 2*np)
	gpu.DownloadSlice(d.Raw, counts, a.counts)
	if err := d.Err(); err != nil {
		return spai.Stats{}, err
	}
	need, st := sizes(counts, patPtr)
	warps, slot := chooseSlot(need, d.slotBytes)
	list := misfits(need, slot)
	b.clk.add(&b.st.CountS)
	d.Memset32(a.status, ^uint32(0), np)
	grid := min((np+warps-1)/warps, 32*d.SMs())
	launchSolveShared(d.Raw, r.ks, d.Grid(grid, 32*warps, warps*slot), int32(np), int32(slot), r.sys.rowPtr, r.sys.col,
		r.sys.val, devPtr, r.pat, a.counts, b.diag0+int32(lo), r.out, a.status)
	if err := b.scratch(&a, devPtr, list, need, lo); err != nil {
		return spai.Stats{}, err
	}
	if err := d.SyncStream(); err != nil {
		return spai.Stats{}, err
	}
	b.clk.add(&b.st.KernelS)
	status := make([]int32, np)
	gpu.DownloadSlice(d.Raw, status, a.status)
	if err := d.Err(); err != nil {
		return spai.Stats{}, err
	}
	b.clk.add(&b.st.FromDeviceS)
	err := b.check(status, counts, patPtr, lo)
	b.clk.add(&b.st.AssembleS)
	return st, err
}

// check returns the error of the first problem whose status is not
// solved, naming its row as the host does.
func (b *batch) check(status, counts []int32, patPtr []int64, lo int) error {
	return parallel.ForErr(len(status), func(_, from, to int) error {
		for k := from; k < to; k++ {
			g := b.first + int64(lo+k)
			n := int(patPtr[k+1] - patPtr[k])
			switch s := status[k]; s {
			case solved:
				continue
			case dependent:
				return spai.RankDeficient(g, int(counts[2*k]), n)
			case noDiagonal:
				return spai.NoDiagonal(g, n)
			default:
				return fmt.Errorf("spai: row %d of M: the GPU left it unsolved (status %d)", g+1, s)
			}
		}
		return nil
	})
}

// sizes returns the workspace bytes of every problem of a batch, whose
// counts spai_count wrote (|I| and the entries, per problem) and whose
// patterns' offsets are patPtr, and the stats of its blocks, on all cores.
func sizes(counts []int32, patPtr []int64) ([]int64, spai.Stats) {
	need := make([]int64, len(patPtr)-1)
	parts := make([]spai.Stats, parallel.Chunks(len(need)))
	parallel.For(len(need), func(ch, lo, hi int) {
		for k := lo; k < hi; k++ {
			m, n, t := int(counts[2*k]), int(patPtr[k+1]-patPtr[k]), int(counts[2*k+1])
			need[k] = workspace(m, n, t)
			parts[ch] = parts[ch].Max(spai.Stats{MaxBlockRows: m, MaxBlockCols: n})
		}
	})
	var st spai.Stats
	for _, p := range parts {
		st = st.Max(p)
	}
	return need, st
}

// workspace is the bytes of the workspace of a problem of m x n with t
// entries (spai_workspace in kernels/spai_solve.cu): the block, the
// right-hand side and the QR's norms and diagonal as float64, the entries'
// codes and I as int32.
func workspace(m, n, t int) int64 {
	return 8*(int64(m)*int64(n)+int64(m)+2*int64(n)) + 4*(int64(t)+int64(m))
}

// sharedBytes is the dynamic shared memory of a block of
// spai_solve_shared: what a block of any CUDA GPU takes without opting in.
const sharedBytes = 48 << 10

// maxWarps is the most warps, one slot each, of a block of
// spai_solve_shared.
const maxWarps = 16

// chooseSlot returns the warps of a block of spai_solve_shared and the
// bytes of each one's slot of shared memory, sharedBytes / warps: the most
// warps (the most problems in flight) that leave at most 1/64 of the
// problems, need[k] bytes each, to workspaces in global memory; one warp
// where none does. limit, when positive, bounds the slot (tests).
func chooseSlot(need []int64, limit int64) (warps, slot int) {
	// misfit[k]: the problems that do not fit the slot of maxWarps >> k warps
	parts := make([][5]int, parallel.Chunks(len(need)))
	parallel.For(len(need), func(ch, lo, hi int) {
		for _, w := range need[lo:hi] {
			for k := range parts[ch] {
				if w > int64(sharedBytes/(maxWarps>>k)) {
					parts[ch][k]++
				}
			}
		}
	})
	var misfit [5]int
	for _, p := range parts {
		for k, c := range p {
			misfit[k] += c
		}
	}
	k := 0
	for k < len(misfit)-1 && 64*misfit[k] > len(need) {
		k++
	}
	warps = maxWarps >> k
	slot = sharedBytes / warps
	if limit > 0 {
		slot = min(slot, int(limit)&^15)
	}
	return warps, slot
}

// misfits lists the problems whose workspaces, need[k] bytes, exceed slot,
// in order, on all cores.
func misfits(need []int64, slot int) []int32 {
	parts := make([][]int32, parallel.Chunks(len(need)))
	parallel.For(len(need), func(ch, lo, hi int) {
		for k := lo; k < hi; k++ {
			if need[k] > int64(slot) {
				parts[ch] = append(parts[ch], int32(k))
			}
		}
	})
	return slices.Concat(parts...)
}

// scratch solves the problems list of the batch in a, whose pattern
// offsets are at devPtr on the device, local indices whose
// workspaces need[k] bytes do not fit a shared-memory slot, in global
// memory: in batches of workspaces that fit half the free memory (or
// d.scratchBytes), one workspace at least. A workspace larger than that
// declines the set-up (spai.ErrDeviceUnsupported).
func (b *batch) scratch(a *batchArrays, devPtr uintptr, list []int32, need []int64, lo int) error {
	d := b.d
	for from := 0; from < len(list); {
		budget, err := d.budget(d.scratchBytes)
		if err != nil {
			return err
		}
		var offs []int64
		var total int64
		to := from
		for to < len(list) && (to == from || total+aligned(need[list[to]]) <= budget) {
			offs = append(offs, total)
			total += aligned(need[list[to]])
			to++
		}
		if total > budget {
			return spai.ErrDeviceUnsupported
		}
		if err := b.scratchBatch(a, devPtr, list[from:to], offs, total, lo); err != nil {
			return err
		}
		d.Scratch += to - from
		d.ScratchBatches++
		from = to
	}
	return nil
}

// scratchBatch solves the problems list, whose workspaces lie at offs in
// total bytes of global memory.
func (b *batch) scratchBatch(a *batchArrays, devPtr uintptr, list []int32, offs []int64, total int64, lo int) error {
	d, r := b.d, b.r
	var listDev, offDev, ws uintptr
	defer func() { freeAll(d, "SPAI workspaces", listDev, offDev, ws) }()
	var err error
	if listDev, err = d.Alloc(4*len(list), "SPAI workspace list"); err != nil {
		return err
	}
	if offDev, err = d.Alloc(8*len(offs), "SPAI workspace offsets"); err != nil {
		return err
	}
	if ws, err = d.Alloc(int(total), "SPAI workspaces"); err != nil {
		return fmt.Errorf("spai: %d least-squares workspaces (%d bytes) on the GPU: %w", len(list), total, err)
	}
	gpu.UploadSlice(d.Raw, listDev, list)
	gpu.UploadSlice(d.Raw, offDev, offs)
	launchSolveScratch(d.Raw, r.ks, d.Blocks(d.ElementBlocks(32*len(list))), int32(len(list)), listDev, offDev, ws,
		r.sys.rowPtr, r.sys.col, r.sys.val, devPtr, r.pat, a.counts, b.diag0+int32(lo), r.out, a.status)
	return d.SyncStream() // before the workspaces are freed
}

// aligned rounds bytes up to 16, the alignment of a workspace.
func aligned(bytes int64) int64 { return (bytes + 15) &^ 15 }

// batchArrays are a batch's device arrays: its blocks' sizes and its
// problems' statuses.
type batchArrays struct {
	counts, status uintptr
}

// alloc allocates the arrays of a batch of np rows.
func (a *batchArrays) alloc(d *Device, np int) error {
	var err error
	if a.counts, err = d.Alloc(8*np, "SPAI block sizes"); err != nil {
		return err
	}
	a.status, err = d.Alloc(4*np, "SPAI statuses")
	return err
}

// free releases the arrays alloc made.
func (a *batchArrays) free(d *Device) { freeAll(d, "SPAI batch", a.counts, a.status) }
