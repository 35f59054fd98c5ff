package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fsai-dist/fsai-dist/comm"
)

// memory is the host memory a rank can have: the node's physical memory,
// or the limit of the control group the job runs in (SLURM's --mem) where
// lower, shared equally among the node's ranks. Requests far beyond it
// (a size typed with three zeros too many) are refused with a message
// instead of ending the rank in Go's out-of-memory crash.
type memory struct {
	node  float64 // bytes of the node, or of its control group
	ranks int     // the node's ranks
}

// rankMemory finds the memory of this rank. Collective (the node's ranks
// are counted); where the node's memory cannot be read, it is unlimited.
func rankMemory(c *comm.Comm) (memory, error) {
	_, ranks, err := c.NodeRank()
	if err != nil {
		return memory{}, err
	}
	node := math.Inf(1)
	for _, f := range []func() (float64, bool){physicalMemory, cgroupLimit} {
		if v, ok := f(); ok {
			node = min(node, v)
		}
	}
	return memory{node: node, ranks: ranks}, nil
}

// perRank is the bytes each rank of the node can have.
func (m memory) perRank() float64 { return m.node / float64(max(1, m.ranks)) }

// check returns an error for flag if need bytes on this rank exceed its
// share; what says what needs them.
func (m memory) check(flag, what string, need float64) error {
	if need <= m.perRank() {
		return nil
	}
	return fmt.Errorf("flag -%s: %s: about %s on this rank, more than the %s it has (%s on the node, shared by %d ranks); use more ranks and nodes",
		flag, what, gigabytes(need), gigabytes(m.perRank()), gigabytes(m.node), m.ranks)
}

func gigabytes(b float64) string { return fmt.Sprintf("%.3g GB", b/1e9) }

// physicalMemory reads MemTotal from /proc/meminfo.
func physicalMemory() (float64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

// cgroupLimit reads the memory limit of the process's control group
// (version 2, else version 1); "max" or a huge number means none.
func cgroupLimit() (float64, bool) {
	paths := []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if own, ok := strings.CutPrefix(line, "0::"); ok && own != "/" {
				paths = append([]string{"/sys/fs/cgroup" + own + "/memory.max"}, paths...)
			}
		}
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
		if err == nil && v < 1<<60 {
			return v, true
		}
	}
	return 0, false
}
