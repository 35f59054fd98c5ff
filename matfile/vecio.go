package matfile

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/atomicfile"
)

// ReadVector reads a vector from a Matrix Market array file ("%%MatrixMarket
// matrix array real general", size line "n 1", one value per line) and
// returns this rank's part under part, whose N must equal n. Collective: each
// rank parses its share of the file's bytes and the values travel to their
// owners. Only single-column files are accepted. On any error every rank
// returns an error (the others comm.ErrPeer).
func ReadVector(c *comm.Comm, path string, part dsmat.Partition) ([]float64, error) {
	local, _, err := readArray(c, path, part, true)
	return local, err
}

// ReadVectors reads an n x k Matrix Market array (columns one after the
// other, as the format stores them) and returns this rank's rows of it as a
// row-major block of k columns (entry (i, c) at i*k+c, the layout of the
// backends' blocks), and k. Collective, like ReadVector.
func ReadVectors(c *comm.Comm, path string, part dsmat.Partition) (local []float64, k int, err error) {
	return readArray(c, path, part, false)
}

func readArray(c *comm.Comm, path string, part dsmat.Partition, single bool) ([]float64, int, error) {
	f, h, size, err := openMM(c, path, func(h *mmHeader) error {
		if err := checkArrayHeader(path, h, single); err != nil {
			return err
		}
		if h.size[0] != part.N() {
			return mmLineError(path, h.sizeLine, fmt.Errorf("vector has %d rows, the matrix has %d", h.size[0], part.N()))
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	k := h.size[1]
	total := part.N() * k

	lo, hi := mmShare(h.dataStart, size, c.Rank(), c.Size())
	vals := make([]float64, 0, mmEntryEstimate(total, lo, hi, h.dataStart, size, false))
	lines, failed, err := scanLines(f, h.dataStart, lo, hi, size, func(line []byte) error {
		fld, rest := mmField(line)
		if fld == nil || fld[0] == '%' {
			return nil
		}
		v, err := mmValue(fld)
		if err != nil {
			return err
		}
		vals = append(vals, v)
		return mmEnd(rest)
	})
	if err := agreeScan(c, path, h, lines, failed, err); err != nil {
		return nil, 0, err
	}
	n := int64(len(vals))
	first, err := comm.Exscan(c, n)
	if err != nil {
		return nil, 0, err
	}
	got, err := comm.AllreduceScalar(c, comm.Sum, n)
	if err == nil && got != total {
		err = mmLineError(path, h.sizeLine, fmt.Errorf("size line declares %d values, the file holds %d", total, got))
	}
	if err != nil {
		return nil, 0, err
	}
	// Column by column: this rank's values of column j are a run of it,
	// and the runs of all ranks tile the column in rank order.
	cols := int(k)
	local := make([]float64, part.Size(c.Rank())*cols)
	for j := range int64(k) {
		lo, hi := max(first, j*part.N()), min(first+n, (j+1)*part.N())
		var run []float64
		if lo < hi {
			run = vals[lo-first : hi-first]
		}
		col, err := routeRun(c, part, lo-j*part.N(), run)
		if err != nil {
			return nil, 0, err
		}
		for i, v := range col {
			local[i*cols+int(j)] = v
		}
	}
	return local, cols, nil
}

// checkArrayHeader accepts the header of a Matrix Market array of real
// vectors: one column if single, else one or more.
func checkArrayHeader(path string, h *mmHeader, single bool) error {
	if h.format != "array" || h.symmetry != "general" {
		return mmLineError(path, 1, fmt.Errorf("%s %s file is not a vector, want \"array real general\"", h.format, h.symmetry))
	}
	if single && h.size[1] != 1 {
		return mmLineError(path, h.sizeLine, fmt.Errorf("array has %d columns; only single-column vectors (n x 1) are supported", h.size[1]))
	}
	if h.size[1] < 1 {
		return mmLineError(path, h.sizeLine, fmt.Errorf("array has %d columns; need at least one", h.size[1]))
	}
	return nil
}

// routeRun sends the values with global indices [first, first+len(vals)) to
// the ranks that own them under part and returns this rank's part. The runs
// of all ranks must tile [0, part.N()) in rank order. Collective.
func routeRun(c *comm.Comm, part dsmat.Partition, first int64, vals []float64) ([]float64, error) {
	np := c.Size()
	last := first + int64(len(vals))
	sendN, recvN := make([]int64, np), make([]int64, np)
	for p := 0; p < np; p++ {
		lo, hi := part.Range(p)
		sendN[p] = max(0, min(hi, last)-max(lo, first))
	}
	if err := comm.Alltoall(c, sendN, recvN); err != nil {
		return nil, fmt.Errorf("dsmat: route vector: %w", err)
	}
	sendCounts, recvCounts := make([]int, np), make([]int, np)
	for p := range np {
		sendCounts[p], recvCounts[p] = int(sendN[p]), int(recvN[p])
	}
	local := make([]float64, part.Size(c.Rank()))
	if err := comm.Alltoallv(c, vals, sendCounts, local, recvCounts); err != nil {
		return nil, fmt.Errorf("dsmat: route vector: %w", err)
	}
	return local, nil
}

// vecLineWidth is the width of a value line that WriteVector writes: the
// longest shortest-round-trip float64 ("-2.2250738585072014e-308", 24
// bytes) and the newline. Fixed-width lines let every rank compute where its
// values go in the file.
const vecLineWidth = 25

// WriteVector writes a distributed vector, whose part on this rank is local,
// as a Matrix Market array file that ReadVector reads back exactly. Collective:
// every rank writes its own lines into a temporary file beside path, and
// path appears (by rename) only when all ranks have succeeded, so a failed or
// killed job never leaves a truncated file at path (a killed one may leave
// the hidden temporary file). Values are written in the
// shortest form that reads back exactly, padded with spaces to fixed-width
// lines. NaN and infinite values are an error. path must lie on a file
// system that all ranks share.
func WriteVector(c *comm.Comm, path string, part dsmat.Partition, local []float64) error {
	return WriteVectors(c, path, part, local, 1)
}

// WriteVectors writes k distributed vectors, this rank's rows of which are
// the row-major block local (entry (i, c) at i*k+c), as an n x k Matrix
// Market array that ReadVectors reads back exactly. Collective and atomic,
// like WriteVector.
func WriteVectors(c *comm.Comm, path string, part dsmat.Partition, local []float64, k int) error {
	rank := c.Rank()
	rows := part.Size(rank)
	var err error
	if k < 1 || len(local) != rows*k {
		err = fmt.Errorf("dsmat: write %s: rank %d holds %d values, the partition gives it %d rows of %d columns", path, rank, len(local), rows, k)
	}
	first, _ := part.Range(rank)
	for e, v := range local {
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			where := fmt.Sprintf("entry %d", first+int64(e/k))
			if k > 1 {
				where += fmt.Sprintf(" of column %d", e%k+1)
			}
			err = fmt.Errorf("dsmat: write %s: %s is %v", path, where, v)
		}
	}
	header := fmt.Sprintf("%%%%MatrixMarket matrix array real general\n%d %d\n", part.N(), k)
	size := int64(len(header)) + vecLineWidth*part.N()*int64(k)
	return writeShared(c, path, size, err, func(f *os.File) error {
		w := atWriter{f: f}
		if rank == 0 {
			w.buf = append(w.buf, header...)
		}
		for col := range k {
			w.seek(int64(len(header)) + vecLineWidth*(int64(col)*part.N()+first))
			for i := range rows {
				n := len(w.buf)
				w.buf = strconv.AppendFloat(w.buf, local[i*k+col], 'g', -1, 64)
				for len(w.buf) < n+vecLineWidth-1 {
					w.buf = append(w.buf, ' ')
				}
				w.buf = append(w.buf, '\n')
				w.grew()
			}
		}
		return w.flush()
	})
}

// writeShared writes a file of size bytes whose parts the ranks fill in
// concurrently, atomically: rank 0 creates a temporary file beside path, every
// rank calls write on it (writing at offsets), and rank 0 renames it to path
// only when all ranks succeeded; otherwise it removes it. A rank passes a
// non-nil err to fail the write before anything is written. Collective; all
// ranks return an error if one fails.
func writeShared(c *comm.Comm, path string, size int64, err error, write func(f *os.File) error) error {
	var tmp *atomicfile.File
	if c.Rank() == 0 && err == nil {
		tmp, err = createTemp(path, size)
	}
	if err = c.Agree(err); err != nil {
		tmp.Discard()
		return err
	}
	var name []byte
	if tmp != nil {
		name = []byte(tmp.Name())
	}
	if name, err = bcastBytes(c, name); err == nil {
		var own *os.File
		if tmp != nil {
			own = tmp.File
		}
		err = writeInto(string(name), own, write)
		if err != nil {
			err = fmt.Errorf("dsmat: write %s: %w", path, err)
		}
	}
	if err = c.Agree(err); err != nil {
		tmp.Discard()
		return err
	}
	if tmp != nil {
		err = tmp.Commit()
	}
	return c.Agree(err)
}

// createTemp creates path's output (see atomicfile.Create): a temporary
// file of size bytes in the directory of path, or path itself when it is a
// character device, which is written in place.
func createTemp(path string, size int64) (*atomicfile.File, error) {
	tmp, err := atomicfile.Create(path)
	if err == nil && !tmp.InPlace() {
		if err = tmp.Truncate(size); err != nil {
			tmp.Discard()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("dsmat: write %s: %w", path, err)
	}
	return tmp, nil
}

// writeInto calls write on the output: rank 0's own handle own, or on
// other ranks (own nil) the file name opened for writing. It syncs the data
// of a regular file so that the renamed file is complete.
func writeInto(name string, own *os.File, write func(f *os.File) error) error {
	f := own
	if f == nil {
		var err error
		if f, err = os.OpenFile(name, os.O_WRONLY, 0); err != nil {
			return err
		}
		defer f.Close()
	}
	if err := write(f); err != nil {
		return err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return err // a device has nothing to sync
	}
	return f.Sync()
}

// bcastBytes broadcasts rank 0's b to all ranks.
func bcastBytes(c *comm.Comm, b []byte) ([]byte, error) {
	n := []int64{int64(len(b))}
	if err := comm.Bcast(c, n, 0); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		b = make([]byte, n[0])
	}
	if err := comm.Bcast(c, b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// atWriter buffers bytes that callers append to buf and writes them at
// increasing offsets of a file, in large chunks.
type atWriter struct {
	f   *os.File
	off int64
	buf []byte
	err error
}

const atChunk = 1 << 20

// grew flushes buf once it holds a chunk.
func (w *atWriter) grew() {
	if len(w.buf) >= atChunk {
		w.flush()
	}
}

// seek flushes buf and moves to offset off.
func (w *atWriter) seek(off int64) {
	w.flush()
	w.off = off
}

// flush writes buf and returns the first error of any write so far.
func (w *atWriter) flush() error {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.f.WriteAt(w.buf, w.off)
		w.off += int64(len(w.buf))
	}
	w.buf = w.buf[:0]
	return w.err
}
