package afsai

import (
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/problem"
)

// collectionCases are distCases and madeCases.
func collectionCases(t *testing.T, c *comm.Comm) []distCase {
	t.Helper()
	return append(distCases(t, c), madeCases(t, c)...)
}

// madeCases are two matrices made for the collection: a chain of stripes (a
// 3D Laplacian cut in slabs of two or three planes, where a short reach
// takes only the neighbours' nearest planes, though a rank's set may hold
// ranks two slabs away), and a Laplacian whose numbering scatters every
// stripe over the grid (where paths leave stripes and come back, and the
// collection takes several rounds).
func madeCases(t *testing.T, c *comm.Comm) []distCase {
	t.Helper()
	return []distCase{
		distribute(t, c, "poisson7:12 chain", wholeProblem(t, "poisson7:12")),
		distribute(t, c, "poisson7:6 scattered", scatter(wholeProblem(t, "poisson7:6"), 97)),
	}
}

// wholeProblem generates all rows of a problem.
func wholeProblem(t *testing.T, spec string) *dsmat.Rows {
	t.Helper()
	full, err := problem.All(spec)
	if err != nil {
		t.Fatal(err)
	}
	return full
}

// distribute spreads a whole matrix over the ranks of c in equal stripes.
func distribute(t *testing.T, c *comm.Comm, name string, full *dsmat.Rows) distCase {
	t.Helper()
	part := dsmat.NewPartition(full.N, c.Size())
	lo, hi := part.Range(c.Rank())
	base, end := full.RowPtr[lo], full.RowPtr[hi]
	rows := &dsmat.Rows{N: full.N, First: lo, RowPtr: make([]int64, hi-lo+1),
		Col: slices.Clone(full.Col[base:end]), Val: slices.Clone(full.Val[base:end])}
	for i := range rows.RowPtr {
		rows.RowPtr[i] = full.RowPtr[lo+int64(i)] - base
	}
	A, err := dsmat.New(c, part, rows)
	if err != nil {
		t.Fatal(err)
	}
	return distCase{name, A, full}
}

// scatter renumbers the rows and columns of a whole matrix by
// i -> i*step mod n, step prime to n.
func scatter(full *dsmat.Rows, step int64) *dsmat.Rows {
	n := full.N
	from := make([]int64, n) // the old index of each new row
	for i := range n {
		from[i*step%n] = i
	}
	out := &dsmat.Rows{N: n, RowPtr: make([]int64, 1, n+1)}
	for _, i := range from {
		type entry struct {
			col int64
			val float64
		}
		var row []entry
		for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
			row = append(row, entry{full.Col[k] * step % n, full.Val[k]})
		}
		slices.SortFunc(row, func(a, b entry) int { return int(a.col - b.col) })
		for _, e := range row {
			out.Col, out.Val = append(out.Col, e.col), append(out.Val, e.val)
		}
		out.RowPtr = append(out.RowPtr, int64(len(out.Col)))
	}
	return out
}

// withinReach returns, ascending, the rows of the whole matrix that rank me
// of part needs with the set of ranks set: its own rows and those of the
// set's ranks within reach hops of them along paths through the set's
// ranks' rows only (all of them when reach <= 0).
func withinReach(full *dsmat.Rows, part dsmat.Partition, set []int, me, reach int) []int64 {
	inSet := func(i int64) bool {
		_, in := slices.BinarySearch(set, part.Owner(i))
		return in
	}
	if reach <= 0 {
		var rows []int64
		for i := range full.N {
			if inSet(i) {
				rows = append(rows, i)
			}
		}
		return rows
	}
	lo, hi := part.Range(me)
	var own []int64
	for i := lo; i < hi; i++ {
		own = append(own, i)
	}
	return ball(full, own, inSet, reach)
}

// ball returns, ascending, the rows of the whole matrix within reach hops
// of the rows from along paths through rows that keep accepts only; found by
// a serial breadth-first search.
func ball(full *dsmat.Rows, from []int64, keep func(int64) bool, reach int) []int64 {
	seen := make(map[int64]bool)
	for _, i := range from {
		seen[i] = true
	}
	frontier := from
	for d := 1; len(frontier) > 0 && d <= reach; d++ {
		var next []int64
		for _, i := range frontier {
			for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
				if j := full.Col[k]; keep(j) && !seen[j] {
					seen[j] = true
					next = append(next, j)
				}
			}
		}
		frontier = next
	}
	rows := make([]int64, 0, len(seen))
	for i := range seen {
		rows = append(rows, i)
	}
	slices.Sort(rows)
	return rows
}

