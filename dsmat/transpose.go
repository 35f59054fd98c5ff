package dsmat

import (
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Transpose returns the distributed transpose of m, under the same
// partition. Collective. The FSAI preconditioner builds G' once with it, so
// that z = G'(G r) is two distributed SpMVs.
//
// The diagonal block is transposed where it is, on all cores. Each
// off-diagonal block is transposed by the rank that holds it and sent whole,
// in its compact numbering, to the owner of its columns, where it is the
// block of the sender's columns as it arrives: the entries travel once, as
// two int32 words and a value, and nobody sorts or searches them. A matrix
// whose backend holds its diagonal block (NewLocalOffDiagonal) gives one
// without: the backend transposes that block.
func (m *Matrix) Transpose() (*Matrix, error) {
	t := &Matrix{Comm: m.Comm, Part: m.Part, nnz: m.nnz}
	if m.Diag != nil {
		t.Diag = transposeBlock(m.Diag)
	}
	off, err := m.transposedOff()
	if err != nil {
		err = fmt.Errorf("dsmat: transpose: %w", err)
	}
	if err := t.Comm.Agree(err); err != nil {
		return nil, err
	}
	t.Off = off
	if err := t.prepare(); err != nil {
		return nil, err
	}
	return t, nil
}

// transposedOff transposes m's off-diagonal blocks, sends each to the rank
// that owns its columns and returns the blocks received: this rank's
// off-diagonal blocks of m's transpose, in rank order. Collective.
//
// A block travels as int32 words (its rows, columns and entries, then the
// local rows of the receiver it fills, then the sender's local rows that
// are its columns, its row pointers and column indices) and its values.
func (m *Matrix) transposedOff() ([]Block, error) {
	c := m.Comm
	np := c.Size()
	words, vals := make([]int, np), make([]int, np)
	ts := make([]*csr.Matrix[float64], len(m.Off))
	for k, b := range m.Off {
		ts[k] = transposeBlock(b.A)
		words[b.Rank] = 3 + len(b.Cols) + len(b.Rows) + len(ts[k].RowPtr) + len(ts[k].ColIdx)
		vals[b.Rank] = len(ts[k].Val)
	}
	// packed on all cores: the send buffers are fresh memory, tens of MB
	sendWords, sendVals := make([]int32, sum(words)), make([]float64, sum(vals))
	w, v := sendWords, sendVals
	put := func(src []int32) {
		parallel.Copy(w[:len(src)], src)
		w = w[len(src):]
	}
	for k, b := range m.Off {
		first := m.Part.Offsets[b.Rank]
		a := ts[k]
		put([]int32{int32(a.Rows), int32(a.Cols), int32(len(a.ColIdx))})
		parallel.For(len(b.Cols), func(_, lo, hi int) {
			for j := lo; j < hi; j++ {
				w[j] = int32(b.Cols[j] - first)
			}
		})
		w = w[len(b.Cols):]
		put(b.Rows)
		put(a.RowPtr)
		put(a.ColIdx)
		parallel.Copy(v[:len(a.Val)], a.Val)
		v = v[len(a.Val):]
	}
	counts := make([]int64, 2*np)
	for q := range np {
		counts[2*q], counts[2*q+1] = int64(words[q]), int64(vals[q])
	}
	got := make([]int64, 2*np)
	if err := comm.Alltoall(c, counts, got); err != nil {
		return nil, err
	}
	recvWordCounts, recvValCounts := make([]int, np), make([]int, np)
	for q := range np {
		recvWordCounts[q], recvValCounts[q] = int(got[2*q]), int(got[2*q+1])
	}
	recvWords, recvVals := make([]int32, sum(recvWordCounts)), make([]float64, sum(recvValCounts))
	parallel.Clear(recvWords) // its pages mapped on all cores before MPI fills it on one
	parallel.Clear(recvVals)
	if err := comm.Alltoallv(c, sendWords, words, recvWords, recvWordCounts); err != nil {
		return nil, err
	}
	if err := comm.Alltoallv(c, sendVals, vals, recvVals, recvValCounts); err != nil {
		return nil, err
	}
	var off []Block
	for q := range np {
		if recvWordCounts[q] == 0 {
			continue
		}
		w, v := recvWords[:recvWordCounts[q]], recvVals[:recvValCounts[q]]
		recvWords, recvVals = recvWords[recvWordCounts[q]:], recvVals[recvValCounts[q]:]
		b, err := receivedBlock(q, m.Part.Offsets[q], w, v)
		if err != nil {
			return nil, fmt.Errorf("block from rank %d: %w", q, err)
		}
		off = append(off, b)
	}
	return off, nil
}

// receivedBlock unpacks the transposed block that rank q, whose rows start
// at global row first, sent as words w and values v (transposedOff).
func receivedBlock(q int, first int64, w []int32, v []float64) (Block, error) {
	if len(w) < 3 {
		return Block{}, fmt.Errorf("%d words, want at least 3", len(w))
	}
	rows, cols, nnz := int(w[0]), int(w[1]), int(w[2])
	if rows < 0 || cols < 0 || nnz != len(v) || len(w) != 3+rows+cols+rows+1+nnz {
		return Block{}, fmt.Errorf("%d words and %d values for %d rows, %d columns and %d entries", len(w), len(v), rows, cols, nnz)
	}
	w = w[3:]
	b := Block{Rank: q, Rows: w[:rows:rows], Cols: make([]int64, cols)}
	for j, r := range w[rows : rows+cols] {
		b.Cols[j] = first + int64(r)
	}
	w = w[rows+cols:]
	b.A = &csr.Matrix[float64]{Rows: rows, Cols: cols, RowPtr: w[: rows+1 : rows+1], ColIdx: w[rows+1:], Val: v}
	return b, nil
}

// sum is the sum of counts.
func sum(counts []int) int {
	s := 0
	for _, n := range counts {
		s += n
	}
	return s
}

// transposeBlock returns a' on all cores, every row of a' holding its
// entries in ascending columns, as the serial transpose leaves them.
//
// Where the chunks of a's rows reach narrow windows of columns (a banded
// block, as the diagonal blocks of a stencil's matrix and of its FSAI
// factor) it is a counting sort by column: every chunk counts its entries
// per row of a' over its window, not over all of a”s rows, and places
// them after those of the chunks before it. Where the windows together
// span more than the block's entries and columns (an off-diagonal block,
// whose rows at the stripe's edge each reach the neighbour's last planes:
// every chunk's window is most of its columns), the entries are counted
// and placed by atomic additions, and each row of a' sorted after.
func transposeBlock(a *csr.Matrix[float64]) *csr.Matrix[float64] {
	chunks := parallel.Chunks(a.Rows)
	first, last := make([]int32, chunks), make([]int32, chunks) // each chunk's window; empty: last < first
	parallel.For(a.Rows, func(c, lo, hi int) {
		cols := a.ColIdx[a.RowPtr[lo]:a.RowPtr[hi]]
		first[c], last[c] = 0, -1
		if len(cols) > 0 {
			first[c], last[c] = slices.Min(cols), slices.Max(cols)
		}
	})
	span := 0
	for c := range chunks {
		span += int(last[c]-first[c]) + 1
	}
	t := &csr.Matrix[float64]{Rows: a.Cols, Cols: a.Rows, RowPtr: make([]int32, a.Cols+1),
		ColIdx: make([]int32, a.NNZ()), Val: make([]float64, a.NNZ())}
	if span > a.NNZ()+a.Cols {
		transposeScattered(a, t)
		return t
	}
	count := make([][]int32, chunks)
	parallel.For(a.Rows, func(c, lo, hi int) {
		count[c] = make([]int32, last[c]-first[c]+1)
		for _, col := range a.ColIdx[a.RowPtr[lo]:a.RowPtr[hi]] {
			count[c][col-first[c]]++
		}
	})
	// The offsets: the chunks in order, each over its window on all cores.
	// at[r] runs over the entries of row r placed so far; after the last
	// chunk it is the row's length, and the prefix sum makes the pointers.
	at := t.RowPtr[1:]
	for c, cnt := range count {
		parallel.For(len(cnt), func(_, lo, hi int) {
			for j := lo; j < hi; j++ {
				r := first[c] + int32(j)
				cnt[j], at[r] = at[r], at[r]+cnt[j]
			}
		})
	}
	parallel.Accumulate(t.RowPtr)
	parallel.For(a.Rows, func(c, lo, hi int) {
		next, base := count[c], first[c]
		for i := lo; i < hi; i++ {
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				j := a.ColIdx[k] - base
				p := t.RowPtr[a.ColIdx[k]] + next[j]
				t.ColIdx[p], t.Val[p] = int32(i), a.Val[k]
				next[j]++
			}
		}
	})
	return t
}

