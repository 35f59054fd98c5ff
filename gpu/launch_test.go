package gpu

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// launchers maps every kernel to its typed launch function.
var launchers = map[string]any{
	"axpby_cols": (*Backend).launchAxpbyCols, "mul_cols": (*Backend).launchMulCols,
	"dot_cols": (*Backend).launchDotCols, "dot_pair_cols": (*Backend).launchDotPairCols, "dot_many": (*Backend).launchDotMany,
	"update_rz_cols": (*Backend).launchUpdateRZCols, "update_xp_cols": (*Backend).launchUpdateXPCols,
	"gather": (*Backend).launchGather, "gather_f32": (*Backend).launchGatherF32,
	"dot": (*Backend).launchDot, "update_rz": (*Backend).launchUpdateRZ,
	"transpose_count": (*Backend).launchTransposeCount, "transpose_scan_tiles": (*Backend).launchScanTiles,
	"transpose_scan_sums": (*Backend).launchScanSums, "transpose_scan_add": (*Backend).launchScanAdd,
	"transpose_scatter_d": (*Backend).launchTransposeScatter, "transpose_scatter_s": (*Backend).launchTransposeScatter,
	"transpose_sort_d": (*Backend).launchTransposeSort, "transpose_sort_s": (*Backend).launchTransposeSort,
	"fill": (*Backend).launchFill, "axpby": (*Backend).launchAxpby, "mul": (*Backend).launchMul,
	"update_xp": (*Backend).launchUpdateXP,

	"fsai_init": (*fsaiLauncher).launchInit, "fsai_border": (*fsaiLauncher).launchBorder,
	"fsai_border_warp": (*fsaiLauncher).launchBorderWarp, "fsai_solve": (*fsaiLauncher).launchSolve,
	"fsai_solve_warp": (*fsaiLauncher).launchSolveWarp, "fsai_kept_counts": (*fsaiLauncher).launchKeptCounts,
	"fsai_assemble": (*fsaiLauncher).launchAssemble, "fsai_assemble_padded": (*fsaiLauncher).launchAssemblePadded,
	"fsai_compact": (*fsaiLauncher).launchCompact, "fsai_restore": (*fsaiLauncher).launchRestore,
	"fsai_static_filter": (*fsaiLauncher).launchStaticFilter,
	"fsai_seed":          fsaiKernels.launchSeed, "fsai_hops": fsaiKernels.launchHops,
	"fsai_interior_flags": fsaiKernels.launchInteriorFlags, "fsai_interior_split": fsaiKernels.launchInteriorSplit,
	"fsai_join_d": fsaiKernels.launchJoin, "fsai_join_s": fsaiKernels.launchJoin,
	"fsai_static_pattern8": (*fsaiLauncher).launchStaticPattern, "fsai_static_pattern32": (*fsaiLauncher).launchStaticPattern,
	"fsai_touches": fsaiKernels.launchTouches, "fsai_rows_count": fsaiKernels.launchRowsCount,
	"fsai_rows_copy": fsaiKernels.launchRowsCopy,
	"fsai_kapgrad8":  (*fsaiLauncher).launchKapgrad, "fsai_kapgrad32": (*fsaiLauncher).launchKapgrad,
	"fsai_sysgather": (*fsaiLauncher).launchSysgather, "fsai_sysgather_sorted": (*fsaiLauncher).launchSysgatherSorted,
}

func init() {
	for _, w := range spmvWidths {
		for _, p := range precisionSuffix {
			name := "spmv" + p + "_w" + strconv.Itoa(w)
			launchers[name], launchers[name+"_dot"] = (*Backend).launchSpMV, (*Backend).launchSpMVDot
		}
	}
	for _, c := range spmmPerLane {
		for _, p := range precisionSuffix {
			name := "spmm" + p + "_c" + strconv.Itoa(c)
			launchers[name], launchers[name+"_dot"] = (*Backend).launchSpMM, (*Backend).launchSpMMDot
		}
	}
}

