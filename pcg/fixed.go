package pcg

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/ddmat"
)

// fixedColumns are columns of a block iterate x that the solve must leave as
// they are at some point: zero right-hand sides (zero solutions) and columns
// that stopped on a failure, whose later steps with alpha = 0 would still
// turn them into NaN when p holds NaN (0*NaN is NaN). apply writes them back
// at the end. With one column there is nothing to protect: the solve ends
// when its column does.
type fixedColumns struct {
	x    *ddmat.Dense
	vals map[int][]float64 // nil: zeros
	host []float64
	err  error
}

func newFixedColumns(x *ddmat.Dense) *fixedColumns {
	return &fixedColumns{x: x, vals: make(map[int][]float64)}
}

// zero makes column c zero.
func (f *fixedColumns) zero(c int) { f.vals[c] = nil }

// keep records column c's current values.
func (f *fixedColumns) keep(c int) {
	if f.x.Cols == 1 || f.err != nil {
		return
	}
	if err := f.download(); err != nil {
		f.err = err
		return
	}
	col := make([]float64, f.x.Rows)
	for i := range col {
		col[i] = f.host[i*f.x.Cols+c]
	}
	f.vals[c] = col
}

func (f *fixedColumns) download() error {
	if f.host == nil {
		f.host = make([]float64, f.x.Rows*f.x.Cols)
	}
	if err := f.x.Get(f.host); err != nil {
		return fmt.Errorf("pcg: keep a stopped column: %w", err)
	}
	return nil
}

// apply writes the fixed columns into x.
func (f *fixedColumns) apply() error {
	if f.err != nil || len(f.vals) == 0 {
		return f.err
	}
	defer clear(f.vals)
	if f.x.Cols == 1 {
		f.x.BE.Fill(f.x.V, 0)
		return f.x.BE.Err()
	}
	if err := f.download(); err != nil {
		return err
	}
	k := f.x.Cols
	for c, col := range f.vals {
		for i := range f.x.Rows {
			f.host[i*k+c] = 0
			if col != nil {
				f.host[i*k+c] = col[i]
			}
		}
	}
	return f.x.Set(f.host)
}
