package matfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/iopath"
)

// ReadMatrix reads a square sparse matrix in PETSc binary or Matrix Market
// coordinate format, told apart by content, not by file name: a PETSc matrix
// starts with its class id (1211216 as a big-endian int32), a Matrix Market
// file with the %%MatrixMarket banner. Collective; see ReadPETSc and ReadMTX.
// (A PETSc file with 64-bit indices, whose class id is an int64, goes to
// ReadPETSc too, which says that it is not supported.)
func ReadMatrix(c *comm.Comm, path string) (*dsmat.Rows, dsmat.Partition, error) {
	r, part, _, err := ReadMatrixStats(c, path)
	return r, part, err
}

// ReadStats is what a reader noticed in a file that it accepted.
type ReadStats struct {
	// Duplicates is the number of entries, over all ranks, that repeated
	// the row and column of an earlier entry and were summed into it (as
	// the Matrix Market format says): worth a note, since a file that
	// repeats entries by mistake reads without error.
	Duplicates int64
}

// ReadMatrixStats is ReadMatrix that also returns what the reader noticed.
func ReadMatrixStats(c *comm.Comm, path string) (*dsmat.Rows, dsmat.Partition, ReadStats, error) {
	petsc, err := isPETSc(path)
	if err = c.Agree(err); err != nil {
		return nil, dsmat.Partition{}, ReadStats{}, err
	}
	if petsc {
		return readPETSc(c, path)
	}
	return readMTX(c, path)
}

// isPETSc tells a PETSc binary matrix from a Matrix Market file by their
// first bytes, and fails for anything else.
func isPETSc(path string) (bool, error) {
	f, err := iopath.OpenInput(path)
	if err != nil {
		return false, fmt.Errorf("dsmat: %w", err)
	}
	defer f.Close()
	const banner = "%%MatrixMarket"
	head := make([]byte, len(banner))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("dsmat: read %s: %w", path, err)
	}
	head = head[:n]
	switch {
	case n >= 4 && binary.BigEndian.Uint32(head) == petscMatClassID,
		n >= 8 && binary.BigEndian.Uint64(head) == petscMatClassID:
		return true, nil
	case bytes.EqualFold(head, []byte(banner)):
		return false, nil
	}
	return false, fmt.Errorf("dsmat: read %s: unknown format: neither a PETSc binary matrix (class id %d) nor a Matrix Market file (%s banner)", path, petscMatClassID, banner)
}

// overflowedSum finds, in a stripe whose duplicate entries were summed, the
// first entry whose value is not finite: the readers refuse values that are
// not, so such an entry is a sum that overflowed. It returns its global row
// and column, 0-based, and its value; i is -1 if there is none. Called only
// when the reader summed duplicates.
func overflowedSum(r *dsmat.Rows) (i, j int64, v float64) {
	for li := range r.Count() {
		for k := r.RowPtr[li]; k < r.RowPtr[li+1]; k++ {
			if v := r.Val[k]; math.IsInf(v, 0) || math.IsNaN(v) {
				return r.First + int64(li), r.Col[k], v
			}
		}
	}
	return -1, -1, 0
}
