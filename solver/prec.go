package solver

import (
	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/precond"
)

// newPrec sets up the preconditioner Options.Prec names (the registry
// precs) on the matrix's current values. On an error it returns a nil
// Preconditioner (not an interface holding a nil pointer, which Free would
// call). Collective.
func (s *Solver) newPrec() (krylov.Preconditioner, error) {
	p, err := precs[s.opt.Prec].new(s.op, s.opt)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// updatePrec recomputes the preconditioner's values for the matrix's
// current values: an FSAI preconditioner on its pattern (afsai.Updater),
// none not at all, any other by a new set-up. Collective.
func (s *Solver) updatePrec() error {
	switch p := s.prec.(type) {
	case *afsai.Preconditioner:
		if s.updater == nil {
			s.updater = afsai.NewUpdater(p, s.m.a, s.opt.FSAI)
		}
		return s.updater.Update()
	case precond.None:
		return nil
	}
	return s.rebuild()
}
