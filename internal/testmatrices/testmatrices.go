// Package testmatrices finds the shared SPD test matrices (Matrix Market
// files) that tests of several packages solve or factor, and makes the
// generated ones they share.
package testmatrices

import (
	"fmt"
	"os"

	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/matfile"
	"github.com/fsai-dist/fsai-dist/problem"
)

// Dir returns the folder of the shared test matrices: $FSAI_MATRICES, or
// shared/matrices beside or above the repository; "" when there is none.
func Dir() string {
	if d := os.Getenv("FSAI_MATRICES"); d != "" {
		return d
	}
	for _, d := range []string{"../shared/matrices", "../../shared/matrices", "/work/shared/matrices"} {
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	return ""
}

// Missing is the message of a test skipped because Dir found no matrices.
const Missing = "shared test matrices not found; set FSAI_MATRICES"

// Diffusion returns the n^3 diffusion problem of package problem (7-point,
// random layered permeability, the default seed) as one CSR block.
func Diffusion(n int) (*csr.Matrix[float64], error) {
	return Problem(fmt.Sprintf("diffusion:%d", n))
}

// Problem returns the whole matrix of a problem spec of package problem
// ("elasticity:4") as one CSR block.
func Problem(spec string) (*csr.Matrix[float64], error) {
	r, err := problem.All(spec)
	if err != nil {
		return nil, err
	}
	m := &csr.Matrix[float64]{Rows: r.Count(), Cols: r.Count(), RowPtr: make([]int32, r.Count()+1),
		ColIdx: make([]int32, len(r.Col)), Val: r.Val}
	for i, p := range r.RowPtr {
		m.RowPtr[i] = int32(p)
	}
	for k, c := range r.Col {
		m.ColIdx[k] = int32(c)
	}
	return m, nil
}

// Generated distributes the problem spec of package problem over the
// ranks of c, balanced by rows, each rank generating its own, failing t on
// an error.
func Generated(t testing.TB, c *comm.Comm, spec string) *dsmat.Matrix {
	t.Helper()
	s, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	part := dsmat.NewPartition(s.Rows(), c.Size())
	rows, err := s.Generate(part.Range(c.Rank()))
	return distribute(t, c, part, rows, err)
}

// ReadDistributed reads a matrix file over the ranks of c, as the command
// line does, failing t on an error.
func ReadDistributed(t testing.TB, c *comm.Comm, path string) *dsmat.Matrix {
	t.Helper()
	rows, part, err := matfile.ReadMatrix(c, path)
	return distribute(t, c, part, rows, err)
}

// distribute makes the distributed matrix of this rank's rows under part,
// failing t on err, the error of reading them, or on one of its own.
func distribute(t testing.TB, c *comm.Comm, part dsmat.Partition, rows *dsmat.Rows, err error) *dsmat.Matrix {
	t.Helper()
	var A *dsmat.Matrix
	if err == nil {
		A, err = dsmat.New(c, part, rows)
	}
	if err != nil {
		t.Fatal(err)
	}
	return A
}

// Product returns M x on this rank's rows for x_i = 1 + (i mod 7) / 8
// (global i), failing t on an error: one product to compare two bindings
// of a matrix by.
func Product(t testing.TB, M *dsmat.Operator) []float64 {
	t.Helper()
	be, n, first := M.Backend(), M.Matrix().LocalRows(), M.Matrix().First()
	x, err := be.NewVector(n)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, err := be.NewVector(n)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	host := make([]float64, n)
	for i := range host {
		host[i] = 1 + float64((first+int64(i))%7)/8
	}
	be.Upload(x, host)
	if err := M.Apply(y, x); err != nil {
		t.Fatal(err)
	}
	if err := be.Download(host, y); err != nil {
		t.Fatal(err)
	}
	return host
}
