package gpu

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// Matrix is a CSR block in device memory: int32 row pointers and column
// indices, float64 or float32 values.
type Matrix struct {
	b                *Backend
	rows, cols, nnz  int
	prec             backend.Precision
	rowPtr, col, val uintptr
	rowMap           uintptr // 0: row k is row k of y
	width            int     // threads per row in SpMV
}

// Rows, Cols, NNZ and Precision describe the block.
func (m *Matrix) Rows() int { return m.rows }

func (m *Matrix) Cols() int                    { return m.cols }
func (m *Matrix) NNZ() int                     { return m.nnz }
func (m *Matrix) Precision() backend.Precision { return m.prec }

// Width is the number of threads that share a row in SpMV (1 to 32).
func (m *Matrix) Width() int { return m.width }

// Free releases the device memory.
func (m *Matrix) Free() {
	for _, p := range []*uintptr{&m.rowPtr, &m.col, &m.val, &m.rowMap} {
		if *p != 0 {
			m.b.free(*p, "matrix")
			*p = 0
		}
	}
	m.rows, m.cols, m.nnz = 0, 0, 0
}

// spmvWidth picks the threads per row of SpMV: the largest power of two
// (at most 32) that leaves each thread about 48 bytes of a row's values or
// more, 6 entries in double and 12 in single precision. Measured on an H200
// over 10^8-nonzero matrices of 4 to 192 entries per row (BenchmarkSpMVWidth),
// this width was the fastest or within 11% of it; one thread per row wins
// below about 12 (double) or 24 (single) entries per row, e.g. on the
// 7-point Laplacian.
func spmvWidth(rows, nnz int, p backend.Precision) int {
	if rows == 0 {
		return 1
	}
	valBytes := 8
	if p == backend.Single {
		valBytes = 4
	}
	lanes := float64(nnz) * float64(valBytes) / float64(rows) / 48
	w := 1
	for w < 32 && float64(2*w) <= lanes {
		w *= 2
	}
	return w
}

// NewMatrix copies m (and its row map, if any) to the device, with values
// rounded to float32 when p is Single. m must satisfy m.Check(); only its
// sizes are verified here. Large arrays go through the staging buffer
// (staging.go).
func (b *Backend) NewMatrix(m *csr.Matrix[float64], rowMap []int32, p backend.Precision) (backend.Matrix, error) {
	if len(m.RowPtr) != m.Rows+1 || len(m.Val) != m.NNZ() || int(m.RowPtr[m.Rows]) != m.NNZ() ||
		(rowMap != nil && len(rowMap) != m.Rows) {
		return nil, fmt.Errorf("gpu: NewMatrix: %d rows, %d row pointers, %d indices, %d values, row map of %d",
			m.Rows, len(m.RowPtr), m.NNZ(), len(m.Val), len(rowMap))
	}
	defer b.enter()()
	g := &Matrix{b: b, rows: m.Rows, cols: m.Cols, nnz: m.NNZ(), prec: p, width: spmvWidth(m.Rows, m.NNZ(), p)}
	var err error
	if g.rowPtr, err = b.alloc(4*len(m.RowPtr), "matrix row pointers"); err != nil {
		return nil, err
	}
	if g.col, err = b.alloc(4*g.nnz, "matrix column indices"); err == nil {
		g.val, err = b.alloc(valueBytes(p)*g.nnz, "matrix values")
	}
	if err == nil && len(rowMap) > 0 {
		g.rowMap, err = b.alloc(4*len(rowMap), "matrix row map")
	}
	if err != nil {
		g.Free()
		return nil, err
	}
	uploadSlice(b, g.rowPtr, m.RowPtr)
	uploadSlice(b, g.col, m.ColIdx)
	b.uploadValues(g.val, m.Val, p)
	uploadSlice(b, g.rowMap, rowMap)
	// Wait, so that the host arrays may change and a copy error shows here.
	err = b.syncLocked()
	runtime.KeepAlive(m)
	runtime.KeepAlive(rowMap)
	if err != nil {
		g.Free()
		return nil, err
	}
	return g, nil
}

// uploadValues queues a copy of vals to device memory at dst in precision
// p, as uploadSlice does. Single precision values always go through the
// staging buffer, which rounds them on the way, on all cores: no float32
// copy of them is made.
func (b *Backend) uploadValues(dst uintptr, vals []float64, p backend.Precision) {
	if p == backend.Double {
		uploadSlice(b, dst, vals)
		return
	}
	b.staging.upload(b, dst, len(vals), 4, func(buf unsafe.Pointer, lo, hi int) {
		out := unsafe.Slice((*float32)(buf), hi-lo)
		for k, v := range vals[lo:hi] {
			out[k] = float32(v)
		}
	})
}
