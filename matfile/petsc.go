package matfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/iopath"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// PETSc binary matrix files (MatView with PETSC_VIEWER_BINARY, 32-bit
// PetscInt) are big-endian:
//
//	int32   class id 1211216 (MAT_FILE_CLASSID)
//	int32   rows M, columns N, total entries nz
//	int32   row lengths [M]
//	int32   column indices [nz], 0-based, row by row
//	float64 values [nz]
//
// Further objects (a right-hand side vector, say) may follow; they are
// ignored. PETSc writes nz = 2^31-1 when the true count does not fit.
const (
	petscMatClassID = 1211216
	petscHeaderSize = 16
)

// ReadPETSc reads a square sparse matrix from a PETSc binary file.
// Collective: each rank reads, by offset, only the row lengths, column
// indices and values of its own stripe under dsmat.NewPartition(M, np), and
// returns that stripe with the partition. Columns come sorted from PETSc;
// rows that are not are sorted, with duplicates summed. On any error every
// rank returns an error: the rank that found it its own, the others
// comm.ErrPeer.
func ReadPETSc(c *comm.Comm, path string) (*dsmat.Rows, dsmat.Partition, error) {
	r, part, _, err := readPETSc(c, path)
	return r, part, err
}

func readPETSc(c *comm.Comm, path string) (*dsmat.Rows, dsmat.Partition, ReadStats, error) {
	var stats ReadStats
	f, n, nz, size, err := openPETSc(path)
	if err = c.Agree(err); err != nil {
		if f != nil {
			f.Close()
		}
		return nil, dsmat.Partition{}, stats, err
	}
	defer f.Close()

	part := dsmat.NewPartition(n, c.Size())
	first, last := part.Range(c.Rank())
	r, err := readPETScLengths(f, n, first, last)
	if err = c.Agree(petscError(path, err)); err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	before, err := comm.Exscan(c, r.NNZ())
	if err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	total, err := comm.AllreduceScalar(c, comm.Sum, r.NNZ())
	if err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	dups, err := readPETScEntries(f, r, nz, size, before, total)
	if err = c.Agree(petscError(path, err)); err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	if stats.Duplicates, err = comm.AllreduceScalar(c, comm.Sum, int64(dups)); err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	return r, part, stats, nil
}

// openPETSc opens a PETSc binary matrix file and checks its header.
func openPETSc(path string) (f *os.File, n, nz, size int64, err error) {
	if f, err = iopath.OpenInput(path); err != nil {
		return nil, 0, 0, 0, fmt.Errorf("dsmat: %w", err)
	}
	fi, err := f.Stat()
	if err == nil {
		size = fi.Size()
		n, nz, err = readPETScHeader(f, size)
	}
	if err != nil {
		f.Close()
		return nil, 0, 0, 0, petscError(path, err)
	}
	return f, n, nz, size, nil
}

// readPETScHeader checks the header of a PETSc binary matrix in f, a file
// of size bytes, and returns its dimension and its declared entry count.
func readPETScHeader(f io.ReaderAt, size int64) (n, nz int64, err error) {
	var h [4]int64
	if err = readBE(f, 0, h[:], 4, beInt32); err != nil {
		return 0, 0, err
	}
	switch {
	case h[0] == 0 && h[1] == petscMatClassID:
		return 0, 0, errors.New("PETSc file with 64-bit indices not supported; write it with 32-bit PetscInt")
	case h[0] != petscMatClassID:
		return 0, 0, fmt.Errorf("class id %d is not a PETSc matrix (%d)", h[0], petscMatClassID)
	case h[1] < 0 || h[2] < 0 || h[3] < 0:
		return 0, 0, fmt.Errorf("negative size in header: %d x %d with %d entries", h[1], h[2], h[3])
	case h[1] != h[2]:
		return 0, 0, fmt.Errorf("matrix is %d x %d, not square", h[1], h[2])
	case size < petscHeaderSize+4*h[1]:
		return 0, 0, fmt.Errorf("truncated: %d bytes, %d row lengths need %d", size, h[1], petscHeaderSize+4*h[1])
	}
	return h[1], h[3], nil
}

// readPETScLengths reads the row lengths of rows [first, last) of the n x n
// matrix in f into the row pointers of a stripe.
func readPETScLengths(f io.ReaderAt, n, first, last int64) (*dsmat.Rows, error) {
	r := &dsmat.Rows{N: n, First: first, RowPtr: make([]int64, last-first+1)}
	if err := readBE(f, petscHeaderSize+4*first, r.RowPtr[1:], 4, beInt32); err != nil {
		return nil, err
	}
	for i := range r.Count() {
		if r.RowPtr[i+1] < 0 || r.RowPtr[i+1] > n {
			return nil, fmt.Errorf("row %d has length %d, want 0..%d", first+int64(i), r.RowPtr[i+1], n)
		}
		r.RowPtr[i+1] += r.RowPtr[i]
	}
	return r, nil
}

