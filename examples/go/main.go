// Command heat solves tridiag(-1, 3, -1) x = 1 with fsai-dist, its rows split among the
// ranks, with aFSAI of 5 steps on the CPU.
package main

import (
	"fmt"
	"log"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/solver"
)

func main() {
	if err := comm.Init(); err != nil {
		log.Fatal(err)
	}
	defer comm.Finalize()
	c := comm.World()
	const n = 1000
	var s *solver.Solver
	lo, hi := n*int64(c.Rank())/int64(c.Size()), n*int64(c.Rank()+1)/int64(c.Size())
	rowPtr, cols, vals := []int64{0}, []int64{}, []float64{}
	for i := lo; i < hi; i++ {
		for j := max(i-1, 0); j <= min(i+1, n-1); j++ {
			v := -1.0
			if j == i {
				v = 3
			}
			cols, vals = append(cols, j), append(vals, v)
		}
		rowPtr = append(rowPtr, int64(len(cols)))
	}
	opt := solver.DefaultOptions()
	for _, o := range [][2]string{{"backend", "cpu"}, {"afsai.steps", "5"}} {
		if err := opt.Set(o[0], o[1]); err != nil { // the options by name, as -options files give them
			log.Fatal(err)
		}
	}
	A, err := solver.NewMatrix(c, n, lo, rowPtr, cols, vals)
	if err == nil {
		s, err = solver.New(A, nil, opt)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer s.Free() // before Finalize: deferred calls run last in, first out
	b, x := make([]float64, hi-lo), make([]float64, hi-lo)
	for i := range b {
		b[i] = 1
	}
	res, err := s.Solve(b, x)
	if err != nil {
		log.Fatal(err)
	}
	if c.Rank() == 0 {
		fmt.Printf("converged %v in %d iterations, relres %.1e\n", res.Converged, res.Iterations, res.RelRes)
	}
}
