package matfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/iopath"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Matrix Market files are read in parallel: every rank reads the short
// header itself, then parses only the lines that begin in its equal share of
// the bytes of the data section, so no rank reads the whole file.

// ReadMTX reads a square sparse matrix from a Matrix Market coordinate file
// (field real, integer or pattern; symmetry general or symmetric). Collective:
// each rank parses its share of the file, sends the entries to the owners of
// their rows under dsmat.NewPartition(n, np) and returns its stripe with that
// partition. Duplicate entries are summed (ReadMatrixStats counts them);
// pattern entries are 1. A symmetric file must store the lower triangle
// only, and each off-diagonal entry (i,j) also gives (j,i). On any error
// every rank returns an error: the rank that found it its own, naming the
// file and line, the others comm.ErrPeer.
func ReadMTX(c *comm.Comm, path string) (*dsmat.Rows, dsmat.Partition, error) {
	r, part, _, err := readMTX(c, path)
	return r, part, err
}

func readMTX(c *comm.Comm, path string) (*dsmat.Rows, dsmat.Partition, ReadStats, error) {
	var stats ReadStats
	f, h, size, err := openMM(c, path, func(h *mmHeader) error { return checkCoordinateHeader(path, h, c.Size()) })
	if err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	defer f.Close()

	n, declared := h.size[0], h.size[2]
	lo, hi := mmShare(h.dataStart, size, c.Rank(), c.Size())
	ts, entries, lines, failed, err := parseCoordinates(f, h, lo, hi, size)
	if err := agreeScan(c, path, h, lines, failed, err); err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	total, err := comm.AllreduceScalar(c, comm.Sum, entries)
	if err == nil && total != declared {
		err = mmLineError(path, h.sizeLine, fmt.Errorf("size line declares %d entries, the file holds %d", declared, total))
	}
	if err == nil {
		err = checkFilled(path, h, size)
	}
	if err != nil {
		return nil, dsmat.Partition{}, stats, err
	}

	part := dsmat.NewPartition(n, c.Size())
	ts, err = dsmat.RouteTriplets(c, part, ts)
	var r *dsmat.Rows
	dups := 0
	if err == nil {
		first, _ := part.Range(c.Rank())
		r, dups, err = dsmat.AssembleRows(n, first, part.Size(c.Rank()), ts)
	}
	if err == nil && dups > 0 {
		if i, j, v := overflowedSum(r); i >= 0 {
			err = fmt.Errorf("dsmat: read %s: duplicate entries of A(%d,%d) sum to %g, beyond the float64 range", path, i+1, j+1, v)
		}
	}
	if err = c.Agree(err); err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	if stats.Duplicates, err = comm.AllreduceScalar(c, comm.Sum, int64(dups)); err != nil {
		return nil, dsmat.Partition{}, stats, err
	}
	return r, part, stats, nil
}

// maxStripeRows is the most rows a rank's stripe may hold: the CSR blocks
// index rows and columns with int32.
const maxStripeRows = math.MaxInt32

// checkCoordinateHeader accepts the header of a square coordinate matrix
// whose stripes on np ranks fit a CSR block; it checks the dimension before
// anything of that size is allocated.
func checkCoordinateHeader(path string, h *mmHeader, np int) error {
	if h.format != "coordinate" {
		return mmLineError(path, 1, errors.New("array format holds a dense matrix; want a coordinate (sparse) matrix"))
	}
	if h.size[0] != h.size[1] {
		return mmLineError(path, h.sizeLine, fmt.Errorf("matrix is %d x %d, not square", h.size[0], h.size[1]))
	}
	if per := (h.size[0] + int64(np) - 1) / int64(np); per > maxStripeRows {
		return mmLineError(path, h.sizeLine, fmt.Errorf("%d rows on %d ranks are %d rows a rank, more than the %d a rank can hold: check the size line, or use more ranks",
			h.size[0], np, per, maxStripeRows))
	}
	return nil
}

