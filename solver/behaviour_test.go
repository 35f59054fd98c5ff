package solver_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
	"github.com/fsai-dist/fsai-dist/matfile"
	"github.com/fsai-dist/fsai-dist/problem"
	"github.com/fsai-dist/fsai-dist/solver"
)

// The behaviour table (testdata/behaviour.csv) records, for jacobi, afsai
// and fsai at 1 and 3 ranks on the CPU backend with one thread per rank,
// the iterations and nnz(G) (prec_nnz, 0 for jacobi) of every shared
// matrix and of small generated problems, solved as fsai-dist solves them
// by default: rows split evenly over the ranks, b = A*1, x0 = 0, tolerance
// 1e-8, default FSAI configuration. A change that should not change what
// the solver computes must leave the table as it is. To record the
// behaviour of the current code, on purpose:
//
//	FSAI_UPDATE_BEHAVIOUR=1 go test ./solver -run TestBehaviour -count=1
//
// (the variable reaches the ranks that mpirun starts, where a test flag
// would not).

// behaviourFile is the table, relative to the package.
const behaviourFile = "testdata/behaviour.csv"

// behaviourProblems are the generated problems of the table, small enough
// to solve in well under a second.
var behaviourProblems = []string{"poisson7:16", "poisson27:10", "diffusion:16", "aniso:16"}

// behaviourPrecs are the preconditioners of the table.
var behaviourPrecs = []string{"jacobi", "afsai", "fsai"}

// behaviourHeader names the table's columns.
var behaviourHeader = []string{"problem", "prec", "ranks", "converged", "iterations", "prec_nnz"}

// outcome is one row of the table: how one problem solved.
type outcome struct {
	problem, prec string
	ranks         int
	converged     bool
	iterations    int
	precNNZ       int64
}

func (o outcome) key() string { return fmt.Sprintf("%s %s np%d", o.problem, o.prec, o.ranks) }

func (o outcome) record() []string {
	return []string{o.problem, o.prec, strconv.Itoa(o.ranks), strconv.FormatBool(o.converged),
		strconv.Itoa(o.iterations), strconv.FormatInt(o.precNNZ, 10)}
}

// TestBehaviourProblems checks the table's rows of the generated problems.
func TestBehaviourProblems(t *testing.T) {
	testBehaviour(t, behaviourProblems)
}

// TestBehaviourMatrices checks the table's rows of the shared matrices
// (every *.mtx of testmatrices.Dir, all of them SPD). The largest has 13,200
// rows and 262,411 entries: all run at 3 ranks too, in a few seconds.
func TestBehaviourMatrices(t *testing.T) {
	dir := testmatrices.Dir()
	files, _ := filepath.Glob(filepath.Join(dir, "*.mtx"))
	if len(files) == 0 {
		t.Skip(testmatrices.Missing)
	}
	testBehaviour(t, files)
}

