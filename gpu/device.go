package gpu

import (
	"fmt"
	"unsafe"
)

// Device attributes read by Open (CUdevice_attribute values).
const (
	attrMultiprocessorCount    = 16
	attrUnifiedAddressing      = 41
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
)

// Available returns the number of CUDA devices this process can see (after
// CUDA_VISIBLE_DEVICES). Without an NVIDIA driver the error wraps
// ErrNoDriver, so that programs can say why they run on the CPU.
func Available() (count int, err error) {
	d, err := loadDriver()
	if err != nil {
		return 0, err
	}
	var n int32
	if err := d.check(d.call(d.deviceGetCount, uintptr(unsafe.Pointer(&n))), "cuDeviceGetCount"); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DeviceFor returns the device that the process of node-local rank nodeRank
// should use: device nodeRank, one rank per GPU. More ranks on a node than
// GPUs is an error unless allowShare, which maps ranks to GPUs round-robin
// (for testing on few GPUs; ranks sharing a GPU slow each other down).
func DeviceFor(nodeRank int, allowShare bool) (int, error) {
	count, err := Available()
	if err != nil {
		return 0, err
	}
	return deviceFor(nodeRank, count, allowShare)
}

func deviceFor(nodeRank, count int, allowShare bool) (int, error) {
	switch {
	case nodeRank < 0:
		return 0, fmt.Errorf("gpu: negative node-local rank %d", nodeRank)
	case count == 0:
		return 0, fmt.Errorf("gpu: the CUDA driver sees no device (CUDA_VISIBLE_DEVICES?)")
	case nodeRank >= count && !allowShare:
		return 0, fmt.Errorf("gpu: node-local rank %d needs GPU %d but this node has %d; "+
			"run at most %d ranks per node or allow ranks to share GPUs", nodeRank, nodeRank, count, count)
	}
	return nodeRank % count, nil
}

// deviceInfo reads what Open needs to know about device dev.
func (b *Backend) deviceInfo(dev int32) error {
	d := b.drv
	name := make([]byte, 256)
	if err := d.check(d.call(d.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(dev)),
		"cuDeviceGetName"); err != nil {
		return err
	}
	b.name = goString(unsafe.Pointer(&name[0]))
	attr := func(a int) (int, error) {
		var v int32
		err := d.check(d.call(d.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(dev)),
			fmt.Sprintf("cuDeviceGetAttribute(%d)", a))
		return int(v), err
	}
	major, err := attr(attrComputeCapabilityMajor)
	if err != nil {
		return err
	}
	minor, err := attr(attrComputeCapabilityMinor)
	if err != nil {
		return err
	}
	b.cc = 10*major + minor
	if b.sms, err = attr(attrMultiprocessorCount); err != nil {
		return err
	}
	// Reductions write their result into host memory from the device.
	if ua, err := attr(attrUnifiedAddressing); err != nil || ua == 0 {
		return fmt.Errorf("gpu: device %d (%s) lacks unified addressing (%v)", b.index, b.name, err)
	}
	if err := d.check(d.call(d.deviceTotalMem, uintptr(unsafe.Pointer(&b.totalMem)), uintptr(dev)),
		"cuDeviceTotalMem"); err != nil {
		return err
	}
	return d.check(d.call(d.driverGetVersion, uintptr(unsafe.Pointer(&b.driverVersion))), "cuDriverGetVersion")
}
