package afsai

import (
	"runtime"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// TestSetupIndependentOfCores checks that the host stages of New, which
// split their loops over GOMAXPROCS chunks, build the same G and G' bit for
// bit on one core as on several.
func TestSetupIndependentOfCores(t *testing.T) {
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			for _, spec := range []string{"poisson7:12", "diffusion:12"} {
				A := generated(t, c, spec)
				var ref *Preconditioner
				for _, procs := range []int{1, 5} {
					runtime.GOMAXPROCS(procs)
					if procs > 1 && parallel.Chunks(A.LocalRows()) < 2 {
						t.Fatalf("%s: %d rows on %d cores make one chunk", spec, A.LocalRows(), procs)
					}
					p, err := New(A, cpu.New(1), DefaultConfig())
					if err != nil {
						t.Fatal(err)
					}
					defer p.Free()
					if ref == nil {
						ref = p
						continue
					}
					if !ref.G.Matrix().Equal(p.G.Matrix()) || !ref.Gt.Matrix().Equal(p.Gt.Matrix()) {
						t.Errorf("%s: G or G' on %d cores differs from that on one", spec, procs)
					}
				}
			}
		})
	}
}
