package dsmat

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// laplace9 is the 9 x 9 matrix tridiag(-1, 4, -1) plus the pair
// (1,9) = (9,1) = -1, which joins the first and the last stripe.
func laplace9() []Triplet {
	var ts []Triplet
	for i := range int64(9) {
		ts = append(ts, Triplet{i, i, 4})
		if i > 0 {
			ts = append(ts, Triplet{i, i - 1, -1}, Triplet{i - 1, i, -1})
		}
	}
	return append(ts, Triplet{0, 8, -1}, Triplet{8, 0, -1})
}

// set returns ts with the entry (i, j) set to v, or removed if remove.
func set(ts []Triplet, i, j int64, v float64, remove bool) []Triplet {
	out := slices.DeleteFunc(slices.Clone(ts), func(t Triplet) bool { return t.Row == i && t.Col == j })
	if !remove {
		out = append(out, Triplet{i, j, v})
	}
	return out
}

// stripeOf assembles this rank's stripe of the n x n matrix ts.
func stripeOf(t *testing.T, c *comm.Comm, n int64, ts []Triplet) (*Rows, Partition) {
	t.Helper()
	part := NewPartition(n, c.Size())
	lo, hi := part.Range(c.Rank())
	mine := slices.DeleteFunc(slices.Clone(ts), func(t Triplet) bool { return t.Row < lo || t.Row >= hi })
	r, _, err := AssembleRows(n, lo, int(hi-lo), mine)
	if err != nil {
		t.Fatal(err)
	}
	return r, part
}

func TestCheckSymmetric(t *testing.T) {
	sym := laplace9()
	var lower []Triplet
	for _, e := range sym {
		if e.Col <= e.Row {
			lower = append(lower, e)
		}
	}
	cases := []struct {
		name string
		ts   []Triplet
		want string // "" for symmetric
	}{
		{"symmetric", sym, ""},
		// rounding noise on the scale of the diagonal is accepted, also
		// where it leaves an entry without its transpose
		{"noise", set(set(sym, 3, 4, -1-1e-9, false), 1, 6, 1e-12, false), ""},
		{"stripe", set(sym, 2, 1, -0.5, false), "A(2,3) = -1 but A(3,2) = -0.5"},
		{"halo", set(sym, 8, 0, 0, true), "A(1,9) = -1 but A(9,1) is not stored"},
		// the first and the last rank both find this pair, each from its side
		{"halo value", set(sym, 8, 0, -1.01, false), "A(9,1) = -1.01"},
		{"lower only", lower, "is not stored"},
	}
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, tc := range cases {
				r, part := stripeOf(t, c, 9, tc.ts)
				err := CheckSymmetric(c, part, r, 1e-6)
				if tc.want == "" {
					if err != nil {
						t.Errorf("%s: %v", tc.name, err)
					}
					continue
				}
				mpitest.CheckCollectiveError(t, c, tc.name, err, tc.want)
				if err != nil && !errors.Is(err, comm.ErrPeer) && !strings.HasPrefix(err.Error(), "dsmat: the matrix is not symmetric: A(") {
					t.Errorf("%s: %v", tc.name, err)
				}
			}
		})
	}
}

func TestEmptyRowAndDiagonal(t *testing.T) {
	r, _, err := AssembleRows(5, 2, 3, []Triplet{{2, 2, 3}, {2, 0, 1}, {4, 1, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if i := r.EmptyRow(); i != 3 {
		t.Errorf("EmptyRow = %d, want 3", i)
	}
	if d := r.Diagonal(); !slices.Equal(d, []float64{3, 0, 0}) {
		t.Errorf("Diagonal = %v, want [3 0 0]", d)
	}
	full, _, _ := AssembleRows(2, 0, 2, []Triplet{{0, 0, 1}, {1, 0, 1}})
	if i := full.EmptyRow(); i != -1 {
		t.Errorf("EmptyRow = %d, want -1", i)
	}
}

// TestStripeEntriesLimit: a stripe of more nonzeros than int32 row pointers
// count is refused with the rank and a remedy; one of exactly that many is
// not.
func TestStripeEntriesLimit(t *testing.T) {
	if err := checkStripeEntries(1<<31-1, 0); err != nil {
		t.Errorf("2^31-1 nonzeros refused: %v", err)
	}
	err := checkStripeEntries(3234809664, 2)
	if err == nil || !strings.Contains(err.Error(), "3234809664 nonzeros on rank 2") || !strings.Contains(err.Error(), "use more ranks") {
		t.Errorf("3234809664 nonzeros: got %v", err)
	}
}
