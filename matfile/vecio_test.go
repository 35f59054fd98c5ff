package matfile

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// vecValues are hard cases for exact text round trips, widest forms included.
var vecValues = []float64{
	0, math.Copysign(0, -1), 1, -2.2250738585072014e-308, math.MaxFloat64, -math.MaxFloat64,
	math.SmallestNonzeroFloat64, -1.2345678901234567e-300, 0.1, 1.0 / 3, -123456789012345678,
}

func TestVecLineWidth(t *testing.T) {
	for _, v := range vecValues {
		if s := strconv.FormatFloat(v, 'g', -1, 64); len(s) > vecLineWidth-1 {
			t.Errorf("%s is %d bytes, line width %d", s, len(s), vecLineWidth)
		}
	}
}

// testVector is the global vector of length n used by the round-trip test.
func testVector(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		if i < len(vecValues) {
			x[i] = vecValues[i]
		} else {
			x[i] = math.Sin(float64(i)) * math.Pow(10, float64(i%40-20))
		}
	}
	return x
}

// readRefVector is the simplest serial reading of a Matrix Market array vector.
func readRefVector(t *testing.T, path string) (banner, size string, x []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	banner = sc.Text()
	sc.Scan()
	size = sc.Text()
	for sc.Scan() {
		v, err := strconv.ParseFloat(strings.TrimSpace(sc.Text()), 64)
		if err != nil {
			t.Fatal(err)
		}
		x = append(x, v)
	}
	return banner, size, x
}

// TestVectorRoundTrip writes a vector from the balanced partition and reads it
// back under another partition that has an empty stripe; the bits must match.
func TestVectorRoundTrip(t *testing.T) {
	const n = 1000
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			dir := sharedDir(t, c)
			path := filepath.Join(dir, "x.mtx")
			x := testVector(n)
			part := dsmat.NewPartition(n, np)
			lo, hi := part.Range(c.Rank())
			if err := WriteVector(c, path, part, x[lo:hi]); err != nil {
				t.Fatal(err)
			}
			if c.Rank() == 0 {
				banner, size, got := readRefVector(t, path)
				if banner != "%%MatrixMarket matrix array real general" || size != "1000 1" || len(got) != n {
					t.Errorf("file starts %q, %q and holds %d values", banner, size, len(got))
				}
				for i := range min(n, len(got)) {
					if math.Float64bits(got[i]) != math.Float64bits(x[i]) {
						t.Errorf("file value %d = %v, want %v", i, got[i], x[i])
						break
					}
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 1 {
					t.Errorf("%d files in the output directory, want 1", len(entries))
				}
			}
			other := dsmat.Partition{Offsets: []int64{0, n}}
			if np == 3 {
				other = dsmat.Partition{Offsets: []int64{0, 0, n - 5, n}}
			}
			got, err := ReadVector(c, path, other)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi = other.Range(c.Rank())
			if len(got) != int(hi-lo) {
				t.Fatalf("rank %d read %d values, want %d", c.Rank(), len(got), hi-lo)
			}
			for i, v := range got {
				if math.Float64bits(v) != math.Float64bits(x[lo+int64(i)]) {
					t.Errorf("value %d = %v, want %v", lo+int64(i), v, x[lo+int64(i)])
					break
				}
			}
		})
	}
}

// TestVectorsRoundTrip writes three columns from one partition and reads
// them back under another with an empty stripe (each rank's share of the
// file then crosses column boundaries); the file stores the columns one
// after the other, and ReadVector refuses it.
func TestVectorsRoundTrip(t *testing.T) {
	const n, k = 100, 3
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			path := filepath.Join(sharedDir(t, c), "x.mtx")
			cols := testVector(n * k) // column j is cols[j*n:(j+1)*n]
			block := func(lo, hi int64) []float64 {
				out := make([]float64, 0, (hi-lo)*k)
				for i := lo; i < hi; i++ {
					for j := range int64(k) {
						out = append(out, cols[j*n+i])
					}
				}
				return out
			}
			part := dsmat.NewPartition(n, np)
			lo, hi := part.Range(c.Rank())
			if err := WriteVectors(c, path, part, block(lo, hi), k); err != nil {
				t.Fatal(err)
			}
			if c.Rank() == 0 {
				_, size, got := readRefVector(t, path)
				if size != "100 3" || len(got) != n*k {
					t.Fatalf("size line %q, %d values", size, len(got))
				}
				for e := range got {
					if got[e] != cols[e] {
						t.Fatalf("file value %d = %v, want %v (columns one after the other)", e, got[e], cols[e])
					}
				}
			}
			other := dsmat.Partition{Offsets: []int64{0, n}}
			if np == 3 {
				other = dsmat.Partition{Offsets: []int64{0, 0, 7, n}}
			}
			got, gotK, err := ReadVectors(c, path, other)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi = other.Range(c.Rank())
			want := block(lo, hi)
			if gotK != k || len(got) != len(want) {
				t.Fatalf("read %d values in %d columns, want %d in %d", len(got), gotK, len(want), k)
			}
			for e := range got {
				if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
					t.Fatalf("rank %d value %d = %v, want %v", c.Rank(), e, got[e], want[e])
				}
			}
			if _, err := ReadVector(c, path, other); err == nil || !strings.Contains(err.Error(), "only single-column") {
				t.Errorf("ReadVector of 3 columns: %v", err)
			}
		})
	}
}

