package cuda

import "unsafe"

// ModuleLoad loads a module image (PTX with its terminating NUL, or a
// cubin) into the current context; what names it in errors.
func (d *Driver) ModuleLoad(image []byte, what string) (uintptr, error) {
	var m uintptr
	err := d.checkNamed(d.call(d.moduleLoadData, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0]))),
		"cuModuleLoadData", what)
	return m, err
}

// ModuleUnload unloads a module.
func (d *Driver) ModuleUnload(m uintptr) error {
	return d.check(d.call(d.moduleUnload, m), "cuModuleUnload")
}

// Function is a kernel of a loaded module.
type Function struct {
	h    uintptr // CUfunction
	name string
}

// Function looks kernel name up in module m.
func (d *Driver) Function(m uintptr, name string) (Function, error) {
	f := Function{name: name}
	c := cString(name)
	err := d.checkNamed(d.call(d.moduleGetFunction, uintptr(unsafe.Pointer(&f.h)), m, uintptr(unsafe.Pointer(&c[0]))),
		"cuModuleGetFunction", name)
	return f, err
}

// Resident returns how many blocks of block threads of f fit on a
// multiprocessor at once, with no dynamic shared memory.
func (d *Driver) Resident(f Function, block int) (int, error) {
	var n int32
	err := d.checkNamed(d.call(d.occupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), f.h, uintptr(block), 0),
		"cuOccupancyMaxActiveBlocksPerMultiprocessor", f.name)
	return int(n), err
}

// Launch queues f on stream on a one-dimensional grid of grid blocks of
// block threads with shared bytes of dynamic shared memory. params is
// cuLaunchKernel's kernelParams: one pointer per kernel parameter, each to
// the parameter's value laid out as the kernel declares it; the memory it
// points into must not move during the call (pinned, or kept alive by the
// caller on the heap).
func (d *Driver) Launch(f Function, grid, block, shared int, stream uintptr, params *uintptr) error {
	return d.check(d.call(d.launchKernel, f.h, uintptr(grid), 1, 1, uintptr(block), 1, 1, uintptr(shared), stream,
		uintptr(unsafe.Pointer(params)), 0), f.name)
}
