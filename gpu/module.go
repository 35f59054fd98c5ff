package gpu

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/kernels"
)

// Kernels are declared once each, beside the typed Go function that
// launches them (launch.go for the backend's; package afsai/cudafsai
// declares the FSAI set-up's and looks them up through Raw): Declare
// records the name in a kernel set and returns the kernel's index there,
// and a set is looked up in the loaded module as a whole. The typed functions mirror the C signatures (TestLaunchSignatures
// compares them with the compiled module), so a launch with a wrong
// argument count or type does not compile.

// Kernel is a function of the loaded module.
type Kernel struct {
	f cuda.Function
	// resident is how many blocks of blockSize threads fit on a
	// multiprocessor at once (its registers and shared memory decide):
	// grid-stride kernels launch that many per multiprocessor, one wave,
	// so that no second, partial wave leaves most of the GPU idle.
	resident int
}

// KernelSet is a list of kernel names; a KernelID is an index into it and
// into the kernels looked up from it.
type KernelSet struct{ names []string }

// KernelID is a kernel's index in its KernelSet.
type KernelID int

// Declare adds a kernel of kernels/*.cu to the set.
func (s *KernelSet) Declare(name string) KernelID {
	s.names = append(s.names, name)
	return KernelID(len(s.names) - 1)
}

// precisionSuffix is the suffix of a kernel's name for each
// backend.Precision: the kernels instantiated for float64 and float32
// values.
var precisionSuffix = [2]string{"_d", "_s"}

// Names lists the kernels of the set, in their KernelIDs' order.
func (s *KernelSet) Names() []string { return s.names }

// DeclarePrecisions declares the kernels base_d and base_s.
func (s *KernelSet) DeclarePrecisions(base string) (ids [2]KernelID) {
	for p, suffix := range precisionSuffix {
		ids[p] = s.Declare(base + suffix)
	}
	return ids
}

// lookup finds every kernel of s in the module. With occupancy it also
// asks how many blocks of blockSize threads are resident per
// multiprocessor; without, resident is 1.
func (s *KernelSet) lookup(d *cuda.Driver, module uintptr, occupancy bool) ([]Kernel, error) {
	ks := make([]Kernel, len(s.names))
	for i, name := range s.names {
		f, err := d.Function(module, name)
		if err != nil {
			return nil, err
		}
		n := 1
		if occupancy {
			if n, err = d.Resident(f, blockSize); err != nil {
				return nil, err
			}
		}
		ks[i] = Kernel{f: f, resident: max(1, n)}
	}
	return ks, nil
}

// kernelsName names the kernel sources in compiler messages.
const kernelsName = "fsai-kernels.cu"

// kernelSource is the translation unit the backend compiles: the kernels
// and the layout probes of the structs they take by value (passedStructs),
// which Open runs.
func kernelSource() string {
	src := kernels.Source()
	for _, s := range passedStructs {
		src += cuda.LayoutProbe(layoutKernel(s.cName), s.cName, s.mirror)
	}
	return src
}

// loadModule compiles (or finds in the cache) the kernels for the device and
// loads them into the current context. A cached image that the driver
// refuses (a damaged file) is compiled afresh.
func (b *Backend) loadModule() error {
	dir := cuda.CacheDir()
	src := kernelSource()
	image, t, cached, err := cuda.Image(src, kernelsName, b.cc, dir, false)
	if err != nil {
		return err
	}
	if err = b.loadImage(image, t); err != nil && cached {
		if image, t, _, err = cuda.Image(src, kernelsName, b.cc, dir, true); err == nil {
			err = b.loadImage(image, t)
		}
	}
	if err != nil {
		return err
	}
	b.target = t
	b.fn, err = backendKernels.lookup(b.drv, b.module, true)
	return err
}

func (b *Backend) loadImage(image []byte, t cuda.Target) (err error) {
	b.module, err = b.drv.ModuleLoad(image, "kernels for "+t.String())
	return err
}

// Cfg is how a kernel runs: a grid of grid blocks of block threads with
// shared bytes of dynamic shared memory, on stream (Raw.Blocks, Raw.Grid).
type Cfg struct {
	grid, block, shared int
	stream              uintptr
}

