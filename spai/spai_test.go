package spai

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// shared returns the path of a shared matrix (name relative to the SPD
// folder: "nos4", "nonsym/cdde1"); it skips the test where they are absent.
func shared(t *testing.T, name string) string {
	t.Helper()
	dir := testmatrices.Dir()
	if dir == "" {
		t.Skip(testmatrices.Missing)
	}
	return filepath.Join(dir, name+".mtx")
}

// readWhole reads a Matrix Market file into one stripe of all its rows.
func readWhole(t *testing.T, path string) *dsmat.Rows {
	t.Helper()
	a, err := testmatrices.ReadMTX(path)
	if err != nil {
		t.Fatal(err)
	}
	return testmatrices.Stripe(a)
}

// refPattern is row i of the pattern of A~^k from the definition: the
// boolean powers of A~ (diagonal included), sets of columns.
func refPattern(a *dsmat.Rows, i int64, p Params) []int64 {
	keep := func(r int64) []int64 {
		var m float64
		for e := a.RowPtr[r]; e < a.RowPtr[r+1]; e++ {
			m = math.Max(m, math.Abs(a.Val[e]))
		}
		out := []int64{r}
		for e := a.RowPtr[r]; e < a.RowPtr[r+1]; e++ {
			if a.Col[e] != r && math.Abs(a.Val[e]) > (1-p.Tau)*m {
				out = append(out, a.Col[e])
			}
		}
		return out
	}
	set := map[int64]bool{i: true}
	for range p.K {
		next := map[int64]bool{}
		for r := range set {
			next[r] = true
			for _, c := range keep(r) {
				next[c] = true
			}
		}
		set = next
	}
	var out []int64
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// refRow solves row i of M with gonum's dense least squares: the rows J of
// A, as a dense |J| x n block, restricted to its nonzero columns, then
// transposed. It returns the solution and the block's condition number.
func refRow(t *testing.T, a *dsmat.Rows, i int64, J []int64) ([]float64, float64) {
	t.Helper()
	cols := map[int64]bool{}
	for _, j := range J {
		for e := a.RowPtr[j]; e < a.RowPtr[j+1]; e++ {
			cols[a.Col[e]] = true
		}
	}
	var I []int64
	for c := range cols {
		I = append(I, c)
	}
	slices.Sort(I)
	C := mat.NewDense(len(I), len(J), nil)
	b := mat.NewVecDense(len(I), nil)
	for q, j := range J {
		for e := a.RowPtr[j]; e < a.RowPtr[j+1]; e++ {
			r, _ := slices.BinarySearch(I, a.Col[e])
			C.Set(r, q, a.Val[e])
		}
	}
	if r, ok := slices.BinarySearch(I, i); ok {
		b.SetVec(r, 1)
	}
	var x mat.VecDense
	if err := x.SolveVec(C, b); err != nil {
		t.Fatalf("row %d: gonum: %v", i+1, err)
	}
	return x.RawVector().Data, mat.Cond(C, 2)
}

// TestRowsMatchDenseLeastSquares: every row of M, on the shared SPD and
// nonsymmetric matrices, has the pattern of A~^k's row and the values of
// gonum's dense least-squares solution (QR) of its block: the difference,
// relative to the row's largest entry, within 100 eps times the block's
// condition number, the error bound of two backward-stable solvers (the
// worst ratio seen is logged; ex5's blocks reach a condition number of
// 1e8).
func TestRowsMatchDenseLeastSquares(t *testing.T) {
	for _, name := range []string{"nos4", "bcsstk01", "ex5", "nonsym/cdde1", "nonsym/orsirr_1", "nonsym/jpwh_991", "nonsym/sherman5"} {
		a := readWhole(t, shared(t, name))
		for _, p := range []Params{DefaultParams(), {Tau: 1, K: 1}, {Tau: 0.8, K: 2}} {
			l, err := NewLocal(a)
			if err != nil {
				t.Fatal(err)
			}
			m, st, err := Rows(l, p)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, p, err)
			}
			worst := 0.0
			for i := range int64(m.Count()) {
				got := m.Col[m.RowPtr[i]:m.RowPtr[i+1]]
				vals := m.Val[m.RowPtr[i]:m.RowPtr[i+1]]
				J := refPattern(a, i, p)
				if !slices.Equal(got, J) {
					t.Fatalf("%s %+v row %d: pattern %v, want %v", name, p, i+1, got, J)
				}
				want, cond := refRow(t, a, i, J)
				scale := 0.0
				for _, v := range want {
					scale = math.Max(scale, math.Abs(v))
				}
				for k := range want {
					d := math.Abs(vals[k]-want[k]) / scale / (0x1p-52 * cond)
					worst = math.Max(worst, d)
					if d > 100 {
						t.Errorf("%s %+v row %d: m(%d) = %.17g, gonum %.17g", name, p, i+1, J[k]+1, vals[k], want[k])
					}
				}
			}
			t.Logf("%s tau %g k %d: nnz(M)/nnz(A) %.3f, largest block %d x %d, largest difference from gonum %.2g eps cond(block) of the row's largest entry",
				name, p.Tau, p.K, float64(len(m.Col))/float64(len(a.Col)), st.MaxBlockRows, st.MaxBlockCols, worst)
		}
	}
}

