package gpu

import (
	"fmt"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// Vector is a float64 array in device memory, or a view into one.
type Vector struct {
	b     *Backend
	ptr   uintptr // CUdeviceptr of entry 0; 0 when empty
	n     int
	owner bool // false for views
}

// Len is the number of entries.
func (v *Vector) Len() int { return v.n }

// Slice returns a view of n entries from off, sharing memory. A range out of
// bounds records an error on the backend and returns an empty view.
func (v *Vector) Slice(off, n int) backend.Vector {
	if off < 0 || n < 0 || off+n > v.n {
		v.b.fail(fmt.Errorf("gpu: Slice(%d, %d) of a vector of %d entries", off, n, v.n))
		return &Vector{b: v.b}
	}
	return &Vector{b: v.b, ptr: v.ptr + uintptr(8*off), n: n}
}

// Free releases the memory of a vector made by NewVector; it does nothing
// for views and for vectors already freed.
func (v *Vector) Free() {
	if v.owner && v.ptr != 0 {
		v.b.free(v.ptr, "vector")
	}
	v.ptr, v.n = 0, 0
}

// arg is v's device address as a kernel argument: 0 (NULL) for no vector.
func (v *Vector) arg() uintptr {
	if v == nil {
		return 0
	}
	return v.ptr
}

// Index is an int32 array in device memory.
type Index struct {
	b   *Backend
	ptr uintptr
	n   int
}

// Len is the number of entries.
func (x *Index) Len() int { return x.n }

func (x *Index) backendOf() *Backend { return x.b }

// Free releases the memory.
func (x *Index) Free() {
	if x.ptr != 0 {
		x.b.free(x.ptr, "index")
	}
	x.ptr, x.n = 0, 0
}

// alloc allocates bytes of device memory (none for 0 bytes). what names the
// use in errors.
func (b *Backend) alloc(bytes int, what string) (uintptr, error) {
	if b.err != nil {
		return 0, b.err
	}
	if bytes == 0 {
		return 0, nil
	}
	p, err := b.drv.MemAlloc(bytes, what)
	if e, ok := err.(*Error); ok && e.Code == cuda.OutOfMemory && len(b.spare) > 0 {
		b.releaseSpare() // the device is full: the spare goes first
		p, err = b.drv.MemAlloc(bytes, what)
	}
	if err == nil {
		b.mem.add(p, bytes)
	}
	return p, err
}

// free releases device memory, recording a failure.
func (b *Backend) free(p uintptr, what string) {
	defer b.enter()()
	b.mem.remove(p)
	b.fail(b.drv.MemFree(p, what))
}

// usage counts the device memory that alloc gave and free has yet to take
// back, and the most it has been.
type usage struct {
	sizes       map[uintptr]int64
	inUse, peak int64
}

// add counts bytes allocated at p.
func (u *usage) add(p uintptr, bytes int) {
	if u.sizes == nil {
		u.sizes = make(map[uintptr]int64)
	}
	u.sizes[p] = int64(bytes)
	u.inUse += int64(bytes)
	u.peak = max(u.peak, u.inUse)
}

// remove counts the allocation at p freed.
func (u *usage) remove(p uintptr) {
	u.inUse -= u.sizes[p]
	delete(u.sizes, p)
}

// PeakBytes is the most device memory the backend's allocations held at
// once (spare memory counts as held), in bytes: its high-water mark, which
// a rank's -log reports (backend.MemoryReporter). Page-locked host memory
// and the CUDA context's own memory are not counted.
func (b *Backend) PeakBytes() int64 { return b.mem.peak }

// retire takes the device memory at ptrs, a finished FSAI set-up's state,
// out of use. The backend keeps it as spare memory unless told otherwise
// (KeepSpare): cuMemFree of tens of GB takes 0.35 ms per GB, stalls the
// launches of every thread of the process meanwhile, and stalled another
// process's kernels on another GPU of the node (measured on H200 GPUs). The spare goes back to the device when a
// set-up sizes its batches by the free memory (freeMemory), when an
// allocation finds the device full, and at Close.
func (b *Backend) retire(ptrs []uintptr) {
	if b.keepSpare {
		b.spare = append(b.spare, ptrs...)
		return
	}
	for _, p := range ptrs {
		b.free(p, "FSAI set-up state")
	}
}

// releaseSpare frees the spare memory (retire), recording a failure.
func (b *Backend) releaseSpare() {
	ptrs := b.spare
	b.spare = nil
	for _, p := range ptrs {
		b.free(p, "spare memory")
	}
}

// KeepSpare sets whether the backend keeps the device memory of finished
// FSAI set-ups (their state: most of the memory free at their start) until
// memory runs short, the next set-up or Close, rather than freeing it when
// the set-up ends, as CuPy's and PyTorch's memory pools keep what is freed.
// It does by default; ranks that share a device should not, as the memory
// one keeps cannot serve another's allocations.
func (b *Backend) KeepSpare(keep bool) {
	b.keepSpare = keep
	if !keep {
		defer b.enter()()
		b.releaseSpare()
	}
}

// upload queues a copy of bytes from host memory at src to device memory.
func (b *Backend) upload(dst uintptr, src unsafe.Pointer, bytes int) {
	if b.err == nil && bytes > 0 {
		b.fail(b.drv.MemcpyHtoDAsync(dst, src, bytes, b.stream, ""))
	}
}

// NewVector allocates a vector of n zeros.
func (b *Backend) NewVector(n int) (backend.Vector, error) {
	defer b.enter()()
	if n < 0 {
		return nil, fmt.Errorf("gpu: NewVector(%d)", n)
	}
	p, err := b.alloc(8*n, "vector")
	if err != nil {
		return nil, err
	}
	if n > 0 {
		b.fail(b.drv.MemsetD32Async(p, 0, 2*n, b.stream, ""))
	}
	return &Vector{b: b, ptr: p, n: n, owner: true}, b.err
}

// NewIndex copies idx to the device. Its entries must index the vectors it
// is used with (Gather does not check them).
func (b *Backend) NewIndex(idx []int32) (backend.Index, error) {
	defer b.enter()()
	p, err := b.alloc(4*len(idx), "index")
	if err != nil {
		return nil, err
	}
	x := &Index{b: b, ptr: p, n: len(idx)}
	uploadSlice(b, p, idx)
	// Wait, so that the caller may change idx and a copy error shows here.
	if err := b.syncLocked(); err != nil {
		x.Free()
		return nil, err
	}
	return x, nil
}

// vector returns v as a vector of this backend, or records why not and
// returns nil. It also returns nil once an error is recorded, so that
// callers skip their work.
func (b *Backend) vector(op string, v backend.Vector) *Vector {
	if b.err != nil {
		return nil
	}
	g, ok := v.(*Vector)
	switch {
	case !ok || g == nil:
		b.fail(fmt.Errorf("gpu: %s: %T is not a gpu vector", op, v))
		return nil
	case g.b != b:
		b.fail(fmt.Errorf("gpu: %s: vector of another backend", op))
		return nil
	}
	return g
}

// sameLen records an error unless all lengths equal the first.
func (b *Backend) sameLen(op string, n ...int) bool {
	for _, m := range n[1:] {
		if m != n[0] {
			b.fail(fmt.Errorf("gpu: %s: lengths %v differ", op, n))
			return false
		}
	}
	return b.err == nil
}

// Upload queues a copy of src into dst. The copy may still be running when
// Upload returns (always so when src is pinned): src must stay unchanged
// until the next synchronizing call. A large src that is not pinned goes
// through the staging buffer (staging.go), several times faster than the
// driver's own path for pageable memory: Upload may then wait for work
// queued before it, and returns once src has been read.
func (b *Backend) Upload(dst backend.Vector, src []float64) {
	defer b.enter()()
	v := b.vector("Upload", dst)
	if v == nil || !b.sameLen("Upload", v.n, len(src)) {
		return
	}
	uploadSlice(b, v.ptr, src)
}

// Download copies src into dst after the work queued before it.
func (b *Backend) Download(dst []float64, src backend.Vector) error {
	defer b.enter()()
	v := b.vector("Download", src)
	if v == nil || !b.sameLen("Download", len(dst), v.n) {
		return b.err
	}
	if v.n > 0 {
		b.fail(b.drv.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), v.ptr, 8*v.n, b.stream, ""))
	}
	return b.syncLocked()
}

