package gpu

import (
	"fmt"
	"runtime"

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
	b.uploadValues(m.val, vals, m.prec)
	err := b.syncLocked()
	runtime.KeepAlive(vals)
	return err
}
