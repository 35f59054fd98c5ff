package gmres

import (
	"math"
	"os"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/matfile"
	"github.com/fsai-dist/fsai-dist/precond"
	"github.com/fsai-dist/fsai-dist/problem"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// passByPass is a backend whose AxpyDotMany is AxpyMany, then DotMany and
// the squared norm: Arnoldi then runs CGS2 pass by pass (dots, projection,
// dots, projection; four reads of the basis a step), the reference the
// fused step is compared with.
type passByPass struct{ backend.Backend }

func (b passByPass) AxpyDotMany(w, v backend.Vector, a, out []float64) {
	k := len(a)
	b.AxpyMany(w, v, a)
	b.DotMany(v, w, out[:k])
	b.DotCols(w, w, out[k:])
}

// TestOrthogonality: the Arnoldi basis of 29 steps of GMRES(30) (no
// preconditioner) on convdiff:12:3000 (cell Peclet number
// 115) and, where ../shared holds them, the stored nonsymmetric matrices
// sherman5 and orsirr_1 stays orthonormal to working precision: ||I -
// V'V||_F below 1e-13 and within four times (plus 1e-15) that of CGS2 run
// pass by pass, whose residual estimates it repeats to 1e-10.
func TestOrthogonality(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		cases := map[string]*dsmat.Rows{"convdiff:12:3000": generated(t, "convdiff:12:3000")}
		for _, name := range []string{"sherman5", "orsirr_1"} {
			path := "../../shared/matrices/nonsym/" + name + ".mtx"
			if _, err := os.Stat(path); err != nil {
				t.Logf("%s: no ../shared/matrices/nonsym beside the checkout", name)
				continue
			}
			rows, _, err := matfile.ReadMatrix(c, path)
			if err != nil {
				t.Fatal(err)
			}
			cases[name] = rows
		}
		for name, rows := range cases {
			fused, fusedRes := arnoldiBasis(t, c, cpu.New(1), rows)
			ref, refRes := arnoldiBasis(t, c, passByPass{cpu.New(1)}, rows)
			if fused > 1e-13 || fused > 4*ref+1e-15 {
				t.Errorf("%s: ||I - V'V||_F = %.3g, pass by pass %.3g", name, fused, ref)
			}
			for i := range fusedRes {
				if d := math.Abs(fusedRes[i] - refRes[i]); d > 1e-10*refRes[i] {
					t.Errorf("%s: step %d: residual estimate %.6g, pass by pass %.6g", name, i+1, fusedRes[i], refRes[i])
				}
			}
			t.Logf("%s: ||I - V'V||_F = %.3g, pass by pass %.3g; residual estimate after 29 steps %.3g", name, fused, ref, fusedRes[len(fusedRes)-1])
		}
	})
}

// generated returns the whole matrix of a built-in problem.
func generated(t *testing.T, spec string) *dsmat.Rows {
	t.Helper()
	p, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := p.Generate(0, p.Rows())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// arnoldiBasis runs 29 GMRES(30) steps on one rank on be, from x = 0 with
// b_i = 1 + sin(i), and returns ||I - V'V||_F of the 29 normalized basis
// vectors and
// the relative residual estimate of every step.
func arnoldiBasis(t *testing.T, c *comm.Comm, be backend.Backend, rows *dsmat.Rows) (float64, []float64) {
	t.Helper()
	defer be.Close()
	A, err := dsmat.New(c, dsmat.NewPartition(rows.N, 1), rows)
	if err != nil {
		t.Fatal(err)
	}
	op, err := A.Bind(be, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	n := int(rows.N)
	host := make([]float64, n)
	for i := range host {
		host[i] = 1 + math.Sin(float64(i))
	}
	b, _ := ddmat.NewVector(c, be, n)
	x, _ := ddmat.NewVector(c, be, n)
	defer b.Free()
	defer x.Free()
	if err := b.Set(host); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(op, b, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Free()
	// the basis of the last step, taken before the end of the solve uses
	// v_0 as scratch: v_0..v_28 normalized, v_29 not yet
	var est []float64
	v := make([]float64, ws.basis.Len())
	var vErr error
	progress := func(it int, relres float64) {
		est = append(est, relres)
		if it == 29 {
			vErr = be.Download(v, ws.basis)
		}
	}
	res, err := ws.SolveBlock(precond.None{}, b, x, krylov.Options{Tol: 1e-30, MaxIt: 29, Progress: progress})
	if err != nil || vErr != nil {
		t.Fatal(err, vErr)
	}
	if res[0].Iterations != 29 {
		t.Fatalf("%d iterations (%s), want 29", res[0].Iterations, res[0].Reason)
	}
	var loss float64
	for i := range 29 {
		for j := range 29 {
			d := 0.0
			for e := range n {
				d += v[i*n+e] * v[j*n+e]
			}
			if i == j {
				d--
			}
			loss += d * d
		}
	}
	return math.Sqrt(loss), est
}
