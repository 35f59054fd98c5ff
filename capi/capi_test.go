package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mpiEnv lets mpirun run as root in containers on few cores (as
// internal/mpitest does).
var mpiEnv = []string{
	"OMPI_ALLOW_RUN_AS_ROOT=1",
	"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
	"OMPI_MCA_btl_vader_single_copy_mechanism=none",
	"OMPI_MCA_rmaps_base_oversubscribe=1",
}

// TestExamples builds the shared library, compiles the C example (and the
// Fortran one where mpifort exists) against include/, and runs them under
// mpirun: each solves, updates values on the same pattern, solves again and
// checks its solutions, and prints "ok" last when all passed.
func TestExamples(t *testing.T) {
	for _, tool := range []string{"go", "mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH", tool)
		}
	}
	dir := t.TempDir()
	// The sources are copied, so that go test's cache notices their changes.
	for _, f := range []string{"../include/fsai.h", "../include/fsai.f90", "../examples/c/solve.c", "../examples/fortran/solve.f90"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ".", "go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "libfsai.so"), ".")
	link := []string{"-L" + dir, "-lfsai", "-Wl,-rpath," + dir}
	run(t, dir, "mpicc", append([]string{"-Wall", "-std=c11", "-O2", "-I.", "solve.c", "-o", "solve_c", "-lm"}, link...)...)

	t.Run("c-np2-afsai", func(t *testing.T) { checkOK(t, dir, "2", "./solve_c", "12", "afsai", "cpu") })
	t.Run("c-np3-fsai", func(t *testing.T) { checkOK(t, dir, "3", "./solve_c", "10", "fsai", "cpu") })
	t.Run("c-np1-jacobi", func(t *testing.T) { checkOK(t, dir, "1", "./solve_c", "8", "jacobi", "cpu") })
	t.Run("fortran-np2", func(t *testing.T) {
		for _, tool := range []string{"mpifort", "gfortran"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s not on PATH", tool)
			}
		}
		run(t, dir, "mpifort", append([]string{"-Wall", "-O2", "-J", dir, "fsai.f90", "solve.f90", "-o", "solve_f"}, link...)...)
		checkOK(t, dir, "2", "./solve_f")
	})
}

// run runs a command in dir and fails the test with its output if it fails.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), mpiEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkOK runs an example on np ranks and checks that it ends with "ok".
func checkOK(t *testing.T, dir, np string, args ...string) {
	t.Helper()
	out := run(t, dir, "mpirun", append([]string{"-np", np, "--oversubscribe", "--bind-to", "none"}, args...)...)
	t.Logf("%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[len(lines)-1] != "ok" {
		t.Fatalf("the example did not end with ok:\n%s", out)
	}
}
