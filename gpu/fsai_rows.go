package gpu

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
)

// G's rows in parts (afsai.RowsDevice; kernels/fsai_rows.cu): a rank
// computes most of its rows from A's diagonal block while it collects its
// neighbours' rows, and the rest once it has them. A part's block is a
// Matrix of the rows it stores, with a row map to their own rows.

// AdaptiveRows computes the rows of G for the own rows rows of a and keeps
// them on the device (afsai.RowsDevice).
func (b *Backend) AdaptiveRows(a afsai.Split, rows []int32, p afsai.Params) (afsai.RowsPart, afsai.Stats, afsai.KernelTimes, error) {
	if err := afsai.CheckRows(a, rows); err != nil {
		return afsai.RowsPart{}, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	local := make([]int32, len(rows))
	for k, r := range rows {
		local[k] = int32(a.Own) + r
	}
	res, err := b.keptFactor(a, local, p, fsaiJob{})
	if err != nil {
		return afsai.RowsPart{}, res.st, res.kt, err
	}
	block := res.kept.diag
	if len(rows) > 0 {
		if block.rowMap, err = b.alloc(4*len(rows), "row map of a part of G"); err == nil {
			uploadSlice(b, block.rowMap, rows)
			err = b.Sync()
		}
	}
	if err != nil {
		block.Free()
		return afsai.RowsPart{}, res.st, res.kt, err
	}
	return afsai.RowsPart{Rows: rows, Left: res.kept.left, Block: block}, res.st, res.kt, nil
}

// partBlock returns the block of a part, checked to be one of this
// backend's with a row map of its rows.
func (b *Backend) partBlock(op string, part afsai.RowsPart) (*Matrix, error) {
	m, err := b.ownMatrix(op, part.Block)
	if err == nil && (m.rows != len(part.Rows) || (m.rows > 0 && m.rowMap == 0)) {
		err = fmt.Errorf("gpu: %s: a block of %d rows for a part of %d", op, m.rows, len(part.Rows))
	}
	return m, err
}

// Touches reports whether a part reaches a marked own row
// (afsai.RowsDevice).
func (b *Backend) Touches(part afsai.RowsPart, marked []int32) (bool, error) {
	defer b.enter()()
	m, err := b.partBlock("Touches", part)
	if err != nil || m.rows == 0 || len(marked) == 0 {
		return false, err
	}
	fn, err := b.fsaiKernels()
	if err != nil {
		return false, err
	}
	nflags := int(slices.Max(marked)) + 1
	flags := make([]byte, nflags)
	for _, r := range marked {
		flags[r] = 1
	}
	scratch, err := b.alloc(4+nflags, "marked rows")
	if err != nil {
		return false, err
	}
	defer b.free(scratch, "marked rows")
	count := scratch
	b.memset32(count, 0, 1)
	uploadSlice(b, scratch+4, flags)
	b.launch(&fn.touches, b.elementBlocks(m.rows), uint64(m.rows), uint64(m.rowMap), uint64(m.rowPtr), uint64(m.col),
		uint64(nflags), uint64(scratch+4), uint64(count))
	b.download(b.host, count, 4)
	if err := b.syncLocked(); err != nil {
		return false, err
	}
	runtime.KeepAlive(flags)
	return *(*int32)(b.host) > 0, nil
}

// JoinRows makes G's diagonal block of n own rows from parts, and its
// transpose (afsai.RowsDevice): each part writes its rows' lengths at
// their places, a prefix sum makes the row pointers, and each part copies
// its rows there.
func (b *Backend) JoinRows(n int, parts []afsai.RowsPart) (diag, diagT backend.Matrix, err error) {
	defer b.enter()()
	blocks := make([]*Matrix, len(parts))
	rows, nnz := 0, 0
	for k, part := range parts {
		if blocks[k], err = b.partBlock("JoinRows", part); err != nil {
			return nil, nil, err
		}
		rows, nnz = rows+blocks[k].rows, nnz+blocks[k].nnz
	}
	if rows != n {
		return nil, nil, fmt.Errorf("gpu: JoinRows: parts of %d rows for a block of %d", rows, n)
	}
	fn, err := b.fsaiKernels()
	if err != nil {
		return nil, nil, err
	}
	d := &Matrix{b: b, rows: n, cols: n, nnz: nnz, prec: backend.Single, width: spmvWidth(n, nnz, backend.Single)}
	var sums uintptr
	if d.rowPtr, err = b.alloc(4*(n+1), "G row pointers"); err == nil {
		if d.col, err = b.alloc(4*nnz, "G columns"); err == nil {
			if d.val, err = b.alloc(4*nnz, "G values"); err == nil {
				sums, err = b.alloc(4*ceilDiv(n+1, scanTile), "prefix sum scratch")
			}
		}
	}
	if err != nil {
		d.Free()
		return nil, nil, err
	}
	b.memset32(d.rowPtr, 0, 1)
	for _, m := range blocks {
		if m.rows > 0 {
			b.launch(&fn.rowsCount, b.elementBlocks(m.rows), uint64(m.rows), uint64(m.rowMap), uint64(m.rowPtr), uint64(d.rowPtr))
		}
	}
	b.scan(d.rowPtr, n+1, sums)
	for _, m := range blocks {
		if m.rows > 0 {
			b.launch(&fn.rowsCopy, b.elementBlocks(m.rows), uint64(m.rows), uint64(m.rowMap), uint64(m.rowPtr), uint64(m.col),
				uint64(m.val), uint64(d.rowPtr), uint64(d.col), uint64(d.val))
		}
	}
	err = b.syncLocked()
	b.free(sums, "prefix sum scratch")
	if err == nil {
		diagT, err = b.Transpose(d)
	}
	if err != nil {
		d.Free()
		return nil, nil, err
	}
	return d, diagT, nil
}
