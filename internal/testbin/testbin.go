// Package testbin builds a program once for the tests of a package that run
// it as users do (under mpirun), and removes it when they end.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main is a TestMain: it builds the Go package in dir (relative to the test's
// package) as an executable, hands its path to use, runs the tests and exits
// with their status. A failed build fails the whole run. Where
// $FSAI_TESTBIN names a folder, the program is taken from there, built
// beforehand under the same name: on a machine without a Go toolchain, such
// as a GPU machine that runs test binaries built elsewhere.
func Main(m *testing.M, dir string, use func(path string)) {
	if prebuilt := os.Getenv("FSAI_TESTBIN"); prebuilt != "" {
		path := filepath.Join(prebuilt, filepath.Base(mustAbs(dir)))
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintf(os.Stderr, "FSAI_TESTBIN: %v\n", err)
			os.Exit(1)
		}
		use(path)
		os.Exit(m.Run())
	}
	tmp, err := os.MkdirTemp("", "fsai-testbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	path := filepath.Join(tmp, filepath.Base(mustAbs(dir)))
	build := exec.Command("go", "build", "-o", path, dir)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n", dir, err)
	} else {
		use(path)
		code = m.Run()
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

func mustAbs(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	return abs
}
