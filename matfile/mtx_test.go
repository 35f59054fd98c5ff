package matfile

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

const matrixDir = "/work/shared/matrices"

func TestParseMMEntry(t *testing.T) {
	for _, tc := range []struct {
		line    string
		pattern bool
		want    dsmat.Triplet
		skip    bool
		err     string
	}{
		{line: "1 1 2.5", want: dsmat.Triplet{Row: 0, Col: 0, Val: 2.5}},
		{line: "  3\t2   -1e-3  \r", want: dsmat.Triplet{Row: 2, Col: 1, Val: -1e-3}},
		{line: "+4 +1 +7", want: dsmat.Triplet{Row: 3, Col: 0, Val: 7}},
		{line: "2 3", pattern: true, want: dsmat.Triplet{Row: 1, Col: 2, Val: 1}},
		{line: "", skip: true},
		{line: "  \t", skip: true},
		{line: "% a comment", skip: true},
		{line: "0 1 1", err: "row index 0 out of range [1,4]"},
		{line: "1 5 1", err: "column index 5 out of range [1,4]"},
		{line: "-1 1 1", err: `malformed row index "-1"`},
		{line: "1 x 1", err: `malformed column index "x"`},
		{line: "1.0 1 1", err: `malformed row index "1.0"`},
		{line: "99999999999999999999 1 1", err: "malformed row index"},
		{line: "1", err: "missing column index"},
		{line: "1 1", err: "missing value"},
		{line: "1 1 1.2.3", err: `malformed value "1.2.3"`},
		{line: "1 1 nan", err: `value "nan" is not finite`},
		{line: "1 1 -Inf", err: `value "-Inf" is not finite`},
		{line: "1 1 1e999", err: `value "1e999" is not finite`},
		{line: "1 1 1 1", err: `unexpected extra field "1"`},
		{line: "1 1 1", pattern: true, err: `unexpected extra field "1"`},
	} {
		got, ok, err := parseMMEntry([]byte(tc.line), 4, tc.pattern)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.line, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.line, err)
		case ok == tc.skip || (ok && got != tc.want):
			t.Errorf("%q: got %v, %v, want %v, %v", tc.line, got, ok, tc.want, !tc.skip)
		}
	}
	// an underflowing value is not an error
	if got, _, err := parseMMEntry([]byte("1 1 1e-400"), 1, false); err != nil || got.Val != 0 {
		t.Errorf("underflow: %v, %v", got, err)
	}
}

func TestParseMMEntryAllocs(t *testing.T) {
	line := []byte("123456 654321 -1.2345678901234567e-300")
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := parseMMEntry(line, 1e6, false); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per entry, want 0", allocs)
	}
}

func TestReadMMHeader(t *testing.T) {
	const banner = "%%MatrixMarket matrix coordinate real general\n"
	for _, tc := range []struct {
		name, text, err string
		want            mmHeader
	}{
		{name: "plain", text: banner + "3 3 4\n1 1 1\n",
			want: mmHeader{format: "coordinate", field: "real", symmetry: "general", size: []int64{3, 3, 4}, sizeLine: 2, dataStart: int64(len(banner) + 6)}},
		{name: "comments", text: "%%matrixmarket MATRIX Coordinate Pattern SYMMETRIC\r\n% c\n\n%\n 5 5 0 \n",
			want: mmHeader{format: "coordinate", field: "pattern", symmetry: "symmetric", size: []int64{5, 5, 0}, sizeLine: 5, dataStart: 67}},
		{name: "array", text: "%%MatrixMarket matrix array integer general\n4 1",
			want: mmHeader{format: "array", field: "integer", symmetry: "general", size: []int64{4, 1}, sizeLine: 2, dataStart: 47}},
		{name: "empty", text: "", err: "empty file"},
		{name: "nobanner", text: "3 3 4\n", err: `line 1: bad banner "3 3 4"`},
		{name: "short banner", text: "%%MatrixMarket matrix coordinate real\n", err: "line 1: bad banner"},
		{name: "vector object", text: "%%MatrixMarket vector coordinate real general\n", err: `line 1: object "vector" not supported`},
		{name: "format", text: "%%MatrixMarket matrix dense real general\n", err: `line 1: unknown format "dense"`},
		{name: "complex", text: "%%MatrixMarket matrix coordinate complex general\n", err: "line 1: complex field not supported"},
		{name: "field", text: "%%MatrixMarket matrix coordinate double general\n", err: `line 1: unknown field "double"`},
		{name: "hermitian", text: "%%MatrixMarket matrix coordinate real hermitian\n", err: "line 1: hermitian symmetry not supported"},
		{name: "skew", text: "%%MatrixMarket matrix coordinate real skew-symmetric\n", err: "line 1: skew-symmetric symmetry not supported"},
		{name: "symmetry", text: "%%MatrixMarket matrix coordinate real upper\n", err: `line 1: unknown symmetry "upper"`},
		{name: "array pattern", text: "%%MatrixMarket matrix array pattern general\n", err: "line 1: pattern field is only valid in coordinate format"},
		{name: "no size", text: banner + "% only a comment\n", err: "line 3: end of file before the size line"},
		{name: "size short", text: banner + "%\n3 3\n", err: `line 3: bad size line "3 3", want "rows columns entries"`},
		{name: "size long", text: banner + "3 3 4 5\n", err: "line 2: bad size line"},
		{name: "size negative", text: banner + "3 -3 4\n", err: "line 2: bad size line"},
		{name: "array size", text: "%%MatrixMarket matrix array real general\n3 1 3\n", err: `line 2: bad size line "3 1 3", want "rows columns"`},
	} {
		h, err := readMMHeader("f.mtx", strings.NewReader(tc.text))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), "dsmat: read f.mtx") || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if fmt.Sprint(*h) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, *h, tc.want)
		}
	}
}

