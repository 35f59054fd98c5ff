package solver

import (
	"fmt"
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/gmres"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/spai"
)

// Options configure a Solver. A zero field takes its default, so the zero
// Options are DefaultOptions (New; Bind takes the options as given).
type Options struct {
	// Method is the Krylov method (Methods): "cg", preconditioned
	// conjugate gradients (SPD matrices), the default; "bicgstab"
	// (BiCGSTAB) or "gmres" (restarted GMRES), both right preconditioned,
	// for nonsymmetric matrices. BiCGSTAB and GMRES solve one right-hand
	// side at a time: SolveMany with several is an error.
	Method string
	// GMRESRestart is the restart length m of GMRES(m)
	// (gmres.DefaultRestart, 30): the basis holds m+1 vectors of the
	// rank's rows on the backend.
	GMRESRestart int
	// CGSingleReduction runs CG as single-reduction CG (Chronopoulos and
	// Gear, PETSc's -ksp_cg_single_reduction): its three dot products
	// of an iteration cross the ranks in one Allreduce, and a GPU is waited
	// for once per iteration, instead of twice, at the cost of one more
	// vector and one more vector update; it may take a few more
	// iterations. Other methods ignore it.
	CGSingleReduction bool
	// Prec is the preconditioner (Precs): "afsai" (adaptive FSAI, the
	// default), "fsai" (static FSAI), "spai" (static sparse approximate
	// inverse, not symmetric: with bicgstab or gmres), "jacobi" or "none".
	Prec string
	// Coarse adds a coarse space to the preconditioner (package
	// twolevel: rigid-body modes, or constants, on a grid of boxes over the
	// matrix's geometry, Matrix.SetGeometry): "auto", the default, adds it
	// to afsai and fsai on a matrix whose geometry has three unknowns a
	// node; "on" to any preconditioner of a method that assumes an SPD
	// matrix (an error without a geometry); "off" never.
	Coarse string
	// CoarseBoxes is the coarse grid's boxes along each axis; 0 chooses
	// them from the problem's size (twolevel.AutoBoxes).
	CoarseBoxes int
	// FSAI configures afsai and fsai (its Static field is set from Prec,
	// its Wide from Wide); a zero Power means afsai.DefaultConfig().
	FSAI FSAIConfig
	// SPAI is the pattern of spai; a zero K means spai.DefaultParams().
	SPAI SPAIParams
	// SPAIOnDevice builds and solves SPAI's least-squares blocks on the
	// GPU of a CUDA backend (spai/cudaspai), from the rank's rows of A
	// uploaded once. Off by default: the host's cores compute M's rows
	// (docs/spai.md).
	SPAIOnDevice bool
	// Tol is the relative residual ||b - A x||/||b|| to stop at (1e-8).
	Tol float64
	// MaxIt is the iteration limit (10000).
	MaxIt int
	// Stagnation, when positive, stops a solve whose residual has made no
	// progress (krylov.Options.Stagnation); 0, the default, never.
	Stagnation int
	// DivTol stops a solve whose relative residual grows above DivTol
	// times the initial one, with reason diverged; +Inf never. Zero is
	// the method's default: krylov.DefaultDivTol (1e10) for BiCGSTAB and
	// GMRES, never for CG, whose residual can grow 1e5-fold in a solve
	// that converges.
	DivTol float64
	// Stop, when set, is asked once per iteration on every rank whether to
	// stop: when it says so on any rank, the solve ends after that
	// iteration with reason interrupted (krylov.Options.Stop).
	Stop func() bool
	// Progress, when set, is called after each iteration with the
	// recurrence's relative residual (krylov.Options.Progress).
	Progress func(iter int, relres float64)
	// TrueEvery and TrueProgress, when both set, pass CG's true relative
	// residual every TrueEvery iterations with the recurrence's, at the
	// cost of a product with A each time (krylov.Options.TrueProgress).
	TrueEvery    int
	TrueProgress func(iter int, recurrence, true float64)
	// Log, when set, accounts for the solves' time by operation on this
	// rank (OpLog), at the cost of a wait for the backend after each.
	Log *OpLog
	// Wide keeps A's values, and G's and G''s under an FSAI application
	// in double precision, in float64 even where they are all float32
	// numbers; by default such blocks are stored in float32 (the same
	// values exactly, half the bytes; dsmat.Matrix.Bind).
	Wide bool
	// Backend is what New opens when it is given no backend (Backends):
	// "auto" (CUDA when the rank finds a GPU, else the CPU; the default),
	// "cpu" or "cuda".
	Backend string
	// Threads is the CPU backend's threads per rank; 0 shares the node's
	// cores among the ranks on it.
	Threads int
	// ShareGPU and HostHalos are BackendOptions' for the backend New
	// opens.
	ShareGPU, HostHalos bool
}

