// Package kernels holds the CUDA C sources of fsai-dist, embedded in the
// binary so that package gpu can compile them with NVRTC at run time for the
// GPU it finds (no CUDA toolkit is needed to build).
//
// The sources form one translation unit: the headers *.cuh (shared device
// helpers and types) in name order first, then every *.cu file in name
// order. Each file is one concern and every kernel is extern "C" so that its
// name in the compiled module is the name written here. Sources must compile with NVRTC 11.2 and later: no
// language or library features newer than CUDA 11.2.
package kernels

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.cuh *.cu
var files embed.FS

// Source returns the translation unit that package gpu compiles: the shared
// headers followed by every .cu file. #line directives keep the file names and
// line numbers in compiler messages those of the files here.
func Source() string { return join("*.cuh", "*.cu") }

// Headers returns the shared headers alone, in the order Source has them:
// the definitions of the structs that Go passes kernels by value, which a
// layout probe (package gpu, Raw.CheckLayout) compiles without the kernels.
func Headers() string { return join("*.cuh") }

// join returns the files that match each pattern in turn, in name order,
// each after a #line directive.
func join(patterns ...string) string {
	var b strings.Builder
	for _, pattern := range patterns {
		// The calls read the embedded tree, fixed at build time: they
		// cannot fail.
		names, _ := fs.Glob(files, pattern)
		sort.Strings(names)
		for _, name := range names {
			data, _ := files.ReadFile(name)
			fmt.Fprintf(&b, "#line 1 \"%s\"\n%s\n", name, data)
		}
	}
	return b.String()
}
