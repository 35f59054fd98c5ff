package cuda

import (
	"fmt"
	"unsafe"
)

// Device attributes (CUdevice_attribute values).
const (
	AttrMultiprocessorCount    = 16
	AttrUnifiedAddressing      = 41
	AttrComputeCapabilityMajor = 75
	AttrComputeCapabilityMinor = 76
)

// UUIDBytes is the size of a device UUID.
const UUIDBytes = 16

// DeviceCount returns the number of devices the process can see (after
// CUDA_VISIBLE_DEVICES).
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	err := d.check(d.call(d.deviceGetCount, uintptr(unsafe.Pointer(&n))), "cuDeviceGetCount")
	return int(n), err
}

// Device returns the handle of device index.
func (d *Driver) Device(index int) (int32, error) {
	var dev int32
	if res := d.call(d.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(index)); res != success {
		return dev, d.failure(res, fmt.Sprintf("cuDeviceGet(%d)", index))
	}
	return dev, nil
}

// DeviceName returns the device's name, e.g. "NVIDIA H100 80GB HBM3".
func (d *Driver) DeviceName(dev int32) (string, error) {
	name := make([]byte, 256)
	if err := d.check(d.call(d.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(dev)),
		"cuDeviceGetName"); err != nil {
		return "", err
	}
	return goString(unsafe.Pointer(&name[0])), nil
}

// DeviceAttribute returns attribute attr (one of the Attr constants).
func (d *Driver) DeviceAttribute(dev int32, attr int) (int, error) {
	var v int32
	if res := d.call(d.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev)); res != success {
		return 0, d.failure(res, fmt.Sprintf("cuDeviceGetAttribute(%d)", attr))
	}
	return int(v), nil
}

// DeviceTotalMem returns the device's memory in bytes.
func (d *Driver) DeviceTotalMem(dev int32) (uint64, error) {
	var total uint64
	err := d.check(d.call(d.deviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(dev)), "cuDeviceTotalMem")
	return total, err
}

// DeviceUUID returns the device's UUID.
func (d *Driver) DeviceUUID(dev int32) ([UUIDBytes]byte, error) {
	var u [UUIDBytes]byte
	err := d.check(d.call(d.deviceGetUUID, uintptr(unsafe.Pointer(&u[0])), uintptr(dev)), "cuDeviceGetUuid")
	return u, err
}

// DriverVersion returns the CUDA version of the driver, e.g. 13000 for 13.0.
func (d *Driver) DriverVersion() (int32, error) {
	var v int32
	err := d.check(d.call(d.driverGetVersion, uintptr(unsafe.Pointer(&v))), "cuDriverGetVersion")
	return v, err
}

// PrimaryCtxRetain retains the device's primary context and returns it.
func (d *Driver) PrimaryCtxRetain(dev int32) (uintptr, error) {
	var ctx uintptr
	err := d.check(d.call(d.primaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), uintptr(dev)), "cuDevicePrimaryCtxRetain")
	return ctx, err
}

// PrimaryCtxRelease releases the device's primary context.
func (d *Driver) PrimaryCtxRelease(dev int32) error {
	return d.check(d.call(d.primaryCtxRelease, uintptr(dev)), "cuDevicePrimaryCtxRelease")
}

// CtxSetCurrent makes ctx current on the calling OS thread.
func (d *Driver) CtxSetCurrent(ctx uintptr) error {
	return d.check(d.call(d.ctxSetCurrent, ctx), "cuCtxSetCurrent")
}

// StreamPriorityRange returns the least and the greatest stream priority
// of the current context (the greatest is the numerically lowest).
func (d *Driver) StreamPriorityRange() (least, greatest int32, err error) {
	err = d.check(d.call(d.ctxGetStreamPriorityRange, uintptr(unsafe.Pointer(&least)), uintptr(unsafe.Pointer(&greatest))),
		"cuCtxGetStreamPriorityRange")
	return least, greatest, err
}
