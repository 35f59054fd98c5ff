package dsmat

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/comm"
)

// Transpose returns this rank's stripe of the transpose of the distributed
// matrix whose stripes are rows, under the same partition: every entry
// travels to the owner of its column. Collective. The FSAI preconditioner
// builds G' once with it, so that z = G'(G r) is two distributed SpMVs.
func Transpose(c *comm.Comm, part Partition, rows *Rows) (*Rows, error) {
	ts := rows.triplets(func(row, col int64) (int64, int64) { return col, row })
	mine, err := routeTriplets(c, part, ts)
	if err != nil {
		return nil, fmt.Errorf("dsmat: transpose: %w", err)
	}
	lo, hi := part.Range(c.Rank())
	t, _, err := AssembleRows(rows.N, lo, int(hi-lo), mine)
	if err != nil {
		return nil, fmt.Errorf("dsmat: transpose: %w", err)
	}
	return t, nil
}

// triplets lists the entries of the stripe in global numbering, each placed
// at the position place gives it.
func (r *Rows) triplets(place func(row, col int64) (int64, int64)) []Triplet {
	ts := make([]Triplet, 0, r.NNZ())
	for i := 0; i < r.Count(); i++ {
		for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
			row, col := place(r.First+int64(i), r.Col[k])
			ts = append(ts, Triplet{Row: row, Col: col, Val: r.Val[k]})
		}
	}
	return ts
}
