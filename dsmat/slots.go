package dsmat

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// ValueSlots stores new values of a stripe straight into the blocks of a
// Matrix with its pattern, over all cores: SetValues checks the pattern and
// walks the stripe row by row, which is right for values from a user and
// needlessly slow for values a program produces on a pattern it knows
// (the updates of an FSAI factor). The slots are found once, by SetValues
// on entry numbers.
type ValueSlots struct {
	m    *Matrix
	diag []int32   // stripe entry of each diagonal-block value
	off  [][]int32 // the same per off-diagonal block
}

// NewValueSlots finds where the entries of rows, a stripe with m's pattern
// (its values are ignored), go in m's blocks. It leaves entry numbers as
// m's values: Set replaces them.
func (m *Matrix) NewValueSlots(rows *Rows) (*ValueSlots, error) {
	if len(rows.Val) >= 1<<31 {
		return nil, fmt.Errorf("dsmat: value slots: %d entries on one rank", len(rows.Val))
	}
	numbered := *rows
	numbered.Val = make([]float64, len(rows.Val))
	for k := range numbered.Val {
		numbered.Val[k] = float64(k)
	}
	if err := m.SetValues(&numbered); err != nil {
		return nil, err
	}
	slots := func(vals []float64) []int32 {
		s := make([]int32, len(vals))
		for k, v := range vals {
			s[k] = int32(v)
		}
		return s
	}
	s := &ValueSlots{m: m, diag: slots(m.Diag.Val)}
	for _, b := range m.Off {
		s.off = append(s.off, slots(b.A.Val))
	}
	return s, nil
}

// DiagonalSlots returns the stripe entry of each value of the diagonal
// block, in the block's order; the caller must not change it.
func (s *ValueSlots) DiagonalSlots() []int32 { return s.diag }

// SetOffDiagonal is Set for the off-diagonal blocks alone, for a matrix
// whose diagonal block gets its values elsewhere (on the backend).
func (s *ValueSlots) SetOffDiagonal(vals []float64) {
	for b, idx := range s.off {
		parallel.Gather(s.m.Off[b].A.Val, vals, idx)
	}
}

// Set stores vals, a stripe's values in the order of the rows given to
// NewValueSlots, into the matrix's blocks. The diagonal's range is then
// found when asked for (DiagonalRange).
func (s *ValueSlots) Set(vals []float64) {
	parallel.Gather(s.m.Diag.Val, vals, s.diag)
	s.m.diagRange = nil
	s.SetOffDiagonal(vals)
}
