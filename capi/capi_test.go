package main

import (
	"context"
	"fmt"
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

// lib is the directory of the shared library that TestMain builds, with
// fsai.h beside it; empty when go, mpicc or mpirun is missing.
var lib string

// TestMain builds the shared library once for the tests that run C programs
// against it, and removes it when they end.
func TestMain(m *testing.M) {
	code := 1
	dir, err := os.MkdirTemp("", "fsai-capi")
	if err == nil {
		err = buildLib(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildLib builds libfsai.so into dir and copies include/ there, unless a
// tool is missing (then lib stays empty and the tests skip).
func buildLib(dir string) error {
	for _, tool := range []string{"go", "mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil
		}
	}
	if err := copyInto(dir, "../include/fsai.h"); err != nil {
		return err
	}
	out, err := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "libfsai.so"), ".").CombinedOutput()
	if err != nil {
		return fmt.Errorf("build the library: %v\n%s", err, out)
	}
	lib = dir
	return nil
}

// copyInto copies files into dir. The sources are copied, so that go test's
// cache notices their changes.
func copyInto(dir string, files ...string) error {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// compileC compiles the C program src against the library into dir and
// returns the executable's name.
func compileC(t *testing.T, dir, src string) string {
	t.Helper()
	if lib == "" {
		t.Skip("go, mpicc or mpirun not on PATH")
	}
	if err := copyInto(dir, src); err != nil {
		t.Fatal(err)
	}
	exe := strings.TrimSuffix(filepath.Base(src), ".c") + "_c"
	run(t, dir, "mpicc", append([]string{"-Wall", "-std=c11", "-O2", "-I" + lib, filepath.Base(src), "-o", exe, "-lm"}, link()...)...)
	return exe
}

// link is the linker's arguments for the library.
func link() []string { return []string{"-L" + lib, "-lfsai", "-Wl,-rpath," + lib} }

// TestExamples compiles the C example (and the Fortran one where mpifort
// exists) against include/, and runs them under mpirun: each solves,
// updates values on the same pattern, solves again and checks its
// solutions, and prints "ok" last when all passed.
func TestExamples(t *testing.T) {
	dir := t.TempDir()
	compileC(t, dir, "../examples/c/solve.c")
	t.Run("c-np2-afsai", func(t *testing.T) { checkOK(t, dir, "2", "./solve_c", "12", "afsai", "cpu") })
	t.Run("c-np3-fsai", func(t *testing.T) { checkOK(t, dir, "3", "./solve_c", "10", "fsai", "cpu") })
	t.Run("c-np1-jacobi", func(t *testing.T) { checkOK(t, dir, "1", "./solve_c", "8", "jacobi", "cpu") })
	t.Run("fortran-np2", func(t *testing.T) {
		for _, tool := range []string{"mpifort", "gfortran"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s not on PATH", tool)
			}
		}
		if err := copyInto(dir, "../include/fsai.f90", "../examples/fortran/solve.f90"); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "mpifort", append([]string{"-Wall", "-O2", "-J", dir, "fsai.f90", "solve.f90", "-o", "solve_f"}, link()...)...)
		checkOK(t, dir, "2", "./solve_f")
	})
}

// TestOptionsC runs testdata/options.c at 1 and 2 ranks: an aFSAI
// parameter set through an options handle changes the solve, the stop
// reasons come as their codes, and bad options are refused by name.
func TestOptionsC(t *testing.T) {
	dir := t.TempDir()
	compileC(t, dir, "testdata/options.c")
	for _, np := range []string{"1", "2"} {
		t.Run("np"+np, func(t *testing.T) { checkOK(t, dir, np, "./options_c") })
	}
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
