package afsai

import (
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/dsmat"
)

// rowMessage is a message of the given rows, lengths and nnz entries.
func rowMessage(rows []int64, lens []int32, nnz int) rowMsg {
	m := newRowMsg(len(rows), nnz)
	copy(m.rows.Data, rows)
	copy(m.lens.Data, lens)
	return m
}

// TestHold: a message's rows are held in its order, with their entries at
// the sums of the lengths before them, rows asked for included; a row held
// already, repeated in the message, outside the source's stripe, or
// entries that the message does not hold are refused.
func TestHold(t *testing.T) {
	newX := func() *collection {
		x := &collection{A: &dsmat.Matrix{Part: dsmat.Partition{Offsets: []int64{0, 10, 20}}}, sources: []int{0},
			ls: &localSystem{index: [][]int32{make([]int32, 10)}}}
		x.ls.index[0][3] = asked
		return x
	}
	x := newX()
	x.msgs = []rowMsg{rowMessage([]int64{2, 3, 7}, []int32{1, 2, 0}, 3)}
	defer x.free()
	if err := x.hold(0, 0); err != nil {
		t.Fatal(err)
	}
	want := []heldRow{{n: 1, row: 2, at: 0}, {n: 2, row: 3, at: 1}, {n: 0, row: 7, at: 3}}
	for s, h := range x.held {
		if h != want[s] {
			t.Errorf("held row %d: %+v, want %+v", s, h, want[s])
		}
		if got := x.ls.index[0][h.row]; got != int32(s)+1 {
			t.Errorf("row %d marked %d, want %d", h.row, got, s+1)
		}
	}
	x.msgs = append(x.msgs, rowMessage([]int64{3}, []int32{0}, 0))
	if err := x.hold(0, 1); err == nil || !strings.Contains(err.Error(), "sent row 4 ") {
		t.Errorf("row 3 (4 from 1) sent again: error %v", err)
	}
	for _, c := range []struct {
		name string
		m    rowMsg
		msg  string
	}{
		{"repeated", rowMessage([]int64{5, 5}, []int32{0, 0}, 0), "sent row 6 "},
		{"outside", rowMessage([]int64{4, 12}, []int32{0, 0}, 0), "sent row 13 "},
		{"past the message", rowMessage([]int64{4, 6}, []int32{1, 2}, 2), "sent row 7 "},
		{"short of the message", rowMessage([]int64{4}, []int32{1}, 3), "sent 3 entries, its rows hold 1"},
		{"negative length", rowMessage([]int64{4}, []int32{-1}, 0), "sent row 5 "},
	} {
		x := newX()
		x.msgs = []rowMsg{c.m}
		if err := x.hold(0, 0); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.msg)
		}
		x.free()
	}
}

// BenchmarkHold records a message of 200,000 rows of 7 entries, in a
// stripe of 4M rows (the collection of diffusion:200 on two ranks).
func BenchmarkHold(b *testing.B) {
	const rows, stripe = 200_000, 4_000_000
	gi := make([]int64, rows)
	lens := make([]int32, rows)
	for r := range gi {
		gi[r], lens[r] = int64(stripe-rows+r), 7
	}
	m := rowMessage(gi, lens, 7*rows)
	defer m.free()
	for b.Loop() {
		x := &collection{A: &dsmat.Matrix{Part: dsmat.Partition{Offsets: []int64{0, stripe, 2 * stripe}}}, sources: []int{0},
			ls: &localSystem{index: [][]int32{make([]int32, stripe)}}, msgs: []rowMsg{m}}
		if err := x.hold(0, 0); err != nil {
			b.Fatal(err)
		}
	}
}