// TestScanLinesShares splits a data section among np ranks and checks that
// every line is seen by exactly one rank, in order, with correct counts, and
// that a failing line is reported with its index.
func TestScanLinesShares(t *testing.T) {
	const head = "header line\n"
	texts := []string{
		"a\nbb\n\nccc\r\nd\nlong line here\ne",
		"a\nbb\n\nccc\r\nd\nlong line here\ne\n",
		"x\n",
		"",
		strings.Repeat("0123456789\n", 40) + strings.Repeat("z", 70000) + "\nlast\n", // one line longer than the buffer
	}
	for ti, text := range texts {
		data := head + text
		want := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if text == "" {
			want = nil
		}
		for i := range want {
			want[i] = strings.TrimSuffix(want[i], "\r")
		}
		for np := 1; np <= 9; np++ {
			var got []string
			var before, fails int64
			for rank := 0; rank < np; rank++ {
				lo, hi := mmShare(int64(len(head)), int64(len(data)), rank, np)
				scan := func(fn func(line []byte) error) (int64, int64, error) {
					return scanLines(strings.NewReader(data), int64(len(head)), lo, hi, int64(len(data)), fn)
				}
				lines, failed, err := scan(func(line []byte) error {
					got = append(got, string(line))
					return nil
				})
				if failed != -1 || err != nil {
					t.Errorf("text %d np %d rank %d: failed %d, err %v", ti, np, rank, failed, err)
				}
				flines, failed, err := scan(func(line []byte) error {
					if string(line) == "d" {
						return errors.New("bad d")
					}
					return nil
				})
				if flines != lines || (failed >= 0) != (err != nil) || (err != nil && want[before+failed] != "d") {
					t.Errorf("text %d np %d rank %d: failing scan: %d lines, failed %d, err %v", ti, np, rank, flines, failed, err)
				}
				if err != nil {
					fails++
				}
				before += lines
			}
			wantFails := int64(0)
			if strings.Contains(text, "\nd\n") {
				wantFails = 1
			}
			if fails != wantFails {
				t.Errorf("text %d np %d: %d ranks failed", ti, np, fails)
			}
			if before != int64(len(want)) || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("text %d np %d: %d lines %q, want %d lines %q", ti, np, before, got, len(want), want)
			}
		}
	}
}

// refMatrix is the simplest serial reading of a Matrix Market coordinate
// file: row i (0-based) maps columns to values, symmetric files expanded,
// duplicates summed. It is the reference the parallel readers are checked
// against.
type refMatrix struct {
	n    int64
	rows []map[int64]float64
}