// checkFilled refuses, once the file of size bytes has been found to hold
// the declared entries and before its rows are allocated, a matrix with
// more rows than those entries can fill (one each, two for an off-diagonal
// entry of a symmetric file), and than the file has bytes: such a matrix
// has empty rows, and refusing it bounds what the reader allocates by the
// file's length, not by what its size line claims.
func checkFilled(path string, h *mmHeader, size int64) error {
	n, declared := h.size[0], h.size[2]
	filled := declared
	if h.symmetry == "symmetric" {
		filled = 2 * min(declared, math.MaxInt64/2)
	}
	if n > filled && n > size {
		return mmLineError(path, h.sizeLine, fmt.Errorf("size line declares %d rows but %d entries, which leave rows empty (a singular matrix)", n, declared))
	}
	return nil
}

// parseCoordinates parses the entries of a coordinate file on the lines that
// begin in the bytes [lo, hi) of f (see scanLines for lines, failed and
// err), on all cores: each core parses its own part of the bytes, and the
// parts' entries are joined in file order, so the result is the same on any
// number of cores. A symmetric file's off-diagonal entries come with their
// mirror images; entries counts the entries the lines hold.
func parseCoordinates(f io.ReaderAt, h *mmHeader, lo, hi, size int64) (ts []dsmat.Triplet, entries, lines, failed int64, err error) {
	pieces := int((hi - lo) / mmPieceBytes)
	parts := make([]mmPart, parallel.Chunks(pieces))
	parallel.For(pieces, func(c, first, end int) {
		plo, phi := lo, hi
		if pieces > 0 {
			plo, phi = lo+(hi-lo)*int64(first)/int64(pieces), lo+(hi-lo)*int64(end)/int64(pieces)
		}
		parts[c] = parseCoordinatePart(f, h, plo, phi, size)
	})
	failed = -1
	total := 0
	for _, p := range parts {
		if err == nil && p.err != nil {
			failed, err = p.failed, p.err
			if failed >= 0 {
				failed += lines
			}
		}
		lines += p.lines
		entries += p.entries
		total += len(p.ts)
	}
	if len(parts) == 1 {
		return parts[0].ts, entries, lines, failed, err
	}
	ts = make([]dsmat.Triplet, total)
	at := make([]int, len(parts))
	for c := 1; c < len(parts); c++ {
		at[c] = at[c-1] + len(parts[c-1].ts)
	}
	var wg sync.WaitGroup
	for c, p := range parts {
		wg.Go(func() { copy(ts[at[c]:], p.ts) })
	}
	wg.Wait()
	return ts, entries, lines, failed, err
}

// mmPieceBytes is a unit of a file's bytes for parallel.For, whose least
// chunk, 64 units (1 MiB), is the least share worth a core of its own.
const mmPieceBytes = 1 << 14

// mmPart is what parseCoordinatePart found in its bytes.
type mmPart struct {
	ts                     []dsmat.Triplet
	entries, lines, failed int64
	err                    error
}

// parseCoordinatePart parses the entries on the lines that begin in the
// bytes [lo, hi) of f, on one core.
func parseCoordinatePart(f io.ReaderAt, h *mmHeader, lo, hi, size int64) mmPart {
	n := h.size[0]
	pattern, symmetric := h.field == "pattern", h.symmetry == "symmetric"
	p := mmPart{ts: make([]dsmat.Triplet, 0, mmEntryEstimate(h.size[2], lo, hi, h.dataStart, size, symmetric))}
	p.lines, p.failed, p.err = scanLines(f, h.dataStart, lo, hi, size, func(line []byte) error {
		t, ok, err := parseMMEntry(line, n, pattern)
		if err != nil || !ok {
			return err
		}
		if symmetric && t.Col > t.Row {
			return fmt.Errorf("entry (%d,%d) above the diagonal in a symmetric file (store the lower triangle)", t.Row+1, t.Col+1)
		}
		p.entries++
		p.ts = append(p.ts, t)
		if symmetric && t.Row != t.Col {
			p.ts = append(p.ts, dsmat.Triplet{Row: t.Col, Col: t.Row, Val: t.Val})
		}
		return nil
	})
	return p
}

// mmEntryEstimate guesses how many of the declared entries (doubled for a
// symmetric file) lie in the bytes [lo, hi) of the data section [start, end),
// so that the slice holding them is allocated once. Counting at least 4 bytes
// a line bounds the guess when the declared count is wrong.
func mmEntryEstimate(declared, lo, hi, start, end int64, symmetric bool) int64 {
	if end <= start {
		return 0
	}
	est := float64(min(declared, mmMaxLines(start, end, 4))) * float64(hi-lo) / float64(end-start)
	if symmetric {
		est *= 2
	}
	return int64(est) + 16
}