// TestLayouts compiles the kernels with the asserts that the structs
// passed by value are laid out as their Go mirrors (layoutAsserts). NVRTC
// 12 and later refuse the asserts' constant offsets, so it runs with NVRTC
// 11 (the test machine's); the layout is the ABI's, the same for both.
func TestLayouts(t *testing.T) {
	nv := needNVRTC(t)
	if major, _, _ := strings.Cut(nv.Version(), "."); major != "11" {
		t.Skipf("the layout asserts need NVRTC 11, not %s", nv.Version())
	}
	if _, err := nv.Compile(kernelSource()+layoutAsserts(), kernelsName, cuda.Target{Arch: 80}); err != nil {
		t.Fatal(err)
	}
}

// TestLaunchSignatures compiles the kernels to PTX as Open does (no GPU
// needed) and checks that every declared kernel is an entry of the module, has a typed
// launch function, and that the function's kernel parameters match the
// entry's: the same count, and per parameter the PTX type its Go type
// stands for (int32 .u32; int64, uintptr .u64; float64 .f64; []float64 an
// FsaiCols of colChunk doubles; fsaiSetup, explicit or passed by an
// fsaiLauncher, an FsaiSetup of the Go struct's size).
func TestLaunchSignatures(t *testing.T) {
	nv := needNVRTC(t)
	t.Logf("%s, NVRTC %s, real architectures %v", nv.Lib(), nv.Version(), nv.Archs())
	ptx, err := nv.Compile(kernelSource(), kernelsName, cuda.Target{Arch: 80})
	if err != nil {
		t.Fatal(err)
	}
	if ptx[len(ptx)-1] != 0 {
		t.Error("PTX image lacks its terminating NUL (cuModuleLoadData needs it)")
	}
	entries := ptxEntries(string(ptx))
	declared := append(slices.Clone(backendKernels.names), fsaiKernelSet.names...)
	for _, name := range declared {
		params, ok := entries[name]
		if !ok {
			t.Errorf("kernel %s missing from the PTX", name)
			continue
		}
		f, ok := launchers[name]
		if !ok {
			t.Errorf("kernel %s: no launch function in the test's table", name)
			continue
		}
		if want := goParams(reflect.TypeOf(f)); !slices.Equal(params, want) {
			t.Errorf("kernel %s: PTX parameters %v, launch function passes %v", name, params, want)
		}
	}
	for name := range launchers {
		if !slices.Contains(declared, name) {
			t.Errorf("launch function for %s, which no kernel set declares", name)
		}
	}
}

// ptxEntries returns the parameter types of every entry of a PTX module:
// ".u32", ".u64", ".f64", or ".b8[N]" for a struct of N bytes.
func ptxEntries(ptx string) map[string][]string {
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

// goParams returns the PTX parameter types that a launch function of type
// f passes, its receiver and launch selectors (cfg, backend.Precision,
// int, *Backend) left out.
func goParams(f reflect.Type) []string {
	setup := ".b8[" + strconv.Itoa(int(unsafe.Sizeof(fsaiSetup{}))) + "]"
	types := []string{}
	explicitSetup := false
	for i := range f.NumIn() {
		switch in := f.In(i); in {
		case reflect.TypeFor[int32]():
			types = append(types, ".u32")
		case reflect.TypeFor[int64](), reflect.TypeFor[uintptr]():
			types = append(types, ".u64")
		case reflect.TypeFor[float64]():
			types = append(types, ".f64")
		case reflect.TypeFor[[]float64]():
			types = append(types, ".b8["+strconv.Itoa(int(unsafe.Sizeof(fsaiCols{})))+"]")
		case reflect.TypeFor[fsaiSetup]():
			types = append(types, setup)
			explicitSetup = true
		case reflect.TypeFor[cfg](), reflect.TypeFor[backend.Precision](), reflect.TypeFor[int](),
			reflect.TypeFor[*Backend](), reflect.TypeFor[fsaiKernels](), reflect.TypeFor[*fsaiLauncher]():
		default:
			types = append(types, "unknown Go type "+in.String())
		}
	}
	if f.In(0) == reflect.TypeFor[*fsaiLauncher]() && !explicitSetup {
		types = append([]string{setup}, types...)
	}
	return types
}