func readRefMatrix(t *testing.T, path string) refMatrix {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	banner := strings.ToLower(sc.Text())
	symmetric, pattern := strings.HasSuffix(banner, "symmetric"), strings.Contains(banner, "pattern")
	var ref refMatrix
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) == 0 || strings.HasPrefix(w[0], "%") {
			continue
		}
		i, _ := strconv.ParseInt(w[0], 10, 64)
		j, _ := strconv.ParseInt(w[1], 10, 64)
		if ref.rows == nil {
			ref.n = i
			ref.rows = make([]map[int64]float64, i)
			for k := range ref.rows {
				ref.rows[k] = map[int64]float64{}
			}
			continue
		}
		v := 1.0
		if !pattern {
			v, _ = strconv.ParseFloat(w[2], 64)
		}
		ref.rows[i-1][j-1] += v
		if symmetric && i != j {
			ref.rows[j-1][i-1] += v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ref
}

// unsymmetricPattern reports whether some stored entry (i, j) has no
// stored (j, i).
func (ref refMatrix) unsymmetricPattern() bool {
	for i, row := range ref.rows {
		for j := range row {
			if _, ok := ref.rows[j][int64(i)]; !ok {
				return true
			}
		}
	}
	return false
}

// checkStripe checks that r is stripe rank of ref under the balanced partition.
func checkStripe(t *testing.T, name string, c *comm.Comm, ref refMatrix, r *dsmat.Rows, part dsmat.Partition) {
	t.Helper()
	first, last := dsmat.NewPartition(ref.n, c.Size()).Range(c.Rank())
	if part.N() != ref.n || part.Ranks() != c.Size() || part.Offsets[c.Rank()] != first || part.Offsets[c.Rank()+1] != last {
		t.Errorf("%s: partition %v, want rows [%d,%d) of %d on rank %d", name, part.Offsets, first, last, ref.n, c.Rank())
		return
	}
	if err := r.Check(); err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if r.N != ref.n || r.First != first || int64(r.Count()) != last-first {
		t.Errorf("%s: stripe N %d First %d Count %d, want %d %d %d", name, r.N, r.First, r.Count(), ref.n, first, last-first)
		return
	}
	for i := range r.Count() {
		row := ref.rows[first+int64(i)]
		if int(r.RowPtr[i+1]-r.RowPtr[i]) != len(row) {
			t.Errorf("%s: row %d has %d entries, want %d", name, first+int64(i), r.RowPtr[i+1]-r.RowPtr[i], len(row))
			return
		}
		for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
			if v, ok := row[r.Col[k]]; !ok || v != r.Val[k] {
				t.Errorf("%s: entry (%d,%d) = %g, want %g (stored %v)", name, first+int64(i), r.Col[k], r.Val[k], v, ok)
				return
			}
		}
	}
}

// readmeErrata corrects the README's nnz column where it disagrees with the
// file: hypre_beam_hex_459.mtx stores 10305 lower-triangle entries, 459 on
// the diagonal, so 2*10305-459 = 20151 entries (counted independently too),
// not the 21607 the README gives.
var readmeErrata = map[string]int64{"hypre_beam_hex_459.mtx": 20151}

// readmeNNZ returns the nnz column of the matrices' README, by file name.
func readmeNNZ(t *testing.T) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(matrixDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	nnz := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 4 && strings.HasSuffix(strings.TrimSpace(cells[1]), ".mtx") {
			v, err := strconv.ParseInt(strings.TrimSpace(cells[3]), 10, 64)
			if err != nil {
				t.Fatalf("README line %q: %v", line, err)
			}
			nnz[strings.TrimSpace(cells[1])] = v
		}
	}
	for name, v := range readmeErrata {
		if _, ok := nnz[name]; ok {
			nnz[name] = v
		}
	}
	return nnz
}

// TestReadMTXMatrices reads every test matrix on 1 to 4 ranks and checks the
// stripes against the serial reference and the global nnz against the README.
func TestReadMTXMatrices(t *testing.T) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			nnz := readmeNNZ(t)
			files, _ := filepath.Glob(filepath.Join(matrixDir, "*.mtx"))
			if len(files) != len(nnz) {
				t.Errorf("%d .mtx files, README lists %d", len(files), len(nnz))
			}
			for _, path := range files {
				name := filepath.Base(path)
				r, part, err := ReadMTX(c, path)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				checkStripe(t, name, c, readRefMatrix(t, path), r, part)
				total, err := comm.AllreduceScalar(c, comm.Sum, r.NNZ())
				if err != nil || total != nnz[name] {
					t.Errorf("%s: nnz %d (%v), README says %d", name, total, err, nnz[name])
				}
			}
		})
	}
}

