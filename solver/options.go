package solver

import (
	"fmt"
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/afsai"
)

// Precs lists the preconditioners Options.Prec names.
var Precs = []string{"afsai", "fsai", "jacobi", "none"}

// Options configure a Solver. A zero field takes its default, so the zero
// Options are DefaultOptions.
type Options struct {
	// Prec is the preconditioner: "afsai" (adaptive FSAI, the default),
	// "fsai" (static FSAI), "jacobi" or "none".
	Prec string
	// FSAI configures afsai and fsai (its Static field is set from Prec);
	// a zero Power means afsai.DefaultConfig().
	FSAI afsai.Config
	// Tol is the relative residual ||b - A x||/||b|| to stop at (1e-8).
	Tol float64
	// MaxIt is the iteration limit (10000).
	MaxIt int
	// Backend is what New opens when it is given no backend: "auto" (CUDA
	// when the rank finds a GPU, else the CPU; the default), "cpu" or
	// "cuda".
	Backend string
	// Threads is the CPU backend's threads per rank; 0 shares the node's
	// cores among the ranks on it.
	Threads int
}

// DefaultOptions are aFSAI with afsai.DefaultConfig, tolerance 1e-8, at most
// 10000 iterations, backend auto.
func DefaultOptions() Options {
	return Options{Prec: "afsai", FSAI: afsai.DefaultConfig(), Tol: 1e-8, MaxIt: 10000, Backend: "auto"}
}

// withDefaults fills the zero fields and checks the others.
func (o Options) withDefaults() (Options, error) {
	def := DefaultOptions()
	if o.Prec == "" {
		o.Prec = def.Prec
	}
	if o.FSAI.Power == 0 {
		o.FSAI = def.FSAI
	}
	o.FSAI.Static = o.Prec == "fsai"
	if o.Tol == 0 {
		o.Tol = def.Tol
	}
	if o.MaxIt == 0 {
		o.MaxIt = def.MaxIt
	}
	if o.Backend == "" {
		o.Backend = def.Backend
	}
	switch {
	case !slices.Contains(Precs, o.Prec):
		return o, fmt.Errorf("solver: preconditioner %q is not one of %v", o.Prec, Precs)
	case !(o.Tol > 0 && o.Tol < 1) || math.IsInf(o.Tol, 0):
		return o, fmt.Errorf("solver: tolerance %g is not in (0,1)", o.Tol)
	case o.MaxIt < 0:
		return o, fmt.Errorf("solver: iteration limit %d is negative", o.MaxIt)
	case !slices.Contains(backends, o.Backend):
		return o, fmt.Errorf("solver: backend %q is not one of %v", o.Backend, backends)
	}
	return o, nil
}
