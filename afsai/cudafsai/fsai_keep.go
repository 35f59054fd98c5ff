package cudafsai

import (
	"github.com/fsai-dist/fsai-dist/gpu"
	"time"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// G kept on the device (afsai.Device's AdaptiveFactor). PCG applies G and
// G' on the device, so the set-up leaves them there: fsai_assemble writes
// G's diagonal block straight into a Matrix of its exact size, Transpose
// builds G' from it, and only the entries in other ranks' columns, a thin
// band near the stripe's first rows, come to the host, where the halo plans
// of G and G' are made. Bringing all of G to the host, transposing it there
// and uploading both moved about 1.2 GB and cost 0.3 s on diffusion:200.

// keptRows are a set-up's rows of G when the job keeps them: the diagonal
// block on the device, the entries left of it on the host.
type keptRows struct {
	left *csr.Matrix[float32]
	diag *gpu.Matrix
}

// free releases the diagonal block; a nil k holds nothing.
func (k *keptRows) free() {
	if k != nil {
		k.diag.Free()
	}
}

// AdaptiveFactor computes the adaptive FSAI rows of the local system a's
// rows a.Own and after, as AdaptiveSetup does for the joined system, and
// leaves G's diagonal block and its transpose on the device in float32
// (afsai.Device). The system's parts are joined on the device. When the
// rows need several batches (device memory), each batch's part of the
// block stays on the device until they are joined. It refuses what
// AdaptiveSetup refuses.
func (b *Device) AdaptiveFactor(a afsai.Split, p afsai.Params) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
	return b.adaptiveFactor(a, p, fsaiJob{})
}

// adaptiveFactor is AdaptiveFactor with the batches and levels that test
// sets (its maxBatch and levelRows), so that tests can take the paths of
// several. The run is held past G's transpose, and its state retired by
// the factor's Scratch (fsaiRun.retire): the transpose took 3 ms longer
// right after a free of that state on diffusion:200 (one H200).
func (b *Device) adaptiveFactor(a afsai.Split, p afsai.Params, test fsaiJob) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
	test.hold = true
	return b.transposeKept(b.keptFactor(a, nil, p, test))
}

// transposeKept makes the afsai.DeviceFactor of a set-up that kept G on
// the device and held its run (res, unless err): it builds the transpose of
// G's diagonal block, and the factor's Scratch retires the run.
func (b *Device) transposeKept(res fsaiResult, err error) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
	if err != nil {
		return afsai.DeviceFactor{}, res.st, res.kt, err
	}
	kept := res.kept
	t := time.Now()
	diagT, err := b.Backend().Transpose(kept.diag) // it waits for its kernels
	res.kt.Transpose = time.Since(t).Seconds()
	if err != nil {
		if diagT != nil {
			diagT.Free()
		}
		kept.free()
		if res.run != nil {
			res.run.free()
		}
		return afsai.DeviceFactor{}, res.st, res.kt, err
	}
	df := afsai.DeviceFactor{Left: kept.left, Diag: kept.diag, DiagT: diagT, Scratch: res.run.scratch()}
	if kept.left.NNZ() == 0 { // no row has entries left of the block: list none, not millions of empty rows
		df.Left, df.LeftRows = &csr.Matrix[float32]{Cols: kept.left.Cols, RowPtr: []int32{0}}, []int32{}
	}
	return df, res.st, res.kt, nil
}

// keptFactor computes the rows of G for rows, local rows of a from a.Own
// on (nil: all of them), keeping G on the device (fsaiResult.kept), with
// the batches and levels that test sets, and holding the run, or computing
// only the interior rows, when it says so.
func (b *Device) keptFactor(a afsai.Split, rows []int32, p afsai.Params, test fsaiJob) (fsaiResult, error) {
	if err := afsai.CheckSplit(a, p); err != nil {
		return fsaiResult{}, err
	}
	n, _ := a.Size()
	longest := 0
	if n == a.Own { // no device work: the parts are checked here
		if _, err := afsai.CheckAdaptive(a.Join(), nil, p); err != nil {
			return fsaiResult{}, err
		}
	} else {
		longest = a.LongestRow()
	}
	return b.adaptiveSetup(fsaiMatrix{split: &a}, longest, nil, rows, p, fsaiJob{keep: true, own: a.Own, maxBatch: test.maxBatch,
		levelRows: test.levelRows, hold: test.hold, interior: test.interior, seeds: test.seeds, hops: test.hops})
}

