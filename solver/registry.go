package solver

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/bicgstab"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gmres"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/pcg"
	"github.com/fsai-dist/fsai-dist/precond"
	"github.com/fsai-dist/fsai-dist/spai"
	"github.com/fsai-dist/fsai-dist/twolevel"
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

// method is a registry entry of a Krylov method.
type method struct {
	// new allocates the method's work vectors for A, shaped like b, with
	// the solver's options.
	new func(A krylov.Operator, b *ddmat.Dense, opt Options) (Method, error)
	// spd: the method needs a symmetric positive definite matrix.
	spd bool
	// blocks: the method solves several right-hand sides at once.
	blocks bool
	// divTol is the method's default divergence tolerance
	// (krylov.Options.DivTol; 0 never).
	divTol float64
}

// methods maps a Method name to its entry.
var methods = map[string]method{
	// CG's residual norm may grow 1e5-fold and more on a solve that then
	// converges (it minimizes the A-norm of the error): no divergence test.
	"cg": {spd: true, blocks: true, new: func(A krylov.Operator, b *ddmat.Dense, opt Options) (Method, error) {
		if opt.CGSingleReduction {
			return asMethod(pcg.NewSingleReductionWorkspace(A, b))
		}
		return asMethod(pcg.NewWorkspace(A, b))
	}},
	"bicgstab": {divTol: krylov.DefaultDivTol, new: func(A krylov.Operator, b *ddmat.Dense, _ Options) (Method, error) {
		return asMethod(bicgstab.NewWorkspace(A, b))
	}},
	"gmres": {divTol: krylov.DefaultDivTol, new: func(A krylov.Operator, b *ddmat.Dense, opt Options) (Method, error) {
		return asMethod(gmres.NewWorkspace(A, b, opt.GMRESRestart))
	}},
}

// asMethod returns a constructor's work space as a Method: nil (not a nil
// pointer in the interface) on an error.
func asMethod[W Method](w W, err error) (Method, error) {
	if err != nil {
		return nil, err
	}
	return w, nil
}

// prec is a registry entry of a preconditioner.
type prec struct {
	// new sets the preconditioner up on the bound matrix op, with the
	// solver's options.
	new func(op *dsmat.Operator, opt Options) (krylov.Preconditioner, error)
	// spd: the preconditioner needs a symmetric positive definite matrix.
	spd bool
	// unsymmetric: the preconditioner is not symmetric, so a method that
	// needs an SPD one (CG) cannot use it.
	unsymmetric bool
	// anyDiagonal: the set-up takes any diagonal, zeros included, so
	// UpdateValues does not check it.
	anyDiagonal bool
	// coarseAuto: the coarse space joins the preconditioner under
	// Options.Coarse "auto", where the matrix has a geometry.
	coarseAuto bool
}

// precs maps a preconditioner name to its entry.
var precs = map[string]prec{
	"none": {new: func(*dsmat.Operator, Options) (krylov.Preconditioner, error) { return precond.None{}, nil }, anyDiagonal: true},
	"jacobi": {new: func(op *dsmat.Operator, opt Options) (krylov.Preconditioner, error) {
		if !MethodNeedsSPD(opt.Method) {
			return precond.NewJacobiNonzero(op.Matrix(), op.Backend())
		}
		return precond.NewJacobi(op.Matrix(), op.Backend())
	}},
	"afsai": {new: newFSAI, spd: true, coarseAuto: true},
	"fsai":  {new: newFSAI, spd: true, coarseAuto: true},
	"spai": {new: func(op *dsmat.Operator, opt Options) (krylov.Preconditioner, error) {
		return spai.NewFor(op, spaiConfig(op.Backend(), opt.SPAI, opt.SPAIOnDevice))
	}, unsymmetric: true, anyDiagonal: true},
}

// MethodNeedsSPD reports whether the Krylov method name needs a symmetric
// positive definite matrix (cg does; bicgstab and gmres do not).
func MethodNeedsSPD(name string) bool { return methods[name].spd }

// MethodSolvesBlocks reports whether the Krylov method name solves several
// right-hand sides at once (SolveMany with k > 1): cg does; bicgstab and
// gmres solve one at a time.
func MethodSolvesBlocks(name string) bool { return methods[name].blocks }

// PrecNeedsSPD reports whether the preconditioner name needs a symmetric
// positive definite matrix (afsai and fsai do; jacobi and none do not).
func PrecNeedsSPD(name string) bool { return precs[name].spd }

// PrecSymmetric reports whether the preconditioner name is symmetric, as
// CG needs: spai is not; afsai, fsai, jacobi and none are.
func PrecSymmetric(name string) bool { return !precs[name].unsymmetric }

// CheckPair refuses a method that needs a symmetric preconditioner (CG)
// with one that is not (spai); unknown names pass, for Options' check.
func CheckPair(method, prec string) error {
	if MethodNeedsSPD(method) && !PrecSymmetric(prec) {
		return fmt.Errorf("solver: preconditioner %s is not symmetric, which %s needs: use bicgstab or gmres", prec, method)
	}
	return nil
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

// SPAIInfo describes a SPAI preconditioner's set-up (Solver.SPAIInfo).
type SPAIInfo = spai.Info

// CoarseInfo describes a coarse space (Solver.CoarseInfo).
type CoarseInfo = twolevel.Info

// SPAIParams are the a priori pattern of the SPAI preconditioner
// (Options.SPAI).
type SPAIParams = spai.Params

// SPAIMaxK is the largest power SPAIParams.K takes.
const SPAIMaxK = spai.MaxK

// FSAIConfig configures the FSAI preconditioners (Options.FSAI).
type FSAIConfig = afsai.Config

// IsDeviceError reports whether err comes from a device (out of device
// memory, a failed kernel) rather than from the input.
func IsDeviceError(err error) bool {
	var dev *gpu.Error
	return errors.As(err, &dev)
}
