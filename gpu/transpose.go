package gpu

import (
	"fmt"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// scanTile is the entries one block of the prefix sum scans
// (FSAI_SCAN_TILE in kernels/transpose.cu).
const scanTile = blockSize * 8

// valueBytes is the size of a matrix value in precision p.
func valueBytes(p backend.Precision) int {
	if p == backend.Single {
		return 4
	}
	return 8
}

// ownMatrix returns a as a matrix of this backend, or an error that op
// names.
func (b *Backend) ownMatrix(op string, a backend.Matrix) (*Matrix, error) {
	m, ok := a.(*Matrix)
	if !ok || m == nil || m.b != b {
		return nil, fmt.Errorf("gpu: %s: %T is not a matrix of this backend", op, a)
	}
	return m, nil
}

// Transpose returns the transpose of m (a block of this backend without a
// row map) as a new block on the device: m.Cols() rows, m.Rows() columns,
// the same precision, and every row's columns ascending, so that it equals
// the host transpose (csr.Transpose) entry for entry. It lets the FSAI
// factor G stay on the device while G' is built there.
//
// The kernels (kernels/transpose.cu) count the entries of each column by
// atomics into the new row pointers; a prefix sum on the device turns the
// counts into the ends of the rows (each block scans a tile, one block
// scans the tiles' sums, a third pass adds them back: no copy to the host
// and back); the entries are scattered to their rows, each taking its
// row's last free slot by an atomic decrement of its end, which leaves the
// starts of the rows, the row pointers; last each row is sorted by column,
// which makes the result independent of the order the atomics ran in. The
// only scratch is one int per tile of the prefix sum. Transpose waits for
// the kernels, so that their failures show here; the matrix it returns is
// the caller's to free.
func (b *Backend) Transpose(m backend.Matrix) (backend.Matrix, error) {
	defer b.enter()()
	a, err := b.ownMatrix("Transpose", m)
	if err != nil {
		return nil, err
	}
	if a.rowMap != 0 {
		return nil, fmt.Errorf("gpu: Transpose: the block has a row map (only its non-empty rows are stored)")
	}
	t := &Matrix{b: b, rows: a.cols, cols: a.rows, nnz: a.nnz, prec: a.prec, width: spmvWidth(a.cols, a.nnz, a.prec)}
	var sums uintptr
	t.rowPtr, err = b.alloc(4*(t.rows+1), "transpose row pointers")
	if err == nil {
		t.col, err = b.alloc(4*t.nnz, "transpose column indices")
	}
	if err == nil {
		t.val, err = b.alloc(valueBytes(t.prec)*t.nnz, "transpose values")
	}
	if err == nil {
		sums, err = b.alloc(4*ceilDiv(t.rows, scanTile), "transpose tile sums")
	}
	if err != nil {
		t.Free()
		return nil, fmt.Errorf("gpu: Transpose: %w", err)
	}
	b.memset32(t.rowPtr, 0, t.rows)
	b.memset32(t.rowPtr+uintptr(4*t.rows), uint32(t.nnz), 1)
	b.launchTransposeCount(b.blocks(b.elementBlocks(a.nnz)), int64(a.nnz), a.col, t.rowPtr)
	b.scan(t.rowPtr, t.rows, sums)
	b.launchTransposeScatter(b.blocks(b.elementBlocks(a.rows)), a.prec, int32(a.rows), a.rowPtr, a.col, a.val, t.rowPtr, t.col, t.val)
	b.launchTransposeSort(b.blocks(b.elementBlocks(t.rows)), t.prec, int32(t.rows), t.rowPtr, t.col, t.val)
	b.syncLocked() // its error, if any, is b.err, checked below
	if sums != 0 {
		b.free(sums, "transpose tile sums")
	}
	if b.err != nil {
		t.Free()
		return nil, fmt.Errorf("gpu: Transpose: %w", b.err)
	}
	return t, nil
}

// memset32 queues setting the n int32s at p to v.
func (b *Backend) memset32(p uintptr, v uint32, n int) {
	if b.err == nil && n > 0 {
		b.fail(b.drv.MemsetD32Async(p, v, n, b.stream, ""))
	}
}

// scan queues the inclusive prefix sum of the n int32s at data, in place;
// sums has room for one int32 per tile of scanTile entries.
func (b *Backend) scan(data uintptr, n int, sums uintptr) {
	tiles := ceilDiv(n, scanTile)
	b.launchScanTiles(b.blocks(tiles), int64(n), data, sums)
	if tiles > 1 {
		b.launchScanSums(b.blocks(1), int64(tiles), sums)
		b.launchScanAdd(b.blocks(b.elementBlocks(n-scanTile)), int64(n), data, sums)
	}
}

// ReadMatrix copies a block of this backend to the host: row pointers,
// columns, values (float32 ones widened to float64, exactly) and its row
// map (nil when it has none). It is how a block built on the device (a
// factor, a transpose) is checked or kept on the host.
func (b *Backend) ReadMatrix(m backend.Matrix) (*csr.Matrix[float64], []int32, error) {
	defer b.enter()()
	g, err := b.ownMatrix("ReadMatrix", m)
	if err != nil {
		return nil, nil, err
	}
	out := &csr.Matrix[float64]{Rows: g.rows, Cols: g.cols, RowPtr: make([]int32, g.rows+1),
		ColIdx: make([]int32, g.nnz), Val: make([]float64, g.nnz)}
	downloadSlice(b, out.RowPtr, g.rowPtr)
	downloadSlice(b, out.ColIdx, g.col)
	if g.prec == backend.Double {
		downloadSlice(b, out.Val, g.val)
	} else {
		b.staging.download(b, g.val, g.nnz, 4, func(buf unsafe.Pointer, lo, hi int) {
			for k, v := range unsafe.Slice((*float32)(buf), hi-lo) {
				out.Val[lo+k] = float64(v)
			}
		})
	}
	var rowMap []int32
	if g.rowMap != 0 {
		rowMap = make([]int32, g.rows)
		downloadSlice(b, rowMap, g.rowMap)
	}
	if b.err != nil {
		return nil, nil, fmt.Errorf("gpu: ReadMatrix: %w", b.err)
	}
	return out, rowMap, nil
}
