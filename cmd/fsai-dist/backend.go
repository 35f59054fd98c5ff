package main

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/solver"
)

// openBackend opens the backend -backend names (solver.OpenBackend: one
// rank per GPU by node-local rank). When auto falls back to the CPU it says
// why in the log.
func openBackend(c *comm.Comm, opt solver.Options, log *zap.Logger) (backend.Backend, error) {
	be, why, err := solver.OpenBackend(c, opt.BackendOptions())
	if err != nil {
		return nil, fmt.Errorf("flag -backend %s: %w", opt.Backend, err)
	}
	if why != "" {
		log.Info("backend auto: using the CPU", zap.String("why", why))
	}
	return be, nil
}
