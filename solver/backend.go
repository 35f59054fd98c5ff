package solver

import (
	"fmt"
	"runtime"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/afsai/cudafsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/spai"
	"github.com/fsai-dist/fsai-dist/spai/cudaspai"
)

// backends maps a backend name to what opens it for a rank: the CPU with
// o.Threads goroutines, or the GPU of the rank's node-local rank among
// nodeSize ranks on its node. "auto" opens "cuda" where the rank finds a
// GPU, else "cpu" (OpenBackend).
var backends = map[string]func(o BackendOptions, nodeRank, nodeSize int) (backend.Backend, error){
	"auto": nil,
	"cpu":  func(o BackendOptions, _, _ int) (backend.Backend, error) { return cpu.New(cpuThreads(o.Threads)), nil },
	"cuda": openCUDA,
}

// fsaiDevices maps a backend name to the FSAI set-up on that backend's
// device, which the FSAI preconditioners and their values-only updates run
// (afsai.Config.Device, set by fsaiConfig); a backend without an entry sets
// up on the CPU.
var fsaiDevices = map[string]func(be backend.Backend) afsai.Device{
	"cuda": onGPU(func(g *gpu.Backend) afsai.Device { return cudafsai.New(g) }),
}

// spaiDevices maps a backend name to the SPAI row computation on that
// backend's device (spai.Config.Device); a backend without an entry
// computes M's rows on the CPU.
var spaiDevices = map[string]func(be backend.Backend) spai.Device{
	"cuda": onGPU(func(g *gpu.Backend) spai.Device { return cudaspai.New(g) }),
}

// onGPU is the entry of a device registry whose set-up newDevice makes on
// the GPU of a CUDA backend: nil for a backend of another type.
func onGPU[D any](newDevice func(*gpu.Backend) D) func(backend.Backend) D {
	return func(be backend.Backend) D {
		if g, ok := be.(*gpu.Backend); ok {
			return newDevice(g)
		}
		var none D
		return none
	}
}

// spaiConfig is the SPAI configuration of params, on the device of be
// (spaiDevices) when onDevice is set.
func spaiConfig(be backend.Backend, params spai.Params, onDevice bool) spai.Config {
	cfg := spai.Config{Params: params}
	if devices := spaiDevices[be.Name()]; devices != nil && onDevice {
		cfg.Device = devices(be)
	}
	return cfg
}

// fsaiConfig returns cfg with the FSAI set-up on the device of be
// (fsaiDevices).
func fsaiConfig(be backend.Backend, cfg afsai.Config) afsai.Config {
	if devices := fsaiDevices[be.Name()]; devices != nil {
		cfg.Device = devices(be)
	}
	return cfg
}

// BackendOptions choose the backend of a rank.
type BackendOptions struct {
	// Name is "cpu", "cuda" or "auto" (CUDA when the rank finds a GPU,
	// else the CPU).
	Name string
	// Threads is the CPU backend's goroutines per rank; 0 takes all the
	// cores the rank may run on when the launcher bound it to a subset
	// (srun --cpus-per-task, mpirun --bind-to), else an equal share of the
	// node's cores among its ranks.
	Threads int
	// ShareGPU allows more ranks than GPUs on a node: ranks then share the
	// GPUs round-robin. Without it that is an error. Ranks that share a
	// GPU free the device memory of a finished set-up at once; a rank with
	// a GPU of its own keeps it for its next allocations
	// (gpu.Backend.KeepSpare).
	ShareGPU bool
	// HostHalos sends every halo through the host, also between GPUs of one
	// node, which otherwise exchange device to device (CUDA IPC over NVLink
	// or PCIe; backend.Peers). For comparisons and for nodes where IPC
	// misbehaves.
	HostHalos bool
}

// OpenBackend opens the backend o names for the calling rank; CUDA runs on
// the GPU of the rank's node-local rank. For "auto" on a rank without a
// usable GPU, why says what was missing. Collective over c (it finds the
// node-local ranks); the caller closes the backend. Ranks that share a node
// without being bound to cores of their own get an equal share of its cores
// for the host's parallel passes (parallel.Share sets GOMAXPROCS).
func OpenBackend(c *comm.Comm, o BackendOptions) (be backend.Backend, why string, err error) {
	nodeRank, nodeSize, err := c.NodeRank()
	if err != nil {
		return nil, "", err
	}
	parallel.Share(nodeSize)
	name := o.Name
	if name == "auto" {
		name = "cuda"
		if n, err := gpu.Available(); err != nil {
			name, why = "cpu", err.Error()
		} else if n == 0 {
			name, why = "cpu", "no GPU found"
		}
	}
	if open := backends[name]; open != nil {
		be, err := open(o, nodeRank, nodeSize)
		return be, why, err
	}
	return nil, "", fmt.Errorf("backend %q is not one of %v", o.Name, Backends)
}

// openCUDA opens the GPU of node-local rank nodeRank.
func openCUDA(o BackendOptions, nodeRank, nodeSize int) (backend.Backend, error) {
	dev, err := gpu.DeviceFor(nodeRank, o.ShareGPU)
	if err != nil {
		return nil, err
	}
	count, err := gpu.Available()
	if err != nil {
		return nil, err
	}
	be, err := gpu.Open(dev)
	if err != nil {
		return nil, err
	}
	be.SetPeers(!o.HostHalos)
	be.KeepSpare(nodeSize <= count)
	return be, nil
}

// cpuThreads resolves BackendOptions.Threads: 0 takes GOMAXPROCS, which
// parallel.Share has made the rank's share of the node.
func cpuThreads(threads int) int {
	if threads > 0 {
		return threads
	}
	return runtime.GOMAXPROCS(0)
}
