package gpu

import (
	"runtime"
	"sort"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
)

// join puts the local system of the parts a on the device, into the
// set-up's A (s: row pointers, columns, values and diagonal), and, with
// listOwn, lists its own rows, a.Own and after, in r.rowsDev. The host
// uploads the border's rows up to its last entry into a scratch
// allocation (the rows after hold nothing: most of a stripe, all of it on
// one rank; their pointers are set on the device, to the border's end),
// and A's diagonal
// block is read where it is: the bound operator's block when a.Bound is one
// of this backend's matrices (nothing of it is uploaded again), otherwise
// uploaded beside the border, its values rounded to float32 on the way.
// fsai_join (kernels/fsai_join.cu) joins them: the host never copies the
// block into a joined matrix of the stripe's size. It returns
// afsai.DiagonalError for the first row whose diagonal entry is not
// positive and finite, as afsai.CheckAdaptive does for the joined system.
func (r *fsaiRun) join(a *afsai.Split, s *fsaiSetup, listOwn bool) error {
	b := r.b
	m, _ := a.Size()
	bnnz := a.Border.NNZ()
	diag := r.boundDiagonal(a)
	nptr, nent := m+1, bnnz
	if diag == nil {
		nptr, nent = nptr+a.Diag.Rows+1, nent+a.Diag.NNZ()
	}
	tmp, err := b.alloc(4*(nptr+2*nent+1), "local system parts")
	if err != nil {
		return err
	}
	defer b.free(tmp, "FSAI set-up")
	ptrs, cols := tmp, tmp+uintptr(4*nptr)
	vals := cols + uintptr(4*nent)
	bad := vals + uintptr(4*nent)
	filled := sort.Search(a.Border.Rows, func(i int) bool { return int(a.Border.RowPtr[i]) == bnnz }) // rows up to the last entry
	uploadSlice(b, ptrs, a.Border.RowPtr[:filled+1])
	b.memset32(ptrs+uintptr(4*(filled+1)), uint32(bnnz), m-filled)
	uploadSlice(b, cols, a.Border.ColIdx)
	uploadSlice(b, vals, a.Border.Val)
	if diag == nil { // the block goes up after the border, in float32
		diag = &Matrix{rowPtr: ptrs + uintptr(4*(m+1)), col: cols + uintptr(4*bnnz), val: vals + uintptr(4*bnnz),
			prec: backend.Single}
		uploadSlice(b, diag.rowPtr, a.Diag.RowPtr)
		uploadSlice(b, diag.col, a.Diag.ColIdx)
		b.uploadValues(diag.val, a.Diag.Val, backend.Single)
	}
	if b.err == nil {
		b.fail(b.drv.MemsetD32Async(bad, uint32(m), 1, b.stream, ""))
	}
	ownList := uintptr(0) // NULL: the kernel lists nothing
	if listOwn {
		ownList = r.rowsDev
	}
	r.fn.launchJoin(b, b.blocks(b.elementBlocks(m)), diag.prec, int32(m), int32(a.Own), ptrs, cols, vals,
		diag.rowPtr, diag.col, diag.val, s.rowptr, s.col, s.val, s.diag, bad, ownList)
	first := int32(m) // the first bad row
	b.download(b.host, bad, 4)
	if b.syncLocked() == nil {
		first = *(*int32)(b.host)
	}
	runtime.KeepAlive(a)
	if b.err != nil || int(first) == m {
		return b.err
	}
	var d float32
	b.download(b.host, s.diag+uintptr(4*first), 4)
	if b.syncLocked() == nil {
		d = *(*float32)(b.host)
	}
	if b.err != nil {
		return b.err
	}
	return afsai.DiagonalError(int(first), float64(d))
}

// boundDiagonal returns a.Bound when it is a copy of a.Diag on this backend
// that the join can read (a block of the same shape without a row map), and
// nil otherwise.
func (r *fsaiRun) boundDiagonal(a *afsai.Split) *Matrix {
	m, ok := a.Bound.(*Matrix)
	if !ok || m == nil || m.b != r.b || m.rowMap != 0 || m.rows != a.Diag.Rows || m.cols != a.Diag.Cols ||
		m.nnz != a.Diag.NNZ() {
		return nil
	}
	return m
}
