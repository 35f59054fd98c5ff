package cuda

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// nvrtcLibs are the NVRTC sonames tried in order: the unversioned name of a
// toolkit install, then the CUDA 13, 12 and 11.2+ runtime packages.
var nvrtcLibs = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}

// ErrNoNVRTC is returned (wrapped) when no NVRTC library can be loaded.
var ErrNoNVRTC = errors.New("no NVRTC: none of " + strings.Join(nvrtcLibs, ", ") + " found")

// NVRTC holds the entry points of the run-time compiler. Compiling is rare
// (once per process, then cached on disk), so these are the typed wrappers
// of purego.RegisterFunc, which convert strings and slices for us.
type NVRTC struct {
	lib          string // the soname loaded
	major, minor int32
	archs        []int // real architectures it can emit (e.g. 80, 90); nil if it cannot say

	errorString    func(res int32) string
	createProgram  func(prog *uintptr, src, name string, nHeaders int32, headers, includeNames uintptr) int32
	compileProgram func(prog uintptr, nOptions int32, options []*byte) int32
	logSize        func(prog uintptr, size *uint64) int32
	log            func(prog uintptr, buf []byte) int32
	ptxSize        func(prog uintptr, size *uint64) int32
	ptx            func(prog uintptr, buf []byte) int32
	cubinSize      func(prog uintptr, size *uint64) int32
	cubin          func(prog uintptr, buf []byte) int32
	destroyProgram func(prog *uintptr) int32
}

var (
	nvrtcOnce sync.Once
	nvrtcLib  *NVRTC
	nvrtcErr  error
)

// LoadNVRTC opens the first NVRTC library found, once per process.
func LoadNVRTC() (*NVRTC, error) {
	nvrtcOnce.Do(func() { nvrtcLib, nvrtcErr = openNVRTC() })
	return nvrtcLib, nvrtcErr
}

func openNVRTC() (*NVRTC, error) {
	var lib uintptr
	n := new(NVRTC)
	var tried []string
	for _, name := range nvrtcLibs {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			lib, n.lib = h, name
			break
		}
		tried = append(tried, err.Error())
	}
	if lib == 0 {
		return nil, fmt.Errorf("gpu: %w (%s)", ErrNoNVRTC, strings.Join(tried, "; "))
	}
	bind := func(fptr any, name string) error {
		sym, err := purego.Dlsym(lib, name)
		if err != nil {
			return fmt.Errorf("gpu: %s lacks %s: %v", n.lib, name, err)
		}
		purego.RegisterFunc(fptr, sym)
		return nil
	}
	var version func(major, minor *int32) int32
	for _, f := range []struct {
		fptr any
		name string
	}{
		{&version, "nvrtcVersion"}, {&n.errorString, "nvrtcGetErrorString"},
		{&n.createProgram, "nvrtcCreateProgram"}, {&n.compileProgram, "nvrtcCompileProgram"},
		{&n.logSize, "nvrtcGetProgramLogSize"}, {&n.log, "nvrtcGetProgramLog"},
		{&n.ptxSize, "nvrtcGetPTXSize"}, {&n.ptx, "nvrtcGetPTX"},
		{&n.cubinSize, "nvrtcGetCUBINSize"}, {&n.cubin, "nvrtcGetCUBIN"},
		{&n.destroyProgram, "nvrtcDestroyProgram"},
	} {
		if err := bind(f.fptr, f.name); err != nil {
			return nil, err
		}
	}
	version(&n.major, &n.minor)
	// nvrtcGetSupportedArchs appeared in NVRTC 11.2; without it the device's
	// own virtual architecture is used.
	var numArchs func(n *int32) int32
	var archs func(a []int32) int32
	if bind(&numArchs, "nvrtcGetNumSupportedArchs") == nil && bind(&archs, "nvrtcGetSupportedArchs") == nil {
		var k int32
		if numArchs(&k) == 0 && k > 0 {
			a := make([]int32, k)
			if archs(a) == 0 {
				for _, v := range a {
					n.archs = append(n.archs, int(v))
				}
				sort.Ints(n.archs)
			}
		}
	}
	return n, nil
}

