package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

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

// newCPU picks the threads of a rank: -threads if given; all the cores the
// rank may run on when the launcher bound it to a subset (srun
// --cpus-per-task, mpirun --bind-to); otherwise an equal share of the
// node's cores among its ranks.
func newCPU(o *options, nodeSize int) backend.Backend {
	threads := o.threads
	if threads <= 0 {
		threads = runtime.NumCPU() // the CPUs of this process's affinity mask
		if threads >= onlineCPUs() {
			threads = max(1, threads/max(1, nodeSize))
		}
	}
	return cpu.New(threads)
}

// onlineCPUs counts the node's online CPUs (/sys/devices/system/cpu/online,
// e.g. "0-31,64-95"); 0 when it cannot tell, which counts as unbound.
func onlineCPUs() int {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(data)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			return 0
		}
		n += b - a + 1
	}
	return n
}

func openCUDA(nodeRank int, o *options) (backend.Backend, error) {
	dev, err := gpu.DeviceFor(nodeRank, o.shareGPU)
	if err != nil {
		return nil, fmt.Errorf("flag -backend cuda: %w", err)
	}
	return gpu.Open(dev)
}
