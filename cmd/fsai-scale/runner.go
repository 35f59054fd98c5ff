package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// runner launches the runs of a study and keeps their reports and logs
// under out/runs.
type runner struct {
	launch  *launcher
	bin     string // fsai-dist
	out     string
	timeout time.Duration
}

// newRunner checks that the launcher and fsai-dist exist and creates the
// output directory.
func (c *common) newRunner() (*runner, error) {
	l, err := newLauncher(c)
	if err != nil {
		return nil, err
	}
	bin, err := c.fsaiDist()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(c.out, "runs"), 0o755); err != nil {
		return nil, err
	}
	return &runner{launch: l, bin: bin, out: c.out, timeout: c.timeout}, nil
}

// path returns the path of a run's file runs/<name><ext> and removes what
// an earlier study left there, so that it cannot pass for this run's.
func (r *runner) path(name, ext string) (string, error) {
	p := filepath.Join(r.out, "runs", name+ext)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return p, nil
}

// run runs argv with its output in runs/<name>.log and returns the exit
// status and the log's path.
func (r *runner) run(name string, argv []string) (status int, logPath string, err error) {
	logPath = filepath.Join(r.out, "runs", name+".log")
	status, err = execute(argv, logPath, r.timeout)
	return status, logPath, err
}

// fsaiDist runs fsai-dist on ranks ranks with the matrix arguments source
// and then the user's passthrough arguments, its report in
// runs/<name>.json. A failed run is recorded with its reason, never
// returned as an error.
func (r *runner) fsaiDist(ranks int, problem, name string, source, passthrough []string) record {
	rec := record{ranks: ranks, problem: problem, status: -1}
	reportPath, err := r.path(name, ".json")
	if err != nil {
		rec.reason = err.Error()
		return rec
	}
	args := append(append(append([]string{}, source...), passthrough...), "-report", reportPath)
	status, logPath, err := r.run(name, r.launch.command(ranks, r.bin, args...))
	rec.status = status
	if err != nil {
		rec.reason = err.Error()
		return rec
	}
	rep, err := readReport(reportPath)
	switch {
	case err == nil:
		rec.rep, rec.reason = rep, rep.Reason
		if rep.Detail != "" {
			rec.reason += ": " + rep.Detail
		}
	case status != 0:
		rec.reason = fmt.Sprintf("exit status %d: %s", status, lastLine(logPath))
	default:
		rec.reason = err.Error()
	}
	return rec
}
