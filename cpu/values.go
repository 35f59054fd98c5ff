package cpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
)

// SetValues overwrites the values of a matrix of this backend. A double
// precision matrix is the CSR block NewMatrix was given (it keeps it without
// a copy), so that block's values change too; passing its own Val slice is
// allowed and copies nothing.
func (b *Backend) SetValues(a backend.Matrix, vals []float64) error {
	m, ok := a.(*Matrix)
	if !ok || m == nil {
		return fmt.Errorf("cpu: SetValues: %T is not a cpu matrix", a)
	}
	if len(vals) != m.nnz {
		return fmt.Errorf("cpu: SetValues: %d values for a matrix of %d entries", len(vals), m.nnz)
	}
	if m.f32 != nil {
		for k, v := range vals {
			m.f32.Val[k] = float32(v)
		}
		return nil
	}
	copy(m.f64.Val, vals)
	return nil
}
