package gpu

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// launchers maps every kernel to its typed launch function.
var launchers = map[string]any{
	"bicgstab_direction": (*Backend).launchBiCGSTABDirection, "bicgstab_half": (*Backend).launchBiCGSTABHalf,
	"bicgstab_step": (*Backend).launchBiCGSTABStep,
	"axpby_cols":    (*Backend).launchAxpbyCols, "mul_cols": (*Backend).launchMulCols,
	"dot_cols": (*Backend).launchDotCols, "dot_pair_cols": (*Backend).launchDotPairCols,
	"axpy_many":      (*Backend).launchAxpyMany,
	"update_rz_cols": (*Backend).launchUpdateRZCols, "update_xp_cols": (*Backend).launchUpdateXPCols,
	"cg_sr_update": (*Backend).launchCGSRUpdate,
	"gather":       (*Backend).launchGather, "gather_f32": (*Backend).launchGatherF32,
	"gather_halos": (*Backend).launchGatherHalos,
	"many_8":       (*Backend).launchMany, "many_32": (*Backend).launchMany,
	"dot": (*Backend).launchDot, "update_rz": (*Backend).launchUpdateRZ,
	"transpose_count": (*Backend).launchTransposeCount, "transpose_scan_tiles": (*Backend).launchScanTiles,
	"transpose_scan_sums": (*Backend).launchScanSums, "transpose_scan_add": (*Backend).launchScanAdd,
	"transpose_scatter_d": (*Backend).launchTransposeScatter, "transpose_scatter_s": (*Backend).launchTransposeScatter,
	"transpose_sort_d": (*Backend).launchTransposeSort, "transpose_sort_s": (*Backend).launchTransposeSort,
	"fill": (*Backend).launchFill, "axpby": (*Backend).launchAxpby, "mul": (*Backend).launchMul,
	"update_xp": (*Backend).launchUpdateXP,
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

// TestLayoutProbe runs the layout probes of FsaiCols and FsaiGathers,
// which Open ran before (it would have failed), and the probe on a mirror
// out of step with the C struct, whose error must name the member.
func TestLayoutProbe(t *testing.T) {
	b := openGPU(t)
	defer b.enter()()
	if err := b.checkLayouts(); err != nil {
		t.Fatal(err)
	}
	type half struct {
		v [colChunk / 2]float64
	}
	err := b.probeLayout(b.module, "FsaiCols", half{})
	want := "C struct FsaiCols member v of 512 bytes, Go mirror gpu.half.v of 256"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("mirror of half the size: error %v, want one that says %q", err, want)
	}
}

// TestLaunchSignatures compiles the kernels to PTX as Open does (no GPU
// needed) and checks that every declared kernel is an entry of the module, has a typed
// launch function, and that the function's kernel parameters match the
// entry's: the same count, and per parameter the PTX type its Go type
// stands for (int32 .u32; int64, uintptr .u64; float64 .f64; []float64 an
// FsaiCols of colChunk doubles; fsaiGathers an FsaiGathers of its size).
// The FSAI set-up's kernels are checked so
// by package afsai/cudafsai.
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
	for _, e := range cuda.LaunchMismatches(string(ptx), backendKernels.names, launchers, goParams) {
		t.Error(e)
	}
}

// goParams returns the PTX parameter types that a launch function of type
// f passes, its receiver and launch selectors (Cfg, backend.Precision,
// int, *Backend) left out, an FsaiCols of colChunk doubles for []float64,
// an FsaiGathers for fsaiGathers.
func goParams(f reflect.Type) []string {
	return cuda.PTXParams(f, map[reflect.Type]string{
		reflect.TypeFor[[]float64]():   ".b8[" + strconv.Itoa(int(unsafe.Sizeof(fsaiCols{}))) + "]",
		reflect.TypeFor[fsaiGathers](): ".b8[" + strconv.Itoa(int(unsafe.Sizeof(fsaiGathers{}))) + "]",
		reflect.TypeFor[Cfg]():         "", reflect.TypeFor[backend.Precision](): "", reflect.TypeFor[int](): "",
		reflect.TypeFor[*Backend](): "",
	})
}