// TestSameMOnAnyRanks: M computed on 1 and 3 ranks (each rank collecting
// the rows within k hops from its neighbours) equals, bit for bit, the M
// computed from the whole matrix on one process.
func TestSameMOnAnyRanks(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := cpu.New(1)
			defer be.Close()
			for _, name := range []string{"nonsym/orsirr_1", "nonsym/sherman5", "nos4"} {
				path := shared(t, name)
				whole := readWhole(t, path)
				A := testmatrices.ReadDistributed(t, c, path)
				for _, p := range []Params{DefaultParams(), {Tau: 0.8, K: 2}} {
					pre, err := New(A, be, Config{Params: p})
					if err != nil {
						t.Fatal(err)
					}
					got := pre.M.Matrix().Rows()
					pre.Free()
					l, err := NewLocal(whole)
					if err != nil {
						t.Fatal(err)
					}
					ref, _, err := Rows(l, p)
					if err != nil {
						t.Fatal(err)
					}
					if d := stripeDiff(got, ref); d != "" {
						t.Errorf("%s %+v rank %d of %d: %s", name, p, c.Rank(), np, d)
					}
					if np > 1 && pre.Info.CollectedRows == 0 {
						t.Errorf("%s %+v: %d ranks collected no rows", name, p, np)
					}
				}
			}
		})
	}
}

// stripeDiff describes where stripe s differs from the same rows of the
// whole matrix w, "" when they are equal bit for bit.
func stripeDiff(s, w *dsmat.Rows) string {
	for i := range int64(s.Count()) {
		g := s.First + i
		sc, sv := s.Col[s.RowPtr[i]:s.RowPtr[i+1]], s.Val[s.RowPtr[i]:s.RowPtr[i+1]]
		wc, wv := w.Col[w.RowPtr[g]:w.RowPtr[g+1]], w.Val[w.RowPtr[g]:w.RowPtr[g+1]]
		if !slices.Equal(sc, wc) || !slices.Equal(sv, wv) {
			return fmt.Sprintf("row %d: %v %v, whole matrix %v %v", g+1, sc, sv, wc, wv)
		}
	}
	return ""
}

// TestRefusals: a tau outside [0,1], a power outside [1,MaxK], a zero
// row, a value that is not finite and a zero diagonal that no row of the
// pattern covers each give one error that names the problem.
func TestRefusals(t *testing.T) {
	// 2x2: [[0 1] [1 1]]: row 1 has a zero diagonal; at tau 0 its pattern
	// is {1} and column 1 of A has no entry in row 1
	zeroDiag := &dsmat.Rows{N: 2, RowPtr: []int64{0, 1, 3}, Col: []int64{1, 0, 1}, Val: []float64{1, 1, 1}}
	zeroRow := &dsmat.Rows{N: 2, RowPtr: []int64{0, 1, 2}, Col: []int64{0, 1}, Val: []float64{2, 0}}
	nan := &dsmat.Rows{N: 2, RowPtr: []int64{0, 1, 2}, Col: []int64{0, 1}, Val: []float64{2, math.NaN()}}
	singular := &dsmat.Rows{N: 2, RowPtr: []int64{0, 2, 4}, Col: []int64{0, 1, 0, 1}, Val: []float64{1, 1, 1, 1}}
	for _, c := range []struct {
		a    *dsmat.Rows
		p    Params
		want string
	}{
		{zeroDiag, Params{Tau: -0.1, K: 1}, "tau -0.1 is not in [0,1]"},
		{zeroDiag, Params{Tau: 1.5, K: 1}, "tau 1.5 is not in [0,1]"},
		{zeroDiag, Params{Tau: math.NaN(), K: 1}, "tau NaN is not in [0,1]"},
		{zeroDiag, Params{Tau: 0.5, K: 0}, "power k 0 is not in [1,4]"},
		{zeroDiag, Params{Tau: 0, K: 1}, "spai: row 1 of M: no row of its pattern (1 rows) has an entry in column 1 (a zero diagonal entry: raise tau or k)"},
		{zeroRow, DefaultParams(), "spai: row 2 of A holds no nonzero: A is singular"},
		{nan, DefaultParams(), "spai: A(2,2) = NaN is not finite"},
		{singular, Params{Tau: 1, K: 1}, "spai: row 1 of M: its least-squares block (2 x 2) is rank deficient: A is singular"},
	} {
		l, err := NewLocal(c.a)
		if err == nil {
			_, _, err = Rows(l, c.p)
		}
		if err == nil || err.Error() != c.want && !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.p, err, c.want)
		}
	}
	// the zero diagonal is covered once tau keeps row 1's entry in column 2,
	// whose row has an entry in column 1
	l, err := NewLocal(zeroDiag)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Rows(l, DefaultParams()); err != nil {
		t.Errorf("zero diagonal at the default tau: %v", err)
	}
}

// TestPatternIsRows: Pattern gives the patterns of the rows Rows computes,
// on shared matrices and patterns up to k 2.
func TestPatternIsRows(t *testing.T) {
	for _, name := range []string{"nonsym/sherman5", "nonsym/orsirr_1", "nos4"} {
		a := readWhole(t, shared(t, name))
		l, err := NewLocal(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Params{DefaultParams(), {Tau: 0.8, K: 2}} {
			want, _, err := Rows(l, p)
			if err != nil {
				t.Fatal(err)
			}
			ptr, col, err := Pattern(l, p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ptr, want.RowPtr) || !slices.Equal(col, want.Col) {
				t.Errorf("%s %+v: Pattern differs from the pattern of Rows", name, p)
			}
		}
	}
}
