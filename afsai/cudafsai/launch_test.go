package cudafsai

import (
	"errors"
	"reflect"
	"slices"
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

// TestLayoutProbeCompiles compiles the layout probe of FsaiSetup after the
// kernels' headers, as Device.fsaiKernels does on a GPU, with the
// machine's NVRTC: the headers define the struct without the kernels.
func TestLayoutProbeCompiles(t *testing.T) {
	nv := needNVRTC(t)
	src := kernels.Headers() + cuda.LayoutProbe("layout_FsaiSetup", "FsaiSetup", fsaiSetup{})
	if _, err := nv.Compile(src, "layout probe of FsaiSetup", cuda.Target{Arch: 80}); err != nil {
		t.Fatal(err)
	}
}

// TestLayoutOnGPU compares FsaiSetup with its mirror on the GPU, as the
// first set-up does, and with mirrors out of step with it: two members
// exchanged, a member missing. Each error must name the first member or
// the size that differs.
func TestLayoutOnGPU(t *testing.T) {
	b := openGPU(t)
	if err := b.CheckLayout(kernels.Headers(), "FsaiSetup", fsaiSetup{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.fsaiKernels(); err != nil {
		t.Fatal(err)
	}
	swapped := mirrorOf(func(fs []reflect.StructField) []reflect.StructField {
		i := slices.IndexFunc(fs, func(f reflect.StructField) bool { return f.Name == "Fnb" })
		fs[i], fs[i+1] = fs[i+1], fs[i] // nb and mmax
		return fs
	})
	short := mirrorOf(func(fs []reflect.StructField) []reflect.StructField { return fs[:len(fs)-1] })
	for _, c := range []struct {
		what   string
		mirror any
		want   []string
	}{
		{"nb and mmax exchanged", swapped, []string{"C struct FsaiSetup member mmax at offset 128, Go mirror ", ".Fmmax at 120"}},
		{"gdiag missing", short, []string{"C struct FsaiSetup of 208 bytes, Go mirror ", " of 200"}},
	} {
		err := b.CheckLayout(kernels.Headers(), "FsaiSetup", c.mirror)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want one that says %q", c.what, err, w)
			}
		}
	}
}

// mirrorOf returns a zero value of a mirror of FsaiSetup made of
// fsaiSetup's fields as edit leaves them, each named F and its Go name and
// tagged with its member.
func mirrorOf(edit func([]reflect.StructField) []reflect.StructField) any {
	t := reflect.TypeFor[fsaiSetup]()
	var fs []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		member := f.Tag.Get("c")
		if member == "" {
			member = f.Name
		}
		fs = append(fs, reflect.StructField{Name: "F" + f.Name, Type: f.Type, Tag: reflect.StructTag(`c:"` + member + `"`)})
	}
	return reflect.New(reflect.StructOf(edit(fs))).Elem().Interface()
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