// transposeScattered is transposeBlock's path for blocks whose chunks
// reach wide windows: it fills t, sized for a', with rows counted and
// entries placed by atomic additions, then sorts every row of t.
func transposeScattered(a, t *csr.Matrix[float64]) {
	at := t.RowPtr[1:]
	parallel.For(a.NNZ(), func(_, lo, hi int) {
		for _, col := range a.ColIdx[lo:hi] {
			atomic.AddInt32(&at[col], 1)
		}
	})
	parallel.Accumulate(t.RowPtr)
	next := make([]int32, t.Rows)
	parallel.Copy(next, t.RowPtr[:t.Rows])
	parallel.For(a.Rows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				p := atomic.AddInt32(&next[a.ColIdx[k]], 1) - 1
				t.ColIdx[p], t.Val[p] = int32(i), a.Val[k]
			}
		}
	})
	parallel.For(t.Rows, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			sortRow(t.ColIdx[t.RowPtr[r]:t.RowPtr[r+1]], t.Val[t.RowPtr[r]:t.RowPtr[r+1]])
		}
	})
}

// sortRow sorts a row's entries by column, their values with them: by
// insertion, for the few entries of a sparse row, and through sort.Sort
// past 32.
func sortRow(cols []int32, vals []float64) {
	if len(cols) > 32 {
		sort.Sort(&colVals[int32]{cols, vals})
		return
	}
	for i := 1; i < len(cols); i++ {
		for j := i; j > 0 && cols[j-1] > cols[j]; j-- {
			cols[j-1], cols[j] = cols[j], cols[j-1]
			vals[j-1], vals[j] = vals[j], vals[j-1]
		}
	}
}

// Transpose returns this rank's stripe of the transpose of the distributed
// matrix whose stripes are rows, under the same partition: the stripe of
// New's matrix transposed. Collective.
func Transpose(c *comm.Comm, part Partition, rows *Rows) (*Rows, error) {
	m, err := New(c, part, rows)
	if err != nil {
		return nil, err
	}
	t, err := m.Transpose()
	if err != nil {
		return nil, err
	}
	return t.Rows(), nil
}