// syncLocked waits for the stream; the caller has entered.
func (b *Backend) syncLocked() error {
	if b.err == nil {
		b.fail(b.drv.StreamSynchronize(b.stream, ""))
	}
	return b.err
}

// Pin page-locks host (cuMemHostRegister) so that copies from and to it run
// at full speed and asynchronously, until unpin is called. The driver
// registers whole pages and refuses a page registered twice
// (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED): pin one large buffer and cut
// it into pieces rather than pinning small neighbouring slices.
func (b *Backend) Pin(host []float64) (unpin func(), err error) {
	if len(host) == 0 {
		return func() {}, nil
	}
	defer b.enter()()
	if b.err != nil {
		return nil, b.err
	}
	p := unsafe.Pointer(&host[0])
	d := b.drv
	if err := d.MemHostRegister(p, 8*len(host)); err != nil {
		return nil, err
	}
	b.staging.pin(p, 8*len(host))
	done := false
	return func() {
		if done {
			return
		}
		done = true
		defer b.enter()()
		b.staging.unpin(p)
		b.fail(d.MemHostUnregister(p))
	}, nil
}

// download queues a copy of bytes from device memory at src to host memory
// at dst; the caller synchronizes before reading dst and keeps it alive.
func (b *Backend) download(dst unsafe.Pointer, src uintptr, bytes int) {
	if b.err == nil && bytes > 0 {
		b.fail(b.drv.MemcpyDtoHAsync(dst, src, bytes, b.stream, ""))
	}
}

// copyDevice queues a copy of bytes from device memory at src to dst.
func (b *Backend) copyDevice(dst, src uintptr, bytes int) {
	if b.err == nil && bytes > 0 {
		b.fail(b.drv.MemcpyDtoDAsync(dst, src, bytes, b.stream))
	}
}

// freeMemory returns the device memory free now, the spare memory freed
// first (retire); the context must be current.
func (b *Backend) freeMemory() (uint64, error) {
	b.releaseSpare()
	free, _, err := b.drv.MemGetInfo()
	return free, err
}
