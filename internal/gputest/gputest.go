// Package gputest opens the GPUs that multi-rank tests run on.
package gputest

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/gpu"
)

// OpenRank opens the GPU of this rank's node-local rank (shared when ranks
// outnumber GPUs); the caller closes it.
func OpenRank(t *testing.T, c *comm.Comm) *gpu.Backend {
	t.Helper()
	nodeRank, _, err := c.NodeRank()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := gpu.DeviceFor(nodeRank, true)
	if err != nil {
		t.Fatal(err)
	}
	be, err := gpu.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	return be
}