// CoarseModes lists the values Options.Coarse takes.
var CoarseModes = []string{"auto", "off", "on"}

// DefaultOptions are CG with aFSAI (afsai.DefaultConfig) and, on a matrix
// with a geometry of three unknowns a node, its coarse space, tolerance 1e-8,
// at most 10000 iterations, GMRES restart 30, no stagnation test,
// the method's divergence test, backend auto.
func DefaultOptions() Options {
	return Options{Method: "cg", Prec: "afsai", Coarse: "auto", FSAI: afsai.DefaultConfig(), SPAI: spai.DefaultParams(), Tol: 1e-8, MaxIt: 10000, GMRESRestart: gmres.DefaultRestart,
		Stagnation: krylov.DefaultStagnation, Backend: "auto"}
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	def := DefaultOptions()
	if o.Method == "" {
		o.Method = def.Method
	}
	if o.Prec == "" {
		o.Prec = def.Prec
	}
	if o.Coarse == "" {
		o.Coarse = def.Coarse
	}
	if o.FSAI.Power == 0 {
		o.FSAI = def.FSAI
	}
	if o.SPAI.K == 0 {
		o.SPAI = def.SPAI
	}
	if o.Tol == 0 {
		o.Tol = def.Tol
	}
	if o.MaxIt == 0 {
		o.MaxIt = def.MaxIt
	}
	if o.GMRESRestart == 0 {
		o.GMRESRestart = def.GMRESRestart
	}
	if o.Backend == "" {
		o.Backend = def.Backend
	}
	return o
}

// check checks the options and sets the FSAI configuration's Static and
// Wide from Prec and Wide.
func (o Options) check() (Options, error) {
	o.FSAI.Static = o.Prec == "fsai"
	o.FSAI.Wide = o.Wide
	switch {
	case methods[o.Method].new == nil:
		return o, fmt.Errorf("solver: method %q is not one of %v", o.Method, Methods)
	case precs[o.Prec].new == nil:
		return o, fmt.Errorf("solver: preconditioner %q is not one of %v", o.Prec, Precs)
	case CheckPair(o.Method, o.Prec) != nil:
		return o, CheckPair(o.Method, o.Prec)
	case !slices.Contains(CoarseModes, o.Coarse):
		return o, fmt.Errorf("solver: coarse space %q is not one of %v", o.Coarse, CoarseModes)
	case o.CoarseBoxes < 0:
		return o, fmt.Errorf("solver: %d coarse boxes", o.CoarseBoxes)
	case o.Prec == "spai" && o.SPAI.Check() != nil:
		return o, o.SPAI.Check()
	case !(o.Tol > 0 && o.Tol < 1) || math.IsInf(o.Tol, 0):
		return o, fmt.Errorf("solver: tolerance %g is not in (0,1)", o.Tol)
	case o.GMRESRestart < 0 || o.Method == "gmres" && o.GMRESRestart == 0:
		return o, fmt.Errorf("solver: GMRES restart %d is not positive", o.GMRESRestart)
	case o.MaxIt < 0:
		return o, fmt.Errorf("solver: iteration limit %d is negative", o.MaxIt)
	case o.DivTol != 0 && !(o.DivTol > 1):
		return o, fmt.Errorf("solver: divergence tolerance %g is not above 1", o.DivTol)
	case o.Stagnation < 0:
		return o, fmt.Errorf("solver: stagnation window %d is negative", o.Stagnation)
	case !slices.Contains(Backends, o.Backend):
		return o, fmt.Errorf("solver: backend %q is not one of %v", o.Backend, Backends)
	}
	return o, nil
}

// krylov returns the options of one solve.
func (o Options) krylov() krylov.Options {
	return krylov.Options{Tol: o.Tol, MaxIt: o.MaxIt, Stagnation: o.Stagnation, DivTol: o.divTol(), Stop: o.Stop, Progress: o.Progress,
		TrueEvery: o.TrueEvery, TrueProgress: o.TrueProgress}
}

// divTol is the divergence tolerance of a solve: DivTol, or the method's
// default when it is zero.
func (o Options) divTol() float64 {
	if o.DivTol == 0 {
		return methods[o.Method].divTol
	}
	return o.DivTol
}

// BackendOptions are the options of the backend New opens.
func (o Options) BackendOptions() BackendOptions {
	return BackendOptions{Name: o.Backend, Threads: o.Threads, ShareGPU: o.ShareGPU, HostHalos: o.HostHalos}
}
