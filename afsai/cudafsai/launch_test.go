package cudafsai

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/kernels"
)

// These tests need no GPU: they run wherever libnvrtc is found.

// launchers maps every kernel of fsaiKernelSet to its typed launch
// function.
var launchers = map[string]any{
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

// kernelsName names the kernel sources in compiler messages.
const kernelsName = "fsai-kernels.cu"

func needNVRTC(t *testing.T) *cuda.NVRTC {
	t.Helper()
	nv, err := cuda.LoadNVRTC()
	if errors.Is(err, cuda.ErrNoNVRTC) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return nv
}

// TestLayouts compiles the kernels with the asserts that FsaiSetup is laid
// out as its Go mirror, fsaiSetup (cuda.LayoutAsserts). NVRTC 12 and later
// refuse the asserts' constant offsets, so it runs with NVRTC 11; the
// layout is the ABI's, the same for both.
func TestLayouts(t *testing.T) {
	nv := needNVRTC(t)
	if major, _, _ := strings.Cut(nv.Version(), "."); major != "11" {
		t.Skipf("the layout asserts need NVRTC 11, not %s", nv.Version())
	}
	src := kernels.Source() + cuda.LayoutAsserts("FsaiSetup", fsaiSetup{})
	if _, err := nv.Compile(src, kernelsName, cuda.Target{Arch: 80}); err != nil {
		t.Fatal(err)
	}
}

// TestLaunchSignatures compiles the kernels to PTX as gpu.Open does and
// checks every kernel of fsaiKernelSet against its typed launch function
// (cuda.LaunchMismatches): fsaiSetup, explicit or passed by an
// fsaiLauncher, stands for an FsaiSetup of the Go struct's size.
func TestLaunchSignatures(t *testing.T) {
	nv := needNVRTC(t)
	ptx, err := nv.Compile(kernels.Source(), kernelsName, cuda.Target{Arch: 80})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cuda.LaunchMismatches(string(ptx), fsaiKernelSet.Names(), launchers, goParams) {
		t.Error(e)
	}
}

// goParams returns the PTX parameter types that a launch function of type
// f passes, its receiver and launch selectors (gpu.Cfg, backend.Precision,
// int, *Device, fsaiKernels, *fsaiLauncher) left out; an fsaiLauncher's
// launches pass its setup first.
func goParams(f reflect.Type) []string {
	setup := ".b8[" + strconv.Itoa(int(unsafe.Sizeof(fsaiSetup{}))) + "]"
	types := cuda.PTXParams(f, map[reflect.Type]string{
		reflect.TypeFor[fsaiSetup](): setup,
		reflect.TypeFor[gpu.Cfg]():   "", reflect.TypeFor[backend.Precision](): "", reflect.TypeFor[int](): "",
		reflect.TypeFor[*Device](): "", reflect.TypeFor[fsaiKernels](): "", reflect.TypeFor[*fsaiLauncher](): "",
	})
	explicit := false
	for i := range f.NumIn() {
		explicit = explicit || f.In(i) == reflect.TypeFor[fsaiSetup]()
	}
	if f.In(0) == reflect.TypeFor[*fsaiLauncher]() && !explicit {
		types = append([]string{setup}, types...)
	}
	return types
}
