package afsai

import (
	"slices"

	"github.com/fsai-dist/fsai-dist/dsmat"
)

// cursors walk the stored rows of blocks in ascending order, so that
// visiting rows in order costs no search per block and row.
type cursors struct {
	blocks []*dsmat.Block
	at     []int // per block, the first stored row not passed yet
}

// newCursors starts cursors on blocks at local row lo.
func newCursors(blocks []*dsmat.Block, lo int) cursors {
	cur := cursors{blocks, make([]int, len(blocks))}
	for k, b := range blocks {
		cur.at[k], _ = slices.BinarySearch(b.Rows, int32(lo))
	}
	return cur
}

// row returns the compact columns and values of local row i in block k,
// empty when the block has none; i must not be below the last row asked.
func (cur cursors) row(k, i int) ([]int32, []float64) {
	b, p := cur.blocks[k], cur.at[k]
	for p < len(b.Rows) && int(b.Rows[p]) < i {
		p++
	}
	cur.at[k] = p
	if p < len(b.Rows) && int(b.Rows[p]) == i {
		return b.A.Row(p)
	}
	return nil, nil
}
