package cudaspai

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/kernels"
)

// TestLaunchSignatures compiles the kernels to PTX as gpu.Open does and
// checks the SPAI kernels against their typed launch functions (cuda.LaunchMismatches).
// It needs no GPU: it runs wherever libnvrtc is found.
func TestLaunchSignatures(t *testing.T) {
	nv, err := cuda.LoadNVRTC()
	if errors.Is(err, cuda.ErrNoNVRTC) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := nv.Compile(kernels.Source(), "spai-kernels.cu", cuda.Target{Arch: 80})
	if err != nil {
		t.Fatal(err)
	}
	params := func(f reflect.Type) []string {
		return cuda.PTXParams(f, map[reflect.Type]string{
			reflect.TypeFor[gpu.Raw](): "", reflect.TypeFor[[]gpu.Kernel](): "", reflect.TypeFor[gpu.Cfg](): "",
			reflect.TypeFor[backend.Precision](): "",
		})
	}
	for _, e := range cuda.LaunchMismatches(string(ptx), spaiKernelSet.Names(), map[string]any{"spai_count": launchCount,
		"spai_solve_shared": launchSolveShared, "spai_solve_scratch": launchSolveScratch,
		"spai_pattern_count": launchPatternCount, "spai_pattern_fill": launchPatternFill, "spai_widen": launchWiden,
		"spai_split_count": launchSplitCount, "spai_split_fill": launchSplitFill, "spai_join_d": launchJoin,
		"spai_join_s": launchJoin}, params) {
		t.Error(e)
	}
}
