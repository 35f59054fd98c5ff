package cudafsai

import (
	"github.com/fsai-dist/fsai-dist/gpu"
	"runtime"
	"slices"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// G's rows in two parts (afsai.Device.StartRows; kernels/fsai_rows.cu): a rank
// computes most of its rows from A's diagonal block while it collects its
// neighbours' rows, and the rest once it has them, in the same set-up
// (fsaiRun.next): its batch state, kernels and host memory serve both
// parts, and are freed once, at the end. Each part's rows are a Matrix of
// their entries in the own columns, with a row map that lists the rows (own
// rows numbered from 0); joinRows makes G's diagonal block of the two. Only
// the second part's rows have entries left of the own columns: the first's
// are computed from A's diagonal block alone.

// rowsRun is a set-up that StartRows began (afsai.RowsRun).
type rowsRun struct {
	b     *Device
	r     *fsaiRun    // nil when StartRows had no rows
	first *gpu.Matrix // the started rows
	p     afsai.Params
}

// StartRows computes the rows of G for the interior own rows of a, a
// system of A's diagonal block alone (Own 0), and keeps them, and the
// set-up, for Finish; it returns the other own rows (afsai.Device.StartRows).
// The device finds the interior rows in the system it joined
// (fsai_interior.go).
func (b *Device) StartRows(a afsai.Split, seeds []int32, hops int, p afsai.Params) (afsai.RowsRun, []int32, afsai.Stats, afsai.KernelTimes, error) {
	if err := afsai.CheckStart(a, seeds, hops); err != nil {
		return nil, nil, afsai.Stats{}, afsai.KernelTimes{}, err
	}
	res, err := b.keptFactor(a, nil, p, fsaiJob{hold: true, interior: true, seeds: seeds, hops: hops})
	if err != nil {
		return nil, nil, res.st, res.kt, err
	}
	x := &rowsRun{b: b, r: res.run, p: p, first: res.kept.diag}
	if r := res.run; r != nil { // the run's rows, local rows of a system whose own rows start at 0, are own rows
		b.SetRowMap(x.first, r.bufs.take(r.rowsDev))
		r.rowsDev = 0
	}
	return x, res.near, res.st, res.kt, nil
}

// localRows returns own rows as local rows of a system whose own rows
// start at own, converted on all cores.
func localRows(rows []int32, own int) []int32 {
	local := make([]int32, len(rows))
	parallel.For(len(rows), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			local[k] = int32(own) + rows[k]
		}
	})
	return local
}

// Finish computes the own rows rest from s in the run's set-up and joins
// them to the started rows, or all own rows of s when a started row
// reaches a marked one (afsai.RowsRun). The factor's Scratch retires the
// run's state (fsaiRun.retire).
func (x *rowsRun) Finish(s afsai.Split, rest, marked []int32) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, bool, error) {
	defer x.Free()
	b := x.b
	reached, err := b.touches(x.first, marked)
	if err != nil {
		return afsai.DeviceFactor{}, afsai.Stats{}, afsai.KernelTimes{}, false, err
	}
	if reached || x.r == nil {
		x.Free() // before the new set-up, for its memory
		df, st, kt, err := b.AdaptiveFactor(s, x.p)
		return df, st, kt, reached, err
	}
	if err := afsai.CheckRows(s, rest); err != nil {
		return afsai.DeviceFactor{}, afsai.Stats{}, afsai.KernelTimes{}, false, err
	}
	res, err := x.r.next(&s, localRows(rest, s.Own), x.p)
	if err != nil {
		return afsai.DeviceFactor{}, res.st, res.kt, false, err
	}
	second := res.kept.diag
	if len(rest) > 0 {
		var rowMap uintptr
		if rowMap, err = b.Alloc(4*len(rest), "row map of a part of G"); err == nil {
			b.SetRowMap(second, rowMap)
			gpu.UploadSlice(b.Raw, rowMap, rest)
			err = b.Backend().Sync()
		}
	}
	var diag, diagT backend.Matrix
	if err == nil {
		diag, diagT, err = b.joinRows(s.Diag.Rows, []*gpu.Matrix{x.first, second})
	}
	second.Free()
	if err != nil {
		return afsai.DeviceFactor{}, res.st, res.kt, false, err
	}
	r := x.r
	x.r = nil // the factor's Scratch retires it
	return afsai.DeviceFactor{Left: res.kept.left, LeftRows: rest, Diag: diag, DiagT: diagT, Scratch: r.scratch()},
		res.st, res.kt, false, nil
}

// Free releases the started rows and the run.
func (x *rowsRun) Free() {
	if x.first != nil {
		x.first.Free()
		x.first = nil
	}
	if x.r != nil {
		x.r.free()
		x.r = nil
	}
}

