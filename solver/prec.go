package solver

import (
	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// newPrec sets up the preconditioner Options.Prec names on the matrix's
// current values. Collective.
func (s *Solver) newPrec() (pcg.Preconditioner, error) {
	switch s.opt.Prec {
	case "afsai", "fsai":
		return afsai.NewFor(s.op, s.opt.FSAI)
	case "jacobi":
		return pcg.NewJacobi(s.m.a, s.be)
	}
	return pcg.None{}, nil
}

// updatePrec recomputes the preconditioner's values for the matrix's
// current values on its pattern. Collective.
func (s *Solver) updatePrec() error {
	switch p := s.prec.(type) {
	case *afsai.Preconditioner:
		if s.updater == nil {
			s.updater = afsai.NewUpdater(p, s.m.a, s.opt.FSAI)
		}
		return s.updater.Update()
	case *pcg.Jacobi:
		return s.Rebuild() // a new diagonal: nothing to keep
	}
	return nil
}
