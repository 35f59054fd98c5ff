package dsmat

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/comm"
)

// BalanceNNZ moves whole rows between ranks so that every rank holds about
// the same number of nonzeros rather than of rows: the better split when row
// lengths vary (structural problems, refined meshes). Collective; it returns
// this rank's new stripe and the new partition.
func BalanceNNZ(c *comm.Comm, rows *Rows) (*Rows, Partition, error) {
	np := c.Size()
	before, err := comm.Exscan(c, rows.NNZ())
	if err != nil {
		return nil, Partition{}, fmt.Errorf("dsmat: balance: %w", err)
	}
	total, err := comm.AllreduceScalar(c, comm.Sum, rows.NNZ())
	if err != nil {
		return nil, Partition{}, fmt.Errorf("dsmat: balance: %w", err)
	}

	// Row i goes to rank floor(np * (nonzeros before row i) / total), which
	// never decreases with i; rank q's stripe starts at its first such row.
	// Ranks learn the starts that fall in other stripes by a MIN reduction.
	offsets := make([]int64, np+1)
	for q := range offsets {
		offsets[q] = rows.N
	}
	offsets[0] = 0
	next := 1
	for i := 0; i < rows.Count() && total > 0; i++ {
		owner := int(int64(np) * (before + rows.RowPtr[i]) / total)
		for ; next <= owner && next < np; next++ {
			offsets[next] = rows.First + int64(i)
		}
	}
	if err := comm.Allreduce(c, comm.Min, offsets); err != nil {
		return nil, Partition{}, fmt.Errorf("dsmat: balance: %w", err)
	}
	part := Partition{Offsets: offsets}

	ts := make([]Triplet, 0, rows.NNZ())
	for i := 0; i < rows.Count(); i++ {
		for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
			ts = append(ts, Triplet{Row: rows.First + int64(i), Col: rows.Col[k], Val: rows.Val[k]})
		}
	}
	mine, err := RouteTriplets(c, part, ts)
	if err != nil {
		return nil, Partition{}, err
	}
	lo, hi := part.Range(c.Rank())
	out, _, err := AssembleRows(rows.N, lo, int(hi-lo), mine)
	if err != nil {
		return nil, Partition{}, fmt.Errorf("dsmat: balance: %w", err)
	}
	return out, part, nil
}
