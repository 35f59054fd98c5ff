package cpu

import (
	"fmt"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/backend/backendtest"
)

// TestConformance runs the backend conformance suite on one thread and on
// three, where the long vectors split into several goroutine ranges.
func TestConformance(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprintf("threads%d", threads), func(t *testing.T) {
			backendtest.Run(t, func(*testing.T) backend.Backend { return New(threads) })
		})
	}
}
