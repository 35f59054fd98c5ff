package cudafsai

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/gpu/gputest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// openGPU opens device 0 for a test and returns the FSAI set-up on it, or
// skips the test without a GPU (gputest.Open).
func openGPU(t testing.TB) *Device { return New(gputest.Open(t)) }

// readBack is ReadMatrix that fails the test on an error.
func readBack(t *testing.T, b *Device, m backend.Matrix) (*csr.Matrix[float64], []int32) {
	t.Helper()
	got, rowMap, err := b.ReadMatrix(m)
	if err != nil {
		t.Fatal(err)
	}
	return got, rowMap
}

// checkSameMatrix fails the test unless got and want are the same matrix,
// bit for bit.
func checkSameMatrix(t *testing.T, what string, got, want *csr.Matrix[float64]) {
	t.Helper()
	if d := testmatrices.Diff(got, want); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}
