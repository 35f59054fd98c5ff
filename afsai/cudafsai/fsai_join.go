package cudafsai

import (
	"github.com/fsai-dist/fsai-dist/gpu"
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
	tmp, err := b.Alloc(4*(nptr+2*nent+1), "local system parts")
	if err != nil {
		return err
	}
	defer b.Free(tmp, "FSAI set-up")
	ptrs, cols := tmp, tmp+uintptr(4*nptr)
	vals := cols + uintptr(4*nent)
	bad := vals + uintptr(4*nent)
	filled := sort.Search(a.Border.Rows, func(i int) bool { return int(a.Border.RowPtr[i]) == bnnz }) // rows up to the last entry
	gpu.UploadSlice(b.Raw, ptrs, a.Border.RowPtr[:filled+1])
	b.Memset32(ptrs+uintptr(4*(filled+1)), uint32(bnnz), m-filled)
	gpu.UploadSlice(b.Raw, cols, a.Border.ColIdx)
	gpu.UploadSlice(b.Raw, vals, a.Border.Val)
	var da gpu.MatrixArrays // the diagonal block's
	prec := backend.Single
	if diag != nil {
		da, prec = diag.Arrays(), diag.Precision()
	} else { // the block goes up after the border, in float32
		da = gpu.MatrixArrays{RowPtr: ptrs + uintptr(4*(m+1)), Col: cols + uintptr(4*bnnz), Val: vals + uintptr(4*bnnz)}
		gpu.UploadSlice(b.Raw, da.RowPtr, a.Diag.RowPtr)
		gpu.UploadSlice(b.Raw, da.Col, a.Diag.ColIdx)
		b.UploadValues(da.Val, a.Diag.Val, backend.Single)
	}
	if b.Err() == nil {
		b.Fail(b.Driver().MemsetD32Async(bad, uint32(m), 1, b.Stream(), ""))
	}
	ownList := uintptr(0) // NULL: the kernel lists nothing
	if listOwn {
		ownList = r.rowsDev
	}
	r.fn.launchJoin(b, b.Blocks(b.ElementBlocks(m)), prec, int32(m), int32(a.Own), ptrs, cols, vals,
		da.RowPtr, da.Col, da.Val, s.rowptr, s.col, s.val, s.diag, bad, ownList)
	first := int32(m) // the first bad row
	b.Download(b.Host(), bad, 4)
	if b.SyncStream() == nil {
		first = *(*int32)(b.Host())
	}
	runtime.KeepAlive(a)
	if b.Err() != nil || int(first) == m {
		return b.Err()
	}
	var d float32
	b.Download(b.Host(), s.diag+uintptr(4*first), 4)
	if b.SyncStream() == nil {
		d = *(*float32)(b.Host())
	}
	if b.Err() != nil {
		return b.Err()
	}
	return afsai.DiagonalError(int(first), float64(d))
}

// boundDiagonal returns a.Bound when it is a copy of a.Diag on this backend
// that the join can read (a block of the same shape without a row map), and
// nil otherwise.
func (r *fsaiRun) boundDiagonal(a *afsai.Split) *gpu.Matrix {
	m, ok := a.Bound.(*gpu.Matrix)
	if !ok || m == nil || !r.b.Of(m) || m.Arrays().RowMap != 0 || m.Rows() != a.Diag.Rows || m.Cols() != a.Diag.Cols ||
		m.NNZ() != a.Diag.NNZ() {
		return nil
	}
	return m
}
