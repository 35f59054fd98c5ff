package matfile

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// petscBytes is the simplest serial encoding of a PETSc binary matrix.
func petscBytes(classID, m, n, nz int32, rowLens, cols []int32, vals []float64) []byte {
	var b bytes.Buffer
	for _, x := range [][]int32{{classID, m, n, nz}, rowLens, cols} {
		binary.Write(&b, binary.BigEndian, x)
	}
	binary.Write(&b, binary.BigEndian, vals)
	return b.Bytes()
}

// refPETSc encodes a reference matrix, rows with sorted columns.
func refPETSc(ref refMatrix) []byte {
	var lens, cols []int32
	var vals []float64
	for _, row := range ref.rows {
		lens = append(lens, int32(len(row)))
		keys := make([]int64, 0, len(row))
		for j := range row {
			keys = append(keys, j)
		}
		slices.Sort(keys)
		for _, j := range keys {
			cols = append(cols, int32(j))
			vals = append(vals, row[j])
		}
	}
	return petscBytes(1211216, int32(ref.n), int32(ref.n), int32(len(cols)), lens, cols, vals)
}

// TestPETScRoundTrip reads test matrices from Matrix Market files, writes
// them as PETSc binary, checks the bytes against a serial encoding of the
// reference and reads them back with ReadPETSc and ReadMatrix. The
// nonsymmetric matrices (general files, most with an unsymmetric pattern)
// come through entry for entry as stored, on 1 and 3 ranks.
func TestPETScRoundTrip(t *testing.T) {
	names := []string{"LFAT5.mtx", "bcsstk01.mtx", "nos6.mtx", "pyamg_bar.mtx", "spe10_layer1_tpfa.mtx"}
	nonsym, _ := filepath.Glob(filepath.Join(matrixDir, "nonsym", "*.mtx"))
	for _, path := range nonsym {
		names = append(names, filepath.Join("nonsym", filepath.Base(path)))
	}
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			dir := sharedDir(t, c)
			unsymmetric := 0
			for _, name := range names {
				ref := readRefMatrix(t, filepath.Join(matrixDir, name))
				if ref.unsymmetricPattern() {
					unsymmetric++
				}
				r, _, err := ReadMTX(c, filepath.Join(matrixDir, name))
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, filepath.Base(name)+".petsc")
				if err := WritePETSc(c, path, r); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if c.Rank() == 0 {
					got, err := os.ReadFile(path)
					if err != nil || !bytes.Equal(got, refPETSc(ref)) {
						t.Errorf("%s: written file (%d bytes, %v) differs from the reference encoding", name, len(got), err)
					}
				}
				for _, read := range []func(*comm.Comm, string) (*dsmat.Rows, dsmat.Partition, error){ReadPETSc, ReadMatrix} {
					back, part, err := read(c, path)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					checkStripe(t, name, c, ref, back, part)
				}
			}
			if len(nonsym) > 0 && unsymmetric == 0 {
				t.Errorf("none of %d nonsymmetric matrices has an unsymmetric pattern", len(nonsym))
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(names) {
				t.Errorf("%d files in the output directory, want %d (temporary files left?)", len(entries), len(names))
			}
		})
	}
}

func TestReadPETScErrors(t *testing.T) {
	lens, cols, vals := []int32{1, 2}, []int32{0, 0, 1}, []float64{2, -1, 3}
	good := petscBytes(1211216, 2, 2, 3, lens, cols, vals)
	cases := []struct {
		name string
		data []byte
		err  string
	}{
		{"class", petscBytes(1211214, 2, 2, 3, lens, cols, vals), "class id 1211214 is not a PETSc matrix (1211216)"},
		{"int64", petscBytes(0, 1211216, 0, 2, lens, cols, vals), "PETSc file with 64-bit indices not supported"},
		{"header", good[:10], "truncated: the file ends before byte 16"},
		{"lens", good[:20], "truncated: 20 bytes, 2 row lengths need 24"},
		{"values", good[:len(good)-1], "truncated: 59 bytes, a 2 x 2 matrix with 3 entries needs 60"},
		{"negative", petscBytes(1211216, 2, 2, -3, lens, cols, vals), "negative size in header: 2 x 2 with -3 entries"},
		{"rect", petscBytes(1211216, 2, 3, 3, lens, cols, vals), "matrix is 2 x 3, not square"},
		{"rowlen", petscBytes(1211216, 2, 2, 3, []int32{1, -2}, cols, vals), "row 1 has length -2, want 0..2"},
		{"nz", petscBytes(1211216, 2, 2, 4, lens, cols, vals), "row lengths add up to 3 entries, the header says 4"},
		{"column", petscBytes(1211216, 2, 2, 3, lens, []int32{0, 0, 2}, vals), "row 1: column 2 out of range [0,2)"},
		{"nan", petscBytes(1211216, 2, 2, 3, lens, cols, []float64{2, math.NaN(), 3}), "row 1 column 0: value NaN is not finite"},
		{"inf", petscBytes(1211216, 2, 2, 3, lens, cols, []float64{math.Inf(-1), 1, 3}), "row 0 column 0: value -Inf is not finite"},
		// row lengths that add up to more than 2^31-1 entries (which PETSc
		// writes as nz = 2^31-1) in a file that holds none of them
		{"huge", petscBytes(1211216, 46341, 46341, math.MaxInt32, slices.Repeat([]int32{46341}, 46341), nil, nil),
			"truncated: 185380 bytes cannot hold 2147488281 entries of 12 bytes"},
	}
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		dir := sharedDir(t, c)
		files := map[string]string{"good": string(append(slices.Clone(good), 0, 0, 0, 1))} // a trailing object is ignored
		for _, tc := range cases {
			files[tc.name] = string(tc.data)
		}
		writeFiles(t, c, dir, files)
		for _, tc := range cases {
			path := filepath.Join(dir, tc.name)
			_, _, err := ReadPETSc(c, path)
			mpitest.CheckCollectiveError(t, c, tc.name, err, "dsmat: read "+path+": "+tc.err)
		}
		r, _, err := ReadPETSc(c, filepath.Join(dir, "good"))
		if err != nil {
			t.Fatal(err)
		}
		want := [][]float64{{2}, {-1, 3}}[c.Rank()]
		if r.Count() != 1 || !slices.Equal(r.Val, want) {
			t.Errorf("rank %d: stripe %+v, want values %v", c.Rank(), *r, want)
		}
	})
}

// TestReadBEParts: readBE reads on several cores what one read gives, and
// a file that ends early is an error naming the byte.
func TestReadBEParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(7))
	const n = 1<<20 + 13
	data := make([]byte, 4*n)
	for i := range n {
		binary.BigEndian.PutUint32(data[4*i:], uint32(int32(i*7919-n)))
	}
	if k := parallel.Chunks((n + beGrain - 1) / beGrain); k < 4 {
		t.Fatalf("%d entries make %d parts, want 4 or more", n, k)
	}
	got := make([]int64, n-1)
	if err := readBE(bytes.NewReader(data), 4, got, 4, beInt32); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := int64(int32((i+1)*7919 - n)); v != want {
			t.Fatalf("entry %d: %d, want %d", i, v, want)
		}
	}
	err := readBE(bytes.NewReader(data[:4*n-6]), 0, make([]int64, n), 4, beInt32)
	if err == nil || !strings.Contains(err.Error(), "truncated: the file ends before byte") {
		t.Fatalf("short file: %v", err)
	}
}
