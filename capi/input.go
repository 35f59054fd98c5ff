package main

import (
	"errors"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/solver"
)

// solveError gives an error of Solver.Solve or SolveMany its return code:
// FSAI_ERR_INPUT for input the solver refused (NaN or Inf in b or x),
// FSAI_ERR_PEER on the ranks whose input was fine, FSAI_ERR_FAILURE for
// the rest (MPI, device).
func solveError(err error) error {
	if errors.Is(err, solver.ErrInput) || errors.Is(err, comm.ErrPeer) {
		return err
	}
	return failure(err)
}
