// Package cudafsai is the FSAI set-up on a GPU: the row computation of
// package afsai (afsai.Device) on the CUDA backend of package gpu, in single precision, bit for bit the
// rows that afsai's host set-up computes from the same float32 A. It
// launches the FSAI kernels of package kernels (kernels/fsai*.cu, compiled
// into the backend's module) through gpu.Raw, on the backend's stream and
// memory, and leaves G where the backend's products read it.
//
// Package afsai never asks which backend it runs on: the composition root
// (package solver) hands it New(be) as afsai.Config.Device for a CUDA
// backend be.
package cudafsai

import (
	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/gpu"
)

// Device runs the FSAI set-up on the GPU of one CUDA backend. Like the
// backend, it is used from one goroutine at a time.
type Device struct {
	gpu.Raw
}

// New returns the FSAI set-up on the GPU of be.
func New(be *gpu.Backend) *Device { return &Device{Raw: be.Raw()} }

var _ afsai.Device = (*Device)(nil)

// Name is the backend's name, "cuda".
func (b *Device) Name() string { return b.Backend().Name() }

// ReadMatrix copies a block of the backend to the host, and its row map
// (gpu.Backend.ReadMatrix).
func (b *Device) ReadMatrix(m backend.Matrix) (*csr.Matrix[float64], []int32, error) {
	return b.Backend().ReadMatrix(m)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