// readPETScEntries reads the columns and values of stripe r, whose row
// pointers are set, from f (size bytes, nz entries declared in the header),
// where before entries of other stripes precede them and all stripes hold
// total; it checks them and sorts the rows, summing duplicates, whose number
// it returns.
func readPETScEntries(f io.ReaderAt, r *dsmat.Rows, nz, size, before, total int64) (dups int, err error) {
	colOff := petscHeaderSize + 4*r.N
	valOff := colOff + 4*total
	switch {
	case nz != total && (nz != math.MaxInt32 || total < math.MaxInt32):
		return 0, fmt.Errorf("row lengths add up to %d entries, the header says %d", total, nz)
	case total > size/12: // also keeps the offsets below from overflowing
		return 0, fmt.Errorf("truncated: %d bytes cannot hold %d entries of 12 bytes", size, total)
	case size < valOff+8*total:
		return 0, fmt.Errorf("truncated: %d bytes, a %d x %d matrix with %d entries needs %d", size, r.N, r.N, total, valOff+8*total)
	}
	r.Col, r.Val = make([]int64, r.NNZ()), make([]float64, r.NNZ())
	if err = readBE(f, colOff+4*before, r.Col, 4, beInt32); err != nil {
		return 0, err
	}
	if err = readBE(f, valOff+8*before, r.Val, 8, beFloat64); err != nil {
		return 0, err
	}
	if err = checkPETScRows(r); err != nil {
		return 0, err
	}
	if dups = r.Sort(); dups > 0 {
		if i, j, v := overflowedSum(r); i >= 0 {
			return 0, fmt.Errorf("row %d column %d: duplicate entries sum to %g, beyond the float64 range", i, j, v)
		}
	}
	return dups, nil
}

// checkPETScRows checks the columns and values read into a stripe, on all
// cores; the error is the first bad entry's.
func checkPETScRows(r *dsmat.Rows) error {
	return parallel.ForErr(r.Count(), func(_, lo, hi int) error {
		for i := lo; i < hi; i++ {
			for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
				if col := r.Col[k]; col < 0 || col >= r.N {
					return fmt.Errorf("row %d: column %d out of range [0,%d)", r.First+int64(i), col, r.N)
				}
				if v := r.Val[k]; math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("row %d column %d: value %v is not finite", r.First+int64(i), r.Col[k], v)
				}
			}
		}
		return nil
	})
}

// petscError puts the file name on a local error of the PETSc reader.
func petscError(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("dsmat: read %s: %w", path, err)
}

// readBE fills dst with items of width bytes read from f at off, converted
// by decode, on all cores. It reads in large chunks; a short file is an
// error.
func readBE[T int64 | float64](f io.ReaderAt, off int64, dst []T, width int, decode func([]byte) T) error {
	units := (len(dst) + beGrain - 1) / beGrain
	return parallel.ForErr(units, func(_, lo, hi int) error {
		lo, hi = lo*beGrain, min(hi*beGrain, len(dst))
		return readBERange(f, off+int64(lo*width), dst[lo:hi], width, decode)
	})
}

// beGrain is a unit of entries for parallel.For, whose least chunk, 64
// units, is the least share worth a core of its own (1 MiB of 4-byte
// entries).
const beGrain = 1 << 12

// readBERange is readBE on one core.
func readBERange[T int64 | float64](f io.ReaderAt, off int64, dst []T, width int, decode func([]byte) T) error {
	buf := make([]byte, min(len(dst)*width, atChunk))
	for done := 0; done < len(dst); {
		k := min(len(dst)-done, len(buf)/width)
		if _, err := f.ReadAt(buf[:k*width], off); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("truncated: the file ends before byte %d", off+int64(k*width))
			}
			return err
		}
		for i := range k {
			dst[done+i] = decode(buf[i*width:])
		}
		done += k
		off += int64(k * width)
	}
	return nil
}

func beInt32(b []byte) int64     { return int64(int32(binary.BigEndian.Uint32(b))) }
func beFloat64(b []byte) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b)) }

// WritePETSc writes a distributed matrix, whose stripe on this rank is r, as
// a PETSc binary file (32-bit indices) that ReadPETSc and PETSc's MatLoad
// read. Collective: the stripes must follow each other in rank order and
// cover all rows; every rank writes its own part of a temporary file, which
// becomes path only when all ranks succeeded (see WriteVector).
func WritePETSc(c *comm.Comm, path string, r *dsmat.Rows) error {
	count, local := int64(r.Count()), r.NNZ()
	first, err := comm.Exscan(c, count)
	if err != nil {
		return err
	}
	before, err := comm.Exscan(c, local)
	if err != nil {
		return err
	}
	totals := []int64{count, local}
	if err := comm.Allreduce(c, comm.Sum, totals); err != nil {
		return err
	}
	rows, total := totals[0], totals[1]
	switch {
	case r.First != first || rows != r.N:
		err = fmt.Errorf("dsmat: write %s: rank %d holds rows from %d of %d, but the stripes in rank order give %d of %d", path, c.Rank(), r.First, r.N, first, rows)
	case r.N > math.MaxInt32:
		err = fmt.Errorf("dsmat: write %s: %d rows do not fit PETSc's 32-bit indices", path, r.N)
	}
	colOff := petscHeaderSize + 4*r.N
	valOff := colOff + 4*total
	return writeShared(c, path, valOff+8*total, err, func(f *os.File) error {
		w := atWriter{f: f}
		if c.Rank() == 0 {
			for _, v := range []int64{petscMatClassID, r.N, r.N, min(total, math.MaxInt32)} {
				w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(v))
			}
		}
		w.seek(petscHeaderSize + 4*first)
		for i := range r.Count() {
			w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(r.RowPtr[i+1]-r.RowPtr[i]))
			w.grew()
		}
		w.seek(colOff + 4*before)
		for _, col := range r.Col {
			w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(col))
			w.grew()
		}
		w.seek(valOff + 8*before)
		for _, v := range r.Val {
			w.buf = binary.BigEndian.AppendUint64(w.buf, math.Float64bits(v))
			w.grew()
		}
		return w.flush()
	})
}
