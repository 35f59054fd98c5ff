package gpu

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
)

// SetValues overwrites the values of a matrix of this backend in place (no
// reallocation), rounding them to float32 for a single precision matrix,
// and waits for the copy.
func (b *Backend) SetValues(a backend.Matrix, vals []float64) error {
	defer b.enter()()
	m, ok := a.(*Matrix)
	switch {
	case !ok || m == nil || m.b != b:
		return fmt.Errorf("gpu: SetValues: %T is not a matrix of this backend", a)
	case len(vals) != m.nnz:
		return fmt.Errorf("gpu: SetValues: %d values for a matrix of %d entries", len(vals), m.nnz)
	case m.nnz == 0:
		return b.err
	}
	var v32 []float32
	if m.prec == backend.Single {
		v32 = make([]float32, m.nnz)
		for k, v := range vals {
			v32[k] = float32(v)
		}
		b.upload(m.val, unsafe.Pointer(&v32[0]), 4*m.nnz)
	} else {
		b.upload(m.val, unsafe.Pointer(&vals[0]), 8*m.nnz)
	}
	err := b.syncLocked()
	runtime.KeepAlive(v32)
	runtime.KeepAlive(vals)
	return err
}
