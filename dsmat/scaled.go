package dsmat

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// ScaledSymmetric returns S m S, S = diag(s), with s this rank's entries of
// the distributed scaling: entry (i, j) becomes s_i a_ij s_j. The copy keeps
// m's pattern, blocks and halo plan; the entries of s at the off-diagonal
// blocks' columns come from their owners along the halo plan. m must hold
// its diagonal block. The copy shares no memory with m. Collective.
func (m *Matrix) ScaledSymmetric(s []float64) (*Matrix, error) {
	var err error
	if m.Diag == nil || len(s) != m.LocalRows() {
		err = fmt.Errorf("dsmat: scale a stripe of %d rows by %d values", m.LocalRows(), len(s))
	}
	if err := m.Comm.Agree(err); err != nil {
		return nil, err
	}
	halo, err := m.HaloValues(s)
	if err != nil {
		return nil, err
	}
	out := &Matrix{Comm: m.Comm, Part: m.Part, Sends: slices.Clone(m.Sends), nnz: m.nnz,
		Diag: scaleBlock(m.Diag, nil, s, s), Off: make([]Block, len(m.Off))}
	for k, b := range m.Off {
		out.Off[k] = Block{Rank: b.Rank, Rows: slices.Clone(b.Rows), Cols: slices.Clone(b.Cols), A: scaleBlock(b.A, b.Rows, s, halo[k])}
	}
	return out, nil
}

// scaleBlock returns a copy of a with entry (k, j) times s[row]*col[j],
// row being rows[k] (k itself when rows is nil).
func scaleBlock(a *csr.Matrix[float64], rows []int32, s, col []float64) *csr.Matrix[float64] {
	out := &csr.Matrix[float64]{Rows: a.Rows, Cols: a.Cols, RowPtr: slices.Clone(a.RowPtr), ColIdx: slices.Clone(a.ColIdx),
		Val: make([]float64, len(a.Val))}
	parallel.For(a.Rows, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			si := s[k]
			if rows != nil {
				si = s[rows[k]]
			}
			for e := a.RowPtr[k]; e < a.RowPtr[k+1]; e++ {
				out.Val[e] = si * a.Val[e] * col[a.ColIdx[e]]
			}
		}
	})
	return out
}

// HaloValues returns, for each off-diagonal block, the entries of the
// distributed vector whose part on this rank is v at the block's columns
// (Block.Cols), sent by their owners along the halo plan in one
// Alltoallv. Collective.
func (m *Matrix) HaloValues(v []float64) ([][]float64, error) {
	np := m.Comm.Size()
	sendCounts, recvCounts := make([]int, np), make([]int, np)
	var send []float64
	for _, s := range m.Sends {
		sendCounts[s.Rank] = len(s.Idx)
		for _, i := range s.Idx {
			send = append(send, v[i])
		}
	}
	total := 0
	for _, b := range m.Off {
		recvCounts[b.Rank] = len(b.Cols)
		total += len(b.Cols)
	}
	recv := make([]float64, total)
	if err := comm.Alltoallv(m.Comm, send, sendCounts, recv, recvCounts); err != nil {
		return nil, fmt.Errorf("dsmat: halo values: %w", err)
	}
	out := make([][]float64, len(m.Off))
	for k, b := range m.Off {
		out[k], recv = recv[:len(b.Cols):len(b.Cols)], recv[len(b.Cols):]
	}
	return out, nil
}