// Version is NVRTC's version, e.g. "11.8".
func (n *NVRTC) Version() string { return fmt.Sprintf("%d.%d", n.major, n.minor) }

// Target is what NVRTC is asked to emit: machine code (cubin) for a real
// architecture, or PTX for a virtual one that the driver compiles on load.
type Target struct {
	Arch  int // compute capability times ten, e.g. 90
	Cubin bool
}

func (t Target) option() string {
	if t.Cubin {
		return fmt.Sprintf("--gpu-architecture=sm_%d", t.Arch)
	}
	return fmt.Sprintf("--gpu-architecture=compute_%d", t.Arch)
}

func (t Target) String() string {
	if t.Cubin {
		return fmt.Sprintf("sm_%d", t.Arch)
	}
	return fmt.Sprintf("compute_%d", t.Arch)
}

// TargetFor picks what to emit for a device of compute capability cc (times
// ten): machine code when NVRTC knows the architecture; otherwise PTX for the
// newest architecture it knows below the device, which the driver compiles
// for the device when the module loads.
func (n *NVRTC) TargetFor(cc int) (Target, error) {
	if n.archs == nil {
		return Target{Arch: cc}, nil
	}
	best := 0
	for _, a := range n.archs {
		if a <= cc {
			best = a
		}
	}
	if best == 0 {
		return Target{}, fmt.Errorf("gpu: NVRTC %s cannot compile for compute capability %d.%d (oldest it knows: %d.%d)",
			n.Version(), cc/10, cc%10, n.archs[0]/10, n.archs[0]%10)
	}
	return Target{Arch: best, Cubin: best == cc}, nil
}

// Compile compiles one translation unit and returns the module image (PTX
// with its terminating NUL, or a cubin). A compile error carries the log.
func (n *NVRTC) Compile(src, name string, t Target, opts ...string) ([]byte, error) {
	var prog uintptr
	if res := n.createProgram(&prog, src, name, 0, 0, 0); res != 0 {
		return nil, fmt.Errorf("gpu: nvrtcCreateProgram(%s): %s", name, n.errorString(res))
	}
	defer n.destroyProgram(&prog)

	all := append([]string{t.option(), "--std=c++14"}, opts...)
	cOpts := make([][]byte, len(all))
	ptrs := make([]*byte, len(all))
	for i, o := range all {
		cOpts[i] = cString(o)
		ptrs[i] = &cOpts[i][0]
	}
	if res := n.compileProgram(prog, int32(len(ptrs)), ptrs); res != 0 {
		return nil, fmt.Errorf("gpu: NVRTC %s compiling %s for %s: %s\n%s",
			n.Version(), name, t, n.errorString(res), n.programLog(prog))
	}
	size, get, what := n.ptxSize, n.ptx, "PTX"
	if t.Cubin {
		size, get, what = n.cubinSize, n.cubin, "CUBIN"
	}
	var sz uint64
	if res := size(prog, &sz); res != 0 {
		return nil, fmt.Errorf("gpu: nvrtcGet%sSize(%s): %s", what, name, n.errorString(res))
	}
	image := make([]byte, sz)
	if res := get(prog, image); res != 0 {
		return nil, fmt.Errorf("gpu: nvrtcGet%s(%s): %s", what, name, n.errorString(res))
	}
	return image, nil
}

// programLog returns the compiler's messages for prog.
func (n *NVRTC) programLog(prog uintptr) string {
	var sz uint64
	if n.logSize(prog, &sz) != 0 || sz <= 1 {
		return ""
	}
	buf := make([]byte, sz)
	if n.log(prog, buf) != 0 {
		return ""
	}
	return strings.TrimRight(string(buf), "\x00\n")
}

// Lib is the soname of the library loaded, e.g. "libnvrtc.so.12".
func (n *NVRTC) Lib() string { return n.lib }

// Archs are the real architectures NVRTC can emit machine code for (e.g.
// 80, 90), ascending; nil when it cannot say.
func (n *NVRTC) Archs() []int { return n.archs }
