package dsmat

import (
	"fmt"
	"slices"
	"sort"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// offEntries are a stripe's entries in other ranks' columns, stored for the
// rows that hold some only. The blocks that couple two stripes touch few of
// their rows (an FSAI factor's stripe of millions of rows has a few
// interface planes of them), so what builds them from offEntries costs what
// the blocks hold, not the stripe's length.
type offEntries struct {
	rows []int32 // local row of each stored row, ascending
	ptr  []int64 // len(rows)+1: row k's entries are [ptr[k], ptr[k+1])
	col  []int64 // global columns, ascending within a row
	val  []float64
}

// newOffEntries allocates room for rows stored rows holding nnz entries.
func newOffEntries(rows, nnz int) *offEntries {
	return &offEntries{rows: make([]int32, rows), ptr: make([]int64, rows+1), col: make([]int64, nnz), val: make([]float64, nnz)}
}

// offChunks are, per chunk of a stripe's rows (parallel.For over them),
// the rows that hold entries in other ranks' columns and those entries.
type offChunks struct {
	rows, nnz []int
}

func newOffChunks(rows int) offChunks {
	n := parallel.Chunks(rows)
	return offChunks{rows: make([]int, n), nnz: make([]int, n)}
}

// entries allocates the offEntries the chunks counted, nil when there are
// none, and returns where each chunk's rows and entries start in it.
func (o offChunks) entries() (e *offEntries, rowAt, nnzAt []int) {
	rowAt, nnzAt = make([]int, len(o.rows)+1), make([]int, len(o.rows)+1)
	for c := range o.rows {
		rowAt[c+1], nnzAt[c+1] = rowAt[c]+o.rows[c], nnzAt[c]+o.nnz[c]
	}
	if nnzAt[len(o.rows)] == 0 {
		return nil, rowAt, nnzAt
	}
	return newOffEntries(rowAt[len(o.rows)], nnzAt[len(o.rows)]), rowAt, nnzAt
}

// offTriplets returns the triplets ts, every one in the rows [first,
// first+count) of an n x n matrix and no two at the same place, as
// offEntries in local rows. It sorts by counting over the window of rows
// the triplets reach (for the blocks of a banded matrix, the stripe's edge
// next to the neighbour), so it costs what the triplets hold and that
// window, not the stripe's length.
func offTriplets(n, first int64, count int, ts []Triplet) (*offEntries, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	last := first + int64(count)
	lo, hi := ts[0].Row, ts[0].Row
	for _, t := range ts {
		if t.Row < first || t.Row >= last || t.Col < 0 || t.Col >= n {
			return nil, fmt.Errorf("dsmat: entry (%d,%d) outside rows [%d,%d) and columns [0,%d)", t.Row, t.Col, first, last, n)
		}
		lo, hi = min(lo, t.Row), max(hi, t.Row)
	}
	at := make([]int64, hi-lo+2) // the window's row pointers
	stored := 0
	for _, t := range ts {
		if at[t.Row-lo+1] == 0 {
			stored++
		}
		at[t.Row-lo+1]++
	}
	e := newOffEntries(stored, len(ts))
	k := 0
	for r := range hi - lo + 1 {
		if n := at[r+1]; n > 0 {
			e.rows[k], e.ptr[k+1] = int32(lo-first+r), e.ptr[k]+n
			k++
		}
		at[r+1] = at[r] + at[r+1]
	}
	for _, t := range ts {
		p := at[t.Row-lo]
		at[t.Row-lo]++
		e.col[p], e.val[p] = t.Col, t.Val
	}
	// triplets that arrive in column order leave every row sorted already
	s := new(colVals)
	for k := range e.rows {
		a, b := e.ptr[k], e.ptr[k+1]
		s.col, s.val = e.col[a:b], e.val[a:b]
		if !sort.IsSorted(s) {
			sort.Sort(s)
		}
		for p := a + 1; p < b; p++ {
			if e.col[p] == e.col[p-1] {
				return nil, fmt.Errorf("dsmat: two entries at (%d,%d)", first+int64(e.rows[k]), e.col[p])
			}
		}
	}
	return e, nil
}

// offBlocks returns the off-diagonal blocks of the entries e: one block per
// owner of their columns, with compact column numbering, on all cores.
func (m *Matrix) offBlocks(e *offEntries) []Block {
	// the halo: the distinct columns needed from each other rank, found
	// and sorted by every chunk of entries, then merged
	parts := make([]map[int][]int64, parallel.Chunks(len(e.col)))
	parallel.For(len(e.col), func(c, a, b int) {
		part := map[int][]int64{}
		for _, col := range e.col[a:b] {
			q := m.Part.Owner(col)
			part[q] = append(part[q], col)
		}
		for q, cols := range part {
			part[q] = sortUnique(cols)
		}
		parts[c] = part
	})
	needed := map[int][]int64{}
	for _, p := range parts {
		for q, cols := range p {
			needed[q] = append(needed[q], cols...)
		}
	}
	owners := make([]int, 0, len(needed))
	for q, cols := range needed {
		owners = append(owners, q)
		needed[q] = sortUnique(cols)
	}
	slices.Sort(owners)

	// each chunk of rows builds its own off-diagonal blocks, joined in row
	// order
	slot := make(map[int]int, len(owners))
	for k, q := range owners {
		slot[q] = k
	}
	chunks := make([][]*builder, parallel.Chunks(len(e.rows)))
	parallel.For(len(e.rows), func(c, a, b int) {
		blocks := make([]*builder, len(owners))
		for k := range blocks {
			blocks[k] = newBuilder()
		}
		for r := a; r < b; r++ {
			for k := e.ptr[r]; k < e.ptr[r+1]; k++ {
				q := m.Part.Owner(e.col[k])
				j, _ := slices.BinarySearch(needed[q], e.col[k])
				blocks[slot[q]].add(int32(j), e.val[k])
			}
			for _, bl := range blocks {
				bl.endRow(int(e.rows[r]))
			}
		}
		chunks[c] = blocks
	})
	off := make([]Block, len(owners))
	pieces := make([]*builder, len(chunks))
	for k, q := range owners {
		for c, blocks := range chunks {
			pieces[c] = blocks[k]
		}
		b := joinBuilders(pieces)
		off[k] = Block{Rank: q, A: b.matrix(len(needed[q])), Rows: b.rows, Cols: needed[q]}
	}
	return off
}
