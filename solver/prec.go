package solver

import (
	"errors"
	"fmt"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/precond"
	"github.com/fsai-dist/fsai-dist/twolevel"
)

// newPrec sets up the preconditioner Options.Prec names (the registry
// precs) on the matrix's current values, with the coarse space where
// Options.Coarse asks for it. On an error it returns a nil Preconditioner
// (not an interface holding a nil pointer, which Free would call).
// Collective.
func (s *Solver) newPrec() (krylov.Preconditioner, error) {
	coarse, err := s.coarse()
	if err != nil {
		return nil, err
	}
	p, err := precs[s.opt.Prec].new(s.op, s.opt)
	if err != nil {
		return nil, err
	}
	if !coarse {
		return p, nil
	}
	b, err := twolevel.New(s.op, p, *s.m.geom, twolevel.Params{Boxes: s.opt.CoarseBoxes})
	if err != nil {
		p.Free()
		return nil, err
	}
	return b, nil
}

// coarse reports whether the preconditioner gets the coarse space
// (package twolevel): always with Options.Coarse "on", which needs a
// matrix with a geometry and a method and preconditioner that assume an
// SPD matrix; with "auto", where those hold, the geometry has three
// unknowns a node (displacements, whose rigid-body modes pay for
// themselves; docs/coarse.md) and the preconditioner is afsai or fsai.
func (s *Solver) coarse() (bool, error) {
	spd := NeedsSPD(s.opt.Method, s.opt.Prec)
	switch s.opt.Coarse {
	case "off":
		return false, nil
	case "on":
		if s.m.geom == nil {
			return false, errors.New("solver: coarse space: the matrix has no geometry (Matrix.SetGeometry; on the command line -problem or -coordinates)")
		}
		if !spd {
			return false, fmt.Errorf("solver: coarse space: it needs a symmetric positive definite matrix, which -solver %s with -prec %s does not assume", s.opt.Method, s.opt.Prec)
		}
		return true, nil
	}
	return s.m.geom != nil && s.m.geom.BlockSize == 3 && spd && precs[s.opt.Prec].coarseAuto, nil
}

// updatePrec recomputes the preconditioner's values for the matrix's
// current values: an FSAI preconditioner on its pattern (afsai.Updater),
// none not at all, any other by a new set-up; a coarse space's A Z and
// E^-1 anew on its geometry (twolevel.Preconditioner.Refresh). Collective.
func (s *Solver) updatePrec() error {
	b, coarse := s.prec.(*twolevel.Preconditioner)
	var err error
	switch p := s.inner().(type) {
	case *afsai.Preconditioner:
		if s.updater == nil {
			s.updater = afsai.NewUpdater(p, s.m.a, fsaiConfig(p.G.Backend(), s.opt.FSAI))
		}
		err = s.updater.Update()
	case precond.None:
	default:
		return s.rebuild()
	}
	if err == nil && coarse {
		err = b.Refresh(s.op)
	}
	return err
}

// inner is the one-level preconditioner: the solver's, or the one its
// coarse space wraps.
func (s *Solver) inner() krylov.Preconditioner {
	if b, ok := s.prec.(*twolevel.Preconditioner); ok {
		return b.Inner()
	}
	return s.prec
}
