package solver

import (
	"errors"
	"maps"
	"slices"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/pcg"
	"github.com/fsai-dist/fsai-dist/precond"
)

// The registries below are the one place where names meet packages: the
// command line (-solver, -prec, -backend), Options and the C API take their
// names from here. A new Krylov method or preconditioner is a package and
// one entry.

// Method is a Krylov method's work space for one operator and one number
// of right-hand sides: it solves with any preconditioner, many times.
type Method interface {
	// SolveBlock solves A X = B for the columns of b from the initial
	// guesses in x, leaving the iterates in x; one Result per column.
	SolveBlock(M krylov.Preconditioner, b, x *ddmat.Dense, opt krylov.Options) ([]krylov.Result, error)
	Free()
}

// methods maps a Method name to its constructor, which allocates its work
// vectors for A, shaped like b.
var methods = map[string]func(A krylov.Operator, b *ddmat.Dense) (Method, error){
	"cg": func(A krylov.Operator, b *ddmat.Dense) (Method, error) { return pcg.NewWorkspace(A, b) },
}

// precEntry is a preconditioner's registry entry: its set-up on the bound
// matrix op with the solver's options, and whether it needs a symmetric
// positive definite matrix (see NeedsSPD).
type precEntry struct {
	spd bool
	new func(op *dsmat.Operator, opt Options) (krylov.Preconditioner, error)
}

// precs maps a preconditioner name to its entry.
var precs = map[string]precEntry{
	"none":   {spd: false, new: func(*dsmat.Operator, Options) (krylov.Preconditioner, error) { return precond.None{}, nil }},
	"jacobi": {spd: false, new: newJacobi},
	"afsai":  {spd: true, new: newFSAI},
	"fsai":   {spd: true, new: newFSAI},
}

// newJacobi sets up Jacobi: on a positive diagonal for a method that needs
// an SPD matrix, on any nonzero one otherwise.
func newJacobi(op *dsmat.Operator, opt Options) (krylov.Preconditioner, error) {
	if methodNeedsSPD[opt.Method] {
		return precond.NewJacobi(op.Matrix(), op.Backend())
	}
	return precond.NewJacobiGeneral(op.Matrix(), op.Backend())
}

// newFSAI sets up adaptive or static FSAI (Options.FSAI, whose Static and
// Wide check has set from Prec and Wide).
func newFSAI(op *dsmat.Operator, opt Options) (krylov.Preconditioner, error) {
	return afsai.NewFor(op, fsaiConfig(op.Backend(), opt.FSAI))
}

// Methods lists the names Options.Method accepts, sorted.
var Methods = sortedNames(methods)

// Precs lists the names Options.Prec accepts, sorted.
var Precs = sortedNames(precs)

// Backends lists the names Options.Backend accepts, sorted.
var Backends = sortedNames(backends)

func sortedNames[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// FSAIInfo describes an FSAI preconditioner's set-up (Solver.FSAIInfo).
type FSAIInfo = afsai.Info

// FSAIConfig configures the FSAI preconditioners (Options.FSAI).
type FSAIConfig = afsai.Config

// IsDeviceError reports whether err comes from a device (out of device
// memory, a failed kernel) rather than from the input.
func IsDeviceError(err error) bool {
	var dev *gpu.Error
	return errors.As(err, &dev)
}
