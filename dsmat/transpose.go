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
// every chunk counts its local entries per row of the result (over the rows
// its columns reach), and places them after those of the chunks before it,
// which keeps the serial order.
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
	// Chunk c counts only over the rows of the result its columns reach,
	// [first[c], first[c]+len(count[c])): for a banded matrix a window
	// around its rows, not a count per row of the stripe for every chunk.
	count, first := make([][]int32, chunks), make([]int64, chunks)
	parallel.For(rows.Count(), func(c, a, b int) {
		cols := rows.Col[rows.RowPtr[a]:rows.RowPtr[b]]
		minCol, maxCol := hi, lo-1
		for _, col := range cols {
			if local(col) {
				minCol, maxCol = min(minCol, col), max(maxCol, col)
			}
		}
		first[c], count[c] = minCol, make([]int32, max(0, maxCol-minCol+1))
		for _, col := range cols {
			if local(col) {
				count[c][col-minCol]++
			}
		}
	})
	// Offsets: the chunks in order, each over its window on all cores;
	// at[r] runs from the entries received from lower ranks.
	at := make([]int32, n)
	for r, v := range below {
		at[r] = int32(v)
	}
	for c, cnt := range count {
		parallel.For(len(cnt), func(_, a, b int) {
			for j := a; j < b; j++ {
				r := first[c] - lo + int64(j)
				cnt[j], at[r] = at[r], at[r]+cnt[j]
			}
		})
	}
	t := &Rows{N: rows.N, First: lo, RowPtr: make([]int64, n+1)}
	parallel.For(n, func(_, a, b int) {
		for r := a; r < b; r++ {
			t.RowPtr[r+1] = int64(at[r]) + above[r]
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
		next, base := count[c], first[c]
		for i := a; i < b; i++ {
			for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
				if col := rows.Col[k]; local(col) {
					p := t.RowPtr[col-lo] + int64(next[col-base])
					t.Col[p], t.Val[p] = rows.First+int64(i), rows.Val[k]
					next[col-base]++
				}
			}
		}
	})
	return t, nil
}
