package dsmat

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/comm"
)

// Transpose returns this rank's stripe of the transpose of the distributed
// matrix whose stripes are rows, under the same partition. Collective. The
// FSAI preconditioner builds G' once with it, so that z = G'(G r) is two
// distributed SpMVs.
//
// Only the entries whose column another rank owns travel; the others are
// transposed in place by a counting sort. Placing, in each row of the
// result, first the entries from lower ranks, then the local ones, then
// those from higher ranks leaves every row sorted without a sort: each group
// arrives in ascending order of its source row, which is the new column.
func Transpose(c *comm.Comm, part Partition, rows *Rows) (*Rows, error) {
	lo, hi := part.Range(c.Rank())
	local := func(col int64) bool { return col >= lo && col < hi }
	var remote []Triplet
	for i := 0; i < rows.Count(); i++ {
		for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
			if col := rows.Col[k]; !local(col) {
				remote = append(remote, Triplet{Row: col, Col: rows.First + int64(i), Val: rows.Val[k]})
			}
		}
	}
	recv, err := routeTriplets(c, part, remote)
	if err != nil {
		return nil, fmt.Errorf("dsmat: transpose: %w", err)
	}

	t := &Rows{N: rows.N, First: lo, RowPtr: make([]int64, hi-lo+1)}
	for _, e := range recv {
		t.RowPtr[e.Row-lo+1]++
	}
	for _, col := range rows.Col {
		if local(col) {
			t.RowPtr[col-lo+1]++
		}
	}
	for i := 0; i < len(t.RowPtr)-1; i++ {
		t.RowPtr[i+1] += t.RowPtr[i]
	}
	t.Col = make([]int64, t.RowPtr[len(t.RowPtr)-1])
	t.Val = make([]float64, len(t.Col))
	next := append([]int64(nil), t.RowPtr[:len(t.RowPtr)-1]...)
	place := func(row, col int64, val float64) {
		k := next[row-lo]
		t.Col[k], t.Val[k] = col, val
		next[row-lo]++
	}
	for _, e := range recv {
		if e.Col < lo {
			place(e.Row, e.Col, e.Val)
		}
	}
	for i := 0; i < rows.Count(); i++ {
		for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
			if col := rows.Col[k]; local(col) {
				place(col, rows.First+int64(i), rows.Val[k])
			}
		}
	}
	for _, e := range recv {
		if e.Col >= hi {
			place(e.Row, e.Col, e.Val)
		}
	}
	return t, nil
}