// keptRun is an fsaiRun's state for a job that keeps G on the device. The
// batches are sized on the device: fsai_kept_counts counts each row's
// entries in the block and left of it, prefix sums turn the counts into
// row pointers, and only the left entries' row pointers come to the host,
// for the host's part of G.
type keptRun struct {
	diagPtr  uintptr // G's block row pointers, all rows (on the device; the block takes them)
	leftPtr  uintptr // a batch's left row pointers, counting the earlier batches' entries
	stats    uintptr // a batch's longest pattern and breakdowns
	scanSums uintptr // the prefix sums' scratch
	diagNNZ  int     // the block's entries so far
	chunks   []keptChunk
	left     *csr.Matrix[float32] // the entries left of the block, all rows
	kept     *keptRows            // the result, once every batch is done
}

// keptChunk is one batch's entries of G's diagonal block on the device.
type keptChunk struct {
	col, val uintptr
	nnz      int
}

// startKept allocates what a job that keeps G needs beside the batch state,
// for n rows in batches of nb, in a local system of cols columns (G's row
// pointers, which outlive the run, come with the first batch).
func (r *fsaiRun) startKept(n, cols, nb int) {
	r.leftPtr = r.bufs.alloc(4*(nb+1), "left row pointers")
	r.stats = r.bufs.alloc(8, "batch statistics")
	r.scanSums = r.bufs.alloc(4*ceilDiv(nb+1, gpu.ScanTile), "prefix sum scratch")
	r.left = &csr.Matrix[float32]{Rows: n, Cols: cols, RowPtr: make([]int32, n+1)}
}

// freeChunks frees the batches' entries not joined into a Matrix.
func (r *fsaiRun) freeChunks() {
	for _, c := range r.chunks {
		r.b.Free(c.col, "FSAI set-up")
		r.b.Free(c.val, "FSAI set-up")
	}
	r.chunks = nil
}

