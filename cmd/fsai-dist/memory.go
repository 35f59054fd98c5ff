package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/matfile"
)

// memory is the host memory a rank can have: the node's physical memory,
// or the limit of the control group the job runs in (SLURM's --mem) where
// lower, shared equally among the node's ranks. Requests far beyond it
// (a size typed with three zeros too many) are refused with a message
// instead of ending the rank in Go's out-of-memory crash.
type memory struct {
	node  float64 // bytes of the node, or of its control group
	ranks int     // the node's ranks
	limit float64 // bytes a rank may have by FSAI_RANK_MEMORY; +Inf if unset
}

// memoryVar names the environment variable that limits the memory each
// rank counts on below its share of the node: for a rank that shares its
// node with other work, and for tests of the checks on small inputs. It
// holds bytes (1e9, 4000000000); each rank reads its own (mpirun -x
// FSAI_RANK_MEMORY passes it to every node).
const memoryVar = "FSAI_RANK_MEMORY"

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
	limit, err := memoryLimit()
	return memory{node: node, ranks: ranks, limit: limit}, badInput(c.Agree(err))
}

// memoryLimit reads memoryVar: +Inf when it is unset or empty.
func memoryLimit() (float64, error) {
	s := os.Getenv(memoryVar)
	if s == "" {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 1) {
		return 0, fmt.Errorf("%s: %q is not a positive number of bytes", memoryVar, s)
	}
	return v, nil
}

// share is the bytes each rank of the node can have by the node's memory.
func (m memory) share() float64 { return m.node / float64(max(1, m.ranks)) }

// perRank is the bytes this rank can have.
func (m memory) perRank() float64 { return min(m.share(), m.limit) }

// check returns an error for flag if need bytes on this rank exceed its
// share; what says what needs them.
func (m memory) check(flag, what string, need float64) error {
	if need <= m.perRank() {
		return nil
	}
	source := fmt.Sprintf("%s on the node, shared by %d ranks", gigabytes(m.node), m.ranks)
	if m.limit < m.share() {
		source = fmt.Sprintf("%s=%g", memoryVar, m.limit)
	}
	return fmt.Errorf("flag -%s: %s: about %s on this rank, more than the %s it has (%s); use more ranks and nodes",
		flag, what, gigabytes(need), gigabytes(m.perRank()), source)
}

// checkMatrixFile refuses, before the matrix file at path is read, one
// whose stripe would not fit this rank's memory (see matrixBytes). Its
// size comes from the file's header, bounded by the file's length
// (matfile.ReadMatrixHeader), so that a short file whose header claims a
// huge matrix is refused by the reader, for its length, before anything of
// that size is allocated. Collective.
func checkMatrixFile(c *comm.Comm, path string, mem memory) error {
	h, err := matfile.ReadMatrixHeader(c, path)
	if err != nil {
		return err
	}
	entries, upTo := h.NNZ, ""
	if h.Symmetric {
		entries, upTo = 2*min(entries, math.MaxInt64/2), "up to "
	}
	rows := float64(dsmat.NewPartition(h.N, c.Size()).Size(c.Rank()))
	share := 0.0
	if h.N > 0 {
		share = float64(entries) * rows / float64(h.N)
	}
	what := fmt.Sprintf("%s: %d rows and %s%d entries", path, h.N, upTo, entries)
	return c.Agree(mem.check("matrix", what, matrixBytes(h.PETSc, rows, share, c.Size())))
}

// matrixBytes is the memory that reading a matrix file and building its
// blocks take on a rank whose stripe has rows rows and entries entries:
// the stripe and its CSR copy, as for a generated problem; or, for a
// Matrix Market file, more while its entries are collected as triplets
// (tripletBytes each) and the row pointers counted: on one rank the
// triplets and the stripe's columns and values they fill, on several the
// triplets the rank parsed, sends and receives, all held during the
// exchange.
func matrixBytes(petsc bool, rows, entries float64, np int) float64 {
	need := bytesPerRow*rows + bytesPerEntry*entries
	if petsc {
		return need
	}
	perEntry := float64(tripletBytes + 16)
	if np > 1 {
		perEntry = 3 * tripletBytes
	}
	return max(need, bytesPerRow*rows+perEntry*entries)
}

// checkColumns refuses, before any right-hand side is made or read,
// right-hand sides whose blocks (blocksPerRHS of them, 8 bytes an entry)
// would not fit this rank's memory with its rows rows: -nrhs generated
// ones, or as many as the columns of the -rhs and -x0 files, which their
// headers give, bounded by the files' lengths
// (matfile.ReadVectorsHeader); and a GMRES basis (-gmres.restart) that
// would not. Collective.
func checkColumns(c *comm.Comm, o *options, rows int, mem memory) error {
	if err := c.Agree(mem.check("nrhs", rhsBlocks(int64(o.nrhs), rows), rhsBytes(int64(o.nrhs), rows))); err != nil {
		return err
	}
	if o.solver.Method == "gmres" {
		what := fmt.Sprintf("the GMRES basis takes %d vectors of %d rows", o.solver.GMRESRestart+1, rows)
		if err := c.Agree(mem.check("gmres.restart", what, 8*float64(o.solver.GMRESRestart+1)*float64(rows))); err != nil {
			return err
		}
	}
	for _, f := range []struct{ flag, path string }{{"rhs", o.rhs}, {"x0", o.x0}} {
		if f.path == "" {
			continue
		}
		_, k, err := matfile.ReadVectorsHeader(c, f.path)
		if err != nil {
			return err
		}
		what := fmt.Sprintf("%s has %d columns: %s", f.path, k, rhsBlocks(k, rows))
		if err := c.Agree(mem.check(f.flag, what, rhsBytes(k, rows))); err != nil {
			return err
		}
	}
	return nil
}

func rhsBlocks(k int64, rows int) string {
	return fmt.Sprintf("%d right-hand sides take %d blocks of %d rows by %d columns", k, blocksPerRHS, rows, k)
}

func rhsBytes(k int64, rows int) float64 { return 8 * blocksPerRHS * float64(rows) * float64(k) }

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
