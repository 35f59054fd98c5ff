package main

import (
	"fmt"
	"runtime"

	"go.uber.org/zap"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/gpu"
)

// openBackend opens the backend -backend names. Each rank takes the GPU of
// its node-local rank; auto falls back to the CPU when no GPU is usable and
// says why in the log.
func openBackend(c *comm.Comm, o *options, log *zap.Logger) (backend.Backend, error) {
	nodeRank, nodeSize, err := c.NodeRank()
	if err != nil {
		return nil, err
	}
	switch o.backend {
	case "cpu":
		return newCPU(o, nodeSize), nil
	case "cuda":
		return openCUDA(nodeRank, o)
	}
	if n, err := gpu.Available(); err != nil || n == 0 {
		log.Info("backend auto: using the CPU", zap.String("why", noGPUReason(n, err)))
		return newCPU(o, nodeSize), nil
	}
	return openCUDA(nodeRank, o)
}

func noGPUReason(n int, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d GPUs found", n)
}

// newCPU shares the node's cores among the ranks on it unless -threads says
// otherwise.
func newCPU(o *options, nodeSize int) backend.Backend {
	threads := o.threads
	if threads <= 0 {
		threads = max(1, runtime.NumCPU()/max(1, nodeSize))
	}
	return cpu.New(threads)
}

func openCUDA(nodeRank int, o *options) (backend.Backend, error) {
	dev, err := gpu.DeviceFor(nodeRank, o.shareGPU)
	if err != nil {
		return nil, fmt.Errorf("flag -backend cuda: %w", err)
	}
	return gpu.Open(dev)
}