// assembleKept sizes and assembles the nb rows of the batch from row first
// on, on the device: their entries of the diagonal block into a chunk of
// its exact size, the entries left of it into arrays that come to the host;
// st gets the batch's statistics.
func (r *fsaiRun) assembleKept(first, nb int, st *afsai.Stats) error {
	b, l, tm, kt := r.b, r.l, &r.tm, &r.kt
	own, left := r.job.own, r.left
	if first == 0 { // freed by free unless the block takes them
		var err error
		if r.diagPtr, err = b.Alloc(4*(r.rows+1), "G row pointers"); err != nil {
			return err
		}
	}
	diagPtr := r.diagPtr + uintptr(4*first)
	diagBase, leftBase := r.diagNNZ, int(left.RowPtr[first])
	b.Memset32(r.stats, 0, 2)
	l.launchKeptCounts(l.perRow(nb), int32(own), diagPtr, int32(diagBase), r.leftPtr, int32(leftBase), r.stats)
	b.Scan(diagPtr, nb+1, r.scanSums)
	b.Scan(r.leftPtr, nb+1, r.scanSums)
	tail := unsafe.Slice((*int32)(b.Host()), 4) // the batch's ends of the block and of the left entries, its statistics
	b.Download(unsafe.Pointer(&tail[0]), diagPtr+uintptr(4*nb), 4)
	b.Download(unsafe.Pointer(&tail[1]), r.leftPtr+uintptr(4*nb), 4)
	b.Download(unsafe.Pointer(&tail[2]), r.stats, 8)
	if b.SyncStream() != nil {
		return b.Err()
	}
	c := keptChunk{nnz: int(tail[0]) - diagBase}
	nLeft := int(tail[1]) - leftBase
	st.MaxPattern = max(st.MaxPattern, int(tail[2]))
	st.FallbackRows += int(tail[3])
	if err := r.addEntries(st, int64(c.nnz+nLeft)); err != nil {
		return err
	}
	var err error
	if c.col, err = b.Alloc(4*c.nnz, "G columns"); err == nil {
		if c.val, err = b.Alloc(4*c.nnz, "G values"); err != nil {
			b.Free(c.col, "FSAI set-up")
		}
	}
	if err != nil {
		return err
	}
	r.chunks = append(r.chunks, c)
	r.diagNNZ += c.nnz
	var leftCol, leftVal uintptr // freed once they are on the host
	defer func() {
		b.Free(leftCol, "FSAI set-up")
		b.Free(leftVal, "FSAI set-up")
	}()
	if leftCol, err = b.Alloc(4*nLeft, "G's left columns"); err == nil {
		leftVal, err = b.Alloc(4*nLeft, "G's left values")
	}
	if err != nil {
		return err
	}
	l.launchAssemble(l.perRow(nb), int32(own), diagPtr, int32(diagBase), c.col, c.val,
		r.leftPtr, int32(leftBase), leftCol, leftVal)
	tm.mark(&kt.Assemble)
	leftRows := left.RowPtr[first+1 : first+nb+1]
	switch {
	case nLeft > 0:
		gpu.DownloadSlice(b.Raw, leftRows, r.leftPtr+4)
	case leftBase > 0: // without entries the batch's rows all end where the rows before did
		parallel.For(nb, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				leftRows[i] = int32(leftBase)
			}
		})
	} // and at 0 they hold zero: a batch's row pointers are written once
	cols, vals := make([]int32, nLeft), make([]float32, nLeft)
	gpu.DownloadSlice(b.Raw, cols, leftCol)
	gpu.DownloadSlice(b.Raw, vals, leftVal)
	if b.SyncStream() != nil {
		return b.Err()
	}
	left.ColIdx, left.Val = append(left.ColIdx, cols...), append(left.Val, vals...)
	tm.mark(&kt.Download)
	return tm.collect()
}

// joinKept makes G's diagonal block of the batches' chunks, once all are
// assembled: one batch's arrays become the Matrix's, several are copied one
// after the other into arrays of their joint size.
func (r *fsaiRun) joinKept() error {
	b := r.b
	// The batch state is done with unless the run's rows go on in a
	// second part (a job of interior rows, rowsRun.Finish): freed now,
	// G's block takes its place where several batches are copied into one.
	// A single batch's arrays become the block, and a held run keeps its
	// state past G's transpose (adaptiveFactor).
	if !r.job.hold || len(r.chunks) > 1 && !r.job.interior {
		r.bufs.free()
	}
	n, nnz := r.rows, r.diagNNZ
	cols := r.g.Cols - r.job.own // the own rows, which r computed all of or some of
	var arrays gpu.MatrixArrays
	arrays.RowPtr, r.diagPtr = r.diagPtr, 0
	var err error
	if len(r.chunks) == 1 {
		arrays.Col, arrays.Val = r.chunks[0].col, r.chunks[0].val
		r.chunks = nil
	} else {
		if arrays.Col, err = b.Alloc(4*nnz, "G columns"); err == nil {
			arrays.Val, err = b.Alloc(4*nnz, "G values")
		}
		if err != nil {
			b.AdoptMatrix(n, cols, nnz, backend.Single, arrays).Free()
			return err
		}
		at := uintptr(0)
		for _, c := range r.chunks {
			b.CopyDevice(arrays.Col+at, c.col, 4*c.nnz)
			b.CopyDevice(arrays.Val+at, c.val, 4*c.nnz)
			at += uintptr(4 * c.nnz)
		}
	}
	d := b.AdoptMatrix(n, cols, nnz, backend.Single, arrays)
	if err := b.SyncStream(); err != nil {
		d.Free()
		return err
	}
	r.freeChunks()
	r.kept = &keptRows{left: r.left, diag: d}
	return nil
}