// sharedDir makes a temporary directory that all ranks see (rank 0 makes
// it, the name is broadcast) and removes it at the end of the test.
func sharedDir(t *testing.T, c *comm.Comm) string {
	t.Helper()
	var name []byte
	if c.Rank() == 0 {
		dir, err := os.MkdirTemp("", "matfile-test")
		if err != nil {
			t.Fatal(err)
		}
		name = []byte(dir)
	}
	name, err := bcastBytes(c, name)
	if err != nil {
		t.Fatal(err)
	}
	dir := string(name)
	t.Cleanup(func() {
		if err := c.Barrier(); err == nil && c.Rank() == 0 {
			os.RemoveAll(dir)
		}
	})
	return dir
}

// writeFiles writes name -> content files into dir on rank 0; all ranks
// return once the files exist.
func writeFiles(t *testing.T, c *comm.Comm, dir string, files map[string]string) {
	t.Helper()
	if c.Rank() == 0 {
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// diagonalMTX is an n x n identity in a general coordinate file whose data
// line number bad (counting from 1 in the file) is replaced by badLine. The
// header takes 3 lines.
func diagonalMTX(n int, bad int, badLine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%%%%MatrixMarket matrix coordinate real general\n%% identity\n%d %d %d\n", n, n, n)
	for i := 1; i <= n; i++ {
		if i+3 == bad {
			b.WriteString(badLine + "\n")
			continue
		}
		fmt.Fprintf(&b, "%d %d %d.5\n", i, i, i)
	}
	return b.String()
}

func TestReadMTXErrors(t *testing.T) {
	const gen = "%%MatrixMarket matrix coordinate real general\n"
	const sym = "%%MatrixMarket matrix coordinate real symmetric\n"
	cases := []struct{ name, text, err string }{
		{"banner.mtx", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", "banner.mtx line 1: bad banner"},
		{"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "complex.mtx line 1: complex field not supported"},
		{"array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "array.mtx line 1: array format holds a dense matrix"},
		{"rect.mtx", gen + "% c\n2 3 1\n1 1 1\n", "rect.mtx line 3: matrix is 2 x 3, not square"},
		{"range.mtx", gen + "% c\n3 3 3\n1 1 1\n2 4 1\n3 3 1\n", "range.mtx line 5: column index 4 out of range [1,3]"},
		{"count.mtx", gen + "3 3 4\n1 1 1\n2 2 1\n3 3 1\n", "count.mtx line 2: size line declares 4 entries, the file holds 3"},
		{"count2.mtx", gen + "2 2 1\n1 1 1\n2 2 1\n", "count2.mtx line 2: size line declares 1 entries, the file holds 2"},
		{"number.mtx", gen + "2 2 2\n1 1 1\n2 2 1.2.3\n", `number.mtx line 4: malformed value "1.2.3"`},
		{"nan.mtx", gen + "2 2 2\n1 1 NaN\n2 2 1\n", `nan.mtx line 3: value "NaN" is not finite`},
		{"upper.mtx", sym + "2 2 2\n1 1 1\n1 2 1\n", "upper.mtx line 4: entry (1,2) above the diagonal in a symmetric file"},
		{"big.mtx", diagonalMTX(100, 57, "57 57 inf"), `big.mtx line 57: value "inf" is not finite`},
		{"big2.mtx", diagonalMTX(100, 90, "90 0 1"), "big2.mtx line 90: column index 0 out of range [1,100]"},
		{"huge.mtx", gen + "9000000000 9000000000 1\n1 1 1\n", "huge.mtx line 2: 9000000000 rows on"},
		{"claim.mtx", sym + "2000000000 2000000000 2\n1 1 1\n2 1 1\n", "claim.mtx line 2: size line declares 2000000000 rows but 2 entries, which leave rows empty"},
		{"underscore.mtx", gen + "2 2 2\n1 1 2_0\n2 2 1\n", `underscore.mtx line 3: malformed value "2_0"`},
		{"hex.mtx", gen + "2 2 2\n1 1 1\n2 2 0x1p1\n", `hex.mtx line 4: malformed value "0x1p1"`},
		{"long.mtx", gen + "1 1 1\n1 1 " + strings.Repeat("9", 1000) + "x\n", `long.mtx line 3: malformed value "` + strings.Repeat("9", 80) + `"...`},
		{"cr.mtx", strings.ReplaceAll(gen+"% "+strings.Repeat("c", 200)+"\n1 1 1\n1 1 1\n", "\n", "\r"), `cr.mtx line 1: bad banner "%%MatrixMarket matrix coordinate real general\r% ` + strings.Repeat("c", 32) + `"..., want`},
		{"overflow.mtx", sym + "2 2 4\n1 1 1\n2 1 -1\n2 2 -1e308\n2 2 -1e308\n", "overflow.mtx: duplicate entries of A(2,2) sum to -Inf, beyond the float64 range"},
	}
	files := map[string]string{}
	for _, tc := range cases {
		files[tc.name] = tc.text
	}
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			dir := sharedDir(t, c)
			writeFiles(t, c, dir, files)
			for _, tc := range cases {
				_, _, err := ReadMTX(c, filepath.Join(dir, tc.name))
				mpitest.CheckCollectiveError(t, c, tc.name, err, tc.err)
			}
			_, _, err := ReadMTX(c, filepath.Join(dir, "missing.mtx"))
			mpitest.CheckCollectiveError(t, c, "missing.mtx", err, "no such file")
		})
	}
}

// TestReadMTXEmptyRanks reads matrices smaller than the rank count: ranks
// with no rows and no bytes of the file must work.
func TestReadMTXEmptyRanks(t *testing.T) {
	mpitest.Run(t, 4, func(t *testing.T, c *comm.Comm) {
		dir := sharedDir(t, c)
		files := map[string]string{
			"two.mtx":   "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n",
			"one.mtx":   "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 3",
			"empty.mtx": "%%MatrixMarket matrix coordinate real general\n3 3 0\n",
		}
		writeFiles(t, c, dir, files)
		for _, name := range slices.Sorted(maps.Keys(files)) { // the same order on all ranks
			path := filepath.Join(dir, name)
			r, part, err := ReadMTX(c, path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkStripe(t, name, c, readRefMatrix(t, path), r, part)
		}
		r, _, err := ReadMTX(c, filepath.Join(matrixDir, "LFAT5.mtx"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Count() != []int{4, 4, 3, 3}[c.Rank()] {
			t.Errorf("LFAT5 on 4 ranks: %d rows on rank %d", r.Count(), c.Rank())
		}
	})
}

// TestParseCoordinatesParts: parsing a file's bytes on several cores gives
// the entries of one core's parse, in the same order, and the same line
// count and failing line when a line in a later part is bad.
func TestParseCoordinatesParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(7))
	const n = 64000
	var b strings.Builder
	fmt.Fprintf(&b, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", n, n, 3*n-3)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d %d %.17g\n", i, i, 4+float64(i)/7)
		if i > 1 {
			fmt.Fprintf(&b, "%d %d %.17g\n", i, i-1, -1-float64(i)/13)
			fmt.Fprintf(&b, "%d %d -0.25\n", i, 1+(i*7919)%(i-1))
		}
	}
	good := b.String()
	bad := strings.Replace(good, fmt.Sprintf("\n%d %d ", 3*n/4, 3*n/4-1), fmt.Sprintf("\n%d %d ", 3*n/4-1, 3*n/4), 1)
	for name, text := range map[string]string{"good": good, "bad": bad} {
		r := strings.NewReader(text)
		h, err := readMMHeader(name, strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(text))
		if pieces := int((size - h.dataStart) / mmPieceBytes); parallel.Chunks(pieces) < 4 {
			t.Fatalf("%d bytes make %d parts, want 4 or more", size, parallel.Chunks(pieces))
		}
		want := parseCoordinatePart(r, h, h.dataStart, size, size)
		ts, entries, lines, failed, err := parseCoordinates(r, h, h.dataStart, size, size)
		sameEntries := slices.Equal(ts, want.ts) && entries == want.entries || name == "bad" // parsing stops at a bad line
		if !sameEntries || lines != want.lines || failed != want.failed || fmt.Sprint(err) != fmt.Sprint(want.err) {
			t.Errorf("%s: %d entries, %d lines, failed %d (%v); one core: %d, %d, %d (%v); same triplets: %v",
				name, entries, lines, failed, err, want.entries, want.lines, want.failed, want.err, slices.Equal(ts, want.ts))
		}
		if name == "bad" && (failed != int64(3*(3*n/4-1)-2+1) || err == nil) {
			t.Errorf("bad line found at %d: %v", failed, err)
		}
	}
}
