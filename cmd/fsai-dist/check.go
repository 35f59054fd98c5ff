package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/iopath"
	"github.com/fsai-dist/fsai-dist/problem"
	"github.com/fsai-dist/fsai-dist/solver"
)

// symmetryTol is the tolerance of the symmetry check, relative to
// sqrt(|a_ii a_jj|) (see dsmat.CheckSymmetric): loose enough for a matrix
// assembled or stored in single precision, tight enough to catch every
// matrix that is not meant to be symmetric.
const symmetryTol = 1e-6

// checkRanks refuses to spread n rows over np ranks when some rank would
// get none, or more than its CSR blocks can index. Every rank decides the
// same, so all fail together without a collective. what names the matrix.
func checkRanks(np int, n int64, what string) error {
	if int64(np) > n {
		return fmt.Errorf("%s: %d ranks for %d rows: use at most one rank per row", what, np, n)
	}
	if per := (n + int64(np) - 1) / int64(np); per > math.MaxInt32 {
		return fmt.Errorf("%s: %d rows on %d ranks are %d rows a rank, more than the %d a rank can hold: use more ranks",
			what, n, np, per, math.MaxInt32)
	}
	return nil
}

// checkMatrix refuses, before any set-up, a matrix read from a file with an
// empty row (bad input) and, when the method or the preconditioner needs an
// SPD matrix (solver.NeedsSPD), one that cannot be SPD: a diagonal entry
// that is not positive or, unless -check-symmetry=false, entries that are
// not symmetric (both exit status 3). Row and column numbers in the
// messages count from 1. Collective.
func checkMatrix(c *comm.Comm, o *options, part dsmat.Partition, rows *dsmat.Rows) error {
	var err error
	if i := rows.EmptyRow(); i >= 0 {
		err = fmt.Errorf("matrix %s: row %d has no entries: the matrix is singular", o.matrix, i+1)
	}
	if err := c.Agree(err); err != nil {
		return badInput(err)
	}
	if !solver.NeedsSPD(o.solver.Method, o.solver.Prec) {
		return nil
	}
	for k, d := range rows.Diagonal() {
		if !(d > 0) {
			i := rows.First + int64(k) + 1
			err = fmt.Errorf("matrix %s: diagonal entry A(%d,%d) = %g is not positive: the matrix is not SPD (%s)", o.matrix, i, i, d, spdUsers(o))
			break
		}
	}
	if err := c.Agree(err); err != nil {
		return numerical(err)
	}
	if !o.checkSymmetry {
		return nil
	}
	err = dsmat.CheckSymmetric(c, part, rows, symmetryTol)
	if err != nil && !errors.Is(err, comm.ErrPeer) {
		err = fmt.Errorf("matrix %s: %w; %s; -check-symmetry=false skips this check", o.matrix, err, spdUsers(o))
	}
	return numerical(err)
}

// checkProblem refuses a built-in problem whose matrix is not symmetric
// (convdiff) when the method or the preconditioner needs an SPD matrix
// (exit status 3, as for a matrix file). Every rank decides the same, so
// all fail together without a collective; a spec that does not parse is
// left to load, which says why.
func checkProblem(o *options) error {
	if o.matrix != "" || !solver.NeedsSPD(o.solver.Method, o.solver.Prec) {
		return nil
	}
	spec, err := problem.Parse(o.problem)
	if err != nil || spec.Symmetric() {
		return nil
	}
	return numerical(fmt.Errorf("problem %s: the matrix is not symmetric; %s", o.problem, spdUsers(o)))
}

// spdUsers names the choices of o that need an SPD matrix, for the
// messages of checkMatrix: "-solver cg and -prec afsai need an SPD matrix".
func spdUsers(o *options) string {
	var who []string
	if solver.NeedsSPD(o.solver.Method, "none") {
		who = append(who, "-solver "+o.solver.Method)
	}
	if solver.NeedsSPD("", o.solver.Prec) {
		who = append(who, "-prec "+o.solver.Prec)
	}
	if len(who) == 1 {
		return who[0] + " needs an SPD matrix"
	}
	return strings.Join(who, " and ") + " need an SPD matrix"
}

// checkPaths checks every file the run reads and writes before any work
// (see iopath.Check): rank 0 checks, all ranks agree. -out may name the
// -x0 file: resuming in place replaces the initial guess with the newer
// iterate, and only once it is complete. Collective.
func checkPaths(c *comm.Comm, o *options) error {
	var err error
	if c.Rank() == 0 {
		inputs := []iopath.Path{{Flag: "-matrix", Name: o.matrix}, {Flag: "-rhs", Name: o.rhs}, {Flag: "-x0", Name: o.x0}, {Flag: "-coordinates", Name: o.coordinates}}
		outputs := []iopath.Path{{Flag: "-out", Name: o.out}, {Flag: "-report", Name: o.report}, {Flag: "-write-matrix", Name: o.writeMatrix}}
		for _, p := range []iopath.Path{{Flag: "-cpuprofile", Name: o.cpuProfile}, {Flag: "-trace", Name: o.trace}} {
			if p.Name != "" {
				outputs = append(outputs, iopath.Path{Flag: p.Flag, Name: profileName(p.Name, 0)})
			}
		}
		err = iopath.Check(inputs, outputs, "-x0")
	}
	return badInput(c.Agree(err))
}