// mmMaxLines is the most lines of at least width bytes (their line ends
// included; the last line may lack one) that the bytes [start, end) hold.
func mmMaxLines(start, end, width int64) int64 {
	return max(0, end-start+1) / width
}

// parseMMEntry parses a coordinate data line "i j v" ("i j" for pattern) of
// an n x n matrix into a triplet with 0-based indices. ok is false for a blank
// or comment line. It does not allocate unless it fails.
func parseMMEntry(line []byte, n int64, pattern bool) (t dsmat.Triplet, ok bool, err error) {
	f, rest := mmField(line)
	if f == nil || f[0] == '%' {
		return t, false, nil
	}
	if t.Row, err = mmIndex(f, "row", n); err != nil {
		return t, false, err
	}
	f, rest = mmField(rest)
	if t.Col, err = mmIndex(f, "column", n); err != nil {
		return t, false, err
	}
	t.Val = 1
	if !pattern {
		f, rest = mmField(rest)
		if t.Val, err = mmValue(f); err != nil {
			return t, false, err
		}
	}
	return t, true, mmEnd(rest)
}

// mmField splits the first whitespace-separated field off b; field is nil
// when b holds only white space.
func mmField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isMMSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isMMSpace(b[j]) {
		j++
	}
	if i == j {
		return nil, nil
	}
	return b[i:j], b[j:]
}

func isMMSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// mmEnd reports an error if anything but white space follows the fields of a line.
func mmEnd(rest []byte) error {
	if f, _ := mmField(rest); f != nil {
		return fmt.Errorf("unexpected extra field %s", quote(f))
	}
	return nil
}

// mmIndex parses a 1-based index in [1, n] and returns it 0-based; what names
// the index in errors.
func mmIndex(f []byte, what string, n int64) (int64, error) {
	if f == nil {
		return 0, fmt.Errorf("missing %s index", what)
	}
	v, ok := parseCount(f)
	if !ok {
		return 0, fmt.Errorf("malformed %s index %s", what, quote(f))
	}
	if v < 1 || v > n {
		return 0, fmt.Errorf("%s index %d out of range [1,%d]", what, v, n)
	}
	return v - 1, nil
}

// parseCount parses a non-negative decimal integer that fits in an int64.
func parseCount(f []byte) (int64, bool) {
	if len(f) > 0 && f[0] == '+' {
		f = f[1:]
	}
	if len(f) == 0 {
		return 0, false
	}
	var v int64
	for _, c := range f {
		if c < '0' || c > '9' || v > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, false
		}
		v = 10*v + int64(c-'0')
	}
	return v, true
}

