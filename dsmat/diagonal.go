package dsmat

import (
	"math"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// diagRange is the range of the diagonal of one diagonal block, recorded
// by the passes that write the block's values (New's split, SetValues), so
// that DiagonalRange costs no pass of its own: on a GPU the set-up of FSAI
// reads nothing else of A's diagonal block on the host.
type diagRange struct {
	block  *csr.Matrix[float64] // the block it was recorded for
	lo, hi float64
	ok     bool
}

// DiagonalRange returns the least and the greatest entry of this rank's
// part of the diagonal (+Inf and 0 when it has no rows), and ok false when
// one is not positive and finite (a row without one counts as 0). New and
// SetValues record it as they write the values; for a diagonal block made
// or changed otherwise (SetDiagonal, ValueSlots, a program writing
// Diag.Val itself) it is found anew, on all cores. m must hold its diagonal
// block.
func (m *Matrix) DiagonalRange() (lo, hi float64, ok bool) {
	if r := m.diagRange; r != nil && r.block == m.Diag {
		return r.lo, r.hi, r.ok
	}
	p := newRangeParts(m.Diag.Rows)
	parallel.For(m.Diag.Rows, func(c, lo, hi int) {
		a := newDiagAcc()
		for i := lo; i < hi; i++ {
			a.add(diagonalEntry(m.Diag, i))
		}
		p[c] = a
	})
	r := p.total(m.Diag)
	return r.lo, r.hi, r.ok
}

// diagonalEntry returns d(i,i), or 0 where row i holds none: a scan of
// the row, which for the short rows of sparse matrices reads less than a
// binary search.
func diagonalEntry(d *csr.Matrix[float64], i int) float64 {
	cols, vals := d.Row(i)
	for k, j := range cols {
		if int(j) == i {
			return vals[k]
		}
	}
	return 0
}

// diagAcc is the range of the diagonal entries of a chunk of rows.
type diagAcc struct {
	lo, hi float64
	bad    bool // an entry is not positive and finite
}

// newDiagAcc returns the range of no entries.
func newDiagAcc() diagAcc { return diagAcc{lo: math.Inf(1)} }

// add takes diagonal entry v into the range.
func (a *diagAcc) add(v float64) {
	if !(v > 0 && v <= math.MaxFloat64) { // NaN, +Inf and v <= 0
		a.bad = true
		return
	}
	if v < a.lo {
		a.lo = v
	}
	if v > a.hi {
		a.hi = v
	}
}

// rangeParts are the ranges of the chunks of parallel.For over a block's
// rows, each written by its chunk alone.
type rangeParts []diagAcc

// newRangeParts returns empty ranges for the chunks of n rows.
func newRangeParts(n int) rangeParts {
	p := make(rangeParts, parallel.Chunks(n))
	for c := range p {
		p[c] = newDiagAcc()
	}
	return p
}

// total is the range of all chunks, recorded for block.
func (p rangeParts) total(block *csr.Matrix[float64]) *diagRange {
	all := newDiagAcc()
	for _, a := range p {
		all.bad = all.bad || a.bad
		all.lo, all.hi = min(all.lo, a.lo), max(all.hi, a.hi)
	}
	if all.bad {
		return &diagRange{block: block}
	}
	return &diagRange{block: block, lo: all.lo, hi: all.hi, ok: true}
}
