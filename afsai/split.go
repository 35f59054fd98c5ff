package afsai

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Split is a rank's local system of m = Own + Diag.Rows rows in the two
// parts the block collection leaves it in: Border, r x m (r <= m), holds
// the received rows (before Own) whole and, from Own on, the own rows'
// entries in the received rows' columns, up to the last own row that has
// any (only the rows that A's left blocks store do: on a stripe of a mesh,
// its first few; the rows from r on have none); Diag is A's diagonal
// block: the own rows' entries from column Own on, numbered from 0. Row i
// of the system is Border's row i (none from r on) followed, from Own on,
// by Diag's row i-Own with Own added to its columns.
//
// Most of the system is Diag, which the rank holds already: a Device joins
// the parts where it computes (the GPU on the device) instead of the host
// copying Diag into a joined matrix of millions of rows and uploading that.
type Split struct {
	Border *csr.Matrix[float32]
	Diag   *csr.Matrix[float64]
	Own    int
	// Bound, when not nil, is Diag as the backend holds it already: the
	// diagonal block of A's operator (NewFor). A Device reads it there
	// instead of uploading Diag again.
	Bound backend.Matrix
}

// Size returns the system's rows and entries.
func (s Split) Size() (rows, nnz int) {
	return s.Own + s.Diag.Rows, s.Border.NNZ() + s.Diag.NNZ()
}

// rowLen returns the entries of row i of the system.
func (s Split) rowLen(i int) int32 {
	var n int32
	if i < s.Border.Rows {
		n = s.Border.RowPtr[i+1] - s.Border.RowPtr[i]
	}
	if i >= s.Own {
		n += s.Diag.RowPtr[i-s.Own+1] - s.Diag.RowPtr[i-s.Own]
	}
	return n
}

// Join returns the system as one matrix, its values in float32: what the
// set-up on the CPU reads.
func (s Split) Join() *csr.Matrix[float32] {
	return join(s.Border, s.Diag, s.Own)
}

// LongestRow returns the most entries of a row of the system.
func (s Split) LongestRow() int {
	rows, _ := s.Size()
	most := make([]int, parallel.Chunks(rows))
	parallel.For(rows, func(c, lo, hi int) {
		var m int32 // a local: chunks writing most[c] per row share its cache lines
		for i := lo; i < hi; i++ {
			m = max(m, s.rowLen(i))
		}
		most[c] = int(m)
	})
	return slices.Max(most)
}

// LongestBorderRow returns the most entries of a row of the system among
// the rows that the border holds (the first Border.Rows): the other rows
// are the diagonal block's, so that with the block's longest row it gives
// the system's, at the cost of the border's rows.
func (s Split) LongestBorderRow() int {
	var most int32
	for i := range s.Border.Rows {
		most = max(most, s.rowLen(i))
	}
	return int(most)
}

// CheckSplit validates the shape of s and p as Adaptive validates its input
// (the diagonal entries excepted, which a Device checks where it joins the
// parts, with DiagonalError), so that Device implementations refuse the same input.
func CheckSplit(s Split, p Params) error {
	if err := p.check(); err != nil {
		return err
	}
	return s.check()
}

// CheckStaticSplit is CheckSplit for static FSAI's parameters.
func CheckStaticSplit(s Split, p StaticParams) error {
	if err := p.check(); err != nil {
		return err
	}
	return s.check()
}

// check validates the shapes of the parts.
func (s Split) check() error {
	b, d := s.Border, s.Diag
	m := s.Own + d.Rows
	if b.Rows > m || b.Cols != m || len(b.RowPtr) != b.Rows+1 || d.Rows != d.Cols || len(d.RowPtr) != d.Rows+1 || s.Own < 0 {
		return fmt.Errorf("afsai: local system of a %dx%d border and a %dx%d diagonal block from row %d", b.Rows, b.Cols, d.Rows, d.Cols, s.Own)
	}
	return nil
}

// DiagonalError is the error of Adaptive for a matrix whose row i
// (counting from 0) has the diagonal entry d, which is not positive and
// finite. A distributed set-up (New) names the row by its global index
// instead (localSystem.named).
func DiagonalError(i int, d float64) error {
	return &diagonalError{row: i, d: d}
}

// diagonalError is a DiagonalError: row is a row of the matrix given to the
// set-up, which for New is the local system.
type diagonalError struct {
	row int
	d   float64
}

func (e *diagonalError) Error() string {
	return fmt.Sprintf("afsai: row %d (counting from 0): diagonal entry %g is not positive and finite, A is not SPD", e.row, e.d)
}

// join joins a border and a diagonal block (Split) into one matrix of
// precision T, on all cores: every chunk of rows copies its rows where the
// sums of the parts' row pointers place them.
func join[T csr.Real](border *csr.Matrix[T], diag *csr.Matrix[float64], own int) *csr.Matrix[T] {
	m := own + diag.Rows
	out := &csr.Matrix[T]{Rows: m, Cols: m, RowPtr: make([]int32, m+1)}
	start := func(i int) int32 { // the first entry of row i, i <= m
		p := border.RowPtr[min(i, border.Rows)]
		if i > own {
			p += diag.RowPtr[i-own]
		}
		return p
	}
	nnz := start(m)
	out.ColIdx, out.Val = make([]int32, nnz), make([]T, nnz)
	parallel.For(m, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			at := start(i)
			out.RowPtr[i+1] = start(i + 1)
			if i < border.Rows {
				cols, vals := border.Row(i)
				copy(out.ColIdx[at:], cols)
				copy(out.Val[at:], vals)
				at += int32(len(cols))
			}
			if i < own {
				continue
			}
			cols64, vals64 := diag.Row(i - own)
			for j, c := range cols64 {
				out.ColIdx[at], out.Val[at] = c+int32(own), T(vals64[j])
				at++
			}
		}
	})
	return out
}
