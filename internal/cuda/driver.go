// Package cuda is the CUDA runtime layer of the GPU backend: the driver
// API (libcuda.so.1) and the run-time compiler NVRTC, bound when the
// program runs through purego, so that building needs neither CUDA nor
// cgo; the disk cache of compiled modules; and typed calls for devices,
// contexts, memory, streams, events, modules and kernel launches. It knows
// no kernel and no algorithm: package gpu (the backend) and the CUDA
// implementations of algorithms build on it.
//
// Handles (contexts, streams, events, modules, functions, device
// pointers) are uintptr values, as the driver defines them. Every call
// returns an *Error naming the call when the driver refuses it. The
// messages start with "gpu:": users see them as errors of the GPU backend
// they selected.
package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrNoDriver is returned (wrapped) by Load when the CUDA driver library
// cannot be loaded: the machine has no NVIDIA driver.
var ErrNoDriver = errors.New("no CUDA driver: libcuda.so.1 not found")

// Error is a failed CUDA driver call.
type Error struct {
	Call   string // the call and its main argument, e.g. "cuMemAlloc(1024 bytes)"
	Code   int    // the CUresult
	Name   string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Detail string // the driver's description, or free memory for allocations
}

func (e *Error) Error() string {
	return fmt.Sprintf("gpu: %s: %s (%s)", e.Call, e.Name, e.Detail)
}

// CUresult codes.
const (
	success     = 0
	OutOfMemory = 2 // CUDA_ERROR_OUT_OF_MEMORY: callers may free memory and retry
)

// Driver holds the entry points of libcuda.so.1. They are called through
// purego.SyscallN with uintptr arguments rather than through functions made
// by purego.RegisterLibFunc: a SyscallN call costs about 0.13 us against
// 0.8 us for the reflection-based wrappers, and a PCG iteration makes a
// dozen driver calls.
type Driver struct {
	init, driverGetVersion                                  uintptr
	deviceGet, deviceGetCount, deviceGetName                uintptr
	deviceGetAttribute, deviceTotalMem                      uintptr
	primaryCtxRetain, primaryCtxRelease, ctxSetCurrent      uintptr
	memAlloc, memFree, memAllocHost, memFreeHost            uintptr
	memGetInfo, memHostRegister, memHostUnregister          uintptr
	memcpyHtoDAsync, memcpyDtoHAsync, memcpyDtoDAsync       uintptr
	memsetD32Async                                          uintptr
	moduleLoadData, moduleUnload, moduleGetFunction         uintptr
	launchKernel, occupancyMaxActiveBlocksPerMultiprocessor uintptr
	streamDestroy, streamSynchronize                        uintptr
	streamWaitEvent                                         uintptr
	streamCreateWithPriority, ctxGetStreamPriorityRange     uintptr
	eventCreate, eventDestroy, eventRecord                  uintptr
	eventSynchronize, eventElapsedTime                      uintptr
	getErrorName, getErrorString                            uintptr

	// interprocess memory
	deviceGetUUID, memGetAddressRange                    uintptr
	ipcGetMemHandle, ipcOpenMemHandle, ipcCloseMemHandle uintptr
	// stream memory operations in batches (CUDA 11.7 and later); 0 when
	// the driver lacks them (HasStreamValues)
	streamBatchMemOp uintptr
}

var (
	driverOnce sync.Once
	driver     *Driver
	driverErr  error
)

// Load opens libcuda.so.1, resolves its symbols and calls cuInit, once per
// process.
func Load() (*Driver, error) {
	driverOnce.Do(func() { driver, driverErr = open() })
	return driver, driverErr
}