// blocks is the Cfg of most kernels: grid blocks of blockSize threads on
// the backend's stream.
func (b *Backend) blocks(grid int) Cfg {
	return Cfg{grid: grid, block: blockSize, stream: b.stream}
}

// launchArgs is the kernelParams array of cuLaunchKernel: ptrs[i] points at
// vals[i]. It lives on the Go heap, pinned, and is reused by every launch.
// A kernel takes at most maxArgs parameters: the driver reads as many
// pointers as the kernel has, whatever the array holds.
type launchArgs struct {
	vals [maxArgs]uint64
	ptrs [maxArgs]uintptr
}

const maxArgs = cuda.MaxKernelParams

// launch queues kernel k of ks on c with args, each passed in an 8-byte
// slot (the kernel reads the 4 low bytes of an int): the primitive of the
// typed launch functions.
func (b *Backend) launch(ks []Kernel, k KernelID, c Cfg, args ...uint64) {
	if b.err != nil || c.grid == 0 {
		return
	}
	if len(args) > maxArgs {
		b.fail(fmt.Errorf("gpu: a kernel launched with %d arguments, more than the %d a launch passes", len(args), maxArgs))
		return
	}
	copy(b.args.vals[:], args)
	b.fail(b.drv.Launch(ks[k].f, c.grid, c.block, c.shared, c.stream, &b.args.ptrs[0]))
}

// colArgs is the kernelParams array of a block kernel: ptrs[i] points at
// the i-th parameter, the FsaiCols structs of per-column scalars (cols)
// first, then the eight-byte arguments (vals). Every pointer points into the
// colArgs itself, which the call keeps alive.
type colArgs struct {
	cols [2]fsaiCols
	vals [len(launchArgs{}.vals)]uint64
	ptrs [2 + len(launchArgs{}.vals)]uintptr
}

// fsaiCols mirrors struct FsaiCols of kernels/block.cu: per-column scalars
// passed by value (Open compares the layouts: passedStructs).
type fsaiCols struct {
	v [colChunk]float64
}

// gathersArgs is the kernelParams array of gather_halos and the
// parameters it points at, made once and pinned with the backend
// (launchArgs), so that a launch allocates nothing.
type gathersArgs struct {
	g      fsaiGathers
	n, src uint64
	ptrs   [3]uintptr
}

// newGathersArgs returns the parameters of gather_halos, pinned by p.
func newGathersArgs(p *runtime.Pinner) *gathersArgs {
	a := new(gathersArgs)
	p.Pin(a)
	a.ptrs = [3]uintptr{uintptr(unsafe.Pointer(&a.g)), uintptr(unsafe.Pointer(&a.n)), uintptr(unsafe.Pointer(&a.src))}
	return a
}

// launchCols is launch for kernels that take FsaiCols parameters first, one
// per slice of scalars (at most colChunk each; the rest of a struct is
// zero).
func (b *Backend) launchCols(k KernelID, c Cfg, scalars [][]float64, args ...uint64) {
	if b.err != nil || c.grid == 0 {
		return
	}
	if len(scalars) > len(colArgs{}.cols) || len(args) > maxArgs {
		b.fail(fmt.Errorf("gpu: a kernel launched with %d column structs and %d arguments, more than the %d and %d a launch passes",
			len(scalars), len(args), len(colArgs{}.cols), maxArgs))
		return
	}
	p := new(colArgs)
	n := 0
	for i, s := range scalars {
		copy(p.cols[i].v[:], s)
		p.ptrs[n] = uintptr(unsafe.Pointer(&p.cols[i]))
		n++
	}
	for i, a := range args {
		p.vals[i] = a
		p.ptrs[n] = uintptr(unsafe.Pointer(&p.vals[i]))
		n++
	}
	b.fail(b.drv.Launch(b.fn[k].f, c.grid, c.block, c.shared, c.stream, &p.ptrs[0]))
}

// Ptr is a device address as a kernel argument.
func Ptr(p uintptr) uint64 { return uint64(p) }

// I32 is a C int argument, in the low bytes of its slot.
func I32(v int32) uint64 { return uint64(v) }

// I64 is a C long long argument.
func I64(v int64) uint64 { return uint64(v) }

// F64 is a C double argument.
func F64(x float64) uint64 { return math.Float64bits(x) }
