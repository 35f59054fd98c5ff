package cudaspai

import (
	"runtime"

	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/spai"
)

// boundDiagonal returns l.Bound where the join (kernels/spai_join.cu) can
// read it: A's diagonal block on this device, of l.Diag's shape, without a
// row map; nil otherwise (the host then uploads the whole system).
func (d *Device) boundDiagonal(l *spai.Local) *gpu.Matrix {
	m, ok := l.Bound.(*gpu.Matrix)
	if !ok || m == nil || l.Diag == nil || l.Count() == 0 || !d.Of(m) || m.Arrays().RowMap != 0 ||
		m.Rows() != l.Count() || m.Rows() != l.Diag.Rows || m.Cols() != l.Diag.Cols || m.NNZ() != l.Diag.NNZ() {
		return nil
	}
	return m
}

// join puts the local system s on the device from A's diagonal block diag
// where it lies and the border the host makes (system.border) and
// uploads: spai_join writes the arrays upload would, the same bit for bit,
// and the host neither copies the block into global columns nor uploads
// it. The border's making counts in system_s, its copy and the join in
// to_device_s.
func (a *sysArrays) join(d *Device, ks []gpu.Kernel, s *system, diag *gpu.Matrix, clk *clock, st *spai.Stages) error {
	l := s.l
	b := s.border()
	clk.add(&st.SystemS)
	if err := a.alloc(d, s); err != nil {
		return err
	}
	held, hnnz := len(l.HeldRows), len(l.HeldCol)
	ne, enn := len(b.rows), len(b.cols)
	// the border in one allocation: the 8-byte arrays, then the 4-byte ones
	tmp, err := d.Alloc(8*(held+1+hnnz+ne+1+enn)+4*(hnnz+ne+enn), "SPAI system border")
	if err != nil {
		return err
	}
	defer d.Free(tmp, "SPAI system border")
	hptr := tmp
	hval := hptr + uintptr(8*(held+1))
	eptr := hval + uintptr(8*hnnz)
	eval := eptr + uintptr(8*(ne+1))
	hcol := eval + uintptr(8*enn)
	erows := hcol + uintptr(4*hnnz)
	ecol := erows + uintptr(4*ne)
	gpu.UploadSlice(d.Raw, hptr, l.HeldPtr)
	gpu.UploadSlice(d.Raw, hval, l.HeldVal)
	gpu.UploadSlice(d.Raw, eptr, b.ptr)
	gpu.UploadSlice(d.Raw, eval, b.vals)
	gpu.UploadSlice(d.Raw, hcol, b.heldCols)
	gpu.UploadSlice(d.Raw, erows, b.rows)
	gpu.UploadSlice(d.Raw, ecol, b.cols)
	da := diag.Arrays()
	rows := s.rows()
	launchJoin(d.Raw, ks, d.Blocks(d.ElementBlocks(rows+1)), diag.Precision(), int32(rows), int32(s.below),
		int32(l.Count()), int32(s.colBelow), hptr, hcol, hval, int32(ne), erows, eptr, ecol, eval, da.RowPtr, da.Col,
		da.Val, a.rowPtr, a.col, a.val)
	err = d.SyncStream() // the border's host arrays and the scratch may go
	runtime.KeepAlive(b)
	return err
}