func TestVectorErrors(t *testing.T) {
	const arr = "%%MatrixMarket matrix array real general\n"
	cases := []struct{ name, text, err string }{
		{"long.mtx", arr + "% c\n5 1\n1\n2\n3\n4\n5\n", "long.mtx line 3: vector has 5 rows, the matrix has 4"},
		{"cols.mtx", arr + "2 2\n1\n2\n3\n4\n", "cols.mtx line 2: array has 2 columns; only single-column vectors (n x 1) are supported"},
		{"coord.mtx", "%%MatrixMarket matrix coordinate real general\n4 1 1\n1 1 1\n", `coord.mtx line 1: coordinate general file is not a vector, want "array real general"`},
		{"few.mtx", arr + "4 1\n1\n2\n3\n", "few.mtx line 2: size line declares 4 values, the file holds 3"},
		{"many.mtx", arr + "4 1\n1\n2\n3\n4\n5\n", "many.mtx line 2: size line declares 4 values, the file holds 5"},
		{"bad.mtx", arr + "4 1\n1\n2\n3 3\n4\n", `bad.mtx line 5: unexpected extra field "3"`},
		{"nan.mtx", arr + "4 1\n1\n2\n3\nnan\n", `nan.mtx line 6: value "nan" is not finite`},
	}
	// several columns (ReadVectors)
	blockCases := []struct{ name, text, err string }{
		{"few2.mtx", arr + "4 2\n1\n2\n3\n4\n5\n6\n7\n", "few2.mtx line 2: size line declares 8 values, the file holds 7"},
		{"zero.mtx", arr + "4 0\n", "zero.mtx line 2: array has 0 columns; need at least one"},
		{"nan2.mtx", arr + "4 2\n1\n2\n3\n4\n5\ninf\n7\n8\n", `nan2.mtx line 8: value "inf" is not finite`},
	}
	files := map[string]string{}
	for _, tc := range append(cases, blockCases...) {
		files[tc.name] = tc.text
	}
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		dir := sharedDir(t, c)
		writeFiles(t, c, dir, files)
		part := dsmat.NewPartition(4, 2)
		for _, tc := range cases {
			_, err := ReadVector(c, filepath.Join(dir, tc.name), part)
			mpitest.CheckCollectiveError(t, c, tc.name, err, tc.err)
		}
		for _, tc := range blockCases {
			_, _, err := ReadVectors(c, filepath.Join(dir, tc.name), part)
			mpitest.CheckCollectiveError(t, c, tc.name, err, tc.err)
		}

		// a failed write leaves neither the file nor a temporary one
		path := filepath.Join(dir, "out.mtx")
		local := []float64{1, 2}
		if c.Rank() == 1 {
			local[1] = math.Inf(1)
		}
		err := WriteVector(c, path, part, local)
		mpitest.CheckCollectiveError(t, c, "inf", err, "write "+path+": entry 3 is +Inf")
		err = WriteVector(c, path, part, []float64{1, 2}[:c.Rank()+1])
		mpitest.CheckCollectiveError(t, c, "length", err, "write "+path+": rank 0 holds 1 values, the partition gives it 2")
		err = WriteVector(c, filepath.Join(dir, "nodir", "x.mtx"), part, []float64{1, 2})
		mpitest.CheckCollectiveError(t, c, "nodir", err, "no such file or directory")
		if entries, _ := os.ReadDir(dir); len(entries) != len(files) {
			t.Errorf("%d files in the directory after failed writes, want %d", len(entries), len(files))
		}
	})
}