func open() (*Driver, error) {
	lib, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w (%v)", ErrNoDriver, err)
	}
	d := new(Driver)
	syms := []struct {
		p    *uintptr
		name string
	}{
		{&d.init, "cuInit"}, {&d.driverGetVersion, "cuDriverGetVersion"},
		{&d.deviceGet, "cuDeviceGet"}, {&d.deviceGetCount, "cuDeviceGetCount"},
		{&d.deviceGetName, "cuDeviceGetName"}, {&d.deviceGetAttribute, "cuDeviceGetAttribute"},
		{&d.deviceTotalMem, "cuDeviceTotalMem_v2"},
		{&d.primaryCtxRetain, "cuDevicePrimaryCtxRetain"},
		{&d.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
		{&d.ctxSetCurrent, "cuCtxSetCurrent"},
		{&d.memAlloc, "cuMemAlloc_v2"}, {&d.memFree, "cuMemFree_v2"},
		{&d.memAllocHost, "cuMemAllocHost_v2"}, {&d.memFreeHost, "cuMemFreeHost"},
		{&d.memGetInfo, "cuMemGetInfo_v2"},
		{&d.memHostRegister, "cuMemHostRegister_v2"}, {&d.memHostUnregister, "cuMemHostUnregister"},
		{&d.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"}, {&d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
		{&d.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"}, {&d.memsetD32Async, "cuMemsetD32Async"},
		{&d.moduleLoadData, "cuModuleLoadData"}, {&d.moduleUnload, "cuModuleUnload"},
		{&d.moduleGetFunction, "cuModuleGetFunction"}, {&d.launchKernel, "cuLaunchKernel"},
		{&d.occupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"},
		{&d.streamDestroy, "cuStreamDestroy_v2"},
		{&d.streamSynchronize, "cuStreamSynchronize"}, {&d.streamWaitEvent, "cuStreamWaitEvent"},
		{&d.streamCreateWithPriority, "cuStreamCreateWithPriority"},
		{&d.ctxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange"},
		{&d.eventCreate, "cuEventCreate"}, {&d.eventDestroy, "cuEventDestroy_v2"},
		{&d.eventRecord, "cuEventRecord"}, {&d.eventSynchronize, "cuEventSynchronize"},
		{&d.eventElapsedTime, "cuEventElapsedTime"},
		{&d.getErrorName, "cuGetErrorName"}, {&d.getErrorString, "cuGetErrorString"},
		{&d.deviceGetUUID, "cuDeviceGetUuid"}, {&d.memGetAddressRange, "cuMemGetAddressRange_v2"},
		{&d.ipcGetMemHandle, "cuIpcGetMemHandle"}, {&d.ipcOpenMemHandle, "cuIpcOpenMemHandle_v2"},
		{&d.ipcCloseMemHandle, "cuIpcCloseMemHandle"},
	}
	for _, s := range syms {
		if *s.p, err = purego.Dlsym(lib, s.name); err != nil {
			return nil, fmt.Errorf("gpu: libcuda.so.1 lacks %s (driver too old?): %v", s.name, err)
		}
	}
	d.streamBatchMemOp, _ = purego.Dlsym(lib, "cuStreamBatchMemOp_v2")
	if err := d.check(d.call(d.init, 0), "cuInit"); err != nil {
		return nil, err
	}
	return d, nil
}

// call invokes a driver entry point and returns its CUresult. Pointers to Go
// memory converted to uintptr in the argument list stay valid for the call.
//
//go:uintptrescapes
func (d *Driver) call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// check turns a CUresult into an *Error naming the call, or nil.
func (d *Driver) check(res uintptr, call string) error {
	if res == success {
		return nil
	}
	return d.failure(res, call)
}

// checkNamed is check for a call named with what in parentheses (named):
// the name is built only when the call failed, so that the calls queued
// for every product build no strings.
func (d *Driver) checkNamed(res uintptr, call, what string) error {
	if res == success {
		return nil
	}
	return d.failure(res, named(call, what))
}

// failure is the error of a failed call, CUresult res.
func (d *Driver) failure(res uintptr, call string) *Error {
	return &Error{Call: call, Code: int(res), Name: d.errorText(d.getErrorName, res),
		Detail: d.errorText(d.getErrorString, res)}
}

// errorText asks cuGetErrorName or cuGetErrorString about a CUresult.
func (d *Driver) errorText(fn, res uintptr) string {
	var p unsafe.Pointer
	if d.call(fn, res, uintptr(unsafe.Pointer(&p))) != success || p == nil {
		return fmt.Sprintf("CUresult %d", res)
	}
	return goString(p)
}

// goString copies a NUL-terminated C string.
func goString(p unsafe.Pointer) string {
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

// cString returns s as a NUL-terminated byte slice for C.
func cString(s string) []byte {
	return append([]byte(s), 0)
}

// GiB converts bytes to GiB for messages.
func GiB(b uint64) float64 { return float64(b) / (1 << 30) }
