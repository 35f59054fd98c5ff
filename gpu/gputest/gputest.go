// Package gputest opens a GPU for the tests of packages that compute on it
// (afsai/cudafsai, spai/cudaspai), skipping the test where there is none.
package gputest

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/gpu"
)

// Open opens device 0 for t, or skips t without a GPU; t fails if the
// backend's Close reports an error at its end.
func Open(t testing.TB) *gpu.Backend {
	t.Helper()
	Need(t)
	be, err := gpu.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return be
}

// Need skips t where there is no GPU, without opening one: for a test
// whose ranks (package mpitest) open it each.
func Need(t testing.TB) {
	t.Helper()
	n, err := gpu.Available()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	if n == 0 {
		t.Skip("no GPU: the driver sees no device")
	}
}
