package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// launcher starts an MPI program on a number of ranks.
type launcher struct {
	path          string
	srun          bool // SLURM's srun; otherwise Open MPI's mpirun/mpiexec
	extra         []string
	oversubscribe bool
	ranksPerNode  int
}

// newLauncher resolves the launcher the flags name. A missing launcher is a
// usage error: no run can start.
func newLauncher(c *common) (*launcher, error) {
	l := &launcher{extra: strings.Fields(c.launcherArgs), oversubscribe: c.oversubscribe, ranksPerNode: c.ranksPerNode}
	switch filepath.Base(c.launcher) {
	case "mpirun", "mpiexec":
	case "srun":
		l.srun = true
	default:
		return nil, usagef("flag -launcher: %q is not mpirun, mpiexec or srun", c.launcher)
	}
	path, err := exec.LookPath(c.launcher)
	if err != nil {
		hint := "install Open MPI (Debian: openmpi-bin) or load its module"
		if l.srun {
			hint = "srun exists only on SLURM clusters: use -launcher mpirun elsewhere"
		}
		return nil, usagef("launcher %s not found: %s", c.launcher, hint)
	}
	switch {
	case c.ranksPerNode < 0:
		return nil, usagef("flag -ranks-per-node: %d is negative", c.ranksPerNode)
	case c.ranksPerNode > 0 && !l.srun:
		return nil, usagef("flag -ranks-per-node applies to srun only (mpirun fills each host's slots in order already)")
	case c.oversubscribe && l.srun:
		return nil, usagef("flag -oversubscribe applies to mpirun only")
	}
	l.path = path
	return l, nil
}

// command returns the command line that runs prog with args on ranks ranks.
// mpirun gets --bind-to none: each rank runs its own worker threads, and the
// default binding of Open MPI (one core per rank) would pile them up.
func (l *launcher) command(ranks int, prog string, args ...string) []string {
	argv := []string{l.path}
	n := strconv.Itoa(ranks)
	if l.srun {
		argv = append(argv, "-n", n)
		if l.ranksPerNode > 0 {
			argv = append(argv, "-N", strconv.Itoa((ranks+l.ranksPerNode-1)/l.ranksPerNode))
		}
	} else {
		argv = append(argv, "-np", n, "--bind-to", "none")
		if l.oversubscribe {
			argv = append(argv, "--oversubscribe")
		}
	}
	argv = append(argv, l.extra...)
	argv = append(argv, prog)
	return append(argv, args...)
}

// execute runs argv with its output (stdout and stderr) going to logPath
// and returns the exit status. A run past timeout gets SIGTERM (which
// mpirun and srun forward to the ranks), then SIGKILL 30 s later; its status
// is then -1. err is set only when the command could not be run at all or
// was stopped; a non-zero exit is not an error here.
func execute(argv []string, logPath string, timeout time.Duration) (status int, err error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return -1, err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "# %s\n", strings.Join(argv, " "))

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return -1, fmt.Errorf("stopped after the -timeout of %v", timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// lastLine returns the last line the command wrote to the log at path that
// is not the launcher's: fsai-dist says what went wrong in one line, and
// mpirun then prints banners between lines of dashes, srun lines that
// start with "srun:". The log's first line is execute's own.
func lastLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	last, banner := "", false
	for _, line := range lines[1:] {
		line = strings.TrimSpace(line)
		switch {
		case line != "" && strings.Trim(line, "-") == "":
			banner = !banner
		case line == "" || banner || strings.HasPrefix(line, "srun:"):
		default:
			last = line
		}
	}
	return last
}