// mmValue parses a finite floating-point value written as the Matrix
// Market format (and C's strtod) writes decimal numbers; Go's own forms
// (underscores, hexadecimal) are malformed.
func mmValue(f []byte) (float64, error) {
	if f == nil {
		return 0, errors.New("missing value")
	}
	v, err := strconv.ParseFloat(string(f), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || !isDecimal(f) && !isNonFinite(f) {
		return 0, fmt.Errorf("malformed value %s", quote(f))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("value %s is not finite", quote(f))
	}
	return v, nil
}

// isDecimal reports whether f is a decimal number: a sign, digits with at
// most one decimal point, and an exponent.
func isDecimal(f []byte) bool {
	i := 0
	if i < len(f) && (f[i] == '+' || f[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(f) && (f[i] >= '0' && f[i] <= '9'); i++ {
		digits++
	}
	if i < len(f) && f[i] == '.' {
		for i++; i < len(f) && (f[i] >= '0' && f[i] <= '9'); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(f) && (f[i] == 'e' || f[i] == 'E') {
		i++
		if i < len(f) && (f[i] == '+' || f[i] == '-') {
			i++
		}
		exp := i
		for ; i < len(f) && (f[i] >= '0' && f[i] <= '9'); i++ {
		}
		if i == exp {
			return false
		}
	}
	return i == len(f)
}

// isNonFinite reports whether f spells NaN or an infinity, as strtod reads
// them: refused as values, but named as such.
func isNonFinite(f []byte) bool {
	w := strings.TrimLeft(string(f), "+-")
	return strings.EqualFold(w, "nan") || strings.EqualFold(w, "inf") || strings.EqualFold(w, "infinity")
}

// quoteMax is the most bytes of a file's text that a message echoes.
const quoteMax = 80

// quote quotes text of a file for a message, cut after quoteMax bytes: a
// corrupt file may hold a line of megabytes (or one whose line ends are
// lone carriage returns).
func quote[T string | []byte](s T) string {
	if len(s) > quoteMax {
		return strconv.Quote(string(s[:quoteMax])) + "..."
	}
	return strconv.Quote(string(s))
}

// mmHeader is what the banner and the size line of a Matrix Market file say.
type mmHeader struct {
	format    string  // "coordinate" or "array"
	field     string  // "real", "integer" or "pattern"
	symmetry  string  // "general" or "symmetric"
	size      []int64 // rows, columns and, for coordinate, stored entries
	sizeLine  int64   // line number of the size line: the data section follows it
	dataStart int64   // byte offset of the data section
}

// openMM opens a Matrix Market file on every rank, reads its header and
// applies check to it. Collective: it fails on all ranks if it fails on one.
func openMM(c *comm.Comm, path string, check func(h *mmHeader) error) (*os.File, *mmHeader, int64, error) {
	f, h, size, err := openMMLocal(path, check)
	if err = c.Agree(err); err != nil {
		if f != nil {
			f.Close()
		}
		return nil, nil, 0, err
	}
	return f, h, size, nil
}

func openMMLocal(path string, check func(h *mmHeader) error) (*os.File, *mmHeader, int64, error) {
	f, err := iopath.OpenInput(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("dsmat: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, 0, fmt.Errorf("dsmat: %w", err)
	}
	h, err := readMMHeader(path, f)
	if err == nil {
		err = check(h)
	}
	if err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	return f, h, fi.Size(), nil
}

// readMMHeader reads the banner, comments and size line from the start of r.
func readMMHeader(path string, r io.Reader) (*mmHeader, error) {
	lr := lineReader{br: bufio.NewReader(r)}
	line, err := lr.next()
	if err == io.EOF {
		return nil, fmt.Errorf("dsmat: read %s: empty file, want a %%%%MatrixMarket banner", path)
	}
	if err != nil {
		return nil, fmt.Errorf("dsmat: read %s: %w", path, err)
	}
	h := &mmHeader{sizeLine: 1, dataStart: int64(len(line))}
	if err := h.parseBanner(line); err != nil {
		return nil, mmLineError(path, 1, err)
	}
	for {
		line, err := lr.next()
		h.sizeLine++
		if err == io.EOF {
			return nil, mmLineError(path, h.sizeLine, errors.New("end of file before the size line"))
		}
		if err != nil {
			return nil, fmt.Errorf("dsmat: read %s: %w", path, err)
		}
		h.dataStart += int64(len(line))
		if f, _ := mmField(line); f == nil || f[0] == '%' {
			continue
		}
		if err := h.parseSize(line); err != nil {
			return nil, mmLineError(path, h.sizeLine, err)
		}
		return h, nil
	}
}

const mmBannerHelp = "%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric"

// parseBanner parses the first line of the file. Keywords are case-insensitive.
func (h *mmHeader) parseBanner(line []byte) error {
	w := strings.Fields(strings.ToLower(string(line)))
	if len(w) != 5 || w[0] != "%%matrixmarket" {
		return fmt.Errorf("bad banner %s, want %q", quote(strings.TrimSpace(string(line))), mmBannerHelp)
	}
	if w[1] != "matrix" {
		return fmt.Errorf("object %s not supported, want matrix", quote(w[1]))
	}
	h.format, h.field, h.symmetry = w[2], w[3], w[4]
	switch h.format {
	case "coordinate", "array":
	default:
		return fmt.Errorf("unknown format %s, want coordinate or array", quote(h.format))
	}
	switch h.field {
	case "real", "integer", "pattern":
	case "complex":
		return errors.New("complex field not supported, want real, integer or pattern")
	default:
		return fmt.Errorf("unknown field %s, want real, integer or pattern", quote(h.field))
	}
	switch h.symmetry {
	case "general", "symmetric":
	case "skew-symmetric", "hermitian":
		return fmt.Errorf("%s symmetry not supported, want general or symmetric", h.symmetry)
	default:
		return fmt.Errorf("unknown symmetry %s, want general or symmetric", quote(h.symmetry))
	}
	if h.field == "pattern" && h.format == "array" {
		return errors.New("pattern field is only valid in coordinate format")
	}
	return nil
}

// parseSize parses "rows columns entries" (coordinate) or "rows columns" (array).
func (h *mmHeader) parseSize(line []byte) error {
	want := "rows columns entries"
	if h.format == "array" {
		want = "rows columns"
	}
	rest := line
	for range strings.Fields(want) {
		var f []byte
		f, rest = mmField(rest)
		v, ok := parseCount(f)
		if !ok {
			return fmt.Errorf("bad size line %s, want %q", quote(strings.TrimSpace(string(line))), want)
		}
		h.size = append(h.size, v)
	}
	if mmEnd(rest) != nil {
		return fmt.Errorf("bad size line %s, want %q", quote(strings.TrimSpace(string(line))), want)
	}
	return nil
}

// mmLineError is the error for a problem at a line of a file.
func mmLineError(path string, line int64, err error) error {
	return fmt.Errorf("dsmat: read %s line %d: %w", path, line, err)
}

// mmShare returns the bytes [lo, hi) of the data section [start, end) that
// rank parses: the lines whose first byte lies there.
func mmShare(start, end int64, rank, np int) (lo, hi int64) {
	l := end - start
	return start + l*int64(rank)/int64(np), start + l*int64(rank+1)/int64(np)
}

// scanLines calls fn on each line of f[:end] that begins in [lo, hi), without
// its line end; start is the offset of a line start at or before lo (the data
// section). It returns how many lines begin in [lo, hi). When fn fails it is
// not called again, failed is the 0-based index of the failing line among
// those lines and err its error; lines are still counted to the end of the
// range, because the line numbers of later ranks depend on them. A read
// error returns failed = -1.
func scanLines(f io.ReaderAt, start, lo, hi, end int64, fn func(line []byte) error) (lines, failed int64, err error) {
	pos := lo
	if lo > start {
		pos = lo - 1 // a line that ends at lo-1 leaves lo as a line start
	}
	lr := lineReader{br: bufio.NewReaderSize(io.NewSectionReader(f, pos, end-pos), 1<<16)}
	if lo > start {
		line, err := lr.next()
		if err == io.EOF {
			return 0, -1, nil
		}
		if err != nil {
			return 0, -1, err
		}
		pos += int64(len(line)) // the rest of a line an earlier rank owns
	}
	failed = -1
	for pos < hi {
		line, rerr := lr.next()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return lines, -1, rerr
		}
		pos += int64(len(line))
		if failed < 0 {
			if ferr := fn(trimEOL(line)); ferr != nil {
				failed, err = lines, ferr
			}
		}
		lines++
	}
	return lines, failed, err
}

// agreeScan turns the outcome of this rank's scanLines into a collective
// result: the failing line's number in the file needs the line counts of
// the lower ranks (an Exscan).
func agreeScan(c *comm.Comm, path string, h *mmHeader, lines, failed int64, err error) error {
	before, xerr := comm.Exscan(c, lines)
	switch {
	case xerr != nil:
		err = xerr
	case err != nil && failed >= 0:
		err = mmLineError(path, h.sizeLine+before+failed+1, err)
	case err != nil:
		err = fmt.Errorf("dsmat: read %s: %w", path, err)
	}
	return c.Agree(err)
}

func trimEOL(line []byte) []byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line
}

// lineReader returns the lines of a bufio.Reader without allocating per
// line; only a line longer than the buffer is copied, into a reused slice.
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

// next returns the next line with its '\n' (none on a last unterminated
// line), valid until the following call, or io.EOF after the last line.
func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = lr.br.ReadSlice('\n')
			lr.long = append(lr.long, line...)
		}
		line = lr.long
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	return line, err
}
