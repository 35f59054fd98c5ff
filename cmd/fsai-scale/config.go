package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// common are the flags every subcommand has: which rank counts, how to
// launch, where fsai-dist is and where the results go.
type common struct {
	ranks         rankList
	launcher      string
	launcherArgs  string
	ranksPerNode  int
	oversubscribe bool
	bin           string
	out           string
	timeout       time.Duration
}

func (c *common) register(fs *flag.FlagSet, defaultOut string) {
	c.ranks = rankList{1, 2}
	fs.Var(&c.ranks, "ranks", "comma-separated rank counts, e.g. 1,2,4,8")
	fs.StringVar(&c.launcher, "launcher", "mpirun", "MPI launcher: mpirun (or mpiexec, Open MPI) or srun (SLURM); a name in PATH or a path")
	fs.StringVar(&c.launcherArgs, "launcher-args", "", "extra launcher arguments, split at spaces (e.g. \"--mpi=pmix\" for srun)")
	fs.IntVar(&c.ranksPerNode, "ranks-per-node", 0, "srun only: pack the ranks onto ceil(ranks/K) nodes (0: srun's default spreads them over the allocation)")
	fs.BoolVar(&c.oversubscribe, "oversubscribe", false, "mpirun only: allow more ranks than cores (--oversubscribe)")
	fs.StringVar(&c.bin, "bin", "", "the fsai-dist binary (default: fsai-dist beside fsai-scale, else in PATH)")
	fs.StringVar(&c.out, "out", defaultOut, "output directory: runs/ (reports and logs), CSV and plots")
	fs.DurationVar(&c.timeout, "timeout", time.Hour, "time limit of one run; a run past it is stopped and recorded as failed")
}

// rankList is the value of -ranks: distinct positive counts, kept sorted.
type rankList []int

func (r *rankList) String() string {
	s := make([]string, len(*r))
	for i, n := range *r {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (r *rankList) Set(v string) error {
	var list rankList
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive rank count", f)
		}
		if slices.Contains(list, n) {
			return fmt.Errorf("rank count %d given twice", n)
		}
		list = append(list, n)
	}
	slices.Sort(list)
	*r = list
	return nil
}

// findProgram resolves the program a flag names. An explicit value must be
// an executable (a path, or a name in PATH); with none, rel is looked up
// beside the running executable, then its base name in PATH. The error says
// where it looked and what to do.
func findProgram(flagName, value, rel, hint string) (string, error) {
	if value != "" {
		path, err := exec.LookPath(value)
		if err != nil {
			return "", usagef("flag -%s: %s is not an executable: %v", flagName, value, err)
		}
		return path, nil
	}
	var tried []string
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), rel)
		if path, err := exec.LookPath(beside); err == nil {
			return path, nil
		}
		tried = append(tried, beside)
	}
	if path, err := exec.LookPath(filepath.Base(rel)); err == nil {
		return path, nil
	}
	tried = append(tried, filepath.Base(rel)+" in PATH")
	return "", usagef("%s not found (looked for %s): %s, or pass -%s", filepath.Base(rel), strings.Join(tried, " and "), hint, flagName)
}

// fsaiDist returns the fsai-dist binary to run.
func (c *common) fsaiDist() (string, error) {
	return findProgram("bin", c.bin, "fsai-dist", "build it with go build -o bin/fsai-dist ./cmd/fsai-dist")
}
