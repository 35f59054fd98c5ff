package matfile

import (
	"bytes"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/dsmat"
)

// The fuzz targets drive the readers' per-rank steps serially, on bytes in
// memory, with ranks simulated by splitting the work as the collective
// readers do. Their seed corpus is testdata/fuzz/<target>; scripts/test.sh
// fuzzes each for a few seconds.

// FuzzReadMTX parses a Matrix Market coordinate file whole and in three
// shares, as three ranks do: both must agree on the lines, the entries and
// the first error, and a file that holds its declared entries and passes
// the size checks must assemble into valid rows, with no more entries than
// ReadMatrixHeader counts from the file's length. The targets allocate what
// the readers allocate, so a size line whose claim the checks let through
// to an allocation out of proportion to the input (seeds huge-*) runs out
// of memory here.
func FuzzReadMTX(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := readMMHeader("fuzz.mtx", bytes.NewReader(data))
		if err == nil {
			err = checkCoordinateHeader("fuzz.mtx", h, 1)
		}
		if err != nil {
			return
		}
		size := int64(len(data))
		if h.dataStart > size {
			t.Fatalf("data section starts at %d of %d bytes", h.dataStart, size)
		}
		ts, entries, lines, failed, err := parseCoordinates(bytes.NewReader(data), h, h.dataStart, size, size)

		var ts3 []dsmat.Triplet
		var entries3, lines3 int64
		failed3, err3 := int64(-1), error(nil)
		for rank := range 3 {
			lo, hi := mmShare(h.dataStart, size, rank, 3)
			tsr, er, lr, fr, errr := parseCoordinates(bytes.NewReader(data), h, lo, hi, size)
			if errr != nil && err3 == nil {
				failed3, err3 = lines3+fr, errr
			}
			ts3 = append(ts3, tsr...)
			entries3 += er
			lines3 += lr
		}
		switch {
		case lines3 != lines:
			t.Fatalf("%d lines whole, %d in shares", lines, lines3)
		case (err == nil) != (err3 == nil) || err != nil && (failed3 != failed || err.Error() != err3.Error()):
			t.Fatalf("whole: line %d %v; shares: line %d %v", failed, err, failed3, err3)
		case err != nil:
			return
		case entries3 != entries || !slices.Equal(ts, ts3):
			t.Fatalf("whole: %d entries %v; shares: %d entries %v", entries, ts, entries3, ts3)
		case entries > mmMaxLines(h.dataStart, size, 4):
			t.Fatalf("%d entries in %d bytes, more than ReadMatrixHeader counts", entries, size-h.dataStart)
		}
		if entries != h.size[2] || checkFilled("fuzz.mtx", h, size) != nil {
			return
		}
		if n := h.size[0]; n > 2*size {
			t.Fatalf("%d rows accepted from %d bytes", n, size)
		}
		r, _, err := dsmat.AssembleRows(h.size[0], 0, int(h.size[0]), ts)
		if err == nil {
			err = r.Check()
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzReadPETSc reads a PETSc binary matrix whole and as two stripes, as
// two ranks do: both must succeed or fail together and give the same rows,
// which must be valid and no more than ReadMatrixHeader counts.
func FuzzReadPETSc(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, size := bytes.NewReader(data), int64(len(data))
		n, nz, err := readPETScHeader(rd, size)
		if err != nil {
			return
		}
		if n > size {
			t.Fatalf("%d rows accepted from %d bytes", n, size)
		}
		// read reads the stripes split at the given rows.
		read := func(split ...int64) ([]*dsmat.Rows, error) {
			bounds := append(append([]int64{0}, split...), n)
			stripes := make([]*dsmat.Rows, len(bounds)-1)
			var total int64
			for k := range stripes {
				r, err := readPETScLengths(rd, n, bounds[k], bounds[k+1])
				if err != nil {
					return nil, err
				}
				stripes[k] = r
				total += r.NNZ()
			}
			var before int64
			for _, r := range stripes {
				stored := r.NNZ() // before duplicates are summed
				if _, err := readPETScEntries(rd, r, nz, size, before, total); err != nil {
					return nil, err
				}
				before += stored
			}
			return stripes, nil
		}
		whole, err := read()
		halves, err2 := read(n / 2)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("whole: %v; halves: %v", err, err2)
		}
		if err != nil {
			return
		}
		w := whole[0]
		if err := w.Check(); err != nil {
			t.Fatal(err)
		}
		if w.NNZ() > petscEntries(n, nz, size) {
			t.Fatalf("%d entries read, more than ReadMatrixHeader counts", w.NNZ())
		}
		var col []int64
		var val []float64
		for _, r := range halves {
			col, val = append(col, r.Col...), append(val, r.Val...)
		}
		if !slices.Equal(w.Col, col) || !slices.Equal(w.Val, val) {
			t.Fatalf("whole: %v %v; halves: %v %v", w.Col, w.Val, col, val)
		}
	})
}
