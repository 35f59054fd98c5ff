package solver

import (
	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// newPrec sets up the preconditioner Options.Prec names on the matrix's
// current values. On an error it returns a nil Preconditioner (not an
// interface holding a nil pointer, which Free would call). Collective.
func (s *Solver) newPrec() (pcg.Preconditioner, error) {
	var (
		p   pcg.Preconditioner = pcg.None{}
		err error
	)
	switch s.opt.Prec {
	case "afsai", "fsai":
		p, err = afsai.NewFor(s.op, s.opt.FSAI)
	case "jacobi":
		p, err = pcg.NewJacobi(s.m.a, s.be)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
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
		return s.rebuild() // a new diagonal: nothing to keep
	}
	return nil
}
