package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSetEfficiency(t *testing.T) {
	rec := func(ranks int, setup, solve, iter float64) record {
		return record{ranks: ranks, rep: &report{SetupS: setup, SolveS: solve, IterS: iter}}
	}
	// the smallest rank count failed: the reference is the next one
	recs := []record{{ranks: 1}, rec(2, 4, 6, 0.1), rec(4, 2, 4, 0.04), rec(8, 2, 0, 0)}

	setEfficiency(recs, false) // strong: T(2)*2 / (T(N)*N)
	for _, c := range []struct {
		i    int
		got  float64
		want float64
	}{
		{1, recs[1].eff.total, 1}, {2, recs[2].eff.total, 10 * 2 / (6.0 * 4)},
		{2, recs[2].eff.setup, 4 * 2 / (2.0 * 4)}, {2, recs[2].eff.solve, 6 * 2 / (4.0 * 4)},
		{2, recs[2].eff.iter, 0.1 * 2 / (0.04 * 4)}, {3, recs[3].eff.setup, 4 * 2 / (2.0 * 8)},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("strong, record %d: %g, want %g", c.i, c.got, c.want)
		}
	}
	if !math.IsNaN(recs[0].eff.total) || !math.IsNaN(recs[3].eff.solve) || !math.IsNaN(recs[3].eff.iter) {
		t.Errorf("efficiency of a failed run or a zero time is %+v, %+v; want NaN", recs[0].eff, recs[3].eff)
	}

	setEfficiency(recs, true) // weak: T(2) / T(N)
	if got, want := recs[2].eff.total, 10/6.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("weak: %g, want %g", got, want)
	}
}

func TestGridSize(t *testing.T) {
	for _, c := range []struct {
		rows  int64
		ranks int
		want  int
	}{{8000, 1, 20}, {8000, 2, 25}, {500, 2, 10}, {1771561, 1, 121}, {1771561, 8, 242}} {
		if got := gridSize(c.rows, c.ranks); got != c.want {
			t.Errorf("gridSize(%d, %d) = %d, want %d", c.rows, c.ranks, got, c.want)
		}
	}
}

func TestLauncherCommand(t *testing.T) {
	mpirun := &launcher{path: "/usr/bin/mpirun", oversubscribe: true, extra: []string{"-x", "FOO"}}
	srun := &launcher{path: "srun", srun: true, ranksPerNode: 4}
	for _, c := range []struct {
		got  []string
		want string
	}{
		{mpirun.command(2, "fsai-dist", "-v"), "/usr/bin/mpirun -np 2 --bind-to none --oversubscribe -x FOO fsai-dist -v"},
		{srun.command(6, "fsai-dist"), "srun -n 6 -N 2 fsai-dist"},
		{srun.command(4, "fsai-dist"), "srun -n 4 -N 1 fsai-dist"},
	} {
		if got := strings.Join(c.got, " "); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// lastLine finds fsai-dist's message under mpirun's banner and srun's lines.
func TestLastLine(t *testing.T) {
	log := "# mpirun -np 2 fsai-dist\nfsai-dist: rank 1: read A.mtx line 7: bad value\n" +
		"-----\nPrimary job terminated normally, but 1 process returned\n-----\n\n" +
		"srun: error: node1: task 1: Exited with exit code 2\n"
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := lastLine(path), "fsai-dist: rank 1: read A.mtx line 7: bad value"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestTicks125(t *testing.T) {
	for _, c := range []struct {
		lo, hi   float64
		min, max float64
		labels   []string
	}{
		{0.013, 0.04, 0.01, 0.05, []string{"0.01", "0.02", "0.05"}},
		{3, 3, 2, 5, []string{"2", "5"}},
		{2, 2, 1, 5, []string{"1", "2", "5"}},
		{0.0009, 1.2, 0.0005, 2, []string{"0.001", "0.01", "0.1", "1"}}, // over three decades: powers of ten
	} {
		ticks, min, max := ticks125(c.lo, c.hi)
		var labels []string
		for _, tk := range ticks {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if math.Abs(min-c.min) > 1e-12*c.min || math.Abs(max-c.max) > 1e-12*c.max || !slices.Equal(labels, c.labels) {
			t.Errorf("ticks125(%g, %g) = %v, %g, %g; want %v, %g, %g", c.lo, c.hi, labels, min, max, c.labels, c.min, c.max)
		}
	}
}

func TestCountLabel(t *testing.T) {
	for v, want := range map[float64]string{512: "512", 8000: "8k", 15625: "15.6k", 1771561: "1.77M", 9.07e8: "907M", 2e9: "2G"} {
		if got := countLabel(v); got != want {
			t.Errorf("countLabel(%g) = %q, want %q", v, got, want)
		}
	}
}

// Plots of runs that reported no positive time or iteration (maxit 0) are
// written, empty, rather than failing.
func TestPlotWithoutTimes(t *testing.T) {
	dir := t.TempDir()
	recs := []record{{ranks: 1, rep: &report{N: 8}}, {ranks: 2, rep: &report{N: 8}}}
	files, err := plotStudy(dir, "empty", recs, true)
	if err != nil || len(files) != 4 {
		t.Fatalf("plots %v, error %v; want 4 plots", files, err)
	}
}
