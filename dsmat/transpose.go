package dsmat

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
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
//
// The scans of the stripe run on all cores, one chunk of source rows each:
// every chunk counts its local entries per row of the result, and places
// them after those of the chunks before it, which keeps the serial order.
func Transpose(c *comm.Comm, part Partition, rows *Rows) (*Rows, error) {
	lo, hi := part.Range(c.Rank())
	local := func(col int64) bool { return col >= lo && col < hi }
	chunks := parallel.Chunks(rows.Count())
	parts := make([][]Triplet, chunks)
	parallel.For(rows.Count(), func(c, a, b int) {
		for i := a; i < b; i++ {
			for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
				if col := rows.Col[k]; !local(col) {
					parts[c] = append(parts[c], Triplet{Row: col, Col: rows.First + int64(i), Val: rows.Val[k]})
				}
			}
		}
	})
	recv, err := routeTriplets(c, part, slices.Concat(parts...))
	if err != nil {
		return nil, fmt.Errorf("dsmat: transpose: %w", err)
	}

	n := int(hi - lo)
	// below and above count the received entries per row from lower and
	// higher ranks; count[c] the local ones of chunk c, then the offset of
	// its next one from the row's start.
	below, above := make([]int64, n), make([]int64, n)
	for _, e := range recv {
		if e.Col < lo {
			below[e.Row-lo]++
		} else {
			above[e.Row-lo]++
		}
	}
	count := make([][]int32, chunks)
	parallel.For(rows.Count(), func(c, a, b int) {
		count[c] = make([]int32, n)
		for _, col := range rows.Col[rows.RowPtr[a]:rows.RowPtr[b]] {
			if local(col) {
				count[c][col-lo]++
			}
		}
	})
	t := &Rows{N: rows.N, First: lo, RowPtr: make([]int64, n+1)}
	parallel.For(n, func(_, a, b int) {
		for r := a; r < b; r++ {
			s := int32(below[r])
			for _, cnt := range count {
				cnt[r], s = s, s+cnt[r]
			}
			t.RowPtr[r+1] = int64(s) + above[r]
		}
	})
	for r := range n {
		t.RowPtr[r+1] += t.RowPtr[r]
	}
	t.Col = make([]int64, t.RowPtr[n])
	t.Val = make([]float64, len(t.Col))
	// the received entries, in the order received: those from lower ranks
	// at the start of their rows, those from higher ranks at the end
	clear(below)
	for _, e := range recv {
		r := e.Row - lo
		var k int64
		if e.Col < lo {
			k = t.RowPtr[r] + below[r]
			below[r]++
		} else {
			k = t.RowPtr[r+1] - above[r]
			above[r]--
		}
		t.Col[k], t.Val[k] = e.Col, e.Val
	}
	parallel.For(rows.Count(), func(c, a, b int) {
		next := count[c]
		for i := a; i < b; i++ {
			for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
				if col := rows.Col[k]; local(col) {
					p := t.RowPtr[col-lo] + int64(next[col-lo])
					t.Col[p], t.Val[p] = rows.First+int64(i), rows.Val[k]
					next[col-lo]++
				}
			}
		}
	})
	return t, nil
}