// touches reports whether a part reaches a marked own row (numbered from
// 0, ascending): whether one of its rows, or a column of its block, is
// marked.
func (b *Device) touches(m *gpu.Matrix, marked []int32) (bool, error) {
	defer b.Enter()()
	if m == nil || m.Rows() == 0 || len(marked) == 0 {
		return false, nil
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
	scratch, err := b.Alloc(4+nflags, "marked rows")
	if err != nil {
		return false, err
	}
	defer b.Free(scratch, "marked rows")
	count := scratch
	b.Memset32(count, 0, 1)
	gpu.UploadSlice(b.Raw, scratch+4, flags)
	ma := m.Arrays()
	fn.launchTouches(b, b.Blocks(b.ElementBlocks(m.Rows())), int32(m.Rows()), ma.RowMap, ma.RowPtr, ma.Col,
		int32(nflags), scratch+4, count)
	b.Download(b.Host(), count, 4)
	if err := b.SyncStream(); err != nil {
		return false, err
	}
	runtime.KeepAlive(flags)
	return *(*int32)(b.Host()) > 0, nil
}

// joinRows makes G's diagonal block of n own rows from parts whose rows
// cover 0 to n-1 once each, and its transpose: each part writes its rows'
// lengths at their places, a prefix sum makes the row pointers, and each
// part copies its rows there.
func (b *Device) joinRows(n int, parts []*gpu.Matrix) (diag, diagT backend.Matrix, err error) {
	defer b.Enter()()
	nnz := 0
	for _, m := range parts {
		nnz += m.NNZ()
	}
	fn, err := b.fsaiKernels()
	if err != nil {
		return nil, nil, err
	}
	var da gpu.MatrixArrays // d's
	var sums uintptr
	if da.RowPtr, err = b.Alloc(4*(n+1), "G row pointers"); err == nil {
		if da.Col, err = b.Alloc(4*nnz, "G columns"); err == nil {
			if da.Val, err = b.Alloc(4*nnz, "G values"); err == nil {
				sums, err = b.Alloc(4*ceilDiv(n+1, gpu.ScanTile), "prefix sum scratch")
			}
		}
	}
	d := b.AdoptMatrix(n, n, nnz, backend.Single, da)
	if err != nil {
		d.Free()
		return nil, nil, err
	}
	b.Memset32(da.RowPtr, 0, 1)
	for _, m := range parts {
		if ma := m.Arrays(); m.Rows() > 0 {
			fn.launchRowsCount(b, b.Blocks(b.ElementBlocks(m.Rows())), int32(m.Rows()), ma.RowMap, ma.RowPtr, da.RowPtr)
		}
	}
	b.Scan(da.RowPtr, n+1, sums)
	for _, m := range parts {
		if ma := m.Arrays(); m.Rows() > 0 {
			fn.launchRowsCopy(b, b.Blocks(b.ElementBlocks(m.Rows())), int32(m.Rows()), ma.RowMap, ma.RowPtr, ma.Col,
				ma.Val, da.RowPtr, da.Col, da.Val)
		}
	}
	err = b.SyncStream()
	b.Free(sums, "prefix sum scratch")
	if err == nil {
		diagT, err = b.Backend().Transpose(d)
	}
	if err != nil {
		d.Free()
		return nil, nil, err
	}
	return d, diagT, nil
}

// next computes, in a run held after its first rows (fsaiJob.hold), G's
// rows for rows, local rows of the local system a, which replaces the
// first rows' system: A goes up again, joined from a, and the steps take
// the plan of a's longest row; the batch state, the kernels and the host
// memory serve again. The rows are kept as the first rows were.
func (r *fsaiRun) next(a *afsai.Split, rows []int32, p afsai.Params) (fsaiResult, error) {
	b := r.b
	if err := afsai.CheckSplit(*a, p); err != nil {
		return fsaiResult{}, err
	}
	// a's rows past its border are the diagonal block's, which the first
	// rows' system held whole
	longest := max(r.job.longest, a.LongestBorderRow())
	pl, err := planFSAI(longest, p)
	if err != nil {
		return fsaiResult{}, err
	}
	defer b.Enter()()
	s := &r.l.params.setup
	// the first rows' arrays are freed after the new ones are allocated: an
	// allocation right after a free took milliseconds
	old := []uintptr{s.rowptr, s.col, s.val, s.diag, r.rowsDev}
	n, nnz := a.Size()
	s.rowptr = r.bufs.alloc(4*(n+1), "A row pointers")
	s.col = r.bufs.alloc(4*nnz, "A columns")
	s.val = r.bufs.alloc(4*nnz, "A values")
	s.diag = r.bufs.alloc(4*n, "A diagonal")
	r.rowsDev = r.bufs.alloc(4*len(rows), "requested rows")
	if r.bufs.err != nil {
		return fsaiResult{}, r.bufs.err
	}
	for _, p := range old {
		if p != 0 {
			r.bufs.release(p, "FSAI set-up")
		}
	}
	r.kt = afsai.KernelTimes{}
	r.tm.start()
	err = r.join(a, s, false)
	gpu.UploadSlice(b.Raw, r.rowsDev, rows)
	r.tm.mark(&r.kt.Upload)
	if err == nil {
		err = r.tm.collect()
	}
	if err != nil {
		return fsaiResult{}, err
	}
	r.job.pl, r.job.longest, r.job.own, r.rows = pl, longest, a.Own, len(rows)
	r.g = csr.Matrix[float32]{Rows: r.rows, Cols: n}
	r.left = &csr.Matrix[float32]{Rows: r.rows, Cols: n, RowPtr: make([]int32, r.rows+1)}
	r.diagNNZ, r.kept = 0, nil
	_, st, err := r.compute(nil, nil)
	runtime.KeepAlive(rows)
	if err != nil {
		r.kept.free()
		return fsaiResult{st: st, kt: r.kt}, err
	}
	return fsaiResult{st: st, kt: r.kt, kept: r.kept}, nil
}
