package solver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoModule builds examples/go, a module of its own that depends on
// fsai-dist through a replace directive (docs/library.md), and runs it on
// two ranks: it must converge.
func TestGoModule(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
	heat := filepath.Join(t.TempDir(), "heat")
	build := exec.Command("go", "build", "-o", heat, ".")
	build.Dir = filepath.Join("..", "examples", "go")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in examples/go: %v\n%s", err, out)
	}
	run := exec.Command("mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", heat)
	run.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := run.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "converged true") {
		t.Errorf("examples/go on 2 ranks: %v\n%s", err, out)
	}
}
