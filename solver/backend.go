package solver

import (
	"fmt"
	"runtime"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/gpu"
)

// backends lists the names OpenBackend accepts.
var backends = []string{"auto", "cpu", "cuda"}

// OpenBackend opens the backend name names for the calling rank: "cpu" with
// threads goroutines (0: the node's cores shared among the ranks of c on
// it), "cuda" on the GPU of the rank's node-local rank, or "auto": CUDA
// when the rank finds a GPU, else the CPU. Collective over c (it finds the
// node-local ranks); the caller closes the backend.
func OpenBackend(c *comm.Comm, name string, threads int) (backend.Backend, error) {
	nodeRank, nodeSize, err := c.NodeRank()
	if err != nil {
		return nil, fmt.Errorf("solver: open backend: %w", err)
	}
	if name == "auto" {
		name = "cpu"
		if n, err := gpu.Available(); err == nil && n > 0 {
			name = "cuda"
		}
	}
	switch name {
	case "cpu":
		if threads <= 0 {
			threads = max(1, runtime.NumCPU()/max(1, nodeSize))
		}
		return cpu.New(threads), nil
	case "cuda":
		dev, err := gpu.DeviceFor(nodeRank, false)
		if err != nil {
			return nil, fmt.Errorf("solver: open backend: %w", err)
		}
		return gpu.Open(dev)
	}
	return nil, fmt.Errorf("solver: backend %q is not one of %v", name, backends)
}
