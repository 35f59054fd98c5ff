package cpu

import "github.com/fsai-dist/fsai-dist/backend"

// PackHalo gathers straight into host: on the CPU there is nothing to
// overlap, so stage is unused and wait has nothing to wait for.
func (b *Backend) PackHalo(host []float64, stage, src backend.Vector, idx backend.Index) func() error {
	b.Gather(Vector(host), src, idx)
	return func() error { return nil }
}

// UploadHalo is Upload.
func (b *Backend) UploadHalo(dst backend.Vector, src []float64) { b.Upload(dst, src) }