// TestServe: an owner sends the rows of its stripe within the rest of the
// reach of the asked rows, each only once, and refuses asks outside its
// stripe or the reach.
func TestServe(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		dc := distribute(t, c, "poisson7:5", wholeProblem(t, "poisson7:5"))
		x := newCollection(dc.A, [][]int{{0}}, []int{0}) // rank 0 stands in for a rank whose set holds it
		all := func(int64) bool { return true }
		const reach = 5
		var sent []int64
		for _, tc := range []struct {
			ask  []int64
			want []int64 // before removing the rows sent already
		}{
			{[]int64{62, 3}, ball(dc.full, []int64{62}, all, 2)},
			{[]int64{62, 2, 0, 5}, append(ball(dc.full, []int64{62}, all, 3), 0)},
			{[]int64{124, 4, 0, 1}, append(ball(dc.full, []int64{0}, all, 4), ball(dc.full, []int64{124}, all, 1)...)},
		} {
			rows, further, err := x.serve(0, tc.ask, reach)
			if err != nil {
				t.Fatal(err)
			}
			if further {
				t.Errorf("asked %v: the only rank's rows lead on to another's", tc.ask)
			}
			got := make([]int64, len(rows))
			for k, i := range rows {
				got[k] = int64(i)
			}
			var want []int64
			for _, i := range tc.want {
				if !slices.Contains(sent, i) && !slices.Contains(want, i) {
					want = append(want, i)
				}
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("asked %v: sent %v, want %v", tc.ask, got, want)
			}
			sent = append(sent, got...)
		}
		for _, ask := range [][]int64{{62}, {125, 1}, {-1, 1}, {62, 0}, {62, reach + 1}} {
			if _, _, err := x.serve(0, ask, reach); err == nil {
				t.Errorf("asked %v: no error", ask)
			}
		}
	})
}

// TestGatherExactRows: the local system holds exactly the rows that a
// serial search on the whole matrix finds within the reach (whole stripes
// without one), and its rows are the whole matrix's rows restricted to
// them. On the chain and the scattered matrix the reach leaves rows out.
func TestGatherExactRows(t *testing.T) {
	for _, np := range []int{2, 4, 6} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			var fewer int64
			for _, dc := range collectionCases(t, c) {
				for power := 1; power <= 3; power++ {
					for _, reach := range []int{0, 1, 2, 3, 5, 11} {
						ls, err := gatherLocal(dc.A, power, reach, backend.Double, true)
						if err != nil {
							t.Fatal(err)
						}
						want := withinReach(dc.full, dc.A.Part, ls.set, c.Rank(), reach)
						if global := ls.globals(); !slices.Equal(global, want) {
							i := 0
							for i < min(len(want), len(global)) && global[i] == want[i] {
								i++
							}
							t.Fatalf("%s power %d reach %d: %d local rows, want %d; they differ from local row %d on",
								dc.name, power, reach, len(global), len(want), i)
						}
						checkLocalRows(t, dc, ls)
						whole := 0
						for _, q := range ls.set {
							whole += dc.A.Part.Size(q)
						}
						if len(want) < whole {
							fewer++
						}
					}
				}
			}
			if total, _ := comm.AllreduceScalar(c, comm.Sum, fewer); total == 0 {
				t.Error("no rank left a row out: the test does not exercise the reach")
			}
		})
	}
}

// checkLocalRows checks that every row of the local system is the whole
// matrix's row restricted to the local system's rows, and that its own rows
// come last.
func checkLocalRows(t *testing.T, dc distCase, ls *localSystem) {
	t.Helper()
	if err := ls.A.Check(); err != nil {
		t.Fatal(err)
	}
	global := ls.globals()
	m := len(global)
	if own := ls.ownRows(); ls.A.Rows != m || len(own) != dc.A.LocalRows() || (len(own) > 0 && own[0] != m-len(own)) {
		t.Fatalf("%s: %d local rows, %d own from %v", dc.name, ls.A.Rows, len(own), own)
	}
	for i, gi := range global {
		var cols []int64
		var vals []float64
		for k := dc.full.RowPtr[gi]; k < dc.full.RowPtr[gi+1]; k++ {
			if ls.local(dc.full.Col[k]) >= 0 {
				cols, vals = append(cols, dc.full.Col[k]), append(vals, dc.full.Val[k])
			}
		}
		lc, lv := ls.A.Row(i)
		got := make([]int64, len(lc))
		for k, c := range lc {
			got[k] = global[c]
		}
		if !slices.Equal(got, cols) || !slices.Equal(lv, vals) {
			t.Fatalf("%s: local row %d (global %d) has columns %v values %v, want %v %v", dc.name, i, gi, got, lv, cols, vals)
		}
	}
}

// TestReachGivesSameFactorOnChains: on the chain and the scattered matrix,
// on 4 to 6 ranks, the rows within the set-up's reach give the G of whole
// stripes, bit for bit, for adaptive and static set-ups.
func TestReachGivesSameFactorOnChains(t *testing.T) {
	for _, np := range []int{4, 5, 6} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			var fewer int64
			for _, dc := range madeCases(t, c) {
				for _, cfg := range reachConfigs([]int{1, 3, 10}, []int{DefaultConfig().StaticParams.K}) {
					ls, g := localFactor(t, dc, cfg, cfg.reach())
					whole, gw := localFactor(t, dc, cfg, 0)
					lg, wg := ls.globals(), whole.globals()
					if len(lg) < len(wg) {
						fewer++
					}
					if g.Rows != gw.Rows {
						t.Fatalf("%s: %d rows of G, %d from whole stripes", dc.name, g.Rows, gw.Rows)
					}
					for i := range g.Rows {
						cols, vals := g.Row(i)
						wcols, wvals := gw.Row(i)
						same := len(cols) == len(wcols) && slices.Equal(vals, wvals)
						for k := 0; same && k < len(cols); k++ {
							same = lg[cols[k]] == wg[wcols[k]]
						}
						if !same {
							t.Fatalf("%s, reach %d (%d of %d local rows): row %d of G differs from the one of whole stripes",
								dc.name, cfg.reach(), len(lg), len(wg), i)
						}
					}
				}
			}
			if total, _ := comm.AllreduceScalar(c, comm.Sum, fewer); total == 0 {
				t.Error("no rank left a row out: the test does not exercise the reach")
			}
		})
	}
}
