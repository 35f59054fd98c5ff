package afsai

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// messages is one stage of nonblocking sends and receives: post them with
// send and recv, then wait for all. After a failed post it posts nothing
// more, and wait still completes the ones posted before returning the
// error.
type messages struct {
	c    *comm.Comm
	reqs []*comm.Request
	err  error
}

func send[T comm.Elem](ms *messages, b *comm.Buf[T], to, tag int) {
	if ms.err == nil {
		r, err := comm.Isend(ms.c, b, to, tag)
		ms.add(r, err)
	}
}

func recv[T comm.Elem](ms *messages, b *comm.Buf[T], from, tag int) {
	if ms.err == nil {
		r, err := comm.Irecv(ms.c, b, from, tag)
		ms.add(r, err)
	}
}

func (ms *messages) add(r *comm.Request, err error) {
	if err != nil {
		ms.err = err
		return
	}
	ms.reqs = append(ms.reqs, r)
}

// wait completes the posted messages of the stage named what.
func (ms *messages) wait(what string) error {
	err := comm.Waitall(ms.reqs)
	ms.reqs = ms.reqs[:0]
	if ms.err != nil {
		err, ms.err = ms.err, nil
	}
	if err != nil {
		return fmt.Errorf("afsai: collect rows: %s: %w", what, err)
	}
	return nil
}

// rowMsg is a list of rows of a stripe as a rank's local system takes them:
// global row indices and, per row, its entries in the columns of the ranks
// of that rank's set (global column indices, ascending) and their values.
type rowMsg struct {
	rows *comm.Buf[int64]
	lens *comm.Buf[int32]
	cols *comm.Buf[int64]
	vals *comm.Buf[float64]
}

// newRowMsg makes room for rows rows of nnz entries, its pages mapped on
// all cores for a receive to fill (comm.NewRecvBuf).
func newRowMsg(rows, nnz int) rowMsg {
	return rowMsg{comm.NewRecvBuf[int64](rows), comm.NewRecvBuf[int32](rows), comm.NewRecvBuf[int64](nnz), comm.NewRecvBuf[float64](nnz)}
}

func (m rowMsg) free() {
	for _, f := range []func(){m.rows.Free, m.lens.Free, m.cols.Free, m.vals.Free} {
		f()
	}
}

// bytes is the memory of the message.
func (m rowMsg) bytes() int64 {
	return 12*int64(len(m.rows.Data)) + 16*int64(len(m.cols.Data))
}

// send posts the sending of m to rank to.
func (m rowMsg) send(ms *messages, to int) {
	send(ms, m.rows, to, comm.TagRows)
	send(ms, m.lens, to, comm.TagLens)
	send(ms, m.cols, to, comm.TagCols)
	send(ms, m.vals, to, comm.TagVals)
}

// recv posts the receiving of m from rank from.
func (m rowMsg) recv(ms *messages, from int) {
	recv(ms, m.rows, from, comm.TagRows)
	recv(ms, m.lens, from, comm.TagLens)
	recv(ms, m.cols, from, comm.TagCols)
	recv(ms, m.vals, from, comm.TagVals)
}

// pack puts rows of this stripe (local indices) into a message for a rank
// whose set is set: each row's entries in the columns of the set's ranks,
// in column order: the left blocks, the diagonal block, the right blocks.
// Every chunk of rows counts, then copies, its entries on its own core.
func pack(A *dsmat.Matrix, set []int, rows []int32) rowMsg {
	var blocks []*dsmat.Block
	for k := range A.Off {
		if _, in := slices.BinarySearch(set, A.Off[k].Rank); in {
			blocks = append(blocks, &A.Off[k])
		}
	}
	nLeft, _ := slices.BinarySearchFunc(blocks, A.Comm.Rank(), func(b *dsmat.Block, r int) int { return b.Rank - r })
	if len(rows) == 0 { // every chunk below starts at a row
		return newRowMsg(0, 0)
	}
	first := A.First()
	m := rowMsg{rows: comm.NewBuf[int64](len(rows)), lens: comm.NewBuf[int32](len(rows))}
	k := parallel.Chunks(len(rows))
	start := make([]int, k+1) // chunk c writes from start[c]
	parallel.For(len(rows), func(c, lo, hi int) {
		cur := newCursors(blocks, int(rows[lo]))
		entries := 0 // a local: the chunks' counts share cache lines
		for r := lo; r < hi; r++ {
			i := int(rows[r])
			n := A.Diag.RowPtr[i+1] - A.Diag.RowPtr[i]
			for bk := range blocks {
				cols, _ := cur.row(bk, i)
				n += int32(len(cols))
			}
			m.rows.Data[r], m.lens.Data[r] = first+int64(i), n
			entries += int(n)
		}
		start[c+1] = entries
	})
	for c := range k {
		start[c+1] += start[c]
	}
	m.cols, m.vals = comm.NewBuf[int64](start[k]), comm.NewBuf[float64](start[k])
	parallel.For(len(rows), func(c, lo, hi int) {
		at := start[c]
		put := func(gi int64, v float64) {
			m.cols.Data[at], m.vals.Data[at] = gi, v
			at++
		}
		cur := newCursors(blocks, int(rows[lo]))
		putBlocks := func(from, to, i int) {
			for bk := from; bk < to; bk++ {
				cols, vals := cur.row(bk, i)
				for j, c := range cols {
					put(blocks[bk].Cols[c], vals[j])
				}
			}
		}
		for _, i := range rows[lo:hi] {
			putBlocks(0, nLeft, int(i))
			cols, vals := A.Diag.Row(int(i))
			for j, c := range cols {
				put(first+int64(c), vals[j])
			}
			putBlocks(nLeft, len(blocks), int(i))
		}
	})
	return m
}
