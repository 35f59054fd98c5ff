package dsmat

import (
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/bitset"

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

// offBlocks returns the off-diagonal blocks of the entries e: one block per
// owner of their columns, with compact column numbering, on all cores.
//
// The columns each owner holds are marked in a bitmap over the window they
// span, whose running count of set bits is the compact numbering: no sort,
// no search, and the blocks are written once, where they end, after the
// rows and entries of every chunk of rows and owner are counted.
func (m *Matrix) offBlocks(e *offEntries) []Block {
	chunks := parallel.Chunks(len(e.rows))
	tallies := make([]map[int]*offTally, chunks)
	parallel.For(len(e.rows), func(c, lo, hi int) {
		t := map[int]*offTally{}
		for r := lo; r < hi; r++ {
			m.eachOwner(e, r, func(q int, a, b int64) {
				n := t[q]
				if n == nil {
					n = &offTally{lo: e.col[a], hi: e.col[b-1]}
					t[q] = n
				}
				n.rows, n.nnz = n.rows+1, n.nnz+int(b-a)
				n.lo, n.hi = min(n.lo, e.col[a]), max(n.hi, e.col[b-1])
			})
		}
		tallies[c] = t
	})

	// per owner: its slot, its columns' window, and where each chunk's rows
	// and entries start in its block
	slot := map[int]int{}
	var owners []int
	for _, t := range tallies {
		for q := range t {
			if _, ok := slot[q]; !ok {
				slot[q] = 0
				owners = append(owners, q)
			}
		}
	}
	slices.Sort(owners)
	sets := make([]*bitset.Set, len(owners))
	rowAt, nnzAt := make([][]int, len(owners)), make([][]int, len(owners))
	for k, q := range owners {
		slot[q] = k
		lo, hi := int64(math.MaxInt64), int64(-1)
		rowAt[k], nnzAt[k] = make([]int, chunks+1), make([]int, chunks+1)
		for c, t := range tallies {
			n := t[q]
			if n == nil {
				n = &offTally{}
			} else {
				lo, hi = min(lo, n.lo), max(hi, n.hi)
			}
			rowAt[k][c+1], nnzAt[k][c+1] = rowAt[k][c]+n.rows, nnzAt[k][c]+n.nnz
		}
		sets[k] = bitset.New(lo, hi)
	}
	parallel.For(len(e.rows), func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			m.eachOwner(e, r, func(q int, a, b int64) {
				s := sets[slot[q]]
				for _, col := range e.col[a:b] {
					s.Add(col)
				}
			})
		}
	})

	off := make([]Block, len(owners))
	for k, q := range owners {
		off[k] = Block{Rank: q, Cols: bitset.Members[int64](sets[k], sets[k].Number()), Rows: make([]int32, rowAt[k][chunks]),
			A: &csr.Matrix[float64]{Rows: rowAt[k][chunks], RowPtr: make([]int32, rowAt[k][chunks]+1),
				ColIdx: make([]int32, nnzAt[k][chunks]), Val: make([]float64, nnzAt[k][chunks])}}
		off[k].A.Cols = len(off[k].Cols)
	}
	parallel.For(len(e.rows), func(c, lo, hi int) {
		rows, nnz := make([]int, len(owners)), make([]int, len(owners))
		for k := range owners {
			rows[k], nnz[k] = rowAt[k][c], nnzAt[k][c]
		}
		for r := lo; r < hi; r++ {
			m.eachOwner(e, r, func(q int, a, b int64) {
				k := slot[q]
				blk, s := &off[k], sets[k]
				for p := a; p < b; p++ {
					blk.A.ColIdx[nnz[k]], blk.A.Val[nnz[k]] = s.Index(e.col[p]), e.val[p]
					nnz[k]++
				}
				blk.Rows[rows[k]] = e.rows[r]
				rows[k]++
				blk.A.RowPtr[rows[k]] = int32(nnz[k])
			})
		}
	})
	return off
}

// offTally counts one chunk's stored rows and entries in one owner's
// columns, and the least and greatest of those columns.
type offTally struct {
	rows, nnz int
	lo, hi    int64
}

// eachOwner calls f for each run [a, b) of row r's entries in the columns of
// one owner q; the columns are ascending, so each owner's are one run.
func (m *Matrix) eachOwner(e *offEntries, r int, f func(q int, a, b int64)) {
	end := e.ptr[r+1]
	for a := e.ptr[r]; a < end; {
		q := m.Part.Owner(e.col[a])
		last := m.Part.Offsets[q+1]
		b := a + 1
		for b < end && e.col[b] < last {
			b++
		}
		f(q, a, b)
		a = b
	}
}
