package cuda

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// MemAlloc allocates bytes of device memory; what names the use in errors.
// When the device is full the error's Detail tells the free memory.
func (d *Driver) MemAlloc(bytes int, what string) (uintptr, error) {
	var p uintptr
	res := d.call(d.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes))
	if res == success {
		return p, nil
	}
	e := d.failure(res, fmt.Sprintf("cuMemAlloc(%d bytes for %s)", bytes, what))
	if e.Code == OutOfMemory {
		e.Detail = d.MemInfo()
	}
	return p, e
}

// MemFree frees device memory; what names the use in errors.
func (d *Driver) MemFree(p uintptr, what string) error {
	return d.checkNamed(d.call(d.memFree, p), "cuMemFree", what)
}

// MemAllocHost allocates bytes of page-locked host memory; what names the
// use in errors.
func (d *Driver) MemAllocHost(bytes int, what string) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if res := d.call(d.memAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(bytes)); res != success {
		return p, d.failure(res, fmt.Sprintf("cuMemAllocHost(%d bytes for %s)", bytes, what))
	}
	return p, nil
}

// MemFreeHost frees memory from MemAllocHost; what names the use in errors.
func (d *Driver) MemFreeHost(p unsafe.Pointer, what string) error {
	return d.checkNamed(d.call(d.memFreeHost, uintptr(p)), "cuMemFreeHost", what)
}

// MemGetInfo returns the free and the total memory of the current
// context's device.
func (d *Driver) MemGetInfo() (free, total uint64, err error) {
	err = d.check(d.call(d.memGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total))), "cuMemGetInfo")
	return free, total, err
}

// MemInfo describes free and total device memory for messages, e.g.
// "free 12.3 GiB of 80.0 GiB". The current context must be set.
func (d *Driver) MemInfo() string {
	free, total, err := d.MemGetInfo()
	if err != nil {
		return "free memory unknown"
	}
	return fmt.Sprintf("free %.1f GiB of %.1f GiB", GiB(free), GiB(total))
}

// MemHostRegister page-locks bytes of host memory from p
// (cuMemHostRegister with no flags).
func (d *Driver) MemHostRegister(p unsafe.Pointer, bytes int) error {
	if res := d.call(d.memHostRegister, uintptr(p), uintptr(bytes), 0); res != success {
		return d.failure(res, fmt.Sprintf("cuMemHostRegister(%d bytes)", bytes))
	}
	return nil
}

// MemHostUnregister unlocks the host memory registered from p.
func (d *Driver) MemHostUnregister(p unsafe.Pointer) error {
	return d.check(d.call(d.memHostUnregister, uintptr(p)), "cuMemHostUnregister")
}

// MemcpyHtoDAsync queues on stream a copy of bytes from host memory at src
// to device memory at dst; what, if not empty, names the data in errors.
func (d *Driver) MemcpyHtoDAsync(dst uintptr, src unsafe.Pointer, bytes int, stream uintptr, what string) error {
	return d.checkCopy(d.call(d.memcpyHtoDAsync, dst, uintptr(src), uintptr(bytes), stream), "HtoD", bytes, what)
}

// MemcpyDtoHAsync queues on stream a copy of bytes from device memory at
// src to host memory at dst; what, if not empty, names the data in errors.
func (d *Driver) MemcpyDtoHAsync(dst unsafe.Pointer, src uintptr, bytes int, stream uintptr, what string) error {
	return d.checkCopy(d.call(d.memcpyDtoHAsync, uintptr(dst), src, uintptr(bytes), stream), "DtoH", bytes, what)
}

// MemcpyDtoDAsync queues on stream a copy of bytes of device memory from
// src to dst.
func (d *Driver) MemcpyDtoDAsync(dst, src uintptr, bytes int, stream uintptr) error {
	return d.checkCopy(d.call(d.memcpyDtoDAsync, dst, src, uintptr(bytes), stream), "DtoD", bytes, "")
}

