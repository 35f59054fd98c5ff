package cudaspai

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/spai"
)

// stripeLocal returns the local system of a rank that owns rows [lo, hi)
// of a (a whole matrix) and has collected all its other rows.
func stripeLocal(t *testing.T, a *dsmat.Rows, lo, hi int) *spai.Local {
	t.Helper()
	base := a.RowPtr[lo]
	own := &dsmat.Rows{N: a.N, First: int64(lo), RowPtr: make([]int64, hi-lo+1),
		Col: a.Col[base:a.RowPtr[hi]], Val: a.Val[base:a.RowPtr[hi]]}
	for i := range own.RowPtr {
		own.RowPtr[i] = a.RowPtr[lo+i] - base
	}
	l, err := spai.NewLocal(own)
	if err != nil {
		t.Fatal(err)
	}
	for g := range a.Count() {
		if g >= lo && g < hi {
			continue
		}
		vals := a.Val[a.RowPtr[g]:a.RowPtr[g+1]]
		var m float64
		for _, v := range vals {
			m = math.Max(m, math.Abs(v))
		}
		l.HeldRows = append(l.HeldRows, int64(g))
		l.HeldCol = append(l.HeldCol, a.Col[a.RowPtr[g]:a.RowPtr[g+1]]...)
		l.HeldVal = append(l.HeldVal, vals...)
		l.HeldPtr = append(l.HeldPtr, int64(len(l.HeldCol)))
		l.HeldMax = append(l.HeldMax, m)
	}
	return l
}

// TestSystem: the local system as the kernels read it holds the rows of
// the local system in ascending global order, each with its values and
// its columns in a numbering that keeps the global order without
// repeating a number (the own range's columns a range at colBelow), and
// the patterns' local rows are the rows of their global indices; as one
// rank and as each of three.
func TestSystem(t *testing.T) {
	a := generated(t, "convdiff:6:100")
	for _, ranks := range []int{1, 3} {
		for r := range ranks {
			n := a.Count()
			l := stripeLocal(t, a, r*n/ranks, (r+1)*n/ranks)
			s, err := newSystem(l, false)
			if err != nil {
				t.Fatal(err)
			}
			checkSystem(t, l, s)
			_, cols, err := spai.Pattern(l, spai.Params{Tau: 1, K: 2})
			if err != nil {
				t.Fatal(err)
			}
			global := globalRows(l)
			local := s.localRows(cols)
			for k, lr := range local {
				if lr < 0 || int(lr) >= len(global) || global[lr] != cols[k] {
					t.Fatalf("rank %d of %d: pattern row %d is local row %d", r, ranks, cols[k], lr)
				}
			}
			if !slices.Equal(s.globalRows(local), cols) {
				t.Errorf("rank %d of %d: the local rows' global rows are not the pattern's", r, ranks)
			}
			checkForeignRows(t, l, s, true)
			ptr, _, err := spai.Pattern(l, spai.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if b := s.patternBound(); ptr[len(ptr)-1] > b || b != l.Own().NNZ()+int64(l.Count()) {
				t.Errorf("rank %d of %d: %d pattern entries at k 1 against a bound of %d", r, ranks, ptr[len(ptr)-1], b)
			}
			// the own rows alone: no foreign column's row is held
			alone, err := spai.NewLocal(l.Own())
			if err != nil {
				t.Fatal(err)
			}
			if s, err = newSystem(alone, false); err != nil {
				t.Fatal(err)
			}
			checkForeignRows(t, alone, s, false)
		}
	}
}

// checkForeignRows fails t where a foreign column of s is not mapped to
// the local row of its global index, held (all held) or -1 (none held).
func checkForeignRows(t *testing.T, l *spai.Local, s *system, held bool) {
	t.Helper()
	rows := s.foreignRows()
	if len(rows) != len(s.foreign) || len(s.foreign) == 0 && l.First > 0 {
		t.Fatalf("%d rows of %d foreign columns", len(rows), len(s.foreign))
	}
	for k, r := range rows {
		if held && (r < 0 || s.global(r) != s.foreign[k]) || !held && r != -1 {
			t.Fatalf("foreign column %d: local row %d (held %t)", s.foreign[k], r, held)
		}
	}
}

// TestListRows: the rows that hold entries and their row pointers.
func TestListRows(t *testing.T) {
	rows, ptr := listRows([]int32{0, 0, 2, 2, 3, 3})
	if !slices.Equal(rows, []int32{1, 3}) || !slices.Equal(ptr, []int32{0, 2, 3}) {
		t.Errorf("rows %v, row pointers %v", rows, ptr)
	}
	if rows, ptr = listRows([]int32{0, 0, 0}); rows == nil || len(rows) != 0 || !slices.Equal(ptr, []int32{0}) {
		t.Errorf("no entries: rows %v, row pointers %v", rows, ptr)
	}
}

// globalRows lists the global rows of l's local system in ascending order.
func globalRows(l *spai.Local) []int64 {
	g := slices.Clone(l.HeldRows)
	for i := range l.Count() {
		g = append(g, l.First+int64(i))
	}
	slices.Sort(g)
	return g
}

// checkSystem fails t where s is not the local system l in the kernels'
// layout (TestSystem).
func checkSystem(t *testing.T, l *spai.Local, s *system) {
	t.Helper()
	global := globalRows(l)
	if len(s.rowPtr) != len(global)+1 {
		t.Fatalf("%d local rows, %d rows held", len(s.rowPtr)-1, len(global))
	}
	var vals []float64
	for _, part := range s.valueParts() {
		vals = append(vals, part...)
	}
	col := make([]int32, s.entries())
	for lo := 0; lo < len(col); lo += 7 { // in pieces, as the staging buffer fills them
		s.fillCols(col[lo:min(lo+7, len(col))], lo)
	}
	type pair struct {
		global  int64
		compact int32
	}
	var pairs []pair
	for i := range l.Count() {
		pairs = append(pairs, pair{l.First + int64(i), int32(s.colBelow + i)})
	}
	for r, g := range global {
		cols, want, _, _ := l.Row(g)
		a, b := s.rowPtr[r], s.rowPtr[r+1]
		if int(b-a) != len(cols) || !slices.Equal(vals[a:b], want) {
			t.Fatalf("local row %d (global %d): not the row held", r, g)
		}
		if s.row(g) != int32(r) {
			t.Fatalf("global row %d is local row %d, not %d", g, s.row(g), r)
		}
		for k, c := range cols {
			pairs = append(pairs, pair{c, col[a+int64(k)]})
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].global < pairs[j].global })
	for k := 1; k < len(pairs); k++ {
		p, q := pairs[k-1], pairs[k]
		if p.compact < 0 || (p.global == q.global) != (p.compact == q.compact) || (p.global < q.global) != (p.compact < q.compact) {
			t.Fatalf("global columns %d and %d are compact columns %d and %d", p.global, q.global, p.compact, q.compact)
		}
	}
}

