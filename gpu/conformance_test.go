package gpu

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/backend/backendtest"
)

// TestConformance runs the backend conformance suite on GPU 0; it skips
// without a GPU. The suite closes each backend it opens.
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return openUnclosed(t) })
}
