package gpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// Error is a failed CUDA driver call.
type Error = cuda.Error

// ErrNoDriver is returned (wrapped) by Available and Open when the CUDA
// driver library cannot be loaded: the machine has no NVIDIA driver.
var ErrNoDriver = cuda.ErrNoDriver

// ErrNoNVRTC is returned (wrapped) by Open when no NVRTC library can be
// loaded.
var ErrNoNVRTC = cuda.ErrNoNVRTC

// Available returns the number of CUDA devices this process can see (after
// CUDA_VISIBLE_DEVICES). Without an NVIDIA driver the error wraps
// ErrNoDriver, so that programs can say why they run on the CPU.
func Available() (count int, err error) {
	d, err := cuda.Load()
	if err != nil {
		return 0, err
	}
	return d.DeviceCount()
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
	var err error
	if b.name, err = d.DeviceName(dev); err != nil {
		return err
	}
	major, err := d.DeviceAttribute(dev, cuda.AttrComputeCapabilityMajor)
	if err != nil {
		return err
	}
	minor, err := d.DeviceAttribute(dev, cuda.AttrComputeCapabilityMinor)
	if err != nil {
		return err
	}
	b.cc = 10*major + minor
	if b.sms, err = d.DeviceAttribute(dev, cuda.AttrMultiprocessorCount); err != nil {
		return err
	}
	// Reductions write their result into host memory from the device.
	if ua, err := d.DeviceAttribute(dev, cuda.AttrUnifiedAddressing); err != nil || ua == 0 {
		return fmt.Errorf("gpu: device %d (%s) lacks unified addressing (%v)", b.index, b.name, err)
	}
	if b.totalMem, err = d.DeviceTotalMem(dev); err != nil {
		return err
	}
	b.driverVersion, err = d.DriverVersion()
	return err
}