// TestChooseSlot: the most warps whose slots leave at most 1/64 of the
// problems to global memory, and the test bound on the slot.
func TestChooseSlot(t *testing.T) {
	repeat := func(n int, w int64) []int64 { return slices.Repeat([]int64{w}, n) }
	for _, c := range []struct {
		need        []int64
		limit       int64
		warps, slot int
	}{
		{repeat(100, 2000), 0, 16, 3072},
		{repeat(100, 10000), 0, 4, 12288},
		{append(repeat(99, 2000), 60000), 0, 16, 3072},
		{append(repeat(95, 2000), repeat(5, 10000)...), 0, 4, 12288},
		{repeat(10, 1<<20), 0, 1, 49152},
		{repeat(10, 2000), 100, 16, 96},
	} {
		if w, s := chooseSlot(c.need, c.limit); w != c.warps || s != c.slot {
			t.Errorf("%d problems of %d to %d bytes, limit %d: %d warps of %d bytes, want %d of %d", len(c.need),
				slices.Min(c.need), slices.Max(c.need), c.limit, w, s, c.warps, c.slot)
		}
	}
}

// TestBatchEnd: a batch of rows takes the most rows whose memory fits the
// budget, one at least, and ends at the last row.
func TestBatchEnd(t *testing.T) {
	for _, budget := range []int64{1, 100, 1000, 5000, 1 << 30} {
		for _, lo := range []int{0, 37, 99} {
			hi := batchEnd(100, lo, budget)
			if hi <= lo || hi > 100 {
				t.Fatalf("budget %d from row %d: end %d", budget, lo, hi)
			}
			if hi-lo > 1 && rowBytes*int64(hi-lo) > budget || hi < 100 && rowBytes*int64(hi-lo+1) <= budget {
				t.Errorf("budget %d from row %d: end %d, %d bytes", budget, lo, hi, rowBytes*(hi-lo))
			}
		}
	}
}
