package gpu

import (
	"fmt"
	"reflect"
	"runtime"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// The structs passed to kernels by value are mirrored by Go structs, and
// their layouts are compared at start-up on the GPU (cuda.LayoutProbe):
// the backend's own (passedStructs), by probes compiled into its module and
// run by Open; another package's, by Raw.CheckLayout, before its first
// launch.

// layoutKernel is the name of the probe kernel of C struct cName.
func layoutKernel(cName string) string { return "layout_" + cName }

// passedStructs are the structs that the backend's kernels take by value,
// each with its Go mirror: kernelSource appends their probes to the
// kernels, and Open runs them (checkLayouts).
var passedStructs = []struct {
	cName  string
	mirror any
}{{"FsaiCols", fsaiCols{}}, {"FsaiGathers", fsaiGathers{}}}

// checkLayouts runs the probe of every struct of passedStructs in the
// backend's module and returns the first difference.
func (b *Backend) checkLayouts() error {
	for _, s := range passedStructs {
		if err := b.probeLayout(b.module, s.cName, s.mirror); err != nil {
			return err
		}
	}
	return nil
}

// probeLayout runs the probe kernel of C struct cName in module (which
// holds the probe cuda.LayoutProbe made of mirror) and returns the first
// difference between the struct's layout and mirror's, or a failure to
// run it. The calling goroutine has the backend's context current.
func (b *Backend) probeLayout(module uintptr, cName string, mirror any) error {
	f, err := b.drv.Function(module, layoutKernel(cName))
	if err != nil {
		return err
	}
	words := make([]uint64, cuda.LayoutWords(mirror))
	out, err := b.alloc(8*len(words), "layout probe of "+cName)
	if err != nil {
		return err
	}
	var pin runtime.Pinner // the copy lands in words after download returns
	pin.Pin(&words[0])
	defer pin.Unpin()
	b.launch([]Kernel{{f: f, resident: 1}}, 0, Cfg{grid: 1, block: 1, stream: b.stream}, Ptr(out))
	b.download(unsafe.Pointer(&words[0]), out, 8*len(words))
	err = b.syncLocked()
	b.free(out, "layout probe of "+cName)
	if err != nil {
		return err
	}
	return cuda.LayoutMismatch(cName, mirror, words)
}

// layoutKey names a C struct and the Go type that mirrors it.
type layoutKey struct {
	cName  string
	mirror reflect.Type
}

// CheckLayout compares the layout of the C struct cName, which src
// defines (a header of package kernels), with its Go mirror on the
// backend's GPU: it compiles src and the struct's probe (cuda.LayoutProbe)
// into a module of their own, cached on disk as the backend's module is,
// runs the probe and unloads the module. It returns the first member whose
// offset or size differs, by name ("C struct FsaiSetup member nb at offset
// 24, Go mirror ... at 16"), or a failure to compile or run the probe; the
// caller adds its package's prefix. The answer is kept: the probe of a
// struct and mirror runs once per backend.
func (r Raw) CheckLayout(src, cName string, mirror any) error {
	b := r.b
	key := layoutKey{cName, reflect.TypeOf(mirror)}
	if err, done := b.layouts[key]; done {
		return err
	}
	err := b.checkLayout(src, cName, mirror)
	if b.layouts == nil {
		b.layouts = make(map[layoutKey]error)
	}
	b.layouts[key] = err
	return err
}

// checkLayout is CheckLayout without the memory of earlier answers.
func (b *Backend) checkLayout(src, cName string, mirror any) error {
	defer b.enter()()
	name := "layout probe of " + cName
	image, _, _, err := cuda.Image(src+cuda.LayoutProbe(layoutKernel(cName), cName, mirror), name, b.cc, cuda.CacheDir(), false)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	module, err := b.drv.ModuleLoad(image, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	err = b.probeLayout(module, cName, mirror)
	if uerr := b.drv.ModuleUnload(module); err == nil && uerr != nil {
		return fmt.Errorf("%s: %w", name, uerr)
	}
	return err
}
