package matfile

import (
	"math"

	"github.com/fsai-dist/fsai-dist/comm"
)

// MatrixHeader is what the header of a matrix file says of the matrix's
// size, checked against the file's length.
type MatrixHeader struct {
	// N is the number of rows, and of columns.
	N int64
	// NNZ is the number of entries the file stores: the count its header
	// declares, or, where that is more, the most that the file's bytes can
	// hold (a line of 4 bytes each in Matrix Market, 12 bytes each in
	// PETSc), since the readers refuse a larger claim before allocating
	// for it.
	NNZ int64
	// Symmetric is set for a symmetric Matrix Market file, which stores
	// the lower triangle: each off-diagonal entry stands for two.
	Symmetric bool
	// PETSc is set for a PETSc binary file, which the reader reads
	// straight into the stripe; a Matrix Market file's entries are
	// collected as dsmat.Triplet values and exchanged before.
	PETSc bool
}

// ReadMatrixHeader reads only the header of a matrix file, of either
// format, and refuses it as ReadMatrix would before reading the entries: a
// matrix that is not square or sparse, more rows than c.Size() ranks can
// hold, more rows than the file's length or entries allow. It lets a caller
// weigh what reading the file would take before doing it. Collective.
func ReadMatrixHeader(c *comm.Comm, path string) (MatrixHeader, error) {
	h, err := readMatrixHeader(path, c.Size())
	return h, c.Agree(err)
}

func readMatrixHeader(path string, np int) (MatrixHeader, error) {
	petsc, err := isPETSc(path)
	if err != nil {
		return MatrixHeader{}, err
	}
	if petsc {
		f, n, nz, size, err := openPETSc(path)
		if err != nil {
			return MatrixHeader{}, err
		}
		f.Close()
		return MatrixHeader{N: n, NNZ: petscEntries(n, nz, size), PETSc: true}, nil
	}
	f, h, size, err := openMMLocal(path, func(h *mmHeader) error { return checkCoordinateHeader(path, h, np) })
	if err != nil {
		return MatrixHeader{}, err
	}
	f.Close()
	if err := checkFilled(path, h, size); err != nil {
		return MatrixHeader{}, err
	}
	return MatrixHeader{N: h.size[0], NNZ: min(h.size[2], mmMaxLines(h.dataStart, size, 4)),
		Symmetric: h.symmetry == "symmetric"}, nil
}

// ReadVectorsHeader reads only the header of a Matrix Market array file
// and returns its rows n and columns k, refused as ReadVectors would refuse
// them before reading the values (but for n, which ReadVectors compares
// with the matrix). Where n x k values are more than the file's bytes can
// hold (2 bytes a line), k is cut to what they can: ReadVectors refuses a
// larger claim before allocating for it. Collective.
func ReadVectorsHeader(c *comm.Comm, path string) (n, k int64, err error) {
	f, h, size, err := openMM(c, path, func(h *mmHeader) error { return checkArrayHeader(path, h, false) })
	if err != nil {
		return 0, 0, err
	}
	f.Close()
	n, k = h.size[0], h.size[1]
	if n > 0 {
		k = min(k, mmMaxLines(h.dataStart, size, 2)/n)
	}
	return n, k, nil
}

// petscEntries is the most entries that a PETSc file of size bytes holds
// whose header (checked by readPETScHeader) declares n rows and nz
// entries: nz, or what the bytes after the row lengths can hold at 12
// bytes an entry where less, or where nz is PETSc's 2^31-1, which means at
// least as many.
func petscEntries(n, nz, size int64) int64 {
	room := (size - petscHeaderSize - 4*n) / 12
	if nz == math.MaxInt32 {
		return room
	}
	return min(nz, room)
}
