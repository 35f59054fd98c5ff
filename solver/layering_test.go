package solver_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestThinLayers: the command line and the C API reach the methods, the
// preconditioners and the backends only through package solver, whose
// registries are then the one place that names them.
func TestThinLayers(t *testing.T) {
	const module = "github.com/fsai-dist/fsai-dist/"
	forbidden := []string{"afsai", "spai", "spai/cudaspai", "pcg", "precond", "cpu", "gpu"}
	for _, dir := range []string{"../cmd/fsai-dist", "../capi"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				t.Skipf("no sources beside the test binary: %s", dir)
			}
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, pkg := range forbidden {
					if path == module+pkg {
						t.Errorf("%s imports %s: it must go through package solver", file, pkg)
					}
				}
			}
		}
	}
}