// testBehaviour solves each problem (a generated problem's spec or a matrix
// file) with each preconditioner at 1 and 3 ranks, and compares the
// outcomes with the table, or writes them into it under
// FSAI_UPDATE_BEHAVIOUR=1.
func testBehaviour(t *testing.T, problems []string) {
	update := os.Getenv("FSAI_UPDATE_BEHAVIOUR") == "1"
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			table, err := readBehaviour(behaviourFile)
			if err != nil && !update {
				t.Fatal(err)
			}
			var got []outcome
			for _, p := range problems {
				for _, prec := range behaviourPrecs {
					o := solveBehaviour(t, c, p, prec)
					got = append(got, o)
					if want, ok := table[o.key()]; !update && !ok {
						t.Errorf("%s: not in %s; record it with FSAI_UPDATE_BEHAVIOUR=1", o.key(), behaviourFile)
					} else if !update && o != want {
						t.Errorf("%s: %v, the table has %v", o.key(), o.record(), want.record())
					}
				}
			}
			if update && c.Rank() == 0 {
				for _, o := range got {
					table[o.key()] = o
				}
				if err := writeBehaviour(behaviourFile, table); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// solveBehaviour solves A x = A*1 from x = 0 for problem p (a generated
// problem's spec or a matrix file) with preconditioner prec on c's ranks,
// rows split evenly, on the CPU backend with one thread per rank.
func solveBehaviour(t *testing.T, c *comm.Comm, p, prec string) outcome {
	t.Helper()
	rows, part := behaviourRows(t, c, p)
	b := onesProduct(t, c, part, rows)
	A, err := solver.NewMatrix(c, rows.N, rows.First, rows.RowPtr, rows.Col, rows.Val)
	if err != nil {
		t.Fatal(err)
	}
	s, err := solver.New(A, nil, solver.Options{Prec: prec, Backend: "cpu", Threads: 1})
	if err != nil {
		t.Fatalf("%s %s: %v", p, prec, err)
	}
	defer s.Free()
	res, err := s.Solve(b, make([]float64, len(b)))
	if err != nil {
		t.Fatalf("%s %s: %v", p, prec, err)
	}
	o := outcome{problem: strings.TrimSuffix(filepath.Base(p), ".mtx"), prec: prec, ranks: c.Size(),
		converged: res.Converged, iterations: res.Iterations}
	if g, ok := s.Preconditioner().(*afsai.Preconditioner); ok {
		o.precNNZ = g.Info.NNZ
	}
	return o
}

// behaviourRows returns this rank's stripe of p and the partition: a
// matrix file read as fsai-dist reads it, or a generated problem's rows
// split evenly.
func behaviourRows(t *testing.T, c *comm.Comm, p string) (*dsmat.Rows, dsmat.Partition) {
	t.Helper()
	if strings.HasSuffix(p, ".mtx") {
		rows, part, err := matfile.ReadMatrix(c, p)
		if err != nil {
			t.Fatal(err)
		}
		return rows, part
	}
	spec, err := problem.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	part := dsmat.NewPartition(spec.Rows(), c.Size())
	rows, err := spec.Generate(part.Range(c.Rank()))
	if err != nil {
		t.Fatal(err)
	}
	return rows, part
}

// onesProduct returns this rank's rows of A*1 computed as fsai-dist computes
// its default right-hand side: by the distributed product on the CPU
// backend, which adds the diagonal block's and the off-diagonal blocks'
// sums separately. (A*1 summed row by row differs in the last bits at 3
// ranks, enough to change the iterations on ex5 by two.)
func onesProduct(t *testing.T, c *comm.Comm, part dsmat.Partition, rows *dsmat.Rows) []float64 {
	t.Helper()
	A, err := dsmat.New(c, part, rows)
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(1)
	op, err := A.Bind(be, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Free()
	n := A.LocalRows()
	x, _ := be.NewVector(n)
	y, _ := be.NewVector(n)
	be.Fill(x, 1)
	b := make([]float64, n)
	if err := op.Apply(y, x); err != nil {
		t.Fatal(err)
	}
	if err := be.Download(b, y); err != nil {
		t.Fatal(err)
	}
	return b
}

// readBehaviour reads the table into a map by outcome.key.
func readBehaviour(path string) (map[string]outcome, error) {
	table := map[string]outcome{}
	f, err := os.Open(path)
	if err != nil {
		return table, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return table, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], behaviourHeader) {
		return table, fmt.Errorf("%s: the header is not %v", path, behaviourHeader)
	}
	for _, r := range recs[1:] {
		o := outcome{problem: r[0], prec: r[1]}
		var errs [4]error
		o.ranks, errs[0] = strconv.Atoi(r[2])
		o.converged, errs[1] = strconv.ParseBool(r[3])
		o.iterations, errs[2] = strconv.Atoi(r[4])
		o.precNNZ, errs[3] = strconv.ParseInt(r[5], 10, 64)
		for _, err := range errs {
			if err != nil {
				return table, fmt.Errorf("%s: row %v: %w", path, r, err)
			}
		}
		table[o.key()] = o
	}
	return table, nil
}

// writeBehaviour writes the table sorted by problem, preconditioner and
// ranks, so that a change of behaviour shows as a small diff.
func writeBehaviour(path string, table map[string]outcome) error {
	rows := make([]outcome, 0, len(table))
	for _, o := range table {
		rows = append(rows, o)
	}
	slices.SortFunc(rows, func(a, b outcome) int {
		return strings.Compare(fmt.Sprintf("%s\x00%s\x00%03d", a.problem, a.prec, a.ranks),
			fmt.Sprintf("%s\x00%s\x00%03d", b.problem, b.prec, b.ranks))
	})
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	w.Write(behaviourHeader)
	for _, o := range rows {
		w.Write(o.record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}
