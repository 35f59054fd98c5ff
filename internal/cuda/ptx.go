package cuda

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
)

// The checks of typed launch functions against the kernels' compiled
// signatures, which the tests of the packages that launch kernels run
// (TestLaunchSignatures in gpu and afsai/cudafsai): no GPU is needed, only
// NVRTC.

// PTXEntries returns the parameter types of every entry of a PTX module:
// ".u32", ".u64", ".f64", or ".b8[N]" for a struct of N bytes.
func PTXEntries(ptx string) map[string][]string {
	entry := regexp.MustCompile(`\.entry\s+(\w+)\s*\(([^)]*)\)`)
	param := regexp.MustCompile(`\.param\s+(?:\.align\s+\d+\s+)?(\.\w+)\s+\w+(\[\d+\])?`)
	out := make(map[string][]string)
	for _, m := range entry.FindAllStringSubmatch(ptx, -1) {
		types := []string{}
		for _, p := range param.FindAllStringSubmatch(m[2], -1) {
			types = append(types, p[1]+p[2])
		}
		out[m[1]] = types
	}
	return out
}

// PTXParams returns the PTX parameter types that a typed launch function
// of type f passes (PTXEntries' form): ".u32" for an int32, ".u64" for an
// int64 or a uintptr, ".f64" for a float64, and for other types what
// kinds gives, where "" leaves the parameter out (a receiver, a launch
// configuration or selector); "unknown Go type T" for a type neither knows.
func PTXParams(f reflect.Type, kinds map[reflect.Type]string) []string {
	types := []string{}
	for i := range f.NumIn() {
		in := f.In(i)
		switch in {
		case reflect.TypeFor[int32]():
			types = append(types, ".u32")
		case reflect.TypeFor[int64](), reflect.TypeFor[uintptr]():
			types = append(types, ".u64")
		case reflect.TypeFor[float64]():
			types = append(types, ".f64")
		default:
			k, ok := kinds[in]
			if !ok {
				k = "unknown Go type " + in.String()
			}
			if k != "" {
				types = append(types, k)
			}
		}
	}
	return types
}

// MaxKernelParams is the most parameters a kernel launched through package
// gpu may take: the length of its kernelParams array, past which the driver
// would read pointers that are not there.
const MaxKernelParams = 24

// LaunchMismatches compares the kernels declared (by name) with the entries
// of a PTX module and with their typed launch functions (launchers, by
// kernel name), whose parameter types params gives (PTXParams' form), and
// returns a line per mismatch: a declared kernel missing from the PTX or
// without a launch function, a launch function whose parameters differ
// from its entry's, one for a kernel that is not declared, or a kernel of
// more than MaxKernelParams parameters.
func LaunchMismatches(ptx string, declared []string, launchers map[string]any, params func(reflect.Type) []string) []string {
	entries := PTXEntries(ptx)
	var out []string
	for _, name := range declared {
		want, ok := entries[name]
		if !ok {
			out = append(out, "kernel "+name+" missing from the PTX")
			continue
		}
		f, ok := launchers[name]
		if !ok {
			out = append(out, "kernel "+name+": no launch function in the test's table")
			continue
		}
		if got := params(reflect.TypeOf(f)); !slices.Equal(want, got) {
			out = append(out, fmt.Sprintf("kernel %s: PTX parameters %v, launch function passes %v", name, want, got))
		}
		if len(want) > MaxKernelParams {
			out = append(out, fmt.Sprintf("kernel %s: %d parameters, more than the %d a launch passes", name, len(want), MaxKernelParams))
		}
	}
	for name := range launchers {
		if !slices.Contains(declared, name) {
			out = append(out, "launch function for "+name+", which no kernel set declares")
		}
	}
	slices.Sort(out)
	return out
}