// checkCopy is check for a copy, named in errors like
// "cuMemcpyDtoHAsync(64 bytes of halo)" (the name built only on failure).
func (d *Driver) checkCopy(res uintptr, dir string, bytes int, what string) error {
	if res == success {
		return nil
	}
	if what != "" {
		what = " of " + what
	}
	return d.failure(res, fmt.Sprintf("cuMemcpy%sAsync(%d bytes%s)", dir, bytes, what))
}

// MemsetD32Async queues on stream the setting of n 32-bit words from p to
// v; what, if not empty, names the memory in errors.
func (d *Driver) MemsetD32Async(p uintptr, v uint32, n int, stream uintptr, what string) error {
	return d.checkNamed(d.call(d.memsetD32Async, p, uintptr(v), uintptr(n), stream), "cuMemsetD32Async", what)
}

// MemAddressRange returns the base and the size of the allocation that
// holds device address p.
func (d *Driver) MemAddressRange(p uintptr) (base, size uintptr, err error) {
	err = d.check(d.call(d.memGetAddressRange, uintptr(unsafe.Pointer(&base)), uintptr(unsafe.Pointer(&size)), p),
		"cuMemGetAddressRange")
	return base, size, err
}

// IPCHandleBytes is the size of a CUDA IPC memory handle.
const IPCHandleBytes = 64

// IPCGetMemHandle returns the handle that exports the allocation starting
// at base to other processes.
func (d *Driver) IPCGetMemHandle(base uintptr) ([IPCHandleBytes]byte, error) {
	var h [IPCHandleBytes]byte
	err := d.check(d.call(d.ipcGetMemHandle, uintptr(unsafe.Pointer(&h[0])), base), "cuIpcGetMemHandle")
	return h, err
}

// Flags of IPCOpenMemHandle.
const ipcLazyEnablePeerAccess = 1 // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS

// Words of an IPC handle, and the integer arguments passed in registers
// (System V AMD64).
const (
	ipcHandleWords = IPCHandleBytes / 8
	registerArgs   = 6
)

// IPCOpenMemHandle maps another process's allocation from its IPC handle
// and returns its base here. It is built for amd64 only (stackAfter).
func (d *Driver) IPCOpenMemHandle(handle []byte) (uintptr, error) {
	var base uintptr
	args := []uintptr{uintptr(unsafe.Pointer(&base)), ipcLazyEnablePeerAccess}
	err := d.check(d.call(d.ipcOpenMemHandle, stackAfter(args, handleWords(handle[:IPCHandleBytes]))...),
		"cuIpcOpenMemHandle")
	return base, err
}

// IPCCloseMemHandle unmaps memory mapped by IPCOpenMemHandle; what names it
// in errors.
func (d *Driver) IPCCloseMemHandle(p uintptr, what string) error {
	return d.checkNamed(d.call(d.ipcCloseMemHandle, p), "cuIpcCloseMemHandle", what)
}

// handleWords splits an IPC handle into the eight words that carry it.
func handleWords(h []byte) [ipcHandleWords]uintptr {
	var w [ipcHandleWords]uintptr
	for i := range w {
		w[i] = uintptr(binary.LittleEndian.Uint64(h[8*i:]))
	}
	return w
}

// stackAfter returns the argument list of a C function that takes the
// integer arguments regs and a 64-byte handle struct by value. The System V
// AMD64 ABI passes a struct of more than 16 bytes on the stack and the
// integer arguments in the six registers, whatever their order in the C
// signature; purego.SyscallN puts its seventh and later arguments on the
// stack, so the handle's words follow the registers, padded.
func stackAfter(regs []uintptr, handle [ipcHandleWords]uintptr) []uintptr {
	args := make([]uintptr, registerArgs, registerArgs+ipcHandleWords) // unused registers 0
	copy(args, regs)
	return append(args, handle[:]...)
}
