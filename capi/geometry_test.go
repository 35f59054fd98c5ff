package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsai-dist/fsai-dist/problem"
)

// TestGeometryC runs testdata/geometry.c at 1 and 2 ranks on the problem
// elasticity:6 (882 rows), which writeProblem hands it: with the nodes'
// coordinates given by fsai_matrix_set_geometry, aFSAI under the default
// options gets the rigid-body coarse space and solves A x = A w, w_i =
// sin(0.1 i), to the tolerance in fewer iterations than with the option
// coarse "off", and solves A x = A*1, a rigid translation, in one or two.
func TestGeometryC(t *testing.T) {
	dir := t.TempDir()
	compileC(t, dir, "testdata/geometry.c")
	writeProblem(t, filepath.Join(dir, "elasticity.bin"), "elasticity:6")
	for _, np := range []string{"1", "2"} {
		t.Run("np"+np, func(t *testing.T) { checkOK(t, dir, np, "./geometry_c") })
	}
}

// writeProblem writes every row of problem spec and its nodes' coordinates
// to path, in the machine's byte order: int64 n and nnz, the CSR arrays
// row_ptr (n+1 int64), cols (nnz int64) and vals (nnz float64), then the
// coordinates (3n float64), as testdata/geometry.c reads them.
func writeProblem(t *testing.T, path, spec string) {
	t.Helper()
	s, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	n := s.Rows()
	rows, err := s.Generate(0, n)
	if err != nil {
		t.Fatal(err)
	}
	coords, bs, ok := s.Geometry(0, n)
	if !ok || bs != 3 {
		t.Fatalf("%s: geometry %v, block size %d", spec, ok, bs)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range []any{[]int64{n, rows.NNZ()}, rows.RowPtr, rows.Col, rows.Val, coords} {
		if err == nil {
			err = binary.Write(f, binary.NativeEndian, data)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}
