package solver_test

import (
	"fmt"
	"log"
	"math"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/solver"
)

// heatRows returns rows [lo,hi) of I/dt + L, L the 1D Laplacian
// tridiag(-1, 2, -1) of dimension n: the matrix of an implicit Euler step of
// the heat equation, in CSR with global column indices.
func heatRows(n, lo, hi int64, dt float64) (rowPtr, cols []int64, vals []float64) {
	rowPtr = []int64{0}
	for i := lo; i < hi; i++ {
		for j := max(i-1, 0); j <= min(i+1, n-1); j++ {
			cols = append(cols, j)
			if j == i {
				vals = append(vals, 2+1/dt)
			} else {
				vals = append(vals, -1)
			}
		}
		rowPtr = append(rowPtr, int64(len(cols)))
	}
	return rowPtr, cols, vals
}

// Implicit Euler time steps of the heat equation u' = -L u with a time step
// that changes: the matrix I/dt + L keeps its pattern, its values change
// with dt, and each step solves for the next u.
func Example() {
	if err := comm.Init(); err != nil {
		log.Fatal(err)
	}
	c := comm.World()
	const n = 2000
	lo, hi := n*int64(c.Rank())/int64(c.Size()), n*int64(c.Rank()+1)/int64(c.Size())

	dt := 0.5
	rowPtr, cols, vals := heatRows(n, lo, hi, dt)
	A, err := solver.NewMatrix(c, n, lo, rowPtr, cols, vals)
	if err != nil {
		log.Fatal(err)
	}
	opt := solver.DefaultOptions()
	opt.Backend = "cpu"
	s, err := solver.New(A, nil, opt)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Free()

	u := make([]float64, hi-lo) // the solution: a sine mode, which decays by 1/(1 + dt*lambda) per step
	lambda := 2 - 2*math.Cos(math.Pi/(n+1))
	for i := range u {
		u[i] = math.Sin(math.Pi * float64(lo+int64(i)+1) / (n + 1))
	}
	decay := 1.0
	for step := 1; step <= 3; step++ {
		b := make([]float64, len(u)) // u/dt
		for i := range b {
			b[i] = u[i] / dt
		}
		res, err := s.Solve(b, u) // u: the initial guess, then the new u
		if err != nil {
			log.Fatal(err)
		}
		decay /= 1 + dt*lambda
		var worst float64
		for i := range u {
			exact := decay * math.Sin(math.Pi*float64(lo+int64(i)+1)/(n+1))
			worst = max(worst, math.Abs(u[i]-exact))
		}
		worst, _ = comm.AllreduceScalar(c, comm.Max, worst)
		if c.Rank() == 0 {
			fmt.Printf("step %d: dt %.3g, converged %v, error below 1e-6: %v\n", step, dt, res.Converged, worst < 1e-6)
		}

		dt /= 2 // a smaller step: new values, same pattern
		_, _, vals = heatRows(n, lo, hi, dt)
		if err := s.UpdateValues(vals); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// step 1: dt 0.5, converged true, error below 1e-6: true
	// step 2: dt 0.25, converged true, error below 1e-6: true
	// step 3: dt 0.125, converged true, error below 1e-6: true
}

// Three loads on the same structure solved at once: the right-hand sides
// are the columns of one array, each of LocalRows() entries.
func ExampleSolver_SolveMany() {
	if err := comm.Init(); err != nil {
		log.Fatal(err)
	}
	c := comm.World()
	const n, k = 1000, 3
	lo, hi := n*int64(c.Rank())/int64(c.Size()), n*int64(c.Rank()+1)/int64(c.Size())
	rowPtr, cols, vals := heatRows(n, lo, hi, 1)
	A, err := solver.NewMatrix(c, n, lo, rowPtr, cols, vals)
	if err != nil {
		log.Fatal(err)
	}
	opt := solver.DefaultOptions()
	opt.Backend = "cpu"
	s, err := solver.New(A, nil, opt)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Free()

	m := int(hi - lo)
	b, x := make([]float64, k*m), make([]float64, k*m)
	for col := range k { // load col: (col+1) times a constant source
		for i := range m {
			b[col*m+i] = float64(col + 1)
		}
	}
	results, err := s.SolveMany(b, x, k)
	if err != nil {
		log.Fatal(err)
	}
	for col, res := range results {
		if c.Rank() == 0 {
			fmt.Printf("load %d: converged %v, relres below 1e-8: %v\n", col+1, res.Converged, res.RelRes < 1e-8)
		}
	}
	// Output:
	// load 1: converged true, relres below 1e-8: true
	// load 2: converged true, relres below 1e-8: true
	// load 3: converged true, relres below 1e-8: true
}
