package parallel

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Share gives this process its share of the node's cores when the ranks
// on a node were not bound to cores of their own (mpirun --bind-to none):
// Go takes GOMAXPROCS from the CPUs a process may run on, so every such
// rank would run its parallel passes on all the node's cores at once (8
// ranks on the 128 cores of an 8-GPU node: 1024 threads). When this process
// may run on every online CPU, there are several ranks on the node and the
// environment does not set GOMAXPROCS, Share sets it to the CPUs divided by
// ranksOnNode (at least 1). Ranks bound to cores of their own (SLURM's
// --cpus-per-task, mpirun's binding) keep what their binding gives them.
// It returns GOMAXPROCS.
func Share(ranksOnNode int) int {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	online := -1
	if err == nil {
		online = countCPUs(strings.TrimSpace(string(data)))
	}
	if n := shareOf(runtime.NumCPU(), online, ranksOnNode, os.Getenv("GOMAXPROCS") != ""); n != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
	}
	return runtime.GOMAXPROCS(0)
}

// shareOf is Share's decision for a process that may run on visible CPUs
// of online ones (-1: unknown), among ranks on its node, with or without
// GOMAXPROCS set in the environment.
func shareOf(visible, online, ranks int, set bool) int {
	if set || ranks < 2 || visible != online {
		return runtime.GOMAXPROCS(0)
	}
	return max(1, visible/ranks)
}

// countCPUs counts the CPUs of a Linux CPU list ("0-63,128-191"), -1 when
// it cannot read it.
func countCPUs(list string) int {
	n := 0
	for _, r := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return -1
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return -1
			}
		}
		n += b - a + 1
	}
	return n
}
