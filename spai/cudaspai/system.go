package cudaspai

import (
	"math"
	"slices"
	"sort"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/spai"
)

// system is a rank's local system (spai.Local) as the kernels read it:
// its rows, the collected rows below its own, its own rows and the
// collected rows above them (ascending by global index: local row r),
// in CSR with int32 columns in a compact numbering that keeps the global
// order. The columns of its own rows' range come first in it as a range
// too; the others, the foreign columns, are listed.
type system struct {
	l      *spai.Local
	below  int     // collected rows below the own rows
	rowPtr []int64 // of the local rows, nil where the device joins them (border); their compact columns: fillCols
	nnz    int64   // entries of the local rows
	// the global columns outside the own range, ascending
	foreign []int64
	// colBelow is how many foreign columns lie below the own range: the
	// compact column of global column First + i is colBelow + i.
	colBelow int
}

// newSystem translates l; it declines (spai.ErrDeviceUnsupported) where the
// rows or the compact columns would not fit int32. With joined (the device
// joins the system from A's diagonal block where it lies and the border)
// it leaves the rows to the device and reads none of the own rows.
func newSystem(l *spai.Local, joined bool) (*system, error) {
	n := l.Count()
	s := &system{l: l, nnz: l.HeldPtr[len(l.HeldPtr)-1] + l.OwnNNZ()}
	s.below, _ = slices.BinarySearch(l.HeldRows, l.First)
	s.foreign = l.ForeignColumns()
	s.colBelow, _ = slices.BinarySearch(s.foreign, l.First)
	rows := n + len(l.HeldRows)
	if int64(rows) >= math.MaxInt32 || int64(n)+int64(len(s.foreign)) >= math.MaxInt32 {
		return nil, spai.ErrDeviceUnsupported
	}
	if joined {
		return s, nil
	}

	own := l.Own()
	if len(l.HeldRows) == 0 && own.RowPtr[0] == 0 { // the own rows alone (one rank's): their pointers
		s.rowPtr = own.RowPtr
		return s, nil
	}
	// row pointers: collected rows below, own rows, collected rows above
	s.rowPtr = make([]int64, rows+1)
	heldBelow := l.HeldPtr[s.below]
	ownNNZ := own.RowPtr[n] - own.RowPtr[0]
	parallel.For(rows, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			switch {
			case r < s.below:
				s.rowPtr[r+1] = l.HeldPtr[r+1]
			case r < s.below+n:
				s.rowPtr[r+1] = heldBelow + own.RowPtr[r-s.below+1] - own.RowPtr[0]
			default:
				s.rowPtr[r+1] = ownNNZ + l.HeldPtr[r-n+1]
			}
		}
	})
	return s, nil
}

// border is what the host uploads of a local system that the device
// joins (kernels/spai_join.cu): the collected rows' compact columns
// (their pointers and values are the local system's own), and the own
// rows' entries in other ranks' columns, rows ascending, row k's compact
// columns cols[ptr[k]:ptr[k+1]] and values vals there.
type border struct {
	heldCols []int32
	rows     []int32
	ptr      []int64
	cols     []int32
	vals     []float64
}

// border returns the system's border, read off the collected rows and
// the own rows' entries in other ranks' columns (spai.Local.ForeignEntries)
// alone, on all cores.
func (s *system) border() *border {
	b := &border{heldCols: parallel.Map(s.l.HeldCol, s.column)}
	var cols []int64
	b.rows, b.ptr, cols, b.vals = s.l.ForeignEntries()
	b.cols = parallel.Map(cols, s.column)
	return b
}

// fillCols sets buf to the compact columns of the local rows' entries lo
// to lo+len(buf)-1 (the entries in row order): what the device's column
// array holds, made where the upload stages it.
func (s *system) fillCols(buf []int32, lo int) {
	e, end := int64(lo), int64(lo+len(buf))
	r := sort.Search(len(s.rowPtr)-1, func(r int) bool { return s.rowPtr[r+1] > e })
	for ; e < end; r++ {
		for _, c := range s.rowCols(r)[e-s.rowPtr[r]:] {
			if e == end {
				break
			}
			buf[e-int64(lo)] = s.column(c)
			e++
		}
	}
}

// entries is the number of entries of the local rows.
func (s *system) entries() int64 { return s.nnz }

// rows is the number of local rows.
func (s *system) rows() int { return s.l.Count() + len(s.l.HeldRows) }

// rowCols returns the global columns of local row r.
func (s *system) rowCols(r int) []int64 {
	own := s.l.Own()
	n := own.Count()
	switch {
	case r < s.below:
		return s.l.HeldCol[s.l.HeldPtr[r]:s.l.HeldPtr[r+1]]
	case r < s.below+n:
		i := r - s.below
		return own.Col[own.RowPtr[i]:own.RowPtr[i+1]]
	default:
		k := r - n
		return s.l.HeldCol[s.l.HeldPtr[k]:s.l.HeldPtr[k+1]]
	}
}

// column returns the compact column of global column c, a column of the
// local system.
func (s *system) column(c int64) int32 {
	l := s.l
	if i := c - l.First; i >= 0 && i < int64(l.Count()) {
		return int32(int64(s.colBelow) + i)
	}
	k, _ := slices.BinarySearch(s.foreign, c)
	if c > l.First {
		k += l.Count()
	}
	return int32(k)
}

// row returns the local row of global row g, a row of the local system.
func (s *system) row(g int64) int32 {
	l := s.l
	if i := g - l.First; i >= 0 && i < int64(l.Count()) {
		return int32(int64(s.below) + i)
	}
	k, _ := slices.BinarySearch(l.HeldRows, g)
	if g > l.First {
		k += l.Count()
	}
	return int32(k)
}

// localRows returns the local rows of the global rows g, on all cores.
func (s *system) localRows(g []int64) []int32 { return parallel.Map(g, s.row) }

// foreignRows returns, per foreign column, the local row of the collected
// row of its index, or -1 where the system does not hold that row, on all
// cores.
func (s *system) foreignRows() []int32 {
	return parallel.Map(s.foreign, func(g int64) int32 {
		if _, ok := slices.BinarySearch(s.l.HeldRows, g); !ok {
			return -1
		}
		return s.row(g)
	})
}

// global returns the global row of local row r.
func (s *system) global(r int32) int64 {
	n := int32(s.l.Count())
	switch {
	case r < int32(s.below):
		return s.l.HeldRows[r]
	case r < int32(s.below)+n:
		return s.l.First + int64(r) - int64(s.below)
	default:
		return s.l.HeldRows[r-n]
	}
}

// globalRows returns the global rows of the local rows r, on all cores.
func (s *system) globalRows(r []int32) []int64 { return parallel.Map(r, s.global) }

// patternBound bounds the entries of the own rows' patterns at k = 1: each
// row's entries and its diagonal.
func (s *system) patternBound() int64 { return s.l.OwnNNZ() + int64(s.l.Count()) }

// valueParts are the values of the local rows in order, in the three
// pieces l holds them in: collected rows below, own rows, collected rows
// above.
func (s *system) valueParts() [3][]float64 {
	l, own := s.l, s.l.Own()
	cut := l.HeldPtr[s.below]
	return [3][]float64{l.HeldVal[:cut], own.Val[own.RowPtr[0]:own.RowPtr[own.Count()]], l.HeldVal[cut:]}
}

// bytes is the device memory the system takes.
func (s *system) bytes() int64 { return 8*int64(s.rows()+1) + 12*s.entries() }
