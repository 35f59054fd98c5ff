package main

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/atomicfile"
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

// checkMatrix refuses, before any set-up, a matrix read from a file that
// cannot be symmetric positive definite: with an empty row (bad input), a
// diagonal entry that is not positive or, unless -check-symmetry=false,
// entries that are not symmetric (both exit status 3). Row and column
// numbers in the messages count from 1. Collective.
func checkMatrix(c *comm.Comm, o *options, part dsmat.Partition, rows *dsmat.Rows) error {
	var err error
	if i := rows.EmptyRow(); i >= 0 {
		err = fmt.Errorf("matrix %s: row %d has no entries: the matrix is singular", o.matrix, i+1)
	}
	if err := c.Agree(err); err != nil {
		return badInput(err)
	}
	for k, d := range rows.Diagonal() {
		if !(d > 0) {
			i := rows.First + int64(k) + 1
			err = fmt.Errorf("matrix %s: diagonal entry A(%d,%d) = %g is not positive: the matrix is not SPD", o.matrix, i, i, d)
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
		err = fmt.Errorf("matrix %s: %w; -check-symmetry=false skips this check", o.matrix, err)
	}
	return numerical(err)
}

// checkOutputs makes sure, before any work, that -out and -report can be
// written: rank 0 creates and removes a temporary file beside each, so that
// a long solve does not end in a file it cannot write. Collective.
func checkOutputs(c *comm.Comm, o *options) error {
	var err error
	for _, p := range []struct{ flag, path string }{{"-out", o.out}, {"-report", o.report}} {
		if p.path == "" || c.Rank() != 0 || err != nil {
			continue
		}
		var f *os.File
		if f, err = atomicfile.Create(p.path); err == nil {
			f.Close()
			err = os.Remove(f.Name())
		}
		if err != nil {
			err = fmt.Errorf("flag %s: cannot write beside %s: %w", p.flag, p.path, err)
		}
	}
	return badInput(c.Agree(err))
}
